"""Validation efficiency of models on the problems a problem list names, and on the rest (CPU).

Session 28: the 29 bf16 validation problems gemm.gemv_t serves against the other 266, per
model, each efficiency as `tilepick validate` scores it (inside the latest pass).

    python benchmarks/analysis_s28/served_validation.py MODEL [MODEL ...]

Session 29: ``--rr LIST[,LIST] --rc LIST[,LIST]`` names other problem lists (the problems the
rr change of gemm.gemv_t and gemm.gemv_t_splitk serve).
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from paired_validation import efficiencies  # noqa: E402

from tilepick.bench.shapes import resolve_problems  # noqa: E402

SETS = {"data/gemm/bf16/h200/validation": "benchmarks/problems/validation_rr_bf16_gemv_t.jsonl",
        "data/gemm/bf16/h200/validation_rc": "benchmarks/problems/validation_rc_bf16_gemv_t.jsonl"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="+")
    ap.add_argument("--rr", default=SETS["data/gemm/bf16/h200/validation"])
    ap.add_argument("--rc", default=SETS["data/gemm/bf16/h200/validation_rc"])
    args = ap.parse_args()
    models = args.models
    for data, listed in zip(SETS, (args.rr, args.rc)):
        keys = {p.key() for f in listed.split(",") for p in resolve_problems(f)}
        res = {m: efficiencies(m, data) for m in models}
        for m in models:
            served = [res[m][k][0] for k in keys if k in res[m]]
            rest = [v[0] for k, v in res[m].items() if k not in keys]
            print(f"{data} {m}: {len(served)} served, mean {np.mean(served):.3f} min "
                  f"{np.min(served):.3f}; the other {len(rest)} mean {np.mean(rest):.4f}")
        for k in sorted(keys):
            print("  ", k, "  ".join(f"{res[m][k][0]:.3f} {res[m][k][1]}" for m in models))


if __name__ == "__main__":
    main()
