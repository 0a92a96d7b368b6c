"""Session 46: where a model's validation loss sits, by problem size and by output width
(loss = 1 - efficiency, summed over problems, for the top-1 pick and the best of the top 4),
scored as `tilepick validate` scores (inside each problem's latest pass). CPU, ~10 s.

    python benchmarks/analysis_s46/loss_shares.py MODEL_DIR [DATA_DIR]

Session 46's table (BENCHMARKS) is of session 41's model on that day's data before the session's
passes: `git show cfe28d4:models/gemm_bf16_h200/<file>` for each model file into a folder, and
`git show cfe28d4` has the validation folder as it was (no retime-032).
"""

import sys

import pandas as pd

from tilepick.model import metrics
from tilepick.model.dataset import load
from tilepick.model.predictor import Predictor
from tilepick.model.validate import model_scores
from tilepick.problem import GemmProblem

GFLOP_EDGES = [0, 0.01, 1, 10, float("inf")]


def per_problem(model: str, data: str) -> pd.DataFrame:
    pred = Predictor(model)
    ds = load([data], pred.dtype, pred.arch, within_pass=True)
    t = metrics.per_problem(ds.problem_index, ds.tflops, model_scores(pred, ds))
    problems = [GemmProblem.from_key(ds.problem_keys[i]) for i in t["problem"]]
    t["gflop"] = [p.flops / 1e9 for p in problems]
    t["narrow"] = [p.n <= 16 for p in problems]
    t["loss"] = 1 - t["efficiency"]
    t["loss4"] = 1 - t["top4_efficiency"]
    return t


def main(model, data="data/gemm/bf16/h200/validation"):
    t = per_problem(model, data)
    total, total4 = t["loss"].sum(), t["loss4"].sum()
    print(f"{len(t)} problems, mean {100 * t['efficiency'].mean():.2f}, "
          f"top-4 benchmarked {100 * t['top4_efficiency'].mean():.2f}")
    print("| problems | count | share of top-1 loss | share of top-4-benchmarked loss |")
    print("|---|---|---|---|")
    groups = pd.cut(t["gflop"], GFLOP_EDGES, right=True)
    for name, g in t.groupby(groups, observed=True):
        print(f"| {name} GFLOP | {len(g)} | {100 * g['loss'].sum() / total:.0f}% | "
              f"{100 * g['loss4'].sum() / total4:.0f}% |")
    g = t[t["narrow"]]
    print(f"| N <= 16 (any size) | {len(g)} | {100 * g['loss'].sum() / total:.0f}% | "
          f"{100 * g['loss4'].sum() / total4:.0f}% |")


if __name__ == "__main__":
    main(*sys.argv[1:])
