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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="work/s61/m61")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    opts = recipe_options(args.model)
    res, masks = recipe_gate_inputs(args.model)
    sc = res.scored
    m1 = sc.frame["m"].to_numpy()[sc.starts] == 1
    x = gate.problem_matrix(sc.x[sc.starts])

    def score(keys):
        t = metrics.per_problem(sc.problem_index, sc.tflops, keys)["efficiency"].to_numpy()
        return t.mean(), np.percentile(t, 10), t[m1].mean()

    print(f"{sc.n_problems} problems, {int(m1.sum())} at M = 1")
    r = score(res.keys)
    print(f"{'ranker alone':22} mean {r[0]:.4f} p10 {r[1]:.4f} M=1 {r[2]:.4f}")
    for seed in range(args.seeds):
        raw, _, _ = gate.out_of_fold(sc.problem_index, sc.config_ids, sc.tflops, res.keys, x,
                                     masks, seed, params=gate_params(opts))
        for tau in TAUS:
            dz = dead_zone(raw, tau)
            s = score(gate.apply(sc.problem_index, sc.config_ids, res.keys, dz))
            called = np.isfinite(dz)
            print(f"seed {seed} tau {tau:4.2f}        mean {s[0]:.4f} p10 {s[1]:.4f} "
                  f"M=1 {s[2]:.4f}  calls {int(called.sum())} (M=1 {int(called[m1].sum())})",
                  flush=True)


if __name__ == "__main__":
    main()
