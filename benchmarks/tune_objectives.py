"""Compare LambdaRank recipes (labels, LightGBM settings, weights) on the same shape-grouped
folds, out of fold, on the training data only (never on the validation set).

    PYTHONPATH=src python benchmarks/tune_objectives.py [--variants a,b,...] [--folds 5]
        [--seed 0] [--data DIR ...] [--out results.md]

Each variant trains 5 fold models with the training recipe (cv.fit's weighting of re-timed
rows, the shipped cascade: stage 1 = first 5 trees over every candidate, stage 2 = all trees
over its top 8) and scores the cascade's picks: mean / P10 / min efficiency, top-1 accuracy,
top-5 hit rate, mean efficiency of the best of the top 4 (what benchmarking the top 4 gets).
"""

from __future__ import annotations

import argparse
import time

import lightgbm as lgb
import numpy as np

from tilepick.features import current_spec
from tilepick.model import cv, metrics
from tilepick.model.dataset import load
from tilepick.model.objectives import BASE_PARAMS, NUM_ROUNDS
from tilepick.model.ranking import CascadeSettings, cascade_keys

DATA = ["/work/main/data/gemm/bf16/h200/train_rr", "/work/main/data/gemm/bf16/h200/train_rc"]


def linear_grades(rel, n=20, floor=0.5):
    g = np.floor((np.asarray(rel) - floor) / (1 - floor) * n)
    return np.clip(g, 0, n).astype(np.int64)


def band_grades(rel, bands):
    """Grade = number of bands the efficiency reaches (bands ascending)."""
    rel = np.asarray(rel)
    return np.sum(rel[:, None] >= np.asarray(bands)[None, :] - 1e-12, axis=1).astype(np.int64)


BANDS_A = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.995, 1.0)
BANDS_B = (0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.99, 1.0)
BANDS_C = (0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.925, 0.95, 0.96, 0.97, 0.98, 0.99,
           0.995, 1.0)


def exp_gain(n, base4=4.0):
    return [float(2 ** (g / base4) - 1) for g in range(n + 1)]


def extra_features(ds, which):
    """Candidate problem-level features, appended to the matrix for measurement only (a
    feature that ships must go into features/table.py, which changes the model's spec)."""
    f = ds.frame
    m, n, k, b = (f[c].to_numpy(float) for c in ("m", "n", "k", "batch"))
    sm = float(ds.hw.sm_count)
    tiles128 = np.ceil(m / 128) * np.ceil(n / 128) * b
    cols = {
        "log2_mn": np.log2(m * n * b),
        "log2_nk": np.log2(n * k),
        "log2_mk": np.log2(m * k),
        "log2_waves128": np.log2(tiles128 / sm),
        # K left per SM if the output is spread in 128x128 tiles: large when few tiles and a
        # deep K, where a library would split K
        "log2_k_per_tile_slot": np.log2(k * np.minimum(1.0, tiles128 / sm)),
        "size_bucket": np.floor(np.log2(2 * m * n * k * b) / 4),
    }
    names = [w for w in which]
    return np.column_stack([cols[w] for w in names]), names


def base_variant():
    return {"labels": lambda rel: linear_grades(rel), "n_grades": 20, "gain_div": 4.0,
            "params": {}, "rounds": NUM_ROUNDS, "weight": None, "trunc": 20, "extra": ()}


def V(**kw):
    v = base_variant()
    v.update(kw)
    return v


def bands(b, div=None):
    return {"labels": lambda rel, b=b: band_grades(rel, b), "n_grades": len(b),
            "gain_div": div if div is not None else 4.0 * 20 / 20}


