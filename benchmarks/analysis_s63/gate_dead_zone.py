"""A dead zone for the vendor gate, out of fold: where its raw score is within +-tau of 0,
make no call (the ranker's own order stands) (CPU, ~5 min).

Why: session 63 found the gate's scores on the suite's decode rows move by up to 0.84 between
two retrains whose rankers differ only in the last digits of a few leaf values, and one row
change sides. If the gate's small-margin calls are no better than the ranker's order, a dead
zone would keep such rows with the ranker at no out-of-fold cost. The recipe's ranker is
re-trained on its own folds, gates fitted out of fold with several seeds (the seed moves the
fits as the thread count did), and the gated rankings scored at each tau, overall and at M = 1.

    python benchmarks/analysis_s63/gate_dead_zone.py [--model work/s61/m61] [--seeds 3]

Outcome (BENCHMARKS.md, "Session 63"): out of fold tau 0.5 read +0.01 to +0.04 points over
three gate seeds, but on the validation sets it lost (rr -0.12 +- 0.06, cr -0.06 +- 0.04;
the Predictor's support for it is commit d248af5, reverted), so no model has one.
"""

import argparse

import numpy as np

from tilepick.model import gate, metrics
from tilepick.model.evaluate import recipe_gate_inputs, recipe_options
from tilepick.model.train import gate_params

TAUS = (0.0, 0.1, 0.25, 0.5, 1.0)


def dead_zone(raw: np.ndarray, tau: float) -> np.ndarray:
    """``raw`` with the calls inside (-tau, tau) withdrawn (NaN: the ranker's order)."""
    return np.where(np.abs(raw) < tau, np.nan, raw)


class OutOfFold:
    """A recipe's ranker out of fold, its folds, and how a gated ranking of it scores
    (mean, P10, mean at M = 1): what the session-63 gate experiments share."""

    def __init__(self, model: str):
        self.params = gate_params(recipe_options(model))
        self.res, self.masks = recipe_gate_inputs(model)
        sc = self.sc = self.res.scored
        self.m1 = sc.frame["m"].to_numpy()[sc.starts] == 1
        self.x = gate.problem_matrix(sc.x[sc.starts])
        print(f"{sc.n_problems} problems, {int(self.m1.sum())} at M = 1")
        r = self.score(self.res.keys)
        print(f"{'ranker alone':22} mean {r[0]:.4f} p10 {r[1]:.4f} M=1 {r[2]:.4f}")

    def score(self, keys) -> tuple[float, float, float]:
        t = metrics.per_problem(self.sc.problem_index, self.sc.tflops, keys)["efficiency"]
        t = t.to_numpy()
        return t.mean(), np.percentile(t, 10), t[self.m1].mean()

    def raw(self, seed: int, keys=None, top: int = 1) -> np.ndarray:
        """The recipe's gate out of fold, fitted with this seed; with ``keys`` and ``top``, on
        the labels of that ranking's first ``top`` picks (:func:`gate.problem_outcomes`)."""
        sc = self.sc
        keys = self.res.keys if keys is None else keys
        return gate.out_of_fold(sc.problem_index, sc.config_ids, sc.tflops, keys, self.x,
                                self.masks, seed, top=top, params=self.params)[0]

    def gated(self, raw) -> tuple[float, float, float]:
        return self.score(gate.apply(self.sc.problem_index, self.sc.config_ids, self.res.keys,
                                     raw))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="work/s61/m61")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    oof = OutOfFold(args.model)
    m1 = oof.m1
    for seed in range(args.seeds):
        raw = oof.raw(seed)
        for tau in TAUS:
            dz = dead_zone(raw, tau)
            s = oof.gated(dz)
            called = np.isfinite(dz)
            print(f"seed {seed} tau {tau:4.2f}        mean {s[0]:.4f} p10 {s[1]:.4f} "
                  f"M=1 {s[2]:.4f}  calls {int(called.sum())} (M=1 {int(called[m1].sum())})",
                  flush=True)


if __name__ == "__main__":
    main()
