"""Training: compare objectives on the same shape-grouped folds, keep the best, write artifacts.

What is compared (cv_metrics.json): for each objective, out-of-fold selection metrics of the
ranking that ships (the cascade, see :mod:`tilepick.model.ranking`) and of the full model,
and the R2 of log time of its predicted speed. The objective with the highest mean efficiency
(then P10) becomes the default unless one is named.

``catalog`` (written to predictor.json) says what the Predictor ranks: ``trained``, the configs
the training data measured, or ``space``, every config of config.SPACES (the features describe
configs by their parameters, so the model scores configs it never saw measured). Out-of-fold
metrics rank measured candidates only, so they are the same for both.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import lightgbm as lgb
import numpy as np

from tilepick.config import VENDOR_FAMILIES
from tilepick.features import FEATURE_NAMES
from tilepick.model import artifacts, cv, gate, metrics
from tilepick.model.booster import average
from tilepick.model.dataset import LABEL_TIMES, Dataset, load
from tilepick.model.objectives import NUM_ROUNDS, OBJECTIVES, Objective, objective
from tilepick.model.ranking import (CascadeSettings, Calibration, cascade_keys, score_gaps)
from tilepick.model.scale import fit_scale, problem_rows

COMPARED = ("log1p", "normalized", "lambdarank")
VENDOR_GATE_CHOICES = ("auto", "on", "off")


@dataclass
class TrainOptions:
    objective: str = "auto"
    folds: int = 5
    seed: int = 0
    rounds: int = NUM_ROUNDS
    params: dict = field(default_factory=dict)
    retimed_weight: float = 2.0
    # rows of the less common layouts count this many times (cv.sample_weights). 6 won out of
    # fold when bf16 had 330 rc problems against 3,209 rr; with 1,785 rc (session 7) 1, 4 and 6
    # tie within 0.01 point over two fold seeds, so every row counts once (BENCHMARKS.md)
    minority_layout_weight: float = 1.0
    # strata (layout x TMA-aligned strides, cv.strata) of n problems count (n_max / n) ** this:
    # the rc train_extra data is nearly all aligned LLM shapes, and without balance it made
    # the unaligned problems' picks worse; 1 won out of fold over 0 and 0.5 (BENCHMARKS.md)
    stratum_balance: float = 1.0
    stratum_cap: float = 0.0   # > 0: no stratum's balance factor above this (cv.sample_weights)
    # the trained catalog keeps the configs that came within this fraction of the best on at
    # least one training problem (cuBLAS always): the rest never competed, and each costs
    # prediction time on every new problem (catalog_configs)
    catalog_min_rel: float = 0.8
    catalog: str = artifacts.DEFAULT_CATALOG
    cascade: CascadeSettings | None = None   # None: CascadeSettings.for_catalog(catalog)
    warm_start: bool = False
    warm_rounds: int = 10
    keep_fold_models: int = 5   # fold models saved for the uncertainty ensemble
    # the cuBLAS-or-Triton call of :mod:`.gate`: "auto" ships it when it raises the
    # out-of-fold mean efficiency, "on" always, "off" never
    vendor_gate: str = "auto"
    pool: tuple = ()            # further dtypes learned from (see dataset.load); scored: none
    # what a fold holds out (cv.problem_groups): a shape (M, N, K), or a weight (N, K) with
    # all its token counts, as the validation sets do (BENCHMARKS, session 12: two changes
    # that won by shape lost on held-out weights)
    fold_grouping: str = "shape"
    # the rows' times learned from (dataset.LABEL_TIMES): "screen" keeps each problem in one
    # timing regime (BENCHMARKS, "Timing regimes")
    label_times: str = "retimed"
    # the vendor gate learns from the ranker's out-of-fold picks under this many fold splits
    # (fold seeds seed, seed + 1, ...), each problem's label their mean outcome: one split's
    # picks are one draw, and the gate's calls moved the validation minimum by up to 15 points
    # between fold seeds. Three splits tied one out of fold and did not steady validation
    # (BENCHMARKS, "Session 18"), so one stays the default
    gate_splits: int = 1
    # the vendor gate also learns from the pooled dtypes' problems (their out-of-fold picks
    # under the same fold models, the dtype a feature of its rows): a served dtype with few
    # problems (fp16: ~800 against bf16's ~7,500) has too few to see cuBLAS's pockets, which
    # are the same kernels in both (BENCHMARKS, "Session 23"). It is scored out of fold on the
    # served problems only, as without it
    gate_pool: bool = False
    # the vendor gate's L2 (gate.GATE_PARAMS' 0.1 unless set). Why an option: its labels'
    # weights are |log ratio|, ~0.01-0.05 where cuBLAS wins a decode pocket by 1-5%, and at
    # 0.1 the gate fitted on every problem still called Triton on some of its own training
    # problems there (rr 1 x 8192 x 9216: -0.17 in session 55's w2p retrain, cuBLAS 5% ahead);
    # 0.01 fits them with the same out-of-fold figures (BENCHMARKS, "Sessions 55-56")
    gate_lambda_l2: float = gate.GATE_PARAMS["lambda_l2"]
    # the vendor gate is the mean of this many fits, seeds seed, seed + 1, ... (gate.fit):
    # one fit's feature sampling moved its out-of-fold mean at M = 1 over 95.83-96.18 across
    # seeds, and its calls on the suite's decode rows by up to 0.84 between retrains that
    # differ in float noise (BENCHMARKS, "Session 63")
    gate_seeds: int = 1
    # the vendor gate's label on a problem compares cuBLAS with the fastest measured of the
    # out-of-fold ranker's first ``gate_label_top`` Triton picks (1: the first alone, what the
    # dispatcher runs). Why an option: out of fold the ranker picks among the measured rows
    # only, and where a family was sampled sparsely (``gemm.gemv_n_splitk``: 32 of its 162
    # configs a problem) its first pick there can be a weak config the full-space ranking
    # would not choose, so the label says cuBLAS where the served pick would win (BENCHMARKS,
    # "Session 64": on the suite's rr decode rows the gate's calls flip with the labels)
    gate_label_top: int = 1
    # the ranker is the mean of this many LightGBM runs, seeds seed, seed + 1, ... of the
    # parameters (booster.average): LightGBM's own seed (bagging, feature fraction) moved the
    # rr validation mean by 0.35 point on the same data (BENCHMARKS, "Session 18")
    seed_ensemble: int = 1
    # leave out the training problems on the validation's held-out weight shapes
    # (dataset.drop_held_out); off for a user's own data, where those weights are wanted
    hold_out: bool = True

    def __post_init__(self):
        if self.catalog not in artifacts.CATALOGS:
            raise ValueError(f"unknown catalog {self.catalog!r}: {', '.join(artifacts.CATALOGS)}")
        for name in ("retimed_weight", "minority_layout_weight"):
            if not getattr(self, name) > 0:   # NaN too
                raise ValueError(f"{name} must be a positive number, got {getattr(self, name)}")
        for name in ("stratum_balance", "stratum_cap"):
            if not getattr(self, name) >= 0:   # NaN too
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not 0 <= self.catalog_min_rel <= 1:
            raise ValueError(f"catalog_min_rel must be within [0, 1], got {self.catalog_min_rel}")
        if self.label_times not in LABEL_TIMES:
            raise ValueError(f"label_times must be one of {LABEL_TIMES}, got "
                             f"{self.label_times!r}")
        if self.fold_grouping not in cv.GROUPINGS:
            raise ValueError(f"fold_grouping must be one of {tuple(cv.GROUPINGS)}, "
                             f"got {self.fold_grouping!r}")
        if self.vendor_gate not in VENDOR_GATE_CHOICES:
            raise ValueError(f"vendor_gate must be one of {VENDOR_GATE_CHOICES}, "
                             f"got {self.vendor_gate!r}")
        if not self.gate_lambda_l2 >= 0:   # NaN too
            raise ValueError(f"gate_lambda_l2 must be >= 0, got {self.gate_lambda_l2}")
        if self.gate_splits < 1:
            raise ValueError(f"gate_splits must be >= 1, got {self.gate_splits}")
        if self.gate_seeds < 1:
            raise ValueError(f"gate_seeds must be >= 1, got {self.gate_seeds}")
        if self.gate_label_top < 1:
            raise ValueError(f"gate_label_top must be >= 1, got {self.gate_label_top}")
        if self.gate_pool and self.gate_splits > 1:
            raise ValueError("gate_pool learns from one fold split's picks; it cannot average "
                             f"gate_splits={self.gate_splits}")
        if self.rounds < 1:
            raise ValueError(f"rounds must be >= 1, got {self.rounds}")
        if self.seed_ensemble < 1:
            raise ValueError(f"seed_ensemble must be >= 1, got {self.seed_ensemble}")
        if self.warm_start and self.seed_ensemble > 1:
            raise ValueError("warm_start continues one booster; it cannot grow a seed "
                             f"ensemble (seed_ensemble={self.seed_ensemble})")
        if self.cascade is None:
            self.cascade = CascadeSettings.for_catalog(self.catalog)


@dataclass
class ObjectiveResult:
    name: str
    stage1: np.ndarray
    full: np.ndarray
    keys: np.ndarray
    table: object               # per-problem metrics (pandas)
    summary: dict
    models: list
    calibration: dict
    train_s: float
    scored: Dataset             # the problems the metrics are of (the served dtype's)
    # the cascade keys of every row of the dataset, pooled dtypes' out of fold too (only when
    # TrainOptions.gate_pool asks; None otherwise)
    pooled_keys: np.ndarray | None = None


def _log_time_r2(ds: Dataset, pred_tflops: np.ndarray) -> dict:
    flops = 2.0 * ds.frame["m"].to_numpy(float) * ds.frame["n"].to_numpy(float) \
        * ds.frame["k"].to_numpy(float) * ds.frame["batch"].to_numpy(float)
    t_true = np.log(flops / ds.tflops)
    t_pred = np.log(flops / np.maximum(pred_tflops, 1e-12))
    return {"r2_log_time": metrics.r2(t_true, t_pred),
            "r2_log_tflops": metrics.r2(np.log(ds.tflops), np.log(np.maximum(pred_tflops, 1e-12)))}


def scale_out_of_fold(ds: Dataset, folds: list[cv.Fold]) -> np.ndarray:
    """Out-of-fold log best TFLOP/s per problem from the problem-level model."""
    x, _ = problem_rows(ds)
    out = np.full(ds.n_problems, np.nan)
    for fold in folds:
        booster = fit_scale(ds, fold.train)
        out[fold.test] = booster.predict(x[fold.test])
    return out


def _fit(ds: Dataset, obj: Objective, opts: TrainOptions, rounds: int | None = None,
          init_model: lgb.Booster | None = None) -> lgb.Booster:
    """cv.fit with the options' parameters and row weights (every model of a recipe alike);
    a seed ensemble's members averaged into one booster."""
    seed = int(obj.params(opts.params)["seed"])
    members = [cv.fit(ds, obj, dict(opts.params, seed=seed + i),
                      opts.rounds if rounds is None else rounds, opts.retimed_weight,
                      init_model=init_model, minority_layout_weight=opts.minority_layout_weight,
                      stratum_balance=opts.stratum_balance, stratum_cap=opts.stratum_cap)
               for i in range(opts.seed_ensemble)]
    return average(members)


