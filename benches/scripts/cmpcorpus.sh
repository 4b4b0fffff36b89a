#!/usr/bin/env bash
# Compares two corpus.sh output directories round by round: the report lines (wall time
# left out) and every failure line. Prints only what differs.
#   bash benches/scripts/cmpcorpus.sh OLD NEW 0 1 2 ...
set -uo pipefail
old=$1 new=$2
shift 2
lines() {
  grep -oE 'corpus +[a-z]+ +[0-9]+/[0-9]+ games pass.*|^  (realistic|styles|rotated|occupancy|fast) .*' "$1" \
    | sed -E 's/, [0-9.]+ s; /; /' | sort
}
for round in "$@"; do
  diff <(lines "$old/r$round.txt") <(lines "$new/r$round.txt") | sed "s/^/r$round /" | grep -v '^r[0-9]* [0-9]' || true
done
