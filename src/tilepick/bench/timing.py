"""The one place that times kernels.

Method (see ANCHORS.md for why): warm up first (compilation, module load and handle creation
stay out of the numbers); before every timed call, flush L2 by writing a buffer larger than it,
so small problems are not measured on a warm cache; bracket each call with its own pair of CUDA
events; report the median and the 20th/80th percentiles. Single timings have 10-40% outliers,
so comparisons between candidates interleave them in rounds (:func:`interleaved`). Calls are
queued many at a time behind one GPU hold and one host synchronisation (:func:`timed_round`,
:func:`gather`); a sample whose call reached the GPU after its start event is not used.
Under Triton's interpreter the host clock is used and the timing is flagged as meaningless.
"""

from __future__ import annotations

import math
import statistics
import time
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from tilepick.runtime import allocate_outside_graph_pools, interpreting


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
        # kept across calls: never in a CUDA graph pool (hybrid tuning in a compiled warm-up)
        _flush_buffer = allocate_outside_graph_pools(
            lambda: torch.empty(size // 4, dtype=torch.int32, device=device), device)
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
            stop_if_slower_than_ms: float | None = None) -> Timing:
    """Median time of ``fn`` over up to ``reps`` calls (about ``max_ms`` of GPU time at most).

    Each repetition is (flush L2, start event, fn, end event), queued behind a GPU sleep long
    enough to cover the host's submission of the whole batch, so the events measure the GPU
    work alone (checked per sample: :func:`timed_round`). The first batch (``min_reps``
    calls) sizes the rest. ``stop_if_slower_than_ms``: adaptive repetition: a single-call
    probe comes first; a candidate whose probe is over ``PROBE_FACTOR`` x the bound, or whose
    first batch's median is over the bound, stops there (its estimate is recorded, flagged
    ``stopped_early``; :func:`next_target`). Sweeps screen many configs at once by the same
    rules (:mod:`tilepick.bench.screen`).
    """
    if interpreting():
        samples = []
        for _ in range(max(1, min(reps, 2))):
            t0 = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - t0) * 1e3)
        return summarize(samples, meaningful=False)

    host_ms = DEFAULT_HOST_MS  # host time to submit one call (no synchronisation inside)
    for _ in range(warmup):
        t0 = time.perf_counter()
        fn()
        host_ms = min(host_ms, (time.perf_counter() - t0) * 1e3)
    samples: list[float] = []
    stopped = False
    # with a stop bound, a single-call probe first: most candidates of a sweep are far slower
    # than the best, and one call tells that as well as three
    n = 1 if stop_if_slower_than_ms is not None else min_reps
    while len(samples) < n and not stopped:
        hint = {0: statistics.median(samples)} if samples else None
        got, host_ms = gather({0: fn}, {0: n - len(samples)}, host_ms, flush_l2=flush_l2,
                              gpu_ms=hint)
        samples.extend(got[0])
        n, stopped = next_target(samples, n, reps=reps, min_reps=min_reps, max_ms=max_ms,
                                 stop_ms=stop_if_slower_than_ms)
    return summarize(samples, stopped_early=stopped)


@dataclass(frozen=True)
class Rounds:
    """One candidate's timings over interleaved rounds."""

    rounds_ms: tuple   # the median of each round
    gpu_ms: float      # GPU time spent timing it (sum of every timed call)
    meaningful: bool = True  # False for interpreter (CPU) timings
    reps: int = 0      # timed calls over all rounds

    @property
    def ms(self) -> float:
        """The figure to report: the median of the round medians."""
        return statistics.median(self.rounds_ms)

    @property
    def spread(self) -> float:
        """(max - min) / min of the round medians: the noise band of this candidate."""
        return (max(self.rounds_ms) - min(self.rounds_ms)) / min(self.rounds_ms)


def carryover_balanced_orders(n: int) -> list[list[int]]:
    """A Williams design: orders of ``n`` candidates in which every candidate comes right
    after every other one equally often (``n`` orders for even ``n``, ``2n`` for odd), each
    candidate first equally often too.

    Why: a block's speed depends on the block before it. On an H200 (session 26,
    ``benchmarks/timing_context_probe.py``) cuBLAS on rc 8192 x 10240 x 8192 read 685 TFLOP/s
    after a persistent TMA kernel and 729-749 after a one-program-per-tile TMA kernel of
    ~530 TFLOP/s, in the same rounds. Rotating one fixed order (the rounds' earlier rule) moves
    where it starts but keeps every candidate's predecessor, so such a carry-over biased the
    same candidate in every round; under this design it is spread over them all."""
    if n <= 1:
        return [list(range(n))]
    first, lo, hi = [0], 1, n - 1
    while lo <= hi:
        first.append(lo)
        lo += 1
        if lo <= hi:
            first.append(hi)
            hi -= 1
    rows = [[(x + r) % n for x in first] for r in range(n)]
    if n % 2:
        rows += [row[::-1] for row in rows]
    return rows


