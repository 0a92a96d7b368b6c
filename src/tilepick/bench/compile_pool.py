"""Parallel compilation into Triton's on-disk cache, before any timing.

Workers are *spawned* (never forked: a process forked after CUDA initialisation faults, as the
CK heuristics found), and the parent touches no CUDA context until the pool is done. Tasks that
compile to the same binary (same config and same launch-plan specialisation) are compiled once.
A compile failure is a result (the config is invalid for that class of problems), not an error.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem


@dataclass(frozen=True)
class CompileResult:
    ok: bool
    reason: str
    seconds: float


def specialisation_key(problem: GemmProblem, config: KernelConfig) -> tuple:
    """Two (problem, config) pairs with equal keys run the same compiled binaries."""
    from tilepick import solvers

    solver = solvers.SOLVERS[config.family]
    plan = solver.plan(problem, config) if hasattr(solver, "plan") else None
    return (config.id, plan.constexprs if plan else None, problem.dtype_token, problem.layout,
            problem.base_align)


def _init_worker():
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import torch

        torch.set_num_threads(1)
        # the imports every compile needs, done as the worker starts (see start_pool)
        import triton  # noqa: F401

        from tilepick import solvers  # noqa: F401
        from tilepick.kernels import gemm_ptr, gemm_tma  # noqa: F401
    except Exception:
        pass


def _ready() -> int:
    return os.getpid()


def start_pool(processes: int | None = None) -> ProcessPoolExecutor | None:
    """The compile pool, its workers started now: spawning 16 processes that import torch,
    Triton and tilepick takes seconds (~5 s before the first result on the GPU machines), which
    the caller can spend planning what to compile (:func:`compile_all` takes the pool). None
    under the interpreter (nothing is compiled ahead)."""
    from tilepick.runtime import interpreting

    if interpreting():
        return None
    processes = processes or max(1, (os.cpu_count() or 2) - 1)
    pool = ProcessPoolExecutor(max_workers=processes, mp_context=mp.get_context("spawn"),
                               initializer=_init_worker)
    for _ in range(processes):   # a submit with no idle worker spawns one
        pool.submit(_ready)
    return pool


def _warm(task: tuple[str, str]) -> tuple[str, str, bool, str, float]:
    from tilepick import solvers

    pkey, cid = task
    t0 = time.perf_counter()
    try:
        problem, config = GemmProblem.from_key(pkey), KernelConfig.from_id(cid)
        solver = solvers.SOLVERS[config.family]
        if hasattr(solver, "warmup"):
            solver.warmup(problem, config)
        return pkey, cid, True, "", time.perf_counter() - t0
    except Exception as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return pkey, cid, False, f"{type(exc).__name__}: {msg}"[:500], time.perf_counter() - t0


def compile_all(pairs, processes: int | None = None, progress: bool = True,
                pool: ProcessPoolExecutor | None = None) -> dict[tuple[str, str], CompileResult]:
    """Compile every (problem, config) pair's binaries; returns a result per (problem key, id).

    ``seconds`` is the compile time of the binary (shared by every pair that uses it).
    ``pool``: workers already started (:func:`start_pool`); shut down here either way.
    """
    from tqdm import tqdm

    from tilepick.runtime import interpreting

    groups: dict[tuple, list[tuple[str, str]]] = {}
    if not interpreting():   # the interpreter compiles nothing ahead; kernels run as Python
        for problem, config in pairs:
            if not config.is_vendor:
                groups.setdefault(specialisation_key(problem, config), []).append(
                    (problem.key(), config.id))
    results: dict[tuple[str, str], CompileResult] = {}
    if not groups:
        if pool is not None:
            pool.shutdown()
        return results
    by_first = {members[0]: members for members in groups.values()}
    with pool or start_pool(processes) as workers:
        futures = [workers.submit(_warm, members[0]) for members in groups.values()]
        bar = tqdm(total=len(futures), desc="compile", unit="kernel", disable=not progress,
                   mininterval=2.0)
        for fut in as_completed(futures):
            pkey, cid, ok, reason, secs = fut.result()
            for member in by_first[(pkey, cid)]:
                results[member] = CompileResult(ok, reason, secs)
            bar.update(1)
        bar.close()
    return results
