"""Probe 3: can a one-launch split-K GEMV beat cuBLAS on ``x @ W`` decode steps (rr, M = 1)? (GPU)

Why: the GEMV family serves ``x @ W.T`` (rc) at 1.14x torch.matmul on the LLM suite's decode
rows, but ``x @ W`` (W [K, N], N contiguous) has no such kernel: its rows are where the
heuristic still loses (0.93-0.95x on 1 x 8192 x {8192, 28672}, pointer configs). W's columns
are contiguous, so a program owns BLOCK_N columns and 1/S of K, and the S partial sums must
meet. ``decode_probe2.py`` met them in a fp32 workspace [S, N] that the last program of each
column block (an acq_rel counter) read back, S rows one after another: parity with cuBLAS
(1.005x geomean), 0.94-0.95x on the two largest weights, while a plain read of the same bytes
ran 3-12% faster than cuBLAS. This times that kernel on a wider grid (wider column blocks,
thinner K steps) against a variant whose programs add their partials with fp32 atomics into a
zero-kept [N] buffer, so the last program reads one value a column, casts, stores and zeroes
it again (one launch, nothing to clear before the next call), with the read ceiling beside.

    PYTHONPATH=src python3 benchmarks/decode_rr_probe.py [--out DIR]

(Measured at commit 778c4f7; the split-K loop both kernels share moved into
``decode_probe2.rr_partial`` afterwards, the same code, checked on the GPU below.)
"""

import argparse
import itertools
import statistics
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).parent))
import decode_probe2 as p2  # noqa: E402  (its read ceiling, rr workspace kernel and helpers)
from decode_probe2 import rr_partial  # noqa: E402  (a jit helper: called by name in a kernel)

from tilepick.bench import timing  # noqa: E402
from tilepick.data.io import write_json  # noqa: E402
from tilepick.kernels.common import aligned  # noqa: E402
from tilepick.provenance import collect  # noqa: E402

GRID = [dict(BLOCK_N=bn, BLOCK_K=bk, num_warps=w, num_stages=1)
        for bn, bk, w in itertools.product((128, 256, 512, 1024), (8, 16, 32, 64), (4, 8))
        if bn * bk <= 16384]
SPLITS = (4, 8, 16, 32, 64)


@triton.jit(do_not_specialize=["N", "K"])
def gemv_rr_atomic_kernel(x_ptr, w_ptr, y_ptr, acc_ptr, cnt_ptr, N, K, BLOCK_N: tl.constexpr,
                          BLOCK_K: tl.constexpr, VEC: tl.constexpr, EVEN: tl.constexpr):
    N = aligned(N, VEC)
    pid_n = tl.program_id(0)
    splits = tl.num_programs(1)
    rn, part = rr_partial(x_ptr, w_ptr, N, K, BLOCK_N, BLOCK_K, EVEN)
    tl.atomic_add(acc_ptr + rn, part, mask=rn < N, sem="relaxed")
    tl.debug_barrier()   # every thread's adds are issued before the counter moves
    ticket = tl.atomic_add(cnt_ptr + pid_n, 1, sem="acq_rel")
    if ticket == splits - 1:
        tot = tl.load(acc_ptr + rn, mask=rn < N, other=0.0, cache_modifier=".cg")
        tl.store(y_ptr + rn, tot.to(y_ptr.dtype.element_ty), mask=rn < N)
        tl.store(acc_ptr + rn, tl.zeros((BLOCK_N,), dtype=tl.float32), mask=rn < N)
        tl.atomic_xchg(cnt_ptr + pid_n, 0)


def atomic_call(x, w, y, cfg, splits, acc, cnt):
    k, n = w.shape
    per = triton.cdiv(triton.cdiv(k, cfg["BLOCK_K"]), splits) * cfg["BLOCK_K"]
    even = per * splits == k and n % cfg["BLOCK_N"] == 0
    grid = (triton.cdiv(n, cfg["BLOCK_N"]), splits)
    return lambda: gemv_rr_atomic_kernel[grid](
        x, w, y, acc, cnt, n, k, BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"],
        VEC=p2.vec_of(n), EVEN=even, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])


def label(kind, c, s):
    return f"{kind} n{c['BLOCK_N']} k{c['BLOCK_K']} w{c['num_warps']} S{s}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    torch.manual_seed(0)
    rows = []
    for n, k in p2.WEIGHTS:
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) / k ** 0.5
        ref = x.double() @ w.double()
        y = torch.empty(1, n, device="cuda", dtype=torch.bfloat16)
        ws = torch.empty(max(SPLITS) * n, device="cuda", dtype=torch.float32)
        acc = torch.zeros(n, device="cuda", dtype=torch.float32)
        cnt = torch.zeros(triton.cdiv(n, 16), device="cuda", dtype=torch.int32)

        def check():
            return float(((y.double() - ref).abs().max() / ref.abs().max()).item())

        best = {}
        for kind, make, extra in (("workspace", p2.rr_call, (ws, cnt)),
                                  ("atomic", atomic_call, (acc, cnt))):
            cands = [(label(kind, c, s), make(x, w, y, c, s, *extra))
                     for c in GRID for s in SPLITS if k // s >= c["BLOCK_K"]]
            ok, bad = p2.scan(cands, check)
            best[kind] = ok[0]
            if bad:
                print(f"  {kind}: {len(bad)} bad, e.g. {bad[:3]}")
        out = torch.empty(64 * 132, device="cuda", dtype=torch.float32)
        reads, _ = p2.scan([(f"read b{c['BLOCK']} w{c['num_warps']} p{c['programs']}",
                             p2.read_call(w, out, c)) for c in p2.READ_GRID], lambda: None)
        fns = {"torch": lambda: torch.matmul(x, w), "workspace": best["workspace"][2],
               "atomic": best["atomic"][2], "read": reads[0][2]}
        r = timing.interleaved(fns, rounds=args.rounds, warmup=3, reps=25, max_ms=25)
        nbytes = 2 * (n * k + k + n)
        row = {"n": n, "k": k, "layout": "rr", "best_workspace": best["workspace"][1],
               "best_atomic": best["atomic"][1], "read_best": reads[0][1]}
        for name, t in r.items():
            row[f"{name}_ms"], row[f"{name}_spread"] = t.ms, t.spread
            row[f"{name}_tbps"] = nbytes / t.ms / 1e9
            row[f"{name}_vs_torch"] = r["torch"].ms / t.ms
        rows.append(row)
        print(f"rr N={n:6d} K={k:6d}: torch {row['torch_ms'] * 1e3:6.1f} us; workspace "
              f"{row['workspace_vs_torch']:.3f}x [{row['best_workspace']}], atomic "
              f"{row['atomic_vs_torch']:.3f}x [{row['best_atomic']}], read "
              f"{row['read_vs_torch']:.3f}x", flush=True)
    geo = {m: statistics.geometric_mean([r[f"{m}_vs_torch"] for r in rows])
           for m in ("workspace", "atomic", "read")}
    print(f"geomean vs torch.matmul over {len(rows)} weights: {geo}")
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        write_json(Path(args.out) / "decode_rr_probe.json",
                   {"provenance": collect(), "command": "benchmarks/decode_rr_probe.py",
                    "rows": rows, "geomean_vs_torch": geo})


if __name__ == "__main__":
    main()
