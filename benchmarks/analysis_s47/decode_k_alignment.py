"""Session 47: out-of-fold efficiency of decode-like problems (M <= 8, N and K >= 1024) by
layout and by K's alignment (a multiple of 8, even, odd), from `benchmarks/extra_data_oof.py`'s
per-problem scores (the gated model with the extra data, and without it on the same
problems and folds). CPU, seconds.

    python benchmarks/analysis_s47/decode_k_alignment.py [benchmarks/results/extra_data_oof_low_flop_layouts_s47.json.gz]

Why: it shows where `shapes.train_decode_misaligned_k` points the next sweep (a K that is not
a multiple of 8 reads 84-94% where an aligned one reads 98.5-99.2%, on a few dozen problems).
"""

import json
import sys
from collections import defaultdict

import numpy as np

from tilepick.data.io import open_text
from tilepick.problem import GemmProblem


def alignment(k: int) -> str:
    return "multiple of 8" if k % 8 == 0 else ("even" if k % 2 == 0 else "odd")


def main(path="benchmarks/results/extra_data_oof_low_flop_layouts_s47.json.gz"):
    with open_text(path) as f:
        res = json.load(f)
    with_extra = res["with_extra"]["gated"]["per_problem"]
    without = res["base"]["gated"]["per_problem"]   # same problems and folds, no extra data
    groups = defaultdict(list)
    for key, eff in with_extra.items():
        p = GemmProblem.from_key(key)
        if p.m <= 8 and p.n >= 1024 and p.k >= 1024:
            groups[(p.layout, alignment(p.k))].append((without[key], eff))
    print("| layout | K | problems | mean without the extra data | mean | P10 | min |")
    print("|---|---|---|---|---|---|---|")
    for (layout, align), pairs in sorted(groups.items()):
        before, e = (100 * np.array(x) for x in zip(*pairs))
        print(f"| {layout} | {align} | {len(e)} | {before.mean():.1f} | {e.mean():.1f} | "
              f"{np.percentile(e, 10):.1f} | {e.min():.1f} |")


if __name__ == "__main__":
    main(*sys.argv[1:])