VARIANTS = {
    "baseline": V(),
    # --- labels ---------------------------------------------------------------------------
    "lin40_f0.5": V(labels=lambda r: linear_grades(r, 40, 0.5), n_grades=40, gain_div=8.0),
    "lin20_f0.7": V(labels=lambda r: linear_grades(r, 20, 0.7), n_grades=20),
    "lin20_f0.3": V(labels=lambda r: linear_grades(r, 20, 0.3), n_grades=20),
    "bandsA": V(**bands(BANDS_A, 2.0)),
    "bandsA_g1.5": V(**bands(BANDS_A, 1.5)),
    "bandsA_g3": V(**bands(BANDS_A, 3.0)),
    "bandsB": V(**bands(BANDS_B, 1.5)),
    "bandsC": V(**bands(BANDS_C, 2.0)),
    "gain_div2": V(gain_div=2.0),
    "gain_div8": V(gain_div=8.0),
    "trunc10": V(trunc=10),
    "trunc40": V(trunc=40),
    # --- LightGBM --------------------------------------------------------------------------
    "leaves31": V(params={"num_leaves": 31}),
    "leaves127": V(params={"num_leaves": 127, "max_depth": 12}),
    "mdl10": V(params={"min_data_in_leaf": 10}),
    "mdl40": V(params={"min_data_in_leaf": 40}),
    "lr0.1_r80": V(params={"learning_rate": 0.1}, rounds=80),
    "lr0.15_r60": V(params={"learning_rate": 0.15}, rounds=60),
    "r60": V(rounds=60),
    "ff0.7": V(params={"feature_fraction": 0.7}),
    "ff1.0": V(params={"feature_fraction": 1.0}),
    "l2_5": V(params={"lambda_l2": 5.0}),
    "l2_0.1": V(params={"lambda_l2": 0.1}),
    "nobag": V(params={"bagging_fraction": 1.0, "bagging_freq": 0}),
    # --- weights ---------------------------------------------------------------------------
    "w_log_rows": V(weight="log_rows"),
    "w_log_flops": V(weight="log_flops"),
    "w_inv_sqrt_rows": V(weight="inv_sqrt_rows"),
    # --- combinations ----------------------------------------------------------------------
    "bandsA+l127": V(**bands(BANDS_A, 2.0), params={"num_leaves": 127, "max_depth": 12}),
    "bandsA+l127+t10": V(**bands(BANDS_A, 2.0), params={"num_leaves": 127, "max_depth": 12},
                         trunc=10),
    "bandsA+l127+l2_0.1": V(**bands(BANDS_A, 2.0),
                            params={"num_leaves": 127, "max_depth": 12, "lambda_l2": 0.1}),
    "bandsA_g3+l127": V(**bands(BANDS_A, 3.0), params={"num_leaves": 127, "max_depth": 12}),
    "bandsA+t10": V(**bands(BANDS_A, 2.0), trunc=10),
    "l127+div2": V(gain_div=2.0, params={"num_leaves": 127, "max_depth": 12}),
    "x_products": V(extra=("log2_mn", "log2_nk", "log2_mk")),
    "x_splitk": V(extra=("log2_waves128", "log2_k_per_tile_slot")),
    "x_all": V(extra=("log2_mn", "log2_nk", "log2_mk", "log2_waves128",
                      "log2_k_per_tile_slot", "size_bucket")),
    "bandsA+l127+l2_0.1+x_all": V(**bands(BANDS_A, 2.0),
                                  params={"num_leaves": 127, "max_depth": 12, "lambda_l2": 0.1},
                                  extra=("log2_mn", "log2_nk", "log2_mk", "log2_waves128",
                                         "log2_k_per_tile_slot", "size_bucket")),
    "bandsA+l255": V(**bands(BANDS_A, 2.0), params={"num_leaves": 255, "max_depth": 14}),
}


def problem_weight(ds, mode):
    if mode is None:
        return None
    size = ds.sizes[ds.problem_index].astype(float)
    if mode == "log_rows":        # larger candidate sets count more
        w = np.log2(size + 1) / np.log2(ds.sizes.mean() + 1)
    elif mode == "inv_sqrt_rows":
        w = np.sqrt(ds.sizes.mean() / size)
    elif mode == "log_flops":     # large problems count more (0.5 .. 1.5)
        lf = ds.frame["m"].to_numpy(float) * ds.frame["n"] * ds.frame["k"] * ds.frame["batch"]
        lf = np.log2(lf.to_numpy(float))
        w = 0.5 + (lf - lf.min()) / (lf.max() - lf.min())
    else:
        raise ValueError(mode)
    return w


