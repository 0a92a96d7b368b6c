"""Do configs newly measured on problems already in the data make the recipe better, on the
same problems and folds? (CPU, ~3 min.)

``extra_data_oof.py`` adds *problems*; this adds *rows*: new configs (the GEMV row blocks of
session 17) swept on problems the data already holds. The shipped recipe (its parameters,
the vendor gate) is trained out of fold twice on the same folds, without and with the
``--extra`` files, and both rankings are scored against the augmented data's candidates and
times (a pick the base data had is looked up there; the new configs are candidates the base
model never ranks). Reported apart: the problems the extra rows touch, where the oracle moved,
and the untouched rest, where any change is the retraining's side effect.

    python benchmarks/extra_rows_oof.py --extra data/gemm/bf16/h200/train_gemv/chunk-002.parquet \
        data/gemm/bf16/h200/train_gemv/retime-002.parquet [--model models/gemm_bf16_h200] [--fold-grouping weight]
"""

import argparse
import json

import numpy as np

from tilepick.data.io import write_json
from tilepick.model import cv, metrics
from tilepick.model.dataset import load
from tilepick.model.evaluate import recipe_options, recipe_out_of_fold
from tilepick.model.train import gate_out_of_fold

from extra_data_oof import same_folds   # a sibling script (a script's folder is on sys.path)


def gated_keys(ds, folds, opts, gated: bool) -> tuple:
    res = recipe_out_of_fold(ds, opts, folds)
    keys = gate_out_of_fold(res, folds, ds.served, opts.seed).keys if gated else res.keys
    return res.scored, keys


def on_rows_of(src, src_keys, dst) -> np.ndarray:
    """``src``'s ranking keys carried onto ``dst``'s rows by (problem, config); -inf where
    ``src`` had no such row (a config it never ranked)."""
    at = {(src.problem_keys[p], c): k for p, c, k in zip(src.problem_index, src.config_ids,
                                                        src_keys)}
    return np.array([at.get((dst.problem_keys[p], c), -np.inf)
                     for p, c in zip(dst.problem_index, dst.config_ids)])


def summary(table, mask) -> dict:
    eff = table["efficiency"].to_numpy()[mask]
    if not len(eff):
        return {"problems": 0}
    return {"problems": int(len(eff)), "mean": round(100 * float(eff.mean()), 3),
            "p10": round(100 * float(np.percentile(eff, 10)), 3),
            "min": round(100 * float(eff.min()), 3),
            "top4_mean": round(100 * float(table["top4_efficiency"].to_numpy()[mask].mean()), 3)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--extra", nargs="+", required=True)
    ap.add_argument("--seeds", nargs="+", type=int, default=[0], help="fold seeds")
    ap.add_argument("--ungated", action="store_true", help="the ranker alone")
    ap.add_argument("--fold-grouping", default=None,
                    help="shape | weight (default: the recipe's); weight holds out every M of "
                         "an (N, K) together, as the validation sets do")
    ap.add_argument("--out", default="benchmarks/results/extra_rows_oof.json")
    args = ap.parse_args()
    man = json.load(open(f"{args.model}/manifest.json"))
    opts = recipe_options(args.model)
    if args.fold_grouping:
        opts.fold_grouping = args.fold_grouping
    paths = [d["path"] for d in man["data"] if d["path"] not in args.extra]
    base = load(paths, man["dtype"], man["arch"], opts.pool)
    aug = load(paths + args.extra, man["dtype"], man["arch"], opts.pool)
    if set(aug.problem_keys) != set(base.problem_keys):
        raise SystemExit("the extra files add problems: use extra_data_oof.py")
    out = {"model": args.model, "extra": args.extra, "gated": not args.ungated,
           "fold_grouping": opts.fold_grouping,
           "rows_added": len(aug) - len(base), "seeds": {}}
    for seed in args.seeds:
        folds = cv.make_folds(base, opts.folds, seed, opts.fold_grouping)
        aug_folds = same_folds(base, folds, aug)
        opts.seed = seed
        b_sc, b_keys = gated_keys(base, folds, opts, not args.ungated)
        a_sc, a_keys = gated_keys(aug, aug_folds, opts, not args.ungated)
        tables = {name: metrics.per_problem(a_sc.problem_index, a_sc.tflops, keys)
                  for name, keys in (("base", on_rows_of(b_sc, b_keys, a_sc)),
                                     ("with_extra", a_keys))}
        n_rows = np.bincount(a_sc.problem_index, minlength=a_sc.n_problems)
        b_rows = {k: n for k, n in zip(b_sc.problem_keys,
                                       np.bincount(b_sc.problem_index,
                                                   minlength=b_sc.n_problems))}
        touched = np.array([n_rows[i] != b_rows.get(k, 0)
                            for i, k in enumerate(a_sc.problem_keys)])
        probs = tables["base"]["problem"].to_numpy()
        res = {}
        for part, mask in (("touched", touched[probs]), ("untouched", ~touched[probs]),
                           ("all", np.ones(len(probs), bool))):
            res[part] = {name: summary(t, mask) for name, t in tables.items()}
        out["seeds"][seed] = res
        print(seed, json.dumps(res), flush=True)
        write_json(args.out, out)


if __name__ == "__main__":
    main()
