"""Out-of-fold effect of ``--minority-layout-weight`` on the pooled bf16 recipe, per layout.

bf16 had 330 rc training problems against 2,809 rr (+ 400 fp16 rr pooled): with every row
counted once the model ranked rc problems worse (out of fold and on the rc validation set).
With 1,785 rc problems (session 7) the weights tie (results/layout_weight_s7.jsonl). The
recipe's other weights (``TrainOptions`` defaults, e.g. ``stratum_balance``) apply as shipped.
This re-runs the LambdaRank recipe's cross-validation for each weight and fold seed and prints
the out-of-fold mean / P10 / min efficiency and top-4-benchmarked mean of the rr and the rc
problems (never the validation sets).

    PYTHONPATH=src python benchmarks/layout_weight.py [--weights 1,3,6,10] [--seeds 0,1]
"""

import argparse
import json

import numpy as np

from tilepick.model import cv
from tilepick.model.dataset import load
from tilepick.model.objectives import OBJECTIVES
from tilepick.model.train import TrainOptions, evaluate_objective, scale_out_of_fold

DATA = ["data/gemm/bf16/h200/train_rr", "data/gemm/bf16/h200/train_rc",
        "data/gemm/fp16/h200/train_rr"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", default="1,3,6,10")
    ap.add_argument("--seeds", default="0,1")
    args = ap.parse_args()
    ds = load(DATA, "bf16", "h200", ("fp16",))
    for seed in map(int, args.seeds.split(",")):
        folds = cv.make_folds(ds, 5, seed)
        scale = scale_out_of_fold(ds, folds)
        for w in map(float, args.weights.split(",")):
            opts = TrainOptions(objective="lambdarank", pool=("fp16",), seed=seed,
                                minority_layout_weight=w)
            res = evaluate_objective(ds, OBJECTIVES["lambdarank"], folds, opts, scale,
                                     keep_models=False)
            t, sc = res.table, res.scored
            layout = sc.frame["layout"].to_numpy()[sc.starts][t["problem"].to_numpy()]
            out = {"weight": w, "seed": seed, "all_mean": round(res.summary["mean"] * 100, 2)}
            for name in ("rr", "rc"):
                e = t["efficiency"].to_numpy()[layout == name]
                e4 = t["top4_efficiency"].to_numpy()[layout == name]
                out[name] = {"problems": int(e.size), "mean": round(e.mean() * 100, 2),
                             "p10": round(np.percentile(e, 10) * 100, 2),
                             "min": round(e.min() * 100, 1), "top4": round(e4.mean() * 100, 2)}
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
