"""Does another cuBLASLt algorithm beat torch.matmul where cuBLAS wins today? (GPU)

Why: on the LLM suite the heuristic mode keeps cuBLAS on every row with M >= 77 but five
(BENCHMARKS "Session 37"): the Triton families lose there, so issue 5's >= 1.03x cannot come
from choosing among them. cuBLAS itself runs one algorithm of its own heuristic's list;
cuBLASLt exposes that list (``cublasLtMatmulAlgoGetHeuristic``: algorithm id, tile, stages,
split-K, swizzle, cluster shape) and runs any of its entries. PyTorch's TunableOp cannot ask
for them on CUDA (its algorithm lists are ROCm's). If some entry beats torch.matmul by more
than the noise on the large rows, cuBLASLt's algorithms are candidates of their own for the
model to rank; if not, the vendor's choice stands.

Per shape: up to ``--algos`` heuristic entries, each run once and checked against float64
(``probe_kit.CheckedCandidates``), then all of them and torch.matmul timed together in a few
interleaved rounds (L2 flushed); the fastest few entries re-timed against torch.matmul in more
rounds. cuBLASLt is called through ctypes on the library torch has loaded (no extra package):

    PYTHONPATH=src python3 benchmarks/cublaslt_probe.py --out FILE.json [--shapes MxNxK:L ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from probe_kit import CheckedCandidates  # noqa: E402

from tilepick.solvers import cublaslt_lib as lt  # noqa: E402


def entries(a, b, out, count: int):
    """cuBLASLt's heuristic entries for out = a @ b: ({name, rank, workspace, waves}, a
    runner) each (``tilepick.solvers.cublaslt_lib``; the results of commits 1b6ee28 and
    b12542b came from this script's own copy of that binding, since moved there)."""
    import torch

    g = lt.for_tensors(a, b, out)
    stream = torch.cuda.current_stream().cuda_stream
    return [({"name": "lt." + name.name, **info},
             lambda algo=algo: g.run(algo, a, b, out, stream))
            for name, algo, info in g.heuristic(count)]


SUITE_WEIGHTS = [(4096, 4096), (6144, 4096), (28672, 4096), (4096, 14336), (8192, 8192),
                 (10240, 8192), (57344, 8192), (8192, 28672)]   # (N, K) of the LLM suite


def default_shapes(m_values) -> list[str]:
    return [f"{m}x{n}x{k}:{lay}" for m in m_values for n, k in SUITE_WEIGHTS
            for lay in ("rr", "rc")]


def probe(spec: str, algos: int, screen_rounds: int, rounds: int, top: int,
          dtype: str = "bf16") -> dict:
    t0 = time.time()
    cc = CheckedCandidates(spec, dtype)
    out = cc.output()
    ids = {}
    for info, run in entries(cc.inp.a, cc.inp.b, out, algos):
        ids[info["name"]] = info
        cc.add(info["name"], run, out)
    screen, _ = cc.time(screen_rounds, max_ms=20.0)
    lts = [r for r in screen if r["candidate"] != "cublas"]
    keep = {r["candidate"] for r in lts[:top]} | {"cublas"}
    first = next((n for n, c in ids.items() if c["rank"] == 0 and n in cc.fns), None)
    if first:
        keep.add(first)
    cc.fns = {n: f for n, f in cc.fns.items() if n in keep}
    final, _ = cc.time(rounds, max_ms=60.0)
    lib = next(r for r in final if r["candidate"] == "cublas")
    best = next((r for r in final if r["candidate"] != "cublas"), None)
    # the screen's fastest entry, scored in the final rounds only (round by round against
    # torch.matmul): chosen on other samples than it is scored on, free of the winner's curse
    pick = next((r for r in final if lts and r["candidate"] == lts[0]["candidate"]), None)
    paired = pick and statistics.median(
        t / p for t, p in zip(lib["rounds_ms"], pick["rounds_ms"]))
    return {"screen_pick": pick and pick["candidate"], "screen_pick_over_torch": paired,
            "spec": spec, "entries": ids, "notes": cc.notes, "screen": screen, "final": final,
            "heuristic_first": first, "best_lt": best and best["candidate"],
            "best_over_torch": best and best["tflops"] / lib["tflops"],
            "first_over_torch": next((r["tflops"] / lib["tflops"] for r in final
                                      if r["candidate"] == first), None),
            "torch_spread": lib["spread"], "seconds": time.time() - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", nargs="*", default=None)
    ap.add_argument("--shapes-file", default=None, help="one MxNxK:layout a line")
    ap.add_argument("--m-values", default="128,1024,3000,8192",
                    help="M of the suite weights' shapes when --shapes is not given (the LLM "
                         "suite's: 1,16,77,128,1000,1024,3000,4096,8192)")
    ap.add_argument("--algos", type=int, default=24)
    ap.add_argument("--screen-rounds", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--budget-s", type=float, default=400.0)
    ap.add_argument("--dtype", default="bf16", help="bf16 or fp16 (what cuBLASLt serves here)")
    args = ap.parse_args()

    from tilepick.data.io import write_json
    from tilepick.provenance import collect

    t0 = time.time()
    rows = []
    if args.shapes_file:
        args.shapes = (args.shapes or []) + Path(args.shapes_file).read_text().split()
    for spec in args.shapes or default_shapes([int(m) for m in args.m_values.split(",")]):
        if time.time() - t0 > args.budget_s:
            print(f"budget spent: stopped before {spec}")
            break
        try:
            row = probe(spec, args.algos, args.screen_rounds, args.rounds, args.top, args.dtype)
        except Exception as exc:   # a shape cuBLASLt refuses is a finding, not the end
            row = {"spec": spec, "error": f"{type(exc).__name__}: {exc}"}
            print(spec, row["error"])
        else:
            print(f"{spec:24s} entries {len(row['entries']):2d}  best {row['best_lt']}  "
                  f"{row['best_over_torch'] or 0:.3f}x  first {row['first_over_torch'] or 0:.3f}x"
                  f"  screen pick {row['screen_pick_over_torch'] or 0:.3f}x"
                  f"  torch spread {row['torch_spread']:.1%}  {row['seconds']:.0f}s", flush=True)
        rows.append(row)
        write_json(args.out, {"provenance": {**collect(), "cublaslt_version": lt.version()},
                             "args": vars(args), "rows": rows})
    ok = [r["screen_pick_over_torch"] for r in rows if r.get("screen_pick_over_torch")]
    if ok:
        print(f"{len(ok)} shapes, the screen's pick in the final rounds over torch.matmul: "
              f"geomean {statistics.geometric_mean(ok):.4f}, median {statistics.median(ok):.3f},"
              f" of max(1, pick) {statistics.geometric_mean([max(1.0, x) for x in ok]):.4f}")


if __name__ == "__main__":
    main()
