"""Is a seed ensemble of rankers better than one ranker, out of fold? (CPU, ~10 min.)

LightGBM's own seed (bagging and feature fraction draws) moved the shipped recipe's rr
validation mean by 0.35 point on the same data (BENCHMARKS, "Session 18"): one ranker is one
draw. ``TrainOptions.seed_ensemble`` K averages K runs (seeds s, s + 1, ...) into one booster.
Here the shipped recipe is scored out of fold, on the same folds, as single rankers of several
LightGBM seeds (their spread is the noise a recipe change must beat) and as ensembles, by
shape and by weight (a weight's every M held out together, as the validation sets do), the
ranker alone and with the recipe's vendor gate fitted out of fold on its picks.

    python benchmarks/seed_ensemble_oof.py [--model models/gemm_bf16_h200] \
        [--singles 0 1 2] [--ensembles 3 5] [--groupings shape weight] --out FILE.json
"""

import argparse
import copy
import json
import time

import numpy as np

from tilepick.data.io import write_json
from tilepick.model import cv
from tilepick.model.evaluate import recipe_data, recipe_out_of_fold
from tilepick.model.train import gate_out_of_fold


def brief(table) -> dict:
    eff = table["efficiency"].to_numpy()
    return {"mean": round(100 * float(eff.mean()), 3),
            "p10": round(100 * float(np.percentile(eff, 10)), 3),
            "min": round(100 * float(eff.min()), 3),
            "top4_mean": round(100 * float(table["top4_efficiency"].to_numpy().mean()), 3)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--singles", nargs="*", type=int, default=[0, 1, 2],
                    help="LightGBM seeds of single rankers")
    ap.add_argument("--ensembles", nargs="*", type=int, default=[3, 5],
                    help="ensemble sizes (seeds 0 .. K-1)")
    ap.add_argument("--groupings", nargs="+", default=["shape", "weight"])
    ap.add_argument("--fold-seed", type=int, default=None, help="default: the recipe's")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    base, ds, gated = recipe_data(args.model)
    fold_seed = base.seed if args.fold_seed is None else args.fold_seed
    variants = [("single", s, 1) for s in args.singles] + [("ensemble", 0, k)
                                                          for k in args.ensembles]
    out = {"model": args.model, "fold_seed": fold_seed, "gated_recipe": gated,
           "problems": int(ds.served.sum()), "rows": []}
    for grouping in args.groupings:
        folds = cv.make_folds(ds, base.folds, fold_seed, grouping)
        for kind, lgb_seed, k in variants:
            opts = copy.deepcopy(base)
            opts.seed, opts.fold_grouping, opts.seed_ensemble = fold_seed, grouping, k
            opts.params = dict(opts.params, seed=lgb_seed)
            t0 = time.perf_counter()
            res = recipe_out_of_fold(ds, opts, folds)
            g = gate_out_of_fold(res, folds, ds.served, fold_seed)
            row = {"grouping": grouping, "kind": kind, "lgb_seed": lgb_seed, "members": k,
                   "seconds": round(time.perf_counter() - t0, 1),
                   "ranker": brief(res.table), "gated": brief(g.table)}
            out["rows"].append(row)
            print(json.dumps(row), flush=True)
            write_json(args.out, out)


if __name__ == "__main__":
    main()
