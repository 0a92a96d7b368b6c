#!/usr/bin/env bash
# One device call: re-time, under today's kernels, the pointer kernels' configs of the
# output-bound problems that session 35's store fix made stale (lists and picks from
# benchmarks/make_ptr_refresh_lists.py), one pass per dataset folder, into $OUT/<name>/.
#
#   bash benchmarks/refresh_ptr.sh NAME:ROUNDS[:EXTRA] ...
#
# NAME is dtype_arch_folder (benchmarks/problems/ptr_refresh/NAME.jsonl and .picks.json.gz;
# data/gemm/<dtype>/<arch>/<folder>), or dtype_arch_folder@PART for a part of a long list
# (NAME@PART.jsonl, the folder's picks), so that one folder can be split over GPUs.
# LISTS=DIR reads the lists from DIR (--big's: benchmarks/problems/ptr_refresh_big).
# Training folders: 3 rounds, the picks and the near contenders only (EXTRA "--model-top 0
# --no-baselines --within 0.95 --top 8 --no-previous").
# Validation folders: a first pass like that, then (EXTRA "val") a 12-round pass of session
# 34's settings over the same problems, so their latest pass is a 12-round one holding the
# model's picks and the baselines' candidates.
set -u
: "${OUT:?set OUT to the folder that comes back}"
export PYTHONPATH=src PYTHONUNBUFFERED=1
lists=${LISTS:-benchmarks/problems/ptr_refresh}   # LISTS: another lists folder (--big's)
narrow="--model-top 0 --no-baselines --within 0.95 --top 8 --no-previous"
for spec in "$@"; do
    IFS=: read -r name rounds extra <<< "$spec"
    IFS=_ read -r dtype arch folder <<< "$name"
    folder=${folder%@*}   # NAME@PART: a part of a folder's list (NAME@PART.jsonl, same picks)
    data="data/gemm/$dtype/$arch/$folder"
    start=$(date +%s)
    python3 -m tilepick.cli data retime "$data" --problems "$lists/$name.jsonl" \
        --picks "$lists/${name%@*}.picks.json.gz" --rounds "$rounds" $narrow --processes 16 \
        --out "$OUT/$name/pass1" > "$OUT/$name.pass1.log" 2>&1
    echo "== $name pass 1: rc=$? after $(( $(date +%s) - start )) s"
    if [ "$extra" = "val" ]; then
        python3 -m tilepick.cli data retime "$data" "$OUT/$name/pass1" \
            --problems "$lists/$name.jsonl" --within 0.93 --top 16 --no-previous --rounds 12 \
            --processes 16 --out "$OUT/$name/pass2" > "$OUT/$name.pass2.log" 2>&1
        echo "== $name pass 2: rc=$? after $(( $(date +%s) - start )) s"
    fi
    grep -v "it/s\]\|s/it\]\|problem/s\]\|s/problem\]" "$OUT/$name.pass1.log" | tail -n 3
done