def _fold_scores(ds: Dataset, obj: Objective, folds: list[cv.Fold], opts: TrainOptions,
                 keep_models: bool, pooled: bool = False):
    """Out-of-fold (stage-1 scores, full scores, cascade keys) of the served rows, and the
    fold models if kept: fold models trained on every dtype of ``ds``. With ``pooled``, a
    fifth value: the cascade keys of every row (the pooled dtypes' problems scored out of
    fold too), else None."""
    stage1 = np.full(len(ds), np.nan)
    full = np.full(len(ds), np.nan)
    models = []
    s1 = opts.cascade.stage1_trees
    for fold in folds:
        booster = _fit(ds.subset_problems(fold.train), obj, opts)
        rows = (fold.test if pooled else fold.test & ds.served)[ds.problem_index]
        stage1[rows] = booster.predict(ds.x[rows], raw_score=True, num_iteration=s1)
        full[rows] = booster.predict(ds.x[rows], raw_score=True)
        if keep_models:
            models.append(booster)
    served_rows = ds.served[ds.problem_index]
    if pooled:   # per-problem keys: the served rows' are a slice of every row's
        every = cascade_keys(ds.problem_index, stage1, full, opts.cascade.stage2_top)
        keys = every[served_rows]
    else:
        every = None
        keys = cascade_keys(ds.problem_index[served_rows], stage1[served_rows],
                            full[served_rows], opts.cascade.stage2_top)
    return stage1[served_rows], full[served_rows], keys, models, every


