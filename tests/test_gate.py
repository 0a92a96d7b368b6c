"""The vendor gate: outcomes from a ranking, how its call moves cuBLAS, that it learns a rule
of the problem, and that a model shipped with it ranks as the gate says."""

import json

import numpy as np
import pytest

from tilepick.features import FEATURE_INDEX
from tilepick.model import Predictor, gate
from tilepick.model.evaluate import evaluate
from tilepick.model.train import TrainOptions, train
from tilepick.problem import GemmProblem

from test_model import SHAPES, synthetic_rows

V = gate.VENDOR


def _problems():
    # problem 0: cuBLAS 90, Triton a 100 (ranked first), b 120; problem 1: cuBLAS 50 ranked
    # first, Triton c 40 then d 30; problem 2: no cuBLAS row
    pi = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    ids = np.array([V, "a", "b", V, "c", "d", "e", "f"], dtype=object)
    tf = np.array([90.0, 100, 120, 50, 40, 30, 10, 20])
    keys = np.array([1.0, 3, 2, 9, 5, 4, 1, 2])
    return pi, ids, tf, keys


def test_outcomes_compare_cublas_with_the_first_ranked_triton_candidate():
    pi, ids, tf, keys = _problems()
    y, has = gate.problem_outcomes(pi, ids, tf, keys)
    assert has.tolist() == [True, True, False]
    assert y[0] == pytest.approx(np.log(90 / 100))   # against a (ranked first), not b (faster)
    assert y[1] == pytest.approx(np.log(50 / 40))
    assert np.isnan(y[2])
    right = gate.right_calls(y, has)
    assert right[0] < 0 < right[1] and np.isnan(right[2])
    keys_right = gate.apply(pi, ids, keys, right)
    assert _first(pi, ids, keys_right, 0) == "a" and _first(pi, ids, keys_right, 1) == V


def test_outcomes_over_the_first_few_triton_picks_take_the_fastest_measured():
    pi, ids, tf, keys = _problems()
    y2, has = gate.problem_outcomes(pi, ids, tf, keys, top=2)
    assert has.tolist() == [True, True, False]
    assert y2[0] == pytest.approx(np.log(90 / 120))   # b, ranked second, is the faster
    assert y2[1] == pytest.approx(np.log(50 / 40))    # c is faster than d: c's time
    # more picks than a problem has: all of its Triton rows, never cuBLAS's own row
    y9, _ = gate.problem_outcomes(pi, ids, tf, keys, top=9)
    assert np.allclose(y9[:2], y2[:2])
    y1, _ = gate.problem_outcomes(pi, ids, tf, keys, top=1)
    assert np.array_equal(y1, gate.problem_outcomes(pi, ids, tf, keys)[0], equal_nan=True)
    x = gate.problem_matrix(np.zeros((3, len(FEATURE_INDEX))))
    folds = [(np.array([True, True, False]), np.array([False, False, True]))]
    assert np.allclose(gate.out_of_fold(pi, ids, tf, keys, x, folds, top=2)[1][:2], y2[:2])
    with pytest.raises(ValueError, match="top must be >= 1"):
        gate.problem_outcomes(pi, ids, tf, keys, top=0)


def _first(pi, ids, keys, p):
    rows = np.flatnonzero(pi == p)
    return ids[rows[np.argmax(keys[rows])]]


def test_the_call_moves_cublas_first_or_below_the_first_triton_candidate():
    pi, ids, tf, keys = _problems()
    up = gate.apply(pi, ids, keys, np.array([1.0, 1.0, 1.0]))
    assert _first(pi, ids, up, 0) == V and _first(pi, ids, up, 1) == V
    down = gate.apply(pi, ids, keys, np.array([-1.0, -1.0, -1.0]))
    assert _first(pi, ids, down, 1) == "c"
    assert down[4] > down[3] > down[5]             # between the first and second Triton
    assert down[0] == keys[0]                      # already below: unchanged
    none = gate.apply(pi, ids, keys, np.array([np.nan, np.nan, np.nan]))
    assert none.tolist() == keys.tolist()
    # every row but cuBLAS's keeps its key
    for k in (up, down):
        assert np.array_equal(k[ids != V], keys[ids != V])


