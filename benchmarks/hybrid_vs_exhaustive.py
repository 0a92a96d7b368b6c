"""Hybrid vs exhaustive find mode, replayed on the exhaustive validation set (CPU).

An exhaustive find benchmarks ~1,000 candidates per shape: too much for a device call over an
LLM suite. The validation set *is* an exhaustive find, measured on the GPU, so the dispatcher
is run here against a SimulatedDevice that replays it: each mode's winner is the measured time
of what it would have chosen, and its tuning cost is the GPU time its benchmarks would take
(measured time x 20 reps per candidate, the same for both modes).

    PYTHONPATH=src python benchmarks/hybrid_vs_exhaustive.py [--data data/gemm/bf16/h200/validation]
        [--k 4] [--explore 2] [--explore-rel 0.85]

Since session 13 a problem with a re-timing pass is replayed from its pass (its contenders,
re-timed together: exhaustive's pick is the best of them), while exhaustive's GPU time is
still that of every valid config the sweeps measured.
"""

import argparse
import json
import math
import statistics
import warnings

from tilepick.data import io
from tilepick.dispatch import Dispatcher
from tilepick.dispatch.devices import SimulatedDevice
from tilepick.hardware import profile
from tilepick.problem import GemmProblem


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/gemm/bf16/h200/validation")
    ap.add_argument("--arch", default="h200")
    ap.add_argument("--out", default=None, help="write the JSON here")
    ap.add_argument("--k", type=int, default=None, help="hybrid's base k (default: Dispatcher's)")
    ap.add_argument("--explore", type=int, default=None,
                    help="hybrid's configs outside the catalog (default: Dispatcher's)")
    ap.add_argument("--explore-rel", type=float, default=None,
                    help="explored only if predicted within this fraction of the catalog's "
                         "best (default: Dispatcher's; 0: always)")
    args = ap.parse_args()
    from tilepick.model.dataset import clean

    raw = io.read_frame(args.data)
    # the replayed speeds: one row per (problem, config); a problem with a re-timing pass: its
    # pass only (every time from the same rounds, as validate scores it)
    df = clean(raw, within_pass=True)
    # the GPU time an exhaustive find would spend: every valid config the sweeps measured
    # (~20 repetitions each, SimulatedDevice's rule), not only the pass's contenders
    exhaustive_gpu_ms = 20.0 * float(clean(raw)["time_ms"].sum())
    hw = profile(args.arch)
    rows = []
    k = explore = explore_rel = None
    for mode in ("heuristic", "hybrid", "exhaustive"):
        dev = SimulatedDevice.from_frame(df)
        kw = {"k": args.k} if args.k else {}
        if args.explore is not None:
            kw["explore"] = args.explore
        if args.explore_rel is not None:
            kw["explore_rel"] = args.explore_rel
        disp = Dispatcher(mode=mode, device=dev, user_db=None, system_db=None, hw=hw, **kw)
        k, explore, explore_rel = disp.k, disp.explore, disp.explore_rel
        for key in dev.problems():
            p = GemmProblem.from_key(key)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                d = disp.decide(p, (None,) * 5)
            rows.append({"mode": mode, "problem": key, "choice": d.config_id,
                         "ms": dev.times.get((key, d.config_id), math.nan)})
        rows.append({"mode": mode, "problem": "*", "gpu_ms": dev.gpu_ms_spent,
                     "benchmarked": len(dev.benchmarked)})
    by = {}
    for r in rows:
        if r["problem"] != "*":
            by.setdefault(r["problem"], {})[r["mode"]] = r["ms"]
    cost = {r["mode"]: r for r in rows if r["problem"] == "*"}
    out = {"data": args.data, "problems": len(by), "k": k, "explore": explore,
           "explore_rel": explore_rel}
    for mode in ("heuristic", "hybrid"):
        ratios = [v["exhaustive"] / v[mode] for v in by.values() if not math.isnan(v[mode])]
        out[mode] = {"geomean_vs_exhaustive": math.exp(statistics.mean(map(math.log, ratios))),
                     "worst_vs_exhaustive": min(ratios), "unmeasured_picks":
                     sum(1 for v in by.values() if math.isnan(v[mode])),
                     "gpu_ms": cost[mode]["gpu_ms"], "benchmarked": cost[mode]["benchmarked"]}
    out["exhaustive"] = {"gpu_ms": exhaustive_gpu_ms,
                         "benchmarked": cost["exhaustive"]["benchmarked"],
                         "replayed_gpu_ms": cost["exhaustive"]["gpu_ms"]}
    out["hybrid"]["gpu_time_share_of_exhaustive"] = (out["hybrid"]["gpu_ms"]
                                                     / out["exhaustive"]["gpu_ms"])
    print(json.dumps(out, indent=1))
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({**out, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
