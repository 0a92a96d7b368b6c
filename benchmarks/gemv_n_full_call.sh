#!/usr/bin/env bash
# Session 63: the whole `gemm.gemv_n_splitk` experiment of sessions 61-62 in ONE device call,
# because H200s come rarely (session 62: none in 20 tries; session 61: one call of seven):
#   1. the family's whole config space on the training problems (rr, then cr; session 61 swept
#      32 sampled configs each, and the vendor gate's labels at M = 1 suffer from that);
#   2. the shipped recipe retrained here with those rows added, with 16 LightGBM threads (the
#      recipe's 2 take ~280 s on the CPU box; 16 took 205 s there on 2 cores). The thread count
#      changes the trees (session 63), so the model that comes back, not a CPU rebuild with 2
#      threads, is the one the A/B measured: ship that one, or rebuild with --param
#      num_threads=16 (twice on the CPU box: the same bytes);
#   3. the suite rows whose main-model pick the retrain changes (analysis_s54/suite_picks.py
#      --shapes), timed in heuristic mode under both models beside torch.matmul, in the time
#      left. The whole-suite A/B stays a later call's job (~330 s).
# Results in $OUT: campaign.tar (the sweeps' rows, summaries and logs), model.tar (the retrain,
# to compare and perhaps ship on the CPU box), dispatch.tar (the A/B), call.log (the steps).
# Afterwards, on the CPU box: `bash benchmarks/gemv_n_full_after.sh FILES_AT` puts the rows and
# the model in place and runs every CPU reading of them (session 64).
#
#   bash benchmarks/device_wheels.sh lightgbm       # on the CPU box, once: .whl/ gets lightgbm
#   git sparse-checkout set --no-cone '/*' '!/benchmarks/results/' '!/data/gemm/fp8e4m3/'
#   mv work /tmp/work_aside                         # untracked model folders travel too
#   bash benchmarks/device_tree_size.sh .whl        # must stay under ~61 MiB (55.0 in session 63)
#   device run (nvidia-h200, carry [".whl"], timeout_s 600):
#   pip install -q --no-deps --no-index .whl/*.whl && TILEPICK_COMMIT=<hash> bash benchmarks/gemv_n_full_call.sh
#
# Each step's seconds can be set (FULL_RR_S, FULL_CR_S, RETRAIN_S; 0 leaves a sweep out); the
# A/B gets what is left of CALL_S (default 575) after the rest.
set -u
cd "$(dirname "$0")/.."
start=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200"; exit 3; }
python3 -c "import lightgbm" 2>/dev/null || { echo "no lightgbm: carry its wheel in .whl/"; exit 4; }
: "${OUT:?set OUT to the folder that comes back}"
export PYTHONPATH=src PYTHONUNBUFFERED=1
log() { echo "== $(( $(date +%s) - start )) s: $*" | tee -a "$OUT/call.log"; }
P=benchmarks/problems
T=data/gemm/bf16/h200/train_gemv_n
MODEL=models/gemm_bf16_h200
NEW=/tmp/gemv_n_full/model
# budgets: session 61 measured 32 configs a problem in 37 s (rr, 300 problems) and 9 s (cr, 59),
# plus ~14 s of compiling; the whole space (162 configs) is ~5x that
S="--family gemm.gemv_n_splitk --retime-top 5 --processes 16 --rounds 3"
specs=()
add() { [ "$2" -gt 0 ] && specs+=("$1:$2:-:$3"); }
add gemvn_full_rr "${FULL_RR_S:-240}" "--problems $P/train_rr_bf16_gemv_n.jsonl $S"
add gemvn_full_cr "${FULL_CR_S:-60}" "--problems $P/train_cr_bf16_gemv_n.jsonl --layout cr $S"
bash benchmarks/campaign.sh "${specs[@]}" 2>&1 | tail -n 60
log "sweeps done"
# the new rows join the family's training folder (on this machine only; the CPU box commits
# the same bytes from campaign.tar as chunk-003 and chunk-004)
B=/tmp/campaign/result
[ -f $B/gemvn_full_rr.parquet ] && cp $B/gemvn_full_rr.parquet $T/chunk-003.parquet
[ -f $B/gemvn_full_cr.parquet ] && cp $B/gemvn_full_cr.parquet $T/chunk-004.parquet
rm -rf /tmp/gemv_n_full && mkdir -p /tmp/gemv_n_full
timeout -s TERM "${RETRAIN_S:-170}" python3 benchmarks/retrain_manifest.py $MODEL $NEW \
    --new-folder --add $T/chunk-*.parquet --param num_threads=16 \
    > /tmp/gemv_n_full/retrain.log 2>&1
log "retrain rc=$?"
tail -n 15 /tmp/gemv_n_full/retrain.log
[ -f $NEW/manifest.json ] || { tar cf "$OUT/model.tar" -C /tmp/gemv_n_full .; exit 5; }
python3 benchmarks/analysis_s61/decode_gate.py $MODEL $NEW 2>&1 | tail -n 25 | tee -a "$OUT/call.log"
shapes=$(python3 benchmarks/analysis_s54/suite_picks.py $MODEL $NEW --shapes)
tar cf "$OUT/model.tar" -C /tmp/gemv_n_full .
log "changed shapes: ${shapes:-none}"
left=$(( ${CALL_S:-575} - ($(date +%s) - start) ))
if [ -n "$shapes" ] && [ "$left" -gt 60 ]; then
    CALL_LIMIT_S=$left bash benchmarks/dispatch_runs.sh changed:"--shapes $shapes --layouts rr,rc \
--modes heuristic --heuristic-model new=$NEW --rounds 25 --max-autotune 0 --processes 16 \
--budget-s $(( left - 30 ))" 2>&1 | tail -n 40
else
    echo "no A/B: ${left} s left"
fi
log "done"
