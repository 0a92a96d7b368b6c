"""Probe: can a plain Triton GEMV beat cuBLAS on decode (M = 1) LLM projections? (GPU)

Why: on the dispatcher's LLM suite the heuristic's geomean (1.008x torch.matmul) sits below the
1.03 target because most rows run cuBLAS and none of tilepick's families beats it by much at
small M; cuBLAS reached only 1.8-3.0 TB/s on the 32-128 MB weights of the suite's M = 1 rows
(L2 flushed) against ~3.9-4.2 on the largest. This times two bandwidth-bound GEMV kernels (no
tensor cores: a weight tile times the broadcast activation, fp32 sums) over a small grid of
tiles, on the suite's eight Llama-3 weights in both layouts, then re-times each shape's best
against torch.matmul in interleaved rounds (tilepick.bench.timing). A probe, not a kernel
family: if it wins, the family (solver, config space, sweep, model) is the next step.

- ``x @ W.T`` (layout rc, W is [N, K], K contiguous): a program owns BLOCK_N rows of W and
  walks K; no reduction across programs.
- ``x @ W`` (layout rr, W is [K, N], N contiguous): a program owns BLOCK_N columns and 1/SPLIT
  of K; partial sums go to a zeroed fp32 buffer by atomic adds, then one cast (both counted).

    PYTHONPATH=src python3 benchmarks/decode_probe.py [--out DIR]
"""

import argparse
import itertools
import json
import statistics
from pathlib import Path

import torch
import triton
import triton.language as tl
import triton.testing

from tilepick.bench import timing
from tilepick.provenance import collect

WEIGHTS = [(4096, 4096), (6144, 4096), (28672, 4096), (4096, 14336), (8192, 8192),
           (10240, 8192), (57344, 8192), (8192, 28672)]   # (N, K): Llama-3 8B and 70B
RC_GRID = [dict(BLOCK_N=bn, BLOCK_K=bk, num_warps=w)
           for bn, bk, w in itertools.product((4, 8, 16, 32), (256, 512, 1024), (4, 8))]
RR_GRID = [dict(BLOCK_N=bn, BLOCK_K=bk, SPLIT=s, num_warps=w)
           for bn, bk, s, w in itertools.product((64, 128, 256), (16, 32, 64), (4, 8, 16, 32),
                                                 (4, 8))]


