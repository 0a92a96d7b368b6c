"""gemm.gemv_n_splitk against cuBLAS in a sweep of the family with its best configs re-timed
beside cuBLAS in interleaved rounds: per problem and in all (CPU, seconds).

Why: the family is measured before any model ranks it; the re-timed medians say where it
beats cuBLAS and by how much, and what a perfect pick between the two would give.

    python benchmarks/analysis_s59/gemv_n_suite.py [SWEEP.parquet ...] [--quiet]

Default: session 59's H100 sweep of the LLM suite's eight x @ W decode weights
(benchmarks/results/gemv_n_s59_h100/). --quiet prints the summary only (training sweeps).
"""

import argparse

import numpy as np
import pandas as pd

from tilepick.problem import GemmProblem

DEFAULT = "benchmarks/results/gemv_n_s59_h100/gemvn_suite_h100.parquet"


def best_against_cublas(df: pd.DataFrame):
    """Per problem of a sweep with re-timed rows: (problem key, cuBLAS's re-timed median in ms,
    the family's fastest re-timed row)."""
    for key, g in df[df.retimed].groupby("problem_key", sort=False):
        cublas = g[g.family == "gemm.cublas"].time_ms
        family = g[g.family != "gemm.cublas"].sort_values("time_ms", kind="stable")
        if not cublas.empty and not family.empty:
            yield key, float(cublas.iloc[0]), family.iloc[0]


def summarise(path: str, quiet: bool) -> None:
    df = pd.read_parquet(path)
    print(f"{path}: {df.gpu_name.iloc[0]}, {df.date.iloc[0]}, re-timed medians")
    ratios = []
    for key, cublas, best in best_against_cublas(df):
        ratios.append(cublas / best.time_ms)
        if not quiet:
            read = best.n * best.k * GemmProblem.from_key(key).dtype.itemsize / 1e9   # weight, GB
            print(f"  {key:34s} cuBLAS {cublas * 1e3:7.1f} us ({read / cublas:.2f} TB/s), "
                  f"best {best.time_ms * 1e3:7.1f} us ({read / best.time_ms:.2f} TB/s): "
                  f"{ratios[-1]:.3f}x  {best.config_id}")
    r = np.array(ratios)
    print(f"{len(r)} problems: geomean {np.exp(np.log(r).mean()):.3f}x cuBLAS (median "
          f"{np.median(r):.3f}); faster on {(r > 1).sum()}, by more than 3% on "
          f"{(r > 1.03).sum()}; the better of the two on every problem: "
          f"{np.exp(np.log(np.maximum(r, 1)).mean()):.3f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", default=[DEFAULT])
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    for f in args.files:
        summarise(f, args.quiet)


if __name__ == "__main__":
    main()
