#!/usr/bin/env bash
# A killed long run resumed with --resume equals an uninterrupted one. MODE is one of
#   sweep   icl sweep --simulate: TSV and sidecar byte for byte
#   figs    icl figs (four quick figures, data step): every TSV and sidecar byte for byte
#   verify  icl verify --quick --out: the JSON, apart from the seconds of the recomputed units
# The run is killed with SIGKILL once its checkpoint holds KILL_AT finished units (so the kill
# comes after a known number of units whatever the machine's speed), then resumed. Also: the
# checkpoint without --resume, and --resume with other options, are exit 2 naming the
# checkpoint / the differing option; the checkpoint is gone after the resumed run.
# Usage: resume_check.sh MODE ICL WORKDIR
set -euo pipefail
mode="$1"
icl="$2"
work="$3"
rm -rf "$work" && mkdir -p "$work/uninterrupted" "$work/resumed" && cd "$work"
case "$mode" in
  sweep)  # 8 points of ~0.5 s each at D = 40
    cmd=(sweep --vary alpha=0.5:4:8 --simulate --dim 40 --seeds 4 --seed 5 --quiet --out run.tsv)
    other=(sweep --vary alpha=0.5:4:8 --simulate --dim 40 --seeds 3 --seed 5 --quiet --out run.tsv)
    other_name=seeds; total=8; kill_at=2; output=run.tsv ;;
  figs)   # three ~0.1 s figures, then softmax (~1.6 s): killed during softmax
    cmd=(figs decomposition order_params test_context softmax --quick --no-plot --quiet --out run)
    other=(figs decomposition order_params test_context softmax --quick --no-plot --quiet --seed 3 --out run)
    other_name=seed; total=4; kill_at=3; output=run/figs_run.json ;;
  verify) # 2 grid points x 4 dims, 0.3-3 s each
    cmd=(verify --quick --quiet --out run.json)
    other=(verify --quick --quiet --seed 8 --out run.json)
    other_name=seed; total=8; kill_at=2; output=run.json ;;
  *) echo "unknown mode $mode"; exit 2 ;;
esac
partial="${cmd[-1]}.partial"

# Both runs write the same relative path in their own folder, so that even the command line
# recorded in the sidecars agrees.
(cd uninterrupted && "$icl" "${cmd[@]}")
cd resumed
"$icl" "${cmd[@]}" &
pid=$!
units() { find "$partial" -name 'unit_*.json' 2>/dev/null | wc -l; }
for _ in $(seq 1 2400); do
  [ "$(units)" -ge "$kill_at" ] && break
  sleep 0.05
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null || true
kept=$(units)
echo "killed with $kept of $total units kept"
if [ "$kept" -lt "$kill_at" ] || [ "$kept" -ge "$total" ] || [ -e "$output" ]; then
  echo "the run was not killed midway (kept $kept units)"; exit 1
fi

# Without --resume: refused, naming the checkpoint.
if "$icl" "${cmd[@]}" 2>err.txt; then exit 1; else test $? -eq 2; fi
grep -q "use --resume" err.txt
grep -q "$partial" err.txt
# --resume with other options: refused, naming the option that differs.
if "$icl" "${other[@]}" --resume 2>err.txt; then exit 1; else test $? -eq 2; fi
grep -q "other options" err.txt
grep -q "$other_name" err.txt
test ! -e "$output"

"$icl" "${cmd[@]}" --resume 2>err.txt
grep -q "reusing $kept finished units" err.txt
test ! -e "$partial"
cd ..
case "$mode" in
  sweep)
    cmp uninterrupted/run.tsv resumed/run.tsv
    cmp uninterrupted/run.tsv.json resumed/run.tsv.json ;;
  figs)
    n=0
    for f in uninterrupted/run/*.tsv uninterrupted/run/*.tsv.json; do
      cmp "$f" "resumed/run/${f#uninterrupted/run/}"
      n=$((n + 1))
    done
    echo "$n files equal"
    test "$n" -ge 8 ;;
  verify)
    # The JSON holds each simulation's wall time: equal for the kept units only.
    /usr/bin/python3 - <<'PY'
import json
def load(path):
    j = json.load(open(path))
    for p in j["points"]:
        p.pop("seconds_per_dim")
    return j
assert load("uninterrupted/run.json") == load("resumed/run.json"), "resumed verify differs"
PY
    ;;
esac
echo "a killed and resumed $mode equals an uninterrupted one"
