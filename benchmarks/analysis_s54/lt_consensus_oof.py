"""Does asking every seed of the cuBLASLt entry model to agree beat the score gap? (CPU, ~1 min.)

Why: the suite rows under 0.97x are entry picks the probes call near-ties (session 53). The
shipped entry model is the mean of three seeds' LambdaRank boosters and runs an entry where the
mean score beats the heuristic's first entry's by ``delta``. Here each seed is scored out of
fold (5 GroupKFold folds by shape, the shipped model's three probe files), and two rules are
compared on the same predictions: the mean's gap above ``delta`` (what ships), and every seed's
gap above it (consensus). Printed: chosen geomean over torch.matmul, shapes under 0.97x, the
worst, and how often an entry replaced torch.matmul.

    python benchmarks/analysis_s54/lt_consensus_oof.py
"""

import numpy as np
import pandas as pd
from sklearn.model_selection import GroupKFold

from tilepick.features import lt_entries
from tilepick.model import lt_ranker as L

FILES = [f"benchmarks/results/cublaslt_probe_{n}.json.gz" for n in
         ("llm_bf16_h200_a77a154", "train_bf16_h200_2ffff36", "train2_bf16_h200_6ed9d62")]


def seed_oof(df) -> np.ndarray:
    """(rows x seeds) out-of-fold scores, one column per seed of ``lt_ranker.SEEDS``."""
    x = lt_entries.compute(df)
    pred = np.empty((len(df), len(L.SEEDS)))
    for train, test in GroupKFold(n_splits=5).split(df, groups=df["spec"]):
        for j, seed in enumerate(L.SEEDS):
            pred[test, j] = L._train(df.iloc[train], seeds=(seed,)).predict(x[test])
    return pred


def consensus(df, pred, delta: float):
    """``lt_ranker.choices`` with the rule 'every seed's gap > delta' (the mean's best entry)."""
    rows = []
    for spec, g in df.groupby("spec", sort=False):
        idx = g.index.to_numpy()
        top, first = idx[np.argmax(pred[idx].mean(1))], g["rank"].idxmin()
        run = bool((pred[top] - pred[first]).min() > delta)
        rows.append(L.choice_row(spec, g, top, first, run))
    return pd.DataFrame(rows)


def line(name, s) -> str:
    return (f"{name:22s} {s['chosen_geomean']:.4f}  below 0.97: {s['chosen_below_0.97']:3d}  "
            f"worst {s['chosen_min']:.3f}  replaced {s['replaced_torch']:.3f}")


def main():
    df = pd.concat([L.probe_frame(p) for p in FILES], ignore_index=True)
    pred = seed_oof(df)
    print(f"{df['spec'].nunique()} shapes, {len(df)} entries")
    for d in (0.0, 0.1, 0.2, 0.3):
        print(line(f"mean gap > {d}", L.summary(L.choices(df, pred.mean(1), d))))
    for d in (0.0, 0.05, 0.1, 0.2):
        print(line(f"every seed's > {d}", L.summary(consensus(df, pred, d))))


if __name__ == "__main__":
    main()