def evaluate_objective(ds: Dataset, obj: Objective, folds: list[cv.Fold], opts: TrainOptions,
                       scale_oof: np.ndarray, keep_models: bool) -> ObjectiveResult:
    """Fold models trained on every dtype of ``ds``; scored on the served dtype's problems."""
    t0 = time.perf_counter()
    stage1, full, keys, models, every = _fold_scores(ds, obj, folds, opts, keep_models,
                                                     pooled=opts.gate_pool and bool(opts.pool))
    train_s = time.perf_counter() - t0
    sc = ds.served_only()
    scale_oof = scale_oof[ds.served]
    m_of_problem = sc.frame["m"].to_numpy()[sc.starts]
    table = metrics.per_problem(sc.problem_index, sc.tflops, keys)
    summary = metrics.method_summary(table, m_of_problem)
    full_table = metrics.per_problem(sc.problem_index, sc.tflops, full)
    summary["full_model"] = metrics.summarize(full_table["efficiency"].to_numpy(),
                                              full_table["top1"].to_numpy(),
                                              full_table["best_rank"].to_numpy())
    cal_full = Calibration.fit(score_gaps(sc.problem_index, full), sc.rel)
    cal_stage1 = Calibration.fit(score_gaps(sc.problem_index, stage1), sc.rel)
    pred = np.exp(scale_oof[sc.problem_index]) * cal_full(score_gaps(sc.problem_index, full))
    summary.update(_log_time_r2(sc, pred))
    summary["train_s"] = round(train_s, 1)
    return ObjectiveResult(obj.name, stage1, full, keys, table, summary, models,
                           {"stage1": cal_stage1.to_dict(), "full": cal_full.to_dict()}, train_s,
                           sc, every)