def test_the_gate_learns_a_rule_of_the_problem():
    rng = np.random.default_rng(0)
    n = 400
    x = np.full((n, len(FEATURE_INDEX)), np.nan)
    x[:, FEATURE_INDEX["log2_k"]] = rng.uniform(0, 15, n)
    x[:, FEATURE_INDEX["log2_m"]] = rng.uniform(0, 15, n)
    # cuBLAS wins by 20% at large K, loses by 20% at small K
    y = np.where(x[:, FEATURE_INDEX["log2_k"]] > 7.5, np.log(1.2), np.log(0.8))
    booster = gate.fit(gate.problem_matrix(x), y)
    test = np.full((2, len(FEATURE_INDEX)), np.nan)
    test[:, FEATURE_INDEX["log2_k"]] = [12, 3]
    test[:, FEATURE_INDEX["log2_m"]] = [5, 5]
    raw = booster.predict(gate.problem_matrix(test), raw_score=True)
    assert raw[0] > 0 > raw[1]


def test_the_gate_fits_a_small_pocket_where_cublas_wins_by_a_few_percent():
    """15 of 400 problems (M = 1-1.4, N ~ 8192) where cuBLAS wins by 3%, the rest where it
    loses by 10%: the pocket's weights are |log 1.03| = 0.03, so its leaves' hessian sums are
    ~0.1; with the L2 of 1 the gate had until session 41 their values shrank ~10x and it
    called Triton there (raw -0.4 on every pocket problem; rr 1 x 8192 x 8192 on the LLM
    suite). Fitted on all of them, it must call cuBLAS in the pocket and nowhere else."""
    rng = np.random.default_rng(0)
    n = 400
    x = np.full((n, len(FEATURE_INDEX)), np.nan)
    x[:, FEATURE_INDEX["log2_m"]] = rng.uniform(0, 15, n)
    x[:, FEATURE_INDEX["log2_n"]] = rng.uniform(8, 16, n)
    pocket = np.arange(n) < 15
    x[pocket, FEATURE_INDEX["log2_m"]] = rng.uniform(0, 0.5, pocket.sum())
    x[pocket, FEATURE_INDEX["log2_n"]] = rng.uniform(12.9, 13.1, pocket.sum())
    y = np.where(pocket, np.log(1.03), np.log(0.9))
    raw = gate.fit(gate.problem_matrix(x), y).predict(gate.problem_matrix(x), raw_score=True)
    assert (raw[pocket] > 0).all() and (raw[~pocket] < 0).all()


@pytest.fixture(scope="module")
def gated_model(tmp_path_factory):
    d = tmp_path_factory.mktemp("gate_data")
    from tilepick.data import io

    io.write_part(d, synthetic_rows(SHAPES, seed=3))
    out = tmp_path_factory.mktemp("gate_models") / "gemm_bf16_h200"
    train([d], "bf16", "h200", out, TrainOptions(folds=3, objective="lambdarank",
                                                 vendor_gate="on"))
    return d, out


def test_a_gated_model_ranks_as_its_gate_says(gated_model):
    _, out = gated_model
    meta = json.loads((out / "predictor.json").read_text())
    assert meta["ensemble"]["gate_column"] == meta["ensemble"]["fold_models"] + 1
    cvm = json.loads((out / "cv_metrics.json").read_text())
    assert cvm["vendor_gate"]["shipped"] is True
    assert cvm["vendor_gate"]["perfect_call"]["mean"] >= cvm["vendor_gate"]["ranker"]["mean"]
    pred = Predictor(out)
    assert pred.gate_column == meta["ensemble"]["gate_column"]
    calls = set()
    for m, n, k in ((3, 4096, 4096), (700, 2000, 2000), (5000, 600, 9000), (64, 28672, 512),
                    (1, 8192, 8192), (9000, 9000, 900)):
        p = GemmProblem(m, n, k)
        ranked = pred.rank(p)
        ids = [r[0] for r in ranked]
        tf = [r[1] for r in ranked]
        assert tf == sorted(tf, reverse=True)        # the order of predicted speed is kept
        table = pred._table(p)
        index = np.flatnonzero(table.valid_mask(p))
        x = table.features(p, index)
        v = ids.index(V)
        raw = pred.ensemble.predict(x[[int(np.flatnonzero(table.id_array[index] == V)[0])]])
        says_cublas = raw[0, pred.gate_column] > 0
        calls.add(bool(says_cublas))
        if says_cublas:
            assert v == 0, (p.key(), ids[:3])
        else:
            assert v != 0, (p.key(), ids[:3])
        k_unc = pred.cascade.uncertainty_top
        assert all(r[2] is not None for r in ranked[:k_unc])
    assert calls == {False, True}   # both calls are exercised


def test_evaluate_applies_the_recipes_gate(gated_model, tmp_path):
    d, out = gated_model
    rep = evaluate([d], out)
    assert rep["vendor_gate"] is True
    assert 0 < rep["methods"]["model top-1"]["mean"] <= 1


