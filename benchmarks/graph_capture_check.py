"""Picks with scratch buffers under CUDA graph capture, through the dispatcher (GPU).

Why: the model ranks `gemm.splitk_fused` / `gemm.tma_splitk` (a zero-kept fp32 pair per
stream) and the heuristic serves cuBLASLt entries (a workspace per stream). A buffer kept per
stream must not be baked into a graph, so since session 41 a captured launch gets its own
from the graph's pool (`ZeroKept.get`, `cublaslt.capture_workspace`; until then the split-K
families refused capture and the dispatcher ran the next candidate). So inside capture the
pick itself must serve (no context skips), record nothing against the config, and serve
again after capture; the graph's replays must give the right product, and so must
`torch.compile(mode="reduce-overhead")` (CUDA graphs) around `tilepick.matmul`.

    PYTHONPATH=src python3 benchmarks/graph_capture_check.py --out results.json
"""

import argparse
import json
import sys

import torch

import tilepick
from tilepick.dispatch import Dispatcher
from tilepick.problem import GemmProblem
from tilepick.provenance import collect

# the suite's rr picks at session 40: splitk_fused at the first three, cuBLASLt entries at the
# last two (77 x 8192 x 28672: an entry that splits K, so it uses its workspace)
SHAPES = [(1, 4096, 4096), (16, 4096, 14336), (1, 8192, 8192), (1, 8192, 28672),
          (77, 8192, 28672)]


def close(y, ref) -> bool:
    return bool(torch.allclose(y.float(), ref, rtol=2e-2, atol=2e-2 * ref.abs().max().item()))


def check(m, n, k, user_db) -> dict:
    d = Dispatcher(mode="heuristic", user_db=user_db, system_db=None)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    ref = a.float() @ b.float()
    p = GemmProblem.from_tensors(a, b)
    eager = tilepick.matmul(a, b, dispatcher=d)
    torch.cuda.synchronize()
    pick = d.cache[p].config_id
    row = {"problem": p.key(), "pick": pick, "eager_ok": close(eager, ref)}
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):           # warm the side stream, as capture wants
        tilepick.matmul(a, b, dispatcher=d)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = tilepick.matmul(a, b, dispatcher=d)
    a.copy_(torch.randn_like(a))            # replays read the new inputs
    ref = a.float() @ b.float()
    g.replay()
    g.replay()
    torch.cuda.synchronize()
    row.update(graph_ok=close(y, ref), context_skips=d.stats["context_skips"],
               fallbacks=d.stats["fallbacks"], invalid=sorted(d.invalid.get(p, ())),
               pick_after=d.cache[p].config_id)
    after = tilepick.matmul(a, b, dispatcher=d)
    torch.cuda.synchronize()
    row["after_ok"] = close(after, ref)

    skips = d.stats["context_skips"]
    run_compiled(d, a, b, row)
    row["compiled_context_skips"] = d.stats["context_skips"] - skips
    row["invalid_at_end"] = sorted(d.invalid.get(p, ()))
    return row


def concurrent(m, n, k, user_db, iters: int = 40) -> dict:
    """The hazard the graph-scoped buffers remove: a graph captured on stream S after eager
    launches there, replayed on stream R while eager launches of the same pick run on S.
    Were S's kept buffer baked into the graph, both would meet in it at once (a cuBLASLt
    entry that splits K, the split-K pair): some products come out wrong. Each iteration
    checks both the replay's and the eager call's product."""
    d = Dispatcher(mode="heuristic", user_db=user_db, system_db=None)
    s, r = torch.cuda.Stream(), torch.cuda.Stream()
    a, a2 = (torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    ref, ref2 = a.float() @ b.float(), a2.float() @ b.float()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        tilepick.matmul(a, b, dispatcher=d)          # S's kept buffers exist now
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g, stream=s):
        y = tilepick.matmul(a, b, dispatcher=d)
    torch.cuda.synchronize()
    wrong = 0
    for _ in range(iters):
        r.wait_stream(s)
        with torch.cuda.stream(r):
            g.replay()
        with torch.cuda.stream(s):
            z = tilepick.matmul(a2, b, dispatcher=d)
        torch.cuda.synchronize()
        wrong += (not close(y, ref)) + (not close(z, ref2))
    return {"problem": GemmProblem.from_tensors(a, b).key(),
            "pick": d.cache[GemmProblem.from_tensors(a, b)].config_id, "iterations": iters,
            "wrong_products": wrong, "context_skips": d.stats["context_skips"]}


def run_compiled(d, a, b, row: dict) -> None:
    """``tilepick.matmul`` under ``torch.compile(mode="reduce-overhead")``: compiled code
    reaches tilepick through its custom op, which serves the default dispatcher (``d`` for
    this). Four calls (cudagraph-trees warms up, records on a later call, then replays), then
    one more on new inputs (the replay reads them); ``compiled_ok`` or ``compiled_error``
    goes into ``row``."""
    tilepick.set_dispatcher(d)
    fn = torch.compile(lambda x, w: tilepick.matmul(x, w), mode="reduce-overhead")
    try:
        for _ in range(4):
            z = fn(a, b)
        torch.cuda.synchronize()
        ok = close(z, a.float() @ b.float())
        a.copy_(torch.randn_like(a))
        z = fn(a, b)
        torch.cuda.synchronize()
        row["compiled_ok"] = ok and close(z, a.float() @ b.float())
    except Exception as exc:  # noqa: BLE001 - reported, not hidden
        row["compiled_error"] = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        tilepick.set_dispatcher(None)


def compiled_fresh(m, n, k, mode, user_db) -> dict:
    """A problem met first inside ``torch.compile(mode="reduce-overhead")``: its first call is
    cudagraph-trees' warm-up, where every allocation of the thread goes to the graph's pool
    (hybrid tunes there: the L2 flush buffer; the fused picks: their zero-kept pair), then
    the recording (capture: nothing timed, the fused picks refuse), then replays."""
    torch._dynamo.reset()
    d = Dispatcher(mode=mode, user_db=user_db, system_db=None)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    p = GemmProblem.from_tensors(a, b)
    row = {"problem": p.key(), "mode": mode}
    run_compiled(d, a, b, row)
    row.update(pick=d.cache[p].config_id if p in d.cache else None,
               stats=dict(d.stats), invalid=sorted(d.invalid.get(p, ())))
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--user-db", default=None, help="a fresh perf-db path (default: none)")
    args = ap.parse_args()
    # first, while no buffer of tilepick's exists yet in this process
    fresh = [compiled_fresh(m, n, k, mode, args.user_db) for mode in ("hybrid", "heuristic")
             for m, n, k in SHAPES]
    rows = [check(m, n, k, args.user_db) for m, n, k in SHAPES]
    races = [concurrent(m, n, k, args.user_db) for m, n, k in SHAPES]
    ok = all(r["eager_ok"] and r["graph_ok"] and r["after_ok"] and r.get("compiled_ok", False)
             and not r["invalid"] and not r["invalid_at_end"] and r["pick_after"] == r["pick"]
             and r["context_skips"] == 0 and r["compiled_context_skips"] == 0
             for r in rows) and all(r.get("compiled_ok", False) and not r["invalid"]
                                    for r in fresh) \
        and all(r["wrong_products"] == 0 and r["context_skips"] == 0 for r in races)
    result = {"provenance": collect(), "compiled_fresh": fresh, "rows": rows,
              "concurrent": races, "ok": ok}
    with open(args.out, "w") as fh:
        json.dump(result, fh, indent=1)
    print(json.dumps({"compiled_fresh": fresh, "rows": rows, "concurrent": races}, indent=1))
    print("ok" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
