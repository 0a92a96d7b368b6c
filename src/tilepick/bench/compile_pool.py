"""Parallel compilation into Triton's on-disk cache, before any timing.

Workers never come from a process that touched CUDA (a process forked after CUDA
initialisation faults, as the CK heuristics found), and the parent touches no CUDA context
until the pool is done. By default they are forked from a *forkserver*: one clean process,
started by the pool and never touching CUDA, that imports torch, Triton and the kernels once,
so a worker starts with them imported instead of spending ~5 s (measured on a GPU machine's
16 CPUs) importing them in a freshly spawned interpreter (``TILEPICK_COMPILE_START=spawn``
restores that). Each distinct binary (``Solver.binaries``: kernel, constexprs, signature
specialisation) is compiled once, whichever configs share it.
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
    seconds: float           # the compile time of the pair's binaries, summed
    binaries: tuple = ()     # their keys (``Solver.binaries``), shared with other pairs


def specialisation_key(problem: GemmProblem, config: KernelConfig) -> tuple:
    """A config under one launch-plan specialisation: what a sweep reports as a compiled
    config (several of them may share binaries: split counts are run-time arguments)."""
    from tilepick import solvers

    solver = solvers.SOLVERS[config.family]
    plan = solver.plan(problem, config) if hasattr(solver, "plan") else None
    return (config.id, plan.constexprs if plan else None, problem.dtype_token, problem.layout,
            problem.base_align)


def binary_tasks(pairs) -> tuple[dict[tuple, tuple[str, str, int]], dict[tuple[str, str], tuple]]:
    """The unique binaries that ``pairs`` need, each as the first (problem key, config id,
    launch index) that needs it, and each pair's binary keys (vendor candidates: none)."""
    from tilepick import solvers

    tasks: dict[tuple, tuple[str, str, int]] = {}
    needs: dict[tuple[str, str], tuple] = {}
    for problem, config in pairs:
        if config.is_vendor:
            continue
        keys = solvers.SOLVERS[config.family].binaries(problem, config)
        needs[(problem.key(), config.id)] = keys
        for i, key in enumerate(keys):
            tasks.setdefault(key, (problem.key(), config.id, i))
    return tasks, needs


# How workers start (``multiprocessing`` start methods that never fork a CUDA process).
START_METHODS = ("forkserver", "spawn")
# What the forkserver imports once for every worker it forks (nothing here touches CUDA);
# "__main__" (multiprocessing's own default) spares each worker re-importing the main script.
PRELOAD = ["__main__", "torch", "triton", "triton.language", "tilepick.solvers",
           "tilepick.kernels.gemm_ptr", "tilepick.kernels.gemm_tma", "tilepick.tensors",
           "tilepick.bench.compile_pool"]


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


def _warm(task: tuple[str, str, int]) -> tuple[tuple[str, str, int], bool, str, float]:
    from tilepick import solvers

    pkey, cid, launch = task
    t0 = time.perf_counter()
    try:
        problem, config = GemmProblem.from_key(pkey), KernelConfig.from_id(cid)
        solvers.SOLVERS[config.family].warmup(problem, config, only=launch)
        return task, True, "", time.perf_counter() - t0
    except Exception as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return task, False, f"{type(exc).__name__}: {msg}"[:500], time.perf_counter() - t0


def compile_all(pairs, processes: int | None = None,
                progress: bool = True) -> dict[tuple[str, str], CompileResult]:
    """Compile every binary the (problem, config) pairs need, each once; returns a result per
    (problem key, config id): ok if all its binaries compiled (else the first failure's
    reason), with their compile seconds summed."""
    from tqdm import tqdm

    from tilepick.runtime import interpreting

    if interpreting():
        return {}  # the interpreter compiles nothing ahead; kernels run as Python
    tasks, needs = binary_tasks(pairs)
    if not tasks:
        return {}
    done: dict[tuple, tuple[bool, str, float]] = {}
    processes = processes or max(1, (os.cpu_count() or 2) - 1)
    with make_pool(processes) as pool:
        futures = {pool.submit(_warm, t): key for key, t in tasks.items()}
        bar = tqdm(total=len(futures), desc="compile", unit="kernel", disable=not progress,
                   mininterval=2.0)
        for fut in as_completed(futures):
            _, ok, reason, secs = fut.result()
            done[futures[fut]] = (ok, reason, secs)
            bar.update(1)
        bar.close()
    results = {}
    for pair, keys in needs.items():
        parts = [done[k] for k in keys]
        failed = next((r for ok, r, _ in parts if not ok), None)
        results[pair] = CompileResult(failed is None, failed or "", sum(s for _, _, s in parts),
                                      keys)
    return results


def binaries_of(results: dict[tuple[str, str], CompileResult]) -> int:
    """How many distinct binaries ``compile_all`` compiled for these results."""
    return len({k for r in results.values() for k in r.binaries})
