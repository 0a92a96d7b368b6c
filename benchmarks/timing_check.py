"""Does tilepick's timer agree with ``triton.testing.do_bench``? (GPU; one run.)

The sweep's screening timer (``time_fn`` with warmup=0, reps=10, min_reps=3: first batch sizes
the rest, hold margin ``timing.HOLD_MARGIN``) is compared with the reference method
(``triton.testing.do_bench``: L2 cleared before each call, median of ~100 ms of calls) on
kernels from a few microseconds (host launch overhead would leak in if the hold were too
short) to several milliseconds, interleaved over rounds so clock drift hits both alike.

    PYTHONPATH=src python benchmarks/timing_check.py [--out DIR]
"""

import argparse
import json
import os
import statistics

from tilepick import solvers
from tilepick.bench.timing import HOLD_MARGIN, time_fn
from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem
from tilepick.tensors import make_inputs

CASES = [((16, 4096, 4096), "gemm.cublas"), ((16, 4096, 4096), "gemm.tma.m64n64k128.g8.w4.s4"),
         ((1, 1024, 1024), "gemm.ptr.m16n32k64.g8.w4.s4"),
         ((256, 256, 256), "gemm.tma_persistent.m64n128k64.g8.w4.s4"),
         ((1000, 1000, 1000), "gemm.ptr.m128n128k64.g8.w8.s3"),
         ((4096, 4096, 4096), "gemm.cublas"), ((4096, 4096, 4096), "gemm.tma.m128n256k64.g8.w8.s3")]


def main():
    import triton.testing

    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args()
    rows = []
    for (m, n, k), cid in CASES:
        p = GemmProblem(m, n, k, dtype="bf16")
        c = KernelConfig.from_id(cid)
        inp = make_inputs(p, "cuda", seed=0)

        def fn(c=c, p=p, inp=inp):
            return solvers.launch(p, c, inp.a, inp.b, inp.out, check=False)
        try:
            fn()
        except Exception as exc:  # a case config invalid on this GPU: reported, skipped
            rows.append({"problem": p.key(), "config_id": cid, "error": str(exc)[:200]})
            continue
        ours, ref = [], []
        for _ in range(args.rounds):
            ours.append(time_fn(fn, warmup=0, reps=10, min_reps=3, max_ms=25).ms)
            ref.append(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))
        row = {"problem": p.key(), "config_id": cid, "tilepick_ms": statistics.median(ours),
               "do_bench_ms": statistics.median(ref),
               "tilepick_rounds": ours, "do_bench_rounds": ref}
        row["ratio"] = row["tilepick_ms"] / row["do_bench_ms"]
        rows.append(row)
        print(f"{p.key():40s} {cid:45s} tilepick {row['tilepick_ms']:.4f} ms  "
              f"do_bench {row['do_bench_ms']:.4f} ms  ratio {row['ratio']:.3f}", flush=True)
    from tilepick.provenance import collect

    with open(os.path.join(args.out, "timing_check.json"), "w") as fh:
        json.dump({"provenance": collect(), "hold_margin": HOLD_MARGIN, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
