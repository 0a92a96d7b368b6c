"""The cuBLASLt entry model's score gap re-chosen with an entry-run penalty (CPU, minutes).

Why: the probes time an entry beside torch.matmul in a loop of their own; in the LLM suite the
same entries read a median 0.6% below their probe labels (BENCHMARKS "Session 45", 54 rows,
``analysis_s45/entry_rows.py``), and the rows at the bottom of the suite are entry picks the
probes call near-ties. If an entry run costs that much in context, a near-tie is a loss and the
gap that maximises the geomean may be larger than the one chosen on the probes' own labels.
This scores each gap with every run entry's label multiplied by (1 - penalty): out of fold on
the shipped model's training probes (5 GroupKFold folds by shape, the shipped seeds), and on
the held-out probes by the shipped model.

    python benchmarks/analysis_s64/lt_context_penalty.py [--penalties 0,0.003,0.006,0.01]
"""

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from tilepick.features import lt_entries
from tilepick.model import lt_ranker

MODEL = Path("models/cublaslt_bf16_h200")
HELD_OUT = {"bf16 rr validation": "benchmarks/results/cublaslt_probe_validation_rr_h200_e2492d3.json.gz",
            "fp16 held-out": "benchmarks/results/cublaslt_probe_fp16_heldout_h200_a2593f7.json.gz",
            "suite": "benchmarks/results/cublaslt_probe_suite_h200_b12542b.json.gz"}


def scored(df, scores, delta, penalty):
    ch = lt_ranker.choices(df, scores, delta)
    ran = ch["pick"] != lt_ranker.TORCH
    chosen = np.where(ran, ch["chosen"] * (1 - penalty), 1.0)
    return float(np.exp(np.log(chosen).mean())), int((chosen < 0.97).sum()), float(ran.mean())


def table(name, df, scores, penalties):
    print(f"\n{name} ({df['spec'].nunique()} shapes): geomean over torch.matmul / shapes under "
          f"0.97x / share run as an entry, by gap (columns) and penalty (rows)")
    print("penalty  " + "  ".join(f"{d:>20}" for d in lt_ranker.DELTAS))
    for p in penalties:
        cells = [scored(df, scores, d, p) for d in lt_ranker.DELTAS]
        best = max(c[0] for c in cells)
        print(f"{p:7.3f}  " + "  ".join(
            f"{'*' if c[0] == best else ' '}{c[0]:.4f} {c[1]:3d} {c[2]:5.2f}" for c in cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--penalties", default="0,0.003,0.006,0.01")
    args = ap.parse_args()
    penalties = [float(x) for x in args.penalties.split(",")]
    meta = json.loads((MODEL / lt_ranker.META_FILE).read_text())
    train = pd.concat([lt_ranker.probe_frame(d["path"]) for d in meta["data"]],
                      ignore_index=True)
    table("out of fold, training probes", train, lt_ranker.out_of_fold(train), penalties)
    model = lt_ranker.LtRanker.load(MODEL)
    for name, path in HELD_OUT.items():
        df = lt_ranker.probe_frame(path)
        table(name, df, model.booster.predict(lt_entries.compute(df)), penalties)


if __name__ == "__main__":
    main()
