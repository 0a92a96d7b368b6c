"""How far a re-timing pass's timing regime is from the sweep's, per problem (session 27).

For every problem of the given dataset folders with rows of a re-timing pass (sweep id
``rt-...``): the median, over the configs both measured, of the pass's TFLOP/s over the
sweep's, split by the kind of sweep row (its own inline re-timing, or a single screening
median). Printed as p10 / median / p90 over problems. On the bf16 training problems over
1 TFLOP the pass read the sweep's re-timed configs at a median 0.94-0.95 and its screened ones
at 0.90 (the GPU ran hotter in back-to-back rounds); on the smaller problems of the other
passes, 1.00. Also printed: on how many problems cuBLAS is the fastest inside the latest pass.

    python benchmarks/analysis_s27/pass_regime_shift.py DATA [DATA ...]
    # session 27: data/gemm/bf16/h200/train_rr data/gemm/bf16/h200/train_big_retime/retime-001.parquet
"""
import sys

import pandas as pd

from tilepick.data.io import read_frame
from tilepick.data.schema import RETIME_PREFIX
from tilepick.model.dataset import clean

frame = pd.concat([read_frame(p) for p in sys.argv[1:]], ignore_index=True)
frame = frame[frame["valid"].fillna(False).astype(bool) & (frame["time_ms"] > 0)]
in_pass = frame["sweep_id"].fillna("").str.startswith(RETIME_PREFIX)
if not in_pass.any():
    raise SystemExit(f"no re-timing pass rows in {sys.argv[1:]}")
both = frame[in_pass].merge(frame[~in_pass], on=["problem_key", "config_id"],
                            suffixes=("_pass", "_sweep"))
both["ratio"] = both["time_ms_sweep"] / both["time_ms_pass"]   # TFLOP/s pass / sweep


def line(per: pd.Series) -> str:
    if per.empty:
        return "none shared"
    return (f"{len(per)} problems: p10 {per.quantile(0.1):.3f}, median {per.median():.3f}, "
            f"p90 {per.quantile(0.9):.3f}")


kind = both["retimed_sweep"].fillna(False).astype(bool)
print("every shared config:   ", line(both.groupby("problem_key")["ratio"].median()))
print("sweep's re-timed ones: ", line(both[kind].groupby("problem_key")["ratio"].median()))
print("sweep's screened ones: ", line(both[~kind].groupby("problem_key")["ratio"].median()))

latest = clean(frame[in_pass], within_pass=True)
best = latest.loc[latest.groupby("problem_key")["time_ms"].idxmin(), "config_id"]
print(f"cuBLAS fastest inside the latest pass: {(best == 'gemm.cublas').sum()} of {len(best)} "
      "problems")
