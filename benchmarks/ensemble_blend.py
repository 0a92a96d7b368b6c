"""Does ranking by a blend of the shipped model and its fold models beat the model alone?

The predictor ranks with the full model and evaluates its fold models (trained for the
uncertainty estimate) only on the leading candidates. A bagged score (the mean of the fold
models, or of them and the full model) often generalises better than one model. This scores
each blend weight on the exhaustive validation sets, by the validation rules
(:func:`tilepick.model.validate`), with the vendor gate applied as the predictor applies it.
Every candidate is scored by every model (no cascade), so weight 0 is the full model alone
without the cascade.

    python benchmarks/ensemble_blend.py [--weights 0 0.5 1] [--out FILE]
"""

import argparse
from pathlib import Path

import numpy as np

from tilepick.model import metrics
from tilepick.model.dataset import load
from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem
from tilepick.data.io import write_json

SETS = {"bf16 rr": ("models/gemm_bf16_h200", "data/gemm/bf16/h200/validation"),
        "bf16 rc": ("models/gemm_bf16_h200", "data/gemm/bf16/h200/validation_rc"),
        "fp16": ("models/gemm_fp16_h200", "data/gemm/fp16/h200/validation"),
        "fp8": ("models/gemm_fp8e4m3_h200", "data/gemm/fp8e4m3/h200/validation")}


def blended_order(pred: Predictor, problem: GemmProblem, weight: float) -> list[str]:
    table = pred._table(problem)
    index = np.flatnonzero(table.valid_mask(problem))
    x = table.features(problem, index)
    full = pred._stage1(x) + pred._stage2(x)
    ens = pred.ensemble.predict(x)
    folds = ens[:, :pred.n_folds].mean(axis=1)
    score = (1 - weight) * full + weight * folds
    order = np.argsort(-score, kind="stable")
    if pred.gate_column is not None and len(order) > 1:
        vendor = pred._vendor_position(problem, table, index)
        if vendor >= 0:
            at = int(np.flatnonzero(order == vendor)[0])
            if ens[0, pred.gate_column] > 0 and at > 0:
                order = np.r_[order[at], order[:at], order[at + 1:]]
            elif ens[0, pred.gate_column] <= 0 and at == 0:
                order = np.r_[order[1], order[0], order[2:]]
    return table.id_array[index[order]].tolist()


def score(pred: Predictor, ds, weight: float) -> dict:
    scores = np.full(len(ds), np.nan)
    for i, key in enumerate(ds.problem_keys):
        pos = {cid: -float(j) for j, cid in enumerate(
            blended_order(pred, GemmProblem.from_key(key), weight))}
        lo, hi = ds.starts[i], ds.starts[i] + ds.sizes[i]
        scores[lo:hi] = [pos.get(cid, np.nan) for cid in ds.config_ids[lo:hi]]
    t = metrics.per_problem(ds.problem_index, ds.tflops, scores)
    e, e4 = t["efficiency"].to_numpy(), t["top4_efficiency"].to_numpy()
    return {"mean": float(e.mean()), "p10": float(np.percentile(e, 10)), "min": float(e.min()),
            "top4_mean": float(e4.mean())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", type=float, nargs="+", default=[0.0, 0.5, 1.0])
    ap.add_argument("--sets", nargs="+", default=list(SETS))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    res: dict = {}
    for name in args.sets:
        model_dir, data = SETS[name]
        pred = Predictor(Path(model_dir), strict=False)
        ds = load([Path(data)], pred.dtype, pred.arch)
        for w in args.weights:
            r = score(pred, ds, w)
            res.setdefault(name, {})[str(w)] = r
            print(f"{name:8s} weight {w:4.2f}: mean {100 * r['mean']:.2f}  P10 "
                  f"{100 * r['p10']:.2f}  min {100 * r['min']:.1f}  top-4 "
                  f"{100 * r['top4_mean']:.2f}", flush=True)
    if args.out:
        write_json(args.out, res)


if __name__ == "__main__":
    main()
