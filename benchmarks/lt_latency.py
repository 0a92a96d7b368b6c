"""The cuBLASLt entry model's cost to score one problem's entries (CPU).

Why: the dispatcher scores a new problem's entries once (then its decision is cached); the GPU
machines have no LightGBM, so the trees are walked by numpy there (``tilepick.model.trees``).
This times both paths on the 8 entries of one LLM suite shape from a probe result, the same
scores checked.

    PYTHONPATH=src python benchmarks/lt_latency.py [--model models/cublaslt_bf16_h200]
"""

import argparse
import statistics
import time

import numpy as np

from tilepick.features import lt_entries
from tilepick.model import lt_ranker
from tilepick.model.booster import FastBooster, read_model_text
from tilepick.model.trees import NumpyTrees

PROBE = "benchmarks/results/cublaslt_probe_suite_h200_b12542b.json.gz"


def median_ms(fn, x, reps: int = 50) -> float:
    fn(x)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn(x)
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/cublaslt_bf16_h200")
    args = ap.parse_args()
    df = lt_ranker.probe_frame(PROBE)
    x = lt_entries.compute(df[df["spec"] == df["spec"].iloc[0]])
    path = f"{args.model}/{lt_ranker.MODEL_FILE}"
    numpy_trees, lgbm = NumpyTrees(read_model_text(path)), FastBooster.load(path)
    if not np.allclose(numpy_trees.predict(x), lgbm.predict(x)):
        raise SystemExit("numpy and LightGBM scores differ")
    print(f"{x.shape[0]} entries: numpy {median_ms(numpy_trees.predict, x):.2f} ms, "
          f"LightGBM {median_ms(lgbm.predict, x):.2f} ms (medians of 50)")


if __name__ == "__main__":
    main()
