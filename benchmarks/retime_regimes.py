"""How much do a problem's timings depend on the pass that took them? And does the shipped
model's validation score survive a re-timing in one regime?

Reads the exhaustive validation sets and a re-timing pass over them (`tilepick data retime`,
rows in benchmarks/results/retime_3958be2/, removed from the tree in session 31: `git checkout
04f5846 -- benchmarks/results/retime_3958be2` first) and reports:

1. screening vs re-timing inside the original sweeps: per problem, the best config never
   re-timed over the best re-timed one, by class of best time (> 1 means a screened value
   beat every re-timed one: the oracle then mixes two regimes);
2. the pass against the original re-timing: new / old TFLOP/s of the configs re-timed both
   times, by class of best time;
3. in-pass scores: the shipped model's first-ranked measured config (always re-timed by the
   pass: its first four are among the contenders) against the best of the pass's contenders,
   every value from the same rounds; cuBLAS alone the same way.

    python benchmarks/retime_regimes.py [--out FILE]
"""

import argparse
import glob
import json

import numpy as np
import pandas as pd

from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem
from tilepick.data.io import read_frame, write_json

PASS = "benchmarks/results/retime_3958be2"
SETS = {"bf16 rr": ("data/gemm/bf16/h200/validation", f"{PASS}/bf16_rr.parquet"),
        "bf16 rc": ("data/gemm/bf16/h200/validation_rc", f"{PASS}/bf16_rc.parquet")}
CLASSES = [0, 0.02, 0.1, 1.0, 1000.0]
LABELS = ["< 20 us", "20-100 us", "0.1-1 ms", ">= 1 ms"]


def _valid(path):
    # the sweeps' chunks only: the re-timing passes since added to the folders are what
    # this compares against them
    df = pd.concat([read_frame(f) for f in sorted(glob.glob(f"{path}/chunk-*.parquet"))])
    df = df[df["valid"].fillna(False) & (df["time_ms"] > 0)]
    return df.drop_duplicates(["problem_key", "config_id", "sweep_id"])


def _by_class(values: pd.Series, best_ms: pd.Series) -> dict:
    cls = pd.cut(best_ms.reindex(values.index), CLASSES, labels=LABELS)
    out = {}
    for label, v in values.groupby(cls, observed=True):
        out[str(label)] = {"n": int(v.size), "median": float(v.median()),
                           "p10": float(v.quantile(0.1)), "p90": float(v.quantile(0.9))}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    pred = Predictor("models/gemm_bf16_h200")
    report = {}
    for name, (data, rt) in SETS.items():
        old, new = _valid(data), read_frame(rt)
        best_ms = old.groupby("problem_key")["time_ms"].min()
        # 1. inside the original sweeps
        retimed = old["retimed"].fillna(False).astype(bool)
        screened_best = old[~retimed].groupby("problem_key")["tflops"].max()
        retimed_best = old[retimed].groupby("problem_key")["tflops"].max()
        ratio = (screened_best / retimed_best).dropna()
        # 2. the pass against the original re-timing
        both = new.merge(old[retimed][["problem_key", "config_id", "tflops"]],
                         on=["problem_key", "config_id"], suffixes=("", "_old"))
        shift = (both["tflops"] / both["tflops_old"]).groupby(both["problem_key"]).median()
        # 3. in-pass scores
        top1, top4, cublas = [], [], []
        for key, g in new.groupby("problem_key"):
            val = g.set_index("config_id")["tflops"]
            order = [c for c, _, _ in pred.rank(GemmProblem.from_key(key)) if c in val.index]
            top1.append(val[order[0]] / val.max())
            top4.append(val[order[:4]].max() / val.max())
            if "gemm.cublas" in val.index:
                cublas.append(val["gemm.cublas"] / val.max())
        top1 = np.array(top1)
        report[name] = {
            "screened_best_over_retimed_best": _by_class(ratio, best_ms),
            "pass_over_original_retiming": _by_class(shift, best_ms),
            "in_pass": {"problems": len(top1), "model_top1_mean": float(top1.mean()),
                        "model_top1_p10": float(np.percentile(top1, 10)),
                        "model_top1_min": float(top1.min()),
                        "model_top4_mean": float(np.mean(top4)),
                        "cublas_mean": float(np.mean(cublas))}}
        print(name, json.dumps(report[name], indent=1))
    if args.out:
        write_json(args.out, report)


if __name__ == "__main__":
    main()
