"""The launch plans' fingerprint: what the Triton kernels are compiled with and launched on.

Why: perf-db timings stay true as long as the kernels and their launch plans (grid, constexpr
specialisation) stay the same; an edit elsewhere in the solvers (a validity rule, a refactor,
a faster host path) must not retire thousands of measured winners, and a changed plan must.
So the perf-db's source key (``perfdb.kernel_source_hash``) hashes the kernel sources and this
fingerprint: every Triton family's plan for a fixed sample of configs on fixed probe problems,
under a fixed hardware profile (the persistent grid depends on the SM count), and the host-side
plan of a vendor family that has one (``host_plan``: what it does around the library call).

This file is also run as a script against the sources of older commits (its text through
``python -c`` with that tree on PYTHONPATH; ``dispatch.systemdb.source_hash_at``), so it may
only use what every tilepick version since the first dataset has: ``SOLVERS``, ``solver.plan``,
``config.space``, ``GemmProblem`` and ``hardware``. A commit where it fails gets no key (its rows
are left out of the system db).
"""

from __future__ import annotations

import hashlib

# Never edit the probes: this text keys every older commit too, so a new probe re-keys all of
# them and breaks ``perfdb.SAME_SPEED``'s chain (tried in session 28 for gemm.gemv_t)
PROBES = (
    dict(m=1, n=4096, k=4096), dict(m=37, n=45, k=71, layout="rc"),
    dict(m=300, n=200, k=136, lda=160, ldb=256, ldc=208),
    dict(m=48, n=80, k=64, batch=3, layout="cr"),
    dict(m=129, n=257, k=1000, layout="cc", base_align=2),
    dict(m=64, n=96, k=1024, dtype="fp8e4m3", layout="rc"),
    dict(m=100, n=100, k=100, dtype="fp32", tf32=True),
    dict(m=1000, n=1000, k=1000, dtype="fp16", base_align=4))
CONFIGS_PER_FAMILY = 40
PROFILE = "h200"


def plan_fingerprint() -> str:
    from tilepick import config as cfg
    from tilepick import hardware
    from tilepick.problem import GemmProblem
    from tilepick.solvers import SOLVERS
    from tilepick.solvers import triton_gemm

    planned = [s for s in SOLVERS.values() if hasattr(s, "plan")]
    saved = hardware._current
    hardware._current = hardware.profile(PROFILE)
    try:
        for s in planned:   # plans are memoised per (problem, config): none of another profile
            type(s).plan.cache_clear()
        h = hashlib.sha256(repr(("reduce block", getattr(triton_gemm, "REDUCE_BLOCK", 1024)))
                           .encode())
        for s in planned:
            space = cfg.space(s.family)
            for p in (GemmProblem(**kw) for kw in PROBES):
                for c in space[::max(1, len(space) // CONFIGS_PER_FAMILY)]:
                    h.update(repr((s.family, p.key(), c.id, s.plan(p, c))).encode())
        # vendor launches with host-side work of their own (since session 31: gemm.cublas_repack's
        # padded copies). A tree without any leaves the hash as it was, so every earlier key stays.
        for s in SOLVERS.values():
            host_plan = getattr(s, "host_plan", None)
            if host_plan is not None:
                for p in (GemmProblem(**kw) for kw in PROBES):
                    h.update(repr((s.family, p.key(), host_plan(p))).encode())
        return h.hexdigest()[:16]
    finally:
        hardware._current = saved
        for s in planned:
            type(s).plan.cache_clear()


if __name__ == "__main__":
    print(plan_fingerprint())
