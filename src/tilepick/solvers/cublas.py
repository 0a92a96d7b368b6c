"""cuBLAS through torch as candidates of their own: ``gemm.cublas`` as torch.matmul calls it, and
``gemm.cublas_repack``, cuBLAS behind a copy of misaligned operands (one config each)."""

from __future__ import annotations

import functools

from tilepick.config import VENDOR_FAMILIES
from tilepick.hardware import HardwareProfile
from tilepick.problem import DType, GemmProblem
from tilepick.solvers import repack, splitk_guard
from tilepick.solvers.base import ConfigInvalidError, Solver


class CublasSolver(Solver):
    """torch.matmul / bmm (cuBLAS on CUDA tensors; torch's CPU BLAS under the interpreter,
    so that the dispatcher's logic is testable on a CPU), ``torch._scaled_mm`` for fp8."""

    family = VENDOR_FAMILIES[0]

    def __init__(self):
        super().__init__()
        self._refusals: dict = {}   # problem -> why cuBLAS must not run it (None: it may)

    def not_applicable_reason(self, problem: GemmProblem, hw: HardwareProfile) -> str | None:
        if problem.dtype is DType.FP8:
            if problem.layout != "rc":
                return ("torch._scaled_mm needs A row-major and B column-major (layout rc), "
                        f"got {problem.layout}")
            if problem.batch != 1:
                return "torch._scaled_mm has no batched form"
            if problem.k % 16 or problem.n % 16:
                return f"torch._scaled_mm needs K and N multiples of 16 (k={problem.k}, n={problem.n})"
        return None

    def workspace(self, problem, config) -> int:
        return 0

    def refuse_dropped_terms(self, problem: GemmProblem, a) -> None:
        """Raise ConfigInvalidError where cuBLAS would run the problem as a split-K that
        leaves out terms (:mod:`.splitk_guard`; checked once per problem, on CUDA tensors)."""
        if not getattr(a, "is_cuda", False):
            return
        why = self._refusals.get(problem, False)
        if why is False:
            why = self._refusals[problem] = splitk_guard.cublas_refusal(problem)
        if why is not None:
            raise ConfigInvalidError(why)

    def launch(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        self.refuse_dropped_terms(problem, a)
        return cublas_call(problem, a, b, out, scale_a, scale_b)

    def bind(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        """``launch`` with the split-K check done once, here (the hot path of ``out=``)."""
        self.refuse_dropped_terms(problem, a)
        return functools.partial(cublas_call, problem)

    def bind_new(self, problem, config, a, b):
        """torch.matmul itself for bf16 and fp16 (what ``launch`` runs, without ``out=``): the
        fp8 and fp32 forms set scales or the tf32 switch around the call."""
        import torch

        if problem.dtype in (DType.BF16, DType.FP16):
            self.refuse_dropped_terms(problem, a)
            return torch.matmul
        return None


def cublas_call(problem: GemmProblem, a, b, out, scale_a=None, scale_b=None):
    """torch.matmul (``torch._scaled_mm`` for fp8, with the problem's tf32 switch for fp32)
    into ``out``, unchecked."""
    import torch

    if problem.dtype is DType.FP8:
        if a.device.type != "cuda":
            # CPU stand-in with the same semantics (no fp8 GEMM on the CPU).
            r = (a.float() @ b.float()) * (scale_a * scale_b)
            out.copy_(r.to(out.dtype))
            return out
        if out.is_contiguous():
            return torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b,
                                    out_dtype=out.dtype, out=out)
        out.copy_(torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=out.dtype))
        return out
    if problem.dtype is DType.FP32 and a.device.type == "cuda":
        prev = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = problem.tf32
        try:
            torch.matmul(a, b, out=out)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = prev
        return out
    torch.matmul(a, b, out=out)
    return out


