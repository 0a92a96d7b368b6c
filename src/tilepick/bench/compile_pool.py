"""Parallel compilation into Triton's on-disk cache, before any timing.

Workers never come from a process that touched CUDA (a process forked after CUDA
initialisation faults, as the CK heuristics found), and the parent touches no CUDA context
until the pool is done. By default they are forked from a *forkserver*: one clean process,
started by the pool and never touching CUDA, that imports torch, Triton and the kernels once,
so a worker starts with them imported instead of paying ~1-3 s of imports per worker in a
freshly spawned interpreter (``TILEPICK_COMPILE_START=spawn`` restores that). Tasks that
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


# How workers start (``multiprocessing`` start methods that never fork a CUDA process).
START_METHODS = ("forkserver", "spawn")
# What the forkserver imports once for every worker it forks (nothing here touches CUDA);
# "__main__" (multiprocessing's own default) spares each worker re-importing the main script.
PRELOAD = ["__main__", "torch", "triton", "triton.language", "tilepick.solvers", "tilepick.kernels.gemm_ptr",
           "tilepick.kernels.gemm_tma", "tilepick.tensors", "tilepick.bench.compile_pool"]


def start_method(name: str | None = None) -> str:
    """``name``, else ``TILEPICK_COMPILE_START``, else forkserver; anything else is an error."""
    method = name or os.environ.get("TILEPICK_COMPILE_START") or START_METHODS[0]
    if method not in START_METHODS:
        raise ValueError(f"compile pool start method {method!r} is not one of {START_METHODS} "
                         "(from TILEPICK_COMPILE_START or the caller)")
    return method


def make_pool(processes: int, method: str | None = None,
              initializer=None) -> ProcessPoolExecutor:
    """The compile workers' pool. A forkserver is started once per parent process and reused
    by later pools (its preload list is fixed when it starts)."""
    method = start_method(method)
    ctx = mp.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(PRELOAD)
    return ProcessPoolExecutor(max_workers=processes, mp_context=ctx,
                               initializer=initializer or _init_worker)


def prestart(method: str | None = None) -> None:
    """Start the forkserver now: it imports its preload list while the caller goes on (e.g.
    plans the sweep), so the pool's workers later fork from a ready server. Nothing under the
    interpreter (no pool is made there)."""
    from tilepick.runtime import interpreting

    if interpreting() or start_method(method) != "forkserver":
        return
    from multiprocessing import forkserver

    mp.get_context("forkserver").set_forkserver_preload(PRELOAD)
    forkserver.ensure_running()


def _init_worker():
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        import torch

        torch.set_num_threads(1)
    except Exception:
        pass


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


def compile_all(pairs, processes: int | None = None,
                progress: bool = True) -> dict[tuple[str, str], CompileResult]:
    """Compile every (problem, config) pair's binaries; returns a result per (problem key, id).

    ``seconds`` is the compile time of the binary (shared by every pair that uses it).
    """
    from tqdm import tqdm

    from tilepick.runtime import interpreting

    if interpreting():
        return {}  # the interpreter compiles nothing ahead; kernels run as Python
    groups: dict[tuple, list[tuple[str, str]]] = {}
    for problem, config in pairs:
        if config.is_vendor:
            continue
        groups.setdefault(specialisation_key(problem, config), []).append(
            (problem.key(), config.id))
    tasks = [members[0] for members in groups.values()]
    results: dict[tuple[str, str], CompileResult] = {}
    if not tasks:
        return results
    by_first = {members[0]: members for members in groups.values()}
    processes = processes or max(1, (os.cpu_count() or 2) - 1)
    with make_pool(processes) as pool:
        futures = [pool.submit(_warm, t) for t in tasks]
        bar = tqdm(total=len(futures), desc="compile", unit="kernel", disable=not progress,
                   mininterval=2.0)
        for fut in as_completed(futures):
            pkey, cid, ok, reason, secs = fut.result()
            for member in by_first[(pkey, cid)]:
                results[member] = CompileResult(ok, reason, secs)
            bar.update(1)
        bar.close()
    return results
