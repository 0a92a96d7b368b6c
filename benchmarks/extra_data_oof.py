"""Does more training data help, on the same scored problems and folds? (CPU, ~10 min.)

Adding problems to ``tilepick train``'s data changes what its out-of-fold numbers are of (more
problems scored, other folds), so two trainings' figures do not compare. Here the shipped
model's recipe (its manifest's files less the ``--extra`` ones, its parameters, the vendor
gate) is scored out of fold twice on the same problems and folds: trained on that data, then
with the ``--extra`` files added to every fold's training side. The extra problems are learned from, never scored.
Then the extra problems themselves out of fold (their own 5 folds, the base problems on the
training side of each): what the extra data is worth on its kind of shape. (The model without
it on those problems: ``tilepick validate --data EXTRA --model MODEL``.)

    python benchmarks/extra_data_oof.py --extra data/gemm/bf16/h200/train_narrow \
        [--model models/gemm_bf16_h200] [--out FILE.json]
"""

import argparse
import json
from pathlib import Path

import numpy as np

from tilepick.model import cv, metrics
from tilepick.model.dataset import load
from tilepick.model.evaluate import recipe_options, recipe_out_of_fold
from tilepick.model.train import gate_out_of_fold
from tilepick.data.io import write_json


def same_folds(base, base_folds, aug) -> list:
    """``base_folds`` carried over to ``aug`` by problem key; the problems ``aug`` adds are on
    the training side of every fold."""
    fold_of = {key: i for i, f in enumerate(base_folds) for key in base.problem_keys[f.test]}
    which = np.array([fold_of.get(k, -1) for k in aug.problem_keys])
    return [cv.Fold(train=which != i, test=which == i) for i in range(len(base_folds))]


def scores(ds, folds, opts) -> dict:
    res = recipe_out_of_fold(ds, opts, folds)
    g = gate_out_of_fold(res, folds, ds.served, opts.seed)
    sc = res.scored
    groups = sc.problem_groups["winner_family"]
    layouts = sc.frame["layout"].to_numpy()[sc.starts].astype(str)
    out = {}
    for name, table in (("ranker", res.table), ("gated", g.table)):
        eff = table["efficiency"].to_numpy()
        out[name] = {"problems": int(len(eff)), "mean": float(eff.mean()),
                     "p10": float(np.percentile(eff, 10)), "min": float(eff.min()),
                     "top4_benchmarked_mean": float(table["top4_efficiency"].mean()),
                     "by_winner_family": {f: {"problems": int((groups == f).sum()),
                                              "mean": float(eff[groups == f].mean())}
                                          for f in sorted(set(groups))},
                     "by_layout": {lay: {"problems": int((layouts == lay).sum()),
                                         "mean": float(eff[layouts == lay].mean()),
                                         "p10": float(np.percentile(eff[layouts == lay], 10))}
                                   for lay in sorted(set(layouts))},
                     "by_m": metrics.method_summary(table, sc.frame["m"].to_numpy()[sc.starts]
                                                    ).get("by_m"),
                     # per problem, so that any subset (a layout's small problems) can be
                     # compared afterwards without re-training
                     "per_problem": dict(zip(sc.problem_keys[table["problem"].to_numpy()],
                                             map(float, eff)))}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--extra", nargs="+", required=True, help="parquet files or folders")
    ap.add_argument("--out", default="benchmarks/results/extra_data_oof.json")
    args = ap.parse_args()
    man = json.load(open(f"{args.model}/manifest.json"))
    opts = recipe_options(args.model)
    pool = opts.pool
    # the base: the model's data less the extra files (a model trained with them compares
    # with the recipe on the rest)
    extra_dirs = [Path(e).resolve() for e in args.extra]
    paths = [d["path"] for d in man["data"]
             if not any(Path(d["path"]).resolve() == e or e in Path(d["path"]).resolve().parents
                        for e in extra_dirs)]
    base = load(paths, man["dtype"], man["arch"], pool)
    aug = load(paths + args.extra, man["dtype"], man["arch"], pool)
    new = ~np.isin(aug.problem_keys, base.problem_keys)
    # the extra problems are trained on, never scored (as a pooled dtype's)
    aug.__dict__["served"] = aug.served & ~new
    base_folds = cv.make_folds(base, opts.folds, opts.seed)
    # rows the extra files add to base problems (a top-up) change what those are scored on:
    # then the two figures are not of the same candidates
    added = len(aug) - len(base) - int(new[aug.problem_index].sum())
    out = {"model": args.model, "base_files": paths, "extra": args.extra,
           "extra_problems": int(new.sum()),
           "extra_rows": int(new[aug.problem_index].sum()),
           "rows_added_to_base_problems": added,
           "rule": "same scored problems and folds; extra problems in every fold's training side"}
    print(f"base: {base.n_problems} problems; extra: {out['extra_problems']} problems, "
          f"{out['extra_rows']} rows; {added} rows added to base problems", flush=True)
    out["base"] = scores(base, base_folds, opts)
    print("base", {k: round(v["mean"], 4) for k, v in out["base"].items()}, flush=True)
    out["with_extra"] = scores(aug, same_folds(base, base_folds, aug), opts)
    print("with extra", {k: round(v["mean"], 4) for k, v in out["with_extra"].items()},
          flush=True)
    extra = load(args.extra, man["dtype"], man["arch"], ())
    extra_folds = cv.make_folds(extra, opts.folds, opts.seed)
    scored = np.isin(aug.problem_keys, extra.problem_keys)   # now only the extra problems
    aug.__dict__["served"] = scored
    assert scored.sum() == extra.n_problems
    out["extra_out_of_fold"] = scores(aug, same_folds(extra, extra_folds, aug), opts)
    print("extra problems out of fold",
          {k: round(v["mean"], 4) for k, v in out["extra_out_of_fold"].items()}, flush=True)
    write_json(args.out, out)


if __name__ == "__main__":
    main()
