"""Training, evaluation and prediction on a small synthetic dataset whose speed follows a
known formula; fold hygiene; metric edge cases; refusing a mismatched model."""

import json
import shutil

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from tilepick import config, solvers
from tilepick.config import KernelConfig
from tilepick.data import io
from tilepick.data.schema import config_fields, problem_fields
from tilepick.features import FEATURE_INDEX, FeatureSchemaError, candidate_ids, frame_matrix
from tilepick.hardware import profile
from tilepick.model import ModelError, Predictor
from tilepick.model import baselines, cv, dataset, metrics, nvmh
from tilepick.model.booster import (FastBooster, average, interleave, pack, prediction_text,
                                    read_model_text, write_model_text)
from tilepick.model.objectives import OBJECTIVES
from tilepick.model.ranking import cascade_keys, within_problem_rank
from tilepick.model.search import compare_to_exhaustive, search
from tilepick.model.train import TrainOptions, train
from tilepick.problem import GemmProblem

HW = profile("h200")
SHAPES = [(m, n, k) for m in (1, 8, 50, 256, 1500, 8192) for n, k in
          ((4096, 4096), (1000, 3000), (28672, 1024), (300, 77), (12288, 8192), (64, 50000))]


def true_tflops(problems_and_configs) -> np.ndarray:
    """The synthetic ground truth: the analytic estimate, discounted for K padding, with
    cuBLAS at 85% of the analytic ceiling (a known function of the features)."""
    df = pd.DataFrame([{**problem_fields(p), **config_fields(c)} for p, c in problems_and_configs])
    x = frame_matrix(df, HW)
    est = x[:, FEATURE_INDEX["estimate_tflops"]] * (0.6 + 0.4 * x[:, FEATURE_INDEX["eff_k"]])
    roof = 2.0 ** -x[:, FEATURE_INDEX["log2_roofline_us"]] * df["m"] * df["n"] * df["k"] * 2e-6
    return np.where(np.isnan(est), 0.85 * roof, est)


def synthetic_rows(shapes, seed=0, per_problem=30, dtype="bf16"):
    rng = np.random.default_rng(seed)
    rows = []
    for m, n, k in shapes:
        p = GemmProblem(m, n, k, dtype=dtype)
        ids = candidate_ids(p, HW)
        pick = sorted(set(rng.choice(len(ids), size=min(per_problem, len(ids)), replace=False))
                      | {ids.index("gemm.cublas")})
        cfgs = [KernelConfig.from_id(ids[i]) for i in pick]
        tf = true_tflops([(p, c) for c in cfgs]) * rng.lognormal(0, 0.02, len(cfgs))
        for c, t in zip(cfgs, tf):
            ms = p.flops / (t * 1e9)
            rows.append({**problem_fields(p), **config_fields(c), "valid": True, "time_ms": ms,
                         "tflops": t, "retimed": bool(t >= np.sort(tf)[-5]),
                         "stopped_early": False, "timing_meaningful": True,
                         "gpu_name": "NVIDIA H200", "sm_count": 132, "sweep_id": "synthetic"})
    return rows


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("data")
    io.write_part(d, synthetic_rows(SHAPES))
    return d


