"""Does the uncertainty ensemble (the fold models shipped with a model) choose better among the
model's first k Triton candidates than the full ranker? (session 33: no.) CPU, ~1 min.

For each validation problem whose pick is not cuBLAS (the vendor gate's call is kept), the first
k measured Triton candidates are re-ordered by the fold models' mean raw score ("fold_mean"),
by that mean blended with the full ranker's order ("blend"), or by the fold models' mean rank
with the full order as tie-break ("rank_vote"); each is scored by the usual rule (its
re-timed TFLOP/s over the problem's best, inside the pass).

    python benchmarks/analysis_s33/fold_rerank.py MODEL DATA [K]
"""

import sys
from pathlib import Path

import numpy as np

from tilepick.config import VENDOR_FAMILIES
from tilepick.model.dataset import load
from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem


def main():
    model, data = sys.argv[1], sys.argv[2]
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    pred = Predictor(Path(model))
    ds = load([data], pred.dtype, pred.arch, within_pass=True)
    got = {"shipped": [], "fold_mean": [], "blend": [], "rank_vote": []}
    for i, key in enumerate(ds.problem_keys):
        p = GemmProblem.from_key(key)
        table = pred._table(p)
        index = np.flatnonzero(table.valid_mask(p))
        x = table.features(p, index)
        row_of = {cid: j for j, cid in enumerate(table.id_array[index].tolist())}
        lo, hi = ds.starts[i], ds.starts[i] + ds.sizes[i]
        measured = dict(zip(ds.config_ids[lo:hi], ds.tflops[lo:hi]))
        best = max(measured.values())
        ids = [c for c, _, _ in pred.rank(p) if c in measured]
        if not ids:
            continue
        got["shipped"].append(measured[ids[0]] / best)
        if ids[0] == VENDOR_FAMILIES[0]:
            for name in ("fold_mean", "blend", "rank_vote"):
                got[name].append(measured[ids[0]] / best)
            continue
        top = [c for c in ids if c != VENDOR_FAMILIES[0]][:k]
        folds = pred.ensemble.predict(x[[row_of[c] for c in top]])[:, :pred.n_folds]
        mean = folds.mean(axis=1)
        order = -np.arange(len(top), dtype=float)          # the full ranker: first is best
        z = (mean - mean.mean()) / (mean.std() + 1e-9)
        votes = np.argsort(np.argsort(-folds, axis=0), axis=0).mean(axis=1)
        picks = {"fold_mean": int(np.argmax(mean)),
                 "blend": int(np.argmax(z + order / max(1, len(top) - 1))),
                 "rank_vote": int(np.argmin(votes + 0.5 * np.arange(len(top)) / len(top)))}
        for name, j in picks.items():
            got[name].append(measured[top[j]] / best)
    for name, v in got.items():
        v = np.array(v)
        print(f"{name:10s} n={len(v)} mean {100 * v.mean():.2f} p10 "
              f"{100 * np.percentile(v, 10):.1f} min {100 * v.min():.1f}")


if __name__ == "__main__":
    main()