def choose(results: dict[str, ObjectiveResult]) -> str:
    return max(results, key=lambda n: (results[n].summary["mean"], results[n].summary["p10"]))


@dataclass
class GateResult:
    """The vendor gate out of fold on an objective's out-of-fold ranking."""

    keys: np.ndarray            # the ranking with the gate's calls applied
    table: object               # per-problem metrics of that ranking
    summary: dict
    raw: np.ndarray             # per problem: the out-of-fold gate's raw score
    outcome: np.ndarray         # per problem: the gate's label (log(cuBLAS / the ranker's
                                # first Triton pick), or the fastest of its first few's)
    has_outcome: np.ndarray
    perfect: dict               # mean / P10 had every call been right (the ceiling)
    # (problem rows, outcomes, has outcome) the gate to ship is fitted on: the scored
    # problems', or every dtype's for a pooled gate
    fit_on: tuple


def extra_split_keys(ds: Dataset, obj: Objective, opts: TrainOptions) -> list[np.ndarray]:
    """The ranker's out-of-fold keys (served rows) under fold seeds seed + 1, ...,
    seed + gate_splits - 1: the further draws the vendor gate's labels average over."""
    return [_fold_scores(ds, obj, cv.make_folds(ds, opts.folds, opts.seed + r,
                                                 opts.fold_grouping), opts, False)[2]
            for r in range(1, opts.gate_splits)]


