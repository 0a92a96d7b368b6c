"""Does cuBLAS behind padded copies (``gemm.cublas_repack``) escape its align1 kernels? (GPU)

Why: cuBLAS runs Turing-era ``align1`` kernels, 3-7x slower than its Hopper ones, on problems
whose strides are not 16-byte multiples (`cublas_layout_probe.py`, session 30). A first
``gemm.cublas_repack`` padded only the leading dimensions, and ran no faster than cuBLAS
(session 31's first top-up sweeps). Per problem this times, in interleaved rounds (L2
flushed), the launches the sweeps time (``solvers.bind``): ``gemm.cublas``, ``gemm.cublas_repack``,
and cuBLAS on the padded problem's own operands (``padded``: what the repack costs without its
copies), each checked against float64 first, and names the kernels each launches. On the GPU:

    PYTHONPATH=src python3 benchmarks/cublas_repack_probe.py --out FILE.json [--problems KEY ...]

Exits 1 when the repack is not faster than cuBLAS on the median of the problems above
``--gate-us`` of cuBLAS time (so a device call can skip the sweeps that would measure it).
"""

import argparse
import json
import statistics
import sys

from probe_kit import kernels_of

PROBLEMS = ["gemm.bf16.cc.m1169.n7168.k5120", "gemm.bf16.cc.m631.n5120.k13824",
            "gemm.bf16.cr.m777.n8192.k3072", "gemm.bf16.cc.m83.n13824.k5120",
            "gemm.bf16.cc.m7.n8192.k8192", "gemm.bf16.cr.m3.n11329.k6029",
            "gemm.bf16.rr.m511.n512.k513", "gemm.bf16.rr.m1000.n4096.k4097",
            "gemm.bf16.rc.m1024.n4095.k4096", "gemm.bf16.cc.m1.n4096.k4096"]


def probe(key: str, rounds: int) -> dict:
    from tilepick import solvers
    from tilepick.bench.timing import interleaved
    from tilepick.problem import GemmProblem
    from tilepick.solvers import repack
    from tilepick.tensors import make_inputs, reference, rel_error

    p = GemmProblem.from_key(key)
    q = repack.padded_problem(p)
    inp, twin = make_inputs(p, "cuda"), make_inputs(q, "cuda", seed=1)
    fns, errors = {}, {}
    for name, prob, x, cid in (("cublas", p, inp, "gemm.cublas"),
                               ("repack", p, inp, "gemm.cublas_repack"),
                               ("padded", q, twin, "gemm.cublas")):
        run = solvers.bind(prob, cid, x.a, x.b, x.out)
        fns[name] = lambda run=run, x=x: run(x.a, x.b, x.out)
        fns[name]()
        errors[name] = rel_error(x.out, reference(prob, x))
    timed = interleaved(fns, rounds=rounds, max_ms=60.0)
    rows = {name: {"us": r.ms * 1e3, "spread": r.spread, "rel_error": errors[name],
                   "kernels": kernels_of(fns[name])} for name, r in timed.items()}
    print(key, "  ".join(f"{n}={v['us']:.1f}us" for n, v in rows.items()),
          f"cublas/repack={rows['cublas']['us'] / rows['repack']['us']:.2f}", flush=True)
    return {"problem": key, "padded": q.key(), "rows": rows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--problems", nargs="+", default=PROBLEMS)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--gate-us", type=float, default=30.0)
    args = ap.parse_args()
    from tilepick.provenance import collect

    results = [probe(k, args.rounds) for k in args.problems]
    with open(args.out, "w") as f:
        json.dump({"provenance": collect(), "args": vars(args), "problems": results}, f,
                  indent=1)
    gains = [r["rows"]["cublas"]["us"] / r["rows"]["repack"]["us"] for r in results
             if r["rows"]["cublas"]["us"] >= args.gate_us]
    median = statistics.median(gains) if gains else 0.0
    print(f"median cublas/repack over {len(gains)} problems >= {args.gate_us} us: {median:.2f}")
    sys.exit(0 if median > 1.0 else 1)


if __name__ == "__main__":
    main()
