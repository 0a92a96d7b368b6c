"""Would a less redundant top-k serve a benchmarking pick better? Out of fold (CPU, ~4 min).

The model's top 4 often holds near-twins: the same tiles with another ``group_m`` or stage
count (on the validation set, ``ptr.m16n128k32.g1.w4.s4`` then ``...g8.w4.s4``), which run
alike, so benchmarking both buys little. Re-trains the shipped recipe of a model on its
manifest's data (5 folds by shape, and by weight (N, K) as in ``grouping_oof.py``), applies the
shipped vendor gate's call where the recipe ships one, and scores the best-of-k of:

- the model's order (what ships);
- the order with candidates whose tile signature (family + tile sizes [+ split]) already
  appears higher moved below the first ``window`` places (top-1 unchanged);
- the same signature with the warp count;

    python benchmarks/diverse_topk_oof.py [--model models/gemm_bf16_h200] [--out FILE.json]
"""

import argparse
import re

import numpy as np

from tilepick.model import cv, metrics
from tilepick.model.evaluate import recipe_data, recipe_out_of_fold
from tilepick.model.train import gate_out_of_fold
from tilepick.data.io import write_json

WINDOW = 8


def signature(cid: str, warps: bool) -> str:
    s = re.sub(r"\.g\d+", "", cid)
    s = re.sub(r"\.s\d+", "", s)
    return s if warps else re.sub(r"\.w\d+", "", s)


def diversified(problem_index, starts, sizes, config_ids, keys, warps: bool) -> np.ndarray:
    out = np.asarray(keys, dtype=np.float64).copy()
    for lo, n in zip(starts, sizes):
        k = out[lo:lo + n]
        order = np.argsort(-np.nan_to_num(k, nan=-np.inf), kind="stable")
        seen, kept, moved = set(), [], []
        for i in order[:WINDOW * 4]:
            if not np.isfinite(k[i]):
                break
            sig = signature(config_ids[lo + i], warps)
            (moved if sig in seen and len(kept) < WINDOW else kept).append(i)
            seen.add(sig)
        if not moved:
            continue
        new = kept[:WINDOW] + moved + kept[WINDOW:]
        top = np.nanmax(k)
        for pos, i in enumerate(new):   # keys in the new order, above everything not listed
            k[i] = top + len(new) - pos
        out[lo:lo + n] = k
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    opts, ds, with_gate = recipe_data(args.model)
    out = {"model": args.model, "window": WINDOW}
    for name, folds in (("by shape", cv.make_folds(ds, opts.folds, opts.seed)),
                        ("by weight", cv.make_folds(ds, opts.folds, opts.seed, "weight"))):
        res = recipe_out_of_fold(ds, opts, folds)
        sc = res.scored
        keys = res.keys
        if with_gate:
            keys = gate_out_of_fold(res, folds, ds.served, opts.seed).keys
        variants = {"model order": keys,
                    "diverse tiles": diversified(sc.problem_index, sc.starts, sc.sizes,
                                                 sc.config_ids, keys, warps=False),
                    "diverse tiles+warps": diversified(sc.problem_index, sc.starts, sc.sizes,
                                                       sc.config_ids, keys, warps=True)}
        out[name] = {}
        for v, k in variants.items():
            t = metrics.per_problem(sc.problem_index, sc.tflops, k)
            out[name][v] = {c: round(float(t[c].mean()) * 100, 3) for c in
                            ("efficiency", "top2_efficiency", "top4_efficiency",
                             "top8_efficiency")}
            out[name][v]["top4_p10"] = round(float(np.percentile(t["top4_efficiency"], 10))
                                             * 100, 3)
            print(name, v, out[name][v], flush=True)
    if args.out:
        write_json(args.out, out)


if __name__ == "__main__":
    main()
