"""The PyTorch API's edge cases on a real GPU (run through the device tool; CI runs them under
the interpreter, where CPU tensors are the kernels' tensors and the GPU path is never taken).

Checks, with a scratch user perf-db, in heuristic and hybrid mode: products of
``tilepick.matmul`` / ``bmm`` / ``linear`` against float64 on CUDA tensors (a fresh call and the
prepared launch of a repeated one, with and without ``out=``); linear's gradients (autograd
runs the backward GEMMs on a thread of its own: no perf-db may be bypassed on the way); one
dispatcher called from 4 threads at once; a call on a side stream; torch.matmul's other shapes
(x @ W with a batched x, 4-D equal batches, 1-D, broadcast batches); empty GEMMs (M, N, K or batch 0)
equal to torch.matmul's result; float64 and integer tensors served by torch (its result, or
its error: CUDA has no int32 matmul); CPU tensors
refused with ``DeviceMismatch`` before any candidate is tried, leaving nothing in the db and
no fallback; a list named in the error. Exits 1 on any failure.

    PYTHONPATH=src python benchmarks/api_edge_check.py [--out DIR]
"""

import argparse
import os
import sys
import tempfile
import warnings

import torch

import tilepick
from tilepick.data.io import write_json
from tilepick.dispatch import Dispatcher, PerfDb
from tilepick.problem import GemmProblem

SHAPES = [(1, 4096, 4096), (16, 4096, 4096), (128, 1000, 513), (257, 129, 67), (4097, 4, 1023),
          (1000, 1000, 1000)]


def close(y, ref) -> bool:
    err = (y.double() - ref).abs().max().item()
    return err <= 2e-2 * ref.abs().max().item() + 5e-2


