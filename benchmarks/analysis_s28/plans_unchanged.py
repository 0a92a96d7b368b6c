"""One digest of every launch plan of the Triton families (but gemm.gemv_t and, since session
29, gemm.gemv_t_splitk) on the plan
fingerprint's probes and two decode problems: run under two trees to show that an edit left
every earlier family's plans as they were (session 28: 56,040 plans, equal digests).
``--each`` prints a digest per family and probe too, to say where two trees differ (session 30:
gemm.gemv's plans on the probes with a column-major A, and nothing else).

    python benchmarks/analysis_s28/plans_unchanged.py [--each]
    git worktree add /tmp/old REV && PYTHONPATH=/tmp/old/src python benchmarks/analysis_s28/plans_unchanged.py
"""

import hashlib
import sys

from tilepick import config as cfg
from tilepick import hardware
from tilepick.problem import GemmProblem
from tilepick.solvers import SOLVERS
from tilepick.solvers.fingerprint import PROBES

DECODE = (dict(m=3, n=4096, k=4096, layout="rc"), dict(m=2, n=1000, k=4097, layout="cc",
                                                          base_align=2))


def main():
    hardware._current = hardware.profile("h200")
    plans = []
    for fam, solver in SOLVERS.items():
        if fam.startswith("gemm.gemv_t") or not hasattr(solver, "plan"):
            continue
        for kw in PROBES + DECODE:
            p = GemmProblem(**kw)
            these = [repr((fam, p.key(), c.id, solver.plan(p, c))) for c in cfg.space(fam)]
            if "--each" in sys.argv:
                print(fam, p.key(), len(these), digest(these))
            plans += these
    print(len(plans), digest(plans))


def digest(plans: list) -> str:
    return hashlib.sha256("\n".join(plans).encode()).hexdigest()[:16]


if __name__ == "__main__":
    main()
