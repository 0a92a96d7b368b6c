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
import tempfile
from pathlib import Path

import numpy as np

from tilepick.bench.shapes import held_out_weights
from tilepick.model import train as train_mod
from tilepick.model.artifacts import read_json
from tilepick.model.dataset import build
from tilepick.model.evaluate import recipe_options
from tilepick.model.validate import validate


def dropping_pooled(load, count: int, seed: int):
    """``dataset.load`` with ``count`` random pooled-dtype problems off held-out weights left
    out (the held-out ones stay)."""
    held = held_out_weights()

    def wrapped(*args, **kwargs):
        ds = load(*args, **kwargs)
        f = ds.frame
        pooled = f[(f["dtype"] != ds.dtype)]
        on_held = np.array([(n, k) in held for n, k in zip(pooled["n"], pooled["k"])])
        keys = np.unique(pooled.loc[~on_held, "problem_key"])
        gone = set(np.random.default_rng(seed).choice(keys, count, replace=False))
        kept = f[~f["problem_key"].isin(gone)].reset_index(drop=True)
        return build(kept, ds.hw, ds.files, ds.dtype, ds.held_out_problems)
    return wrapped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_fp8e4m3_h200")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--count", type=int, default=8)
    ap.add_argument("--out")
    args = ap.parse_args()
    manifest = read_json(Path(args.model) / "manifest.json")
    dtype, arch = manifest["dtype"], manifest["arch"]
    opts = dataclasses.replace(recipe_options(args.model), hold_out=False)
    files = [d["path"] for d in manifest["data"]]
    original = train_mod.load
    runs = []
    for r in range(args.runs):
        train_mod.load = dropping_pooled(original, args.count, seed=2000 + r)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                train_mod.train(files, dtype, arch, Path(tmp) / "m", opts)
                rep = validate(Path(tmp) / "m", [f"data/gemm/{dtype}/{arch}/validation"])
                runs.append(100 * rep["methods"]["model top-1"]["mean"])
        finally:
            train_mod.load = original
        print(f"run {r}: validation mean {runs[-1]:.2f}", flush=True)
    out = {"model": args.model, "count": args.count, "runs": runs,
           "mean": float(np.mean(runs)), "sd": float(np.std(runs, ddof=1)) if len(runs) > 1
           else None}
    print(json.dumps(out))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
