"""Where the dispatcher benchmarks and launches: the real GPU, or a simulation.

The simulation replays measured datasets (Kernel Tuner's simulation-runner idea): a
"benchmark" returns the time the sweep measured for that (problem, config), and a launch
computes the product with torch, so the find modes, the perf-db and the fallbacks are tested
on a CPU against real GPU timings.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from tilepick import solvers
from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem


@dataclass
class Outcome:
    ms: float | None
    status: str = "ok"          # ok | invalid | unmeasured
    reason: str = ""
    rounds_ms: tuple = ()       # each interleaved round's median, where the device has rounds


class Device:
    """What the dispatcher needs of a place that runs kernels."""

    def launch(self, problem: GemmProblem, config_id: str, a, b, out, scale_a=None, scale_b=None):
        raise NotImplementedError

    def benchmark(self, problem: GemmProblem, config_ids: list[str], a, b, out, scale_a=None,
                  scale_b=None) -> dict[str, Outcome]:
        raise NotImplementedError

    def bind(self, problem: GemmProblem, config_id: str, a, b, out, scale_a=None, scale_b=None):
        """``launch`` of one config prepared for tensors laid out like these (the contract of
        ``Solver.bind``): a callable ``(a, b, out, scale_a=None, scale_b=None)``."""
        return functools.partial(self.launch, problem, config_id)

    def bind_new(self, problem: GemmProblem, config_id: str, a, b):
        """A launch that makes its own output (``Solver.bind_new``), or None: allocate and
        call ``bind``'s."""
        return None

    def check_tensors(self, a, b, out) -> None:
        """Raise :class:`~tilepick.problem.DeviceMismatch` for tensors this device cannot run
        on (a replay of measured times runs on anything)."""

    def guard(self, a):
        """A context in which kernels on ``a`` launch where ``a`` is, or None where they do
        already (a replay: always None)."""
        return None

    def can_time(self) -> bool:
        """Whether candidates can be timed now: not while a CUDA graph is being captured
        (timing synchronises, and every launch would land in the graph)."""
        return True

    def can_duel(self) -> bool:
        """Whether :meth:`duel` gives more evidence than :meth:`benchmark` gave (more paired
        rounds); a replay of fixed times does not."""
        return False

    def duel(self, problem: GemmProblem, config_ids: list[str], a, b, out, scale_a=None,
             scale_b=None) -> dict[str, Outcome]:
        """A longer benchmark of a few candidates (a challenger and cuBLAS), where the first
        one's rounds could not tell them apart."""
        return self.benchmark(problem, config_ids, a, b, out, scale_a, scale_b)