def gate_out_of_fold(res: ObjectiveResult, folds: list[cv.Fold], served: np.ndarray,
                     seed: int, extra_keys: list[np.ndarray] = (),
                     gate_params: dict | None = None, gate_seeds: int = 1,
                     label_top: int = 1) -> GateResult:
    """Gates fitted on the other folds' problems, called on each fold's problems; with
    ``extra_keys`` (:func:`extra_split_keys`) their labels average those splits' outcomes
    too. The gated ranking and the ceiling are of ``res``'s own split."""
    sc = res.scored
    masks = [(f.train[served], f.test[served]) for f in folds]
    x = gate.problem_matrix(sc.x[sc.starts])
    raw, y, has = gate.out_of_fold(sc.problem_index, sc.config_ids, sc.tflops, res.keys, x,
                                   masks, seed, extra_keys=extra_keys, top=label_top,
                                   params=gate_params, seeds=gate_seeds)
    # the ceiling is of this split's own outcomes: the labels are those unless averaged or
    # taken over several picks
    own = None if len(extra_keys) or label_top > 1 else (y, has)
    return _gated(res, raw, y, has, own, (x, y, has))


def pooled_gate_out_of_fold(res: ObjectiveResult, folds: list[cv.Fold], ds: Dataset,
                            seed: int, gate_params: dict | None = None,
                            gate_seeds: int = 1, label_top: int = 1) -> GateResult:
    """As :func:`gate_out_of_fold`, but each fold's gate is fitted on the other folds'
    problems of every dtype of ``ds`` (``res.pooled_keys``: the pooled problems' out-of-fold
    picks) and called on the fold's served problems; the gate to ship is fitted on every
    problem's outcome."""
    sc = res.scored
    if not np.array_equal(ds.problem_keys[ds.served], sc.problem_keys):
        raise ValueError("the served problems are not the scored ones, in order")
    x = gate.problem_matrix(ds.x[ds.starts])
    masks = [(f.train, f.test & ds.served) for f in folds]
    raw_all, y_all, has_all = gate.out_of_fold(ds.problem_index, ds.config_ids, ds.tflops,
                                               res.pooled_keys, x, masks, seed, top=label_top,
                                               params=gate_params, seeds=gate_seeds)
    y, has = y_all[ds.served], has_all[ds.served]
    own = (y, has) if label_top == 1 else None
    return _gated(res, raw_all[ds.served], y, has, own, (x, y_all, has_all))


def _gated(res: ObjectiveResult, raw, y, has, own, fit_on) -> GateResult:
    """The scored problems' ranking with the gate's out-of-fold calls ``raw`` applied."""
    sc = res.scored
    keys = gate.apply(sc.problem_index, sc.config_ids, res.keys, raw)
    table = metrics.per_problem(sc.problem_index, sc.tflops, keys)
    summary = metrics.method_summary(table, sc.frame["m"].to_numpy()[sc.starts])
    return GateResult(keys, table, summary, raw, y, has, _ceiling(res, own), fit_on)


def recipe_gate_out_of_fold(res: ObjectiveResult, folds: list[cv.Fold], ds: Dataset,
                            opts: TrainOptions) -> GateResult:
    """The recipe's vendor gate out of fold, as training fits it and evaluate scores it:
    pooled where the ranker scored the pool (``gate_pool``), else on the served problems with
    ``gate_splits``' further draws."""
    if res.pooled_keys is not None:
        return pooled_gate_out_of_fold(res, folds, ds, opts.seed, gate_params(opts),
                                       opts.gate_seeds, opts.gate_label_top)
    return gate_out_of_fold(res, folds, ds.served, opts.seed,
                            extra_split_keys(ds, OBJECTIVES[res.name], opts), gate_params(opts),
                            opts.gate_seeds, opts.gate_label_top)


def gate_params(opts: TrainOptions) -> dict:
    """The recipe's overrides of :data:`gate.GATE_PARAMS`."""
    return {"lambda_l2": opts.gate_lambda_l2}


