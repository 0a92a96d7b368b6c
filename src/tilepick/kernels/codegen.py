"""Compile a pointer-kernel launch for a GPU target on a machine without one, and read its PTX.

Why: alignment facts decide whether Triton emits 16-byte ``cp.async`` copies (pipelined) or
2-byte scalar loads (4-5x slower), and that is invisible to the interpreter that CI runs.
Triton compiles for ``cuda:90`` with its bundled ``ptxas`` on any machine, so CI can check the
generated code of the launch plans the solvers make. Must run with ``TRITON_INTERPRET`` unset
(tests do it in a subprocess).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem

_TRITON_DTYPES = {"bf16": "bf16", "fp16": "fp16", "fp32": "fp32", "fp8e4m3": "fp8e4nv"}


@dataclass(frozen=True)
class LoadStats:
    async_16b: int        # cp.async copies of 16 bytes (vectorised, pipelined)
    scalar_b16: int       # 2-byte global loads (what a lost alignment fact degrades to)
    wgmma: int

    @classmethod
    def of(cls, ptx: str) -> "LoadStats":
        return cls(len(re.findall(r"cp\.async\.cg\.shared\.global[^;]*, 0x10", ptx))
                   + len(re.findall(r"cp\.async\.cg\.shared\.global[^;]*, 16\b", ptx)),
                   len(re.findall(r"ld\.global(?:\.\w+)*\.b16\s", ptx)),
                   len(re.findall(r"wgmma\.mma_async", ptx)))


def pointer_kernel_ptx(problem: GemmProblem, config: KernelConfig, capability: int = 90) -> str:
    """PTX of the main (GEMM) kernel that ``launch`` would run for ``problem`` with ``config``.

    Run-time integers are typed i32 and unspecialised (as ``do_not_specialize`` makes them);
    the tensors' base pointers get the 16-byte divisibility that Triton's launcher gives
    aligned tensors.
    """
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from tilepick import solvers
    from tilepick.kernels.gemm_ptr import gemm_ptr_kernel
    from tilepick.runtime import interpreting

    if interpreting():
        raise RuntimeError("pointer_kernel_ptx compiles for a GPU target: unset TRITON_INTERPRET")
    solver = solvers.SOLVERS[config.family]
    kw = dict(solver.plan(problem, config).constexprs)
    options = {"num_warps": kw.pop("num_warps"), "num_stages": kw.pop("num_stages")}
    names = gemm_ptr_kernel.arg_names
    dt = _TRITON_DTYPES[problem.dtype.value]
    out_dt = _TRITON_DTYPES[problem.dtype.out_dtype.value]
    ptr_types = {"a_ptr": dt, "b_ptr": dt, "c_ptr": out_dt, "ws_ptr": "fp32",
                 "scale_a_ptr": "fp32", "scale_b_ptr": "fp32"}
    signature, constexprs = {}, {}
    for i, n in enumerate(names):
        if n in kw:
            signature[n] = "constexpr"
            constexprs[(i,)] = kw[n]
        elif n in ptr_types:
            signature[n] = "*" + ptr_types[n]
        else:
            signature[n] = "i32"
    aligned_ptrs = ("a_ptr", "b_ptr", "c_ptr") if problem.base_align >= 16 else ()
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in aligned_ptrs}
    src = ASTSource(fn=gemm_ptr_kernel, signature=signature, constexprs=constexprs, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", capability, 32), options=options).asm["ptx"]
