"""A risk-averse vendor gate? Out of fold (CPU, ~5 min).

The dispatcher's users compare with torch.matmul (cuBLAS), and the issue's target counts any
shape below 0.97x of it: a wrong call for Triton costs more than a missed gain. This re-trains
the shipped bf16 recipe on its manifest's data (folds by shape and by weight (N, K)), fits the
vendor gate out of fold, and calls cuBLAS when the gate's raw score is above ``-bias``
(bias 0: the shipped rule) for a few biases: mean and P10 efficiency, the share of problems
whose pick runs below 0.97x cuBLAS, and the geomean of pick / cuBLAS.

    python benchmarks/gate_bias_oof.py [--model models/gemm_bf16_h200] [--out FILE.json]
"""

import argparse

import numpy as np

from tilepick.model import cv, gate, metrics
from tilepick.model.evaluate import recipe_data, recipe_out_of_fold
from tilepick.model.train import gate_out_of_fold
from tilepick.data.io import write_json

BIASES = (0.0, 0.25, 0.5, 1.0, 1.5, 2.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    opts, ds, _ = recipe_data(args.model)
    out = {"model": args.model, "biases": BIASES}
    for by in ("shape", "weight"):
        folds = cv.make_folds(ds, opts.folds, opts.seed, by)
        res = recipe_out_of_fold(ds, opts, folds)
        sc = res.scored
        raw = gate_out_of_fold(res, folds, ds.served, opts.seed).raw
        vendor = sc.config_ids == gate.VENDOR
        cub = np.full(sc.n_problems, np.nan)
        cub[sc.problem_index[vendor]] = sc.tflops[vendor]
        out[by] = {}
        for bias in BIASES:
            keys = gate.apply(sc.problem_index, sc.config_ids, res.keys, raw + bias)
            t = metrics.per_problem(sc.problem_index, sc.tflops, keys)
            eff = t["efficiency"].to_numpy()
            pick = t["pick_tflops"].to_numpy()
            vs = pick / cub[t["problem"].to_numpy()]
            ok = np.isfinite(vs)
            out[by][str(bias)] = {
                "mean": float(eff.mean()), "p10": float(np.percentile(eff, 10)),
                "below_0.97_cublas": float((vs[ok] < 0.97).mean()),
                "geomean_vs_cublas": float(np.exp(np.log(vs[ok]).mean())),
                "worst_vs_cublas": float(vs[ok].min())}
            print(by, bias, {k: round(v, 4) for k, v in out[by][str(bias)].items()}, flush=True)
    if args.out:
        write_json(args.out, out)


if __name__ == "__main__":
    main()
