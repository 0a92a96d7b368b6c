"""Where a model's validation loss sits: per problem, its pick and the best inside the latest
pass, and the loss (1 - efficiency) summed by (pick family, best family) and by M slice.

    python benchmarks/analysis_s34/loss_breakdown.py MODEL_DIR DATA_DIR [--worst N]

Why: after the 12-round passes of session 34 the noise ceiling is 99.6 on bf16 rr and the
model 97.9, so the loss left is the model's, not the measurement's; this says which calls
lose it.
"""
from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from tilepick.config import VENDOR_FAMILIES
from tilepick.model import metrics
from tilepick.model.dataset import load
from tilepick.model.predictor import Predictor
from tilepick.model.validate import model_scores


def breakdown(model_dir: str, data: str) -> pd.DataFrame:
    pred = Predictor(model_dir)
    ds = load([data], pred.dtype, pred.arch, within_pass=True)
    scores = model_scores(pred, ds)
    t = metrics.per_problem(ds.problem_index, ds.tflops, scores)
    fam = ds.frame["family"].to_numpy()
    cid = ds.frame["config_id"].to_numpy()
    first = ds.starts[t["problem"].to_numpy()]
    t["key"] = np.asarray(ds.problem_keys)[t["problem"].to_numpy()]
    t["m"] = ds.frame["m"].to_numpy()[first]
    t["pick"] = cid[t["pick_row"].to_numpy()]
    t["pick_family"] = fam[t["pick_row"].to_numpy()]
    best_rows = [ds.starts[p] + int(np.argmax(ds.tflops[ds.starts[p]:ds.starts[p] + ds.sizes[p]]))
                 for p in t["problem"]]
    t["best"] = cid[best_rows]
    t["best_family"] = fam[best_rows]
    t["loss"] = 1.0 - t["efficiency"]
    t["m_slice"] = [metrics.m_slice(int(m)) for m in t["m"]]
    t["call"] = [_call(p, b) for p, b in zip(t["pick_family"], t["best_family"])]
    return t


def _call(pick: str, best: str) -> str:
    """Which decision lost: the config inside the right family, the vendor call, or the
    family among Triton's."""
    pv, bv = pick in VENDOR_FAMILIES, best in VENDOR_FAMILIES
    if pick == best:
        return "same family" + (" (vendor)" if pv else "")
    if pv != bv:
        return "vendor picked, Triton best" if pv else "Triton picked, vendor best"
    return "vendor, the other vendor family best" if pv else "Triton, another Triton family best"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("data")
    ap.add_argument("--worst", type=int, default=25)
    a = ap.parse_args()
    t = breakdown(a.model, a.data)
    n = len(t)
    print(f"{n} problems, mean {100 * t.efficiency.mean():.2f}; loss points (sum of 1 - eff "
          f"over problems / n, x100) by group:")
    for by in (["call"], ["pick_family", "best_family"], ["m_slice"]):
        g = t.groupby(by)["loss"].agg(["count", "sum"])
        g["points"] = 100 * g["sum"] / n
        print(g.sort_values("points", ascending=False).drop(columns="sum").round(3)
              .head(15).to_string(), "\n")
    w = t.sort_values("efficiency").head(a.worst)
    print(w[["key", "efficiency", "pick", "best"]].round(3).to_string(index=False))


if __name__ == "__main__":
    main()