class RealDevice(Device):
    """Launch for real; benchmark candidates in interleaved rounds (clock drift hits all)."""

    def __init__(self, rounds: int = 3, reps: int = 20, max_ms: float = 20.0,
                 duel_rounds: int = 15):
        self.rounds, self.reps, self.max_ms = rounds, reps, max_ms
        self.duel_rounds = duel_rounds
        self.gpu_ms_spent = 0.0
        from tilepick.runtime import device_guard_getter

        self._guard = device_guard_getter()

    def launch(self, problem, config_id, a, b, out, scale_a=None, scale_b=None):
        return solvers.launch(problem, KernelConfig.from_id(config_id), a, b, out, scale_a,
                              scale_b, check=False)

    def bind(self, problem, config_id, a, b, out, scale_a=None, scale_b=None):
        return solvers.bind(problem, config_id, a, b, out, scale_a, scale_b)

    def guard(self, a):
        """Triton and cuBLASLt launch on the current CUDA device
        (``runtime.device_guard_getter``)."""
        return self._guard(a)

    def check_tensors(self, a, b, out) -> None:
        from tilepick.runtime import require_devices

        require_devices(a=a, b=b, out=out)

    def bind_new(self, problem, config_id, a, b):
        return solvers.bind_new(problem, config_id, a, b)

    def can_time(self) -> bool:
        from tilepick.runtime import capturing

        return not capturing()

    def can_duel(self) -> bool:
        return self.duel_rounds > self.rounds

    def duel(self, problem, config_ids, a, b, out, scale_a=None, scale_b=None):
        """:meth:`benchmark` with ``duel_rounds`` rounds (two candidates of at most ``max_ms``
        a round each: 0.6 s of GPU time at most)."""
        return self.benchmark(problem, config_ids, a, b, out, scale_a, scale_b,
                              rounds=self.duel_rounds)

    def benchmark(self, problem, config_ids, a, b, out, scale_a=None, scale_b=None,
                  rounds: int | None = None):
        from tilepick.bench.timing import interleaved

        outcomes: dict[str, Outcome] = {}
        alive = []
        for cid in config_ids:  # the first call compiles (or loads) and may fail
            try:
                self.launch(problem, cid, a, b, out, scale_a, scale_b)
                alive.append(cid)
            except solvers.NotInThisContextError as exc:  # valid elsewhere: not a failure
                outcomes[cid] = Outcome(None, "unmeasured", f"not in this context: {exc}"[:300])
            except Exception as exc:  # a failing candidate is an outcome, not an error
                outcomes[cid] = Outcome(None, "invalid", f"{type(exc).__name__}: {exc}"[:300])
        fns = {cid: (lambda c=cid: self.launch(problem, c, a, b, out, scale_a, scale_b))
               for cid in alive}
        for cid, r in interleaved(fns, rounds=rounds or self.rounds, warmup=0, reps=self.reps,
                                  max_ms=self.max_ms, min_reps=3).items():
            self.gpu_ms_spent += r.gpu_ms
            outcomes[cid] = Outcome(r.ms, rounds_ms=tuple(r.rounds_ms))
        return outcomes


@dataclass
class SimulatedDevice(Device):
    """Replays a measured dataset. ``failing`` config ids raise on launch (to test fallbacks);
    ``refusing`` ones refuse the context, as split-K in one launch does inside CUDA graph
    capture; ``capturing`` says a graph is being captured (nothing can be timed)."""

    times: dict = field(default_factory=dict)   # (problem_key, config_id) -> ms
    failing: set = field(default_factory=set)
    refusing: set = field(default_factory=set)
    capturing: bool = False
    launched: list = field(default_factory=list)
    benchmarked: list = field(default_factory=list)
    gpu_ms_spent: float = 0.0

    @classmethod
    def from_frame(cls, df, **kw) -> "SimulatedDevice":
        ok = df[df["valid"]]
        return cls(times={(p, c): float(t) for p, c, t in
                          zip(ok["problem_key"], ok["config_id"], ok["time_ms"])}, **kw)

    def problems(self) -> list[str]:
        return sorted({p for p, _ in self.times})

    def launch(self, problem, config_id, a, b, out, scale_a=None, scale_b=None):
        import torch

        if config_id in self.failing:
            raise solvers.ConfigInvalidError(f"{config_id} fails (simulated)")
        if config_id in self.refusing:
            raise solvers.NotInThisContextError(f"{config_id} refuses (simulated capture)")
        self.launched.append((problem.key(), config_id))
        r = torch.matmul(a.float(), b.float())
        if scale_a is not None:
            r = r * (scale_a * scale_b)
        out.copy_(r.to(out.dtype))
        return out

    def can_time(self) -> bool:
        return not self.capturing

    def benchmark(self, problem, config_ids, a, b, out, scale_a=None, scale_b=None):
        if self.capturing:  # what a real GPU would do: timing breaks the capture
            raise RuntimeError("benchmark during (simulated) CUDA graph capture")
        res = {}
        for cid in config_ids:
            self.benchmarked.append((problem.key(), cid))
            if cid in self.failing:
                res[cid] = Outcome(None, "invalid", "fails (simulated)")
                continue
            if cid in self.refusing:
                res[cid] = Outcome(None, "unmeasured", "refuses this context (simulated)")
                continue
            ms = self.times.get((problem.key(), cid))
            if ms is None:
                res[cid] = Outcome(None, "unmeasured", "not in the replayed dataset")
            else:
                self.gpu_ms_spent += ms * 20  # what a real benchmark of ~20 reps would cost
                res[cid] = Outcome(ms)
        return res
