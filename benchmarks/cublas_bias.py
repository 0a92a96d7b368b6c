"""Out of fold: would shifting cuBLAS's ranking score by a constant pick better?

Most of the worst held-out picks are cuBLAS where a pointer or split-K config wins, so this
asks whether a fixed bias against (or toward) cuBLAS helps, on the shipped recipe's out-of-fold
ranking keys (`train.evaluate_objective`, bf16 pooled with fp16), never on validation.

    PYTHONPATH=src python benchmarks/cublas_bias.py [--deltas -1,-0.5,-0.25,-0.1,0,0.1,0.25,0.5]
"""

import argparse

import numpy as np

from tilepick.config import VENDOR_FAMILIES
from tilepick.model import cv, metrics
from tilepick.model.train import (OBJECTIVES, TrainOptions, evaluate_objective, load,
                                  scale_out_of_fold)

DATA = ["data/gemm/bf16/h200/train_rr", "data/gemm/bf16/h200/train_rc",
        "data/gemm/fp16/h200/train_rr"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--deltas", default="-1,-0.5,-0.25,-0.1,0,0.1,0.25,0.5")
    args = ap.parse_args()
    opts = TrainOptions(objective="lambdarank", pool=("fp16",))
    ds = load(DATA, "bf16", "h200", opts.pool)
    folds = cv.make_folds(ds, opts.folds, opts.seed)
    res = evaluate_objective(ds, OBJECTIVES["lambdarank"], folds, opts,
                             scale_out_of_fold(ds, folds), keep_models=False)
    sc = res.scored
    vendor = sc.frame["config_id"].isin(VENDOR_FAMILIES).to_numpy()
    for delta in map(float, args.deltas.split(",")):
        t = metrics.per_problem(sc.problem_index, sc.tflops, res.keys + np.where(vendor, delta, 0.0))
        s = metrics.summarize(t["efficiency"].to_numpy(), t["top1"].to_numpy(),
                              t["best_rank"].to_numpy())
        print(f"delta {delta:+.2f}: mean {s['mean']:.4f} p10 {s['p10']:.4f} min {s['min']:.4f}",
              flush=True)


if __name__ == "__main__":
    main()