class CublasRepackSolver(CublasSolver):
    """cuBLAS on 16-byte-aligned, padded copies of the operands that need them (C written
    through one). Why: while a leading dimension, a base or the extent of an operand's
    contiguous dimension is not a multiple of 16 bytes (an odd M of a column-major A, an odd K
    of a row-major one), cuBLAS runs Turing-era ``align1`` kernels, 3-7x slower than its Hopper
    kernels on the same sizes, and a copy costs a read and a write of the operand (1169 x 7168
    x 5120 cc: 788 us as torch.matmul, 111 us on rr; BENCHMARKS "Session 30"). Padding the
    leading dimension alone does not do (:mod:`.repack`). The copies are part of the launch,
    hence of its measured time. Not for fp8: torch._scaled_mm's own rules (layout rc, K and N
    multiples of 16) leave nothing to align."""

    family = VENDOR_FAMILIES[1]

    def __init__(self):
        super().__init__()
        self._padded: dict = {}   # problem -> the padded problem cuBLAS is given

    def not_applicable_reason(self, problem: GemmProblem, hw: HardwareProfile) -> str | None:
        if problem.dtype is DType.FP8:
            return "fp8 operands that torch._scaled_mm accepts are already 16-byte aligned"
        if repack.cublas_aligned(problem):
            return ("every leading dimension, base and contiguous extent is 16-byte aligned "
                    "(use gemm.cublas)")
        return None

    # How the copies are made. The perf-db's source key hashes :meth:`host_plan` (with this)
    # on fixed probes (``solvers.fingerprint``): change it with the copies, so that winners
    # measured with the old copies are not served as if they were today's.
    COPIES = ("triton: kernels.pad_copy into empty padded workspace (zeros in one launch), "
              "C cropped back by it")

    def host_plan(self, problem: GemmProblem) -> tuple:
        """What a launch does besides cuBLAS's own kernel choice: the padded problem, which
        operands it copies and how."""
        from tilepick.kernels.pad_copy import tile

        p, q = problem, repack.padded_problem(problem)
        copy_a, copy_b, copy_c = repack.padded_copies(p, q)
        # each copy's tile, by its destination's extents in memory order (C is copied back
        # into the caller's row-major output)
        tiles = (copy_a and tile(*repack.packed_extents(q.m, q.k, p.a_row_major)),
                 copy_b and tile(*repack.packed_extents(q.k, q.n, p.b_row_major)),
                 copy_c and tile(*repack.packed_extents(p.m, p.n, True)))
        return q.key(), (copy_a, copy_b, copy_c), self.COPIES, tiles

    def workspace(self, problem, config) -> int:
        return repack.padded_workspace(problem)

    def launch(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        return self.bind(problem, config, a, b, out)(a, b, out)

    def bind_new(self, problem, config, a, b):
        return None   # the copies write into an output of the caller's shape

    def padded_for_cublas(self, problem: GemmProblem) -> GemmProblem:
        """:func:`repack.padded_problem`, with K padded further (zeros) where cuBLAS's split-K
        would leave out nonzero terms of it (:func:`splitk_guard.safe_padding`; no change
        where cuBLASLt cannot tell cuBLAS's split, as on a CPU). Memoised per problem."""
        q = self._padded.get(problem)
        if q is None:
            try:
                q = splitk_guard.safe_padding(problem, repack.padded_problem(problem))
            except ValueError as e:
                raise ConfigInvalidError(str(e)) from None
            self._padded[problem] = q
        return q

    def bind(self, problem, config, a, b, out, scale_a=None, scale_b=None):
        """The padded problem and which operands to copy worked out once (the copies still
        happen on every call: they are part of the launch)."""
        p, q = problem, self.padded_for_cublas(problem)
        copy_a, copy_b, copy_c = repack.padded_copies(p, q)

        def run(a, b, out, scale_a=None, scale_b=None):
            flat = a.dim() == 2
            a3, b3, c3 = (t.unsqueeze(0) if flat else t for t in (a, b, out))
            if copy_a:
                a3 = repack.padded_copy(a3, q.m, q.k, p.a_row_major, True)
            if copy_b:
                b3 = repack.padded_copy(b3, q.k, q.n, p.b_row_major, True)
            work = repack.padded_copy(c3, q.m, q.n, True, False) if copy_c else c3
            if flat:
                cublas_call(q, a3[0], b3[0], work[0])
            else:
                cublas_call(q, a3, b3, work)
            if copy_c:
                repack.pad_into(work, c3)
            return out
        return run
