"""Would the vendor gate learn more from other inputs? Out of fold (CPU, ~6 min), the same
ranker re-training and folds as ``benchmarks/vendor_gate.py``, the shipped gate's size:

a. problem and hardware features only (shipped);
b. the ranker's first Triton candidate's whole feature row (its family, tiles, waves...);
c. (a) plus the tile quantisation of large library tiles (64x64 ... 256x128: per tile the
   product of the M, N and wave efficiencies, and the waves; and the best of them), on the
   guess that cuBLAS's speed follows how its own tiles fit the problem;
d. (b) plus those columns.

    python benchmarks/gate_features_oof.py [--out benchmarks/results/gate_features_oof.json]
"""
import argparse
import json
import numpy as np
import lightgbm as lgb
from tilepick.features import FEATURES
from tilepick.model import cv, gate, metrics
from tilepick.model.evaluate import recipe_data, recipe_out_of_fold
from tilepick.model.ranking import within_problem_rank
from tilepick.model.scale import SCALE_CATEGORICAL

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="models/gemm_bf16_h200")
ap.add_argument("--out", default="benchmarks/results/gate_features_oof.json")
args = ap.parse_args()
model = args.model
opts, ds, _ = recipe_data(model)
folds = cv.make_folds(ds, opts.folds, opts.seed)
res = recipe_out_of_fold(ds, opts, folds)
sc = res.scored
masks = [(f.train[ds.served], f.test[ds.served]) for f in folds]
names = [f.name for f in FEATURES]
col = {n: i for i, n in enumerate(names)}
x0 = gate.problem_matrix(sc.x[sc.starts])
# the first Triton candidate's row per problem
vendor = sc.config_ids == gate.VENDOR
rank = within_problem_rank(sc.problem_index, np.where(vendor, -np.inf, res.keys))
first = np.flatnonzero((rank == 0) & ~vendor)
n_prob = sc.n_problems
xpick = np.full((n_prob, len(names)), np.nan)
xpick[sc.problem_index[first]] = sc.x[first]
# tile quantisation of big library tiles
m, n, b = (x0[:, col[c]] for c in ("m", "n", "batch"))
extra, extra_names = [], []
for bm, bn in ((64, 64), (64, 128), (128, 64), (128, 128), (128, 256), (256, 128)):
    tm, tn = np.ceil(m / bm), np.ceil(n / bn)
    waves = tm * tn * b / x0[:, col["hw_sm_count"]]
    q = (m / (tm * bm)) * (n / (tn * bn)) * (waves / np.ceil(waves))
    extra.append(q); extra_names.append(f"q_{bm}x{bn}")
    extra.append(waves); extra_names.append(f"waves_{bm}x{bn}")
extra = np.stack(extra, 1)
qcols = extra[:, 0::2]
extra = np.concatenate([extra, qcols.max(1, keepdims=True)], 1); extra_names.append("q_best")

def score(keys):
    t = metrics.per_problem(sc.problem_index, sc.tflops, keys)["efficiency"].to_numpy()
    return round(float(t.mean()) * 100, 3), round(float(np.percentile(t, 10)) * 100, 3), round(float(t.min()) * 100, 1)

y, has = gate.problem_outcomes(sc.problem_index, sc.config_ids, sc.tflops, res.keys)
print("ranker", score(res.keys), "ceiling", score(gate.apply(sc.problem_index, sc.config_ids, res.keys, gate.right_calls(y, has))), flush=True)

def oof(x, fnames, seed, cat):
    raw = np.full(len(y), np.nan)
    for tr, te in masks:
        tr, te = tr & has, te & has
        d = lgb.Dataset(x[tr], label=(y[tr] > 0).astype(float), weight=np.abs(y[tr]) + gate.WEIGHT_FLOOR,
                        feature_name=fnames, categorical_feature=cat, params={"verbose": -1, "min_data_in_bin": 1})
        bst = lgb.train(dict(gate.GATE_PARAMS, seed=seed), d, gate.GATE_ROUNDS)
        raw[te] = bst.predict(x[te], raw_score=True)
    return score(gate.apply(sc.problem_index, sc.config_ids, res.keys, raw))

variants = {
    "a shipped (problem only)": (x0, names, SCALE_CATEGORICAL),
    "b pick row": (xpick, names, SCALE_CATEGORICAL),
    "c problem + tile quantisation": (np.concatenate([x0, extra], 1), names + extra_names, SCALE_CATEGORICAL),
    "d pick row + tile quantisation": (np.concatenate([xpick, extra], 1), names + extra_names, SCALE_CATEGORICAL),
}
out = {}
for name, (x, fn, cat) in variants.items():
    out[name] = [oof(x, fn, s, cat) for s in range(3)]
    print(name, out[name], flush=True)
out["ranker"] = score(res.keys)
out["every_call_right"] = score(gate.apply(sc.problem_index, sc.config_ids, res.keys,
                                           gate.right_calls(y, has)))
json.dump({"model": model, "problems": int(n_prob), "(mean, p10, min) x 3 gate seeds": out},
          open(args.out, "w"), indent=1)
