"""Would a flattened persistent TMA kernel beat today's where cuBLAS wins (large M)?

Today's ``gemm_tma_persistent_kernel`` loops over tiles with a plain ``range`` and an inner
K loop, so Triton's software pipeliner pipelines each tile's K loop on its own: every tile
starts with an empty pipeline and its loads wait for the previous tile's epilogue. Triton's
persistent-matmul tutorial instead writes the tile loop as ``tl.range(..., flatten=True)``
(the pipeliner fuses the two loops, so the next tile's first K blocks load during this tile's
epilogue), computes the epilogue's tile from a second counter, and may store the epilogue in
two halves (``EPILOGUE_SUBTILE``: half the staging shared memory, so one more stage fits).

This probe times, per shape, a set of large-tile configs in three variants (today's kernel
through its solver; flattened; flattened + split epilogue), the best plain TMA configs and
cuBLAS, in interleaved rounds (``tilepick.bench.timing.interleaved``: L2 flushed, median of
round medians), after checking every output against a float64 reference (the K loop is the
library's ``_tile_product``; commit 1551736 had it written out, as measured). On the GPU:

    PYTHONPATH=src python3 benchmarks/persistent_flat_probe.py --out FILE.json
"""

import argparse
import statistics

import triton
import triton.language as tl

from tilepick.kernels.common import grouped_tile, scale_epilogue
from tilepick.kernels.gemm_tma import _tile_product


