"""Copying misaligned operands into 16-byte-aligned padded workspace, for any family.

Why a module of its own: two families run a fast kernel behind such a copy, the TMA kernel
(``gemm.tma_repack``: the copy engine needs 16-byte strides and bases) and cuBLAS
(``gemm.cublas_repack``: with a leading dimension that is not a multiple of 16 bytes, cuBLAS
falls back to Turing-era ``align1`` CUTLASS kernels, 3-7x slower than its Hopper kernels on the
same sizes; BENCHMARKS "Session 30", ``benchmarks/cublas_layout_probe.py``). Each operand keeps
its major order: the copy is a plain strided copy into rows padded to 16 bytes, not a transpose
(a transposing copy of A cost 38 us where the padded one reads and writes at bandwidth).

cuBLAS needs more than aligned strides: it keeps its align1 kernels while the *extent* of an
operand's contiguous dimension is not a multiple of 16 bytes (an odd M of a column-major A with
lda padded to 1176 ran as slowly as unpadded: 0.86 ms against 0.79 ms, 1169 x 7168 x 5120 cc,
H200, session 31). So :func:`padded_problem` pads those extents too (zeros in the padding of
K; rows and columns of C past M and N are computed into workspace and dropped).
"""

from __future__ import annotations

import functools

from tilepick.problem import GemmProblem, cdiv


def padded_ld(ld: int, itemsize: int) -> int:
    """``ld`` rounded up to a whole number of 16-byte vectors."""
    step = 16 // itemsize
    return cdiv(ld, step) * step


def aligned_problem(p: GemmProblem) -> GemmProblem:
    """The problem as the inner kernel sees it after the copies: every leading dimension padded
    to 16 bytes, every base 16-byte aligned."""
    i, o = p.dtype.itemsize, p.dtype.out_dtype.itemsize
    return p.replace(lda=padded_ld(p.lda, i), ldb=padded_ld(p.ldb, i),
                     ldc=padded_ld(p.ldc, o), base_align=16)


def misaligned_operands(p: GemmProblem) -> tuple[bool, bool, bool]:
    """Which of A, B, C a launch copies (by the problem's strides and bases)."""
    i, o = p.dtype.itemsize, p.dtype.out_dtype.itemsize
    low = p.base_align < 16
    return (low or p.lda * i % 16 != 0, low or p.ldb * i % 16 != 0, low or p.ldc * o % 16 != 0)


def workspace(p: GemmProblem) -> int:
    """Bytes of the padded copies a launch allocates."""
    q = aligned_problem(p)
    i, o = p.dtype.itemsize, p.dtype.out_dtype.itemsize
    need_a, need_b, need_c = misaligned_operands(p)
    total = 0
    if need_a:
        total += q.batch * q.lda * (q.m if q.a_row_major else q.k) * i
    if need_b:
        total += q.batch * q.ldb * (q.k if q.b_row_major else q.n) * i
    if need_c:
        total += q.batch * q.ldc * q.m * o
    return total


def aligned_copy(t, row_major: bool, ld: int, copy: bool):
    """A (batch, rows, cols) tensor with leading dimension ``ld`` holding ``t`` (its values
    when ``copy``; otherwise uninitialised, as an output's workspace)."""
    import torch

    b, rows, cols = t.shape
    if row_major:
        store = torch.empty((b, rows, ld), dtype=t.dtype, device=t.device)
        view = store[:, :, :cols]
    else:
        store = torch.empty((b, cols, ld), dtype=t.dtype, device=t.device)
        view = store[:, :, :rows].transpose(1, 2)
    if copy:
        view.copy_(t)
    return view


def needs_copy(t, ld_elems: int, itemsize: int) -> bool:
    """Whether this (batch, rows, cols) tensor breaks the 16-byte rules (by its actual
    pointer and strides: the launch decides on the tensors it gets)."""
    return ((ld_elems * itemsize) % 16 != 0 or t.data_ptr() % 16 != 0
            or (t.shape[0] > 1 and (t.stride(0) * itemsize) % 16 != 0))


def _padded(size: int, itemsize: int, contiguous: bool) -> int:
    return padded_ld(size, itemsize) if contiguous else size


def padded_extents(p: GemmProblem, k: int | None = None) -> tuple[int, int, int]:
    """(M, N, K) of :func:`padded_problem` (``k``: K padded to this instead)."""
    i, o = p.dtype.itemsize, p.dtype.out_dtype.itemsize
    m = _padded(p.m, i, not p.a_row_major)
    if k is None:
        k = _padded(p.k, i, p.a_row_major or not p.b_row_major)
    n = max(_padded(p.n, i, p.b_row_major), padded_ld(p.n, o))
    return m, n, k


