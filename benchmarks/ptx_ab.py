"""Does a refactor of the pointer kernel change its code? Old and new, compiled for sm_90 on the CPU.

A kernel edit retires its measured rows unless its speed is unchanged (``perfdb.SAME_SPEED``).
Where the edit only moves code (a jit helper, a docstring), the cheapest proof is the compiled
code itself: Triton compiles for a GPU target without a GPU (its bundled ptxas included), so
this builds both versions of ``gemm_ptr_kernel`` for the same constexpr sets and compares the
PTX code sections (debug sections, comments, ``.loc`` lines and label names left out). It
reports, per set, the lines that differ; ``kernel_ab.py`` times the two on the GPU.

    git show REV:src/tilepick/kernels/gemm_ptr.py > /tmp/gemm_ptr_old.py
    python benchmarks/ptx_ab.py --old /tmp/gemm_ptr_old.py
"""

import argparse
import difflib
import importlib.util
import itertools
import re

INT_ARGS = ["M", "N", "K", "stride_ab", "stride_am", "stride_ak", "stride_bb", "stride_bk",
            "stride_bn", "stride_cb", "stride_cm", "stride_cn"]


def load(path, name):
    spec = importlib.util.spec_from_file_location("kernel_old", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def ptx(fn, constexprs, dtype="bf16", num_warps=4, num_stages=4):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig = {"a_ptr": f"*{dtype}", "b_ptr": f"*{dtype}", "c_ptr": f"*{dtype}", "ws_ptr": "*fp32",
           "scale_a_ptr": "*fp32", "scale_b_ptr": "*fp32", **{n: "i32" for n in INT_ARGS},
           **{k: "constexpr" for k in constexprs}}
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(6)}   # 16-byte aligned pointers
    kernel = triton.compile(ASTSource(fn, sig, constexprs, attrs),
                            target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": num_warps, "num_stages": num_stages})
    return kernel.asm["ptx"]


def code_lines(text):
    text = text.split(".section\t.debug")[0]
    return [re.sub(r"\$L__\w+", "L", s) for s in (line.strip() for line in text.splitlines())
            if s and not s.startswith(("//", ".file", ".loc"))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True, help="the older gemm_ptr.py")
    ap.add_argument("--show", type=int, default=0, help="print the diff of the first N sets")
    args = ap.parse_args()
    from tilepick.kernels.gemm_ptr import gemm_ptr_kernel as new

    old = load(args.old, "gemm_ptr_kernel")
    identical = 0
    sets = list(itertools.product((16, 128), (64, 256), (0, 2), (True, False), (True, False)))
    for i, (bm, bn, mode, a_row, even) in enumerate(sets):
        ce = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=64, GROUP_M=8, SPLIT_MODE=mode, A_ROW=a_row,
                  B_ROW=True, VEC_A=8, VEC_B=8, VEC_C=8, VEC_K=1 if even else 8, EVEN_K=even,
                  HAS_SCALE=False, PRECISION="tf32")
        a, b = code_lines(ptx(old, ce)), code_lines(ptx(new, ce))
        diff = [d for d in difflib.unified_diff(a, b, lineterm="", n=0)
                if d[:1] in "+-" and d[:3] not in ("---", "+++")]
        identical += not diff
        real = [d for d in diff if d[1:] != "L:"]
        print(f"m{bm} n{bn} split {mode} a_row {a_row} even_k {even}: {len(a)} / {len(b)} lines, "
              f"{len(diff)} differ ({len(real)} besides empty labels)", flush=True)
        if i < args.show:
            print("\n".join(difflib.unified_diff(a, b, lineterm="", n=2)))
    print(f"{identical} of {len(sets)} sets identical")


if __name__ == "__main__":
    main()
