"""Out of fold by exact shape, or by weight shape? (CPU, ~4 min a model)

The folds of ``tilepick train`` (GroupKFold) group problems by their shape (M, N, K): a shape
is never trained on and tested on. But an LLM weight (N, K) comes with many token counts M,
so the other Ms of a tested problem's weight are in training, while the validation sets hold
whole weight shapes out. This re-trains the shipped recipe of a model on its manifest's data
under both groupings, same fold count and seed, and scores the ranker and the vendor gate
(gated where the recipe ships one) out of fold: how optimistic the by-shape figures are for
shapes of an unseen weight, and whether a change that wins by shape also wins by weight.

    python benchmarks/grouping_oof.py [--model models/gemm_bf16_h200] [--out FILE.json]
"""

import argparse
import json

import numpy as np
from tilepick.model import cv, metrics
from tilepick.model.evaluate import recipe_data, recipe_out_of_fold
from tilepick.model.train import gate_out_of_fold
from tilepick.data.io import write_json


def scores(ds, folds, opts, with_gate: bool) -> dict:
    res = recipe_out_of_fold(ds, opts, folds)
    sc = res.scored

    def score(keys):
        t = metrics.per_problem(sc.problem_index, sc.tflops, keys)["efficiency"].to_numpy()
        return {"problems": int(len(t)), "mean": float(t.mean()),
                "p10": float(np.percentile(t, 10)), "min": float(t.min())}
    out = {"ranker": score(res.keys)}
    if with_gate:
        out["gated"] = score(gate_out_of_fold(res, folds, ds.served, opts.seed).keys)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    opts, ds, with_gate = recipe_data(args.model)
    out = {"model": args.model, "folds": opts.folds, "seed": opts.seed}
    for name, folds in (("by shape (M, N, K)", cv.make_folds(ds, opts.folds, opts.seed)),
                        ("by weight (N, K)", cv.make_folds(ds, opts.folds, opts.seed, "weight"))):
        out[name] = scores(ds, folds, opts, with_gate)
        print(name, json.dumps(out[name]), flush=True)
    if args.out:
        write_json(args.out, out)


if __name__ == "__main__":
    main()
