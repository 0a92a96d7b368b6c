"""Does Triton's automatic warp specialisation pay on Hopper for our TMA kernels?

Why: where cuBLAS wins at M >= 1024 (the LLM suite's 64 rows at 1.00, BENCHMARKS "Session
26"), the kernel-space section names the missing overlap of loads, MMAs and epilogue as the
blocker. Session 15 read Triton 3.6's tutorial as "warp specialisation is Blackwell-only";
Triton merged Hopper support for it in 2025 (triton-lang/triton#7136, #7642: "[Hopper][Warp
Spec] Enable persistent matmul test"), so this asks the compiler on the GPU instead of the
tutorial's comment.

Variants, per config, all on the library's 3-D descriptors (any layout) and checked against a
float64 reference before timing:
- ``gemm.tma.<cfg>`` / ``gemm.tma_persistent.<cfg>``: today's kernels through their solvers;
- ``ws.<cfg>``: one program per tile, the K loop a ``tl.range(..., warp_specialize=True)``;
- ``ws_pers.<cfg>``: persistent, the tile loop a ``tl.range(..., warp_specialize=True)`` (the
  tutorial's descriptor-persistent kernel on Hopper: no flatten).
A variant that fails to compile or gives a wrong result is recorded with the reason, not
timed. Timing: ``tilepick.bench.timing.interleaved`` (L2 flushed, interleaved rounds, median
of round medians), cuBLAS beside them. On the GPU:

    PYTHONPATH=src python3 benchmarks/warp_spec_probe.py --out FILE.json
"""

import argparse
import statistics

import triton
import triton.language as tl

from tilepick.kernels.common import grouped_tile
from tilepick.kernels.gemm_tma import _k_step, _tile


@triton.jit(do_not_specialize=["M", "N", "K"])
def ws_tma_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  A_ROW: tl.constexpr, B_ROW: tl.constexpr, PRECISION: tl.constexpr):
    pid = tl.program_id(0)
    bid = tl.program_id(2)
    pid_m, pid_n = grouped_tile(pid, tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N), GROUP_M)
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for ki in tl.range(0, tl.cdiv(K, BLOCK_K), warp_specialize=True):
        acc = _k_step(a_desc, b_desc, acc, bid, off_m, off_n, ki * BLOCK_K, BLOCK_M, BLOCK_N,
                      BLOCK_K, A_ROW, B_ROW, PRECISION)
    c_desc.store([bid, off_m, off_n], acc.to(c_desc.dtype).reshape(1, BLOCK_M, BLOCK_N))


@triton.jit(do_not_specialize=["M", "N", "K", "BATCH", "NUM_PROGRAMS"])
def ws_persistent_kernel(a_desc, b_desc, c_desc, M, N, K, BATCH, NUM_PROGRAMS,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                         GROUP_M: tl.constexpr, A_ROW: tl.constexpr, B_ROW: tl.constexpr,
                         PRECISION: tl.constexpr):
    """``gemm_tma_persistent_kernel`` with one change, the one under test: its tile loop is a
    ``tl.range(..., warp_specialize=True)`` (a copy, not a flag on the library's kernel, whose
    source hash keys every perf-db record)."""
    start = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    tiles_per_batch = num_pid_m * num_pid_n
    total = tiles_per_batch * BATCH
    for tile in tl.range(start, total, NUM_PROGRAMS, warp_specialize=True):
        bid = tile // tiles_per_batch
        pid_m, pid_n = grouped_tile(tile % tiles_per_batch, num_pid_m, num_pid_n, GROUP_M)
        _tile(a_desc, b_desc, c_desc, None, None, bid, pid_m, pid_n, K, BLOCK_M, BLOCK_N,
              BLOCK_K, A_ROW, B_ROW, False, PRECISION)


