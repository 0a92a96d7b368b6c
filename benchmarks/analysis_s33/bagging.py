"""Bagging by problem: each of a recipe's seed-ensemble members trained on a random fraction of
the problems instead of all of them (session 33: inside the perturbation band, not kept). CPU,
~4 min a run: re-trains the shipped recipe on its manifest's files with the members bagged,
then validates on the four bf16 sets.

    python benchmarks/analysis_s33/bagging.py FRACTION FOLD_SEED OUT_DIR [--model DIR]
"""

import argparse
import dataclasses
from pathlib import Path

import numpy as np

from tilepick.model import cv
from tilepick.model import train as train_mod
from tilepick.model.artifacts import read_json
from tilepick.model.booster import average
from tilepick.model.evaluate import recipe_options
from tilepick.model.validate import validate

SETS = ("validation", "validation_rc", "validation_cc", "validation_cr")


def bagged(fraction: float):
    """``train._fit`` with each member on a random ``fraction`` of the problems (drawn from
    the member's LightGBM seed, so the bags are the same at every fold seed)."""
    def fit(ds, obj, opts, rounds=None, init_model=None):
        seed = int(obj.params(opts.params)["seed"])
        members = []
        for i in range(opts.seed_ensemble):
            mask = np.random.default_rng(seed * 1000 + i).random(ds.n_problems) < fraction
            members.append(cv.fit(ds.subset_problems(mask), obj, dict(opts.params, seed=seed + i),
                                  opts.rounds if rounds is None else rounds, opts.retimed_weight,
                                  init_model=init_model,
                                  minority_layout_weight=opts.minority_layout_weight,
                                  stratum_balance=opts.stratum_balance,
                                  stratum_cap=opts.stratum_cap))
        return average(members)
    return fit


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fraction", type=float)
    ap.add_argument("fold_seed", type=int)
    ap.add_argument("out")
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    args = ap.parse_args()
    manifest = read_json(Path(args.model) / "manifest.json")
    opts = dataclasses.replace(recipe_options(args.model), seed=args.fold_seed)
    train_mod._fit = bagged(args.fraction)
    train_mod.train([d["path"] for d in manifest["data"]], manifest["dtype"], manifest["arch"],
                    args.out, opts)
    for s in SETS:
        rep = validate(args.out, [f"data/gemm/bf16/h200/{s}"], Path(args.out) / s)
        print(s, round(100 * rep["methods"]["model top-1"]["mean"], 2), flush=True)


if __name__ == "__main__":
    main()
