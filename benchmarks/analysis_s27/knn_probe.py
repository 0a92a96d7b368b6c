"""Does a config's measured efficiency on the nearest training problems rank validation
candidates, alone or with the model (session 27; CPU, ~10 s)?

Why: a perf-db interpolation is the other way to predict a config's speed on an unseen shape;
if it carried what LightGBM misses, it would be a feature. Per validation problem, its KN
nearest training problems of the same layout (Euclidean in log2 M, N, K; the model's bf16
training files), each candidate's efficiency there (TFLOP/s / that problem's best), weighted by
1 / (distance + 0.25). Scored by `tilepick validate`'s rule: kNN alone, the model's top n
re-ordered by kNN, and a blend of log-ranks. Session 27 on K: kNN alone 95.3 / 94.9 (rr / rc
mean), every combination at or below the model alone.

    python benchmarks/analysis_s27/knn_probe.py MODEL_DIR [KN=8]
"""
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from tilepick.data.io import read_frame
from tilepick.model.dataset import clean, load
from tilepick.model.predictor import Predictor
from tilepick.model.validate import model_scores
from tilepick.model import metrics

model = sys.argv[1]
man = json.load(open(f"{model}/manifest.json"))
files = [d["path"] for d in man["data"] if "/bf16/" in d["path"]]
tr = clean(pd.concat([read_frame(f) for f in files], ignore_index=True), dtype="bf16")
tr["rel"] = tr.tflops / tr.groupby("problem_key").tflops.transform("max")
probs = tr.groupby("problem_key").agg(m=("m", "first"), n=("n", "first"), k=("k", "first"),
                                      layout=("layout", "first")).reset_index()
tables = {pk: dict(zip(g.config_id, g.rel)) for pk, g in tr.groupby("problem_key")}
coords = np.log2(probs[["m", "n", "k"]].to_numpy(float))
pred = Predictor(Path(model))
KN = int(sys.argv[2]) if len(sys.argv) > 2 else 8
for data in ["data/gemm/bf16/h200/validation", "data/gemm/bf16/h200/validation_rc"]:
    ds = load([data], pred.dtype, pred.arch, within_pass=True)
    s_model = model_scores(pred, ds)
    s_knn = np.full(len(ds), np.nan)
    for i, key in enumerate(ds.problem_keys):
        lo = ds.starts[i]; hi = lo + ds.sizes[i]
        f = ds.frame.iloc[lo]
        c = np.log2([f.m, f.n, f.k])
        same = (probs.layout == f.layout).to_numpy()
        d = np.sqrt(((coords - c) ** 2).sum(1)); d[~same] = np.inf
        nb = np.argsort(d)[:KN]
        w = 1.0 / (d[nb] + 0.25)
        for r in range(lo, hi):
            cid = ds.config_ids[r]
            vals = [(tables[probs.problem_key[j]].get(cid), wj) for j, wj in zip(nb, w)]
            vals = [(v, wj) for v, wj in vals if v is not None]
            if vals:
                v, wj = np.array(vals).T
                s_knn[r] = (v * wj).sum() / wj.sum()
    def ev(s, name):
        t = metrics.per_problem(ds.problem_index, ds.tflops, s)
        e = t.efficiency.to_numpy()
        print(f"{data.split('/')[-1]:14s} {name:28s} mean {100*e.mean():.2f} P10 {100*np.quantile(e,.1):.2f} min {100*e.min():.1f} top4 {100*t.top4_efficiency.mean():.2f}")
    ev(s_model, "K")
    ev(np.where(np.isnan(s_knn), -1, s_knn), "kNN alone")
    # K's top-n reordered by kNN
    for topn in (2, 3, 4, 8):
        s = np.full(len(ds), np.nan)
        for i in range(ds.n_problems):
            lo = ds.starts[i]; hi = lo + ds.sizes[i]
            sm = np.where(np.isnan(s_model[lo:hi]), -np.inf, s_model[lo:hi])
            order = np.argsort(-sm, kind="stable")
            sc = -np.arange(hi - lo, dtype=float) - 1000
            top = order[:topn]
            kn = s_knn[lo:hi][top]
            kn = np.where(np.isnan(kn), -1, kn)
            # re-order top by knn, ties by model order
            sub = top[np.lexsort((np.arange(len(top)), -kn))]
            sc_full = np.full(hi - lo, -np.inf)
            for pos, r in enumerate(order): sc_full[r] = -pos - 1000
            for pos, r in enumerate(sub): sc_full[r] = -pos
            s[lo:hi] = sc_full
        ev(s, f"K top-{topn} reranked by kNN")
    # rank blend
    s = np.full(len(ds), np.nan)
    for a in (0.3, 0.5):
        for i in range(ds.n_problems):
            lo = ds.starts[i]; hi = lo + ds.sizes[i]
            sm = np.where(np.isnan(s_model[lo:hi]), -np.inf, s_model[lo:hi])
            rm = np.argsort(np.argsort(-sm, kind="stable"), kind="stable")
            kn = np.where(np.isnan(s_knn[lo:hi]), -1, s_knn[lo:hi])
            rk = np.argsort(np.argsort(-kn, kind="stable"), kind="stable")
            s[lo:hi] = -(np.log1p(rm) * (1 - a) + np.log1p(rk) * a)
        ev(s, f"log-rank blend a={a}")
