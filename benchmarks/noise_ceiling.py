"""The usual validation rule's noise ceiling over validation sets (CPU, seconds): what a ranker
that always picks the config fastest in expectation would score there
(:func:`tilepick.model.metrics.noise_ceiling`; `tilepick validate` reports it too).

    python benchmarks/noise_ceiling.py data/gemm/bf16/h200/validation [...] [--dtype bf16]
"""

import argparse

import numpy as np

from tilepick.model import metrics
from tilepick.model.dataset import load


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="+")
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--arch", default="h200")
    args = ap.parse_args()
    for d in args.data:
        c = metrics.noise_ceiling(load([d], args.dtype, args.arch, within_pass=True))
        c = c[np.isfinite(c)]
        print(f"{d}: {len(c)} problems; the expected-best pick scores mean {100 * c.mean():.2f}, "
              f"P10 {100 * np.percentile(c, 10):.1f}, min {100 * c.min():.1f}")


if __name__ == "__main__":
    main()
