"""The numpy evaluation of saved LightGBM models (tilepick.model.trees): the same raw scores as
LightGBM, so prediction runs where lightgbm is not installed."""

import numpy as np
import pytest

lgb = pytest.importorskip("lightgbm")

from tilepick.model import booster as booster_module  # noqa: E402
from tilepick.model.booster import FastBooster, read_model_text  # noqa: E402
from tilepick.model.predictor import Predictor  # noqa: E402
from tilepick.model.trees import NumpyTrees  # noqa: E402
from tilepick.problem import GemmProblem  # noqa: E402

MODELS = ("models/gemm_bf16_h200", "models/gemm_fp8e4m3_h200")
PROBLEMS = (GemmProblem(1, 4096, 4096, layout="rc"), GemmProblem(128, 28672, 4096),
            GemmProblem(1000, 1000, 1000), GemmProblem(3, 8191, 999, layout="rc"))


def _candidate_rows(model_dir):
    """Feature rows of real candidates: every valid config of a few problems."""
    pred = Predictor(model_dir, strict=False)
    rows = []
    for p in PROBLEMS:
        p = p.replace(dtype=pred.dtype, layout="rc" if pred.dtype == "fp8e4m3" else p.layout)
        rows.append(pred._table(p).candidates(p)[1])
    return np.vstack(rows)


@pytest.mark.parametrize("model_dir", MODELS)
@pytest.mark.parametrize("name", ["model.txt.gz", "ensemble.txt.gz"])
def test_same_raw_scores_as_lightgbm_on_the_shipped_models(model_dir, name):
    x = _candidate_rows(model_dir)
    fast = FastBooster.load(f"{model_dir}/{name}")
    trees = NumpyTrees.from_text(read_model_text(f"{model_dir}/{name}"))
    assert (trees.num_features, trees.num_outputs) == (fast.num_features, fast.num_outputs)
    iters = trees.num_trees // trees.num_outputs
    for start, count in ((0, 0), (0, 5), (5, 0), (3, 7), (iters - 1, 0)):
        np.testing.assert_allclose(trees.predict(x, start, count), fast.predict(x, start, count),
                                   rtol=0, atol=1e-10)


def test_categorical_and_missing_values_follow_lightgbm():
    """A model with a categorical feature and NaN / zero missing handling, scored on values it
    never saw: NaN, 0, negatives, unseen categories, categories past the bitset."""
    rng = np.random.default_rng(0)
    n = 2000
    x = np.column_stack([rng.integers(0, 40, n), rng.normal(size=n), rng.normal(size=n)])
    x[rng.random(n) < 0.1, 1] = np.nan
    x[rng.random(n) < 0.1, 2] = 0.0
    y = np.where(np.isin(x[:, 0], [3, 7, 31, 35]), 2.0, 0.0) + np.nan_to_num(x[:, 1]) \
        + 0.5 * x[:, 2]
    for zero_as_missing in (False, True):
        b = lgb.train({"objective": "regression", "verbose": -1, "num_leaves": 15,
                       "min_data_in_leaf": 5, "zero_as_missing": zero_as_missing,
                       "max_cat_to_onehot": 1, "cat_smooth": 1.0},
                      lgb.Dataset(x, y, categorical_feature=[0]), num_boost_round=20)
        trees = NumpyTrees.from_text(b.model_to_string())
        assert any(t.feature is not None and t.cat_bounds is not None for t in trees.trees)
        probe = np.array([[np.nan, 0.3, 0.0], [-1, np.nan, 1.0], [3, 0.0, np.nan],
                          [1000, -2.0, 0.0], [35, 1.0, -1.0], [7, np.nan, np.nan]])
        for data in (x[:300], probe):
            np.testing.assert_allclose(trees.predict(data), b.predict(data, raw_score=True),
                                       rtol=0, atol=1e-10)


def test_predictor_without_lightgbm_ranks_the_same(monkeypatch):
    """Without lightgbm the predictor loads the numpy trees and gives the same ranking."""
    with_lgb = Predictor("models/gemm_bf16_h200")
    monkeypatch.setattr(booster_module, "lgb", None)
    without = Predictor("models/gemm_bf16_h200")
    assert isinstance(without.model, NumpyTrees) and not without.compiled_trees
    for p in PROBLEMS:
        assert without.rank(p, top=8) == with_lgb.rank(p, top=8)


def test_forest_walk_matches_lightgbm_on_the_entry_model_and_one_leaf_trees():
    """Models without categorical splits walk all trees at once (trees._Forest): the shipped
    cuBLASLt entry model on real entry rows, and a packed model whose trees include one-leaf
    ones, score as LightGBM does; the same trees walked one by one agree too."""
    from tilepick.features import lt_entries
    from tilepick.model import lt_ranker

    path = "models/cublaslt_bf16_h200/model.txt.gz"
    rows = lt_ranker.probe_frame(
        "benchmarks/results/cublaslt_probe_suite_h200_b12542b.json.gz").iloc[:400]
    x = lt_entries.compute(rows)
    trees = NumpyTrees.from_text(read_model_text(path))
    assert trees._forest is not None
    fast = FastBooster.load(path)
    for start, count in ((0, 0), (0, 7), (150, 0), (299, 0)):
        np.testing.assert_allclose(trees.predict(x, start, count), fast.predict(x, start, count),
                                   rtol=0, atol=1e-10)
    rng = np.random.default_rng(1)
    xs = rng.normal(size=(500, 3))
    xs[rng.random(500) < 0.1, 0] = np.nan
    y = np.where(xs[:, 1] > 0, 1.0, 0.0)
    const = lgb.train({"objective": "regression", "verbose": -1, "min_data_in_leaf": 400},
                      lgb.Dataset(xs, np.zeros(500) + 0.5), num_boost_round=3)  # one leaf each
    real = lgb.train({"objective": "regression", "verbose": -1, "num_leaves": 7},
                     lgb.Dataset(xs, y), num_boost_round=4)
    packed = booster_module.pack([const, real])
    t = NumpyTrees.from_text(packed.model_to_string())
    assert t._forest is not None and any(tr.feature is None for tr in t.trees)
    want = packed.predict(xs, raw_score=True)
    np.testing.assert_allclose(t.predict(xs), want, rtol=0, atol=1e-10)
    t._forest = None
    np.testing.assert_allclose(t.predict(xs), want, rtol=0, atol=1e-10)
