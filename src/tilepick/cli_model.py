"""Model commands of the command line: train, evaluate, predict, search.

Registered on the main typer app by :func:`register` (called at the end of ``tilepick.cli``).
Thin wrappers: every command calls :mod:`tilepick.model`. The JSON printed by ``predict`` is a
contract (tests/test_predict_cli.py):

``{"problem": key, "arch": arch, "model": name, "ranked": [{"config_id", "family",
"predicted_tflops", "predicted_ms", "uncertainty"}, ...]}``, best first; with ``--batch``,
one such object per input line, in input order (a line that cannot be served gives
``{"line": n, "error": message}`` there instead, and the exit code is 2). ``ranked`` holds the
best ``DEFAULT_TOP`` unless ``--top N`` or ``--all`` says otherwise, in the table and the JSON
alike. With ``--extrapolate``, a problem whose layout the model was not trained on is ranked
anyway and its object gains ``"extrapolated": true`` (its uncertainties are null: the fold
models' spread says nothing about a layout none of them saw); the key is absent otherwise.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem, ProblemError

BATCH_KEYS = {"op", "m", "n", "k", "dtype", "layout", "batch"}
#: how many candidates predict prints without --top / --all (table and JSON alike)
DEFAULT_TOP = 10


def _fail(msg: str, code: int = 2):
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)


def _check_op(op: str) -> None:
    if op != "gemm":
        _fail(f"unknown op {op!r}: only gemm has models")


def _check_top(top: Optional[int]) -> None:
    """predict and search refuse the same --top values: 0 or less has no meaning (search's
    list slicing would silently return [] or drop the last entries)."""
    if top is not None and top < 1:
        _fail(f"--top must be >= 1, got {top}")


def _keep(top: Optional[int], every: bool) -> Optional[int]:
    """How many candidates predict prints (None: all). One default for the table and the
    JSON, so that switching to --json does not turn 10 rows into ~1,800."""
    _check_top(top)
    if every and top is not None:
        _fail("give --top N or --all, not both")
    return None if every else (top or DEFAULT_TOP)


def _no_model_message(dtype: str, arch: str) -> str:
    """Why no model loads for (dtype, arch), naming the --arch values that would."""
    from tilepick.model.artifacts import available_models, model_dirname, search_roots

    models = available_models("gemm")
    archs = sorted({name.split("_")[-1] for name in models if name.split("_")[1] == dtype})
    choices = (f"--arch choices for {dtype}: {', '.join(archs)}" if archs
               else f"no {dtype} model found")
    return (f"no model {model_dirname('gemm', dtype, arch)} in "
            f"{[str(r) for r in search_roots()]} ({choices}; GEMM models: "
            f"{', '.join(models) or 'none'}); train one with `tilepick train`")


class _Predictors:
    """Predictors loaded on first use, one per dtype.

    Loaded not strict: whether a layout the model was not trained on may be ranked is the
    CLI's decision (:func:`extrapolating`, --extrapolate), so that its refusal names the flag
    a CLI user can pass rather than a Python argument."""

    def __init__(self, arch: Optional[str], model_dir: Optional[str]):
        self.arch = arch.strip().lower() if arch else None   # as --dtype: any case
        self.model_dir = model_dir
        self._loaded: dict = {}

    def get(self, dtype: str):
        if dtype not in self._loaded:
            self._loaded[dtype] = self._load(dtype)
        return self._loaded[dtype]

    def _load(self, dtype: str):
        """Predictor.load, with an error that lists the valid --arch values."""
        from tilepick.model import ModelError, Predictor
        from tilepick.model.artifacts import ModelNotFound

        try:
            return Predictor.load(self.arch, dtype, model_dir=self.model_dir, strict=False)
        except ModelNotFound as exc:
            raise ModelError(_no_model_message(exc.dtype, exc.arch)) from None


def extrapolating(predictor, problem: GemmProblem, allowed: bool) -> bool:
    """Whether ranking ``problem`` is an extrapolation (a layout the model was not trained
    on); ModelError naming --extrapolate where that was not ``allowed``."""
    predictor.check(problem)   # the dtype (loaded not strict: the layout is checked here)
    if problem.layout in predictor.layouts:
        return False
    if not allowed:
        from tilepick.model import ModelError

        raise ModelError(f"model {predictor.name} was trained on layouts "
                         f"{list(predictor.layouts)} only, not {problem.layout} "
                         f"({problem.key()}); pass --extrapolate to rank it anyway "
                         "(the model's extrapolation: measure before trusting it)")
    return True


def _warn_extrapolated(predictor, problem: GemmProblem, where: str = "") -> None:
    """The warning on stderr that goes with every extrapolated ranking."""
    typer.echo(f"warning: {where}model {predictor.name} was not trained on layout "
               f"{problem.layout} (only {', '.join(predictor.layouts)}): the ranking of "
               f"{problem.key()} is an extrapolation, without uncertainty", err=True)


def prediction(predictor, problem: GemmProblem, top: Optional[int],
               extrapolated: bool = False) -> dict:
    """The JSON object of one prediction (see the module doc)."""
    ranked = predictor.rank(problem, top=top)
    out = {"problem": problem.key(), "arch": predictor.arch, "model": predictor.name,
           "ranked": [{"config_id": cid, "family": KernelConfig.from_id(cid).family,
                       "predicted_tflops": round(tf, 4),
                       "predicted_ms": round(problem.flops / (tf * 1e9), 6) if tf > 0 else None,
                       "uncertainty": None if u is None or extrapolated else round(u, 4)}
                      for cid, tf, u in ranked]}
    if extrapolated:
        out["extrapolated"] = True
    return out


def _batch_problem(line: str, defaults: dict) -> GemmProblem:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg}") from None
    if not isinstance(obj, dict):
        raise ValueError("each line must be a JSON object like "
                         '{"op": "gemm", "m": 128, "n": 4096, "k": 4096, "dtype": "bf16"}')
    unknown = sorted(set(obj) - BATCH_KEYS)
    if unknown:
        raise ValueError(f"unknown keys {unknown}; allowed: {sorted(BATCH_KEYS)}")
    if obj.get("op", "gemm") != "gemm":
        raise ValueError(f"unknown op {obj.get('op')!r}: only gemm has models")
    missing = [k for k in ("m", "n", "k") if k not in obj]
    if missing:
        raise ValueError(f"missing {missing}")
    return GemmProblem(obj["m"], obj["n"], obj["k"], batch=obj.get("batch", defaults["batch"]),
                       dtype=obj.get("dtype", defaults["dtype"]),
                       layout=obj.get("layout", defaults["layout"]))


def _print_ranking(title: str, headers: tuple, rows: list, notes: tuple = ()) -> None:
    """A table whose ``config`` column is never cut: the id is what users copy into
    ``tilepick run --config``. No column is cut (headers may wrap at spaces); where the
    terminal is narrower than that, the table is printed wider than the terminal (its lines
    wrap there) rather than cropped. ``notes`` follow the table, one line each."""
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title, show_edge=False)
    need = 3 * len(headers) - 1   # each column's padding and the separators between them
    for j, col in enumerate(headers):
        width = max([len(r[j]) for r in rows] + [len(word) for word in col.split()])
        t.add_column(col, justify="left" if col == "config" else "right",
                     no_wrap=col == "config", min_width=width)
        need += width
    for r in rows:
        t.add_row(*r)
    console = Console()
    if console.width < need:
        console = Console(width=need)
    console.print(t)
    for note in notes:
        console.print(note, markup=False, highlight=False, soft_wrap=True)


def _print_table(result: dict) -> None:
    """predict's table: one row per ranked candidate."""
    rows = [(str(i), r["config_id"], f"{r['predicted_tflops']:.1f}",
             f"{r['predicted_ms']:.4f}" if r["predicted_ms"] else "-",
             "-" if r["uncertainty"] is None else f"{r['uncertainty']:.3f}")
            for i, r in enumerate(result["ranked"], 1)]
    notes = ("extrapolated: the model was not trained on this layout",) \
        if result.get("extrapolated") else ()
    _print_ranking(f"{result['problem']}  (model {result['model']}, {result['arch']})",
                   ("#", "config", "pred. TFLOP/s", "pred. ms", "uncert."), rows, notes)


