#!/usr/bin/env bash
# Soak runs, one per seed, 8 boards x 8 simulated hours each, into OUTDIR/sSEED.txt; prints
# each seed's lost/phantom line. Compare runs by lines 2-7 (`sed -n 2,7p`).
#   CARGO_TARGET_DIR=T cargo bench --no-run -p boardcast --bench soak
#   bash benches/scripts/soaks.sh T/release/deps/soak-<hash> OUTDIR 1 2 3 ...
set -euo pipefail
bin=$1 out=$2
shift 2
mkdir -p "$out"
for seed in "$@"; do
  "$bin" --boards 8 --hours 8 --seed "$seed" >"$out/s$seed.txt" 2>&1 || echo "seed $seed: exit $?"
  echo "s$seed $(sed -n 2p "$out/s$seed.txt")"
done
