#!/usr/bin/env bash
# One device call: measure the one-launch split-K configs a model would pick on validation
# problems whose sweeps never measured those families, then re-time, with their contenders,
# the problems where that model's pick is now outside the latest pass.
#
#   bash benchmarks/fill_validation_holes.sh NAME:DTYPE:LAYOUT:DATADIR:MODELDIR [...]
#
# Why: the one-launch split-K families (session 20) were swept exhaustively on only 83 bf16,
# 26 fp16 and 27 fp8 validation problems. Elsewhere a model's fused split-K pick was never
# measured, so `validate` scored its first *measured* config instead (session 25 found 10
# such problems for the shipped models: `model_top1_unmeasured` in validation.json).
# NAME picks the problem list benchmarks/problems/validation_NAME_no_fused_splitk.jsonl
# (the problems without rows of those families). Everything comes back as one tar in $OUT:
# the sweep's parts, the pass's parts, the problem list and the logs. RETIME_ARGS adds arguments
# to the pass (session 34's validation passes: "--within 0.93 --top 16 --no-previous --rounds 12").
set -u
: "${OUT:?set OUT to the folder that comes back}"
export PYTHONPATH=src PYTHONUNBUFFERED=1
work=/tmp/holes
mkdir -p "$work/result"
for spec in "$@"; do
    IFS=: read -r name dtype layout data model <<< "$spec"
    res="$work/result/$name"
    mkdir -p "$res/sweep" "$res/pass"
    start=$(date +%s)
    python3 -m tilepick.cli sweep --problems "benchmarks/problems/validation_${name}_no_fused_splitk.jsonl" \
        --dtype "$dtype" --layout "$layout" --family gemm.splitk_fused --family gemm.tma_splitk \
        --sample 0 --model-top 8 --model "$model" --retime-top 5 --rounds 3 --processes 16 \
        --out "$work/$name/sweep" > "$res/sweep.log" 2>&1
    echo "== $name sweep: rc=$? after $(( $(date +%s) - start )) s"
    python3 -m tilepick.cli validate --data "$data" --data "$work/$name/sweep" --model "$model" \
        --out "$work/$name/val" > "$res/validate.log" 2>&1
    python3 - "$work/$name/val/validation.json" "$res/holes.jsonl" <<'EOF'
import json, sys
from tilepick.bench.shapes import write_problem_file
from tilepick.problem import GemmProblem
rep = json.load(open(sys.argv[1]))
keys = sorted(set(rep["model_top1_outside_pass_problems"]) | set(rep["model_top1_unmeasured_problems"]))
write_problem_file([GemmProblem.from_key(k) for k in keys], sys.argv[2])
print(f"{len(keys)} problems to re-time; unmeasured picks left: {rep['model_top1_unmeasured']}")
EOF
    if [ -s "$res/holes.jsonl" ]; then
        python3 -m tilepick.cli data retime "$data" "$work/$name/sweep" \
            --problems "$res/holes.jsonl" --model "$model" --processes 16 ${RETIME_ARGS:-} \
            --out "$work/$name/pass" > "$res/retime.log" 2>&1
        echo "== $name pass: rc=$? after $(( $(date +%s) - start )) s"
    fi
    cp "$work/$name/sweep"/*.parquet "$work/$name/sweep"/*.json "$res/sweep/" 2>/dev/null
    cp "$work/$name/pass"/*.parquet "$work/$name/pass"/*.json "$res/pass/" 2>/dev/null
    grep -v "it/s\]\|s/it\]\|problem/s\]\|s/problem\]\|kernel/s\]\|s/kernel\]" "$res/sweep.log" | tail -n 8
done
tar cf "$OUT/holes.tar" -C "$work/result" .