def interleaved(fns: dict[str, Callable[[], object]], rounds: int = 5, *, warmup: int = 3,
                reps: int = 25, max_ms: float = 250.0, min_reps: int = 5,
                flush_l2: bool = True) -> dict[str, Rounds]:
    """Time several candidates in interleaved rounds, so that clock and thermal drift hits all
    of them alike.

    After ``warmup`` untimed calls of each, one timed call of each sizes its repetitions per
    round (about ``max_ms`` of GPU time, between ``min_reps`` and ``reps``). Each round then
    queues every candidate's block of repetitions (an untimed call first if ``warmup``, as
    :func:`time_fn` had, unless a call takes ``LEAD_MAX_MS`` or more) behind one GPU hold
    (:func:`gather`): one host synchronisation per round instead of several per candidate.
    Round i takes order i of :func:`carryover_balanced_orders` (cycling through them when the
    rounds outnumber them), so no candidate always runs after the same one.
    """
    names = list(fns)
    if interpreting():
        samples: dict[str, list[float]] = {n: [] for n in names}
        for _ in range(rounds):
            for n in names:
                t0 = time.perf_counter()
                fns[n]()
                samples[n].append((time.perf_counter() - t0) * 1e3)
        return {n: Rounds(tuple(samples[n]), sum(samples[n]), meaningful=False, reps=rounds)
                for n in names}
    host = DEFAULT_HOST_MS
    for _ in range(warmup):
        for n in names:
            t0 = time.perf_counter()
            fns[n]()
            host = min(host, (time.perf_counter() - t0) * 1e3)
    sizing, host = gather(fns, {n: 1 for n in names}, host, flush_l2=flush_l2)
    per_round = {n: max(min(min_reps, reps), min(reps, int(max_ms / sizing[n][0])))
                 for n in names}
    one = {n: sizing[n][0] for n in names}
    spent = dict(one)
    round_ms: dict[str, list[float]] = {n: [] for n in names}
    orders = carryover_balanced_orders(len(names))
    for i in range(rounds):
        # a block's speed depends on the work before it (clocks, power, heat): the orders
        # vary each candidate's predecessor and place in the round, so that such effects
        # average out instead of biasing one candidate
        order = [names[j] for j in orders[i % len(orders)]]
        got, host = gather(fns, {n: per_round[n] for n in order}, host, lead=min(warmup, 1),
                           flush_l2=flush_l2, gpu_ms=one)
        for n in names:
            round_ms[n].append(statistics.median(got[n]))
            spent[n] += sum(got[n])
    return {n: Rounds(tuple(round_ms[n]), spent[n], reps=rounds * per_round[n]) for n in names}


# -- many calls per host synchronisation -------------------------------------------------------

# A sample counts only if its call was submitted this long before the GPU reached its start
# event (the launch's way to the GPU, and the uncertainty of the clocks' common origin);
# otherwise the GPU may have idled inside the events waiting for the host (a first launch
# that loads its module, a host hiccup), and the sample would read slow.
SUBMIT_SLACK_MS = 0.02
ROUND_MAX_CALLS = 64      # calls queued behind one hold (its length stays under HOLD_MAX_MS)
HOLD_MAX_MS = 20.0
DEFAULT_HOST_MS = 0.15    # host time of one call before any was measured (a Python launch)
GATHER_ATTEMPTS = 3       # late samples are retaken this many times, then kept (counted)

#: samples taken / late (retaken) / late but kept, over the process: the sweep reports them
STATS: Counter = Counter()


@dataclass
class Round:
    """The samples of one batch of queued calls."""

    samples: list[float]    # ms, one per call
    late: list[bool]        # the call reached the GPU after its start event: may read slow
    host_ms: list[float]    # host time of each call
    value: object = None    # what ``then`` returned


def late_sample(submitted_ms: float, reached_ms: float) -> bool:
    """Whether a call submitted ``submitted_ms`` after the round's origin (host clock) came too
    late for a start event that the GPU reached ``reached_ms`` after it (GPU clock)."""
    return submitted_ms + SUBMIT_SLACK_MS > reached_ms