THREADS = 0   # 0: the recipe's num_threads


def fit_variant(sub, v, x, retimed_weight=2.0, names=()):
    spec = current_spec()
    w = cv.sample_weights(sub, retimed_weight)
    pw = problem_weight(sub, v["weight"])
    if pw is not None:
        w = (w if w is not None else 1.0) * pw
    labels = v["labels"](sub.rel)
    data = lgb.Dataset(x, label=labels, weight=w, feature_name=list(spec.names) + list(names),
                       categorical_feature=list(spec.categorical), free_raw_data=False,
                       params={"verbose": -1, "max_bin": 255})
    data.set_group(sub.sizes)
    params = dict(BASE_PARAMS, objective="lambdarank",
                  label_gain=exp_gain(max(v["n_grades"], int(labels.max())), v["gain_div"]),
                  lambdarank_truncation_level=v["trunc"], eval_at=[1, 5])
    params.update(v["params"])
    if THREADS:
        params["num_threads"] = THREADS
    return lgb.train(params, data, num_boost_round=v["rounds"])


def run_variant(ds, folds, v, cascade=CascadeSettings()):
    stage1 = np.full(len(ds), np.nan)
    full = np.full(len(ds), np.nan)
    sizes_kb = []
    x, names = ds.x, ()
    if v["extra"]:
        ex, names = extra_features(ds, v["extra"])
        x = np.hstack([ds.x, ex])
    for fold in folds:
        train_rows = fold.train[ds.problem_index]
        b = fit_variant(ds.subset_problems(fold.train), v, x[train_rows], names=names)
        rows = fold.test[ds.problem_index]
        stage1[rows] = b.predict(x[rows], raw_score=True, num_iteration=cascade.stage1_trees)
        full[rows] = b.predict(x[rows], raw_score=True)
        sizes_kb.append(len(b.model_to_string()) / 1024)
    keys = cascade_keys(ds.problem_index, stage1, full, cascade.stage2_top)
    t = metrics.per_problem(ds.problem_index, ds.tflops, keys)
    s = metrics.summarize(t["efficiency"].to_numpy(), t["top1"].to_numpy(),
                          t["best_rank"].to_numpy())
    s["top4"] = float(t["top4_efficiency"].mean())
    ft = metrics.per_problem(ds.problem_index, ds.tflops, full)
    s["full_mean"] = float(ft["efficiency"].mean())
    s["model_kb"] = float(np.mean(sizes_kb))
    return s, t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--data", action="append")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out")
    ap.add_argument("--threads", type=int, default=0,
                    help="LightGBM threads (1 on a busy 2-core machine; same results here)")
    a = ap.parse_args()
    global THREADS
    THREADS = a.threads
    ds = load(a.data or DATA, "bf16", "h200")
    folds = cv.make_folds(ds, a.folds, a.seed)
    head = ("| variant | mean | P10 | min | top-1 | top-5 | top-4 bench. | full model mean "
            "| model KB | s |\n|---|---|---|---|---|---|---|---|---|---|")
    print(f"{ds.n_problems} problems, {len(ds)} rows, {a.folds} folds, seed {a.seed}")
    print(head, flush=True)
    lines = [head]
    for name in a.variants.split(","):
        t0 = time.perf_counter()
        s, _ = run_variant(ds, folds, VARIANTS[name])
        line = (f"| {name} | {s['mean']:.4f} | {s['p10']:.4f} | {s['min']:.3f} | "
                f"{s['top1_accuracy']:.3f} | {s['top5_hit_rate']:.3f} | {s['top4']:.4f} | "
                f"{s['full_mean']:.4f} | {s['model_kb']:.0f} | {time.perf_counter() - t0:.0f} |")
        print(line, flush=True)
        lines.append(line)
    if a.out:
        with open(a.out, "a") as f:
            f.write(f"\n{ds.n_problems} problems, {a.folds} folds, seed {a.seed}\n\n")
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
