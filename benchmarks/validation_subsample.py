"""Does scoring on sampled candidates flatter a model? (CPU, ~1 min)

Training problems carry ~60-150 measured configs, validation problems all of theirs (~700-800),
and out-of-fold figures have twice disagreed with validation (BENCHMARKS, session 12). This
scores the shipped model on the validation sets with each problem's candidates cut to cuBLAS
plus N others drawn at random (5 seeds per N), against all of them.

    python benchmarks/validation_subsample.py [--model models/gemm_bf16_h200] [--out FILE.json]
"""

import argparse
import json
from pathlib import Path

import numpy as np

from tilepick.model import metrics
from tilepick.model.dataset import load
from tilepick.model.predictor import Predictor
from tilepick.model.validate import model_scores
from tilepick.data.io import write_json

VALIDATION = ("data/gemm/bf16/h200/validation", "data/gemm/bf16/h200/validation_rc")


def kept_rows(ds, n: int, rng) -> np.ndarray:
    keep = np.zeros(len(ds), bool)
    for lo, size in zip(ds.starts, ds.sizes):
        idx = np.arange(lo, lo + size)
        vendor = ds.config_ids[idx] == "gemm.cublas"
        keep[idx[vendor]] = True
        others = idx[~vendor]
        keep[rng.choice(others, min(n, len(others)), replace=False)] = True
    return keep


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    pred = Predictor(Path(args.model))
    out = {"model": args.model}
    for data in VALIDATION:
        ds = load([data], pred.dtype, pred.arch)
        scores = model_scores(pred, ds)
        eff = metrics.per_problem(ds.problem_index, ds.tflops, scores)["efficiency"]
        res = {"all": {"mean": float(eff.mean()), "p10": float(np.percentile(eff, 10)),
                       "median_candidates": int(np.median(ds.sizes))}}
        for n in (60, 100, 150):
            runs = []
            for seed in range(5):
                k = kept_rows(ds, n, np.random.default_rng(seed))
                e = metrics.per_problem(ds.problem_index[k], ds.tflops[k],
                                        scores[k])["efficiency"]
                runs.append({"mean": float(e.mean()), "p10": float(np.percentile(e, 10))})
            res[str(n)] = runs
        out[data] = res
        print(data, json.dumps(res), flush=True)
    if args.out:
        write_json(args.out, out)


if __name__ == "__main__":
    main()