def test_no_gate_when_off_and_bad_choice_refused(tmp_path):
    from tilepick.data import io

    io.write_part(tmp_path / "d", synthetic_rows(SHAPES[:18], seed=5))
    out = tmp_path / "gemm_bf16_h200"
    train([tmp_path / "d"], "bf16", "h200", out, TrainOptions(folds=3, objective="lambdarank",
                                                              vendor_gate="off"))
    meta = json.loads((out / "predictor.json").read_text())
    assert meta["ensemble"]["gate_column"] is None
    assert Predictor(out).rank(GemmProblem(100, 100, 100))
    with pytest.raises(ValueError, match="vendor_gate"):
        TrainOptions(vendor_gate="maybe")


def test_recipe_data_is_the_models_own_training_data_and_gate(gated_model):
    from tilepick.model.evaluate import recipe_data

    d, out = gated_model
    opts, ds, gated = recipe_data(out)
    assert gated is True and opts.folds == 3 and opts.objective == "lambdarank"
    manifest = json.loads((out / "manifest.json").read_text())
    assert ds.n_problems == manifest["problems"] and len(ds) == manifest["rows"]


def test_labels_average_the_outcomes_of_several_splits():
    pi, ids, tf, keys = _problems()
    # a second draw whose first Triton pick on problem 0 is b (120), not a (100)
    other = keys.copy()
    other[2] = 4.0
    x = np.zeros((3, len(FEATURE_INDEX)))
    folds = [(np.array([True, True, False]), np.array([False, False, True]))]
    _, y1, has = gate.out_of_fold(pi, ids, tf, keys, x, folds)
    _, y2, has2 = gate.out_of_fold(pi, ids, tf, keys, x, folds, extra_keys=[other])
    assert has.tolist() == has2.tolist() == [True, True, False]
    assert y2[0] == pytest.approx((np.log(90 / 100) + np.log(90 / 120)) / 2)
    assert y2[1] == pytest.approx(y1[1])           # the same pick in both draws
    with pytest.raises(ValueError, match="different problems"):
        gate.out_of_fold(pi, ids, tf, keys, x, folds, extra_keys=[other[:-2]])


def _gated_recipe(tmp_path, **options):
    """A small model trained with its vendor gate on and ``options``: (cv_metrics, dir)."""
    from tilepick.data import io

    io.write_part(tmp_path / "d", synthetic_rows(SHAPES[:18], seed=5))
    out = tmp_path / "gemm_bf16_h200"
    return train([tmp_path / "d"], "bf16", "h200", out,
                 TrainOptions(folds=3, objective="lambdarank", vendor_gate="on",
                              **options)), out


def _drop_parameter(model_dir, name: str) -> None:
    """Make ``model_dir``'s manifest one from before the option ``name`` existed."""
    manifest = json.loads((model_dir / "manifest.json").read_text())
    del manifest["parameters"][name]
    (model_dir / "manifest.json").write_text(json.dumps(manifest))


def test_gate_splits_are_part_of_the_recipe(tmp_path):
    from tilepick.model.evaluate import recipe_options

    cvm, out = _gated_recipe(tmp_path, gate_splits=2)
    assert cvm["vendor_gate"]["label_splits"] == 2 and cvm["vendor_gate"]["shipped"]
    assert recipe_options(out).gate_splits == 2
    with pytest.raises(ValueError, match="gate_splits"):
        TrainOptions(gate_splits=0)


def test_a_gate_of_several_seeds_is_their_mean_and_part_of_the_recipe(tmp_path):
    from tilepick.model.evaluate import recipe_options

    rng = np.random.default_rng(3)
    x = gate.problem_matrix(rng.normal(size=(60, len(FEATURE_INDEX))))
    y = rng.normal(scale=0.2, size=60)
    one = [gate.fit(x, y, seed=s).predict(x, raw_score=True) for s in (4, 5, 6)]
    three = gate.fit(x, y, seed=4, seeds=3).predict(x, raw_score=True)
    assert np.allclose(three, np.mean(one, axis=0), atol=1e-9)
    assert np.array_equal(gate.fit(x, y, seed=4, seeds=1).predict(x, raw_score=True), one[0])
    with pytest.raises(ValueError, match="seeds must be >= 1"):
        gate.fit(x, y, seeds=0)
    cvm, out = _gated_recipe(tmp_path, gate_seeds=2)
    assert cvm["vendor_gate"]["seeds"] == 2 and cvm["vendor_gate"]["shipped"]
    assert recipe_options(out).gate_seeds == 2
    assert Predictor(out).rank(GemmProblem(300, 5000, 2000))
    # a manifest from before the option reads as one fit
    _drop_parameter(out, "gate_seeds")
    assert recipe_options(out).gate_seeds == 1
    with pytest.raises(ValueError, match="gate_seeds"):
        TrainOptions(gate_seeds=0)


