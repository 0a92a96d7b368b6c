"""A bf16 model's picks on a validation set of a layout it may not have been trained on
(``Predictor(strict=False)``), against cuBLAS (CPU; session 30, BENCHMARKS "Layouts cc and cr").

Scored as ``tilepick validate`` scores (inside each problem's latest pass): the model's first
measured candidate, its top 4 benchmarked, cuBLAS alone, the model's first Triton candidate;
and the model over cuBLAS per problem.

    python benchmarks/analysis_s30/extrapolation.py MODEL data/gemm/bf16/h200/validation_cc
"""

import sys

import numpy as np

from tilepick.model.dataset import load
from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem


def main():
    model, data = sys.argv[1], sys.argv[2]
    pred = Predictor(model, strict=False)
    ds = load([data], pred.dtype, pred.arch, within_pass=True)
    rows = []
    for i, key in enumerate(ds.problem_keys):
        lo, hi = ds.starts[i], ds.starts[i] + ds.sizes[i]
        tf = dict(zip(ds.config_ids[lo:hi], ds.tflops[lo:hi]))
        best = max(tf.values())
        ranked = [c for c, _, _ in pred.rank(GemmProblem.from_key(key)) if c in tf]
        tri = next(c for c in ranked if c != "gemm.cublas")
        rows.append((tf[ranked[0]] / best, max(tf[c] for c in ranked[:4]) / best,
                     tf["gemm.cublas"] / best, tf[tri] / best, key, ranked[0]))
    e = np.array([r[:4] for r in rows])
    for j, name in enumerate(["model top-1", "model top-4", "cuBLAS", "model's best Triton"]):
        print(f"{name:22s} mean {e[:, j].mean():.3f} P10 {np.quantile(e[:, j], .1):.3f} "
              f"min {e[:, j].min():.3f}")
    print("model beats cuBLAS by > 2% on", int((e[:, 0] > e[:, 2] * 1.02).sum()), "loses on",
          int((e[:, 0] < e[:, 2] / 1.02).sum()), "of", len(e))
    for r in sorted(rows)[:6]:
        print(round(r[0], 3), round(r[2], 3), r[4], r[5])
    for j, name in ((0, "model"), (1, "model top-4")):
        r = e[:, j] / e[:, 2]
        print(f"{name} / cuBLAS: geomean {np.exp(np.log(r).mean()):.3f}, min {r.min():.3f}")


if __name__ == "__main__":
    main()
