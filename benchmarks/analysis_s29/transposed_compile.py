"""Compile time and load widths of the GEMV kernel's vector operand, loaded as strided rows or
as a transposed tile (A_T), compiled for sm_90 on the CPU (session 29; no GPU needed).

    python benchmarks/analysis_s29/transposed_compile.py

Prints, per constexpr set: compile seconds, PTX lines, 8-byte vector loads (ld.global.v2.b32),
2-byte scalar loads, shared-memory stores and barriers. The first two rows are the figures in
the kernel's docstring and BENCHMARKS "Session 29" (4 rows x 1024 K, 4 warps: rows 3.3 s and
2-byte loads, transposed 0.6 s and 8-byte loads); timings are this CPU's.
"""

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ptx_ab import GEMV_INT_ARGS, ptx  # noqa: E402

from tilepick.kernels.gemm_gemv import gemv_kernel  # noqa: E402

SIG = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16", "scale_a_ptr": "*fp32",
       "scale_b_ptr": "*fp32", **{n: "i32" for n in GEMV_INT_ARGS}}
# (vector rows, weight rows, block_k, warps, transposed, VEC_A)
CASES = [(4, 16, 1024, 4, False, 1), (4, 16, 1024, 4, True, 4), (4, 1, 1024, 4, True, 4),
         (2, 16, 1024, 4, True, 2), (4, 64, 256, 8, True, 4), (4, 1, 2048, 8, True, 4),
         (4, 16, 1024, 4, True, 1)]


def main():
    for rows, wrows, bk, warps, transposed, vec in CASES:
        ce = dict(BLOCK_M=rows, BLOCK_N=wrows, BLOCK_K=bk, A_ROW=False, VEC_A=vec, VEC_B=8,
                  VEC_K=1, SUM_K=8, EVEN_M=True, EVEN_K=True, EVEN_N=True, HAS_SCALE=False,
                  A_T=transposed)
        t = time.time()
        code = ptx(gemv_kernel, SIG, ce, num_warps=warps, num_stages=3)
        dt = time.time() - t
        print(f"rows {rows} weight rows {wrows} block_k {bk} warps {warps} A_T {transposed} "
              f"VEC_A {vec}: {dt:.2f} s, {code.count(chr(10))} lines, "
              f"{code.count('ld.global.v2.b32')} 8-byte loads, "
              f"{len(re.findall(r'ld[.]global([.][a-z0-9_:]+)*[.]b16', code))} 2-byte loads, "
              f"{code.count('st.shared')} shared stores, {code.count('bar.sync')} barriers")


if __name__ == "__main__":
    main()
