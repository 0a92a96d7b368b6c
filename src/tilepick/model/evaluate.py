"""Out-of-fold evaluation of a model's recipe against baselines, side by side.

The model's recipe (objective, parameters, cascade, from its manifest) is re-trained on the
folds of the given data (GroupKFold by shape), so every number is measured on shapes the
scoring model never saw. Methods, all judged by the winner's-curse rule of
:mod:`tilepick.model.metrics` (only measured candidates are ranked):

* ``model top-1``: the cascade's first pick (after the vendor gate's call, for a model that
  has one: the gate is fitted out of fold too, on the other folds' out-of-fold picks);
* ``model top-k benchmarked`` (k = 2, 4, 8): the fastest measured of the model's first k, what
  the dispatcher's hybrid mode gets by benchmarking k candidates;
* ``best static config``: one global order of configs by mean efficiency over the training
  folds' problems (configs measured on >= 10% of them); on a test problem, its first
  measured config. ``best static Triton config`` is the same without cuBLAS;
* ``cuBLAS alone``; ``oracle`` (100% by definition);
* the untrained baselines of :mod:`tilepick.model.baselines` (the Triton tutorial's configs
  autotuned, nvMatmulHeuristics top-1 and top-8 benchmarked), with their coverage.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from tilepick.config import VENDOR_FAMILIES
from tilepick.model import baselines, cv, metrics
from tilepick.model.artifacts import check_spec, read_json
from tilepick.model.dataset import DataError, Dataset, load
from tilepick.model.objectives import NUM_ROUNDS, OBJECTIVES
from tilepick.model.ranking import CascadeSettings, Calibration, score_gaps
from tilepick.model.train import (ObjectiveResult, TrainOptions, evaluate_objective,
                                  recipe_gate_out_of_fold, scale_out_of_fold)

STATIC_MIN_COVERAGE = 0.10
TOP_K = (2, 4, 8)
VENDOR = VENDOR_FAMILIES[0]


def static_scores(ds: Dataset, folds: list[cv.Fold], triton_only: bool = False):
    """Scores of the static order learned on each fold's training problems (+ its leaders)."""
    scores = np.full(len(ds), -np.inf)
    leaders = []
    for fold in folds:
        tr = fold.train[ds.problem_index]
        stats = pd.DataFrame({"config": ds.config_ids[tr], "rel": ds.rel[tr]}).groupby(
            "config")["rel"].agg(["mean", "count"])
        stats = stats[stats["count"] >= STATIC_MIN_COVERAGE * fold.train.sum()]
        if triton_only:
            stats = stats.drop(index=VENDOR, errors="ignore")
        if stats.empty:
            continue
        leaders.append({"config_id": str(stats["mean"].idxmax()),
                        "train_mean_efficiency": float(stats["mean"].max())})
        te = fold.test[ds.problem_index]
        scores[te] = pd.Series(ds.config_ids[te]).map(stats["mean"]).fillna(-np.inf).to_numpy()
    return scores, leaders


def _method(ds: Dataset, table: pd.DataFrame, eff_col: str = "efficiency") -> dict:
    t = table.assign(efficiency=table[eff_col])
    m_of_problem = ds.frame["m"].to_numpy()[ds.starts][t["problem"].to_numpy()]
    out = metrics.method_summary(t, m_of_problem, ds.problem_groups)
    if eff_col != "efficiency":  # top-k benchmarked: accuracy counts of the first pick
        for key in ("top1_accuracy", "top5_hit_rate"):
            out[key] = None
    return out


