"""Is a model's drop when the held-out-weight problems leave its training leakage or chaos?
(CPU, ~5 min a run for fp8.)

Why: the fp8 model (session 28) trained on 8 pooled bf16 problems on held-out weight shapes.
Re-trained on its manifest's files exactly as shipped it reproduces every validation pick;
without those 8 it reads ~1.9 points lower. Either those 8 problems teach it something about
the held-out weights (leakage: the shipped figure is not a held-out figure), or any 8 problems
left out move it that much (chaos: the shipped model is a lucky draw). Here the recipe is
re-trained with the held-out problems *kept* and instead the same number of other pooled
problems (random, not on held-out weights) left out; each run is scored on the validation set.

    python benchmarks/analysis_s35/holdout_or_chaos.py [--model models/gemm_fp8e4m3_h200]
        [--runs 3] [--count 8] [--out FILE.json]
"""

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

from tilepick.bench.shapes import held_out_weights
from tilepick.model.evaluate import recipe_options

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from perturbation_band import retrain_scores  # noqa: E402 (the benchmarks' shared loop)


def pooled_off_held(count: int, seed: int):
    """A chooser: ``count`` random pooled-dtype problems off held-out weights (the held-out
    ones stay)."""
    held = held_out_weights()

    def choose(ds):
        f = ds.frame
        pooled = f[(f["dtype"] != ds.dtype)]
        on_held = np.array([(n, k) in held for n, k in zip(pooled["n"], pooled["k"])])
        keys = np.unique(pooled.loc[~on_held, "problem_key"])
        return set(np.random.default_rng(seed).choice(keys, count, replace=False))
    return choose


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_fp8e4m3_h200")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--out")
    args = ap.parse_args()
    opts = dataclasses.replace(recipe_options(args.model), hold_out=False)
    choosers = [pooled_off_held(args.count, seed=2000 + r) for r in range(args.runs)]
    runs = [100 * g["validation"] for g in retrain_scores(args.model, opts, choosers,
                                                           sets=("validation",))]
    out = {"model": args.model, "count": args.count, "runs": runs,
           "mean": float(np.mean(runs)), "sd": float(np.std(runs, ddof=1)) if len(runs) > 1
           else None}
    print(json.dumps(out))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
