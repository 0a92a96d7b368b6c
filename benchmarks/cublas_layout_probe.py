"""How fast is torch.matmul (cuBLAS) on each layout of the same GEMM? (GPU)

Why: the first exhaustive sweeps of layouts cc and cr (session 30, `validation_cc/`,
`validation_cr/`) read cuBLAS at a median ~3x and up to 8x slower than on rr for the same shape
(1169 x 7168 x 5120: 112 us rr, 795 us cc), while cuBLAS takes any transposition. This asks
whether that is cuBLAS's kernel choice or the harness: the same operands as the sweeps
(`tensors.make_inputs`) through `torch.matmul(a, b, out=...)` (the cuBLAS solver's call),
without ``out``, and with the transposed operand copied to row-major first (the copy timed
too); each timed in interleaved rounds (L2 flushed), and the kernels each launches named by
the profiler. On the GPU:

    PYTHONPATH=src python3 benchmarks/cublas_layout_probe.py --out FILE.json [--shapes MxNxK ...]
"""

import argparse
import json

from probe_kit import kernels_of

SHAPES = ["1169x7168x5120", "631x5120x13824", "83x13824x5120", "7x8192x8192", "4096x4096x4096"]


def probe(spec: str, rounds: int) -> dict:
    import torch

    from tilepick.bench.timing import interleaved
    from tilepick.problem import GemmProblem
    from tilepick.tensors import make_inputs

    m, n, k = map(int, spec.split("x"))
    fns, out = {}, {}
    for layout in ("rr", "rc", "cr", "cc"):
        p = GemmProblem(m, n, k, dtype="bf16", layout=layout)
        inp = make_inputs(p, "cuda")
        a, b, o = inp.a, inp.b, inp.out
        fns[f"{layout}.out"] = lambda a=a, b=b, o=o: torch.matmul(a, b, out=o)
        fns[f"{layout}.plain"] = lambda a=a, b=b: torch.matmul(a, b)
        if layout[0] == "c":
            fns[f"{layout}.copy_a"] = lambda a=a, b=b, o=o: torch.matmul(a.contiguous(), b, out=o)
        ref = (a.double() @ b.double())
        fns[f"{layout}.out"]()
        out[layout] = float((o.double() - ref).abs().max() / ref.abs().max())
    timed = interleaved(fns, rounds=rounds, max_ms=60.0)
    flops = 2 * m * n * k
    rows = {name: {"us": r.ms * 1e3, "tflops": flops / (r.ms * 1e9), "spread": r.spread,
                   "kernels": kernels_of(fns[name])} for name, r in timed.items()}
    line = "  ".join(f"{name}={v['us']:.1f}" for name, v in rows.items())
    print(spec, line, flush=True)
    return {"shape": spec, "max_rel_error": out, "rows": rows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", nargs="+", default=SHAPES)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    from tilepick.provenance import collect

    results = [probe(s, args.rounds) for s in args.shapes]
    with open(args.out, "w") as f:
        json.dump({"provenance": collect(), "args": vars(args), "shapes": results}, f, indent=1)


if __name__ == "__main__":
    main()
