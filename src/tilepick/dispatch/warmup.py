"""Cold start: compile ahead, in parallel, what the dispatcher would run for a list of problems.

Kernel sizes are run-time arguments, so one binary serves every problem of a specialisation
class; warming the model's top-k for a workload's shapes (an LLM's projections at the token
counts it serves) leaves nothing to compile on the first real call.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem


@dataclass
class WarmupReport:
    problems: int
    pairs: int
    binaries: int
    failed: list
    seconds: float
    median_compile_s: float | None

    def to_dict(self) -> dict:
        return {"problems": self.problems, "pairs": self.pairs, "binaries": self.binaries,
                "failed": self.failed, "seconds": self.seconds,
                "median_compile_s": self.median_compile_s}


def candidates(dispatcher, problem: GemmProblem, top: int) -> list[KernelConfig]:
    """What the dispatcher could launch for ``problem``: its top ``top`` candidates (in
    hybrid mode with the configs it explores outside the catalog), or, in exhaustive mode,
    every applicable config (it benchmarks them all: compiling them one by one on the first
    call took a suite run past its time limit on its first problem)."""
    if dispatcher.mode == "exhaustive":
        ids = dispatcher.every_candidate(problem)
    else:
        ranked = dispatcher.ranked(problem)[0]
        ids = [cid for cid, _, _ in ranked[:top]]
        if dispatcher.mode == "hybrid":
            ids += dispatcher.explored(problem, ids, ranked)
    return [KernelConfig.from_id(cid) for cid in ids]


def compile_pairs(pairs, problems: int, processes: int | None = None,
                  progress: bool = True) -> WarmupReport:
    """Compile (problem, config) pairs in parallel and report the compile times."""
    import statistics
    import time

    from tilepick.bench.compile_pool import binaries_of, compile_all

    pairs = [(p, c) for p, c in dict.fromkeys(pairs) if not c.is_vendor]
    t0 = time.time()
    results = compile_all(pairs, processes=processes, progress=progress)
    secs = time.time() - t0
    binaries = {r.binaries: r for r in results.values()}   # each config's set, once
    failed = sorted({f"{cid}: {r.reason}" for (_, cid), r in results.items() if not r.ok})
    times = [r.seconds for r in binaries.values()]
    return WarmupReport(problems, len(pairs), binaries_of(results), failed, secs,
                        statistics.median(times) if times else None)


def warmup(problems: list[GemmProblem], dispatcher, top: int = 4,
           processes: int | None = None, progress: bool = True) -> WarmupReport:
    pairs = [(p, c) for p in problems for c in candidates(dispatcher, p, top)]
    return compile_pairs(pairs, len(problems), processes, progress)
