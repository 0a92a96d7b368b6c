"""The problem-level speed model: the best TFLOP/s a problem reaches, from its own features.

Ranking objectives predict how candidates of one problem compare, not how fast the problem
runs; this small model supplies the scale (one row per problem, so it is cheap to train) and
the calibrated gap supplies each candidate's fraction of it.

It takes the full feature row with every config and interaction column missing (NaN) in
training, so its trees split on problem features only: fed any candidate's row, it gives the
problem's value. That lets it share one packed booster (one predict call) with the fold
models on the prediction path.
"""

from __future__ import annotations

import lightgbm as lgb
import numpy as np

from tilepick.features import FEATURES
from tilepick.model.dataset import Dataset

SCALE_FEATURES = tuple(f.name for f in FEATURES if f.kind in ("hardware", "problem"))
SCALE_POS = np.array([i for i, f in enumerate(FEATURES) if f.kind in ("hardware", "problem")])
SCALE_PARAMS = {"objective": "regression", "learning_rate": 0.2, "num_leaves": 15,
                "min_data_in_leaf": 5, "lambda_l2": 1.0, "num_threads": 2, "seed": 0,
                "deterministic": True, "force_row_wise": True, "verbose": -1}
SCALE_ROUNDS = 40


SCALE_CATEGORICAL = [f.name for f in FEATURES if f.categorical and f.name in SCALE_FEATURES]


def problem_only(x: np.ndarray) -> np.ndarray:
    """Full-width feature rows with only the problem and hardware columns kept (the rest NaN):
    trees trained on such rows split on the problem alone (this model, and the vendor gate of
    :mod:`.gate`), so fed any candidate's row they give the problem's value."""
    out = np.full(x.shape, np.nan)
    out[:, SCALE_POS] = x[:, SCALE_POS]
    return out


def problem_rows(ds: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """(full-width feature rows with only problem columns set, log best TFLOP/s) per problem."""
    return problem_only(ds.x[ds.starts]), np.log(ds.best[ds.starts])


def fit_scale(ds: Dataset, problem_mask: np.ndarray | None = None) -> lgb.Booster:
    x, y = problem_rows(ds)
    if problem_mask is not None:
        x, y = x[problem_mask], y[problem_mask]
    names = [f.name for f in FEATURES]
    data = lgb.Dataset(x, label=y, feature_name=names, categorical_feature=SCALE_CATEGORICAL,
                       params={"verbose": -1, "min_data_in_bin": 1})
    return lgb.train(SCALE_PARAMS, data, num_boost_round=SCALE_ROUNDS)
