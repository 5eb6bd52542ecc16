#!/usr/bin/env bash
# A killed `icl sweep --simulate` resumed with --resume equals an uninterrupted run byte for
# byte (TSV and sidecar): the run is killed with SIGKILL once its checkpoint holds two finished
# points (the kill comes after a known number of units, whatever the machine's speed), then
# resumed. Also: an existing checkpoint without --resume, and --resume with other options, are
# refused with exit 2; the checkpoint is gone after the resumed run.
set -euo pipefail
icl="$1"
work="$2"
rm -rf "$work" && mkdir -p "$work/uninterrupted" "$work/resumed" && cd "$work"
# 8 points of ~0.5 s each at D = 40 (a kill after 2 leaves most of the run to resume).
sweep=(sweep --vary alpha=0.5:4:8 --simulate --dim 40 --seeds 4 --seed 5 --quiet)
# Both runs write run.tsv in their own folder, so that even the command in the sidecars agrees.
(cd uninterrupted && "$icl" "${sweep[@]}" --out run.tsv)
cd resumed

"$icl" "${sweep[@]}" --out run.tsv &
pid=$!
units() { find run.tsv.partial -name 'unit_*.json' 2>/dev/null | wc -l; }
for _ in $(seq 1 1200); do
  [ "$(units)" -ge 2 ] && break
  sleep 0.05
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
kept=$(units)
echo "killed with $kept of 8 points kept"
if [ "$kept" -lt 2 ] || [ "$kept" -ge 8 ] || [ -e run.tsv ]; then
  echo "the run was not killed midway (kept $kept points)"; exit 1
fi

# Without --resume: refused, the checkpoint is named.
if "$icl" "${sweep[@]}" --out run.tsv 2>err.txt; then exit 1; else test $? -eq 2; fi
grep -q "use --resume" err.txt
grep -q "run.tsv.partial" err.txt
# --resume with other options: refused, the differing option is named.
if "$icl" sweep --vary alpha=0.5:4:8 --simulate --dim 40 --seeds 3 --seed 5 --quiet \
     --out run.tsv --resume 2>err.txt; then exit 1; else test $? -eq 2; fi
grep -q "other options" err.txt
grep -q "seeds" err.txt
test ! -e run.tsv

"$icl" "${sweep[@]}" --out run.tsv --resume 2>err.txt
grep -q "reusing $kept finished units" err.txt
cmp ../uninterrupted/run.tsv run.tsv
cmp ../uninterrupted/run.tsv.json run.tsv.json
test ! -e run.tsv.partial
# --resume where there is nothing to resume: an ordinary run.
"$icl" "${sweep[@]}" --out again.tsv --resume 2>err.txt
grep -q "starting afresh" err.txt
cmp ../uninterrupted/run.tsv again.tsv
echo "a killed and resumed sweep equals an uninterrupted one byte for byte"
