"""Session 46: the out-of-fold effect of `train_low_flop/` by layout and corner, from
`benchmarks/extra_data_oof.py`'s per-problem efficiencies (the gated model, as shipped, on the
same 8,861 bf16 problems and folds with and without the extra data). CPU, seconds.

    python benchmarks/analysis_s46/oof_subsets.py [benchmarks/results/extra_data_oof_low_flop_s46.json.gz]

The JSON comes from
`python benchmarks/extra_data_oof.py --extra data/gemm/bf16/h200/train_low_flop --out F`
(~5 min on 2 cores; run in session 46 with the session-41 model as `--model`; the shipped
model since gives the same base, its manifest's files less the extra folder, and options).
"""

import json
import sys

import numpy as np

from tilepick.data.io import open_text
from tilepick.problem import GemmProblem

SUBSETS = {
    "": lambda p: True,
    " <= 0.5 TFLOP": lambda p: p.flops <= 0.5e12,
    " <= 1 GFLOP": lambda p: p.flops <= 1e9,
    " N <= 16": lambda p: p.n <= 16,
}


def main(path="benchmarks/results/extra_data_oof_low_flop_s46.json.gz"):
    with open_text(path) as f:
        d = json.load(f)
    a, b = d["base"]["gated"]["per_problem"], d["with_extra"]["gated"]["per_problem"]
    keys = sorted(set(a) & set(b))
    problems = {k: GemmProblem.from_key(k) for k in keys}
    print("| subset | problems | without | with | difference |\n|---|---|---|---|---|")
    for layout in (None, "rr", "rc", "cc", "cr"):
        for name, keep in SUBSETS.items():
            if layout is None and name:
                continue
            ks = [k for k in keys if (layout is None or problems[k].layout == layout)
                  and keep(problems[k])]
            x, y = np.array([a[k] for k in ks]), np.array([b[k] for k in ks])
            diff = y - x
            se = diff.std(ddof=1) / np.sqrt(len(diff))
            print(f"| {layout or 'all'}{name} | {len(ks)} | {100 * x.mean():.2f} | "
                  f"{100 * y.mean():.2f} | {100 * diff.mean():+.2f} +- {100 * se:.2f} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