def _vendor_gate(chosen: ObjectiveResult, folds: list[cv.Fold], ds: Dataset,
                 opts: TrainOptions, log) -> tuple[lgb.Booster | None, dict]:
    """The gate to ship (or None) and what cv_metrics.json says of it."""
    pick = ("the ranker's first Triton pick" if opts.gate_label_top == 1 else
            f"the fastest measured of the ranker's first {opts.gate_label_top} Triton picks")
    report = {"choice": opts.vendor_gate, "shipped": False,
              "rule": ("auto: shipped when the gated out-of-fold mean efficiency is above the "
                       "ranker's alone"),
              "params": dict(gate.GATE_PARAMS, seed=opts.seed, **gate_params(opts)),
              "rounds": gate.GATE_ROUNDS,
              "label_splits": opts.gate_splits,
              "seeds": opts.gate_seeds,
              "label_top": opts.gate_label_top,
              "label": (f"log(cuBLAS / {pick}), out of fold, averaged over "
                        f"{opts.gate_splits} fold split(s)")}
    if opts.vendor_gate == "off":
        return None, report
    g = recipe_gate_out_of_fold(chosen, folds, ds, opts)
    report["pooled"] = chosen.pooled_keys is not None
    if report["pooled"]:
        report["pooled_problems_with_both"] = int(g.fit_on[2].sum())
    ranker = chosen.summary
    report.update(ranker={k: ranker[k] for k in ("mean", "median", "p10", "min")},
                  gated=g.summary, perfect_call=g.perfect,
                  problems_with_both=int(g.has_outcome.sum()),
                  calls_for_cublas=int((g.raw > 0).sum()))
    log(f"vendor gate out of fold: mean {ranker['mean']:.4f} -> {g.summary['mean']:.4f}, "
        f"p10 {ranker['p10']:.4f} -> {g.summary['p10']:.4f} (every call right: "
        f"{g.perfect['mean']:.4f} / {g.perfect['p10']:.4f})")
    if opts.vendor_gate == "auto" and not g.summary["mean"] > ranker["mean"]:
        return None, report
    report["shipped"] = True
    x, y, has = g.fit_on
    return gate.fit(x[has], y[has], opts.seed, params=gate_params(opts),
                    seeds=opts.gate_seeds), report


def _ceiling(res: ObjectiveResult, outcomes: tuple | None = None) -> dict:
    """Mean and P10 efficiency had the gate called every problem right (by ``res``'s own
    split's outcomes: ``outcomes`` (y, has) where the caller has them already)."""
    sc = res.scored
    y, has = outcomes if outcomes is not None else gate.problem_outcomes(
        sc.problem_index, sc.config_ids, sc.tflops, res.keys)
    keys = gate.apply(sc.problem_index, sc.config_ids, res.keys, gate.right_calls(y, has))
    eff = metrics.per_problem(sc.problem_index, sc.tflops, keys)["efficiency"].to_numpy()
    return {"mean": float(eff.mean()), "p10": float(np.percentile(eff, 10))}


def feature_importance(booster: lgb.Booster) -> list[dict]:
    gain = booster.feature_importance("gain")
    split = booster.feature_importance("split")
    total = float(gain.sum()) or 1.0
    rows = [{"feature": n, "gain": float(g), "gain_share": float(g) / total, "splits": int(s)}
            for n, g, s in zip(FEATURE_NAMES, gain, split)]
    return sorted(rows, key=lambda r: -r["gain"])


def catalog_configs(ds: Dataset, min_rel: float) -> list[str]:
    """The configs that reached ``min_rel`` x the best measured speed of at least one problem
    of ``ds`` (any dtype of a pool), and the vendor configs, sorted.

    Why prune: the trained catalog grew with the sampled pools to ~1,900 configs (~300 valid
    candidates a median problem), which pushed the ranking of a new problem past its 1 ms
    budget; a third of them never came within 80% of any problem's best in 3,539 problems.
    On the held-out sets the best config inside the pruned catalog is within 0.2% of the best
    overall (BENCHMARKS.md, "Session 6: weighting the minority layout, a wider cascade, a
    pruned catalog"; the latency itself under "Prediction latency")."""
    import pandas as pd

    best = pd.Series(ds.rel).groupby(np.asarray(ds.config_ids)).max()
    keep = set(best.index[best.to_numpy() >= min_rel - 1e-12])
    keep |= {c for c in best.index if c in VENDOR_FAMILIES}   # a vendor's id is its family
    return sorted(keep)


