"""The vendor gate: does cuBLAS beat the ranker's best Triton candidate on this problem?

Why a model of its own: the ranker sees cuBLAS as one row among ~60-300 per problem, and its
speed is jagged in problem space (cuBLAS's own kernel choices, its slow paths on odd strides
and small M), so the ranker's cuBLAS-or-Triton call was the largest single loss: out of fold
(bf16, 5,610 problems, the session-8 recipe) a perfect call between the ranker's first Triton
candidate and cuBLAS would lift mean efficiency from 98.60% to 99.38%, and P10 from 96.4% to
98.4% (BENCHMARKS.md, "Session 10: the vendor gate").

What it is: a small LightGBM classifier, one row per problem (problem and hardware features
only, like :mod:`.scale`), trained out of fold on "cuBLAS is faster than the ranker's first
Triton candidate", each problem weighted by |log(cuBLAS / that candidate)|: a cost-sensitive
classifier, so its raw score > 0 (probability > 0.5) is the call of lower expected loss. The
labels come from the ranker's *out-of-fold* picks, the ones it makes on problems it never saw.

How it acts (:func:`apply`, the same on the evaluation and the prediction paths): a problem
whose gate says cuBLAS gets cuBLAS first; otherwise cuBLAS goes below the first Triton
candidate if the ranker had put it first. Nothing else of the order changes.

"cuBLAS" here is torch.matmul as it is (``gemm.cublas``); every other candidate, cuBLAS behind
padded copies (``gemm.cublas_repack``, session 31) included, is on the "Triton" side.
"""

from __future__ import annotations

import numpy as np

from tilepick.config import VENDOR_FAMILIES
from tilepick.features import FEATURES
from tilepick.model.ranking import within_problem_rank
from tilepick.model.scale import SCALE_CATEGORICAL, problem_only

VENDOR = VENDOR_FAMILIES[0]
# lambda_l2 0.1 since session 41 (was 1.0): the rows' weights are |log ratio|, ~0.01-0.1 where
# cuBLAS and Triton are a few % apart, so a leaf of ten such problems had a hessian sum of ~0.1
# against an L2 of 1 and its value shrunk ~10x: a pocket where cuBLAS wins by 3-5% (rr M <= 2,
# N = 8192) could not be fitted at any leaf size. Out of fold, three seeds: 98.03-98.04 / P10
# 94.26-94.31 against 97.99-98.03 / 94.14-94.23 (benchmarks/gate_pocket.py)
GATE_PARAMS = {"objective": "binary", "learning_rate": 0.2, "num_leaves": 31,
               "min_data_in_leaf": 10, "lambda_l2": 0.1, "feature_fraction": 0.9,
               "num_threads": 2, "seed": 0, "deterministic": True, "force_row_wise": True,
               "verbose": -1}
# 60 rounds at 0.2 scored within ~0.04 points of 300 at 0.05 out of fold (98.67-98.68 vs
# 98.70-98.71% mean over three seeds, benchmarks/vendor_gate.py) at a fifth of the trees on
# the prediction path
GATE_ROUNDS = 60
WEIGHT_FLOOR = 1e-3   # a tie still counts a little


