"""Two models' validation efficiencies, paired per problem, by problem size (session 27).

The mean paired difference (new - old, points) and its standard error per FLOP band, on the
bf16 rr and rc validation sets (`benchmarks/paired_validation.py`'s efficiencies): where a
data change that aims at big problems moved the picks.

    python benchmarks/analysis_s27/paired_by_size.py OLD_MODEL NEW_MODEL
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent.parent))
from paired_validation import efficiencies  # noqa: E402

from tilepick.problem import GemmProblem  # noqa: E402

old, new = sys.argv[1], sys.argv[2]
for data in ["data/gemm/bf16/h200/validation", "data/gemm/bf16/h200/validation_rc"]:
    a, b = efficiencies(old, data), efficiencies(new, data)
    keys = sorted(a)
    fl = np.array([GemmProblem.from_key(k).flops for k in keys])
    d = np.array([b[k][0] - a[k][0] for k in keys])
    for lo, hi in [(0, 1e9), (1e9, 1e11), (1e11, 1e12), (1e12, 1e20)]:
        s = (fl >= lo) & (fl < hi)
        if s.any():
            print(f"{data.split('/')[-1]:14s} flops [{lo:.0e},{hi:.0e}) n={s.sum():3d} diff {100*d[s].mean():+.2f} +- {100*d[s].std(ddof=1)/np.sqrt(s.sum()) if s.sum()>1 else 0:.2f}  old {100*np.mean([a[k][0] for k,x in zip(keys,s) if x]):.2f}")
