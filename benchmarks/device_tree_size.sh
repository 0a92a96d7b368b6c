#!/usr/bin/env bash
# How much of the device tool's 64 MiB a call would send: the tracked files present in the
# working tree, the untracked files git does not ignore, and the paths given (what the call
# would `carry`). Run from the repository root before composing a device call:
#
#   bash benchmarks/device_tree_size.sh .whl work/MODEL_DIR
#
# Why: session 47's call carrying the matmul-heuristics wheel (1.9 MiB) and a copy of a model
# folder with its reports was refused as over 64 MiB with 59.1 MiB of tracked files (whether the
# tool counts 2^20 or 10^6 bytes is not known: keep under 61 MiB); data grows every session.
set -u
{
    git ls-files -z --cached --others --exclude-standard
    for p in "$@"; do find "$p" -type f -print0; done
} | while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done \
  | xargs -0 -r stat -c %s | awk '{s += $1} END {printf "%.1f MiB (%.1f MB) would travel; the limit is 64 MiB\n", s / 1048576, s / 1e6}'