def recipe_options(model_dir) -> TrainOptions:
    """The training options a model was made with (its manifest and predictor.json): what
    re-training it out of fold must use, here and in the benchmarks that vary one part."""
    model_dir = Path(model_dir)
    meta = read_json(model_dir / "predictor.json")
    manifest = read_json(model_dir / "manifest.json")
    params = manifest.get("parameters", {})
    obj = OBJECTIVES[meta["objective"]]
    base = obj.params()
    overrides = {k: v for k, v in params.get("lightgbm", {}).items() if base.get(k) != v}
    return TrainOptions(objective=obj.name, folds=int(params.get("folds", 5)),
                        seed=int(params.get("seed", 0)),
                        rounds=int(params.get("rounds", NUM_ROUNDS)), params=overrides,
                        retimed_weight=float(params.get("retimed_weight", 1.0)),
                        # manifests from before the option: every row counted once
                        minority_layout_weight=float(params.get("minority_layout_weight", 1.0)),
                        stratum_balance=float(params.get("stratum_balance", 0.0)),
                        stratum_cap=float(params.get("stratum_cap", 0.0)),
                        cascade=CascadeSettings(**meta["cascade"]),
                        fold_grouping=params.get("fold_grouping", "shape"),
                        label_times=params.get("label_times", "retimed"),
                        gate_splits=int(params.get("gate_splits", 1)),
                        gate_seeds=int(params.get("gate_seeds", 1)),
                        gate_label_top=int(params.get("gate_label_top", 1)),
                        gate_pool=bool(params.get("gate_pool", False)),
                        # manifests from before the option: the gate's L2 was GATE_PARAMS'
                        gate_lambda_l2=float(params.get("gate_lambda_l2",
                                                        TrainOptions.gate_lambda_l2)),
                        seed_ensemble=int(params.get("seed_ensemble", 1)),
                        vendor_gate=params.get("vendor_gate", TrainOptions.vendor_gate),
                        catalog=manifest.get("catalog", TrainOptions.catalog),
                        catalog_min_rel=float(manifest.get("catalog_min_rel",
                                                           TrainOptions.catalog_min_rel)),
                        # manifests from before the option trained on every problem given
                        hold_out=bool(params.get("hold_out", False)),
                        pool=tuple(manifest.get("pooled_dtypes", ())))


def manifest_files(model_dir) -> list[str]:
    """The data files a model was trained on, as its manifest lists them. Why not its folders:
    folders grow (session 37's re-timing files sit beside the ones the shipped recipe read),
    and an evaluation over a folder scores another recipe's labels."""
    return [d["path"] for d in read_json(Path(model_dir) / "manifest.json")["data"]]


def recipe_data(model_dir) -> tuple[TrainOptions, Dataset, bool]:
    """A model's training options (:func:`recipe_options`), the data its manifest lists loaded
    as it was trained (pooled dtypes too), and whether it ships a vendor gate: where every
    out-of-fold experiment on a shipped recipe starts (``benchmarks/*_oof.py``)."""
    model_dir = Path(model_dir)
    manifest = read_json(model_dir / "manifest.json")
    gated = read_json(model_dir / "predictor.json").get("ensemble", {}).get("gate_column")
    opts = recipe_options(model_dir)
    ds = load(manifest_files(model_dir), manifest["dtype"], manifest["arch"],
              opts.pool, label_times=opts.label_times, hold_out=opts.hold_out)
    return opts, ds, gated is not None


def recipe_out_of_fold(ds: Dataset, opts: TrainOptions, folds: list) -> ObjectiveResult:
    """The recipe's ranker re-trained on ``folds`` (with the out-of-fold scale model the
    ranking's calibration needs), scored out of fold: the benchmarks' experiments."""
    return evaluate_objective(ds, OBJECTIVES[opts.objective], folds, opts,
                              scale_out_of_fold(ds, folds), keep_models=False)


def recipe_gate_inputs(model_dir) -> tuple[ObjectiveResult, list]:
    """The recipe's ranker out of fold (:func:`recipe_out_of_fold` on its own folds) and those
    folds as (train, test) masks over the scored problems: what every vendor-gate experiment
    on a shipped recipe fits gates on (``benchmarks/vendor_gate.py``, ``gate_pocket.py``)."""
    opts, ds, _ = recipe_data(model_dir)
    folds = cv.make_folds(ds, opts.folds, opts.seed)
    res = recipe_out_of_fold(ds, opts, folds)
    return res, [(f.train[ds.served], f.test[ds.served]) for f in folds]


