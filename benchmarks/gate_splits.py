"""Does averaging the vendor gate's labels over fold splits make the shipped recipe steadier?
(CPU; ~3-4 min a training with 3 splits, ~70 s with 1.)

The ranker of ``tilepick train`` does not depend on ``--seed`` (LightGBM's own seed is fixed in
the parameters); the fold split does, and through it the vendor gate, which learns from the
ranker's out-of-fold picks under that one split. Session 17 saw the validation minimum move
by up to 15 points between fold seeds. Here the shipped recipe is retrained for each fold seed
and each ``--gate-splits`` value, on the model's manifest files plus ``--extra`` ones, and
each model is validated on the exhaustive sets: the spread over seeds is the recipe's noise.

    python benchmarks/gate_splits.py --seeds 0 1 2 --splits 1 3 \
        [--extra data/gemm/bf16/h200/train_gemv/chunk-002.parquet ...] --out FILE.json

``--lgb-seeds 1 2`` retrains with LightGBM's own seed changed instead (the ranker's noise;
the recipe's seed when not given).
"""

import argparse
import itertools
import json
import tempfile
import time
from pathlib import Path

from tilepick.data.io import write_json
from tilepick.model.evaluate import recipe_options
from tilepick.model.train import train
from tilepick.model.validate import validate

SUMMARY = ("mean", "p10", "min")


def brief(report: dict) -> dict:
    m = report["methods"]
    top1, top4 = m["model top-1"], m["model top-4 benchmarked"]
    return {**{k: round(100 * top1[k], 2) for k in SUMMARY},
            "top4_mean": round(100 * top4["mean"], 2),
            "outside_pass": report["model_top1_outside_pass"],
            "worst": report["worst"][:3]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200", help="whose recipe and files")
    ap.add_argument("--extra", nargs="*", default=[], help="further training files")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--splits", nargs="+", type=int, default=[1, 3])
    ap.add_argument("--lgb-seeds", nargs="+", type=int, default=[None],
                    help="LightGBM seeds (default: the recipe's)")
    ap.add_argument("--validation", nargs="+", default=["data/gemm/bf16/h200/validation",
                                                        "data/gemm/bf16/h200/validation_rc"])
    ap.add_argument("--keep", default=None, help="keep the models under this folder")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    manifest = json.loads((Path(args.model) / "manifest.json").read_text())
    files = [d["path"] for d in manifest["data"]] + list(args.extra)
    base = recipe_options(args.model)
    rows = []
    keep = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="gate_splits_"))
    for lgb_seed, splits, seed in itertools.product(args.lgb_seeds, args.splits, args.seeds):
        opts = recipe_options(args.model)
        opts.seed, opts.gate_splits, opts.vendor_gate = seed, splits, "auto"
        if lgb_seed is not None:
            opts.params = dict(opts.params, seed=lgb_seed)
        out = keep / (f"splits{splits}_seed{seed}"
                      + ("" if lgb_seed is None else f"_lgb{lgb_seed}"))
        t0 = time.perf_counter()
        cvm = train(files, manifest["dtype"], manifest["arch"], out, opts)
        row = {"gate_splits": splits, "seed": seed, "lgb_seed": lgb_seed,
               "train_s": round(time.perf_counter() - t0, 1),
               "gate_shipped": cvm["vendor_gate"]["shipped"],
               "oof_gated": {k: round(100 * cvm["vendor_gate"].get("gated", {}).get(k, 0), 2)
                             for k in SUMMARY},
               "oof_ranker": {k: round(100 * cvm["vendor_gate"].get("ranker", {}).get(k, 0),
                                       2) for k in SUMMARY}}
        for v in args.validation:
            row[Path(v).name] = brief(validate(out, [v]))
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items()}, default=str), flush=True)
        write_json(args.out, {"model": args.model, "files": files,
                              "recipe": {"objective": base.objective,
                                         "pool": list(base.pool)},
                              "rows": rows})


if __name__ == "__main__":
    main()
