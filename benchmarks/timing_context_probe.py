"""Why does one kernel read ~10% apart in two harnesses on the same machine?

Session 26: ``gemm.tma_persistent.m128n256k64.g8.w8.s3`` on rc 8192 x 10240 x 8192 ran at
670 TFLOP/s inside the LLM suite (``dispatch_llm_suite.py``) and at 754 inside
``warp_spec_probe.py`` minutes later, cuBLAS at ~695 in both. This times the kernel against
cuBLAS (``tilepick.bench.timing.interleaved``, the harnesses' shared timer) under each
difference between the two harnesses in turn, in one process:

- ``fresh``: compiled here by the first launch (the probe);
- ``pool``: compiled ahead by the warm-up's process pool into an empty Triton cache, then
  loaded (the suite: ``tilepick.dispatch.warmup.compile_pairs``);
- ``shared_out``: every candidate writes the same output tensor (the suite) instead of its own;
- ``with_tutorial``: the Triton tutorial's pointer config timed in the same rounds (the suite
  times it beside the others);
- ``empty_out``: outputs from ``torch.empty`` (the probes) instead of ``make_output``;
- ``with_tma``: the same tiles' one-program-per-tile TMA config in the rounds (the probes time
  several variants of a config beside each other).

    PYTHONPATH=src python3 benchmarks/timing_context_probe.py [--shape 8192x10240x8192:rc]
"""

import argparse
import os
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shape", default="8192x10240x8192:rc")
    ap.add_argument("--config", default="gemm.tma_persistent.m128n256k64.g8.w8.s3")
    ap.add_argument("--tutorial", default="gemm.ptr.m128n128k32.g8.w4.s4")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    # an empty cache, so that the pool really compiles (set before triton is imported)
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-cache-")

    from tilepick.config import KernelConfig
    from tilepick.dispatch.warmup import compile_pairs
    from tilepick.problem import DType, GemmProblem

    dims, layout = args.shape.split(":")
    m, n, k = map(int, dims.split("x"))
    p = GemmProblem(m, n, k, 1, DType.BF16, layout)
    cfg, tut = KernelConfig.from_id(args.config), KernelConfig.from_id(args.tutorial)
    variant = os.environ.get("PROBE_VARIANT", "pool")
    if variant == "pool":   # before CUDA is touched in this process, as the suite does
        report = compile_pairs([(p, cfg), (p, tut)], 1, processes=4, progress=False)
        print("pool compile:", report.to_dict(), flush=True)

    import torch

    from tilepick import solvers
    from tilepick.bench.timing import interleaved
    from tilepick.data.io import write_json
    from tilepick.provenance import collect
    from tilepick.tensors import make_inputs, make_output

    inp = make_inputs(p, "cuda", seed=0)
    own = make_output(p, "cuda")
    cub = KernelConfig.from_id("gemm.cublas")

    def fn(c, out):
        return lambda: solvers.launch(p, c, inp.a, inp.b, out, check=False)

    setups = {
        "own_out": {"torch": fn(cub, inp.out), "kernel": fn(cfg, own)},
        "shared_out": {"torch": fn(cub, inp.out), "kernel": fn(cfg, inp.out)},
        "with_tutorial": {"torch": fn(cub, inp.out), "kernel": fn(cfg, own),
                          "tutorial": fn(tut, make_output(p, "cuda"))},
        "empty_out": {"torch": fn(cub, torch.empty(m, n, device="cuda", dtype=torch.bfloat16)),
                      "kernel": fn(cfg, torch.empty(m, n, device="cuda", dtype=torch.bfloat16))},
        "with_tma": {"torch": fn(cub, inp.out), "kernel": fn(cfg, own),
                     "tma": fn(KernelConfig.from_id(cfg.id.replace("gemm.tma_persistent.",
                                                                   "gemm.tma.")),
                               make_output(p, "cuda"))},
    }
    rows = []
    for rep in range(args.repeats):
        for name, fns in setups.items():
            timed = interleaved(fns, rounds=args.rounds, warmup=1, reps=30, max_ms=40)
            tf = {c: p.flops / (r.ms * 1e9) for c, r in timed.items()}
            paired = torch.tensor(timed["torch"].rounds_ms) / torch.tensor(
                timed["kernel"].rounds_ms)
            row = {"variant": variant, "setup": name, "repeat": rep,
                   "tflops": tf, "spread": {c: r.spread for c, r in timed.items()},
                   "kernel_over_torch_paired": float(paired.median())}
            rows.append(row)
            print(variant, name, rep, {c: round(v) for c, v in tf.items()},
                  f"paired {row['kernel_over_torch_paired']:.3f}", flush=True)
    write_json(args.out, {"provenance": collect(), "args": vars(args), "rows": rows})


if __name__ == "__main__":
    main()
