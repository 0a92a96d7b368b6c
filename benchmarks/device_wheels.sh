#!/usr/bin/env bash
# Wheels the device image lacks (it has torch, triton, pandas, pyarrow, scikit-learn, ...),
# fetched here for its Python 3.12 / x86_64 into .whl/ (gitignored), to travel with a run:
#
#   bash benchmarks/device_wheels.sh                      # on this machine, once
#   bash benchmarks/device_wheels.sh py-spy               # + py-spy, to profile a sweep
#   device run, carry [".whl"]:  pip install --no-deps --no-index .whl/*.whl && ...
#
# A run's upload (tracked files, untracked ones that git does not ignore, and what it
# carries) must stay under 64 MiB: the repository's tracked files are ~63.7 MB (session 16),
# so carry only the wheels a run needs (lightgbm 3.5 MB no longer fits beside them,
# nvidia-matmul-heuristics 2.0 MB does; py-spy 2.9 MB). Move a wheel out of .whl/ to leave
# it behind.
#
# lightgbm is not needed to predict or dispatch (session 16): without it the shipped models'
# trees are evaluated by numpy (tilepick.model.trees, the same picks on the LLM suite). Only
# training on the device would need it. nvidia-matmul-heuristics is needed where a re-timing
# pass or validate should include its baseline's candidates.
set -eu
cd "$(dirname "$0")/.."
python3 -m pip download --quiet --dest .whl --only-binary=:all: --no-deps \
    --python-version 3.12 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
    --implementation cp "nvidia-matmul-heuristics>=0.1" "$@"
ls -la .whl
