"""Problems per stratum (layout x TMA-aligned strides) of training data and each stratum's
balance factor under ``--stratum-balance 1`` (CPU; session 30: the cc/cr strata took half the
weight, hence ``--stratum-cap``).

    python benchmarks/analysis_s30/strata_counts.py FOLDER [FOLDER ...]
"""

import sys

import numpy as np

from tilepick.model.cv import strata
from tilepick.model.dataset import load


def main():
    ds = load(sys.argv[1:], "bf16", "h200")
    names, counts = np.unique(strata(ds), return_counts=True)
    for name, n in zip(names, counts):
        print(f"{name:16s} {n:6d} problems, factor {counts.max() / n:.2f}")


if __name__ == "__main__":
    main()
