"""cuBLAS through torch as a candidate of its own (one config: ``gemm.cublas``)."""

from __future__ import annotations

from tilepick.config import VENDOR_FAMILIES
from tilepick.hardware import HardwareProfile
from tilepick.problem import DType, GemmProblem
from tilepick.solvers.base import Solver


class CublasSolver(Solver):
    """torch.matmul / bmm (cuBLAS on CUDA tensors; torch's CPU BLAS under the interpreter,
    so that the dispatcher's logic is testable on a CPU), ``torch._scaled_mm`` for fp8."""

    family = VENDOR_FAMILIES[0]

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

    def launch(self, problem, config, a, b, out, scale_a=None, scale_b=None):
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
