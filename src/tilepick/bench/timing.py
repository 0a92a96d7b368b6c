"""The one place that times kernels.

Method (see ANCHORS.md for why): warm up first (compilation, module load and handle creation
stay out of the numbers); before every timed call, flush L2 by writing a buffer larger than it,
so small problems are not measured on a warm cache; bracket each call with its own pair of CUDA
events; report the median and the 20th/80th percentiles. Single timings have 10-40% outliers,
so comparisons between candidates interleave them in rounds (:func:`interleaved`).
Under Triton's interpreter the host clock is used and the timing is flagged as meaningless.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable

from tilepick.runtime import interpreting


@dataclass(frozen=True)
class Timing:
    ms: float          # median
    p20_ms: float
    p80_ms: float
    reps: int
    meaningful: bool = True   # False for interpreter (CPU) timings
    stopped_early: bool = False

    def to_dict(self) -> dict:
        return {"ms": self.ms, "p20_ms": self.p20_ms, "p80_ms": self.p80_ms, "reps": self.reps,
                "meaningful": self.meaningful, "stopped_early": self.stopped_early}


def _quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def summarize(samples: list[float], meaningful: bool = True, stopped_early: bool = False) -> Timing:
    return Timing(statistics.median(samples), _quantile(samples, 0.2), _quantile(samples, 0.8),
                  len(samples), meaningful, stopped_early)


_flush_buffer = None


def _l2_flusher(device):
    """A buffer of 2x the L2 size (at least 256 MB, as triton.testing.do_bench uses)."""
    global _flush_buffer
    import torch

    if _flush_buffer is None or _flush_buffer.device != device:
        props = torch.cuda.get_device_properties(device)
        size = max(256 * 1024 * 1024, 2 * getattr(props, "L2_cache_size", 0))
        _flush_buffer = torch.empty(size // 4, dtype=torch.int32, device=device)
    return _flush_buffer


# The hold covers HOLD_MARGIN x the measured host submission time of a batch (was 2.0 up to
# sweep 520277d9cf; 1.4 still leaves 40% for host jitter and is ~1 ms less idle GPU per call).
HOLD_MARGIN = 1.4


def _hold_gpu(ms: float) -> None:
    """Occupy the stream for about ``ms`` so that the launches queued behind it are all
    submitted before the GPU reaches them: host (Python, launch) overhead then cannot show
    up in the event timings as idle time between a start event and its kernel."""
    import torch

    torch.cuda._sleep(int(ms * 2.0e6))  # ~2 GHz SM clock: cycles per ms, a lead not a promise


# A probe (one call) stops a candidate at once when it is this far beyond the stop bound: with
# the sweep's bound of 1.5x the best so far, 3x the best, well outside single-call noise
# (10-40% outliers, ANCHORS.md).
PROBE_FACTOR = 2.0


def next_target(samples: list[float], n: int, *, reps: int, min_reps: int, max_ms: float,
                stop_ms: float | None) -> tuple[int, bool]:
    """After a batch: how many samples to have in all, and whether to stop early.

    The probe (the first, single sample when there is a stop bound) stops at
    ``PROBE_FACTOR x stop_ms``, else leads to ``min_reps`` samples; the first ``min_reps``
    samples size the rest (about ``max_ms`` of GPU time, at most ``reps``); from the first
    batch on, with fewer samples than the target, a median over ``stop_ms`` stops.
    """
    k = len(samples)
    if stop_ms is not None and k == 1:
        if samples[0] > PROBE_FACTOR * stop_ms:
            return n, True
        n = max(n, min_reps)
    if k == min_reps:
        n = int(max(min_reps, min(reps, max_ms / statistics.median(samples))))
    if stop_ms is not None and min_reps <= k < n and statistics.median(samples) > stop_ms:
        return n, True
    return n, False


def time_fn(fn: Callable[[], object], *, warmup: int = 3, reps: int = 25,
            max_ms: float = 250.0, min_reps: int = 5, flush_l2: bool = True,
            stop_if_slower_than_ms: float | None = None,
            first_sample: float | None = None) -> Timing:
    """Median time of ``fn`` over up to ``reps`` calls (about ``max_ms`` of GPU time at most).

    Each repetition is (flush L2, start event, fn, end event), queued behind a GPU sleep long
    enough to cover the host's submission of the whole batch, so the events measure the GPU
    work alone. The first batch (``min_reps`` calls) sizes the rest. ``stop_if_slower_than_ms``:
    adaptive repetition for sweeps: a single-call probe comes first; a candidate whose probe
    is over ``PROBE_FACTOR`` x the bound, or whose first batch's median is over the bound,
    stops there (its estimate is recorded, flagged ``stopped_early``; :func:`next_target`).
    ``first_sample``: a repetition already timed the same way (:func:`timed_once`, e.g. the
    correctness check's launch), counted as the first one (the probe).
    """
    if interpreting():
        samples = []
        for _ in range(max(1, min(reps, 2))):
            t0 = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - t0) * 1e3)
        return summarize(samples, meaningful=False)

    import torch

    dev = torch.device("cuda", torch.cuda.current_device())
    flush = _l2_flusher(dev) if flush_l2 else None
    host_ms = math.inf  # host time to submit one call (no synchronisation inside)
    for _ in range(warmup):
        t0 = time.perf_counter()
        fn()
        host_ms = min(host_ms, (time.perf_counter() - t0) * 1e3)
    samples: list[float] = []
    stopped = False
    # with a stop bound, a single-call probe first: most candidates of a sweep are far slower
    # than the best, and one call tells that as well as three
    n = 1 if stop_if_slower_than_ms is not None else min_reps
    if first_sample is not None:
        samples.append(max(first_sample, 1e-4))
        n, stopped = next_target(samples, n, reps=reps, min_reps=min_reps, max_ms=max_ms,
                                 stop_ms=stop_if_slower_than_ms)
    while len(samples) < n and not stopped:
        batch = n - len(samples)
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(batch)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(batch)]
        # cover the submission of the whole batch with a sleep (unknown host time: a guess
        # that holds for a Python launch, then the measured one)
        per_call = 0.15 if host_ms == math.inf else host_ms + 0.03
        _hold_gpu(min(20.0, 0.1 + HOLD_MARGIN * batch * per_call))
        for i in range(batch):
            if flush is not None:
                flush.zero_()
            starts[i].record()
            t0 = time.perf_counter()
            fn()
            host_ms = min(host_ms, (time.perf_counter() - t0) * 1e3)
            ends[i].record()
        torch.cuda.synchronize()
        samples.extend(max(st.elapsed_time(en), 1e-4) for st, en in zip(starts, ends))
        n, stopped = next_target(samples, n, reps=reps, min_reps=min_reps, max_ms=max_ms,
                                 stop_ms=stop_if_slower_than_ms)
    return summarize(samples, stopped_early=stopped)


def timed_once(fn: Callable[[], object], hold_ms: float) -> tuple[float | None, float]:
    """One repetition of ``fn`` timed like :func:`time_fn`'s (L2 flushed, events behind a GPU
    hold), for a launch that is needed anyway (the correctness check).

    Returns (sample, host ms of the call). The sample is None under the interpreter, or when
    the host took more than half the hold to submit the call (the first launch of a kernel
    loads its module), since the GPU then waited for the host inside the events and the
    sample would read slow. The host time lets a caller size the next first launch's hold.
    """
    if interpreting():
        t0 = time.perf_counter()
        fn()
        return None, (time.perf_counter() - t0) * 1e3
    import torch

    flush = _l2_flusher(torch.device("cuda", torch.cuda.current_device()))
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    flush.zero_()
    _hold_gpu(hold_ms)
    start.record()
    t0 = time.perf_counter()
    fn()
    host_ms = (time.perf_counter() - t0) * 1e3
    end.record()
    end.synchronize()
    if host_ms > 0.5 * hold_ms:  # the sleep's clock rate is a lead: keep a wide margin
        return None, host_ms
    return max(start.elapsed_time(end), 1e-4), host_ms


@dataclass(frozen=True)
class Rounds:
    """One candidate's timings over interleaved rounds."""

    rounds_ms: tuple   # the median of each round
    gpu_ms: float      # GPU time spent timing it (sum of every timed call)
    meaningful: bool = True  # False for interpreter (CPU) timings

    @property
    def ms(self) -> float:
        """The figure to report: the median of the round medians."""
        return statistics.median(self.rounds_ms)

    @property
    def spread(self) -> float:
        """(max - min) / min of the round medians: the noise band of this candidate."""
        return (max(self.rounds_ms) - min(self.rounds_ms)) / min(self.rounds_ms)


def interleaved(fns: dict[str, Callable[[], object]], rounds: int = 5, **kw) -> dict[str, Rounds]:
    """Time several candidates in interleaved rounds (A B C A B C ...), so that clock and
    thermal drift hits all of them alike (``kw`` goes to :func:`time_fn`)."""
    samples: dict[str, list[Timing]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            samples[name].append(time_fn(fn, **kw))
    return {name: Rounds(tuple(t.ms for t in ts), sum(t.ms * t.reps for t in ts),
                         all(t.meaningful for t in ts))
            for name, ts in samples.items()}
