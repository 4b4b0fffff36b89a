#!/usr/bin/env bash
# Corpus rounds, all five variants, through the integration test binary of a build; each
# round's report lines and failure lists go to OUTDIR/rR.txt (see tests/corpus.rs).
#   CARGO_TARGET_DIR=T cargo test --release --no-run --test integration
#   bash benches/scripts/corpus.sh T OUTDIR 0 1 2 ...
# Run from the checkout the build came from (the test reads its corpus and head commit
# there); SRC=<checkout> says which, else the checkout holding this script.
set -euo pipefail
target=$1 out=$2
shift 2
src=${SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
bin=$(ls -t "$target"/release/deps/integration-* | grep -v '\.d$' | head -1)
mkdir -p "$out"
cd "$src"
for round in "$@"; do
  CORPUS_ROUND=$round "$bin" --exact --test-threads 1 --nocapture \
    corpus::realistic_mixed_styles_with_noise corpus::every_style_forced_in_turn_with_noise \
    corpus::rotated_board corpus::occupancy_only_board corpus::fast_players >"$out/r$round.txt" 2>&1 || true
  grep -oE 'corpus +[a-z]+ +[0-9]+/[0-9]+ games pass.*' "$out/r$round.txt" | sed "s/^/r$round /" \
    || echo "round $round: no report, see $out/r$round.txt"
done
