"""Does a refactor of a kernel change its code? Old and new, compiled for sm_90 on the CPU.

A kernel edit retires its measured rows unless its speed is unchanged (``perfdb.SAME_SPEED``).
Where the edit only moves code (a jit helper, a docstring), the cheapest proof is the compiled
code itself: Triton compiles for a GPU target without a GPU (its bundled ptxas included), so
this builds both versions of ``gemm_ptr_kernel`` (``--kernel ptr``) or of the two TMA kernels
(``--kernel tma``) or the GEMV kernel (``--kernel gemv``; ``gemv_t``: its transposed loads) for the same constexpr sets and compares the PTX code sections (debug
sections, comments, ``.loc`` lines and label names left out). It reports, per set, the lines
that differ; ``kernel_ab.py`` times two versions on the GPU.

    git show REV:src/tilepick/kernels/gemm_ptr.py > /tmp/gemm_ptr_old.py
    python benchmarks/ptx_ab.py --old /tmp/gemm_ptr_old.py
    git show REV:src/tilepick/kernels/gemm_tma.py > /tmp/gemm_tma_old.py
    python benchmarks/ptx_ab.py --kernel tma --old /tmp/gemm_tma_old.py
"""

import argparse
import difflib
import functools
import importlib.util
import inspect
import itertools
import re

INT_ARGS = ["M", "N", "K", "stride_ab", "stride_am", "stride_ak", "stride_bb", "stride_bk",
            "stride_bn", "stride_cb", "stride_cm", "stride_cn"]


def load(path, name):
    spec = importlib.util.spec_from_file_location("kernel_old", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def ptx(fn, signature, constexprs, num_warps=4, num_stages=4):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    # constexprs the caller leaves out take the kernel's defaults, as a launch does
    constexprs = {**{q.name: q.default for q in fn.params
                     if q.is_constexpr and q.name not in constexprs and q.name not in signature
                     and q.default is not inspect.Parameter.empty}, **constexprs}
    sig = {**signature, **{k: "constexpr" for k in constexprs}}
    # pointers 16-byte aligned, as the launches specialise them (descriptors carry their own)
    attrs = {(i,): [["tt.divisibility", 16]] for i, t in enumerate(signature.values())
             if t.startswith("*")}
    kernel = triton.compile(ASTSource(fn, sig, constexprs, attrs),
                            target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": num_warps, "num_stages": num_stages})
    return kernel.asm["ptx"]


def ptr_cases(dtype="bf16"):
    """(label, kernel name, signature, constexprs) of the pointer kernel: tiles, split modes 0
    and 2, A's major order, masked or even K."""
    sig = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}", "ws_ptr": "*fp32",
           "scale_a_ptr": "*fp32", "scale_b_ptr": "*fp32", **{n: "i32" for n in INT_ARGS}}
    for bm, bn, mode, a_row, even in itertools.product((16, 128), (64, 256), (0, 2),
                                                       (True, False), (True, False)):
        ce = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=64, GROUP_M=8, SPLIT_MODE=mode, A_ROW=a_row,
                  B_ROW=True, VEC_A=8, VEC_B=8, VEC_K=1 if even else 8, EVEN_K=even,
                  HAS_SCALE=False, PRECISION="tf32")
        yield (f"m{bm} n{bn} split {mode} a_row {a_row} even_k {even}", "gemm_ptr_kernel", sig,
               ce)


