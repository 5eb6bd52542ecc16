#!/usr/bin/env bash
# Ctrl-C keeps what finished (docs/cli.md "Interrupts"):
#   simulate  SIGINT during `icl simulate --json --out`: exit 130 after the seeds in progress,
#             the JSON written with status interrupted, seeds_finished k (1 <= k < seeds) and the
#             estimates over seeds 0..k-1, equal to a run of k seeds; a second SIGINT exits at once.
#   sweep     SIGINT during `icl sweep --simulate --out F`: exit 130 at once, F.partial/ kept, the
#             message prints the command that continues it; that command (run as printed, by
#             the shell) finishes the run, equal to an uninterrupted one, and removes F.partial.
# Usage: interrupt_check.sh ICL WORK_DIR
set -euo pipefail
icl=$(realpath "$1") work=$2
rm -rf "$work"
mkdir -p "$work"
cd "$work"

# Wait (up to 120 s) until file $1 contains $2.
wait_for() {
  for _ in $(seq 1 2400); do
    grep -q -- "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "timed out waiting for '$2' in $1"; exit 1
}

# --- simulate: the finished seeds are the result -------------------------------------------
sim=(simulate --dim 60 --seeds 400 --seed 3 --threads 1 --prompts 0 --json)
"$icl" "${sim[@]}" --out sim.json 2>sim.err &
pid=$!
wait_for sim.err "\[simulate seed\] 1/400"
kill -INT "$pid"
status=0; wait "$pid" || status=$?
test "$status" -eq 130
grep -q "finishing the seeds in progress" sim.err
grep -q "interrupted after" sim.err
k=$(/usr/bin/python3 - <<'PY'
import json
j = json.load(open("sim.json"))
assert j["status"] == "interrupted", j["status"]
k = j["seeds_finished"]
assert 1 <= k < 400, k
assert j["error"]["idg"]["mean"] > 0
print(k)
PY
)
echo "simulate: interrupted after $k seeds"
"$icl" simulate --dim 60 --seeds "$k" --seed 3 --threads 1 --prompts 0 --json --out full.json --quiet
/usr/bin/python3 - <<'PY'
import json
a, b = json.load(open("sim.json")), json.load(open("full.json"))
assert a["error"] == b["error"] and a["order"] == b["order"], "interrupted run differs from k seeds"
PY
# A second Ctrl-C stops at once (exit 130, nothing written). Seeds of D = 150 (seconds each, where
# a D = 60 seed now takes 0.2 s) so that the second signal lands while a seed is running.
twice=(simulate --dim 150 --seeds 400 --seed 3 --threads 1 --prompts 0 --json)
"$icl" "${twice[@]}" --out twice.json 2>twice.err &
pid=$!
wait_for twice.err "\[simulate seed\] 1/400"
kill -INT "$pid"; sleep 0.2; kill -INT "$pid"
status=0; wait "$pid" || status=$?
test "$status" -eq 130
test ! -e twice.json

# --- sweep --simulate --out: the command that continues the run ----------------------------
mkdir -p uninterrupted interrupted
swp=(sweep --vary alpha=1:3:6 --simulate --dim 60 --seeds 4 --threads 1 --quiet)
(cd uninterrupted && "$icl" "${swp[@]}" --out 'run 1.tsv')
cd interrupted
"$icl" "${swp[@]}" --out 'run 1.tsv' 2>err.txt &
pid=$!
for _ in $(seq 1 2400); do
  [ -e "run 1.tsv.partial/unit_point_0.json" ] && break
  sleep 0.05
done
kill -INT "$pid"
status=0; wait "$pid" || status=$?
test "$status" -eq 130
grep -q "the finished units are kept in run 1.tsv.partial; continue with:" err.txt
test -d "run 1.tsv.partial"
test ! -e "run 1.tsv"
command=$(tail -n 1 err.txt)
echo "continuing with: $command"
case "$command" in *"--out 'run 1.tsv' --resume") ;; *) echo "not the resume command"; exit 1 ;; esac
eval "$command" 2>resumed.err
grep -q "reusing" resumed.err
test ! -e "run 1.tsv.partial"
cmp "run 1.tsv" "../uninterrupted/run 1.tsv"
cmp "run 1.tsv.json" "../uninterrupted/run 1.tsv.json"
echo "interrupt checks passed"
