"""What the vendor gate learns at M = 1: its labels (cuBLAS against the out-of-fold ranker's
first Triton pick) beside cuBLAS against the best Triton config measured (CPU, ~4 min).

Why: sessions 62-63 traced the gate's cuBLAS calls on the suite's decode rows to its labels at
M = 1, where `train_gemv_n` measured 32 sampled configs of `gemm.gemv_n_splitk` a problem. The
out-of-fold ranking only ranks measured rows, so with few of them its first pick can be a poor
one, and the label says cuBLAS where a better-measured problem would not. This counts, on the
rr M = 1 training problems with both, how often each comparison favours cuBLAS, by weight
size: the gap between the two columns is what the family's whole space (session 63's device
call) can close, at most.

    python benchmarks/analysis_s63/decode_labels.py [--model work/s61/m61]
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_dead_zone import OutOfFold  # noqa: E402

from tilepick.model import gate  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="work/s61/m61")
    args = ap.parse_args()
    oof = OutOfFold(args.model)
    sc = oof.sc
    pi, ids, tf = sc.problem_index, sc.config_ids, sc.tflops
    y_oof, has = gate.problem_outcomes(pi, ids, tf, oof.res.keys)
    y_best, _ = gate.problem_outcomes(pi, ids, tf, tf)   # a ranker that knew the times
    first = sc.frame.iloc[sc.starts]
    family = (sc.frame["family"] == "gemm.gemv_n_splitk").groupby(pi).sum().to_numpy()
    sel = has & (first["m"].to_numpy() == 1) & (first["layout"].to_numpy() == "rr")
    nk = (first["n"].to_numpy() * first["k"].to_numpy()).astype(float)
    bins = [(0, 2 ** 22, "N x K < 4M"), (2 ** 22, 2 ** 25, "4M-32M"), (2 ** 25, np.inf, ">= 32M")]
    print(f"{'rr, M = 1':14} {'problems':>8} {'family cfgs':>11} {'label: cuBLAS':>14} "
          f"{'best: cuBLAS':>13} {'median label':>13} {'median best':>12}")
    for lo, hi, name in bins + [(0, np.inf, "all")]:
        s = sel & (nk >= lo) & (nk < hi)
        if not s.any():
            continue
        print(f"{name:14} {int(s.sum()):8d} {np.median(family[s]):11.0f} "
              f"{(y_oof[s] > 0).mean():14.2f} {(y_best[s] > 0).mean():13.2f} "
              f"{np.median(y_oof[s]):13.3f} {np.median(y_best[s]):12.3f}")


if __name__ == "__main__":
    main()
