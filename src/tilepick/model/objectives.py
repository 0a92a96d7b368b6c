"""The learning objectives compared on the same folds, and the LightGBM settings they share.

* ``log1p``: regression on log1p(TFLOP/s). Predicts absolute speed (so a predicted time and a
  spread can be reported), and the log compresses the range from tiny M=1 problems to
  compute-bound ones: the target the CK heuristics found best.
* ``normalized``: regression on TFLOP/s / the best TFLOP/s of the problem. Scale-free per
  problem, but the best is unknown at prediction time, so it ranks without predicting speed.
* ``lambdarank``: LambdaRank per problem, relevance = integer grades of TFLOP/s / best.
  Optimises the ordering at the top directly; like ``normalized`` it predicts no speed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

BASE_PARAMS = {
    "learning_rate": 0.08,
    "num_leaves": 31,
    "max_depth": 8,
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
NUM_ROUNDS = 200

# LambdaRank relevance: GRADES levels of tflops / best, linear above GRADE_FLOOR (slower
# configs are all "irrelevant": what matters is the order near the top).
GRADES = 20
GRADE_FLOOR = 0.5


def grades(rel: np.ndarray) -> np.ndarray:
    g = np.floor((np.asarray(rel) - GRADE_FLOOR) / (1 - GRADE_FLOOR) * GRADES)
    return np.clip(g, 0, GRADES).astype(np.int64)


@dataclass(frozen=True)
class Objective:
    name: str
    lgb_objective: str
    predicts_tflops: bool
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

    def to_tflops(self, scores: np.ndarray) -> np.ndarray | None:
        """Predicted TFLOP/s from raw scores, or None where the objective only ranks."""
        return np.expm1(scores) if self.predicts_tflops else None

    @property
    def is_ranking(self) -> bool:
        return self.lgb_objective == "lambdarank"


OBJECTIVES: dict[str, Objective] = {
    "log1p": Objective("log1p", "regression", True),
    "normalized": Objective("normalized", "regression", False),
    "lambdarank": Objective("lambdarank", "lambdarank", False, {
        "label_gain": [float(2 ** (g / 4) - 1) for g in range(GRADES + 1)],
        "lambdarank_truncation_level": 20, "eval_at": [1, 5]}),
}


def objective(name: str) -> Objective:
    try:
        return OBJECTIVES[name]
    except KeyError:
        raise ValueError(f"unknown objective {name!r}: choose one of {sorted(OBJECTIVES)} "
                         "(or auto)") from None
