"""What the flattened persistent family (``gemm.tma_flat``, commit 4fc2c4f, reverted) won in
its training sweeps: per problem, the best of each family's sampled configs, the same tiles
in both persistent kernels ("twins"), and the oracle with and without the family.

    python benchmarks/flat_family_sweep.py [--dir benchmarks/results/flat_family_4fc2c4f]
"""

import argparse

import numpy as np
import pandas as pd


def summarise(d: pd.DataFrame) -> dict:
    d = d[d["valid"]]
    best = d.pivot_table(index="problem_key", columns="family", values="tflops", aggfunc="max")
    others = best[["gemm.tma", "gemm.tma_persistent"]].max(axis=1)
    vs_tma = best["gemm.tma_flat"] / others
    winners = d.loc[d.groupby("problem_key")["tflops"].idxmax(), "family"].value_counts()
    d = d.assign(tiles=d["config_id"].str.split(".", n=2).str[2])
    twins = d[d["family"].isin(["gemm.tma_flat", "gemm.tma_persistent"])].pivot_table(
        index=["problem_key", "tiles"], columns="family", values="tflops").dropna()
    twin = twins["gemm.tma_flat"] / twins["gemm.tma_persistent"]
    oracle = (d.groupby("problem_key")["tflops"].max()
              / d[d["family"] != "gemm.tma_flat"].groupby("problem_key")["tflops"].max())
    q = lambda s: {"median": round(float(s.median()), 4),          # noqa: E731
                   "p10": round(float(s.quantile(0.1)), 4), "p90": round(float(s.quantile(0.9)), 4)}
    return {"problems": int(len(best)), "winners": winners.to_dict(),
            "twins": {"pairs": int(len(twin)), **q(twin)},
            "best_flat_over_best_tma_or_persistent": q(vs_tma),
            "oracle_gain_geomean": round(float(np.exp(np.log(oracle).mean())), 5),
            "problems_gaining_over_1pct": int((oracle > 1.01).sum())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="benchmarks/results/flat_family_4fc2c4f")
    args = ap.parse_args()
    for layout in ("rr", "rc"):
        print(layout, summarise(pd.read_parquet(f"{args.dir}/flat{layout}.parquet")))


if __name__ == "__main__":
    main()
