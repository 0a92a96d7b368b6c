"""When the vendor gate demotes cuBLAS from the ranker's first place and the cuBLASLt entry
model would run an entry instead of cuBLAS, which should run first: the Triton config the gate
promoted, or that entry? (CPU, ~1 min; session 52.)

Why: on the suite's rc 128 x 28672 x 4096 the shipped model's ranker put cuBLAS first, the gate
(cuBLAS at least as fast as the best Triton config? no) moved a tma_persistent config ahead
(0.98x torch.matmul), and the entry model's pick (1.05x) went second, behind it.

Data: problems with both a Triton measurement (a validation set: held out from the main
model) and a cuBLASLt entry probe that the entry model never trained on
(``cublaslt_probe_validation_rr``). Speeds are over torch.matmul: a Triton pick's as
tflops(pick) / tflops(cuBLAS) in the validation data (its re-timing passes), an entry's as its
probe's paired ratio to torch.matmul (another run: the two ratios share no round).

    python benchmarks/analysis_s52/gate_lt_rule.py [--model DIR] [--out F.json]
"""

import argparse
import json

import numpy as np
import pandas as pd

from tilepick.config import VENDOR_FAMILIES
from tilepick.dispatch.dispatcher import load_lt_ranker
from tilepick.features import lt_entries
from tilepick.model.dataset import load
from tilepick.model.lt_ranker import probe_frame
from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem

CUBLAS = VENDOR_FAMILIES[0]


def lt_choice(g: pd.DataFrame, ranker) -> tuple[float, bool, str]:
    """(the top-scored entry's speed over torch, whether it runs instead of torch, its name)."""
    s = ranker.booster.predict(lt_entries.compute(g))
    top, first = int(np.argmax(s)), int(np.argmin(g["rank"].to_numpy()))
    return float(g["over_torch"].iloc[top]), bool(s[top] - s[first] > ranker.delta), \
        str(g["entry"].iloc[top])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="models/gemm_bf16_h200")
    ap.add_argument("--data", default="data/gemm/bf16/h200/validation")
    ap.add_argument("--probe",
                    default="benchmarks/results/cublaslt_probe_validation_rr_h200_e2492d3.json.gz")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    pred = Predictor(args.model)
    ranker = load_lt_ranker("bf16", pred.arch)
    ds = load([args.data], pred.dtype, pred.arch, within_pass=True)
    f = ds.frame.assign(tflops=ds.tflops)
    speed = f.set_index(["problem_key", "config_id"])["tflops"]
    probe = probe_frame(args.probe)
    gate = pred.gate_column
    rows = []
    for spec, g in probe.groupby("spec", sort=False):
        dims, layout = spec.split(":")
        m, n, k = map(int, dims.split("x"))
        p = GemmProblem(m, n, k, layout=layout)
        key = p.key()
        if (key, CUBLAS) not in speed.index:
            continue
        gated = pred.rank(p)[0][0]
        pred.gate_column = None   # the ranker's own order
        pred.clear_memo()
        raw = pred.rank(p)[0][0]
        pred.gate_column = gate
        pred.clear_memo()
        lt_speed, ahead, entry = lt_choice(g, ranker)
        cub = speed[(key, CUBLAS)]
        pick = speed.get((key, gated), np.nan) / cub
        rows.append({"problem": key, "ranker_first": raw, "gated_first": gated,
                     "demoted": raw == CUBLAS and gated != CUBLAS, "lt_ahead": ahead,
                     "lt_entry": entry, "lt_over_torch": lt_speed,
                     "pick_over_torch": float(pick)})
    d = pd.DataFrame(rows)
    both = d[d.demoted & d.lt_ahead]
    geo = lambda s: float(np.exp(np.log(s).mean())) if len(s) else None  # noqa: E731
    summary = {"problems": len(d), "demoted": int(d.demoted.sum()),
               "lt_ahead": int(d.lt_ahead.sum()), "demoted_and_lt_ahead": len(both),
               "geomean_gated_pick": geo(both.pick_over_torch),
               "geomean_lt_entry": geo(both.lt_over_torch),
               "lt_entry_faster": int((both.lt_over_torch > both.pick_over_torch).sum())}
    print(json.dumps(summary, indent=1))
    print(both.to_string())
    print(d[d.demoted].to_string())
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"summary": summary, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
