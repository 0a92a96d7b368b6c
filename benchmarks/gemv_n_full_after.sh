#!/usr/bin/env bash
# On the CPU box, after `benchmarks/gemv_n_full_call.sh`'s device call: its files into place and
# every CPU reading of them in one log, so the session that gets the call spends its time on
# the decision, not on the plumbing.
#
#   bash benchmarks/gemv_n_full_after.sh FILES_AT [MODEL_OUT]
#
# FILES_AT: the folder the call's files came back in (campaign.tar, model.tar, dispatch.tar,
# call.log). MODEL_OUT (default work/gemv_n_full/model, untracked): where the call's retrain
# goes; the A/B timed that model, so it is the one to ship if anything is (session 63: a CPU
# rebuild with another thread count gives other gate calls).
#
# What it does: the sweeps' rows become train_gemv_n/chunk-003 (rr) and chunk-004 (cr), as the
# call's retrain used them (their PROVENANCE entry is still to write, from the summaries this
# prints); then the suite decode rows' gate calls (shipped, the retrain), the suite picks that
# differ, the retrain against the shipped model on the four validation sets, the A/B rows, and
# the gate-label pre-check on the retrain's recipe. Output: $MODEL_OUT/../after.log too.
set -u
cd "$(dirname "$0")/.."
files=${1:?give the folder with the device call files}
model_out=${2:-work/gemv_n_full/model}
tmp=$(mktemp -d)
mkdir -p "$tmp/campaign" "$tmp/model" "$tmp/dispatch" "$(dirname "$model_out")"
log="$(dirname "$model_out")/after.log"
: > "$log"
say() { echo "== $*" | tee -a "$log"; }
run() { say "$*"; "$@" 2>&1 | tee -a "$log"; }
for t in campaign model dispatch; do
    [ -f "$files/$t.tar" ] && tar xf "$files/$t.tar" -C "$tmp/$t" || say "no $t.tar"
done
[ -f "$files/call.log" ] && { say "call.log"; tee -a "$log" < "$files/call.log"; }
T=data/gemm/bf16/h200/train_gemv_n
for pair in rr:003 cr:004; do
    f=$tmp/campaign/gemvn_full_${pair%%:*}.parquet
    if [ -f "$f" ]; then
        cp "$f" "$T/chunk-${pair##*:}.parquet"
        run python -m tilepick.cli data summary "$T/chunk-${pair##*:}.parquet"
    else
        say "no $(basename "$f") in campaign.tar"
    fi
done
ls "$tmp"/campaign/sweep-*.json > /dev/null 2>&1 && run cat "$tmp"/campaign/sweep-*.json
M=models/gemm_bf16_h200
if [ -f "$tmp/model/model/manifest.json" ]; then
    rm -rf "$model_out" && cp -r "$tmp/model/model" "$model_out"
    run python benchmarks/analysis_s61/decode_gate.py $M "$model_out"
    run python benchmarks/analysis_s54/suite_picks.py $M "$model_out"
    run python benchmarks/paired_validation.py $M "$model_out" --data \
        data/gemm/bf16/h200/validation data/gemm/bf16/h200/validation_rc \
        data/gemm/bf16/h200/validation_cc data/gemm/bf16/h200/validation_cr
    run python benchmarks/analysis_s64/decode_gate_labels.py --model "$model_out"
else
    say "no retrained model in model.tar (the retrain's log, if any, is in $tmp/model)"
fi
for rows in "$tmp"/dispatch/*/*.jsonl* "$tmp"/dispatch/*.jsonl*; do
    [ -f "$rows" ] && run python benchmarks/analysis_s57/ab_rows.py "$rows" --b heuristic:new
done
say "files unpacked in $tmp; log in $log"
