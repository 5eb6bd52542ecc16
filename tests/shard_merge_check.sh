#!/usr/bin/env bash
# A 4-shard sweep (with simulation) and a 4-shard phase grid run through GNU parallel, merged
# with `icl merge`, must equal the unsharded runs bit for bit; mismatched shards are refused.
set -euo pipefail
icl="$1"
work="$2"
rm -rf "$work" && mkdir -p "$work" && cd "$work"
sweep=(sweep --vary alpha=0.5:4:9 --simulate --dim 8 --seeds 2 --seed 11 --quiet)
phase=(phase --x rho=0.1:1:7 --y kappa=0.25:2:5 --quiet)
"$icl" "${sweep[@]}" --out full_sweep.tsv
"$icl" "${phase[@]}" --out full_phase.tsv
parallel --halt now,fail=1 "$icl" "${sweep[@]}" --shard {}/4 --out sweep_{}.tsv ::: 0 1 2 3
parallel --halt now,fail=1 "$icl" "${phase[@]}" --shard {}/4 --out phase_{}.tsv ::: 0 1 2 3
"$icl" merge sweep_3.tsv sweep_1.tsv sweep_0.tsv sweep_2.tsv --out merged_sweep.tsv
"$icl" merge phase_0.tsv phase_1.tsv phase_2.tsv phase_3.tsv --out merged_phase.tsv
cmp full_sweep.tsv merged_sweep.tsv
cmp full_phase.tsv merged_phase.tsv
# Refusals: a missing shard, a duplicated shard, a shard made with other parameters.
if "$icl" merge sweep_0.tsv sweep_1.tsv sweep_2.tsv --out bad.tsv 2>err.txt; then exit 1; fi
grep -q "missing shards 3" err.txt
if "$icl" merge sweep_0.tsv sweep_0.tsv sweep_1.tsv sweep_2.tsv sweep_3.tsv --out bad.tsv 2>err.txt; then exit 1; fi
grep -q "given twice" err.txt
"$icl" sweep --vary alpha=0.5:4:9 --simulate --dim 8 --seeds 2 --seed 11 --quiet --sigma 0.5 --shard 3/4 --out other_3.tsv
if "$icl" merge sweep_0.tsv sweep_1.tsv sweep_2.tsv other_3.tsv --out bad.tsv 2>err.txt; then exit 1; fi
grep -q "other parameters" err.txt
test ! -e bad.tsv
echo "shards merge bit for bit"
