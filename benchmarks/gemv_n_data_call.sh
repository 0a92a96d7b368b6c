#!/usr/bin/env bash
# Session 60: the H200 data of `gemm.gemv_n_splitk` (the x @ W decode GEMV) in one device call:
# the suite probe, its sweeps over the validation and training lists of
# benchmarks/problems/make_gemv_n_lists.py, then re-timing passes over the validation problems
# with the new rows beside every family's earlier ones (so the family meets the old winners in
# interleaved rounds). Results: $OUT/campaign.tar and $OUT/retime.tar.
#
#   device run (nvidia-h200, carry .whl):
#   pip install --no-deps --no-index .whl/*.whl && TILEPICK_COMMIT=<hash> bash benchmarks/gemv_n_data_call.sh
set -u
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200"; exit 3; }
export PYTHONPATH=src
P=benchmarks/problems
V=data/gemm/bf16/h200
S="--family gemm.gemv_n_splitk --retime-top 5 --processes 16"
# each step's seconds can be set (0 leaves it out), to fit what device time is left
specs=()
add() { [ "$2" -gt 0 ] && specs+=("$1:$2:-:$3"); }
add gemvn_suite "${SUITE_S:-55}" "--problems $P/gemv_n_suite_rr_bf16.jsonl --family gemm.gemv_n_splitk --retime-top 8 --rounds 5 --processes 16"
add gemvn_val_rr "${VAL_RR_S:-45}" "--problems $P/validation_rr_bf16_gemv_n.jsonl $S --rounds 5"
add gemvn_val_cr "${VAL_CR_S:-25}" "--problems $P/validation_cr_bf16_gemv_n.jsonl --layout cr $S --rounds 5"
add gemvn_train_rr "${TRAIN_RR_S:-210}" "--problems $P/train_rr_bf16_gemv_n.jsonl $S --sample 32 --rounds 3"
add gemvn_train_cr "${TRAIN_CR_S:-55}" "--problems $P/train_cr_bf16_gemv_n.jsonl --layout cr $S --sample 32 --rounds 3"
bash benchmarks/campaign.sh "${specs[@]}"
B=/tmp/campaign/result
# the new validation rows join their sets (on this machine only) before the passes
[ -f $B/gemvn_val_rr.parquet ] && cp $B/gemvn_val_rr.parquet $V/validation/chunk-016.parquet
[ -f $B/gemvn_val_cr.parquet ] && cp $B/gemvn_val_cr.parquet $V/validation_cr/chunk-003.parquet
passes=()
add_pass() { [ "$2" -gt 0 ] && passes+=("$1:$2:$3"); }
add_pass v_rr "${RETIME_RR_S:-40}" "$V/validation --problems $P/validation_rr_bf16_gemv_n.jsonl"
add_pass v_cr "${RETIME_CR_S:-25}" "$V/validation_cr --problems $P/validation_cr_bf16_gemv_n.jsonl"
[ ${#passes[@]} -gt 0 ] && bash benchmarks/retime_validation.sh "${passes[@]}"
