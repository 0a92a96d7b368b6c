"""Validation efficiency of models on the problems a problem list names, and on the rest (CPU).

Session 28: the 29 bf16 validation problems gemm.gemv_t serves against the other 266, per
model, each efficiency as `tilepick validate` scores it (inside the latest pass).

    python benchmarks/analysis_s28/served_validation.py MODEL [MODEL ...]
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from paired_validation import efficiencies  # noqa: E402

from tilepick.bench.shapes import resolve_problems  # noqa: E402

SETS = {"data/gemm/bf16/h200/validation": "benchmarks/problems/validation_rr_bf16_gemv_t.jsonl",
        "data/gemm/bf16/h200/validation_rc": "benchmarks/problems/validation_rc_bf16_gemv_t.jsonl"}


def main():
    models = sys.argv[1:]
    for data, listed in SETS.items():
        keys = {p.key() for p in resolve_problems(listed)}
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