def timed_round(calls: list[Callable[[], object]], *, timed: list[bool] | None = None,
                host_ms: float = DEFAULT_HOST_MS, gpu_ms: float = 0.0, flush_l2: bool = True,
                then: Callable[[], object] | None = None) -> Round:
    """Queue ``calls`` behind one GPU hold, each as (flush L2, start event, call, end event),
    run ``then`` (more GPU work whose result needs the calls, e.g. the correctness check of
    their outputs), and synchronise once.

    The hold is sized to let the host queue the calls ahead of the GPU (``host_ms`` per call,
    less the ``gpu_ms`` the queued calls are expected to take); whether it did is not assumed
    but checked per call (:func:`late_sample`), against an event recorded with the round's
    host-clock origin. ``timed[i]`` False: call ``i`` is only run (a warm-up: no flush, no
    events; its sample is NaN and never late)."""
    timed = [True] * len(calls) if timed is None else timed
    if interpreting():
        samples, hosts = [], []
        for fn, t in zip(calls, timed):
            t0 = time.perf_counter()
            fn()
            hosts.append((time.perf_counter() - t0) * 1e3)
            samples.append(max(hosts[-1], 1e-4) if t else math.nan)
        return Round(samples, [False] * len(calls), hosts, then() if then else None)
    import torch

    flush = _l2_flusher(torch.device("cuda", torch.cuda.current_device())) if flush_l2 else None
    starts = [torch.cuda.Event(enable_timing=True) if t else None for t in timed]
    ends = [torch.cuda.Event(enable_timing=True) if t else None for t in timed]
    origin = torch.cuda.Event(enable_timing=True)
    hold = 0.1 + HOLD_MARGIN * len(calls) * (host_ms + 0.03) - 0.5 * gpu_ms
    # the stream looked up once: Event.record() without it costs a device query per call
    # (~25 us, a tenth of a small config's launch; profile of sweep 4983523cfa)
    stream = torch.cuda.current_stream()
    origin.record(stream)
    h0 = time.perf_counter()
    _hold_gpu(min(HOLD_MAX_MS, max(0.1, hold)))
    submitted, hosts = [], []
    for start, end, fn in zip(starts, ends, calls):
        if start is None:
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
        else:
            if flush is not None:
                flush.zero_()
            start.record(stream)
            t0 = time.perf_counter()
            fn()
            t1 = time.perf_counter()
            end.record(stream)
        hosts.append((t1 - t0) * 1e3)
        submitted.append((t1 - h0) * 1e3)
    value = then() if then else None
    torch.cuda.synchronize()
    samples = [max(s.elapsed_time(e), 1e-4) if s is not None else math.nan
               for s, e in zip(starts, ends)]
    late = [s is not None and late_sample(sub, origin.elapsed_time(s))
            for sub, s in zip(submitted, starts)]
    return Round(samples, late, hosts, value)


# A block's lead call warms its kernel after another candidate's (instruction cache, TLB:
# microseconds). A call this long (ms) is past such effects, and its lead would cost a whole
# call of GPU time: in sweeps of large problems, a quarter of a near-best config's launches.
LEAD_MAX_MS = 1.0


def blocks(counts: dict, lead: int | dict = 0) -> list[tuple]:
    """(key, timed) in blocks: each key's ``lead`` untimed calls (an int, or per key), then its
    ``counts[key]`` timed ones, back to back (A A A B B B ...): a candidate's repetitions
    follow each other, as in :func:`time_fn`, so its kernel is as warm as it is there (the
    datasets were measured that way); the untimed lead call warms it after another
    candidate's block."""
    leads = lead if isinstance(lead, dict) else dict.fromkeys(counts, lead)
    return [(k, timed) for k, n in counts.items() if n > 0
            for timed in [False] * leads.get(k, 0) + [True] * n]


def gather(fns: dict, want: dict, host_ms: float = DEFAULT_HOST_MS, *, lead: int = 0,
           flush_l2: bool = True, gpu_ms: dict | None = None) -> tuple[dict, float]:
    """``want[k]`` samples of each ``fns[k]``, in blocks (:func:`blocks`, ``lead`` untimed calls
    first), in rounds of at most ``ROUND_MAX_CALLS`` calls (:func:`timed_round`). Late samples
    are retaken, with the hold sized for twice the host time, up to ``GATHER_ATTEMPTS``
    times; then kept (``STATS``).

    ``gpu_ms[k]``: an estimate of one call's GPU time, to shorten the holds (and to drop the
    lead of calls of at least ``LEAD_MAX_MS``). Returns the samples per key and the host time
    per call measured (for the next caller's hold)."""
    got: dict = {k: [] for k in want}
    lates: dict = {k: [] for k in want}
    for attempt in range(GATHER_ATTEMPTS + 1):
        need = {k: want[k] - len(got[k]) for k in want if len(got[k]) < want[k]}
        if not need:
            break
        if attempt == GATHER_ATTEMPTS:  # give up waiting for on-time samples: keep the late
            for k, n in need.items():
                got[k].extend(lates[k][:n])
                STATS["late_kept"] += min(n, len(lates[k]))
            break
        # no lead for calls known to be long (LEAD_MAX_MS)
        order = blocks(need, {k: 0 if gpu_ms and gpu_ms.get(k, 0.0) >= LEAD_MAX_MS else lead
                              for k in need})
        for i in range(0, len(order), ROUND_MAX_CALLS):
            part = order[i:i + ROUND_MAX_CALLS]
            hint = sum(gpu_ms.get(k, 0.0) for k, _ in part) if gpu_ms else 0.0
            r = timed_round([fns[k] for k, _ in part], timed=[t for _, t in part],
                            host_ms=host_ms * 2 ** attempt, gpu_ms=hint, flush_l2=flush_l2)
            for (k, timed), sample, is_late in zip(part, r.samples, r.late):
                if timed:
                    (lates if is_late else got)[k].append(sample)
            STATS["samples"] += sum(t for _, t in part)
            STATS["late"] += sum(r.late)
            host_ms = statistics.median(r.host_ms)
    return got, host_ms
