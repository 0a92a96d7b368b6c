"""Should the vendor gate learn from the ranker's picks on unseen weights? (CPU, ~6 min)

The shipped gate is fitted on the ranker's out-of-fold picks from folds grouped by shape
(M, N, K), where the other token counts of a problem's weight (N, K) were in training; the
dispatcher meets new weights (and the validation sets hold them out). This fits the gate,
like ``train`` does (every problem, cost-sensitive, shipped size), once on by-shape picks and
once on by-weight picks (``cv.make_folds(by="weight")``), and applies each to the shipped
ranker's order on the validation sets (the Predictor with its own gate switched off).

    python benchmarks/gate_labels_weight.py [--model models/gemm_bf16_h200] [--out FILE.json]
"""

import argparse
from pathlib import Path

import numpy as np

from tilepick.model import cv, gate, metrics
from tilepick.model.dataset import load
from tilepick.model.evaluate import recipe_data, recipe_out_of_fold
from tilepick.model.predictor import Predictor
from tilepick.model.validate import model_scores
from tilepick.data.io import write_json

VALIDATION = ("data/gemm/bf16/h200/validation", "data/gemm/bf16/h200/validation_rc")


def fitted_gate(ds, opts, by: str):
    folds = cv.make_folds(ds, opts.folds, opts.seed, by)
    res = recipe_out_of_fold(ds, opts, folds)
    sc = res.scored
    y, has = gate.problem_outcomes(sc.problem_index, sc.config_ids, sc.tflops, res.keys)
    x = gate.problem_matrix(sc.x[sc.starts])
    return gate.fit(x[has], y[has], opts.seed)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    opts, ds, _ = recipe_data(args.model)
    gates = {by: fitted_gate(ds, opts, by) for by in ("shape", "weight")}
    ranker = Predictor(Path(args.model))
    ranker.gate_column = None          # the shipped ranker's own order, cuBLAS where it ranks it
    out = {"model": args.model}
    for data in VALIDATION:
        vs = load([data], ranker.dtype, ranker.arch)
        keys = model_scores(ranker, vs)
        x = gate.problem_matrix(vs.x[vs.starts])
        out[data] = {}
        for by, booster in gates.items():
            raw = booster.predict(x, raw_score=True)
            t = metrics.per_problem(vs.problem_index, vs.tflops,
                                    gate.apply(vs.problem_index, vs.config_ids, keys, raw))
            e = t["efficiency"].to_numpy()
            out[data][f"gate from by-{by} picks"] = {
                "mean": float(e.mean()), "p10": float(np.percentile(e, 10)),
                "min": float(e.min()), "top4": float(t["top4_efficiency"].mean()),
                "cublas_calls": int((raw > 0).sum())}
            print(data, by, {k: round(v, 4) for k, v in out[data][f"gate from by-{by} picks"]
                             .items()}, flush=True)
    if args.out:
        write_json(args.out, out)


if __name__ == "__main__":
    main()