def test_gate_label_top_is_part_of_the_recipe(tmp_path):
    from tilepick.model.evaluate import recipe_options

    cvm, out = _gated_recipe(tmp_path, gate_label_top=3)
    assert cvm["vendor_gate"]["label_top"] == 3 and cvm["vendor_gate"]["shipped"]
    assert "first 3 Triton picks" in cvm["vendor_gate"]["label"]
    assert recipe_options(out).gate_label_top == 3
    assert Predictor(out).rank(GemmProblem(300, 5000, 2000))
    # the ceiling is still of the ranker's own first picks: a label over three picks can
    # only favour Triton more, never raise what a right call on the first pick gives
    base, _ = _gated_recipe(tmp_path / "base")
    assert cvm["vendor_gate"]["perfect_call"] == base["vendor_gate"]["perfect_call"]
    _drop_parameter(out, "gate_label_top")
    assert recipe_options(out).gate_label_top == 1
    with pytest.raises(ValueError, match="gate_label_top must be >= 1"):
        TrainOptions(gate_label_top=0)


def test_a_pooled_gate_learns_from_every_dtype_and_is_scored_on_the_served_one(tmp_path):
    from tilepick.data import io
    from tilepick.model.evaluate import recipe_options

    io.write_part(tmp_path / "bf16", synthetic_rows(SHAPES[:18], seed=5))
    io.write_part(tmp_path / "fp16", synthetic_rows(SHAPES[18:30], seed=1, dtype="fp16"))
    data = [tmp_path / "bf16", tmp_path / "fp16"]
    out = tmp_path / "gemm_fp16_h200"
    cvm = train(data, "fp16", "h200", out,
                TrainOptions(folds=3, objective="lambdarank", vendor_gate="on", pool=("bf16",),
                             gate_pool=True))
    vg = cvm["vendor_gate"]
    assert vg["pooled"] and vg["shipped"]
    # fitted on both dtypes' outcomes, scored out of fold on the 12 fp16 problems only
    assert vg["problems_with_both"] <= 12 < vg["pooled_problems_with_both"] <= 30
    assert recipe_options(out).gate_pool is True
    assert Predictor(out).rank(GemmProblem(300, 5000, 2000, dtype="fp16"))
    # evaluate follows the recipe: the same pooled gate, out of fold, the same figures
    rep = evaluate(data, out)
    assert rep["problems"] == 12
    assert rep["methods"]["model top-1"]["mean"] == pytest.approx(vg["gated"]["mean"])
    # without pooled dtypes there is nothing more to learn from: the usual gate
    plain = train([tmp_path / "fp16"], "fp16", "h200", tmp_path / "plain",
                  TrainOptions(folds=3, objective="lambdarank", vendor_gate="on",
                               gate_pool=True))
    assert plain["vendor_gate"]["pooled"] is False
    with pytest.raises(ValueError, match="gate_pool"):
        TrainOptions(gate_pool=True, gate_splits=2)


def test_the_gates_l2_is_part_of_the_recipe_and_reaches_every_gate_fit(tmp_path, monkeypatch):
    from tilepick.data import io
    from tilepick.model.evaluate import recipe_options

    io.write_part(tmp_path / "d", synthetic_rows(SHAPES[:18], seed=5))
    seen = []
    real_fit = gate.fit

    def spy(x, y, seed=0, params=None, **kw):
        seen.append((params or {}).get("lambda_l2"))
        return real_fit(x, y, seed, params=params, **kw)

    monkeypatch.setattr(gate, "fit", spy)
    out = tmp_path / "gemm_bf16_h200"
    cvm = train([tmp_path / "d"], "bf16", "h200", out,
                TrainOptions(folds=3, objective="lambdarank", vendor_gate="on",
                             gate_lambda_l2=0.01))
    # the 3 out-of-fold gates and the shipped one
    assert seen and set(seen) == {0.01} and len(seen) == 4
    assert cvm["vendor_gate"]["params"]["lambda_l2"] == 0.01
    assert recipe_options(out).gate_lambda_l2 == 0.01
    # a manifest from before the option reads as the gate it was fitted with
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["parameters"]["gate_lambda_l2"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert recipe_options(out).gate_lambda_l2 == gate.GATE_PARAMS["lambda_l2"] == 0.1
    with pytest.raises(ValueError, match="gate_lambda_l2"):
        TrainOptions(gate_lambda_l2=float("nan"))
