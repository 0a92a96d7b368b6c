"""One digest of a family's launch plans on every (problem, config) its datasets measured
(all dtypes): run under two trees to show that an edit left the measured plans as they were
(session 29, gemm.gemv_t: 58,616 plans, equal under commits fdffdd4 and 04166e2; session 30,
the three GEMV families; `perfdb.SAME_SPEED`).

    python benchmarks/analysis_s29/gemv_t_plans.py [--family gemm.gemv_t ...]
    git worktree add /tmp/old REV && PYTHONPATH=/tmp/old/src python benchmarks/analysis_s29/gemv_t_plans.py
"""

import argparse
import glob
import hashlib

import pandas as pd

from tilepick import hardware
from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem
from tilepick.solvers import SOLVERS

KEYS = ["m", "n", "k", "batch", "dtype", "layout", "lda", "ldb", "ldc", "base_align", "config_id"]


def digest(family: str, frames: list) -> str:
    d = pd.concat([f[f.family == family] for f in frames]).drop_duplicates(KEYS)
    solver = SOLVERS[family]
    plans = sorted(
        repr((p.key(), r.config_id, solver.plan(p, KernelConfig.from_id(r.config_id))))
        for r in d.itertuples()
        for p in [GemmProblem(r.m, r.n, r.k, r.batch, r.dtype, r.layout, lda=r.lda, ldb=r.ldb,
                              ldc=r.ldc, base_align=r.base_align)])
    return f"{family} {len(plans)} {hashlib.sha256(chr(10).join(plans).encode()).hexdigest()[:16]}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--family", action="append", help="default: gemm.gemv_t")
    args = ap.parse_args()
    hardware._current = hardware.profile("h200")
    frames = [pd.read_parquet(f, columns=["family", *KEYS])
              for f in glob.glob("data/gemm/*/h200/*/*.parquet")]
    for family in args.family or ["gemm.gemv_t"]:
        print(digest(family, frames))


if __name__ == "__main__":
    main()