@pytest.fixture(scope="module")
def model_dir(data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("models") / "gemm_bf16_h200"
    train([data_dir], "bf16", "h200", out, TrainOptions(folds=3))
    return out


# -- round trip --------------------------------------------------------------------------------


def test_train_writes_every_artifact(model_dir, data_dir):
    for name in ("model.txt.gz", "ensemble.txt.gz", "feature_spec.json", "manifest.json",
                 "cv_metrics.json", "feature_importance.json", "predictor.json"):
        assert (model_dir / name).is_file(), name
    manifest = json.loads((model_dir / "manifest.json").read_text())
    files = list(data_dir.glob("*.parquet"))
    assert [d["sha256"] for d in manifest["data"]] == [dataset.sha256_file(f) for f in files]
    assert manifest["rows"] > 0 and manifest["problems"] == len(SHAPES)
    assert all(f["bytes"] <= 10 * 2**20 for f in manifest["files"].values())
    cvm = json.loads((model_dir / "cv_metrics.json").read_text())
    assert set(cvm["objectives"]) == {"log1p", "normalized", "lambdarank"}
    assert cvm["default"] == max(cvm["objectives"], key=lambda n: (
        cvm["objectives"][n]["mean"], cvm["objectives"][n]["p10"]))
    best = cvm["objectives"][cvm["default"]]
    for key in ("mean", "median", "p10", "min", "top1_accuracy", "top5_hit_rate", "r2_log_time"):
        assert best[key] is not None, key
    assert best["mean"] > 0.9   # the formula is learnable: unseen shapes are picked well


def test_predictor_ranks_valid_candidates_best_first(model_dir):
    pred = Predictor(model_dir)
    p = GemmProblem(300, 5000, 2000)   # not a training shape
    ranked = pred.rank(p)
    ids = [r[0] for r in ranked]
    assert set(ids) <= {c.id for c in solvers.applicable_configs(p, HW)}
    assert "gemm.cublas" in ids
    tf = [r[1] for r in ranked]
    assert tf == sorted(tf, reverse=True) and all(t > 0 for t in tf)
    k = pred.cascade.uncertainty_top
    assert all(r[2] is not None and r[2] >= 0 for r in ranked[:k])
    assert all(r[2] is None for r in ranked[k:])
    assert pred.rank(p, top=3) == ranked[:3]
    assert pred.rank(p) == ranked                  # memoised, and a fresh list each time
    assert pred.rank(p) is not pred.rank(p)


def test_outside_catalog_ranks_the_valid_configs_the_catalog_lacks(model_dir):
    pred = Predictor(model_dir)
    p = GemmProblem(300, 5000, 2000)
    outside = pred.outside_catalog(p, 3)
    ids = [r[0] for r in outside]
    assert len(ids) == 3 and not set(ids) & set(pred.trained_configs)
    assert set(ids) <= {c.id for c in solvers.applicable_configs(p, HW)}
    # the same order the model gives them over the whole space
    space = [r[0] for r in Predictor(model_dir, catalog="space").rank(p)
             if r[0] not in set(pred.trained_configs)]
    assert ids == space[:3]
    assert Predictor(model_dir, catalog="space").outside_catalog(p, 3) == []
    assert pred.outside_catalog(p, 0) == []


def test_predictions_follow_the_truth(model_dir):
    pred = Predictor(model_dir)
    effs = []
    for m, n, k in ((3, 4096, 4096), (700, 2000, 2000), (5000, 600, 9000), (64, 28672, 512)):
        p = GemmProblem(m, n, k)
        ranked = pred.rank(p)
        truth = true_tflops([(p, KernelConfig.from_id(r[0])) for r in ranked])
        effs.append(truth[0] / truth.max())
    assert np.mean(effs) > 0.85, effs


def test_predictor_refuses_what_it_was_not_trained_for(model_dir):
    pred = Predictor(model_dir)
    with pytest.raises(ModelError, match="bf16"):
        pred.rank(GemmProblem(64, 64, 64, dtype="fp16"))
    with pytest.raises(ModelError, match="layouts"):
        pred.rank(GemmProblem(64, 64, 64, layout="cc"))
    assert Predictor(model_dir, strict=False).rank(GemmProblem(64, 64, 64, layout="cc"))


def test_mismatched_feature_schema_is_refused(model_dir, tmp_path):
    bad = tmp_path / "gemm_bf16_h200"
    shutil.copytree(model_dir, bad)
    spec = json.loads((bad / "feature_spec.json").read_text())
    spec["names"] = [n for n in spec["names"] if n != "tile_eff"] + ["tile_eff_v0"]
    (bad / "feature_spec.json").write_text(json.dumps(spec))
    with pytest.raises(FeatureSchemaError) as err:
        Predictor(bad)
    assert "tile_eff" in str(err.value) and "tile_eff_v0" in str(err.value)
    spec = json.loads((model_dir / "feature_spec.json").read_text())
    spec["schema_version"] = 0
    (bad / "feature_spec.json").write_text(json.dumps(spec))
    with pytest.raises(FeatureSchemaError, match="schema version 0"):
        Predictor.load(model_dir=bad)


def test_model_from_before_a_family_was_added(model_dir, tmp_path):
    """Families are only appended: a model whose family encoding is a prefix of the code's
    loads (its codes are unchanged) and never ranks the newer families, even over the whole
    space; a reordered encoding is refused."""
    from tilepick.config import FAMILIES, space

    old = tmp_path / "gemm_bf16_h200"
    shutil.copytree(model_dir, old)
    spec = json.loads((old / "feature_spec.json").read_text())
    # the newest family with a declared space (gemm.cublaslt has none: its entries come from
    # cuBLASLt per problem on a GPU); the model predates it
    newest = [f for f in FAMILIES if space(f)][-1]
    assert newest == "gemm.gemv_n_splitk"
    spec["encodings"]["family"] = list(FAMILIES)[:list(FAMILIES).index(newest)]
    (old / "feature_spec.json").write_text(json.dumps(spec))
    # the newest family (the x @ W decode GEMV) serves it (rr-only model: not strict)
    p = GemmProblem(1, 4096, 4096, layout="rr")

    def family(cid):
        return KernelConfig.from_id(cid).family
    every = {r[0] for r in Predictor(model_dir, catalog="space", strict=False).rank(p)}
    assert any(family(c) == newest for c in every)
    ranked = {r[0] for r in Predictor(old, catalog="space", strict=False).rank(p)}
    assert ranked == {c for c in every if family(c) != newest}
    spec["encodings"]["family"] = list(reversed(FAMILIES))
    (old / "feature_spec.json").write_text(json.dumps(spec))
    with pytest.raises(FeatureSchemaError, match="encoding of family"):
        Predictor(old)


def test_pooled_dtypes_are_trained_on_and_only_the_served_one_is_scored(data_dir, tmp_path):
    from tilepick.model.evaluate import evaluate

    fp16 = tmp_path / "fp16"
    io.write_part(fp16, synthetic_rows(SHAPES[:18], seed=1, dtype="fp16"))
    ds = dataset.load([data_dir, fp16], "fp16", "h200", pool=["bf16"])
    assert ds.n_problems == len(SHAPES) + 18 and ds.served.sum() == 18
    assert ds.pooled_dtypes == ["bf16"] and ds.dtype == "fp16"
    # one matrix over both dtypes: each row's features are those of its own dtype
    alone = dataset.load([fp16], "fp16", "h200")
    np.testing.assert_array_equal(ds.served_only().x, alone.x)
    assert dataset.load([data_dir, fp16], "fp16", "h200").n_problems == 18  # no pool: fp16 only
    out = tmp_path / "gemm_fp16_h200"
    cvm = train([data_dir, fp16], "fp16", "h200", out,
                TrainOptions(folds=3, objective="lambdarank", pool=("bf16",)))
    ev = cvm["evaluation"]
    assert (ev["problems"], ev["trained_on_problems"]) == (18, len(SHAPES) + 18)
    assert cvm["objectives"]["lambdarank"]["problems"] == 18
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["dtype"], manifest["pooled_dtypes"]) == ("fp16", ["bf16"])
    pred = Predictor(out)
    assert pred.dtype == "fp16" and pred.rank(GemmProblem(300, 5000, 2000, dtype="fp16"))
    with pytest.raises(ModelError, match="ranks fp16"):
        pred.rank(GemmProblem(300, 5000, 2000))
    with pytest.raises(dataset.DataError, match="pooled in"):
        evaluate([fp16], out)                # the pool's bf16 rows are part of the recipe
    rep = evaluate([data_dir, fp16], out)   # re-trains on the pool, scores fp16 only
    assert rep["problems"] == 18 and rep["pooled_dtypes"] == ["bf16"]
    assert rep["methods"]["cuBLAS alone"]["problems"] == 18


def test_training_by_weight_folds_is_recorded_and_followed_by_evaluate(data_dir, tmp_path):
    from tilepick.model.evaluate import evaluate, recipe_options

    out = tmp_path / "gemm_bf16_h200"
    cvm = train([data_dir], "bf16", "h200", out,
                TrainOptions(folds=3, objective="lambdarank", fold_grouping="weight"))
    assert cvm["evaluation"]["grouping"].endswith("weight (N, K)")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["parameters"]["fold_grouping"] == "weight"
    assert recipe_options(out).fold_grouping == "weight"
    assert evaluate([data_dir], out)["fold_grouping"] == "weight"
    with pytest.raises(ValueError, match="fold_grouping"):
        TrainOptions(fold_grouping="token")