def _print_search(out: dict) -> None:
    """search's table: the best configs found and how close the search came to scoring all."""
    rows = [(str(i), r["config_id"], f"{r['score']:.3f}") for i, r in enumerate(out["ranked"], 1)]
    vs = out["vs_exhaustive"]
    notes = [f"model {out['model']}, {out['method']} search (budget {out['budget']}, seed "
             f"{out['seed']}): {out['evaluations']} of {out['space_valid']} valid configs "
             "scored; score: the model's raw score, higher is predicted faster (see --help)"]
    if vs.get("found") is not None:
        notes.append(f"scoring every valid config, the best is {vs['exhaustive_best']}; the "
                     f"search's best (cuBLAS aside) ranks #{vs['rank_in_exhaustive'] + 1} there, "
                     f"predicted at {vs['predicted_speed_ratio']:.3f}x its speed")
    if out.get("extrapolated"):
        notes.append("extrapolated: the model was not trained on this layout")
    _print_ranking(out["problem"], ("#", "config", "score"), rows, tuple(notes))


def register(app: typer.Typer) -> None:
    """Add the model commands to the tilepick app."""

    @app.command()
    def train(data: list[str] = typer.Option(..., "--data",
                                             help="parquet file or folder (repeatable)"),
              dtype: str = typer.Option("bf16", "--dtype"),
              arch: str = typer.Option("h200", "--arch"),
              out: str = typer.Option(..., "--out",
                                      help="model directory, e.g. models/gemm_bf16_h200"),
              objective: str = typer.Option("auto", "--objective",
                                            help="auto | log1p | normalized | lambdarank"),
              folds: int = typer.Option(5, "--folds"),
              seed: int = typer.Option(0, "--seed", help="the cross-validation folds' split, "
                                       "hence the out-of-fold calibration and the vendor gate "
                                       "(the ranker's own LightGBM seed is a parameter: "
                                       "--seed-ensemble varies it)"),
              rounds: Optional[int] = typer.Option(None, "--rounds", help="boosting rounds"),
              catalog: Optional[str] = typer.Option(
                  None, "--catalog", help="what the model ranks: trained (the configs the data "
                  "measured; the default) | space (every config of the declared spaces)"),
              warm_start: bool = typer.Option(False, "--warm-start",
                                              help="continue the model in --out with this data"),
              pool: list[str] = typer.Option(
                  [], "--pool-dtype", help="also learn from this dtype's rows in --data "
                  "(repeatable; scored on --dtype only), e.g. --dtype fp16 --pool-dtype bf16"),
              minority_layout_weight: Optional[float] = typer.Option(
                  None, "--minority-layout-weight", help="rows of the layouts other than the "
                  "data's most common one count this many times (default 1: no weighting)"),
              stratum_balance: Optional[float] = typer.Option(
                  None, "--stratum-balance", help="a stratum (layout x TMA-aligned strides) of "
                  "n problems counts (n_max / n) ** this (default 1; 0: off)"),
              stratum_cap: Optional[float] = typer.Option(
                  None, "--stratum-cap", help="no stratum's balance factor above this "
                  "(default 0: no cap)"),
              catalog_min_rel: Optional[float] = typer.Option(
                  None, "--catalog-min-rel", help="the trained catalog keeps configs within "
                  "this fraction of some training problem's best (default 0.8; 0: all)"),
              vendor_gate: str = typer.Option(
                  "auto", "--vendor-gate", help="the cuBLAS-or-Triton classifier: auto (ship "
                  "it where it raises the out-of-fold mean) | on | off"),
              gate_splits: int = typer.Option(
                  1, "--gate-splits", help="the vendor gate's labels: the ranker's "
                  "out-of-fold outcome averaged over this many fold splits (seed, seed+1, ...)"),
              gate_seeds: int = typer.Option(
                  1, "--gate-seeds", help="the vendor gate: the mean of this many fits, seeds "
                  "seed, seed+1, ... (one booster)"),
              gate_label_top: int = typer.Option(
                  1, "--gate-label-top", help="the vendor gate's label on a problem: cuBLAS "
                  "against the fastest measured of the ranker's first N out-of-fold Triton "
                  "picks (1: the first, what the dispatcher runs)"),
              gate_pool: bool = typer.Option(
                  False, "--gate-pool", help="the vendor gate also learns from the pooled "
                  "dtypes' problems (their out-of-fold picks; the dtype is one of its features)"),
              gate_l2: float = typer.Option(
                  None, "--gate-l2", help="the vendor gate's LightGBM lambda_l2 (default "
                  "0.1: tilepick.model.gate.GATE_PARAMS)"),
              seed_ensemble: int = typer.Option(
                  1, "--seed-ensemble", help="the ranker: the mean of this many LightGBM runs "
                  "with seeds seed, seed+1, ... of the parameters (one booster, N x the trees)"),
              fold_grouping: str = typer.Option(
                  "shape", "--fold-grouping", help="what a cross-validation fold holds out: "
                  "shape (M, N, K) | weight (N, K, every M of it, as the validation sets do)"),
              label_times: str = typer.Option(
                  "retimed", "--label-times", help="the times learned from: retimed (the "
                  "re-timing rounds' median where a config was re-timed) | screen (every "
                  "row's screening samples: one timing regime per problem) | aligned (retimed, with "
                  "the rows a problem's latest re-timing pass left out scaled into its regime)"),
              hold_out: bool = typer.Option(
                  True, "--hold-out/--no-hold-out", help="leave out the problems on the "
                  "validation sets' held-out weight shapes (Qwen2.5, Phi-3: "
                  "tilepick.bench.shapes.held_out_weights); --no-hold-out for your own data")):
        """Train and compare objectives on grouped folds; write the best model."""
        from tilepick.model.artifacts import ModelError
        from tilepick.model.dataset import DataError
        from tilepick.model.objectives import NUM_ROUNDS, OBJECTIVES
        from tilepick.model.train import TrainOptions, train as run_train

        if objective != "auto" and objective not in OBJECTIVES:
            _fail(f"unknown objective {objective!r}: auto, {', '.join(OBJECTIVES)}")
        try:
            opts = TrainOptions(objective=objective, folds=folds, seed=seed,
                                rounds=NUM_ROUNDS if rounds is None else rounds,
                                warm_start=warm_start,
                                pool=tuple(pool), vendor_gate=vendor_gate,
                                gate_splits=gate_splits, gate_seeds=gate_seeds,
                                gate_label_top=gate_label_top,
                                gate_pool=gate_pool,
                                **({"gate_lambda_l2": gate_l2} if gate_l2 is not None else {}),
                                seed_ensemble=seed_ensemble,
                                fold_grouping=fold_grouping, label_times=label_times,
                                hold_out=hold_out,
                                **({"catalog": catalog} if catalog else {}),
                                **({"minority_layout_weight": minority_layout_weight}
                                   if minority_layout_weight is not None else {}),
                                **({"stratum_balance": stratum_balance}
                                   if stratum_balance is not None else {}),
                                **({"stratum_cap": stratum_cap} if stratum_cap is not None else {}),
                                **({"catalog_min_rel": catalog_min_rel}
                                   if catalog_min_rel is not None else {}))
            result = run_train(data, dtype, arch, out, opts,
                               log=lambda m: typer.echo(m, err=True))
        except (DataError, ModelError, ValueError) as exc:
            _fail(str(exc))
        summary = {n: {k: v for k, v in s.items() if k not in ("by_m", "full_model")}
                   for n, s in result["objectives"].items()}
        gate = {k: v for k, v in result["vendor_gate"].items() if k in ("shipped", "perfect_call")}
        for k in ("ranker", "gated"):
            if k in result["vendor_gate"]:
                gate[k] = {m: result["vendor_gate"][k][m] for m in ("mean", "p10", "min")}
        typer.echo(json.dumps({"out": out, "default": result["default"],
                               "objectives": summary, "vendor_gate": gate}, indent=1))

    @app.command()
    def evaluate(data: Optional[list[str]] = typer.Option(
                     None, "--data", help="parquet file or folder (default: the files the "
                     "model's manifest lists, i.e. its recipe)"),
                 model: str = typer.Option(..., "--model", help="model directory"),
                 out: str = typer.Option(..., "--out", help="report directory")):
        """Out-of-fold evaluation of a model's recipe vs baselines; JSON, markdown + HTML, PNGs."""
        from tilepick.model.artifacts import ModelError
        from tilepick.model.dataset import DataError
        from tilepick.model.evaluate import evaluate as run_evaluate

        try:
            report = run_evaluate(data, model, out, log=lambda m: typer.echo(m, err=True))
        except (DataError, ModelError, ValueError) as exc:
            _fail(str(exc))
        rows = {n: {k: m[k] for k in ("mean", "median", "p10", "min")} if m else None
                for n, m in report["methods"].items()}
        typer.echo(json.dumps({"out": out, "methods": rows}, indent=1))

    @app.command()
    def validate(data: list[str] = typer.Option(..., "--data",
                                                help="held-out parquet file or folder"),
                 model: str = typer.Option(..., "--model", help="model directory"),
                 out: Optional[str] = typer.Option(None, "--out", help="report directory")):
        """Score the trained model on held-out, exhaustively measured problems."""
        from tilepick.model.artifacts import ModelError
        from tilepick.model.dataset import DataError
        from tilepick.model.validate import validate as run_validate

        try:
            report = run_validate(model, data, out)
        except (DataError, ModelError, ValueError) as exc:
            _fail(str(exc))
        rows = {n: {k: m.get(k) for k in ("mean", "median", "p10", "min", "top1_accuracy",
                                          "top5_hit_rate", "ties_rate", "coverage")
                    if m.get(k) is not None} if m else None
                for n, m in report["methods"].items()}
        typer.echo(json.dumps({"out": out, "problems": report["problems"], "methods": rows},
                              indent=1))

    @app.command()
    def predict(op: str = typer.Option("gemm", "--op"),
                m: Optional[int] = typer.Option(None, "--m"),
                n: Optional[int] = typer.Option(None, "--n"),
                k: Optional[int] = typer.Option(None, "--k"),
                dtype: str = typer.Option("bf16", "--dtype"),
                layout: str = typer.Option("rr", "--layout"),
                batch_count: int = typer.Option(1, "--batch-count", help="GEMM batch"),
                arch: Optional[str] = typer.Option(None, "--arch",
                                                   help="any case; default: the current "
                                                   "GPU's, or h200"),
                top: Optional[int] = typer.Option(
                    None, "--top", help=f"keep the best N (default {DEFAULT_TOP}, in the "
                    "table and the JSON alike)"),
                every: bool = typer.Option(False, "--all", help="keep every valid candidate "
                                           "(not with --top)"),
                batch: Optional[str] = typer.Option(
                    None, "--batch", help="JSONL file of problems, one JSON object per line "
                    'with the keys op ("gemm"), m, n, k (required), dtype, layout and batch '
                    "(default: --dtype, --layout and --batch-count), e.g. "
                    '{"m": 128, "n": 4096, "k": 4096, "layout": "rc"}; prints one JSON line '
                    "per problem, in the same order"),
                model_dir: Optional[str] = typer.Option(None, "--model", help="model directory"),
                extrapolate: bool = typer.Option(
                    False, "--extrapolate", help="rank a layout the model was not trained on "
                    "anyway, by the model's extrapolation: a warning on stderr, no "
                    'uncertainty, and "extrapolated": true in the JSON'),
                as_json: bool = typer.Option(False, "--json", help='JSON: {"problem", "arch", '
                                             '"model", "ranked": [{"config_id", "family", '
                                             '"predicted_tflops", "predicted_ms", '
                                             '"uncertainty"}, ...]}')):
        """Rank the valid configs of a problem with the shipped model (no GPU needed).

        Uncertainty (the spread of the cross-validation fold models' predictions, ~ the
        relative error) is computed for the first few candidates only (the model's
        uncertainty_top: 4 in the shipped models): the dispatcher's hybrid mode needs it only
        for the top few; the others show - (null in the JSON).
        """
        from tilepick.model import FeatureSchemaError, ModelError

        _check_op(op)
        keep = _keep(top, every)
        predictors = _Predictors(arch, model_dir)
        if batch is not None:
            if any(v is not None for v in (m, n, k)):
                _fail("give either --batch FILE or --m/--n/--k, not both")
            _predict_batch(batch, predictors, {"dtype": dtype, "layout": layout,
                                               "batch": batch_count}, keep, extrapolate)
            return
        if m is None or n is None or k is None:
            _fail("give --m, --n and --k (or --batch FILE)")
        try:
            problem = GemmProblem(m, n, k, batch=batch_count, dtype=dtype, layout=layout)
            predictor = predictors.get(problem.dtype_token)
            extrapolated = extrapolating(predictor, problem, extrapolate)
            result = prediction(predictor, problem, keep, extrapolated)
        except (ProblemError, ModelError, FeatureSchemaError) as exc:
            _fail(str(exc))
        if extrapolated:
            _warn_extrapolated(predictor, problem)
        if as_json:
            typer.echo(json.dumps(result))
        else:
            _print_table(result)

    @app.command()
    def search(m: int = typer.Option(..., "--m"), n: int = typer.Option(..., "--n"),
               k: int = typer.Option(..., "--k"), dtype: str = typer.Option("bf16", "--dtype"),
               layout: str = typer.Option("rr", "--layout"),
               arch: Optional[str] = typer.Option(None, "--arch", help="any case; default: "
                                                  "the current GPU's, or h200"),
               method: str = typer.Option("de", "--method", help="random | de"),
               budget: int = typer.Option(200, "--budget", help="configs scored"),
               seed: int = typer.Option(0, "--seed"),
               top: int = typer.Option(10, "--top", help="keep the best N found"),
               model_dir: Optional[str] = typer.Option(None, "--model"),
               extrapolate: bool = typer.Option(
                   False, "--extrapolate", help="search a layout the model was not trained "
                   'on anyway: a warning on stderr and "extrapolated": true in the JSON'),
               as_json: bool = typer.Option(False, "--json")):
        """Search each family's whole config space with the model (surrogate, no GPU).

        score: the model's raw ranking score of a config for this problem (its full trees'
        output; higher: predicted faster). It orders the configs of one problem; it is no
        TFLOP/s and not comparable across problems or models (predict gives TFLOP/s).
        """
        from tilepick.model import FeatureSchemaError, ModelError
        from tilepick.model.search import METHODS, compare_to_exhaustive, search as run_search

        if method not in METHODS:
            _fail(f"unknown method {method!r}: choose one of {list(METHODS)}")
        if budget < 1:
            _fail(f"--budget must be >= 1, got {budget}")
        _check_top(top)
        try:
            problem = GemmProblem(m, n, k, dtype=dtype, layout=layout)
            predictor = _Predictors(arch, model_dir).get(problem.dtype_token)
            extrapolated = extrapolating(predictor, problem, extrapolate)
            result = run_search(predictor, problem, method, budget, seed, top)
            closeness = compare_to_exhaustive(predictor, result, problem)
        except (ProblemError, ModelError, FeatureSchemaError, ValueError) as exc:
            _fail(str(exc))
        if extrapolated:
            _warn_extrapolated(predictor, problem)
        out = {"problem": result.problem, "model": predictor.name, "method": method,
               "seed": seed, "budget": budget, "evaluations": result.evaluations,
               "space_valid": result.space_valid,
               "ranked": [{"config_id": c, "score": round(s, 6)} for c, s in result.ranked],
               "vs_exhaustive": closeness, **({"extrapolated": True} if extrapolated else {})}
        if as_json:
            typer.echo(json.dumps(out))
        else:
            _print_search(out)


def _predict_batch(path: str, predictors: _Predictors, defaults: dict, top: Optional[int],
                   extrapolate: bool) -> None:
    """One JSON line per problem line, in order; a line that cannot be served is reported
    there (and on stderr) without stopping the others, and the exit code is then 2."""
    from tilepick.model import FeatureSchemaError, ModelError

    p = Path(path)
    if not p.is_file():
        _fail(f"batch file {path} does not exist")
    failed = 0
    with open(p, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                problem = _batch_problem(line, defaults)
                predictor = predictors.get(problem.dtype_token)
                extrapolated = extrapolating(predictor, problem, extrapolate)
                result = prediction(predictor, problem, top, extrapolated)
            except (ValueError, ProblemError, ModelError, FeatureSchemaError) as exc:
                failed += 1
                typer.echo(f"error: {path}:{lineno}: {exc}", err=True)
                result = {"line": lineno, "error": str(exc)}
            else:
                if extrapolated:
                    _warn_extrapolated(predictor, problem, f"{path}:{lineno}: ")
            typer.echo(json.dumps(result))
    sys.stdout.flush()
    if failed:
        raise typer.Exit(2)
