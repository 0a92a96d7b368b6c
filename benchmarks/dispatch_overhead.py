"""Host overhead of ``tilepick.matmul`` on a cached problem, stage by stage.

On a GPU machine: wall time per call of each layer of the hot path, both without
synchronisation, over many calls (the GPU queue absorbs the kernels; a tiny problem keeps the
GPU ahead of the host, so what is timed is the host):

0. ``triton direct``: the Triton kernel itself, ``kernel[grid](*args, **constexprs)`` with every
   argument (descriptors included) built once beforehand: what a hand-written launch of the
   same kernel on the same tensors costs through Triton's ``JITFunction.run`` (for a cuBLASLt
   entry, ``cublasLtMatmul`` through tilepick's binding with the entry rebuilt once; for
   cuBLAS, ``torch.matmul(out=)``, which on a GPU is also timed beside the chain);
   ``bound launch``: the solver's prepared launch (``solvers.bind``), which after its first
   call skips ``JITFunction.run`` for the compiled kernel's launcher (``solvers.direct_launch``;
   ``TILEPICK_DIRECT_LAUNCH=0`` turns that off for an A/B);
1. ``launch``: the solver's launch with a prepared config and output (plan lookup, 3-D views,
   descriptors per call);
2. ``alloc + launch``: plus allocating the output, as every ``matmul(a, b)`` call does;
3. ``device.launch``: the dispatcher's device with a config id (id parsing, one more call);
4. ``dispatcher.run``: the decision-cache lookup and the fallback guard, prepared output;
5. ``tilepick.matmul``: the public call: the prepared launch found by tensor signature
   (``Dispatcher.bound``), the output allocated, the kernel launched;
   and, beside the chain, ``tilepick.matmul(out=)`` into a caller's output.

The overhead (5 - 0; and 5 - 1, the figure of sessions 4-7) is split into the differences of
consecutive stages, and a cProfile of stage 5 names the functions the time goes to. On a CPU-only machine the same stages run with
a device whose launch does nothing (stage 1 is then empty), which isolates tilepick's own
Python work from Triton's launch.

    PYTHONPATH=src python benchmarks/dispatch_overhead.py [--calls 20000] [--out DIR]
        [--config ID] [--shape MxNxK] [--layout rr|rc]
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import statistics
import time
from pathlib import Path

import torch

import tilepick
from tilepick import solvers
from tilepick.dispatch import Dispatcher
from tilepick.dispatch.devices import Device, RealDevice
from tilepick.problem import GemmProblem
from tilepick.solvers import direct_launch, triton_gemm
from tilepick.provenance import collect


class NoLaunch(Device):
    def launch(self, problem, config_id, a, b, out, scale_a=None, scale_b=None):
        return out

    def benchmark(self, *args, **kw):
        return {}


class FixedPick:
    def __init__(self, cid):
        self.cid = cid

    def rank(self, problem, top=None):
        return [(self.cid, 1.0, 0.0)]


def library_call(p, config, a, b, out):
    """Stage 0: the config's kernel launched with everything built beforehand. A Triton config:
    ``kernel[grid](...)``; a cuBLASLt entry: ``cublasLtMatmul`` through tilepick's binding with
    the entry rebuilt once (``LtGemm.run``, the probes' path); cuBLAS: ``torch.matmul(out=)``."""
    if config.family == "gemm.cublas":
        return lambda: torch.matmul(a, b, out=out)
    if config.family == "gemm.cublaslt":
        from tilepick.solvers import cublaslt_lib as lt

        g = lt.for_tensors(a, b, out)
        algo = g.rebuild(lt.LtAlgo.parse(config.entry))
        stream = torch.cuda.current_stream().cuda_stream
        return lambda: g.run(algo, a, b, out, stream)
    (kernel, grid, kargs, kw), *more = solvers.SOLVERS[config.family].calls(
        p, config, triton_gemm._as3d(a), triton_gemm._as3d(b), triton_gemm._as3d(out), None, None)
    if more:
        raise SystemExit(f"{config.id} launches {1 + len(more)} kernels; pick a one-kernel config")
    return lambda: kernel[grid](*kargs, **kw)


def per_call_us(fns: dict, calls: int, repeats: int = 7) -> dict:
    """Host time per call of each stage: ``repeats`` rounds, every stage once per round in
    turn, so that host clock drift (turbo, other tenants) hits every stage alike; the median
    and range over the rounds."""
    times = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            times[name].append((time.perf_counter() - t0) / calls * 1e6)
    return {name: {"median_us": statistics.median(t), "min_us": min(t), "max_us": max(t)}
            for name, t in times.items()}


def profile_top(fn, calls, n=15) -> str:
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(n)
    return buf.getvalue()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=7, help="interleaved rounds over the stages")
    ap.add_argument("--config", default="gemm.tma.m64n64k64.g1.w4.s3",
                    help="the config the dispatcher runs (GPU); try a gemm.ptr one too, "
                    "gemm.cublas, or gemm.cublaslt (the shape's first cuBLASLt entry)")
    ap.add_argument("--out", help="folder for dispatch_overhead.json")
    ap.add_argument("--shape", default="64x64x128", help="MxNxK of the (small) problem")
    ap.add_argument("--layout", default="rr", choices=("rr", "rc"),
                    help="rc: B is a transposed N x K weight (x @ W.T), as a GEMV config needs")
    args = ap.parse_args()
    gpu = torch.cuda.is_available()
    dev = "cuda" if gpu else "cpu"
    if not gpu:   # CPU tensors reach the kernels only under the interpreter (since session
        os.environ["TRITON_INTERPRET"] = "1"   # 44 the API refuses them otherwise); NoLaunch
    m, n, k = map(int, args.shape.split("x"))
    a = torch.randn(m, k, device=dev).bfloat16()
    b = (torch.randn(n, k, device=dev).bfloat16().T if args.layout == "rc"
         else torch.randn(k, n, device=dev).bfloat16())
    p = GemmProblem.from_tensors(a, b)
    cid = args.config if gpu else "gemm.cublas"
    if cid == "gemm.cublaslt":  # the family alone: the heuristic's first entry for the shape
        cid = f"{cid}.{solvers.SOLVERS[cid].entries(p)[0][0].name}"
    device = RealDevice() if gpu else NoLaunch()
    d = Dispatcher(mode="heuristic", device=device, predictor=FixedPick(cid), user_db=None)
    tilepick.matmul(a, b, dispatcher=d)  # decide and compile once
    out = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
    config = solvers.KernelConfig.from_id(cid)
    if gpu:
        direct = library_call(p, config, a, b, out)
        bound_fn = solvers.bind(p, config, a, b, out)
        bound = lambda: bound_fn(a, b, out)  # noqa: E731
        launch = lambda: solvers.launch(p, config, a, b, out, check=False)  # noqa: E731
        alloc_launch = lambda: solvers.launch(  # noqa: E731
            p, config, a, b, torch.empty(m, n, device=dev, dtype=torch.bfloat16), check=False)
    else:
        direct = bound = launch = lambda: out  # noqa: E731
        alloc_launch = lambda: torch.empty(m, n, dtype=torch.bfloat16)  # noqa: E731
    stages = {
        "triton direct": direct,
        "bound launch": bound,
        "launch": launch,
        "alloc + launch": alloc_launch,
        "device.launch": lambda: device.launch(p, cid, a, b, out),
        "dispatcher.run": lambda: d.run(p, a, b, out),
        "tilepick.matmul": lambda: tilepick.matmul(a, b, dispatcher=d),
    }
    extra = {"tilepick.matmul(out=)": lambda: tilepick.matmul(a, b, out=out, dispatcher=d)}
    if gpu:  # what a user compares against
        extra["torch.matmul"] = lambda: torch.matmul(a, b)
        extra["torch.matmul(out=)"] = lambda: torch.matmul(a, b, out=out)
    for fn in (*stages.values(), *extra.values()):
        fn()
    timed = per_call_us(stages | extra, args.calls, args.repeats)
    names = list(stages)
    steps = {f"{names[i]} - {names[i - 1]}": timed[names[i]]["median_us"]
             - timed[names[i - 1]]["median_us"] for i in range(1, len(names))}
    overhead = timed["tilepick.matmul"]["median_us"] - timed["triton direct"]["median_us"]
    over_torch = (timed["tilepick.matmul"]["median_us"] - timed["torch.matmul"]["median_us"]
                  if "torch.matmul" in timed else None)
    over_launch = timed["tilepick.matmul"]["median_us"] - timed["launch"]["median_us"]
    over_bound = timed["tilepick.matmul"]["median_us"] - timed["bound launch"]["median_us"]
    prof = profile_top(stages["tilepick.matmul"], min(args.calls, 5000))
    print(f"device: {torch.cuda.get_device_name() if gpu else 'CPU (launch stubbed out)'}; "
          f"config {cid}")
    for name, t in timed.items():
        print(f"{name:18s} median {t['median_us']:7.2f} us/call "
              f"(min {t['min_us']:.2f}, max {t['max_us']:.2f})")
    for name, dt in steps.items():
        print(f"  {name:40s} {dt:+7.2f} us")
    print(f"overhead (tilepick.matmul - triton direct): {overhead:.2f} us/call (target <= 10 us); "
          f"tilepick.matmul - solver launch: {over_launch:.2f} us; tilepick.matmul - bound launch: "
          f"{over_bound:.2f} us; direct launch path {'on' if direct_launch.enabled() else 'off'}, "
          f"{direct_launch.STATS['direct']} direct launches"
          + (f"; tilepick.matmul - torch.matmul: {over_torch:.2f} us" if gpu else ""))
    print(prof)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "dispatch_overhead.json").write_text(json.dumps({
            "provenance": collect(), "command": "python benchmarks/dispatch_overhead.py "
            f"--calls {args.calls} --repeats {args.repeats} --config {args.config}", "config": cid,
            "stages": timed, "steps_us": steps, "overhead_us": overhead,
            "overhead_vs_solver_launch_us": over_launch, "overhead_vs_bound_launch_us": over_bound,
            "overhead_vs_torch_matmul_us": over_torch,
            "direct_launch": direct_launch.enabled(),
            "profile": prof}, indent=1) + "\n")


if __name__ == "__main__":
    main()
