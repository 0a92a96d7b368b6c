"""Would a vendor gate biased towards cuBLAS serve issue 5's suite better? Judged on the held-out
validation sets, not on the suite (CPU, minutes).

Why: the suite rows that sit under 1.0 include gate calls the ranker calls a tie (rr 16 x 8192 x
8192 and 16 x 4096 x 4096: the pick and cuBLAS at the same predicted speed after the gate moved
cuBLAS to second). Adding ``b`` to the gate's raw score (> 0: cuBLAS first) runs cuBLAS on more
such calls. What that costs or gains is read where every candidate was measured: the shipped
model's first pick on each validation problem, scored inside its re-timing pass, as mean
efficiency against the best and as geomean speed over cuBLAS (torch.matmul) with the rows
under 0.97x of it.

    python benchmarks/analysis_s58/gate_bias.py [--bias 0,0.5,1,2] [--sets validation,validation_rc]
"""

import argparse
import sys
from pathlib import Path

import numpy as np

from tilepick.config import VENDOR_FAMILIES
from tilepick.model import metrics
from tilepick.model.dataset import load
from tilepick.model.predictor import Predictor
from tilepick.model.validate import model_scores

VENDOR = VENDOR_FAMILIES[0]


def biased(pred: Predictor, b: float) -> None:
    """Shift the gate column of every ensemble prediction by ``b`` (in place on ``pred``)."""
    base = pred.ensemble.predict   # the bound method, before the instance attribute hides it
    col = pred.gate_column

    def predict(x, *a, **kw):
        out = np.array(base(x, *a, **kw), dtype=float)
        out[:, col] += b
        return out
    pred.ensemble.predict = predict
    pred.clear_memo()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--bias", default="0,0.5,1,2")
    ap.add_argument("--sets", default="validation,validation_rc,validation_cc,validation_cr")
    args = ap.parse_args()
    for name in args.sets.split(","):
        path = Path("data/gemm/bf16/h200") / name
        pred = Predictor(Path(args.model))
        ds = load([path], pred.dtype, pred.arch, within_pass=True)
        vendor_rows = ds.config_ids == VENDOR
        cub = np.full(ds.n_problems, np.nan)
        cub[ds.problem_index[vendor_rows]] = ds.tflops[vendor_rows]
        for b in map(float, args.bias.split(",")):
            pred = Predictor(Path(args.model))
            biased(pred, b)
            table = metrics.per_problem(ds.problem_index, ds.tflops, model_scores(pred, ds))
            p = table["problem"].to_numpy()
            pick = ds.tflops[table["pick_row"].to_numpy()]
            vs = pick / cub[p]
            ok = np.isfinite(vs)
            picks_vendor = (ds.config_ids[table["pick_row"].to_numpy()] == VENDOR).mean()
            print(f"{name:14s} bias {b:4.1f}: mean efficiency {table['efficiency'].mean():.2%}, "
                  f"geomean over cuBLAS {np.exp(np.log(vs[ok]).mean()):.4f} on {ok.sum()}, "
                  f"under 0.97x {(vs[ok] < 0.97).sum()}, cuBLAS picked {picks_vendor:.0%}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
