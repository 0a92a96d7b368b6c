"""gemm.gemv_n_splitk against cuBLAS on the LLM suite's `x @ W` decode steps (M = 1, rr), from a
sweep of the family's whole space and cuBLAS with the best configs re-timed beside cuBLAS in
interleaved rounds (CPU, seconds).

Why: the family is measured before any model ranks it; the re-timed medians say where it
beats cuBLAS and by how much, and what a perfect pick between the two would give these rows.

    python benchmarks/analysis_s59/gemv_n_suite.py [SWEEP.parquet]

Default: session 59's H100 sweep (benchmarks/results/gemv_n_s59_h100/).
"""

import sys

import numpy as np
import pandas as pd

DEFAULT = "benchmarks/results/gemv_n_s59_h100/gemvn_suite_h100.parquet"


def main(path: str) -> None:
    df = pd.read_parquet(path)
    print(f"{df.gpu_name.iloc[0]}, {df.date.iloc[0]}: re-timed medians")
    ratios = []
    for key, g in df[df.retimed].groupby("problem_key", sort=False):
        cublas = g[g.family == "gemm.cublas"].time_ms.iloc[0]
        best = g[g.family != "gemm.cublas"].sort_values("time_ms", kind="stable").iloc[0]
        ratio = cublas / best.time_ms
        ratios.append(ratio)
        read = 2 * best.n * best.k / 1e9   # the weight's bytes (bf16), in GB
        print(f"  {key:34s} cuBLAS {cublas * 1e3:7.1f} us ({read / cublas:.2f} TB/s), best "
              f"{best.time_ms * 1e3:7.1f} us ({read / best.time_ms:.2f} TB/s): {ratio:.3f}x  "
              f"{best.config_id}")
    r = np.array(ratios)
    print(f"geomean {np.exp(np.log(r).mean()):.3f}x cuBLAS; faster on {(r > 1).sum()} of {len(r)};"
          f" the better of the two on every row: {np.exp(np.log(np.maximum(r, 1)).mean()):.3f}x")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else DEFAULT)