def evaluate(data_paths, model_dir, out_dir=None, log=lambda msg: None) -> dict:
    """Evaluate; write evaluation.json and the report under ``out_dir``; return the dict.
    ``data_paths`` empty or None: the files the model's manifest lists (its recipe)."""
    model_dir = Path(model_dir)
    check_spec(model_dir)
    if not data_paths:
        data_paths = manifest_files(model_dir)
    meta = read_json(model_dir / "predictor.json")
    opts = recipe_options(model_dir)
    obj = OBJECTIVES[opts.objective]
    want_pool = list(opts.pool)
    pooled = load(data_paths, meta["dtype"], meta["arch"], want_pool,
                  label_times=opts.label_times, hold_out=opts.hold_out)
    missing = sorted(set(want_pool) - set(pooled.pooled_dtypes))
    if missing:   # the recipe includes those rows: without them this is another recipe
        raise DataError(f"{model_dir.name} was trained with {missing} rows pooled in; give "
                        f"--data that holds them too (got {[str(p) for p in data_paths]})")
    log(f"data: {len(pooled)} rows, {pooled.n_problems} problems "
        f"({int(pooled.served.sum())} {pooled.dtype}); re-training {opts.folds} fold models "
        f"({obj.name})")
    folds = cv.make_folds(pooled, opts.folds, opts.seed, opts.fold_grouping)
    scale_oof = scale_out_of_fold(pooled, folds)
    res = evaluate_objective(pooled, obj, folds, opts, scale_oof, keep_models=False)
    keys, model_table = res.keys, res.table
    gated = meta.get("ensemble", {}).get("gate_column") is not None
    if gated:   # the recipe's vendor gate, fitted out of fold on the ranker's picks
        g = recipe_gate_out_of_fold(res, folds, pooled, opts)
        keys, model_table = g.keys, g.table
        log(f"vendor gate: mean {res.summary['mean']:.4f} -> {g.summary['mean']:.4f}")
    # Everything below scores the served dtype's problems on the same folds.
    ds = res.scored
    folds = [cv.Fold(f.train[pooled.served], f.test[pooled.served]) for f in folds]
    methods = {"model top-1": _method(ds, model_table)}
    methods["model top-1"].update(metrics.tie_rates(ds, keys))
    for k in TOP_K:
        methods[f"model top-{k} benchmarked"] = _method(ds, model_table, f"top{k}_efficiency")
    static, leaders = static_scores(ds, folds)
    methods["best static config"] = _method(
        ds, metrics.per_problem(ds.problem_index, ds.tflops, static))
    static_t, leaders_t = static_scores(ds, folds, triton_only=True)
    methods["best static Triton config"] = _method(
        ds, metrics.per_problem(ds.problem_index, ds.tflops, static_t))
    extra, extra_effs = baselines.methods(
        ds, lambda t, col: _method(ds, t, col),
        model_table.set_index("problem")["efficiency"])
    methods.update(extra)
    oracle = model_table.assign(efficiency=1.0, top1=True, best_rank=0)
    methods["oracle"] = _method(ds, oracle)
    pred = np.exp(scale_oof[ds.problem_index]) * Calibration.from_dict(
        res.calibration["full"])(score_gaps(ds.problem_index, res.full))
    report = {
        "model": model_dir.name, "objective": obj.name,
        "data": [f["path"] for f in ds.files], "problems": ds.n_problems, "rows": len(ds),
        "pooled_dtypes": pooled.pooled_dtypes, "trained_on_problems": pooled.n_problems,
        "folds": opts.folds, "fold_grouping": opts.fold_grouping,
        "cascade": opts.cascade.to_dict(), "vendor_gate": gated,
        "rule": ("efficiency = measured TFLOP/s of the pick / best measured TFLOP/s of the "
                 "problem; only measured candidates are ranked (a pick the data did not "
                 "measure is replaced by the best-ranked measured candidate)"),
        "methods": methods, "unavailable": baselines.unavailable(ds),
        "static_leaders": {"any": leaders, "triton": leaders_t},
        "cublas_measured_problems": methods[baselines.CUBLAS]["coverage"]["scored"],
        "r2_log_time": res.summary.get("r2_log_time"),
        "r2_log_tflops": res.summary.get("r2_log_tflops"),
        "todo": [],
    }
    if out_dir is not None:
        from tilepick.model.report import write_report

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "evaluation.json").write_text(json.dumps(report, indent=1) + "\n")
        worst = model_table.sort_values("efficiency").head(20).copy()
        worst["problem_key"] = ds.problem_keys[worst["problem"].to_numpy()]
        worst["pick"] = ds.config_ids[worst["pick_row"].to_numpy()]
        worst["best"] = ds.config_ids[ds.best_row[worst["problem"].to_numpy()]]
        tables = {"model top-1": model_table["efficiency"].to_numpy()}
        for k in TOP_K:
            tables[f"model top-{k} benchmarked"] = model_table[f"top{k}_efficiency"].to_numpy()
        tables["best static config"] = metrics.per_problem(
            ds.problem_index, ds.tflops, static)["efficiency"].to_numpy()
        tables["best static Triton config"] = metrics.per_problem(
            ds.problem_index, ds.tflops, static_t)["efficiency"].to_numpy()
        tables.update(extra_effs)
        write_report(out, report, tables, measured=ds.tflops, predicted=pred, worst=worst)
        log(f"report written to {out}")
    return report
