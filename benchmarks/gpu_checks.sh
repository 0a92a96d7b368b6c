#!/usr/bin/env bash
# The API's GPU checks in one device call, their results brought back as one tar in $OUT:
# benchmarks/api_edge_check.py on one GPU (CUDA_VISIBLE_DEVICES=0, the one-GPU path) and, where
# the machine has two or more, benchmarks/multi_gpu_check.py on all of them. Prints one line per
# check script: its exit code, check count and failures.
#
#   TILEPICK_COMMIT=<hash> OUT=DIR bash benchmarks/gpu_checks.sh
#
# (the device's copy of the tree has no git history: the provenance takes the commit from
# TILEPICK_COMMIT there)
#
# Why a script: session 45 ran these by hand, cut the summary line short and wrote one file
# more than the device brings back (8), so one result was lost; a tar is one file.
set -u
. "$(dirname "$0")/gpu_state.sh"
work=/tmp/gpu_checks
device_call_start "$work"
summary() {   # NAME RC JSON: one line, whatever the JSON holds
    python3 - "$@" <<'PY'
import json, sys
name, rc, path = sys.argv[1:4]
try:
    d = json.load(open(path))
except (OSError, ValueError) as exc:
    print(f"{name}: rc {rc}, no result ({type(exc).__name__})")
    raise SystemExit
runs = d.get("results", [d])
checks = sum(r.get("checks", 0) for r in runs)
failures = [f for r in runs for f in r.get("failures", [])]
print(f"{name}: rc {rc}, {checks} checks, {len(failures)} failed" +
      "".join(f"\n  {f[:300]}" for f in failures[:10]))
PY
}
CUDA_VISIBLE_DEVICES=0 timeout 300 python3 benchmarks/api_edge_check.py --out "$work/api" \
    > "$work/api_edge_check.log" 2>&1
summary api_edge_check $? "$work/api/api_edge_check.json"
gpus=$(nvidia-smi --list-gpus 2>/dev/null | wc -l)
if [ "$gpus" -ge 2 ]; then
    timeout 300 python3 benchmarks/multi_gpu_check.py --out "$work/mg" > "$work/multi_gpu_check.log" 2>&1
    summary multi_gpu_check $? "$work/mg/multi_gpu_check.json"
else
    echo "multi_gpu_check: skipped, $gpus GPU(s)"
fi
tar cf "$OUT/gpu_checks.tar" -C "$work" .