# the suite's M >= 1024 weights where cuBLAS won (both layouts), and two square shapes
SHAPES = ["4096x4096x4096:rr", "8192x8192x8192:rr", "1024x28672x4096:rr", "1024x4096x14336:rc",
          "3000x8192x8192:rr", "4096x6144x4096:rc", "4096x28672x4096:rc", "8192x10240x8192:rc",
          "8192x4096x14336:rr", "1000x57344x8192:rc"]
CONFIGS = ["m128n256k64.g8.w8.s3", "m128n128k64.g8.w8.s5", "m128n128k64.g8.w4.s5",
           "m128n256k32.g8.w8.s4", "m128n128k64.g8.w4.s4", "m64n256k64.g8.w4.s4"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-ms", type=float, default=40.0, help="GPU ms per candidate per round")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from probe_kit import CheckedCandidates, best_by_prefix, best_line

    from tilepick import solvers
    from tilepick.config import KernelConfig
    from tilepick.data.io import write_json
    from tilepick.hardware import current
    from tilepick.provenance import collect
    from tilepick.solvers.triton_gemm import _as3d

    hw = current()
    results = []
    for spec in args.shapes.split(","):
        cands = CheckedCandidates(spec)
        p = cands.p
        for cid in args.configs.split(","):
            for fam, variant, kernel in (("gemm.tma", "ws", ws_tma_kernel),
                                         ("gemm.tma_persistent", "ws_pers", ws_persistent_kernel)):
                solver = solvers.SOLVERS[fam]
                c = KernelConfig.from_id(f"{fam}.{cid}")
                why = solver.config_invalid_reason(p, c, hw)
                if why:
                    cands.notes[c.id] = why
                    continue
                out = cands.output()
                cands.add(c.id, lambda s=solver, c=c, o=out: s.launch(p, c, cands.inp.a,
                                                                      cands.inp.b, o), out)
                plan = solver.plan(p, c)   # today's grid, tiles, warps and stages
                kw = {key: v for key, v in plan.kwargs.items() if key != "HAS_SCALE"}
                out = cands.output()
                da, db, dc = solver.descriptors(p, c, cands.a3, cands.b3, _as3d(out))
                lead = (p.m, p.n, p.k, 1, plan.grid[0]) if solver.persistent else (p.m, p.n, p.k)

                def run(kernel=kernel, da=da, db=db, dc=dc, grid=plan.grid, lead=lead, kw=kw):
                    kernel[grid](da, db, dc, *lead, **kw)
                cands.add(f"{variant}.{cid}", run, out)
        rows, timed = cands.time(args.rounds, args.max_ms)
        best = best_by_prefix(rows, ("gemm.tma.", "ws.", "gemm.tma_persistent.", "ws_pers.",
                                     "cublas"))
        print(best_line(spec, best), flush=True)
        for cid in args.configs.split(","):
            for base, variant in (("gemm.tma", "ws"), ("gemm.tma_persistent", "ws_pers")):
                t0, t1 = timed.get(f"{base}.{cid}"), timed.get(f"{variant}.{cid}")
                if t0 and t1:
                    print(f"    {cid:24s} {variant:8s}/today {t0.ms / t1.ms:.3f}", flush=True)
        results.append({"shape": spec, "flops": p.flops, "rows": rows, "notes": cands.notes,
                        "best": {v: (b["candidate"], b["tflops"]) for v, b in best.items() if b}})
    summary = {}
    for v in ("gemm.tma.", "ws.", "gemm.tma_persistent.", "ws_pers."):
        xs = [r["best"][v][1] / r["best"]["cublas"][1] for r in results
              if v in r["best"] and "cublas" in r["best"]]
        summary[f"best {v.rstrip('.')} over cublas, geomean"] = (
            statistics.geometric_mean(xs) if xs else None)
    failures = sorted({note for r in results for name, note in r["notes"].items()
                       if name.startswith("ws")})
    summary["ws failures"] = failures[:10]
    print(summary, flush=True)
    write_json(args.out, {"provenance": collect(), "args": vars(args), "summary": summary,
                          "results": results})


if __name__ == "__main__":
    main()
