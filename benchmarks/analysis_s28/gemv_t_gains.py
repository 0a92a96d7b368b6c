"""How much faster is a new family's best than each problem's best earlier config? (CPU)

Per problem of a sweep file: the new family's best sweep median against the best median of the
problem's rows in the earlier folders (and cuBLAS of the same sweep). Sweep medians, not a
shared re-timing pass: a first look at where a family wins, before the passes and a model.

    python benchmarks/analysis_s28/gemv_t_gains.py data/gemm/bf16/h200/train_gemv_t/chunk-001.parquet \
        train_rc train_narrow_rc train_splitk_fused train_gemv train_fused_negative [--family gemm.gemv_t]
"""

import argparse

import numpy as np
import pandas as pd

from tilepick.data.io import read_frame


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sweep")
    ap.add_argument("folders", nargs="+", help="earlier bf16 folders under data/gemm/bf16/h200")
    ap.add_argument("--family", default="gemm.gemv_t")
    ap.add_argument("--root", default="data/gemm/bf16/h200")
    ap.add_argument("--show", type=int, default=40)
    args = ap.parse_args()
    new = read_frame(args.sweep)
    new = new[new.valid]
    old = pd.concat([read_frame(f"{args.root}/{f}") for f in args.folders], ignore_index=True)
    old = old[old.valid & old.problem_key.isin(set(new.problem_key))]
    old_best = old.groupby(["problem_key", "config_id"]).time_ms.median().groupby("problem_key")
    rows = []
    for key, x in new.groupby("problem_key"):
        fam = x[x.family == args.family].groupby("config_id").time_ms.median()
        m, n, k = (int(v[1:]) for v in key.split(".")[3:6])
        ob = old_best.get_group(key)
        rows.append(dict(m=m, n=n, k=k, us=fam.min() * 1e3, config=fam.idxmin(),
                         old_config=ob.idxmin()[1], speedup=ob.min() / fam.min(),
                         vs_cublas=x[x.family == "gemm.cublas"].time_ms.median() / fam.min(),
                         tb_per_s=m * k * 2 / fam.min() / 1e9))
    t = pd.DataFrame(rows).sort_values("speedup")
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(t.tail(args.show).round(3).to_string(index=False))
    print(f"{len(t)} problems: median new/old {t.speedup.median():.3f}, faster by > 5% on "
          f"{(t.speedup > 1.05).mean():.0%}, geomean {np.exp(np.log(t.speedup).mean()):.3f}")


if __name__ == "__main__":
    main()
