"""Check and screen a problem's configs in chunks: many configs share each host-device
synchronisation.

Why: the sweep spent ~6.7 ms a config on small problems (H100, sweep 8052b849ec), most of it
in four synchronisations per config (the check, the probe, the first batch, the rest) and the
GPU idling behind each. Here a chunk of configs is checked at once (each into its own output,
the errors read in one synchronisation) with every check launch timed, then screened in
rounds that queue all the chunk's repetitions (:func:`tilepick.bench.timing.gather`).

The rules are those of :func:`tilepick.bench.timing.time_fn` with a stop bound
(:func:`~tilepick.bench.timing.next_target`): a check launch more than ``PROBE_FACTOR`` x the
bound beyond it stops its config at once; a first batch of ``min_reps`` sizes the rest (about
``max_ms`` of GPU time, at most ``reps``) and stops configs whose median is over the bound.
The check launch is the first launch of its kernel: it counts as a sample only for kernels of
``long_ms`` or more (where a first launch's cold caches are noise); shorter ones use it as
the probe only. A sample whose call reached the GPU late (the host still submitting it when
the GPU got there: module loads) is not used (:func:`~tilepick.bench.timing.late_sample`).
"""

from __future__ import annotations

import math
import statistics
import time
from collections import Counter
from dataclasses import dataclass, field

from tilepick import solvers
from tilepick.bench import timing
from tilepick.bench.runner import ProblemInputs, failure_reason, wrong_reason
from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem
from tilepick.tensors import make_output, tolerance

# extra outputs of a chunk (one per config, each checked on its own) take at most this much
OUTPUT_BUDGET_BYTES = 512 << 20
ROUNDS_MAX = 8             # screening rounds per chunk (late samples are retaken)


@dataclass
class Outcome:
    config: KernelConfig
    status: str                       # ok | wrong | invalid | not_applicable
    reason: str = ""
    rel_error: float | None = None
    timing: timing.Timing | None = None


@dataclass
class _State:
    """A config that passed its check, being screened."""

    config: KernelConfig
    fn: object
    rel_error: float
    samples: list = field(default_factory=list)
    n: int = 0
    stopped: bool = False


@dataclass(frozen=True)
class ScreenSettings:
    """How a sweep screens configs (``tilepick sweep`` sets ``long_ms`` and ``chunk``)."""

    reps: int = 10            # repetitions at most
    min_reps: int = 3         # the first batch, which sizes the rest and may stop the config
    max_ms: float = 25.0      # about this much GPU time a config
    stop_factor: float = 1.5  # stop configs slower than this x the best so far
    long_ms: float = 2.0      # a check launch this long counts as a repetition
    chunk: int = 16           # configs per check (fewer where their outputs do not fit)