def test_a_models_dataset_leaves_out_cublaslt_entry_rows(tmp_path):
    """Sweeps sample the cuBLASLt entries with the other families; this ranker does not rank
    them, so they must neither be candidates nor raise a problem's best (its labels)."""
    rows = synthetic_rows(SHAPES[:4])
    p = GemmProblem(*SHAPES[0])
    entry = KernelConfig.from_id("gemm.cublaslt.a66.t197.s35.k1.r0.w0.c2.i0.cl5")
    best = max(r["tflops"] for r in rows if r["problem_key"] == p.key())
    rows.append({**rows[0], **problem_fields(p), **config_fields(entry),
                 "time_ms": p.flops / (2 * best * 1e9), "tflops": 2 * best})
    io.write_part(tmp_path, rows)
    cleaned = dataset.clean(dataset.read_raw([tmp_path]))
    assert (cleaned["family"] == "gemm.cublaslt").sum() == 1
    ds = dataset.load([tmp_path])
    assert not any(c.startswith("gemm.cublaslt") for c in ds.config_ids)
    i = list(ds.problem_keys).index(p.key())
    assert ds.n_problems == 4 and float(ds.best[ds.starts][i]) == pytest.approx(
        cleaned.loc[(cleaned["problem_key"] == p.key())
                    & (cleaned["family"] != "gemm.cublaslt"), "tflops"].max())


def test_training_leaves_out_held_out_weights_unless_told(tmp_path):
    from tilepick.bench.shapes import held_out_weights
    from tilepick.model.evaluate import recipe_data, recipe_options

    n, k = 8192, 8192
    assert (n, k) in held_out_weights()   # a Qwen2.5-72B (and Llama-3-70B) projection
    assert not {(sn, sk) for _, sn, sk in SHAPES} & held_out_weights()
    data = tmp_path / "data"
    io.write_part(data, synthetic_rows(SHAPES + [(8, n, k), (300, n, k)]))
    frame, dropped = dataset.drop_held_out(dataset.load([data]).frame)
    assert dropped == 2 and not ((frame["n"] == n) & (frame["k"] == k)).any()

    out = tmp_path / "held"
    train([data], "bf16", "h200", out, TrainOptions(folds=3, objective="lambdarank"))
    params = json.loads((out / "manifest.json").read_text())["parameters"]
    assert params["hold_out"] is True and params["held_out_problems"] == 2
    assert json.loads((out / "manifest.json").read_text())["problems"] == len(SHAPES)
    assert recipe_options(out).hold_out is True
    assert recipe_data(out)[1].n_problems == len(SHAPES)

    kept = tmp_path / "kept"
    train([data], "bf16", "h200", kept,
          TrainOptions(folds=3, objective="lambdarank", hold_out=False, vendor_gate="off"))
    manifest = json.loads((kept / "manifest.json").read_text())
    assert manifest["problems"] == len(SHAPES) + 2
    assert manifest["parameters"]["held_out_problems"] == 0
    assert recipe_options(kept).hold_out is False
    assert recipe_options(kept).vendor_gate == "off"   # the manifest's options, all of them


def test_seed_ensemble_ranker_is_the_mean_of_its_members(data_dir, tmp_path):
    from tilepick.model.evaluate import recipe_options

    out = tmp_path / "gemm_bf16_h200"
    opts = TrainOptions(folds=3, objective="lambdarank", rounds=6, seed_ensemble=3,
                        vendor_gate="off")
    train([data_dir], "bf16", "h200", out, opts)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["parameters"]["seed_ensemble"] == 3 and manifest["trees"] == 18
    assert recipe_options(out).seed_ensemble == 3
    # the shipped booster scores as the mean of three runs with seeds 0, 1, 2
    ds = dataset.load([data_dir], "bf16", "h200")
    obj = OBJECTIVES["lambdarank"]
    members = [cv.fit(ds, obj, {"seed": s}, 6, opts.retimed_weight,
                      minority_layout_weight=opts.minority_layout_weight,
                      stratum_balance=opts.stratum_balance) for s in range(3)]
    shipped = lgb.Booster(model_str=read_model_text(out / "model.txt.gz"))
    x = ds.x[:50]
    want = np.mean([m.predict(x, raw_score=True) for m in members], axis=0)
    np.testing.assert_allclose(shipped.predict(x, raw_score=True), want, rtol=1e-9, atol=1e-12)
    # the cascade's first trees are the first member's
    np.testing.assert_allclose(shipped.predict(x, raw_score=True, num_iteration=2),
                               members[0].predict(x, raw_score=True, num_iteration=2) / 3,
                               rtol=1e-9, atol=1e-12)
    meta = json.loads((out / "predictor.json").read_text())
    assert meta["ensemble"]["fold_trees"] == 3 * opts.cascade.uncertainty_trees
    assert Predictor(out).rank(GemmProblem(256, 256, 256))
    with pytest.raises(ValueError, match="seed_ensemble"):
        TrainOptions(seed_ensemble=0)
    with pytest.raises(ValueError, match="warm_start"):
        TrainOptions(seed_ensemble=2, warm_start=True)


def test_warm_start_adds_trees(model_dir, data_dir, tmp_path):
    out = tmp_path / "gemm_bf16_h200"
    shutil.copytree(model_dir, out)
    before = json.loads((out / "manifest.json").read_text())["trees"]
    train([data_dir], "bf16", "h200", out, TrainOptions(folds=3, warm_start=True, warm_rounds=5))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["trees"] > before
    assert manifest["warm_start"]["added_rounds"] == 5
    assert Predictor(out).rank(GemmProblem(256, 256, 256))


def test_warm_start_needs_a_model(data_dir, tmp_path):
    with pytest.raises(ModelError, match="warm-start"):
        train([data_dir], "bf16", "h200", tmp_path / "none", TrainOptions(warm_start=True))


def test_evaluate_without_data_scores_the_manifests_files(model_dir):
    """The recipe's own files, not the folders they sit in (which grow): what ``tilepick
    evaluate --model DIR`` scores when no --data is given."""
    from tilepick.model.evaluate import evaluate, manifest_files

    manifest = json.loads((model_dir / "manifest.json").read_text())
    rep = evaluate(None, model_dir)
    assert rep["data"] == manifest_files(model_dir) == [d["path"] for d in manifest["data"]]
    assert rep["problems"] == manifest["problems"]


