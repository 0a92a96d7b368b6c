"""Session 52: the out-of-fold effect of `train_long_k_misaligned` (rr, cc, cr) by layout and on
the long-K small-output class, from `benchmarks/extra_data_oof.py`'s per-problem gated
efficiencies (same problems and folds with and without the extra data). CPU, seconds.

    python benchmarks/analysis_s52/oof_long_k.py FILE.json.gz

The JSON comes from `python benchmarks/extra_data_oof.py --model models/gemm_bf16_h200 --extra
data/gemm/bf16/h200/train_long_k_misaligned_{rr,cc,cr} --out FILE` (~25 min on 2 cores).
"""

import json
import sys

import numpy as np

from tilepick.data.io import open_text
from tilepick.problem import GemmProblem

CLASSES = {
    "": lambda p: True,
    " N <= 16, K >= 16384": lambda p: p.n <= 16 and p.k >= 16384,
    " M x N < 2^16, K >= 16384": lambda p: p.m * p.n < 65536 and p.k >= 16384,
    " K < 16384": lambda p: p.k < 16384,
}


def rows(a: dict, b: dict, keep) -> str | None:
    keys = [k for k in a if k in b and keep(GemmProblem.from_key(k))]
    if len(keys) < 2:
        return None
    x, y = np.array([a[k] for k in keys]), np.array([b[k] for k in keys])
    d = y - x
    se = d.std(ddof=1) / np.sqrt(len(d))
    return (f"{len(keys)} | {100 * x.mean():.2f} | {100 * y.mean():.2f} | "
            f"{100 * d.mean():+.2f} +- {100 * se:.2f}")


def main(path):
    with open_text(path) as f:
        d = json.load(f)
    a, b = d["base"]["gated"]["per_problem"], d["with_extra"]["gated"]["per_problem"]
    print("| subset | problems | without | with | difference |\n|---|---|---|---|---|")
    for layout in (None, "rr", "rc", "cc", "cr"):
        for name, keep in CLASSES.items():
            if layout is None and name:
                continue
            line = rows(a, b, lambda p: (layout is None or p.layout == layout) and keep(p))
            if line:
                print(f"| {layout or 'all'}{name} | {line} |")
    extra = d["extra_out_of_fold"]["gated"]
    print(f"extra problems out of fold (gated): {extra['problems']} problems, mean "
          f"{100 * extra['mean']:.2f}, p10 {100 * extra['p10']:.1f}, by layout "
          f"{ {k: round(100 * v['mean'], 2) for k, v in extra['by_layout'].items()} }")


if __name__ == "__main__":
    main(*sys.argv[1:])
