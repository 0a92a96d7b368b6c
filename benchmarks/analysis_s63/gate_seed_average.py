"""The vendor gate as the mean of several seeds' gates, out of fold (CPU, ~6 min).

Why: session 63 saw the gate's scores on the suite's decode rows move by up to 0.84 between
retrains that differ in float noise, and out of fold its mean at M = 1 spans 95.83-96.18 over
three gate seeds (feature_fraction 0.9 makes the seed matter). The ranker already averages
three seeds (TrainOptions.seed_ensemble, booster.average); the gate is one fit. This scores
each seed's gate and the mean of their raw scores (what booster.average of the gates would
give) on the recipe's own folds.

    python benchmarks/analysis_s63/gate_seed_average.py [--model work/s61/m61] [--seeds 5]
"""

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gate_dead_zone import OutOfFold  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="work/s61/m61")
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    oof = OutOfFold(args.model)
    raws = []
    for seed in range(args.seeds):
        raws.append(oof.raw(seed))
        s = oof.gated(raws[-1])
        print(f"seed {seed}                mean {s[0]:.4f} p10 {s[1]:.4f} M=1 {s[2]:.4f}",
              flush=True)
    for n in range(2, args.seeds + 1):
        for start in range(0, args.seeds - n + 1, n):
            mean_raw = np.mean(raws[start:start + n], axis=0)
            s = oof.gated(mean_raw)
            print(f"mean of seeds {start}-{start + n - 1}      mean {s[0]:.4f} p10 {s[1]:.4f} "
                  f"M=1 {s[2]:.4f}", flush=True)


if __name__ == "__main__":
    main()
