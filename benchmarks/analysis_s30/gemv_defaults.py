"""The GEMV families' default settings (``default_rest``): per (weight rows, block_k, warps,
stages), the mean efficiency against each problem's best config of the family, over the bf16
training problems, configs whose vector rows cover the problem's (CPU; session 30).

    python benchmarks/analysis_s30/gemv_defaults.py [--family gemm.gemv_t] [--min-weight 4e6]
"""

import argparse
import glob

import numpy as np
import pandas as pd

from tilepick.data.io import read_frame

COLS = ["problem_key", "m", "n", "k", "config_id", "block_m", "block_n", "block_k",
        "num_warps", "num_stages", "time_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", default="gemm.gemv")
    ap.add_argument("--min-weight", type=float, default=0.0,
                    help="only problems whose streamed operand has this many elements")
    ap.add_argument("--coverage", type=float, default=0.3,
                    help="settings measured on at least this fraction of the problems")
    args = ap.parse_args()
    frames = [read_frame(f) for f in glob.glob("data/gemm/bf16/h200/train_*/*.parquet")]
    d = pd.concat([f.loc[f.valid & (f.family == args.family), COLS] for f in frames])
    x = d.groupby(COLS[:-1]).time_ms.median().reset_index()
    x["eff"] = x.groupby("problem_key").time_ms.transform("min") / x.time_ms
    swapped = args.family.startswith("gemm.gemv_t")
    count, vec, x["weight_rows"] = ((x.n, x.block_n, x.block_m) if swapped
                                    else (x.m, x.block_m, x.block_n))
    weight = (x.m if swapped else x.n) * x.k
    y = x[(vec == 2 ** np.ceil(np.log2(count))) & (weight >= args.min_weight)]
    n = y.problem_key.nunique()
    g = y.groupby(["weight_rows", "block_k", "num_warps", "num_stages"]).eff.agg(["mean", "size"])
    print(f"{args.family}: {n} problems")
    print(g[g["size"] >= args.coverage * n].sort_values("mean", ascending=False).head(6)
          .round(3).to_string())


if __name__ == "__main__":
    main()