@dataclass
class Screener:
    """Screens one problem's configs, a chunk at a time; ``best`` (ms) sets the stop bound."""

    problem: GemmProblem
    data: ProblemInputs
    settings: ScreenSettings = field(default_factory=ScreenSettings)
    host: Counter = field(default_factory=Counter)     # check / screen seconds
    checks: Counter = field(default_factory=Counter)   # sample / probe / late check launches
    fns: dict = field(default_factory=dict)            # config id -> bound launch
    _outs: list = field(default_factory=list)
    _host_first: float = 0.3     # host ms of a first launch (module load), measured as it goes
    _host_ms: float = timing.DEFAULT_HOST_MS

    def chunk_size(self) -> int:
        """Configs per chunk: the outputs they need must fit OUTPUT_BUDGET_BYTES."""
        out = self.data.inputs.out
        nbytes = out.untyped_storage().nbytes() if hasattr(out, "untyped_storage") else 0
        return max(1, min(self.settings.chunk, 1 + OUTPUT_BUDGET_BYTES // max(1, nbytes)))

    def chunks(self, configs: list[KernelConfig]) -> list[list[KernelConfig]]:
        """The first config alone (cuBLAS in a sweep: the others' first bound), then chunks."""
        size = self.chunk_size()
        return [configs[:1]] + [configs[i:i + size] for i in range(1, len(configs), size)]

    def _outputs(self, n: int) -> list:
        while len(self._outs) < n - 1:
            self._outs.append(make_output(self.problem, self.data.inputs.out.device))
        return [self.data.inputs.out] + self._outs[:n - 1]

    def screen(self, configs: list[KernelConfig], best: float = math.inf) -> list[Outcome]:
        """Check, then time, ``configs`` (one chunk); outcomes in their order."""
        t0 = time.perf_counter()
        outcomes: dict[str, Outcome] = {}
        states = self._check(configs, best, outcomes)
        t1 = time.perf_counter()
        self._time(states, best)
        self.host["check"] += t1 - t0
        self.host["screen"] += time.perf_counter() - t1
        for st in states:
            outcomes[st.config.id] = Outcome(
                st.config, "ok", rel_error=st.rel_error,
                timing=timing.summarize(st.samples, meaningful=not timing.interpreting(),
                                        stopped_early=st.stopped))
        return [outcomes[c.id] for c in configs]

    # -- the check: every config of the chunk launched once, into its own output -------------
    def _check(self, configs, best, outcomes) -> list[_State]:
        inp = self.data.inputs
        ready, calls, errors = [], [], {}
        outs = self._outputs(len(configs))
        for config, out in zip(configs, outs):
            try:
                solvers.SOLVERS[config.family].check(self.problem, config)
            except solvers.NotApplicableError as exc:
                outcomes[config.id] = Outcome(config, "not_applicable", str(exc))
                continue
            try:
                fn = solvers.bind(self.problem, config, inp.a, inp.b, out, inp.scale_a,
                                  inp.scale_b)
            except Exception as exc:
                outcomes[config.id] = Outcome(config, "invalid", failure_reason(exc))
                continue
            out.fill_(float("nan"))
            ready.append((config, out))
            self.fns[config.id] = (lambda f=fn: f(inp.a, inp.b, inp.out, inp.scale_a,
                                                  inp.scale_b))
            # the check goes through launch (its errors name the config), the timing through
            # the bound launch (less host time per call)
            calls.append(_guarded(lambda c=config, o=out: solvers.launch(
                self.problem, c, inp.a, inp.b, o, inp.scale_a, inp.scale_b, check=False),
                config.id, errors))
        if not ready:
            return []
        used = [o for _, o in ready]
        r = timing.timed_round(calls, host_ms=self._host_first,
                               then=lambda: self.data.ref.errors(used))
        self._host_first = statistics.median(r.host_ms)
        bound = self.settings.stop_factor * best if best < math.inf else None
        states = []
        for (config, _), err, sample, late in zip(ready, r.value, r.samples, r.late):
            if config.id in errors:
                outcomes[config.id] = Outcome(config, "invalid", errors[config.id])
                self.fns.pop(config.id, None)
                continue
            if not err <= tolerance(self.problem):
                outcomes[config.id] = Outcome(config, "wrong", wrong_reason(self.problem, err),
                                              rel_error=err)
                self.fns.pop(config.id, None)
                continue
            st = _State(config, self.fns[config.id], err, n=self.settings.min_reps)
            if timing.interpreting():   # a host-clock sample: neither probe nor repetition
                pass
            elif late:
                self.checks["late"] += 1
            elif bound is not None and sample > timing.PROBE_FACTOR * bound:
                st.samples, st.stopped = [sample], True
                self.checks["probe_stop"] += 1
            elif sample >= self.settings.long_ms:
                st.samples = [sample]
                self.checks["sample"] += 1
            else:
                self.checks["probe"] += 1
            states.append(st)
        return states

    # -- screening: rounds of the chunk's repetitions ------------------------------------------
    def _time(self, states: list[_State], best: float) -> None:
        cfg = self.settings
        bound = cfg.stop_factor * best if best < math.inf else None
        if timing.interpreting():  # host clock: two calls each, flagged not meaningful
            for st in states:
                if not st.stopped:
                    got, _ = timing.gather({0: st.fn}, {0: 2 - len(st.samples)})
                    st.samples.extend(got[0])
            return
        for _ in range(ROUNDS_MAX):
            want = {st.config.id: st.n - len(st.samples) for st in states
                    if not st.stopped and len(st.samples) < st.n}
            if not want:
                return
            by_id = {st.config.id: st for st in states}
            est = {cid: statistics.median(by_id[cid].samples) if by_id[cid].samples else 0.0
                   for cid in want}
            # a lead call first (short calls only: timing.LEAD_MAX_MS): a config's samples
            # follow its own warm kernel, as in time_fn
            got, self._host_ms = timing.gather(self.fns, want, self._host_ms, lead=1,
                                               gpu_ms=est)
            for cid, samples in got.items():
                st = by_id[cid]
                st.samples.extend(samples)
                st.n, st.stopped = timing.next_target(
                    st.samples, st.n, reps=cfg.reps, min_reps=cfg.min_reps, max_ms=cfg.max_ms,
                    stop_ms=bound)


def _guarded(fn, config_id: str, errors: dict):
    """``fn`` with its exception recorded (the config is invalid) instead of raised: the other
    configs of the chunk are queued on."""
    def call():
        try:
            fn()
        except Exception as exc:  # a failing candidate is recorded, never fatal
            errors[config_id] = failure_reason(exc)
    return call
