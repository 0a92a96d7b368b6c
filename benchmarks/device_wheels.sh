#!/usr/bin/env bash
# Wheels the device image lacks (it has torch, triton, pandas, pyarrow, scikit-learn, ...),
# py-spy to profile a sweep without cProfile's per-call inflation,
# fetched here for its Python 3.12 / x86_64 into .whl/ (gitignored), to travel with a run:
#
#   bash benchmarks/device_wheels.sh                      # on this machine, once
#   device run, carry [".whl"]:  pip install --no-deps --no-index .whl/*.whl && ...
#
# Without lightgbm there, the dispatcher cannot load the shipped models and falls back to the
# analytic order (benchmarks/dispatch_llm_suite.py refuses to run that way).
set -eu
cd "$(dirname "$0")/.."
python3 -m pip download --quiet --dest .whl --only-binary=:all: --no-deps \
    --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
    --implementation cp "lightgbm>=4.3" "nvidia-matmul-heuristics>=0.1" "py-spy>=0.4"
ls -la .whl
