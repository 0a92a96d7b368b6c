"""Does the pointer kernel's vector hint on C slow down output-bound GEMMs? (GPU, ~1 min.)

Why: in the fp8 rc data with K <= 16 (output-bound: the kernel is mostly its epilogue),
``gemm.ptr`` writes a C whose rows are 16-byte aligned (N % 8 == 0, bf16 out) at 130-250
M outputs/ms, but a misaligned C at 400-670, and loses 2-5x to ``gemm.tma_repack`` only on
the aligned ones; the launches differ in nothing but ``VEC_C`` (A and B with K = 1-16 get no
vector hints either way). Here each (problem, config) runs the same launch twice, with the
solver's ``VEC_C`` and with ``VEC_C = 1`` (no hint: always correct), in interleaved rounds of
``triton.testing.do_bench`` medians (L2 flushed), outputs checked against float64. Large-K
problems are included to see what the hint is worth where the main loop dominates.

    PYTHONPATH=src python3 benchmarks/ptr_store_probe.py [--rounds 7] [--out FILE.json]
"""

import argparse
import json
import statistics

import triton
import triton.language as tl

from tilepick.kernels.common import aligned, scale_epilogue
from tilepick.kernels.gemm_ptr import _RUNTIME_INTS, ptr_partial


@triton.jit(do_not_specialize=_RUNTIME_INTS)
def ptr_even_n_kernel(
    a_ptr, b_ptr, c_ptr, ws_ptr, scale_a_ptr, scale_b_ptr, M, N, K,
    stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn,
    stride_cb, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr, SPLIT_MODE: tl.constexpr, A_ROW: tl.constexpr, B_ROW: tl.constexpr,
    VEC_A: tl.constexpr, VEC_B: tl.constexpr, VEC_C: tl.constexpr, VEC_K: tl.constexpr,
    EVEN_K: tl.constexpr, HAS_SCALE: tl.constexpr, PRECISION: tl.constexpr,
):
    """gemm_ptr_kernel (no split) with the hint kept and N stated a multiple of VEC_C in the
    store's mask (the solver's VEC_C > 1 implies it), so a vector's mask is uniform."""
    acc, pid_m, pid_n = ptr_partial(
        a_ptr, b_ptr, M, N, K, stride_ab, stride_am, stride_ak, stride_bb, stride_bk, stride_bn,
        BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, False, A_ROW, B_ROW, VEC_A, VEC_B, VEC_K,
        EVEN_K, PRECISION)
    bid = tl.program_id(2).to(tl.int64)
    stride_cb = aligned(stride_cb, VEC_C)
    stride_cm = aligned(stride_cm, VEC_C)
    n_c = aligned(N, VEC_C)
    om = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    on = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = scale_epilogue(acc, scale_a_ptr, scale_b_ptr, HAS_SCALE)
    c_ptrs = c_ptr + bid * stride_cb + om[:, None] * stride_cm + on[None, :]
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),
             mask=(om[:, None] < M) & (on[None, :] < n_c))