@triton.jit(do_not_specialize=["N", "K"])
def gemv_rc_kernel(x_ptr, w_ptr, y_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    row = w_ptr + rn.to(tl.int64)[:, None] * K
    for k in range(0, K, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        w = tl.load(row + rk[None, :], mask=(rn[:, None] < N) & (rk[None, :] < K), other=0.0)
        x = tl.load(x_ptr + rk, mask=rk < K, other=0.0)
        acc += tl.sum(w.to(tl.float32) * x.to(tl.float32)[None, :], axis=1)
    tl.store(y_ptr + rn, acc.to(y_ptr.dtype.element_ty), mask=rn < N)


@triton.jit(do_not_specialize=["N", "K"])
def gemv_rr_kernel(x_ptr, w_ptr, ws_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   SPLIT: tl.constexpr):
    rn = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    per = tl.cdiv(tl.cdiv(K, SPLIT), BLOCK_K) * BLOCK_K
    k0 = tl.program_id(1) * per
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for k in range(k0, k0 + per, BLOCK_K):
        rk = k + tl.arange(0, BLOCK_K)
        w = tl.load(w_ptr + rk.to(tl.int64)[:, None] * N + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        x = tl.load(x_ptr + rk, mask=rk < K, other=0.0)
        acc += tl.sum(w.to(tl.float32) * x.to(tl.float32)[:, None], axis=0)
    tl.atomic_add(ws_ptr + rn, acc, mask=rn < N)


def rc_call(x, w, y, cfg):
    n, k = w.shape
    grid = (triton.cdiv(n, cfg["BLOCK_N"]),)
    return lambda: gemv_rc_kernel[grid](x, w, y, n, k, BLOCK_N=cfg["BLOCK_N"],
                                        BLOCK_K=cfg["BLOCK_K"], num_warps=cfg["num_warps"])


def rr_call(x, w, y, cfg):
    k, n = w.shape
    grid = (triton.cdiv(n, cfg["BLOCK_N"]), cfg["SPLIT"])

    def run():
        ws = torch.zeros(n, device=w.device, dtype=torch.float32)
        gemv_rr_kernel[grid](x, w, ws, n, k, BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"],
                             SPLIT=cfg["SPLIT"], num_warps=cfg["num_warps"])
        y.copy_(ws.view(1, n))
    return run


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    torch.manual_seed(0)
    rows = []
    for (n, k), layout in itertools.product(WEIGHTS, ("rc", "rr")):
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn((n, k) if layout == "rc" else (k, n), device="cuda",
                        dtype=torch.bfloat16) / k ** 0.5
        ref = (x.float() @ (w.float().T if layout == "rc" else w.float()))
        y = torch.empty(1, n, device="cuda", dtype=torch.bfloat16)
        wt = w.T if layout == "rc" else w
        torch_fn = lambda: torch.matmul(x, wt)  # noqa: E731
        make, grid = (rc_call, RC_GRID) if layout == "rc" else (rr_call, RR_GRID)
        scan = []
        for cfg in grid:
            fn = make(x, w, y, cfg)
            try:
                fn()
                torch.cuda.synchronize()
            except Exception as exc:   # noqa: BLE001 - a config that fails is skipped
                scan.append((cfg, None, f"{type(exc).__name__}"))
                continue
            err = float(((y.float() - ref).abs().max() / ref.abs().max()).item())
            if err > 2e-2:
                scan.append((cfg, None, f"wrong: {err:.3g}"))
                continue
            scan.append((cfg, triton.testing.do_bench(fn, warmup=5, rep=20, return_mode="median"),
                         ""))
        ok = sorted((s for s in scan if s[1] is not None), key=lambda s: s[1])
        best_cfg = ok[0][0]
        rounds = timing.interleaved({"torch": torch_fn, "gemv": make(x, w, y, best_cfg)},
                                    rounds=args.rounds, warmup=3, reps=25, max_ms=25)
        t_ms, g_ms = rounds["torch"].ms, rounds["gemv"].ms
        nbytes = 2 * (n * k + k + n)
        row = {"n": n, "k": k, "layout": layout, "best_config": best_cfg,
               "scan_best_ms": ok[0][1], "configs_ok": len(ok), "configs_failed":
               len(scan) - len(ok), "torch_ms": t_ms, "gemv_ms": g_ms,
               "torch_spread": rounds["torch"].spread, "gemv_spread": rounds["gemv"].spread,
               "speedup_vs_torch": t_ms / g_ms, "torch_tbps": nbytes / t_ms / 1e9,
               "gemv_tbps": nbytes / g_ms / 1e9}
        rows.append(row)
        print(f"{layout} N={n:6d} K={k:6d}: torch {t_ms * 1e3:7.1f} us ({row['torch_tbps']:.2f} "
              f"TB/s), gemv {g_ms * 1e3:7.1f} us ({row['gemv_tbps']:.2f} TB/s) -> "
              f"{row['speedup_vs_torch']:.3f}x  {best_cfg}", flush=True)
    geo = statistics.geometric_mean([r["speedup_vs_torch"] for r in rows])
    print(f"geomean speed-up of the best GEMV over torch.matmul, M=1, 16 rows: {geo:.3f}")
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "decode_probe.json").write_text(json.dumps(
            {"provenance": collect(), "rows": rows, "geomean_speedup_vs_torch": geo},
            indent=1) + "\n")


if __name__ == "__main__":
    main()
