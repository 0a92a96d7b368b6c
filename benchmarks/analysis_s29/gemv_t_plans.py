"""One digest of gemm.gemv_t's launch plans on every (problem, config) its datasets measured
(all dtypes): run under two trees to show that an edit left the measured plans as they were
(session 29: 58,616 plans, equal under commits fdffdd4 and 04166e2; `perfdb.SAME_SPEED`).

    python benchmarks/analysis_s29/gemv_t_plans.py
    git worktree add /tmp/old REV && PYTHONPATH=/tmp/old/src python benchmarks/analysis_s29/gemv_t_plans.py
"""

import glob
import hashlib

import pandas as pd

from tilepick import hardware
from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem
from tilepick.solvers import SOLVERS

KEYS = ["m", "n", "k", "batch", "dtype", "layout", "lda", "ldb", "ldc", "base_align", "config_id"]


def main():
    hardware._current = hardware.profile("h200")
    frames = [pd.read_parquet(f, columns=["family", *KEYS])
              for f in glob.glob("data/gemm/*/h200/*/*.parquet")]
    d = pd.concat([f[f.family == "gemm.gemv_t"] for f in frames]).drop_duplicates(KEYS)
    solver = SOLVERS["gemm.gemv_t"]
    plans = sorted(
        repr((p.key(), r.config_id, solver.plan(p, KernelConfig.from_id(r.config_id))))
        for r in d.itertuples()
        for p in [GemmProblem(r.m, r.n, r.k, r.batch, r.dtype, r.layout, lda=r.lda, ldb=r.ldb,
                              ldc=r.ldc, base_align=r.base_align)])
    print(len(plans), hashlib.sha256("\n".join(plans).encode()).hexdigest()[:16])


if __name__ == "__main__":
    main()