PROBLEMS = [  # (key, configs): K-tiny aligned and misaligned, then main-loop-bound ones
    "gemm.fp8e4m3.rc.m4096.n1000.k1", "gemm.fp8e4m3.rc.m4096.n4097.k1",
    "gemm.fp8e4m3.rc.m6865.n336.k4", "gemm.fp8e4m3.rc.m1476.n22032.k4",
    "gemm.fp8e4m3.rc.m12268.n5408.k9",
    "gemm.bf16.rr.m4096.n1024.k8", "gemm.bf16.rc.m4096.n4096.k16", "gemm.bf16.cc.m2048.n2048.k4",
    "gemm.bf16.rr.m8192.n8192.k64", "gemm.bf16.rr.m1024.n1024.k1024",
    "gemm.bf16.rr.m4096.n4096.k4096", "gemm.bf16.rc.m16.n4096.k4096",
    "gemm.fp8e4m3.rc.m4096.n4096.k4096",
]
CONFIGS = ["gemm.ptr.m128n128k32.g1.w4.s3", "gemm.ptr.m64n128k32.g1.w4.s4",
           "gemm.ptr.m128n64k64.g8.w4.s3", "gemm.ptr.m128n128k64.g8.w8.s3",
           "gemm.ptr.m16n64k128.g1.w4.s4"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out")
    ap.add_argument("--device", default="cuda")
    args = ap.parse_args()
    import torch
    import triton.testing

    from tilepick import solvers
    from tilepick.config import KernelConfig
    from tilepick.data.io import write_json
    from tilepick.hardware import current
    from tilepick.runtime import interpreting
    from tilepick.runtime import patch_interpreter
    from tilepick.problem import GemmProblem
    from tilepick.provenance import collect
    from tilepick.solvers.triton_gemm import _as3d
    from tilepick.tensors import make_inputs, reference

    hw = current()
    if interpreting():   # a CPU smoke run: PROBLEMS shrunk by the caller
        patch_interpreter()
    runs = []
    for key in PROBLEMS:
        p = GemmProblem.from_key(key)
        inp = make_inputs(p, args.device)
        a, b, out = _as3d(inp.a), _as3d(inp.b), _as3d(inp.out)
        ref = reference(p, inp)
        for cid in CONFIGS:
            c = KernelConfig.from_id(cid)
            solver = solvers.SOLVERS[c.family]
            if solver.config_invalid_reason(p, c, hw) is not None:
                continue
            [(kernel, grid, kargs, kw)] = solver.calls(p, c, a, b, out, inp.scale_a,
                                                       inp.scale_b)
            if kw["VEC_C"] == 1:
                variants = {"hint": kw}
            else:
                variants = {"hint": kw, "nohint": {**kw, "VEC_C": 1},
                            "even_n": (ptr_even_n_kernel, kw)}
            fns, errs = {}, {}
            for name, k in variants.items():
                kern, k = k if isinstance(k, tuple) else (kernel, k)

                def run(k=k, kernel=kern, grid=grid, kargs=kargs):
                    kernel[grid](*kargs, **k)
                out.zero_()
                run()
                torch.cuda.synchronize() if args.device == "cuda" else None
                errs[name] = float(((inp.out.double() - ref).abs().max()
                                    / ref.abs().max().clamp_min(1e-30)).item())
                fns[name] = run
            runs.append({"problem": key, "config": cid, "vec_c": kw["VEC_C"], "fns": fns,
                         "errors": errs, "ms": {n: [] for n in fns}})
    for r in range(args.rounds):
        for run in runs:
            names = list(run["fns"])
            for name in (names if r % 2 == 0 else names[::-1]):
                run["ms"][name].append(triton.testing.do_bench(run["fns"][name], warmup=5,
                                                               rep=20))
    rows = []
    for run in runs:
        med = {n: statistics.median(v) for n, v in run["ms"].items()}
        spread = max((max(v) - min(v)) / min(v) for v in run["ms"].values())
        row = {"problem": run["problem"], "config": run["config"], "vec_c": run["vec_c"],
               "ms": med, "round_spread": spread, "errors": run["errors"],
               "rounds_ms": run["ms"]}
        if "nohint" in med:
            row["nohint_over_hint"] = med["nohint"] / med["hint"]
            row["even_n_over_nohint"] = med["even_n"] / med["nohint"]
        rows.append(row)
        print(f"{run['problem']:36s} {run['config']:32s} VEC_C {run['vec_c']} "
              + " ".join(f"{n} {1e3 * v:8.1f} us" for n, v in med.items())
              + (f"  nohint/hint {row['nohint_over_hint']:.3f} even_n/nohint "
                 f"{row['even_n_over_nohint']:.3f}" if "nohint" in med else "")
              + f"  spread {spread:.3f} err {max(run['errors'].values()):.1e}", flush=True)
    result = {"provenance": collect(), "rounds": args.rounds, "rows": rows}
    if args.out:
        write_json(args.out, result)
    print(json.dumps({"pairs": sum("nohint_over_hint" in r for r in rows)}))


if __name__ == "__main__":
    main()
