#!/usr/bin/env bash
# Prediction latency of two sources of the package, alternated in one session (CPU).
#
#   bash benchmarks/analysis_s56/latency_ab.sh BASE_COMMIT [ROUNDS] [MODEL]
#
# Why: this 2-core machine's speed moves by 2x between hours (BENCHMARKS, sessions 54-55), so
# a latency change is only read against its base timed in the same minutes. BASE_COMMIT's src
# is unpacked to /tmp/latency_ab_base; each round runs benchmarks/predict_latency.py on it,
# then on this tree's src (the same model files, 300 new problems), and prints the numpy-op
# probe and the p50 / p90 of a new and of a repeated problem.
set -eu
base=$1; rounds=${2:-3}; model=${3:-models/gemm_bf16_h200}
dir=/tmp/latency_ab_base
rm -rf "$dir" && mkdir -p "$dir"
git archive "$base" src | tar x -C "$dir"
for r in $(seq "$rounds"); do
    for v in base new; do
        src=src; [ "$v" = base ] && src=$dir/src
        printf '%s %s ' "$r" "$v"
        PYTHONPATH=$src python benchmarks/predict_latency.py --model "$model" --problems 300 2>&1 |
            grep -o "[0-9.]* ns per small numpy op\|new_problem *p50 *[0-9.]* us *p90 *[0-9.]* us\|repeated_problem *p50 *[0-9.]* us" |
            tr '\n' ' '
        echo
    done
done
