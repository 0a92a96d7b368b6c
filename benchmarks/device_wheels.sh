#!/usr/bin/env bash
# Wheels the device image lacks (it has torch, triton, pandas, pyarrow, scikit-learn, ...),
# fetched here for its Python 3.12 / x86_64 into .whl/ (gitignored), to travel with a run:
#
#   bash benchmarks/device_wheels.sh                      # on this machine, once
#   bash benchmarks/device_wheels.sh py-spy               # + py-spy, to profile a sweep
#   device run, carry [".whl"]:  pip install --no-deps --no-index .whl/*.whl && ...
#
# A run's upload (tracked files, untracked ones that git does not ignore, and what it
# carries) must stay under 64 MiB: the repository's tracked files are ~58 MB (session 14), so
# carry only the wheels a run needs (lightgbm 3.5 MB, nvidia-matmul-heuristics 2.0 MB; with
# py-spy's 2.9 MB a run with a 0.8 MB untracked input was refused).
#
# Without lightgbm there, the dispatcher cannot load the shipped models and falls back to the
# analytic order (benchmarks/dispatch_llm_suite.py refuses to run that way).
set -eu
cd "$(dirname "$0")/.."
python3 -m pip download --quiet --dest .whl --only-binary=:all: --no-deps \
    --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
    --implementation cp "lightgbm>=4.3" "nvidia-matmul-heuristics>=0.1" "$@"
ls -la .whl
