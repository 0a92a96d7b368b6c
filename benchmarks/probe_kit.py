"""What the kernel-variant probes share (``persistent_flat_probe.py``, ``warp_spec_probe.py``;
``kernels_of`` for the cuBLAS probes).

One shape's inputs and float64 reference; candidates run once and checked against it before
they may be timed (a variant that cannot build, or computes a wrong result, is recorded with
its reason: a finding, not a crash); then all of them timed together
(``tilepick.bench.timing.interleaved``) into rows sorted by speed, with cuBLAS as the yardstick.
"""

from __future__ import annotations

TOLERANCE = 1e-2   # relative error against float64 above which a variant is wrong


def kernels_of(fn) -> list[str]:
    """The names of the GPU kernels one call of ``fn`` launches (torch's profiler): which
    library kernel a vendor call chose (``cublas_layout_probe.py``, ``cublas_repack_probe.py``)."""
    import torch

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})


class CheckedCandidates:
    def __init__(self, spec: str, dtype="bf16", device: str = "cuda"):
        """``spec``: ``MxNxK:layout``. cuBLAS (torch.matmul) is the first candidate."""
        import torch

        from tilepick.problem import DType, GemmProblem
        from tilepick.solvers.triton_gemm import _as3d
        from tilepick.tensors import checked_reference, make_inputs

        try:
            dims, layout = spec.split(":")
            m, n, k = map(int, dims.split("x"))
        except ValueError:
            raise ValueError(f"shape {spec!r}: expected MxNxK:layout, e.g. 4096x4096x4096:rr") \
                from None
        self.spec, self.device = spec, device
        self.p = GemmProblem(m, n, k, 1, DType(dtype), layout)
        self.inp = make_inputs(self.p, device)
        self.ref = checked_reference(self.p, self.inp)
        self.a3, self.b3 = _as3d(self.inp.a), _as3d(self.inp.b)
        self.fns, self.errors, self.notes = {}, {}, {}
        out = self.output()
        self.add("cublas", lambda o=out: torch.matmul(self.inp.a, self.inp.b, out=o), out)

    def output(self):
        import torch

        return torch.empty(self.p.m, self.p.n, device=self.device,
                           dtype=self.p.dtype.out_dtype.torch_dtype)

    def add(self, name: str, fn, out) -> bool:
        """Run ``fn`` (which writes ``out``) once; keep it for timing if its result is right."""
        import torch

        try:
            out.fill_(float("nan"))
            fn()
            if self.device == "cuda":
                torch.cuda.synchronize()
            self.errors[name] = self.ref.error(out)
        except Exception as exc:  # a variant that cannot build is a finding, not a crash
            self.notes[name] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
            return False
        if self.errors[name] < TOLERANCE:
            self.fns[name] = fn
            return True
        self.notes[name] = f"wrong result (error {self.errors[name]:.3g})"
        return False

    def time(self, rounds: int, max_ms: float) -> tuple[list[dict], dict]:
        """Every kept candidate in interleaved rounds: rows best first, and the timings."""
        from tilepick.bench.timing import interleaved

        timed = interleaved(self.fns, rounds=rounds, max_ms=max_ms)
        tflops = {name: self.p.flops / (r.ms * 1e9) for name, r in timed.items()}
        lib = tflops.get("cublas")
        rows = sorted(({"candidate": name, "tflops": tflops[name], "ms": timed[name].ms,
                        "spread": timed[name].spread, "rounds_ms": list(timed[name].rounds_ms),
                        "error": self.errors[name],
                        "over_cublas": tflops[name] / lib if lib else None}
                       for name in timed), key=lambda r: -r["tflops"])
        return rows, timed


def best_by_prefix(rows: list[dict], prefixes) -> dict:
    """The fastest row whose candidate starts with each prefix (None where none does)."""
    return {v: max((r for r in rows if r["candidate"].startswith(v)),
                   key=lambda r: r["tflops"], default=None) for v in prefixes}


def best_line(spec: str, best: dict) -> str:
    return f"{spec:22s} " + "  ".join(f"{v.rstrip('.')}={b['tflops']:.0f} ({b['spread']:.1%})"
                                      for v, b in best.items() if b)
