"""Where `gemm.cublas_repack` beats every other measured config, and how it reads against
cuBLAS (CPU; from the datasets).

Per folder, over the problems with a row of the family: on how many its time is below the best
of every other valid config (and by more than 3%), its largest such ratio, and its median
speed over cuBLAS's: the family's sweep rows against the best row of every other config, its
passes' rows included (each problem's fastest row of each side, as the top-up sweeps found
them; the validation numbers of W4 are scored inside the passes instead). ``--repack-rows
FILE`` takes the family's rows from that file instead (the first version's, which padded
leading dimensions only: ``benchmarks/results/repack_s31/ld_only/``); ``--model DIR`` also
counts the validation problems where that model picks the family (scored as `validate` does).

    python benchmarks/analysis_s31/repack_gains.py data/gemm/bf16/h200/train_cc ...
    python benchmarks/analysis_s31/repack_gains.py --repack-rows \
        benchmarks/results/repack_s31/ld_only/tcc.parquet data/gemm/bf16/h200/train_cc
"""

import argparse
import sys
from pathlib import Path

import pandas as pd

from tilepick.config import VENDOR_FAMILIES
from tilepick.data.io import read_frame
from tilepick.data.schema import RETIME_PREFIX

CUBLAS, REPACK = VENDOR_FAMILIES


def gains(folder: str, repack_rows: str | None = None) -> dict:
    df = read_frame(folder)
    df = df[df.valid & (df.time_ms > 0)]
    rep = read_frame(repack_rows) if repack_rows else df[df.config_id == REPACK]
    # the family's sweep rows (a later pass also re-timed some of them)
    rep = rep[rep.valid & (rep.time_ms > 0) & ~rep.sweep_id.str.startswith(RETIME_PREFIX)]
    rep = rep.groupby("problem_key").time_ms.min()
    others = df[df.config_id != REPACK]   # every other config's rows, passes included
    best = others.groupby("problem_key").time_ms.min()
    cublas = others[others.config_id == CUBLAS].groupby("problem_key").time_ms.min()
    j = pd.concat([rep.rename("rep"), best.rename("best"), cublas.rename("cublas")],
                  axis=1).dropna()
    over_best, over_cublas = j.best / j.rep, j.cublas / j.rep
    return {"folder": folder, "problems": len(j), "beats_best": int((over_best > 1).sum()),
            "beats_best_by_3pct": int((over_best > 1.03).sum()),
            "max_over_best": round(float(over_best.max()), 3),
            "median_over_cublas": round(float(over_cublas.median()), 3)}


def model_picks(model: str, folder: str) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from paired_validation import efficiencies

    picks = {k: e for k, (e, cid) in efficiencies(model, folder).items() if cid == REPACK}
    return {"folder": folder, "model_picks": len(picks),
            "picks_at_best": sum(e >= 1 - 1e-9 for e in picks.values()),
            "efficiency_min": round(min(picks.values()), 3) if picks else None}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--repack-rows", help="the family's rows from this file (one folder)")
    ap.add_argument("--model", help="also count this model's picks of the family")
    args = ap.parse_args()
    if args.repack_rows and len(args.folders) != 1:
        ap.error("--repack-rows goes with one folder")
    for folder in args.folders:
        print(gains(folder, args.repack_rows))
        if args.model:
            print(model_picks(args.model, folder))


if __name__ == "__main__":
    main()
