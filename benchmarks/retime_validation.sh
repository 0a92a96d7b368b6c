#!/usr/bin/env bash
# One device call: re-time the contenders of validation sets (tilepick data retime), each
# bounded by its own time budget, and bring the rows back as one tar in $OUT.
#
#   bash benchmarks/retime_validation.sh NAME:SECONDS:DATADIR [...]
#
# DATADIR may be several words: the pass's dataset folders or files and options, e.g.
# "data/gemm/bf16/h200/train_gemv --problems benchmarks/problems/X.jsonl".
#
# A pass cut by its budget saves the problems it finished (SIGTERM from `timeout`); its parts
# come back and a later call resumes from them if they are put back under /tmp/retime/NAME
# (RESUME_FROM=DIR holding NAME/part-*.parquet copies them there first). RETIME_ARGS adds
# arguments to every pass (e.g. "--model DIR": that model's picks among the contenders too).
set -u
: "${OUT:?set OUT to the folder that comes back}"
export PYTHONPATH=src PYTHONUNBUFFERED=1
work=/tmp/retime
mkdir -p "$work/result"
. "$(dirname "$0")/gpu_state.sh"
gpu_state "$work/result/gpu.csv"
for spec in "$@"; do
    name=${spec%%:*}; rest=${spec#*:}
    secs=${rest%%:*}; data=${rest#*:}
    mkdir -p "$work/$name"
    if [ -n "${RESUME_FROM:-}" ] && ls "$RESUME_FROM/$name"/part-*.parquet > /dev/null 2>&1; then
        cp "$RESUME_FROM/$name"/part-*.parquet "$work/$name"/
    fi
    start=$(date +%s)
    # shellcheck disable=SC2086  # several data arguments are meant to split
    timeout -s TERM -k 60 "$secs" python3 -m tilepick.cli data retime $data \
        --out "$work/$name" --processes 16 ${RETIME_ARGS:-} > "$work/result/$name.log" 2>&1
    echo "== $name: rc=$? after $(( $(date +%s) - start )) s"
    grep -v "it/s\]\|s/it\]\|problem/s\]\|s/problem\]" "$work/result/$name.log" | tail -n 30
    mkdir -p "$work/result/$name"
    cp "$work/$name"/part-*.parquet "$work/$name"/retime-*.json "$work/result/$name"/ 2>/dev/null
done
tar cf "$OUT/retime.tar" -C "$work/result" .
ls -laR "$work/result" | tail -n 40