@triton.jit(do_not_specialize=["M", "N", "K", "BATCH", "NUM_PROGRAMS"])
def flat_persistent_kernel(a_desc, b_desc, c_desc, scale_a_ptr, scale_b_ptr, M, N, K, BATCH,
                           NUM_PROGRAMS, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                           BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, A_ROW: tl.constexpr,
                           B_ROW: tl.constexpr, HAS_SCALE: tl.constexpr,
                           PRECISION: tl.constexpr, SUBTILE: tl.constexpr):
    start = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    tiles_per_batch = num_pid_m * num_pid_n
    total = tiles_per_batch * BATCH
    # the epilogue's own tile counter: the flattened loop's prologue and epilogue must not
    # share a value (the tutorial's work-around)
    tile_c = start - NUM_PROGRAMS
    for tile in tl.range(start, total, NUM_PROGRAMS, flatten=True):
        bid = tile // tiles_per_batch
        pid_m, pid_n = grouped_tile(tile % tiles_per_batch, num_pid_m, num_pid_n, GROUP_M)
        acc = _tile_product(a_desc, b_desc, bid, pid_m * BLOCK_M, pid_n * BLOCK_N, K, BLOCK_M,
                            BLOCK_N, BLOCK_K, A_ROW, B_ROW, PRECISION)
        tile_c += NUM_PROGRAMS
        bid_c = tile_c // tiles_per_batch
        pm, pn = grouped_tile(tile_c % tiles_per_batch, num_pid_m, num_pid_n, GROUP_M)
        cm = pm * BLOCK_M
        cn = pn * BLOCK_N
        acc = scale_epilogue(acc, scale_a_ptr, scale_b_ptr, HAS_SCALE)
        if SUBTILE:
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            c0, c1 = tl.split(halves)
            c_desc.store([bid_c, cm, cn], c0.to(c_desc.dtype).reshape(1, BLOCK_M, BLOCK_N // 2))
            c_desc.store([bid_c, cm, cn + BLOCK_N // 2],
                         c1.to(c_desc.dtype).reshape(1, BLOCK_M, BLOCK_N // 2))
        else:
            c_desc.store([bid_c, cm, cn], acc.to(c_desc.dtype).reshape(1, BLOCK_M, BLOCK_N))


SHAPES = ["8192x8192x8192:rr", "4096x4096x4096:rr", "4096x28672x4096:rr", "4096x4096x14336:rr",
          "1024x4096x4096:rr", "2000x3000x1000:rr", "8192x6144x4096:rc", "8192x10240x8192:rc",
          "3000x8192x28672:rc", "4096x14336x4096:rc"]
CONFIGS = ["m128n256k64.g8.w8.s3", "m128n256k32.g8.w8.s5", "m128n256k64.g1.w8.s3",
           "m128n128k64.g8.w4.s5", "m128n128k64.g8.w8.s4", "m128n128k128.g8.w8.s3",
           "m128n256k64.g8.w8.s4", "m128n128k64.g8.w8.s6"]
TMA_CONFIGS = ["m128n256k64.g8.w8.s3", "m128n256k32.g8.w8.s6", "m128n128k64.g8.w4.s6"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--max-ms", type=float, default=60.0, help="GPU ms per candidate per round")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from probe_kit import CheckedCandidates, best_by_prefix, best_line
    from triton.tools.tensor_descriptor import TensorDescriptor

    from tilepick import solvers
    from tilepick.config import KernelConfig
    from tilepick.data.io import write_json
    from tilepick.hardware import current
    from tilepick.provenance import collect
    from tilepick.solvers.triton_gemm import _as3d

    hw = current()
    smem_limit = hw.smem_per_block
    results = []
    for spec in args.shapes.split(","):
        cands = CheckedCandidates(spec)
        p, inp, a3, b3, notes = cands.p, cands.inp, cands.a3, cands.b3, cands.notes
        m, n, k = p.m, p.n, p.k
        add = cands.add
        for fam, ids in (("gemm.tma_persistent", args.configs.split(",")),
                         ("gemm.tma", TMA_CONFIGS)):
            solver = solvers.SOLVERS[fam]
            for cid in ids:
                c = KernelConfig.from_id(f"{fam}.{cid}")
                why = solver.config_invalid_reason(p, c, hw)
                if why:
                    notes[c.id] = why
                    continue
                out = cands.output()
                add(c.id, lambda s=solver, c=c, o=out: s.launch(p, c, inp.a, inp.b, o), out)
        pers = solvers.SOLVERS["gemm.tma_persistent"]   # the same tiles, grid and descriptors
        for cid in args.configs.split(","):
            c = KernelConfig.from_id(f"gemm.tma_persistent.{cid}")
            grid = pers.plan(p, c).grid
            for subtile in (False, True):
                name = f"flat{'_sub' if subtile else ''}.{cid}"
                # the split epilogue stages half the output tile
                epi_saved = (c.block_m * c.block_n * p.dtype.out_dtype.itemsize // 2
                             if subtile else 0)
                smem = pers.smem_bytes(p, c) - epi_saved
                if smem > smem_limit:
                    notes[name] = f"needs {smem} B of shared memory"
                    continue
                out = cands.output()
                o3 = _as3d(out)
                da, db, dc = pers.descriptors(p, c, a3, b3, o3)
                if subtile:
                    dc = TensorDescriptor(o3, list(o3.shape), list(o3.stride()),
                                          [1, c.block_m, c.block_n // 2])

                def run(da=da, db=db, dc=dc, c=c, grid=grid, subtile=subtile):
                    flat_persistent_kernel[grid](
                        da, db, dc, None, None, m, n, k, 1, grid[0], BLOCK_M=c.block_m,
                        BLOCK_N=c.block_n, BLOCK_K=c.block_k, GROUP_M=c.group_m,
                        A_ROW=p.a_row_major, B_ROW=p.b_row_major, HAS_SCALE=False,
                        PRECISION="tf32", SUBTILE=subtile, num_warps=c.num_warps,
                        num_stages=c.num_stages)
                add(name, run, out)
        rows, timed = cands.time(args.rounds, args.max_ms)
        best = best_by_prefix(rows, ("gemm.tma_persistent", "flat.", "flat_sub.", "gemm.tma.",
                                     "cublas"))
        print(best_line(spec, best), flush=True)
        # per config: flat / today's persistent
        for cid in args.configs.split(","):
            base = timed.get(f"gemm.tma_persistent.{cid}")
            for v in ("flat", "flat_sub"):
                t = timed.get(f"{v}.{cid}")
                if base and t:
                    print(f"    {cid:24s} {v:8s}/today {base.ms / t.ms:.3f}", flush=True)
        results.append({"shape": spec, "flops": p.flops, "rows": rows, "notes": notes,
                        "best": {v: (b["candidate"], b["tflops"]) for v, b in best.items() if b}})
    gains = [r["best"]["flat_sub."][1] / r["best"]["gemm.tma_persistent"][1] for r in results
             if "flat_sub." in r["best"] and "gemm.tma_persistent" in r["best"]]
    summary = {"best_flat_sub_over_best_today_geomean":
               statistics.geometric_mean(gains) if gains else None}
    for v in ("gemm.tma_persistent", "flat.", "flat_sub.", "gemm.tma."):
        xs = [max(r["best"][v][1], r["best"].get("gemm.tma.", (None, 0))[1])
              / r["best"]["cublas"][1] for r in results if v in r["best"] and "cublas" in r["best"]]
        summary[f"max({v.rstrip('.')}, tma) over cublas geomean"] = (
            statistics.geometric_mean(xs) if xs else None)
    print(summary)
    write_json(args.out, {"provenance": collect(), "args": vars(args), "summary": summary,
                          "results": results})


if __name__ == "__main__":
    main()