def padded_problem(p: GemmProblem, k: int | None = None) -> GemmProblem:
    """The problem as cuBLAS is given it: each size that is the contiguous extent of an operand
    (K of a row-major A or a column-major B, M of a column-major A, N of a row-major B and of C)
    rounded up to 16 bytes, and the copied operands packed at those extents. ``k``: K padded to
    this instead (zeros past ``p.k``; ``splitk_guard.safe_padding``)."""
    if k is not None and k < p.k:
        raise ValueError(f"K padded to {k} < K = {p.k} of {p.key()}")
    m, n, k = padded_extents(p, k)
    q = GemmProblem(m, n, k, p.batch, p.dtype, p.layout, p.tf32)   # packed leading dimensions
    copy_a, copy_b, copy_c = padded_copies(p, q)
    return q.replace(lda=q.lda if copy_a else p.lda, ldb=q.ldb if copy_b else p.ldb,
                     ldc=q.ldc if copy_c else p.ldc)


def padded_copies(p: GemmProblem, q: GemmProblem) -> tuple[bool, bool, bool]:
    """Which of A, B, C :func:`padded_problem` ``q`` copies: those that are misaligned or whose
    extents it pads."""
    need_a, need_b, need_c = misaligned_operands(p)
    return (need_a or (q.m, q.k) != (p.m, p.k), need_b or (q.k, q.n) != (p.k, p.n),
            need_c or (q.m, q.n) != (p.m, p.n))


@functools.lru_cache(maxsize=65536)
def cublas_aligned(p: GemmProblem) -> bool:
    """Every leading dimension, base and contiguous extent 16-byte aligned: what cuBLAS runs
    as it is, with its Hopper kernels (:func:`padded_problem` would copy nothing). Memoised:
    the split-K guard asks it once per cuBLASLt entry of a problem. The same answer as
    ``not any(padded_copies(p, padded_problem(p)))`` (every size is in two of the operands'
    extents that ``padded_copies`` compares), without building the padded problem: the
    candidate mask asks it of every new problem."""
    return not any(misaligned_operands(p)) and padded_extents(p) == (p.m, p.n, p.k)


def padded_workspace(p: GemmProblem) -> int:
    """Bytes of :func:`padded_problem`'s copies."""
    q = padded_problem(p)
    i, o = p.dtype.itemsize, p.dtype.out_dtype.itemsize
    copy_a, copy_b, copy_c = padded_copies(p, q)
    return q.batch * (copy_a * q.m * q.k * i + copy_b * q.k * q.n * i + copy_c * q.m * q.n * o)


def packed_extents(rows: int, cols: int, row_major: bool) -> tuple[int, int]:
    """A padded copy's extents in memory order (its contiguous dimension last): what
    :func:`padded_copy` allocates, and what ``kernels.pad_copy`` tiles (the cuBLAS repack
    solver's ``host_plan`` names each copy's tile by them)."""
    return (rows, cols) if row_major else (cols, rows)


def padded_copy(t, rows: int, cols: int, row_major: bool, copy: bool):
    """A packed (batch, rows, cols) tensor of ``t``'s major order holding ``t`` in its top-left
    corner and zeros around it (when ``copy``; otherwise uninitialised, as an output's
    workspace)."""
    import torch

    stored = torch.empty((t.shape[0], *packed_extents(rows, cols, row_major)), dtype=t.dtype,
                         device=t.device)
    view = stored if row_major else stored.transpose(1, 2)
    return pad_into(t, view) if copy else view


def pad_into(src, dst):
    """``dst`` = ``src`` zero-padded or cropped to ``dst``'s extents, (batch, rows, cols) both:
    one Triton launch (``kernels.pad_copy``) on the GPU or under Triton's interpreter; torch's
    copies on a CPU without it (the dispatcher's CPU stand-in)."""
    from tilepick.runtime import interpreting

    if dst.is_cuda or interpreting():
        from tilepick.kernels.pad_copy import pad_copy

        return pad_copy(src, dst)
    return torch_pad_into(src, dst)


def torch_pad_into(src, dst):
    """:func:`pad_into` as torch's copies: a strided ``copy_`` and a ``zero_`` per padded edge
    (what the family ran until session 32; ``benchmarks/pad_copy_probe.py`` times it)."""
    r, c = min(src.shape[1], dst.shape[1]), min(src.shape[2], dst.shape[2])
    dst[:, :r, :c].copy_(src[:, :r, :c])
    if dst.shape[1] > r:
        dst[:, r:, :].zero_()
    if dst.shape[2] > c:
        dst[:, :r, c:].zero_()
    return dst
