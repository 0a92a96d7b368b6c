"""``tilepick lt``: the cuBLASLt entry model (:mod:`tilepick.model.lt_ranker`).

Its data are ``benchmarks/cublaslt_probe.py`` results (JSON, gzip or not), measured on the GPU
the model is for; training and evaluation run on a CPU.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from tilepick.cli_model import _fail

#: the (dtype, arch) of the entry model ``lt evaluate`` scores without --model
DEFAULT_LT_MODEL = ("bf16", "h200")

lt_app = typer.Typer(help="the cuBLASLt entry model: which of cuBLASLt's heuristic entries "
                          "runs where cuBLAS is picked", no_args_is_help=True)


@lt_app.command("train")
def lt_train(data: list[str] = typer.Argument(..., help="cublaslt_probe.py results"),
             out: str = typer.Option(..., "--out", help="model folder, e.g. "
                                     "models/cublaslt_bf16_h200"),
             delta: Optional[float] = typer.Option(None, "--delta", help="score gap over the "
                                                   "heuristic's first entry (default: by CV)")):
    """Train (LambdaRank, GroupKFold by shape for the gap) and write the model."""
    from tilepick.model import lt_ranker

    try:
        meta = lt_ranker.train(data, out, delta)
    except ValueError as exc:
        _fail(str(exc))
    typer.echo(json.dumps({"out": out, "shapes": meta["shapes"], "rows": meta["rows"],
                           "delta": meta["delta"],
                           "out_of_fold": meta["out_of_fold"][str(meta["delta"])]}, indent=1))


def _lt_model_dir(model: Optional[str]) -> Path:
    """--model, else the shipped entry model found where predict finds its models
    ($TILEPICK_MODELS, then the repository's models/), so that the default works from any
    working directory; exits 2 naming the problem where there is no entry model."""
    from tilepick.model.artifacts import ModelError, find_model_dir
    from tilepick.model.lt_ranker import META_FILE

    if model is None:
        try:
            return find_model_dir("cublaslt", *DEFAULT_LT_MODEL)
        except ModelError as exc:
            _fail(f"{exc}; or name one with --model")
    path = Path(model)
    if not (path / META_FILE).is_file():
        what = "does not exist" if not path.exists() else f"has no {META_FILE}"
        _fail(f"--model {model} {what}: not a cuBLASLt entry model (`tilepick lt train` "
              "writes one)")
    return path


@lt_app.command("evaluate")
def lt_evaluate(data: list[str] = typer.Argument(..., help="cublaslt_probe.py results of "
                                                 "shapes the model never saw"),
                model: Optional[str] = typer.Option(
                    None, "--model", help="model folder (default: the shipped "
                    "cublaslt_bf16_h200, found as predict finds its models)"),
                rows: bool = typer.Option(False, "--rows", help="print every shape's choice"),
                delta: Optional[float] = typer.Option(
                    None, "--delta", help="score gap over the heuristic's first entry to run "
                    "an entry by (default: the model's own)")):
    """What the dispatcher would run on each shape, scored by its measured speed over
    torch.matmul (geomean, worst, shapes below 0.97x), beside the heuristic's first entry and
    the best measured entry (inflated by selection). ``--delta`` scores another gap on the
    same data: how the model's cross-validated gap holds on shapes it never saw."""
    import pandas as pd

    from tilepick.features import lt_entries
    from tilepick.model import lt_ranker

    model_dir = _lt_model_dir(model)
    try:
        r = lt_ranker.LtRanker.load(model_dir)
        df = pd.concat([lt_ranker.probe_frame(p) for p in data], ignore_index=True)
    except (OSError, ValueError, KeyError) as exc:
        _fail(f"{type(exc).__name__}: {exc}")
    gap = r.delta if delta is None else delta
    ch = lt_ranker.choices(df, r.booster.predict(lt_entries.compute(df)), gap)
    if rows:
        typer.echo(ch.to_string(index=False))
    typer.echo(json.dumps({"model": str(model if model is not None else model_dir),
                           "delta": gap, **lt_ranker.summary(ch)}, indent=1))