def problem_outcomes(problem_index: np.ndarray, config_ids: np.ndarray, tflops: np.ndarray,
                     keys: np.ndarray, top: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Per problem: (log(cuBLAS / the first-ranked Triton candidate's TFLOP/s), has both).

    ``keys``: the ranking (higher = better) of every row; rows grouped by problem. ``top`` > 1:
    the fastest measured of the first ``top`` Triton candidates instead of the first
    (``TrainOptions.gate_label_top`` says why)."""
    if top < 1:
        raise ValueError(f"top must be >= 1, got {top}")
    n_prob = int(problem_index.max()) + 1 if len(problem_index) else 0
    vendor = config_ids == VENDOR
    cub = np.full(n_prob, np.nan)
    cub[problem_index[vendor]] = tflops[vendor]
    rank = within_problem_rank(problem_index, np.where(vendor, -np.inf, keys))
    first = np.flatnonzero((rank < top) & ~vendor)
    tri = np.full(n_prob, np.nan)
    np.fmax.at(tri, problem_index[first], tflops[first])
    has = np.isfinite(cub) & np.isfinite(tri)
    out = np.full(n_prob, np.nan)
    out[has] = np.log(cub[has] / tri[has])
    return out, has


def problem_matrix(x_first_rows: np.ndarray) -> np.ndarray:
    """The gate's rows: :func:`.scale.problem_only` (problem and hardware columns only, so a
    candidate's row gives the problem's value and the gate shares the packed ensemble
    booster with the scale model)."""
    return problem_only(x_first_rows)


def fit(x: np.ndarray, log_ratio: np.ndarray, seed: int = 0, params: dict | None = None,
        rounds: int = GATE_ROUNDS, seeds: int = 1):
    """The gate on problem rows ``x`` (:func:`problem_matrix`) and their outcomes
    (``params`` override :data:`GATE_PARAMS`, for comparisons); with ``seeds`` > 1 the mean
    of that many fits, seeds seed, seed + 1, ... (:func:`.booster.average`: one booster whose
    raw score is their mean raw score; ``TrainOptions.gate_seeds`` says why)."""
    import lightgbm as lgb

    from tilepick.model.booster import average

    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    def one(s: int):
        # a Dataset per fit: its binning takes the seed's data_random_seed
        data = lgb.Dataset(x, label=(log_ratio > 0).astype(float),
                           weight=np.abs(log_ratio) + WEIGHT_FLOOR,
                           feature_name=[f.name for f in FEATURES],
                           categorical_feature=SCALE_CATEGORICAL,
                           params={"verbose": -1, "min_data_in_bin": 1})
        return lgb.train(dict(GATE_PARAMS, seed=s, **(params or {})), data,
                         num_boost_round=rounds)

    return average([one(seed + i) for i in range(seeds)])


def apply(problem_index: np.ndarray, config_ids: np.ndarray, keys: np.ndarray,
          gate_raw: np.ndarray) -> np.ndarray:
    """Keys with cuBLAS moved by the gate (``gate_raw`` per problem: > 0 cuBLAS, <= 0 the
    first Triton candidate, NaN no call: the ranker's order stays)."""
    keys = np.asarray(keys, dtype=np.float64).copy()
    vendor = np.flatnonzero(config_ids == VENDOR)
    if not len(vendor):
        return keys
    n_prob = int(problem_index.max()) + 1
    finite = np.where(np.isfinite(keys), keys, np.nan)
    top_any = np.full(n_prob, -np.inf)
    np.fmax.at(top_any, problem_index, finite)
    tri = np.where(config_ids == VENDOR, np.nan, finite)
    top_tri = np.full(n_prob, -np.inf)
    np.fmax.at(top_tri, problem_index, tri)
    p = problem_index[vendor]
    called = ~np.isnan(gate_raw[p])
    say_cub = called & (gate_raw[p] > 0)
    has_tri = np.isfinite(top_tri[p])
    # cuBLAS first: above everything; Triton first: just below the first Triton candidate
    # (keys between it and the next one are taken by nothing: the step is 1/2 of the gap)
    up = say_cub & np.isfinite(top_any[p])
    keys[vendor[up]] = top_any[p][up] + 1.0
    down = called & ~say_cub & has_tri & (keys[vendor] >= top_tri[p])
    if down.any():
        v = np.where(np.isnan(tri), -np.inf, tri)
        runner_up = within_problem_rank(problem_index, v) == 1
        second = np.full(n_prob, -np.inf)
        second[problem_index[runner_up]] = v[runner_up]
        below = np.where(np.isfinite(second[p]), (top_tri[p] + second[p]) / 2, top_tri[p] - 1)
        keys[vendor[down]] = below[down]
    return keys


def right_calls(log_ratio: np.ndarray, has: np.ndarray) -> np.ndarray:
    """The raw scores of a gate that is always right (for the ceiling): +1 where cuBLAS is
    faster, -1 where it is not, NaN (no call) where there is no outcome."""
    return np.where(has, np.where(log_ratio > 0, 1.0, -1.0), np.nan)


def out_of_fold(problem_index, config_ids, tflops, keys, x_problem, folds, seed: int = 0,
                extra_keys=(), top: int = 1, **fit_kw):
    """Gate raw scores per problem, each from a gate fitted on the other folds' problems
    (``folds``: boolean masks per problem), and the outcomes they were fitted on.

    ``extra_keys``: the rankings of further out-of-fold draws (other fold splits); a
    problem's label is then the mean of its outcomes under ``keys`` and these, the expected
    loss of a ranker that never saw it rather than one draw of it. (A label of a training
    problem may come from a ranker that saw a test problem of this fold: a second-order leak,
    through neighbours' labels only.) ``top``: as in :func:`problem_outcomes`."""
    y, has = problem_outcomes(problem_index, config_ids, tflops, keys, top)
    for other in extra_keys:
        if len(other) != len(keys):
            raise ValueError(f"the fold splits' rankings cover different problems: "
                             f"{len(other)} rows against {len(keys)}")
        y_other, has_other = problem_outcomes(problem_index, config_ids, tflops, other, top)
        if not np.array_equal(has, has_other):
            raise ValueError("the fold splits' rankings cover different problems")
        y = y + y_other
    y = y / (1 + len(extra_keys))
    raw = np.full(len(y), np.nan)   # no call (no cuBLAS row, no gate): the ranker's order
    for train, test in folds:
        tr, te = train & has, test & has
        if tr.sum() < 2 or not te.any() or len(np.unique(y[tr] > 0)) < 2:
            continue
        raw[te] = fit(x_problem[tr], y[tr], seed, **fit_kw).predict(x_problem[te],
                                                                    raw_score=True)
    return raw, y, has