def test_evaluate_writes_the_report(model_dir, data_dir, tmp_path):
    from tilepick.model.evaluate import evaluate

    rep = evaluate([data_dir], model_dir, tmp_path / "report")
    assert {"model top-1", "model top-2 benchmarked", "model top-4 benchmarked",
            "model top-8 benchmarked", "best static config", "best static Triton config",
            "cuBLAS alone", "oracle", baselines.TUTORIAL, baselines.NVMH_TOP1,
            baselines.NVMH_TOP8} == set(rep["methods"])
    assert rep["methods"]["oracle"]["mean"] == 1.0
    top = [rep["methods"][f"model top-{k}" + (" benchmarked" if k > 1 else "")]["mean"]
           for k in (1, 2, 4, 8)]
    assert top == sorted(top)                      # benchmarking more never hurts
    assert set(rep["methods"]["model top-1"]["by_m"]) <= {s for s, _, _ in metrics.M_SLICES}
    # slices by layout and by the family of each problem's fastest config cover every problem
    model = rep["methods"]["model top-1"]
    assert model["top1_accuracy"] <= model["ties_rate"] <= model["top5_hit_or_tie_rate"] <= 1
    assert "Within the re-timing noise band" in (tmp_path / "report" / "report.md").read_text()
    for key in ("by_layout", "by_winner_family"):
        assert sum(v["problems"] for v in model[key].values()) == model["problems"], key
    assert set(model["by_layout"]) == {"rr"}
    assert set(model["by_winner_family"]) <= set(config.FAMILIES) | {"gemm.cublas"}
    for f in ("evaluation.json", "report.md", "report.html", "efficiency_cdf.png",
              "predicted_vs_measured.png", "worst_problems.png"):
        assert (tmp_path / "report" / f).stat().st_size > 0, f
    page = (tmp_path / "report" / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<table>" in page
    assert '<img alt="efficiency_cdf.png" src="efficiency_cdf.png"' in page
    md = (tmp_path / "report" / "report.md").read_text()
    assert baselines.TUTORIAL in md and baselines.NVMH_TOP8 in md and "coverage" in md
    assert "Model top-1 by family of the best config" in md
    tut = rep["methods"][baselines.TUTORIAL]
    assert tut["coverage"]["problems"] == len(SHAPES)
    assert tut["problems"] == tut["coverage"]["scored"] <= len(SHAPES)
    _check_nvmh(rep)


def _check_nvmh(rep):
    """nvMatmulHeuristics: scored where installed (it is in the dev environment), with its
    coverage; benchmarking its 8 never loses to its first."""
    top1, top8 = rep["methods"][baselines.NVMH_TOP1], rep["methods"][baselines.NVMH_TOP8]
    if nvmh.module() is None:
        assert top1 is None and top8 is None and rep["unavailable"]
        return
    cov = top1["coverage"]
    assert top1["problems"] == top8["problems"] == cov["scored"] <= cov["problems"]
    assert 0 <= cov["top1_measured"] <= cov["scored"] / cov["problems"]
    if cov["scored"]:
        assert 0 < top1["mean"] <= top8["mean"] <= 1.0


def test_validate_scores_the_shipped_model_on_held_out_problems(model_dir, tmp_path):
    """Held-out shapes (none of SHAPES): the pick is the model's best measured candidate; a
    config the model cannot rank never wins but counts for the oracle; ties use the spread."""
    import json

    from tilepick.model.validate import validate

    held_out = [(3, 5120, 5120), (700, 13824, 5120), (4000, 3584, 18944)]
    rows = synthetic_rows(held_out, seed=7)
    # the tutorial's configs measured on the second problem only, the fastest at half the best
    tut = config.tutorial_ids("bf16")
    rows = [r for r in rows if r["config_id"] not in tut]
    second = [r for r in rows if r["m"] == 700]
    best = max(r["tflops"] for r in second)
    valid = baselines.tutorial_valid_ids(GemmProblem(700, 13824, 5120), HW)
    for i, cid in enumerate(valid):
        t = best * 0.5 / (i + 1)
        rows.append({**second[0], **config_fields(KernelConfig.from_id(cid)), "tflops": t,
                     "time_ms": GemmProblem(700, 13824, 5120).flops / (t * 1e9)})
    rows.append({**rows[0], "config_id": "gemm.ptr.m16n16k16.g1.w1.s1", "tflops": 1e6,
                 "time_ms": 1e-9})  # unknown to the model, fastest: the oracle, never the pick
    for r in rows:
        r["retime_spread"] = 0.02
    d = tmp_path / "val"
    io.write_part(d, rows)
    rep = validate(model_dir, [d], tmp_path / "report")
    assert rep["problems"] == 3
    top1 = rep["methods"]["model top-1"]
    assert top1["problems"] == 3 and 0 < top1["min"] <= top1["mean"] <= 1.0
    assert top1["min"] < 1e-3  # the unknown config was the oracle of the first problem
    means = [rep["methods"][f"model top-{k} benchmarked"]["mean"] for k in (2, 4, 8)]
    assert [top1["mean"]] + means == sorted([top1["mean"]] + means)
    assert 0 <= top1["ties_rate"] <= 1
    assert max(top1["ties_rate"], top1["top5_hit_rate"]) <= top1["top5_hit_or_tie_rate"] <= 1
    cb = rep["methods"]["cuBLAS alone"]
    assert cb["problems"] == 3 and cb["coverage"]["scored"] == 3
    # compared with the model on the same problems (here all of them)
    assert cb["coverage"]["model_top1_mean_same_problems"] == pytest.approx(top1["mean"])
    assert json.loads((tmp_path / "report" / "validation.json").read_text())["problems"] == 3
    t = rep["methods"][baselines.TUTORIAL]
    assert t["problems"] == 1 and t["mean"] == pytest.approx(0.5)
    assert t["coverage"]["all_valid_configs_measured"] == pytest.approx(1 / 3)
    _check_nvmh(rep)
    md = (tmp_path / "report" / "validation.md").read_text()
    assert baselines.TUTORIAL in md and baselines.NVMH_TOP1 in md
    page = (tmp_path / "report" / "validation.html").read_text()
    assert "<table>" in page and baselines.TUTORIAL in page
    assert (tmp_path / "report" / "efficiency_cdf.png").stat().st_size > 0


def test_validate_scores_passes_with_rounds_cross_fitted(model_dir, tmp_path):
    """Rows that keep their rounds get the cross-fitted table beside the usual one; a
    dataset without them gets none."""
    from tilepick.model.validate import validate

    held_out = [(3, 5120, 5120), (700, 13824, 5120)]
    rows = synthetic_rows(held_out, seed=5)
    d0 = tmp_path / "plain"
    io.write_part(d0, rows)
    plain = validate(model_dir, [d0])
    assert plain["crossfit"] is None and plain["noise_ceiling"] is None
    rng = np.random.default_rng(0)
    for r in rows:
        r["round_ms"] = list(r["time_ms"] * (1 + 0.02 * rng.standard_normal(5)))
    d = tmp_path / "rounds"
    io.write_part(d, rows)
    rep = validate(model_dir, [d], tmp_path / "report")
    cf = rep["crossfit"]
    assert cf["problems"] == 2
    top1 = cf["methods"]["model top-1"]
    assert top1["crossfit"]["problems"] == 2 and 0 < top1["crossfit"]["min"]
    assert top1["usual_rule_same_problems"]["mean"] == pytest.approx(
        rep["methods"]["model top-1"]["mean"])
    assert cf["methods"]["cuBLAS alone"]["crossfit"]["problems"] == 2
    assert "cross-fitted" in (tmp_path / "report" / "validation.md").read_text()
    ceiling = rep["noise_ceiling"]
    assert ceiling["problems"] == 2 and 0 < ceiling["min"] <= ceiling["mean"] <= 1
    assert "noise ceiling" in (tmp_path / "report" / "validation.md").read_text()


def test_validate_reports_a_missing_nvmh_as_unavailable(model_dir, tmp_path, monkeypatch):
    from tilepick.model.validate import validate

    monkeypatch.setattr(nvmh, "module", lambda: None)
    d = tmp_path / "val"
    io.write_part(d, synthetic_rows([(700, 13824, 5120)], seed=3))
    rep = validate(model_dir, [d], tmp_path / "report")
    assert rep["methods"][baselines.NVMH_TOP1] is None
    assert "not importable" in rep["unavailable"][baselines.NVMH_TOP8]
    assert "unavailable" in (tmp_path / "report" / "validation.md").read_text()


# -- search --------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["random", "de"])
def test_search_is_deterministic_and_valid(model_dir, method):
    pred = Predictor(model_dir)
    p = GemmProblem(512, 2048, 1024)
    a = search(pred, p, method, budget=60, seed=3)
    b = search(pred, p, method, budget=60, seed=3)
    assert a.ranked == b.ranked
    assert a.evaluations <= 60 + 8            # DE may finish a generation's last trial
    valid = {c.id for c in solvers.applicable_configs(p, HW)}
    assert all(cid in valid for cid, _ in a.ranked)
    close = compare_to_exhaustive(pred, a, p)
    assert close["rank_in_exhaustive"] >= 0 and 0 < close["predicted_speed_ratio"] <= 1.0
    assert close["space_valid"] == len(valid)


# -- folds never leak a shape --------------------------------------------------------------------


def test_group_kfold_never_splits_a_shape(tmp_path):
    rows = synthetic_rows(SHAPES[:12], per_problem=5)
    # the same (M, N, K) again, under other problem keys (padded lda, lower alignment)
    for r in synthetic_rows(SHAPES[:12], seed=1, per_problem=5):
        p = GemmProblem(r["m"], r["n"], r["k"], lda=r["k"] + 8, base_align=8)
        rows.append({**r, **problem_fields(p)})
    ds = dataset.build(dataset.clean(pd.DataFrame(rows), "bf16", "h200"), HW)
    assert ds.n_problems == 24
    groups = cv.problem_groups(ds)
    tested = np.zeros(ds.n_problems, int)
    for fold in cv.make_folds(ds, 4, seed=0):
        assert not set(groups[fold.train]) & set(groups[fold.test])
        assert not (fold.train & fold.test).any()
        tested += fold.test
    assert (tested == 1).all()


def test_folds_by_weight_keep_every_token_count_of_a_weight_together():
    """Grouped by weight (N, K), all the Ms of a weight land on one side of every fold."""
    shapes = [(m, n, k) for n, k in ((256, 512), (512, 256), (384, 384), (640, 128),
                                     (128, 640), (768, 256)) for m in (1, 17, 128)]
    ds = dataset.build(dataset.clean(pd.DataFrame(synthetic_rows(shapes, per_problem=4)),
                                     "bf16", "h200"), HW)
    assert ds.n_problems == 18
    n = ds.frame["n"].to_numpy()[ds.starts]
    k = ds.frame["k"].to_numpy()[ds.starts]
    weights = np.array([f"{a}x{b}" for a, b in zip(n, k)])
    tested = np.zeros(ds.n_problems, int)
    for fold in cv.make_folds(ds, 3, seed=0, by="weight"):
        assert not set(weights[fold.train]) & set(weights[fold.test])
        tested += fold.test
    assert (tested == 1).all()
    with pytest.raises(ValueError, match="grouping"):
        cv.make_folds(ds, 3, by="token")


def test_trained_catalog_keeps_configs_that_competed(data_dir):
    from tilepick.model.train import catalog_configs

    ds = dataset.load([data_dir], "bf16", "h200")
    best_rel = pd.Series(ds.rel).groupby(ds.config_ids).max()
    kept = catalog_configs(ds, 0.95)
    assert set(kept) == set(best_rel.index[best_rel >= 0.95]) | {"gemm.cublas"}
    assert 0 < len(kept) < len(best_rel)              # the synthetic data has also-rans
    assert catalog_configs(ds, 0.0) == sorted(best_rel.index)
    with pytest.raises(ValueError, match="catalog_min_rel"):
        TrainOptions(catalog_min_rel=1.5)


def test_minority_layout_rows_are_weighted():
    rows = synthetic_rows(SHAPES[:6], per_problem=4)
    for r in synthetic_rows(SHAPES[:2], seed=1, per_problem=4):   # 2 rc problems against 6 rr
        rows.append({**r, **problem_fields(GemmProblem(r["m"], r["n"], r["k"], layout="rc"))})
    ds = dataset.build(dataset.clean(pd.DataFrame(rows), "bf16", "h200"), HW)
    layout = ds.frame["layout"].to_numpy()
    retimed = ds.frame["retimed"].to_numpy(bool)
    assert cv.sample_weights(ds, 1.0, 1.0) is None
    w = cv.sample_weights(ds, 2.0, 6.0)
    np.testing.assert_array_equal(w, np.where(retimed, 2.0, 1.0) * np.where(layout == "rc", 6, 1))
    only_rr = ds.subset_problems(ds.frame["layout"].to_numpy()[ds.starts] == "rr")
    assert cv.sample_weights(only_rr, 1.0, 6.0) is None   # one layout: nothing to balance
    with pytest.raises(ValueError, match="minority_layout_weight"):
        TrainOptions(minority_layout_weight=-1)


def test_strata_are_balanced_by_problem_count():
    # 6 problems of which only odd-K ones are unaligned (A's row stride K * 2 bytes % 16 != 0)
    shapes = [(64, 256, 256), (128, 512, 512), (256, 256, 1024), (512, 128, 256),
              (64, 256, 257), (128, 512, 1001)]
    rows = synthetic_rows(shapes, per_problem=4)
    ds = dataset.build(dataset.clean(pd.DataFrame(rows), "bf16", "h200"), HW)
    st = cv.strata(ds)
    assert sorted(st) == ["rr/aligned"] * 4 + ["rr/unaligned"] * 2
    assert [s.endswith("unaligned") for s in st] == [
        GemmProblem.from_key(k).k % 8 != 0 for k in ds.problem_keys]
    retimed = ds.frame["retimed"].to_numpy(bool)
    unaligned = np.isin(ds.problem_index, np.flatnonzero(np.char.endswith(st, "unaligned")))
    w = cv.sample_weights(ds, 2.0, 1.0, stratum_balance=1.0)
    np.testing.assert_allclose(w, np.where(retimed, 2.0, 1.0) * np.where(unaligned, 2.0, 1.0))
    w = cv.sample_weights(ds, 1.0, 1.0, stratum_balance=0.5)
    np.testing.assert_allclose(w, np.where(unaligned, 2.0 ** 0.5, 1.0))
    assert cv.sample_weights(ds, 1.0, 1.0, stratum_balance=0.0) is None
    only_aligned = ds.subset_problems(~np.char.endswith(st, "unaligned"))
    assert cv.sample_weights(only_aligned, 1.0, 1.0, stratum_balance=1.0) is None
    with pytest.raises(ValueError, match="stratum_balance"):
        TrainOptions(stratum_balance=-0.5)
    # a cap bounds the factor (the unaligned stratum's 2 -> 1.5); 0 is no cap
    w = cv.sample_weights(ds, 1.0, 1.0, stratum_balance=1.0, stratum_cap=1.5)
    np.testing.assert_allclose(w, np.where(unaligned, 1.5, 1.0))
    np.testing.assert_allclose(cv.sample_weights(ds, 1.0, 1.0, stratum_balance=1.0, stratum_cap=0),
                               np.where(unaligned, 2.0, 1.0))
    with pytest.raises(ValueError, match="stratum_cap"):
        TrainOptions(stratum_cap=-1.0)


# -- data cleaning -------------------------------------------------------------------------------


def test_clean_drops_invalid_and_merges_repeats():
    rows = synthetic_rows(SHAPES[:3], per_problem=4)
    df = pd.DataFrame(rows)
    dead = df[df["problem_key"] == df["problem_key"].iloc[0]].assign(valid=False, time_ms=np.nan)
    rest = df[df["problem_key"] != df["problem_key"].iloc[0]]
    dup = rest.iloc[[0, 0]].assign(sweep_id=["s2", "s3"], retimed=[True, False],
                                   time_ms=[1.0, 99.0])
    out = dataset.clean(pd.concat([dead, rest, rest.iloc[[0]], dup]), "bf16", "h200")
    assert df["problem_key"].iloc[0] not in set(out["problem_key"])      # all-invalid problem
    key = (rest.iloc[0]["problem_key"], rest.iloc[0]["config_id"])
    same = out[(out["problem_key"] == key[0]) & (out["config_id"] == key[1])]
    assert len(same) == 1
    # re-timed measurements win over screening ones
    assert same["time_ms"].iloc[0] == pytest.approx(np.median([rest.iloc[0]["time_ms"], 1.0])
                                                    if rest.iloc[0]["retimed"] else 1.0)
    assert list(out["problem_key"]) == sorted(out["problem_key"])


def test_clean_prefers_the_latest_retiming():
    """A re-timing pass (bench.retime) supersedes older re-timed rows of the same config; rows
    re-timed at the same date (repeats) are merged by their median; screening rows lose."""
    row = pd.DataFrame(synthetic_rows(SHAPES[:1], per_problem=6)).iloc[[0]]
    old = row.assign(sweep_id="s1", retimed=True, time_ms=2.0, date="2026-11-23T05:00:00Z")
    rep = row.assign(sweep_id="s2", retimed=True, time_ms=4.0, date="2026-11-23T05:00:00Z")
    new = row.assign(sweep_id="s3", retimed=True, time_ms=3.0, date="2026-11-24T09:00:00Z")
    screen = row.assign(sweep_id="s4", retimed=False, time_ms=1.0, date="2026-11-25T00:00:00Z")
    assert dataset.clean(pd.concat([old, rep]), "bf16", "h200")["time_ms"].tolist() == [3.0]
    out = dataset.clean(pd.concat([old, new, rep, screen]), "bf16", "h200")
    assert out["time_ms"].tolist() == [3.0]


def test_clean_within_pass_keeps_only_a_problems_latest_pass():
    rows = pd.DataFrame(synthetic_rows(SHAPES[:2], per_problem=6))
    first, second = rows["problem_key"].unique()[:2]
    a = rows[rows["problem_key"] == first].assign(sweep_id="s1", date="2026-11-20T00:00:00Z")
    b = rows[rows["problem_key"] == second].assign(sweep_id="s1", date="2026-11-20T00:00:00Z")
    old_pass = a.iloc[:3].assign(sweep_id="rt-old", retimed=True, date="2026-11-21T00:00:00Z")
    new_pass = a.iloc[1:3].assign(sweep_id="rt-new", retimed=True, time_ms=0.5,
                                  date="2026-11-22T00:00:00Z")
    frame = pd.concat([a, b, old_pass, new_pass])
    out = dataset.clean(frame, "bf16", "h200", within_pass=True)
    got = out[out["problem_key"] == first]
    assert set(got["sweep_id"]) == {"rt-new"} and len(got) == 2
    assert (got["time_ms"] == 0.5).all()
    assert len(out[out["problem_key"] == second]) == len(b)      # no pass: every row
    # without the flag every config of the problem stays, the latest re-timing preferred
    every = dataset.clean(frame, "bf16", "h200")
    assert len(every[every["problem_key"] == first]) == len(a)


def test_screen_label_times_put_retimed_rows_back_in_the_screening_regime():
    rows = pd.DataFrame(synthetic_rows(SHAPES[:1], per_problem=6)).iloc[:3].copy()
    rows["sweep_id"] = ["s1", "s1", "rt-1"]
    rows["retimed"] = [True, False, True]
    rows["time_ms"] = [2.6, 3.0, 5.0]     # the first: its re-timing rounds' median
    rows["time_p20_ms"] = [1.0, 2.5, 4.0]
    rows["time_p80_ms"] = [4.0, 3.5, 6.0]
    times = dict(zip(rows["config_id"], [2.6, 3.0, 5.0]))
    out = dataset.clean(rows, "bf16", "h200", label_times="screen").set_index("config_id")
    cid = rows["config_id"].tolist()
    assert out.loc[cid[0], "time_ms"] == pytest.approx(2.0)   # sqrt(1 x 4): screening
    assert out.loc[cid[1], "time_ms"] == 3.0                  # screened: as measured
    assert out.loc[cid[2], "time_ms"] == 5.0                  # a pass's row: its rounds
    plain = dataset.clean(rows, "bf16", "h200").set_index("config_id")["time_ms"].to_dict()
    assert plain == times
    with pytest.raises(ValueError, match="label_times"):
        dataset.clean(rows, label_times="best")
    with pytest.raises(ValueError, match="label_times"):
        TrainOptions(label_times="best")


def test_aligned_label_times_scale_rows_outside_a_pass_into_its_regime():
    """A pass that reads two screened configs 10% slower and the sweep's re-timed one 5% slower
    scales the rows it left out by the factor of their own kind; a kind sharing fewer than
    ALIGN_MIN_SHARED configs with the pass takes the problem's factor; a problem without a
    pass keeps its times."""
    rows = pd.DataFrame(synthetic_rows(SHAPES[:2], per_problem=8))
    first, second = rows["problem_key"].unique()[:2]
    a = rows[rows["problem_key"] == first].iloc[:6].copy()
    cid = a["config_id"].tolist()
    a["sweep_id"], a["date"] = "s1", "2026-11-20T00:00:00Z"
    a["retimed"] = [True, False, False, False, False, False]
    a["time_ms"] = [1.0, 1.1, 1.2, 2.0, 3.0, 4.0]
    b = rows[rows["problem_key"] == second].assign(sweep_id="s1", date="2026-11-20T00:00:00Z")
    t_pass = {cid[0]: 1.05, cid[1]: 1.21, cid[2]: 1.32}      # 1.05x, 1.1x, 1.1x
    rt = a[a["config_id"].isin(t_pass)].assign(
        sweep_id="rt-1", retimed=True, date="2026-11-21T00:00:00Z",
        time_ms=lambda d: d["config_id"].map(t_pass))
    frame = pd.concat([a, b, rt])
    out = dataset.clean(frame, "bf16", "h200", label_times="aligned")
    got = out[out["problem_key"] == first].set_index("config_id")["time_ms"]
    for c, t in t_pass.items():
        assert got[c] == pytest.approx(t)                       # the pass's own rows
    for c, t in zip(cid[3:], (2.0, 3.0, 4.0)):
        assert got[c] == pytest.approx(1.1 * t)                 # screened: their factor
    plain = dataset.clean(frame, "bf16", "h200").set_index(["problem_key", "config_id"])
    assert plain.loc[(first, cid[3]), "time_ms"] == 2.0          # "retimed": unscaled
    untouched = out[out["problem_key"] == second].set_index("config_id")["time_ms"]
    assert untouched.to_dict() == b.set_index("config_id")["time_ms"].to_dict()
    # one screened config shared: the problem's factor, the median of 1.05 and 1.1
    one = frame[~((frame["sweep_id"] == "rt-1") & (frame["config_id"] == cid[2]))]
    got = dataset.clean(one, "bf16", "h200", label_times="aligned").set_index(
        ["problem_key", "config_id"])["time_ms"]
    assert got[(first, cid[3])] == pytest.approx(2.0 * np.median([1.05, 1.1]))
    assert got[(first, cid[2])] == pytest.approx(1.2 * np.median([1.05, 1.1]))


# -- metrics: edge cases -------------------------------------------------------------------------


def test_tie_hits_count_candidates_inside_the_noise_band():
    """Problem 0: best 100 (spread 2%), 99 (inside its band) and 90; the model ranks 90
    first, then 99. Problem 1: best 50, then 40, no spread; the model ranks 40 first."""
    from types import SimpleNamespace

    from tilepick.model.metrics import tie_hits as _tie_hits

    ds = SimpleNamespace(frame=pd.DataFrame({"retime_spread": [0.02, 0.0, 0.0, 0.0, 0.0]}),
                         tflops=np.array([100.0, 99.0, 90.0, 50.0, 40.0]),
                         starts=np.array([0, 3]), sizes=np.array([3, 2]),
                         best_row=np.array([0, 3]), n_problems=2)
    scores = np.array([0.0, 1.0, 2.0, 0.0, 1.0])
    assert _tie_hits(ds, scores, 1).tolist() == [False, False]
    assert _tie_hits(ds, scores, 2).tolist() == [True, True]
    assert _tie_hits(ds, np.array([np.nan, 1.0, 2.0, np.nan, 1.0]), 5).tolist() == [True, True]
    ds.frame["retime_spread"] = 0.0   # no band: 99 is not the best any more
    assert _tie_hits(ds, scores, 2).tolist() == [False, True]


def test_metrics_ties_single_candidate_and_nan_scores():
    problem = np.array([0, 0, 0, 1, 2, 2])
    tflops = np.array([10.0, 10.0, 5.0, 3.0, 1.0, 2.0])
    scores = np.array([0.1, 0.9, 0.5, np.nan, np.nan, 0.0])
    t = metrics.per_problem(problem, tflops, scores)
    assert list(t["efficiency"]) == [1.0, 1.0, 1.0]
    assert list(t["top1"]) == [True, True, True]          # a tie with the best is a hit
    assert list(t["candidates"]) == [3, 1, 2]              # single candidate: efficiency 1
    assert t["pick_row"].iloc[2] == 5                      # NaN scores rank last
    s = metrics.summarize(t["efficiency"], t["top1"], t["best_rank"])
    assert s["mean"] == s["min"] == s["p10"] == 1.0 and s["top5_hit_rate"] == 1.0


def test_metrics_topk_and_bad_order():
    problem = np.array([0, 0, 0, 0])
    tflops = np.array([1.0, 2.0, 4.0, 8.0])
    t = metrics.per_problem(problem, tflops, np.array([4.0, 3.0, 2.0, 1.0]))
    assert t["efficiency"].iloc[0] == 1 / 8 and t["best_rank"].iloc[0] == 3
    assert t["top2_efficiency"].iloc[0] == 2 / 8 and t["top4_efficiency"].iloc[0] == 1.0
    with pytest.raises(ValueError, match="grouped"):
        metrics.per_problem(np.array([1, 0]), np.array([1.0, 1.0]), np.array([0.0, 0.0]))
    assert metrics.summarize(np.array([]))["mean"] is None
    assert metrics.per_problem(np.array([], int), np.array([]), np.array([])).empty


def test_cascade_keys():
    problem = np.array([0, 0, 0, 0, 1, 1])
    stage1 = np.array([4.0, 3.0, 2.0, 1.0, 0.0, 1.0])
    full = np.array([0.0, 1.0, 5.0, 9.0, 2.0, 1.0])
    keys = cascade_keys(problem, stage1, full, stage2_top=2)
    assert list(within_problem_rank(problem, keys)) == [1, 0, 2, 3, 0, 1]
    big = cascade_keys(problem, stage1, full, stage2_top=10)
    assert list(within_problem_rank(problem, big)) == list(within_problem_rank(problem, full))


# -- the packed ensemble -------------------------------------------------------------------------


def test_averaged_boosters_score_their_mean():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 6))
    x[:, 5] = rng.integers(0, 5, 300)
    y = x[:, 0] * 2 + np.sin(x[:, 1])
    parts = [lgb.train({"verbose": -1, "num_leaves": 7, "seed": s, "bagging_fraction": 0.7,
                        "bagging_freq": 1}, lgb.Dataset(x, y, categorical_feature=[5]), 3 + s)
             for s in range(3)]
    mean = average(parts)
    assert mean.num_trees() == 3 + 4 + 5
    want = np.mean([b.predict(x, raw_score=True) for b in parts], axis=0)
    np.testing.assert_allclose(mean.predict(x, raw_score=True), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(FastBooster(mean).predict(np.ascontiguousarray(x[:9])), want[:9],
                               rtol=1e-12, atol=1e-12)
    assert average(parts[:1]) is parts[0]
    with pytest.raises(ValueError, match="single-output"):
        average([pack(parts[:2]), parts[2]])
    # interleaved (the uncertainty pack's order): the first t iterations of every member
    equal = [lgb.train({"verbose": -1, "num_leaves": 7, "seed": s, "bagging_fraction": 0.7,
                        "bagging_freq": 1}, lgb.Dataset(x, y), 4) for s in range(3)]
    mixed = interleave(average(equal), 3)
    np.testing.assert_allclose(mixed.predict(x, raw_score=True),
                               average(equal).predict(x, raw_score=True), rtol=1e-12, atol=1e-12)
    first2 = np.mean([b.predict(x, raw_score=True, num_iteration=2) for b in equal], axis=0)
    np.testing.assert_allclose(mixed.predict(x, raw_score=True, num_iteration=6), first2,
                               rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="equal members"):
        interleave(average(parts), 5)


def test_prediction_text_scores_as_the_full_model(tmp_path):
    rng = np.random.default_rng(2)
    x = rng.normal(size=(400, 6))
    x[:, 5] = rng.integers(0, 5, 400)
    full = lgb.train({"verbose": -1, "num_leaves": 15}, lgb.Dataset(
        x, x[:, 0] - x[:, 1] ** 2 + (x[:, 5] == 3), categorical_feature=[5]), 8)
    text = full.model_to_string()
    lean = prediction_text(text)
    assert "split_gain=" in text and "split_gain=" not in lean and "tree_sizes=" not in lean
    assert len(lean) < 0.8 * len(text)
    np.testing.assert_array_equal(lgb.Booster(model_str=lean).predict(x, raw_score=True),
                                  full.predict(x, raw_score=True))
    write_model_text(full, tmp_path / "m.txt.gz")   # what artifacts write
    assert read_model_text(tmp_path / "m.txt.gz") == lean


def test_packed_boosters_equal_their_parts():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 6))
    x[:, 5] = rng.integers(0, 5, 300)
    parts = [lgb.train({"verbose": -1, "num_leaves": 7, "seed": s, "bagging_fraction": 0.7,
                        "bagging_freq": 1}, lgb.Dataset(x, x[:, 0] * s + x[:, 1] ** 2,
                                                        categorical_feature=[5]), 4 + s)
             for s in range(3)]
    packed = FastBooster(pack(parts, [None, 2, None]))
    got = packed.predict(np.ascontiguousarray(x[:17]))
    want = np.stack([parts[0].predict(x[:17], raw_score=True),
                     parts[1].predict(x[:17], raw_score=True, num_iteration=2),
                     parts[2].predict(x[:17], raw_score=True)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    single = FastBooster(parts[2])
    np.testing.assert_allclose(single.predict(np.asfortranarray(x[:9]), 1, 2),
                               parts[2].predict(x[:9], raw_score=True, start_iteration=1,
                                                num_iteration=2))


def test_a_missing_model_says_what_was_looked_for(tmp_path, monkeypatch):
    """The CLI answers ModelNotFound with the --arch values that would load, from what the
    error carries: no second search of its own."""
    from tilepick.model.artifacts import ModelNotFound, find_model_dir

    monkeypatch.setenv("TILEPICK_MODELS", str(tmp_path))
    with pytest.raises(ModelNotFound, match="gemm_bf16_nosucharch") as err:
        find_model_dir("gemm", "bf16", "nosucharch")
    assert isinstance(err.value, ModelError)
    assert (err.value.op, err.value.dtype, err.value.arch) == ("gemm", "bf16", "nosucharch")
