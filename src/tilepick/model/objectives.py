"""The learning objectives compared on the same folds, and the LightGBM settings they share.

* ``log1p``: regression on log1p(TFLOP/s), the target the CK heuristics found best. On our
  data it ranks worst: a fifth of the problems never reach 1 TFLOP/s (three quarters of the
  M=1 ones), where log1p is nearly linear and their differences vanish next to the spread
  between problems (a median best of 34 TFLOP/s, up to ~800).
* ``normalized``: regression on TFLOP/s / the best TFLOP/s of the problem: scale-free per
  problem.
* ``lambdarank``: LambdaRank per problem, relevance = integer grades of TFLOP/s / best:
  optimises the order at the top directly.

Whatever the objective, the predicted TFLOP/s of a candidate comes from the same path (a
problem-level model of the best speed x the calibrated score gap, see
:mod:`tilepick.model.ranking`), so their R2 of log time are comparable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

BASE_PARAMS = {
    "learning_rate": 0.2,
    "num_leaves": 63,
    "max_depth": 10,
    "min_data_in_leaf": 20,
    "feature_fraction": 0.9,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "max_bin": 255,
    "num_threads": 2,
    "seed": 0,
    "deterministic": True,
    "force_row_wise": True,
    "verbose": -1,
}
# Few, larger trees: LightGBM costs ~50-100 ns per tree and row on the 2-core CI machine and a
# new problem must be ranked in ~1 ms; CV showed 40 trees of 63 leaves rank as well as 200 of 31.
NUM_ROUNDS = 40

# LambdaRank relevance: the number of efficiency bands (tflops / best) a candidate reaches.
# The bands are dense near the best, where the order matters (a pick at 0.97 against one at
# 0.99), and coarse below (every config under half the best speed is "irrelevant").
# Out of fold on 1,502 bf16 problems (benchmarks/tune_objectives.py, three fold seeds), these
# bands with gain 2^(g/2) - 1 raised P10 by ~1 point, top-1 accuracy by ~2-4 and the top-5 hit
# rate by ~1.5-3 against 20 linear grades above 0.5.
GRADE_BANDS = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99, 0.995, 1.0)
GRADES = len(GRADE_BANDS)


def grades(rel: np.ndarray) -> np.ndarray:
    rel = np.asarray(rel, dtype=np.float64)
    # rel = 1 exactly for the best; the tolerance keeps ties with the best in the top grade
    return np.searchsorted(np.asarray(GRADE_BANDS) - 1e-12, rel, side="right").astype(np.int64)


@dataclass(frozen=True)
class Objective:
    name: str
    lgb_objective: str
    extra_params: dict = field(default_factory=dict)

    def params(self, overrides: dict | None = None) -> dict:
        p = dict(BASE_PARAMS, objective=self.lgb_objective, **self.extra_params)
        p.update(overrides or {})
        return p

    def labels(self, tflops: np.ndarray, rel: np.ndarray) -> np.ndarray:
        if self.name == "log1p":
            return np.log1p(tflops)
        if self.name == "normalized":
            return rel
        if self.name == "lambdarank":
            return grades(rel)
        raise ValueError(self.name)

    @property
    def is_ranking(self) -> bool:
        return self.lgb_objective == "lambdarank"


OBJECTIVES: dict[str, Objective] = {
    "log1p": Objective("log1p", "regression"),
    "normalized": Objective("normalized", "regression"),
    "lambdarank": Objective("lambdarank", "lambdarank", {
        "label_gain": [float(2 ** (g / 2) - 1) for g in range(GRADES + 1)],
        "lambdarank_truncation_level": 20, "eval_at": [1, 5],
        # larger, less regularised trees than the regressions (same tuning run): ~0.6 MB a model
        "num_leaves": 127, "max_depth": 12, "lambda_l2": 0.1}),
}


def objective(name: str) -> Objective:
    try:
        return OBJECTIVES[name]
    except KeyError:
        raise ValueError(f"unknown objective {name!r}: choose one of {sorted(OBJECTIVES)} "
                         "(or auto)") from None
