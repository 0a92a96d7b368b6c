"""How close the best Triton kernel comes to cuBLAS on mid-M problems against LLM-sized weights
(CPU, seconds): per measured problem, cuBLAS's time over the best other family's.

Why: the suite rows at M = 77-128 on the 4096- and 8192-wide weights run cuBLAS in every mode
(exhaustive included), and the README says the kernels, not the ranking, bound them there.

    python benchmarks/analysis_s58/midm_vs_cublas.py [--m 64:160] [--nk 3000:9000]
"""

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

COLS = ["m", "n", "k", "layout", "family", "time_ms", "valid", "problem_key"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data/gemm/bf16/h200")
    ap.add_argument("--m", default="64:160")
    ap.add_argument("--nk", default="3000:9000")
    ap.add_argument("--layouts", default="rr,rc")
    args = ap.parse_args()
    m_lo, m_hi = map(int, args.m.split(":"))
    nk_lo, nk_hi = map(int, args.nk.split(":"))
    frames = []
    for f in sorted(Path(args.data).glob("*/*.parquet")):
        d = pd.read_parquet(f)
        if not set(COLS) <= set(d.columns):
            continue
        d = d[COLS]
        d = d[d.valid & d.m.between(m_lo, m_hi) & d.n.between(nk_lo, nk_hi)
              & d.k.between(nk_lo, nk_hi) & d.layout.isin(args.layouts.split(","))]
        frames.append(d)
    df = pd.concat(frames, ignore_index=True)
    best = df.groupby(["problem_key", "family"]).time_ms.min().unstack()
    vendor = best.pop("gemm.cublas")
    triton = best.drop(columns=[c for c in best if c.startswith("gemm.cublas")]).min(axis=1)
    ratio = (vendor / triton).dropna()
    q = np.quantile(ratio, [0.1, 0.5, 0.9])
    print(f"{len(ratio)} problems (M {m_lo}-{m_hi}, N and K {nk_lo}-{nk_hi}, {args.layouts}): "
          f"cuBLAS time / best Triton time: P10 {q[0]:.3f}, median {q[1]:.3f}, P90 {q[2]:.3f}, "
          f"max {ratio.max():.3f}; Triton faster by > 3% on {(ratio > 1.03).mean():.0%}")


if __name__ == "__main__":
    main()
