"""Run one candidate on one problem: check it against float64, then time it.

Shared by ``tilepick run``, the GPU check, the benchmarks and the sweeps, so that a config is
judged the same way everywhere. Outcomes are explicit: ``ok``, ``wrong`` (error above the
dtype's tolerance), ``invalid`` (failed to compile or launch), ``not_applicable``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from tilepick import solvers
from tilepick.bench.timing import Timing, time_fn
from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem
from tilepick.tensors import GemmInputs, checked_reference, make_inputs, tolerance


@dataclass
class RunResult:
    config_id: str
    status: str                   # ok | wrong | invalid | not_applicable
    rel_error: float | None = None
    timing: Timing | None = None
    reason: str = ""
    check_s: float = 0.0          # host wall time of the check (first launch: module load)
    time_s: float = 0.0           # host wall time of the timing

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict:
        d = {"config_id": self.config_id, "status": self.status, "rel_error": self.rel_error,
             "reason": self.reason}
        if self.timing is not None:
            d.update(self.timing.to_dict())
        return d


@dataclass
class ProblemInputs:
    """Inputs and (lazily) the reference for one problem, reused across candidates."""

    problem: GemmProblem
    inputs: GemmInputs
    _ref: object = field(default=None, repr=False)

    @classmethod
    def make(cls, problem: GemmProblem, device: str, seed: int = 0) -> "ProblemInputs":
        return cls(problem, make_inputs(problem, device, seed))

    @property
    def ref(self):
        """The (possibly lattice-sampled) float64 reference, computed once per problem."""
        if self._ref is None:
            self._ref = checked_reference(self.problem, self.inputs)
        return self._ref


def failure_reason(exc: Exception) -> str:
    """The one-line reason recorded for a candidate that raised (compile, launch)."""
    if isinstance(exc, solvers.ConfigInvalidError):
        return str(exc)
    msg = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {msg}"[:500]


def run_config(problem: GemmProblem, config: KernelConfig | str, data: ProblemInputs, *,
               check: bool = True, timed: bool = True, **timing_kw) -> RunResult:
    """Check ``config`` on ``problem`` against float64, then time it (``timing_kw`` goes to
    :func:`~tilepick.bench.timing.time_fn`). The sweep checks and times configs in chunks
    instead (:mod:`tilepick.bench.screen`), by the same rules."""
    if isinstance(config, str):
        config = KernelConfig.from_id(config)
    inp = data.inputs
    try:
        solvers.SOLVERS[config.family].check(problem, config)
    except solvers.NotApplicableError as exc:
        return RunResult(config.id, "not_applicable", reason=str(exc))

    def call():
        return solvers.launch(problem, config, inp.a, inp.b, inp.out, inp.scale_a, inp.scale_b,
                              check=False)
    t0 = t1 = time.perf_counter()
    try:
        err = None
        if check:  # also the warm-up: the first launch loads the module
            inp.out.fill_(float("nan"))
            call()
            err = data.ref.error(inp.out)
            t1 = time.perf_counter()
            if not err <= tolerance(problem):
                return RunResult(config.id, "wrong", err, reason=wrong_reason(problem, err),
                                 check_s=t1 - t0)
        timing = time_fn(call, **timing_kw) if timed else None
    except Exception as exc:  # a failing candidate is recorded, never fatal to the caller
        return RunResult(config.id, "invalid", reason=failure_reason(exc),
                         check_s=time.perf_counter() - t0)
    return RunResult(config.id, "ok", err, timing, check_s=t1 - t0,
                     time_s=time.perf_counter() - t1)


def wrong_reason(problem: GemmProblem, err: float) -> str:
    return f"relative error {err:.3g} > tolerance {tolerance(problem):g}"
