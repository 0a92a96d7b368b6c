"""Validation efficiency by M slice for several models, and the problems whose pick changed most
between the first two (session 33: W6 against W6 + `train_small_m/`). CPU, ~1 min a model.

    python benchmarks/analysis_s33/slices.py DATA MODEL_A MODEL_B [MODEL ...]
"""

import collections
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parents[1]))
from paired_validation import efficiencies  # noqa: E402

from tilepick.model.metrics import M_SLICES, m_slice  # noqa: E402
from tilepick.problem import GemmProblem  # noqa: E402


def main():
    data, models = sys.argv[1], sys.argv[2:]
    effs = [efficiencies(m, data) for m in models]
    by_slice = collections.defaultdict(list)
    changes = []
    for key in effs[0]:
        by_slice[m_slice(GemmProblem.from_key(key).m)].append([e[key][0] for e in effs])
        changes.append((effs[1][key][0] - effs[0][key][0], key,
                        [round(e[key][0], 3) for e in effs], [e[key][1] for e in effs]))
    for name, _, _ in M_SLICES:
        v = np.array(by_slice[name])
        print(f"{name:10s} {len(v):3d} " + " ".join(f"{100 * x:.2f}" for x in v.mean(axis=0)))
    for c in sorted(changes)[:12]:
        print("%+.3f %-36s %s %s" % c)


if __name__ == "__main__":
    main()
