"""How far does a small change of the training data move a model's validation score? (CPU,
~4 min a run.)

Why: session 33 found that leaving 8 of ~8,850 training problems out moved the bf16 rr
validation mean by +0.35 and adding 240 moved it by -0.34, with the changed picks all over
the validation set, while three LightGBM seeds of one data set agree within 0.1. Ship
decisions are paired differences of that size, and the paired +- (the validation problems'
sampling) does not include this. Here the shipped recipe is re-trained R times with a random
``--drop`` fraction of its training problems left out (a different draw each run), and every
run is scored on the validation sets: the spread of those scores is the band a difference must
clear to be more than the data's luck.

    python benchmarks/perturbation_band.py [--model models/gemm_bf16_h200] [--runs 4]
        [--drop 0.01] [--out FILE.json]
"""

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np

from tilepick.model import train as train_mod
from tilepick.model.artifacts import read_json
from tilepick.model.dataset import build
from tilepick.model.evaluate import recipe_options
from tilepick.model.validate import validate

VALIDATION = {"bf16": ("validation", "validation_rc", "validation_cc", "validation_cr"),
              "fp16": ("validation",), "fp8e4m3": ("validation",)}


def dropping(load, choose):
    """``dataset.load`` with the problems ``choose(dataset)`` names left out."""
    def wrapped(*args, **kwargs):
        ds = load(*args, **kwargs)
        gone = choose(ds)
        kept = ds.frame[~ds.frame["problem_key"].isin(gone)].reset_index(drop=True)
        return build(kept, ds.hw, ds.files, ds.dtype, ds.held_out_problems)
    return wrapped


def random_fraction(fraction: float, seed: int):
    """A chooser: a random ``fraction`` of the served dtype's problems."""
    def choose(ds):
        keys = np.unique(ds.frame.loc[ds.frame["dtype"] == ds.dtype, "problem_key"])
        return set(np.random.default_rng(seed).choice(keys, round(fraction * len(keys)),
                                                      replace=False))
    return choose


def retrain_scores(model, opts, choosers, sets=None, log=print) -> list[dict]:
    """The model's recipe (its manifest's files, ``opts``) re-trained once per chooser with the
    problems it names left out; each run's validation means by set ({set: mean})."""
    manifest = read_json(Path(model) / "manifest.json")
    dtype, arch = manifest["dtype"], manifest["arch"]
    files = [d["path"] for d in manifest["data"]]
    original = train_mod.load
    runs = []
    for r, choose in enumerate(choosers):
        train_mod.load = dropping(original, choose)
        try:
            with tempfile.TemporaryDirectory() as tmp:
                train_mod.train(files, dtype, arch, Path(tmp) / "m", opts)
                got = {}
                for s in sets or VALIDATION[dtype]:
                    rep = validate(Path(tmp) / "m", [f"data/gemm/{dtype}/{arch}/{s}"])
                    got[s] = rep["methods"]["model top-1"]["mean"]
        finally:
            train_mod.load = original
        runs.append(got)
        log(f"run {r}: " + ", ".join(f"{s} {100 * v:.2f}" for s, v in got.items()))
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--drop", type=float, default=0.01)
    ap.add_argument("--out")
    args = ap.parse_args()
    choosers = [random_fraction(args.drop, seed=1000 + r) for r in range(args.runs)]
    runs = retrain_scores(args.model, recipe_options(args.model), choosers)
    band = {s: {"mean": float(np.mean([g[s] for g in runs])),
                "sd": float(np.std([g[s] for g in runs], ddof=1)) if len(runs) > 1 else None,
                "min": float(min(g[s] for g in runs)), "max": float(max(g[s] for g in runs))}
            for s in runs[0]}
    out = {"model": args.model, "drop": args.drop, "runs": runs, "band": band}
    print(json.dumps(band, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
