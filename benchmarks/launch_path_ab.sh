#!/usr/bin/env bash
# A/B of the bound launches' direct path (solvers.direct_launch) on the GPU, one device call:
#   1. correctness: gpu_check --bound (every bound launch run twice, the second one direct);
#   2. host time per call of the dispatcher's stages, direct path off / on, pointer and TMA;
#   3. a host-bound sweep (small problems) off, on, off, on, each into a fresh folder (the
#      first pays the cold compile; the rate is the measuring phase's), then py-spy of one more.
#
#   OUT=... bash benchmarks/launch_path_ab.sh [sweep arguments]     -> $OUT/ab.tar
set -u
: "${OUT:?set OUT to the folder that comes back}"
export PYTHONPATH=src PYTHONUNBUFFERED=1
final=$OUT
OUT=/tmp/ab_result          # the device tool returns few files: everything goes in one tar
rm -rf "$OUT" && mkdir -p "$OUT"
sweep_args=${*:-"--problems mixed --max-tflop 0.002 --limit 25 --sample 150 --pool 120 --processes 16 --order model"}
. "$(dirname "$0")/gpu_state.sh"
gpu_state "$OUT/gpu.csv"
python3 benchmarks/gpu_check.py --per-family 1 --bound \
    --families gemm.ptr,gemm.tma,gemm.tma_persistent,gemm.splitk,gemm.splitk_atomic \
    --out "$OUT" 2>&1 | grep -v "^INVALID" | tail -n 30
for cfg in gemm.ptr.m64n64k64.g8.w4.s3 gemm.tma.m64n64k64.g1.w4.s3; do
    for direct in 0 1; do
        fam=${cfg#gemm.}; fam=${fam%%.*}
        mkdir -p "$OUT/overhead_${fam}_direct$direct"
        TILEPICK_DIRECT_LAUNCH=$direct python3 benchmarks/dispatch_overhead.py --calls 5000 \
            --config "$cfg" --out "$OUT/overhead_${fam}_direct$direct" 2>&1 | sed -n 1,20p
    done
done
for run in off1 on1 off2 on2; do
    direct=0; case $run in on*) direct=1;; esac
    # shellcheck disable=SC2086  # the sweep arguments are meant to split
    TILEPICK_DIRECT_LAUNCH=$direct python3 -m tilepick.cli sweep --out "/tmp/ab_$run" \
        $sweep_args > "$OUT/sweep_$run.log" 2>&1
    cp /tmp/ab_$run/sweep-*.json "$OUT/sweep_$run.json"
    echo "== $run (direct=$direct)"; grep -v "it/s\]\|s/it\]" "$OUT/sweep_$run.log" | tail -n 6
done
if command -v py-spy > /dev/null; then
    # shellcheck disable=SC2086
    py-spy record --rate 200 --format raw --output "$OUT/pyspy_on.txt" -- \
        python3 -m tilepick.cli sweep --out /tmp/ab_spy $sweep_args > "$OUT/sweep_spy.log" 2>&1 \
        || echo "py-spy failed: $(tail -n 3 "$OUT/sweep_spy.log")"
    cp /tmp/ab_spy/sweep-*.json "$OUT/sweep_spy.json" 2>/dev/null
fi
tar cf "$final/ab.tar" -C "$OUT" .