def threads_and_streams(d, mode: str, check) -> None:
    """One dispatcher called from 4 threads at once on new shapes (each tuning in hybrid), and
    a call on a side stream right after that stream wrote its input (a launch on another
    stream would read it unwritten)."""
    import threading

    dev = "cuda"
    shapes = [(64 + 8 * i, 1536 + 256 * j, 768) for i in range(4) for j in range(3)]
    results, errors = {}, []

    def worker(i):
        try:
            torch.cuda.set_device(0)
            for j in range(3):
                m, n, k = shapes[3 * i + j]
                a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
                b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
                results[(i, j)] = close(tilepick.matmul(a, b, dispatcher=d),
                                        a.double() @ b.double())
        except Exception as exc:   # reported below
            errors.append(f"{type(exc).__name__}: {exc}"[:300])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    check(not errors and len(results) == 12 and all(results.values()),
          f"{mode} 4 threads: errors {errors[:2]}, {sum(results.values())} of 12 right")
    side = torch.cuda.Stream()
    b = torch.randn(4096, 2048, device=dev, dtype=torch.bfloat16)
    side.wait_stream(torch.cuda.current_stream())   # b, made on the default stream
    with torch.cuda.stream(side):
        big = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
        for _ in range(3):
            big = big @ big / 90.0   # ~3 ms of work ahead of the input on this stream
        x = big[:96, :4096] + 1.0
        y = tilepick.matmul(x, b, dispatcher=d)
    side.synchronize()
    check(close(y, x.double() @ b.double()), f"{mode} side stream")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    assert torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET", "0") in ("", "0")
    failures, checks = [], 0

    def check(ok: bool, what: str):
        nonlocal checks
        checks += 1
        if not ok:
            failures.append(what)
            print("FAIL", what, flush=True)

    dev = "cuda"
    with warnings.catch_warnings(record=True) as seen_warnings, \
            tempfile.TemporaryDirectory() as tmp:
        warnings.simplefilter("always")
        db = PerfDb(os.path.join(tmp, "user.sqlite"))
        for mode in ("heuristic", "hybrid"):
            d = Dispatcher(mode=mode, user_db=db)
            for m, n, k in SHAPES:
                for layout in ("rr", "rc"):
                    a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
                    b = torch.randn(k, n, device=dev, dtype=torch.bfloat16) if layout == "rr" \
                        else torch.randn(n, k, device=dev, dtype=torch.bfloat16).t()
                    ref = a.double() @ b.double()
                    for rep in range(2):   # the second call takes the prepared launch
                        check(close(tilepick.matmul(a, b, dispatcher=d), ref),
                              f"{mode} {layout} {m}x{n}x{k} call {rep}")
                    out = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
                    for rep in range(2):
                        tilepick.matmul(a, b, out=out, dispatcher=d)
                        check(close(out, ref), f"{mode} {layout} {m}x{n}x{k} out= call {rep}")
            x = torch.randn(3, 7, 256, device=dev, dtype=torch.bfloat16)
            w = torch.randn(512, 256, device=dev, dtype=torch.bfloat16)
            bias = torch.randn(512, device=dev, dtype=torch.bfloat16)
            check(close(tilepick.linear(x, w, bias, dispatcher=d),
                        x.double() @ w.double().t() + bias.double()), f"{mode} linear")
            p, q = (torch.randn(4, 65, 130, device=dev, dtype=torch.bfloat16),
                    torch.randn(4, 130, 33, device=dev, dtype=torch.bfloat16))
            check(close(tilepick.bmm(p, q, dispatcher=d), p.double() @ q.double()), f"{mode} bmm")
            for sa, sb in (((0, 32), (32, 48)), ((5, 32), (32, 0)), ((4, 0), (0, 5)),
                           ((0, 3, 8), (0, 8, 2))):
                a = torch.randn(*sa, device=dev, dtype=torch.bfloat16)
                b = torch.randn(*sb, device=dev, dtype=torch.bfloat16)
                y = tilepick.matmul(a, b, dispatcher=d)
                check(y.shape == torch.matmul(a, b).shape and torch.equal(y, torch.matmul(a, b)),
                      f"{mode} empty {sa} @ {sb}")
            for dt in (torch.float64, torch.int32):   # torch's answer, or torch's error
                a = torch.arange(12, device=dev).reshape(3, 4).to(dt)
                try:
                    want = a @ a.t()
                except Exception as exc:   # CUDA has no int32 matmul ("addmm_cuda")
                    want = type(exc)
                try:
                    got = tilepick.matmul(a, a.t(), dispatcher=d)
                except Exception as exc:
                    got = type(exc)
                check(got is want if isinstance(want, type) else torch.equal(got, want),
                      f"{mode} {dt} served by torch: {got} / {want}")
            # torch.matmul's other shapes: x @ W folded, 4-D equal batches, 1-D, broadcast
            w2 = torch.randn(256, 384, device=dev, dtype=torch.bfloat16)
            for u, v in ((torch.randn(2, 7, 256, device=dev, dtype=torch.bfloat16), w2),
                         (torch.randn(2, 3, 9, 256, device=dev, dtype=torch.bfloat16),
                          torch.randn(2, 3, 256, 40, device=dev, dtype=torch.bfloat16)),
                         (torch.randn(256, device=dev, dtype=torch.bfloat16), w2),
                         (torch.randn(2, 1, 9, 256, device=dev, dtype=torch.bfloat16),
                          torch.randn(2, 3, 256, 40, device=dev, dtype=torch.bfloat16))):
                y = tilepick.matmul(u, v, dispatcher=d)
                check(y.shape == torch.matmul(u, v).shape
                      and close(y, torch.matmul(u.double(), v.double())),
                      f"{mode} {tuple(u.shape)} @ {tuple(v.shape)}")
            # gradients: a weight and an input that require grad, through linear (bf16)
            x = torch.randn(5, 9, 256, device=dev, dtype=torch.bfloat16, requires_grad=True)
            w = torch.randn(512, 256, device=dev, dtype=torch.bfloat16, requires_grad=True)
            tilepick.linear(x, w, dispatcher=d).float().square().sum().backward()
            x64 = x.detach().double().requires_grad_()
            w64 = w.detach().double().requires_grad_()
            torch.nn.functional.linear(x64, w64).square().sum().backward()
            for name, got, want in (("dx", x.grad, x64.grad), ("dw", w.grad, w64.grad)):
                check(got is not None and close(got, want), f"{mode} linear {name}")
            before = d.stats["fallbacks"]
            a = torch.randn(20, 40, dtype=torch.bfloat16)
            b = torch.randn(40, 24, dtype=torch.bfloat16)
            try:
                tilepick.matmul(a, b, dispatcher=d)
                check(False, f"{mode} CPU tensors were accepted")
            except tilepick.DeviceMismatch as exc:
                check("CPU" in str(exc), f"{mode} CPU error names the device: {exc}")
            check(d.stats["fallbacks"] == before, f"{mode} CPU call tried candidates")
            check(db.lookup(d.env, GemmProblem.from_tensors(a, b).key()) is None,
                  f"{mode} CPU call left a record")
            try:
                tilepick.matmul([[1.0]], [[1.0]], dispatcher=d)
                check(False, f"{mode} a list was accepted")
            except tilepick.ProblemError as exc:
                check("torch.Tensor" in str(exc), f"{mode} list error: {exc}")
            threads_and_streams(d, mode, check)
            check(d.stats["fallbacks"] == 0, f"{mode} no fallback at all: {d.stats}")
    bypassed = [str(w.message) for w in seen_warnings if "perf-db" in str(w.message)]
    check(not bypassed, f"a perf-db was bypassed: {bypassed[:2]}")   # e.g. from autograd's thread
    from tilepick.provenance import collect

    summary = {"provenance": collect(), "checks": checks, "failures": failures}
    print(summary, flush=True)
    if args.out:
        write_json(os.path.join(args.out, "api_edge_check.json"), summary)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