def tma_cases(dtype="bf16"):
    """The one-tile and persistent TMA kernels: tiles and every layout."""
    for name, bm, a_row, b_row in itertools.product(
            ("gemm_tma_kernel", "gemm_tma_persistent_kernel"), (64, 128), (True, False),
            (True, False)):
        bn, bk = 128, 64
        sig = {"a_desc": f"tensordesc<{dtype}[1,{bm},{bk}]>" if a_row
               else f"tensordesc<{dtype}[1,{bk},{bm}]>",
               "b_desc": f"tensordesc<{dtype}[1,{bk},{bn}]>" if b_row
               else f"tensordesc<{dtype}[1,{bn},{bk}]>",
               "c_desc": f"tensordesc<{dtype}[1,{bm},{bn}]>", "scale_a_ptr": "*fp32",
               "scale_b_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"}
        if "persistent" in name:
            sig.update(BATCH="i32", NUM_PROGRAMS="i32")
        ce = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, A_ROW=a_row, B_ROW=b_row,
                  HAS_SCALE=False, PRECISION="tf32")
        yield f"{name} m{bm} n{bn} a_row {a_row} b_row {b_row}", name, sig, ce


GEMV_INT_ARGS = ["M", "N", "K", "stride_ab", "stride_am", "stride_ak", "stride_bb", "stride_bn",
                 "stride_cb", "stride_cm", "stride_cn"]


def gemv_cases(dtype="bf16", transposed=False):
    """The GEMV kernel (both GEMV families) as the launch plans set it: vector rows 1 and 4,
    weight rows 1 and 16, A's rows K-contiguous or strided, even or masked K and edges;
    ``transposed``: the strided ones loaded as a transposed tile (A_T, since session 29)."""
    sig = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}",
           "scale_a_ptr": "*fp32", "scale_b_ptr": "*fp32", **{n: "i32" for n in GEMV_INT_ARGS}}
    for bm, bn, a_row, even in itertools.product((1, 4), (1, 16), (False,) if transposed
                                                 else (True, False), (True, False)):
        bk = 512 if bm == 1 else 1024
        ce = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, A_ROW=a_row, VEC_A=8 if a_row else 1,
                  VEC_B=8, VEC_K=1 if even else 8, SUM_K=8 if bm > 1 else 1, EVEN_M=even,
                  EVEN_K=even, EVEN_N=even, HAS_SCALE=False)
        if transposed:
            ce.update(A_T=True, VEC_A=bm)
        yield (f"rows {bm} weight rows {bn} a_row {a_row} even {even}"
               + (" A_T" if transposed else ""), "gemv_kernel", sig, ce)


KERNELS = {"ptr": ("tilepick.kernels.gemm_ptr", ptr_cases),
           "tma": ("tilepick.kernels.gemm_tma", tma_cases),
           "gemv": ("tilepick.kernels.gemm_gemv", gemv_cases),
           "gemv_t": ("tilepick.kernels.gemm_gemv", functools.partial(gemv_cases,
                                                                      transposed=True))}


def code_lines(text):
    text = text.split(".section\t.debug")[0]
    return [re.sub(r"\$L__\w+", "L", s) for s in (line.strip() for line in text.splitlines())
            if s and not s.startswith(("//", ".file", ".loc"))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel", choices=sorted(KERNELS), default="ptr")
    ap.add_argument("--old", required=True, help="the older kernel file (gemm_ptr.py ...)")
    ap.add_argument("--show", type=int, default=0, help="print the diff of the first N sets")
    args = ap.parse_args()
    module, cases = KERNELS[args.kernel]
    new = importlib.import_module(module)
    identical = total = 0
    for i, (label, name, sig, ce) in enumerate(cases()):
        a = code_lines(ptx(load(args.old, name), sig, ce))
        b = code_lines(ptx(getattr(new, name), sig, ce))
        diff = [d for d in difflib.unified_diff(a, b, lineterm="", n=0)
                if d[:1] in "+-" and d[:3] not in ("---", "+++")]
        real = [d for d in diff if d[1:] != "L:"]
        identical += not real
        total += 1
        print(f"{label}: {len(a)} / {len(b)} lines, {len(diff)} differ ({len(real)} besides "
              "empty labels)", flush=True)
        if i < args.show:
            print("\n".join(difflib.unified_diff(a, b, lineterm="", n=2)))
    print(f"{identical} of {total} sets identical but for empty labels")


if __name__ == "__main__":
    main()
