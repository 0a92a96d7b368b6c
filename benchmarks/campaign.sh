#!/usr/bin/env bash
# One device call = several sweeps in a row, each bounded by its own time budget.
#
#   bash benchmarks/campaign.sh NAME:SECONDS:DATADIR:"sweep arguments" [...]
#
# DATADIR ("-" for none) is a committed dataset folder whose problems the sweep must skip:
# its chunks are copied into the sweep's folder first (resume skips problems already there)
# and left out of the result, so a chunk continues the same seeded, shuffled problem list.
# `timeout` sends SIGTERM at the budget: the sweep saves the problems it finished. Each sweep's
# new parts are compacted into NAME.parquet; parquet files, sweep summaries and logs come back
# as one tar in $OUT (the device tool returns at most 8 files). Run from the repository root.
set -u
. "$(dirname "$0")/gpu_state.sh"
work=/tmp/campaign
device_call_start "$work" "$work/result"
for spec in "$@"; do
    name=${spec%%:*}; rest=${spec#*:}
    secs=${rest%%:*}; rest=${rest#*:}
    seed=${rest%%:*}; args=${rest#*:}
    dir=$work/$name
    mkdir -p "$dir"
    if [ "$seed" != "-" ]; then
        for f in "$seed"/*.parquet; do cp "$f" "$dir/seed-$(basename "$f")"; done
    fi
    start=$(date +%s)
    # shellcheck disable=SC2086  # the sweep arguments are meant to split
    timeout -s TERM -k 60 "$secs" python3 -m tilepick.cli sweep --out "$dir" $args \
        > "$work/result/$name.log" 2>&1
    rc=$?
    echo "== $name: rc=$rc after $(( $(date +%s) - start )) s"
    grep -v "it/s\]\|s/it\]" "$work/result/$name.log" | tail -n 25
    mkdir -p "$dir.new"
    mv "$dir"/part-*.parquet "$dir.new"/ 2>/dev/null
    cp "$dir"/sweep-*.json "$work/result"/ 2>/dev/null
    if ls "$dir.new"/part-*.parquet > /dev/null 2>&1; then
        python3 -m tilepick.cli data compact "$dir.new" "$work/result/$name.parquet"
        python3 -m tilepick.cli data summary "$work/result/$name.parquet" | tail -n 12
    fi
done
tar cf "$OUT/campaign.tar" -C "$work/result" .
ls -la "$work/result"
