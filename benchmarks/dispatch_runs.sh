#!/usr/bin/env bash
# One device call = several dispatch benchmark runs (benchmarks/dispatch_llm_suite.py), their
# JSON, row files and logs brought back as one tar in $OUT (the device tool returns at most
# 8 files: session 29 lost two runs' row files by writing them under $OUT directly).
#
#   bash benchmarks/dispatch_runs.sh NAME:"dispatch_llm_suite.py arguments" [...]
#
# e.g. heads:"--shapes 512x1x4096,8192x2x4096 --modes heuristic,hybrid --max-autotune 0
# --processes 16 --budget-s 150". Run from the repository root.
#
# The runs stop by CALL_LIMIT_S (default 560) seconds after the call's start: the suite takes
# SIGTERM as an interrupt and summarises the problems it finished, and the tar is written.
# Why: --budget-s is checked between problems only, and one exhaustive problem on the 70B
# down projection ran the call past the device's 600 s, which then brought nothing back.
set -u
deadline=$(( $(date +%s) + ${CALL_LIMIT_S:-560} ))
. "$(dirname "$0")/gpu_state.sh"
work=/tmp/dispatch_runs
device_call_start "$work"
for spec in "$@"; do
    name=${spec%%:*}; args=${spec#*:}
    start=$(date +%s)
    left=$(( deadline - start ))
    if [ "$left" -le 10 ]; then echo "== $name: skipped, the call's time is spent"; continue; fi
    # shellcheck disable=SC2086  # the arguments are meant to split
    timeout --signal=TERM --kill-after=20 "$left" \
        python3 benchmarks/dispatch_llm_suite.py --out "$work/$name" $args > "$work/$name.log" 2>&1
    echo "== $name: rc=$? after $(( $(date +%s) - start )) s"
    grep -A6 '"paired_geomean_speedup_vs_torch"\|"paired_rows_below_0.97"' "$work/$name.log"
done
tar cf "$OUT/dispatch.tar" -C "$work" .
ls -la "$work"
