"""Compiled trees (tilepick.model.compiled, the optional lleaves accelerator) give the same
rankings as LightGBM, and any failure falls back to LightGBM."""

import random

import numpy as np
import pytest

from tilepick.model import Predictor, compiled
from tilepick.problem import GemmProblem

lleaves = pytest.importorskip("lleaves", reason="the [fast] extra is not installed")


@pytest.fixture
def compiled_on(monkeypatch, tmp_path):
    monkeypatch.setenv(compiled.ENV_SWITCH, "1")
    monkeypatch.setenv(compiled.ENV_CACHE, str(tmp_path / "trees"))
    return tmp_path / "trees"


def _shapes(count=40, seed=5, layout="rr"):
    rng = random.Random(seed)
    return [GemmProblem(*(int(2 ** rng.uniform(0, 14)) for _ in range(3)), layout=layout)
            for _ in range(count)]


def test_stage_scores_equal_lightgbm(compiled_on):
    pred = Predictor.load(arch="h200", dtype="bf16")
    assert pred.compiled_trees
    assert len(list(compiled_on.glob("*.o"))) == 2   # one object per cascade stage, cached
    table = pred._table(GemmProblem(64, 64, 64))
    s1 = pred.cascade.stage1_trees
    for p in _shapes(10):
        x = table.features(p, np.flatnonzero(table.valid_mask(p)))
        np.testing.assert_allclose(pred._stage1(x), pred.model.predict(x, 0, s1), rtol=0,
                                   atol=1e-12)
        np.testing.assert_allclose(pred._stage2(x), pred.model.predict(x, s1, 0), rtol=0,
                                   atol=1e-12)
    assert pred._stage1(np.empty((0, pred.model.num_features))).shape == (0,)
    with pytest.raises(ValueError, match="features"):
        pred._stage1(np.zeros((2, 3)))


def test_rankings_equal_with_and_without_compiled_trees(compiled_on, monkeypatch):
    fast = Predictor.load(arch="h200", dtype="bf16")
    monkeypatch.setenv(compiled.ENV_SWITCH, "0")
    plain = Predictor.load(arch="h200", dtype="bf16")
    assert fast.compiled_trees and not plain.compiled_trees
    for layout in ("rr", "rc"):
        for p in _shapes(30, layout=layout):
            got, want = fast.rank(p), plain.rank(p)
            # the same order; speeds equal up to the summation order of 120 trees (last ulp)
            assert [r[0] for r in got] == [r[0] for r in want], p.key()
            np.testing.assert_allclose([r[1] for r in got], [r[1] for r in want], rtol=1e-12)
            assert [r[2] is None for r in got] == [r[2] is None for r in want]
            np.testing.assert_allclose([r[2] for r in got if r[2] is not None],
                                       [r[2] for r in want if r[2] is not None], rtol=1e-9,
                                       atol=1e-12)


def test_a_failing_compile_falls_back_to_lightgbm(compiled_on, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("no LLVM today")

    monkeypatch.setattr(lleaves.Model, "compile", broken)
    with pytest.warns(RuntimeWarning, match="compiled trees unavailable.*no LLVM today"):
        pred = Predictor.load(arch="h200", dtype="bf16")
    assert not pred.compiled_trees
    assert pred.rank(GemmProblem(128, 4096, 4096), top=1)[0][0]
