"""cuBLAS split-K GEMMs that leave out the last K mod s terms of the sum, and how the vendor
families avoid them.

Found in session 52 on an H200 (CUDA 13.0, cuBLAS 13.1, torch 2.11; BENCHMARKS "Session 52:
cuBLAS's split-K drops terms"): a bf16 GEMM with every operand 16-byte aligned
(:func:`aligned`) that cuBLAS runs with ``s`` K-splits, where K is not a multiple of ``s`` and
``floor(K / s)`` is a multiple of 64, returns the sum without its last ``K mod s`` terms: on rr
22 x 16 x 32024 (s = 25) torch.matmul reads 0.028 relative error against float64, and 0.0016
(bf16 rounding) against float64 without those 24 terms
(``benchmarks/cublas_splitk_remainder_probe.py``). Over 640 random narrow outputs with K in
[8K, 256K] the rule named all 16 inaccurate results and no other; over the 13,929 problems of
the bf16 datasets it names one, which drops its terms (``splitk_guard_scan.py``,
``splitk_guard_confirm.py``). cuBLAS's split count is that of cuBLASLt's first heuristic
entry, the algorithm torch.matmul runs (its error equalled that entry's on all 14 problems of
``benchmarks/repack_lt_entries_probe.py``).

So: ``gemm.cublas`` refuses a problem whose split would drop terms (the dispatcher runs the next
candidate, as for any failing kernel); ``gemm.cublas_repack`` pads K further with zeros until
the dropped terms are zeros; ``gemm.cublaslt`` refuses the entries whose split drops terms.
Problems cuBLASLt cannot describe (batched ones, fp32, fp8) and machines where it cannot be
loaded are not checked. ``TILEPICK_SPLITK_GUARD=0`` turns the checks off (a cuBLAS that fixes
the bug).
"""

from __future__ import annotations

import os

from tilepick.problem import GemmProblem

ENV_SWITCH = "TILEPICK_SPLITK_GUARD"
#: K per split is counted in steps of this many terms (the rule's multiple of 64)
K_STEP = 64
#: how many larger K the repack tries (each one more 16-byte step of zero padding)
REPACK_TRIES = 32


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").strip().lower() not in ("0", "off", "false", "no")


def dropped_terms(k: int, splits: int) -> int:
    """How many of the last K terms a cuBLAS split-K algorithm with ``splits`` splits leaves
    out: ``k mod splits`` where ``k // splits`` is a (positive) multiple of :data:`K_STEP`,
    else 0. A split count over K (cuBLASLt reports 2^32 - 1 for some algorithms) is no
    split."""
    if splits <= 1 or splits > k or k % splits == 0 or (k // splits) % K_STEP:
        return 0
    return k % splits


def aligned(problem: GemmProblem) -> bool:
    """Every operand 16-byte aligned (leading dimensions, bases, contiguous extents): the
    problems cuBLAS runs with its Hopper kernels. The rule holds there only: of the 289 dataset
    problems the arithmetic alone flags, the one aligned one dropped its terms and the 287
    others checked (misaligned, or more splits than K terms) read rounding-level errors
    (``benchmarks/splitk_guard_confirm.py``; one more was too large to check)."""
    from tilepick.solvers import repack

    return repack.cublas_aligned(problem)


def cublas_splits(problem: GemmProblem) -> int | None:
    """The split count cuBLAS runs the problem with (cuBLASLt's first heuristic entry's), or
    None where that is not known: the check is off, cuBLASLt does not serve the problem or
    cannot be loaded, or its heuristic fails."""
    if not enabled():
        return None
    from tilepick.hardware import current
    from tilepick.solvers import SOLVERS, cublaslt_lib

    lt = SOLVERS["gemm.cublaslt"]
    if lt.not_applicable_reason(problem, current()) is not None:
        return None
    try:
        entries = lt.entries(problem)
    except (cublaslt_lib.LtError, ValueError, OSError):
        return None
    return int(entries[0][0].splitk) if entries else None


def cublas_refusal(problem: GemmProblem) -> str | None:
    """Why ``gemm.cublas`` must not run the problem (its split drops terms), or None."""
    if not aligned(problem):
        return None
    splits = cublas_splits(problem)
    lost = dropped_terms(problem.k, splits) if splits else 0
    if not lost:
        return None
    return (f"cuBLAS runs {problem.key()} ({problem.dtype.value}) as a {splits}-way split-K "
            f"that leaves out the last {lost} of its K = {problem.k} terms (a known wrong "
            f"result of cuBLAS's split-K where K // splits is a multiple of {K_STEP}; "
            f"tilepick.solvers.splitk_guard)")


def entry_refusal(problem: GemmProblem, splits: int) -> str | None:
    """Why a cuBLASLt entry with ``splits`` splits must not run the problem, or None."""
    lost = dropped_terms(problem.k, splits) if enabled() and aligned(problem) else 0
    if not lost:
        return None
    return (f"a {splits}-way split-K entry leaves out the last {lost} of the K = {problem.k} "
            f"terms of {problem.key()} (tilepick.solvers.splitk_guard)")


def safe_padding(p: GemmProblem, q: GemmProblem, splits_of=None) -> GemmProblem:
    """The padded problem ``q`` of the repack of ``p`` (``repack.padded_problem(p)``), K grown
    in 16-byte steps while the terms cuBLAS would leave out are not all zero padding (K terms
    past ``p.k``). Raises ValueError when no K within :data:`REPACK_TRIES` steps is safe.
    ``splits_of``: the split count of a problem (default :func:`cublas_splits`; None: not
    known, taken as safe)."""
    from tilepick.solvers import repack

    splits_of = splits_of or cublas_splits
    step = max(1, 16 // p.dtype.itemsize)
    for _ in range(REPACK_TRIES + 1):
        splits = splits_of(q)
        if splits is None or dropped_terms(q.k, splits) <= q.k - p.k:
            return q
        q = repack.padded_problem(p, q.k + step)
    raise ValueError(f"no zero padding of K up to {q.k} keeps cuBLAS's split-K from leaving "
                     f"out terms of {p.key()} (tilepick.solvers.splitk_guard)")
