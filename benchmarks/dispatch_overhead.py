"""Host overhead of ``tilepick.matmul`` on a cached problem.

On a GPU machine: wall time per call of ``tilepick.matmul(a, b)`` (problem cached, winner
known) minus that of launching the same solver directly with a prepared output, both without
synchronisation, over many calls (the GPU queue absorbs the kernels; a tiny problem keeps the
GPU ahead of the host). On a CPU-only machine: the same path with a device whose launch does
nothing, which isolates tilepick's own Python work (problem lookup, decision cache, fallback
loop) from Triton's launch.

    PYTHONPATH=src python benchmarks/dispatch_overhead.py [--calls 20000]
"""

import argparse
import statistics
import time

import torch

import tilepick
from tilepick import solvers
from tilepick.dispatch import Dispatcher
from tilepick.dispatch.devices import Device, RealDevice
from tilepick.problem import GemmProblem


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


def per_call_us(fn, calls, repeats=5):
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(out), min(out), max(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=20000)
    args = ap.parse_args()
    gpu = torch.cuda.is_available()
    dev = "cuda" if gpu else "cpu"
    a = torch.randn(64, 128, device=dev).bfloat16()
    b = torch.randn(128, 64, device=dev).bfloat16()
    p = GemmProblem.from_tensors(a, b)
    cid = "gemm.tma.m64n64k64.g1.w4.s3" if gpu else "gemm.cublas"
    d = Dispatcher(mode="heuristic", device=RealDevice() if gpu else NoLaunch(),
                   predictor=FixedPick(cid), user_db=None)
    tilepick.matmul(a, b, dispatcher=d)  # decide and compile once
    out = torch.empty(64, 64, device=dev, dtype=torch.bfloat16)
    if gpu:
        config = solvers.KernelConfig.from_id(cid)
        direct = lambda: solvers.launch(p, config, a, b, out, check=False)  # noqa: E731
    else:
        direct = lambda: torch.empty(64, 64, dtype=torch.bfloat16)  # the output allocation  # noqa: E731
    via = lambda: tilepick.matmul(a, b, dispatcher=d)  # noqa: E731
    direct()
    m_direct = per_call_us(direct, args.calls)
    m_via = per_call_us(via, args.calls)
    what = "solver launch with a prepared output" if gpu else "allocating the output (no launch)"
    print(f"device: {torch.cuda.get_device_name() if gpu else 'CPU (launch stubbed out)'}")
    print(f"direct ({what}): median {m_direct[0]:.2f} us/call (min {m_direct[1]:.2f}, max {m_direct[2]:.2f})")
    print(f"tilepick.matmul: median {m_via[0]:.2f} us/call (min {m_via[1]:.2f}, max {m_via[2]:.2f})")
    print(f"overhead: {m_via[0] - m_direct[0]:.2f} us/call (target <= 10 us)")


if __name__ == "__main__":
    main()
