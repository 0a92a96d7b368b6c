#!/usr/bin/env bash
# A/B of the dispatcher's host time per call between two source trees, in one device call:
# a GPU correctness check of the new tree's prepared launches first (gpu_check --bound on
# CHECK_FAMILIES), then benchmarks/dispatch_overhead.py per config, old, new, old, new, so the
# host's drift inside the call shows as the spread between the two runs of one side.
#
#   OLD_SRC=work/old/src OLD_COMMIT=abc1234 OUT=... bash benchmarks/overhead_ab.sh \
#       CONFIG[@MxNxK] ...                                            -> $OUT/overhead_ab.tar
#
# The old tree: `git archive OLD_COMMIT src | tar -x -C work/old` (carried to the device).
# CONFIG: one that launches one kernel (dispatch_overhead.py times its direct launch): not
# gemm.splitk, whose reduction is a second kernel (session 43's try stopped on it).
set -u
: "${OUT:?set OUT to the folder that comes back}" "${OLD_SRC:?a source tree to compare with}"
: "${OLD_COMMIT:?the commit OLD_SRC was taken from}" "${TILEPICK_COMMIT:?the commit of this tree}"
export PYTHONUNBUFFERED=1
new_commit=$TILEPICK_COMMIT
work=/tmp/overhead_ab
rm -rf "$work" && mkdir -p "$work"
. "$(dirname "$0")/gpu_state.sh"
gpu_state "$work/gpu.csv"
PYTHONPATH=src python3 benchmarks/gpu_check.py --per-family 2 --bound \
    --families "${CHECK_FAMILIES:-gemm.cublaslt,gemm.splitk,gemm.splitk_atomic}" \
    --out "$work" 2>&1 | grep -v "^INVALID" | tail -n 20
for spec in "$@"; do
    cfg=${spec%@*}; shape=64x64x128
    [ "$spec" != "$cfg" ] && shape=${spec#*@}
    name=${cfg#gemm.}; name=${name%%.*}
    for run in old1 new1 old2 new2; do
        case $run in old*) src=$OLD_SRC commit=$OLD_COMMIT;; *) src=src commit=$new_commit;; esac
        mkdir -p "$work/${name}_$run"
        TILEPICK_COMMIT=$commit PYTHONPATH=$src python3 benchmarks/dispatch_overhead.py \
            --calls 20000 --repeats 7 --config "$cfg" --shape "$shape" \
            --out "$work/${name}_$run" > "$work/${name}_$run.log" 2>&1
        echo "== $cfg $shape $run: rc=$?"; head -n 14 "$work/${name}_$run.log"
    done
done
gpu_state "$work/gpu_end.csv"
tar cf "$OUT/overhead_ab.tar" -C "$work" .
