"""Can the vendor gate fit a small pocket without losing out of fold? (CPU, ~2 + 1.5 min a variant)

Why: on the LLM suite the heuristic's one row below 0.97x torch.matmul is rr 1 x 8192 x 8192
(a split-K pick, 0.95x; BENCHMARKS "Session 40"), and the training data around it says cuBLAS:
on the rr problems at M <= 2 with N = 8192 cuBLAS beats every Triton config by 3-8%, yet the
shipped gate, fitted on them, calls Triton there (1 x 8192 x 9216: raw -0.28). Those are ~8
problems, fewer than the gate's ``min_data_in_leaf`` of 10, so no leaf can hold them alone.
This re-trains the shipped bf16 recipe's ranker out of fold, then per gate variant: the gated
ranking out of fold (mean / P10 / min efficiency, three seeds), and the gate fitted on every
problem (as shipped) with its raw score on the pocket's training problems (> 0: cuBLAS).
Session 40 varied the leaf size (no help); session 41 found the L2 was what held the pocket
back, and varied rounds and leaves around L2 0.1 (BENCHMARKS "Session 41";
`benchmarks/results/gate_pocket_s41.json`, `gate_pocket_rounds_s41.json`).

    PYTHONPATH=src python benchmarks/gate_pocket.py [--model models/gemm_bf16_h200] [--out FILE]
        [--seeds 3] [--variants NAME ...]
"""

import argparse

import numpy as np

from tilepick.data.io import write_json
from tilepick.features import FEATURE_INDEX
from tilepick.features.columns import LAYOUT_CODES
from tilepick.model import gate, metrics
from tilepick.model.evaluate import recipe_gate_inputs

# each variant names its L2: GATE_PARAMS' default moved from 1 to 0.1 in session 41, and the
# session-40/41 figures must stay reproducible ("rounds" is the boosting rounds, not a param)
VARIANTS = {
    "L2 1, min_data_in_leaf 10 (shipped until session 41)": {"lambda_l2": 1.0},
    "L2 1, min_data_in_leaf 5": {"lambda_l2": 1.0, "min_data_in_leaf": 5},
    "L2 1, min_data_in_leaf 3": {"lambda_l2": 1.0, "min_data_in_leaf": 3},
    # session 41: the weights are |log ratio| (~0.01-0.1 in the pocket), so a leaf of ten
    # pocket problems has a hessian sum of ~0.1 against lambda_l2 = 1: its value is shrunk
    # ~10x whatever the leaf size. A smaller L2 lets small-margin pockets be fitted.
    "L2 0.1 (shipped since session 41)": {"lambda_l2": 0.1},
    "L2 0.01": {"lambda_l2": 0.01},
    "L2 0.01, min_data_in_leaf 5": {"lambda_l2": 0.01, "min_data_in_leaf": 5},
    "L2 0.1, 30 rounds": {"lambda_l2": 0.1, "rounds": 30},
    "L2 0.1, 120 rounds": {"lambda_l2": 0.1, "rounds": 120},
    "L2 0.1, 15 leaves": {"lambda_l2": 0.1, "num_leaves": 15},
    "L2 0.1, min_data_in_leaf 20": {"lambda_l2": 0.1, "min_data_in_leaf": 20},
}


def fit_args(variant: dict) -> dict:
    """``gate.fit``'s keyword arguments for a variant: its LightGBM params and rounds."""
    params = dict(variant)
    return {"params": params, "rounds": params.pop("rounds", gate.GATE_ROUNDS)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--out", default=None)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--variants", nargs="*", default=None, metavar="NAME",
                    help="run only these of VARIANTS (default: all; ~1.5 min each)")
    args = ap.parse_args()
    res, masks = recipe_gate_inputs(args.model)
    sc = res.scored
    first = sc.x[sc.starts]
    x = gate.problem_matrix(first)
    m, n, k = (first[:, FEATURE_INDEX[c]] for c in ("m", "n", "k"))
    layout = np.array(LAYOUT_CODES)[first[:, FEATURE_INDEX["layout_code"]].astype(int)]
    y, has = gate.problem_outcomes(sc.problem_index, sc.config_ids, sc.tflops, res.keys)
    pocket = np.flatnonzero((layout == "rr") & (m <= 2) & (n == 8192) & has)
    shapes = [f"{int(m[i])}x{int(n[i])}x{int(k[i])}" for i in pocket]

    def score(keys):
        t = metrics.per_problem(sc.problem_index, sc.tflops, keys)["efficiency"].to_numpy()
        return {"mean": float(t.mean()), "p10": float(np.percentile(t, 10)),
                "min": float(t.min())}

    out = {"model": args.model, "problems": int(sc.n_problems), "ranker": score(res.keys),
           "pocket": dict(zip(shapes, np.exp(y[pocket]).tolist())), "variants": {}}
    print("pocket (cuBLAS / the ranker's first Triton, out of fold):", out["pocket"], flush=True)
    for name, params in VARIANTS.items():
        if args.variants and name not in args.variants:
            continue
        runs = []
        for seed in range(args.seeds):
            raw, _, _ = gate.out_of_fold(sc.problem_index, sc.config_ids, sc.tflops, res.keys,
                                         x, masks, seed, **fit_args(params))
            runs.append(score(gate.apply(sc.problem_index, sc.config_ids, res.keys, raw)))
        fitted = gate.fit(x[has], y[has], 0, **fit_args(params))
        in_sample = fitted.predict(x[pocket], raw_score=True)
        out["variants"][name] = {"out_of_fold": runs,
                                 "pocket_raw_in_sample": dict(zip(shapes, in_sample.tolist()))}
        print(name, [f"{r['mean']:.4f}/{r['p10']:.4f}/{r['min']:.3f}" for r in runs],
              "pocket in sample:", np.round(in_sample, 2).tolist(), flush=True)
    if args.out:
        write_json(args.out, out)


if __name__ == "__main__":
    main()
