"""How far apart the best pointer tile, the best one-launch split-K and cuBLAS lie on the rr
decode steps of the training data (CPU, ~30 s).

Why: session 54's retrains moved the suite's rr 1 x 8192 x 8192 from cuBLAS to a fused split-K
that read 0.94x there; if the training labels call such shapes near-ties, a ranker's choice
among them is a coin the suite can lose.

    python benchmarks/analysis_s54/rr_decode_near_ties.py [--max-m 2] [--min-nk 2048]
"""

import argparse
from pathlib import Path

import pandas as pd

from tilepick.data.io import read_table

FAMILIES = {"cublas": "gemm.cublas", "splitk_fused": "gemm.splitk_fused", "ptr": "gemm.ptr"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data/gemm/bf16/h200")
    ap.add_argument("--max-m", type=int, default=2)
    ap.add_argument("--min-nk", type=int, default=2048)
    args = ap.parse_args()
    parts = []
    for f in sorted(Path(args.data).glob("train*/*.parquet")):
        t = read_table(f).to_pandas()
        t = t[(t["layout"] == "rr") & (t["m"] <= args.max_m) & (t["n"] >= args.min_nk)
              & (t["k"] >= args.min_nk) & t["valid"]]
        parts.append(t[["problem_key", "family", "tflops"]])
    df = pd.concat(parts)
    best = df.groupby("problem_key")["tflops"].max()
    rel = pd.DataFrame({name: df[df["family"] == fam].groupby("problem_key")["tflops"].max() / best
                        for name, fam in FAMILIES.items()})
    print(f"{len(best)} rr problems with M <= {args.max_m}, N and K >= {args.min_nk}: "
          "each family's best over the problem's best")
    print(rel.describe(percentiles=[0.1, 0.25, 0.5, 0.75]).round(3).to_string())
    both = rel.dropna()
    print(f"cuBLAS and the fused split-K within 3% of each other: "
          f"{int(((both['cublas'] - both['splitk_fused']).abs() <= 0.03).sum())} of {len(both)}")


if __name__ == "__main__":
    main()
