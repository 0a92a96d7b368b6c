"""The vendor gate out of fold: its ceiling, and the variants compared (CPU, ~3 min).

Re-trains the shipped bf16 model's ranker on the 5 folds of its own data (the files of its
manifest, fp16 pooled), then fits gates on each fold's complement from the ranker's
out-of-fold picks (:mod:`tilepick.model.gate`) and scores the gated rankings out of fold:
- the ceiling: every cuBLAS-or-first-Triton call right;
- cost-sensitive classifiers (the shipped kind) at a few sizes, over three seeds;
- a regression of log(cuBLAS / first Triton) instead (huber loss), called at 0.

    python benchmarks/vendor_gate.py [--model models/gemm_bf16_h200] [--out FILE.json]
"""

import argparse

import numpy as np

from tilepick.model import gate, metrics
from tilepick.model.evaluate import recipe_gate_inputs
from tilepick.data.io import write_json

VARIANTS = {
    "binary 31 leaves x 60 at 0.2 (shipped)": ({}, 60),
    "binary 63 leaves x 60 at 0.2": ({"num_leaves": 63}, 60),
    "binary 63 leaves x 300 at 0.05": ({"num_leaves": 63, "learning_rate": 0.05}, 300),
    "binary 15 leaves x 200 at 0.05": ({"num_leaves": 15, "learning_rate": 0.05}, 200),
    # the weights are |log ratio| (~0.01-0.5), so a leaf's hessian sum is small and an L2 of
    # 1.0 shrinks small pockets (e.g. rr M = 1, N = 8192, cuBLAS 4-5% ahead) to nothing
    "binary 31 leaves x 60 at 0.2, L2 0.1": ({"lambda_l2": 0.1}, 60),
    "binary 31 leaves x 60 at 0.2, L2 0.01": ({"lambda_l2": 0.01}, 60),
    "binary 31 leaves x 60 at 0.2, L2 0.01, min leaf 5": ({"lambda_l2": 0.01,
                                                          "min_data_in_leaf": 5}, 60),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--out", default="benchmarks/results/vendor_gate_oof.json")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    res, masks = recipe_gate_inputs(args.model)
    sc = res.scored
    x = gate.problem_matrix(sc.x[sc.starts])

    def score(keys):
        t = metrics.per_problem(sc.problem_index, sc.tflops, keys)["efficiency"].to_numpy()
        return {"mean": float(t.mean()), "p10": float(np.percentile(t, 10)),
                "min": float(t.min())}

    y, has = gate.problem_outcomes(sc.problem_index, sc.config_ids, sc.tflops, res.keys)
    out = {"model": args.model, "problems": int(sc.n_problems), "ranker": score(res.keys),
           "every_call_right": score(gate.apply(sc.problem_index, sc.config_ids, res.keys,
                                                gate.right_calls(y, has))),
           "variants": {}}
    print("ranker", out["ranker"], "\nevery call right", out["every_call_right"], flush=True)
    for name, (params, rounds) in VARIANTS.items():
        runs = []
        for seed in range(args.seeds):
            raw, _, _ = gate.out_of_fold(sc.problem_index, sc.config_ids, sc.tflops, res.keys,
                                         x, masks, seed, params=params, rounds=rounds)
            runs.append(score(gate.apply(sc.problem_index, sc.config_ids, res.keys, raw)))
        out["variants"][name] = runs
        print(name, [f"{r['mean']:.4f}/{r['p10']:.4f}" for r in runs], flush=True)
    # a regression of the log ratio instead, called at 0
    import lightgbm as lgb

    reg = []
    for seed in range(args.seeds):
        raw = np.full(len(y), np.nan)
        for tr, te in masks:
            tr, te = tr & has, te & has
            b = lgb.train(dict(gate.GATE_PARAMS, objective="huber", alpha=0.1, seed=seed,
                               num_leaves=63, learning_rate=0.05),
                          lgb.Dataset(x[tr], y[tr], params={"verbose": -1}), 300)
            raw[te] = b.predict(x[te])
        reg.append(score(gate.apply(sc.problem_index, sc.config_ids, res.keys, raw)))
    out["variants"]["huber regression of log ratio, 63 leaves x 300 at 0.05"] = reg
    print("huber", [f"{r['mean']:.4f}/{r['p10']:.4f}" for r in reg], flush=True)
    write_json(args.out, out)


if __name__ == "__main__":
    main()
