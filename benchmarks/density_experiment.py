"""Is the model limited by how densely its training problems were sampled?

Training problems measure ~110 of ~800 valid configs each; the exhaustive validation problems
measure every one. With a random ~110, a problem's best Triton config is rarely in the sample,
so the best measured is often cuBLAS, and a ranker learns that cuBLAS wins where a Triton
config would (on validation, where a Triton config wins the model picks it rarely).

The test: 5-fold GroupKFold (by shape) over the exhaustive validation problems. Each fold's
problems are scored by models trained on the training data plus the *other* folds' problems,
added either (a) with a random sample of their configs as large as a training problem's, or
(b) with every config; and (c) by the model trained on the training data alone (what ships).
Two controls train on the other folds' problems alone, sampled and complete: without the
~1,600 sampled training problems, does density then matter?
Same problems added in (a) and (b), same LightGBM recipe as `tilepick train` (LambdaRank,
cascade ranking), ranking restricted to the training catalog in every variant, so the only
difference between (a) and (b) is sampling density. Every number is on problems whose shape
the scoring model never saw.

    python benchmarks/density_experiment.py [--sample 110] [--folds 5] [--out FILE.json]
"""

import argparse
import time
import zlib

import numpy as np
import pandas as pd

from tilepick.model import cv, metrics
from tilepick.model.dataset import build, load, shape_group
from tilepick.model.objectives import NUM_ROUNDS, OBJECTIVES
from tilepick.model.ranking import CascadeSettings, cascade_keys
from tilepick.provenance import collect
from tilepick.data.io import write_json

VENDOR = "gemm.cublas"


def subsample(frame: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """Per problem: cuBLAS and ``n`` other configs drawn at random (seeded per problem)."""
    parts = []
    for key, rows in frame.groupby("problem_key", sort=False):
        vendor = rows[rows["config_id"] == VENDOR]
        rest = rows[rows["config_id"] != VENDOR]
        rng = np.random.default_rng([seed, zlib.crc32(key.encode())])
        take = rng.choice(len(rest), size=min(n, len(rest)), replace=False)
        parts += [vendor, rest.iloc[np.sort(take)]]
    return pd.concat(parts)


def score(train_frame: pd.DataFrame, test, hw, catalog: set, rounds: int) -> pd.DataFrame:
    """Per-problem metrics table of ``test`` ranked by a model fitted on ``train_frame``."""
    ds = build(train_frame.sort_values(["problem_key", "config_id"], kind="stable")
               .reset_index(drop=True), hw, dtype="bf16")
    booster = cv.fit(ds, OBJECTIVES["lambdarank"], None, rounds, retimed_weight=2.0)
    c = CascadeSettings()
    stage1 = booster.predict(test.x, raw_score=True, num_iteration=c.stage1_trees)
    full = booster.predict(test.x, raw_score=True)
    known = np.isin(test.config_ids, list(catalog))
    stage1 = np.where(known, stage1, np.nan)
    full = np.where(known, full, np.nan)
    keys = cascade_keys(test.problem_index, np.nan_to_num(stage1, nan=-1e18),
                        np.nan_to_num(full, nan=-1e18), c.stage2_top)
    keys = np.where(known, keys, np.nan)
    return metrics.per_problem(test.problem_index, test.tflops, keys)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", nargs="+", default=["data/gemm/bf16/h200/train_rr",
                                                   "data/gemm/bf16/h200/train_rc",
                                                   "data/gemm/fp16/h200/train_rr"])
    ap.add_argument("--pool", nargs="*", default=["fp16"])
    ap.add_argument("--validation", default="data/gemm/bf16/h200/validation")
    ap.add_argument("--sample", type=int, default=110,
                    help="configs per added problem in the sampled variant (a training "
                         "problem's median is ~110)")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=NUM_ROUNDS)
    ap.add_argument("--out")
    args = ap.parse_args()
    t0 = time.time()
    train = load(args.train, "bf16", "h200", pool=args.pool)
    val = load([args.validation], "bf16", "h200")
    catalog = set(train.config_ids)
    overlap = set(shape_group(train.frame)) & set(shape_group(val.frame))
    folds = cv.make_folds(val, args.folds, args.seed)
    sampled_name = f"+ other folds, {args.sample} configs each"
    alone = (f"other folds alone, {args.sample} configs each", "other folds alone, every config")
    tables = {"training only": [], sampled_name: [], "+ other folds, every config": [],
              alone[0]: [], alone[1]: []}
    only = None
    for i, fold in enumerate(folds):
        test = val.subset_problems(fold.test)
        added = val.frame[fold.train[val.problem_index]]
        if only is None:   # the training-only model does not depend on the fold
            only = score(train.frame, val, train.hw, catalog, args.rounds)
        tables["training only"].append(only[fold.test[only["problem"].to_numpy()]])
        sampled = subsample(added, args.sample, args.seed)
        for name, frame in ((sampled_name, pd.concat([train.frame, sampled])),
                            ("+ other folds, every config", pd.concat([train.frame, added])),
                            (alone[0], sampled), (alone[1], added)):
            t = score(frame.reset_index(drop=True), test, train.hw, catalog, args.rounds)
            t["problem"] = np.flatnonzero(fold.test)[t["problem"].to_numpy()]
            tables[name].append(t)
        print(f"fold {i + 1}/{len(folds)} done ({time.time() - t0:.0f} s)", flush=True)
    result = {"provenance": collect(), "command": "python benchmarks/density_experiment.py "
              f"--sample {args.sample} --folds {args.folds} --seed {args.seed}",
              "train": args.train, "pool": args.pool, "validation": args.validation,
              "validation_problems": val.n_problems, "shapes_shared_with_training": len(overlap),
              "catalog_configs": len(catalog), "added_rows": {}, "methods": {}}
    for name, parts in tables.items():
        t = pd.concat(parts).sort_values("problem")
        s = metrics.summarize(t["efficiency"].to_numpy(), t["top1"].to_numpy(),
                              t["best_rank"].to_numpy())
        s["top4_mean"] = float(t["top4_efficiency"].mean())
        winner = val.frame["family"].to_numpy()[val.best_row[t["problem"].to_numpy()]]
        triton = winner != VENDOR
        s["triton_won_problems"] = int(triton.sum())
        s["mean_where_triton_won"] = float(t["efficiency"].to_numpy()[triton].mean())
        s["mean_where_cublas_won"] = float(t["efficiency"].to_numpy()[~triton].mean())
        result["methods"][name] = s
    for name, line in result["methods"].items():
        print(f"{name:40s} mean {line['mean']:.4f} p10 {line['p10']:.4f} min {line['min']:.4f} "
              f"top1 {line['top1_accuracy']:.3f} top5 {line['top5_hit_rate']:.3f} "
              f"top4 {line['top4_mean']:.4f} | Triton won ({line['triton_won_problems']}): "
              f"{line['mean_where_triton_won']:.4f}, cuBLAS won: "
              f"{line['mean_where_cublas_won']:.4f}")
    if args.out:
        write_json(args.out, result)


if __name__ == "__main__":
    main()