def train(paths, dtype: str, arch: str, out, opts: TrainOptions | None = None,
          log=lambda msg: None) -> dict:
    """Train, compare and write a model directory; returns the cv_metrics dict."""
    opts = opts or TrainOptions()
    t_start = time.perf_counter()
    previous = artifacts.load_previous(out, dtype, arch) if opts.warm_start else None
    if previous is not None and opts.objective not in ("auto", previous.objective):
        raise artifacts.ModelError(
            f"--warm-start continues the {previous.objective} model in {out}; "
            f"it cannot switch to --objective {opts.objective}")
    ds = load(paths, dtype, arch, opts.pool, label_times=opts.label_times,
              hold_out=opts.hold_out)
    if ds.held_out_problems:
        log(f"left out {ds.held_out_problems} problems on held-out weight shapes "
            "(--no-hold-out keeps them)")
    log(f"data: {len(ds)} rows, {ds.n_problems} problems ({int(ds.served.sum())} {dtype}"
        + "".join(f", {int(((ds.frame['dtype'] == d).to_numpy()[ds.starts]).sum())} {d}"
                  for d in ds.pooled_dtypes) + f") from {len(ds.files)} files")
    folds = cv.make_folds(ds, opts.folds, opts.seed, opts.fold_grouping)
    scale_oof = scale_out_of_fold(ds, folds)
    if previous is not None:
        names = [previous.objective]
    elif opts.objective == "auto":
        names = list(COMPARED)
    else:
        names = [objective(opts.objective).name]
    results = {}
    for name in names:
        results[name] = evaluate_objective(ds, OBJECTIVES[name], folds, opts, scale_oof,
                                           keep_models=True)
        s = results[name].summary
        log(f"{name:11s} mean {s['mean']:.4f} median {s['median']:.4f} p10 {s['p10']:.4f} "
            f"min {s['min']:.4f} top1 {s['top1_accuracy']:.3f} top5 {s['top5_hit_rate']:.3f} "
            f"r2(log time) {s['r2_log_time']:.3f} ({s['train_s']:.0f} s)")
    default = names[0] if len(names) == 1 else choose(results)
    chosen = results[default]
    obj = OBJECTIVES[default]
    if previous is not None:
        final = _fit(ds, obj, opts, opts.warm_rounds, init_model=previous.booster)
    else:
        final = _fit(ds, obj, opts)
    scale = fit_scale(ds)
    gate_booster, gate_report = _vendor_gate(chosen, folds, ds, opts, log)
    trained = sorted(set(catalog_configs(ds, opts.catalog_min_rel))
                     | (set(previous.trained_configs) if previous else set()))
    layouts = sorted(set(ds.frame["layout"]) | (set(previous.layouts) if previous else set()))
    cv_metrics = {
        "evaluation": {
            "folds": len(folds), "seed": opts.seed,
            "grouping": "GroupKFold over problems; group = " + cv.GROUPINGS[opts.fold_grouping],
            "efficiency": "measured TFLOP/s of the pick / best measured TFLOP/s of the problem",
            "winners_curse_rule": ("only the measured candidates of a problem are ranked: a "
                                   "pick the data did not measure is replaced by the "
                                   "best-ranked measured candidate"),
            "ranking": "cascade (as shipped): " + str(opts.cascade.to_dict()),
            "problems": int(ds.served.sum()), "rows": int(ds.served[ds.problem_index].sum()),
            "pooled_dtypes": ds.pooled_dtypes, "trained_on_problems": ds.n_problems,
            "scored": f"out-of-fold problems of {dtype} only; pooled dtypes are trained on"},
        "objectives": {n: r.summary for n, r in results.items()},
        "default": default,
        "selection_rule": "highest mean out-of-fold efficiency, then P10",
        "scale_model_r2_log_best": metrics.r2(np.log(ds.best[ds.starts][ds.served]),
                                              scale_oof[ds.served]),
        "vendor_gate": gate_report,
    }
    artifacts.write(out, final=final, fold_models=chosen.models[:opts.keep_fold_models],
                    scale=scale, gate=gate_booster, objective=default, opts=opts, ds=ds,
                    trained_configs=trained, layouts=layouts, calibration=chosen.calibration,
                    cv_metrics=cv_metrics, importance=feature_importance(final), previous=previous,
                    train_s=time.perf_counter() - t_start)
    log(f"default objective: {default}; model written to {out}")
    return cv_metrics
