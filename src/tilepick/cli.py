"""Command line: thin wrappers; every command calls the library.

The JSON printed by ``configs`` and ``run`` is a contract other tools rely on (see README).
"""

from __future__ import annotations

import json
import math
import sys
from enum import Enum
from typing import Optional

import typer

from tilepick.bench.screen import ScreenSettings
from tilepick.cli_model import _fail   # the one spelling of an error exit (code 2)
from tilepick.problem import LAYOUTS, GemmProblem, ProblemError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="tilepick: pick the fastest GPU kernel for every problem shape, and run it.")


def _print_version(value: bool) -> None:
    """``--version``: eager, so it answers before typer asks for a command."""
    if value:
        from tilepick import __version__

        typer.echo(f"tilepick {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_print_version,
                                       is_eager=True, help="print tilepick's version and exit")):
    # (no docstring: it would replace the app's help text)
    pass


class Op(str, Enum):
    gemm = "gemm"


def _problem_list(spec: str, dtype: str, layout: str, seed: int, count: Optional[int]) -> list:
    """``--problems`` resolved (``shapes.resolve_problems``), exit 2 with the reason if it
    cannot be. A spec that looks like a file (a path separator, or a problem file's or
    dataset's suffix) but does not exist is reported as a missing file, not as an unknown
    set name: that is what a typo in a path is."""
    from pathlib import Path

    from tilepick.bench import shapes

    path = Path(spec)
    looks_like_path = ("/" in spec or "\\" in spec
                       or path.name.lower().endswith((".csv", ".jsonl", ".parquet", ".gz")))
    if spec not in shapes.NAMED_SETS and looks_like_path and not path.exists():
        _fail(f"--problems {spec}: no such file or folder")
    try:
        return shapes.resolve_problems(spec, dtype, layout, seed, count)
    except (ProblemError, OSError, ValueError) as exc:
        _fail(str(exc))


def _problem(op: Op, m: int, n: int, k: int, dtype: str, layout: str, batch: int,
             tf32: bool) -> GemmProblem:
    try:
        return GemmProblem(m, n, k, batch=batch, dtype=dtype, layout=layout, tf32=tf32)
    except ProblemError as exc:
        _fail(str(exc))


M_OPT = typer.Option(4096, "--m", help="rows of A and C")
N_OPT = typer.Option(4096, "--n", help="columns of B and C")
K_OPT = typer.Option(4096, "--k", help="inner dimension")
DTYPE_OPT = typer.Option("bf16", "--dtype", help="fp16 | bf16 | fp32 | fp8e4m3")
LAYOUT_OPT = typer.Option("rr", "--layout", help=f"one of {', '.join(LAYOUTS)} (A then B; r=row-, c=column-major)")
BATCH_OPT = typer.Option(1, "--batch", help="batch count")
TF32_OPT = typer.Option(False, "--tf32", help="fp32 inputs computed in tf32")


@app.command()
def configs(op: Op = typer.Option(Op.gemm, "--op"), m: int = M_OPT, n: int = N_OPT, k: int = K_OPT,
            dtype: str = DTYPE_OPT, layout: str = LAYOUT_OPT, batch: int = BATCH_OPT,
            tf32: bool = TF32_OPT, family: Optional[list[str]] = typer.Option(None, "--family"),
            as_json: bool = typer.Option(False, "--json", help="print a JSON list")):
    """List the applicable, valid configs of every family for a problem."""
    from tilepick import solvers

    p = _problem(op, m, n, k, dtype, layout, batch, tf32)
    unknown = sorted(set(family or []) - set(solvers.SOLVERS))
    if unknown:
        _fail(f"unknown famil{'y' if len(unknown) == 1 else 'ies'} {unknown}: "
              f"choose from {sorted(solvers.SOLVERS)}")
    cfgs = solvers.applicable_configs(p, families=family)
    if as_json:
        rows = [{"config_id": c.id, "family": c.family,
                 "solver": type(solvers.SOLVERS[c.family]).__name__, "params": c.params}
                for c in cfgs]
        typer.echo(json.dumps(rows))
        return
    from collections import Counter

    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{len(cfgs)} valid configs for {p.key()}")
    t.add_column("family")
    t.add_column("configs", justify="right")
    t.add_column("example")
    counts = Counter(c.family for c in cfgs)
    for fam, cnt in counts.items():
        t.add_row(fam, str(cnt), next(c.id for c in cfgs if c.family == fam))
    for fam, solver in solvers.SOLVERS.items():
        if fam not in counts and (family is None or fam in family):
            why = solver.not_applicable_reason(p, solvers.current()) or "no valid config"
            t.add_row(fam, "0", f"[dim]{why}[/dim]")
    Console().print(t)


def _kernel_device() -> str:
    """Where kernels will run ('cuda', or 'cpu' under TRITON_INTERPRET=1); exit 2 when that
    is a GPU and none is visible: the commands that launch kernels check this before they
    compile any, rather than fail deep inside torch with a CUDA traceback."""
    from tilepick.runtime import device_for_kernels

    device = device_for_kernels()
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            _fail("no CUDA GPU is visible; set TRITON_INTERPRET=1 to run the "
                  "kernel on the CPU through Triton's interpreter")
    return device


@app.command()
def run(op: Op = typer.Option(Op.gemm, "--op"), m: int = M_OPT, n: int = N_OPT, k: int = K_OPT,
        dtype: str = DTYPE_OPT, layout: str = LAYOUT_OPT, batch: int = BATCH_OPT,
        tf32: bool = TF32_OPT, config: str = typer.Option(..., "--config", help="config id"),
        check: bool = typer.Option(False, "--check", help="compare with a float64 reference"),
        seed: int = typer.Option(0, "--seed"), as_json: bool = typer.Option(False, "--json")):
    """Run one config on fresh random inputs (GPU, or CPU with TRITON_INTERPRET=1)."""
    from tilepick.bench.runner import ProblemInputs, run_config
    from tilepick.config import ConfigError, KernelConfig
    from tilepick.runtime import interpreting

    p = _problem(op, m, n, k, dtype, layout, batch, tf32)
    try:
        cfg = KernelConfig.from_id(config)
    except ConfigError as exc:
        _fail(str(exc))
    device = _kernel_device()
    res = run_config(p, cfg, ProblemInputs.make(p, device, seed), check=check, timed=True)
    if res.status == "not_applicable":
        _fail(f"not applicable: {res.reason}")
    if res.status == "invalid":
        typer.echo(f"error: invalid for this problem: {res.reason}", err=True)
        raise typer.Exit(3)
    ms = res.timing.ms if res.timing is not None and res.timing.meaningful else None
    out = {"config_id": res.config_id, "problem": p.key(), "rel_error": res.rel_error, "ms": ms,
           "tflops": (p.flops / (ms * 1e9)) if ms else None,
           "device": "cpu-interpreter" if interpreting() else "cuda", "status": res.status}
    if as_json:
        typer.echo(json.dumps(out))
    else:
        for key, val in out.items():
            typer.echo(f"{key}: {val}")
    if res.status == "wrong":
        typer.echo(f"error: {res.reason}", err=True)
        raise typer.Exit(1)


@app.command()
def demo(m: int = M_OPT, n: int = N_OPT, k: int = K_OPT, dtype: str = DTYPE_OPT,
         layout: str = LAYOUT_OPT):
    """A first look at a problem: list its configs; on a GPU, run and time each family's
    default config and cuBLAS, each checked against float64."""
    from rich.console import Console
    from rich.table import Table

    from tilepick import solvers
    from tilepick.hardware import current
    from tilepick.runtime import interpreting

    console = Console()
    p = _problem(Op.gemm, m, n, k, dtype, layout, 1, False)
    hw = current()
    configs(Op.gemm, m, n, k, dtype, layout, 1, False, None, False)
    import torch

    if interpreting() or not torch.cuda.is_available():
        console.print(f"[yellow]No CUDA GPU here ({hw.name} profile used for validity rules): "
                      "listing only. On a GPU this command also runs and times each family.")
        return
    from tilepick.bench.runner import ProblemInputs, run_config

    data = ProblemInputs.make(p, "cuda")
    t = Table(title=f"{p.key()} on {hw.name}")
    for col in ("config", "status", "rel. error", "ms", "TFLOP/s"):
        t.add_column(col)
    for fam, solver in solvers.SOLVERS.items():
        cfg = solver.default_config(p, hw)
        if cfg is None:
            continue
        r = run_config(p, cfg, data)
        ms = r.timing.ms if r.timing else float("nan")
        t.add_row(cfg.id, r.status, f"{r.rel_error:.2e}" if r.rel_error is not None else "-",
                  f"{ms:.4f}", f"{p.flops / (ms * 1e9):.1f}" if r.timing else "-")
    console.print(t)


@app.command()
def sweep(problems: str = typer.Option(..., "--problems",
                                       help="a named problem set (see tilepick.bench.shapes), a CSV/JSONL file, or a dataset (parquet file or folder: its problems of --dtype and --layout)"),
          out: str = typer.Option(..., "--out", help="output folder of parquet parts (resumable)"),
          dtype: str = DTYPE_OPT, layout: str = LAYOUT_OPT,
          family: Optional[list[str]] = typer.Option(
              None, "--family", help="restrict to families (default: all but the cuBLASLt "
              "entries, which their own probes measure)"),
          sample: Optional[int] = typer.Option(None, "--sample", help="configs per problem drawn at random (default: all; 0: none, with --model-top)"),
          model_top: int = typer.Option(0, "--model-top", help="also measure the model's N best-ranked Triton configs per problem"),
          model: Optional[str] = typer.Option(None, "--model", help="model directory for --model-top and --order model (default: the shipped model of --dtype)"),
          top_up: Optional[int] = typer.Option(None, "--top-up", help="with --problems DATASET: bring each problem to N measured configs, drawing only configs the dataset lacks (problems closest to N first; rows of configs it has are not written)"),
          order: str = typer.Option("id", "--order", help="measuring order per problem: id, or model (the model's likely winners first: the early-stop bound tightens at once; same configs measured)"),
          pool: Optional[int] = typer.Option(None, "--pool", help="distinct configs per family for the whole sweep (bounds compilation)"),
          pool_seed: Optional[int] = typer.Option(None, "--pool-seed", help="seed of the --pool draw (default: --seed); vary it across sweeps so the data covers each family's space"),
          count: Optional[int] = typer.Option(None, "--count", help="problems to take from a named set"),
          limit: Optional[int] = typer.Option(None, "--limit", help="measure at most this many new problems"),
          min_tflop: float = typer.Option(0.0, "--min-tflop", help="only problems of at least this many TFLOP (2MNK*batch/1e12)"),
          max_tflop: float = typer.Option(math.inf, "--max-tflop", help="only problems of at most this many TFLOP: an exhaustive chunk of small problems is not held up by one huge one"),
          seed: int = typer.Option(0, "--seed"), processes: Optional[int] = typer.Option(None, "--processes"),
          retime_top: int = typer.Option(5, "--retime-top", help="re-time this many best configs + cuBLAS"),
          rounds: int = typer.Option(3, "--rounds", help="interleaved re-timing rounds"),
          noise_fraction: float = typer.Option(0.1, "--noise-fraction"),
          check_probe_ms: float = typer.Option(
              ScreenSettings.long_ms, "--check-probe-ms", help="a correctness-check launch (timed, the config's "
              "first) of at least this many ms counts as its first repetition; shorter ones "
              "are only the probe that may stop it (inf: never a repetition)"),
          screen_chunk: int = typer.Option(
              ScreenSettings.chunk, "--screen-chunk", min=1, help="configs checked and screened per host "
              "synchronisation (fewer where their outputs would not fit 512 MB)")):
    """Measure problems x configs into a parquet dataset (GPU; interpreter timings are flagged)."""
    from tilepick.bench import shapes
    from tilepick.bench.sweep import ORDERS, SweepOptions, run_sweep
    from tilepick.data import io

    if order not in ORDERS:
        _fail(f"--order {order!r}: one of {', '.join(ORDERS)}")
    if not 0 <= min_tflop <= max_tflop:
        _fail(f"--min-tflop {min_tflop} and --max-tflop {max_tflop} select no "
              "problem (need 0 <= min <= max)")
    plist = _problem_list(problems, dtype, layout, seed, count)
    _kernel_device()   # before any compiling
    import random

    random.Random(seed).shuffle(plist)  # a partial (limited or killed) sweep stays representative
    plist = [p for p in plist if min_tflop <= p.flops / 1e12 <= max_tflop]
    measured: dict = {}
    if top_up is not None:
        if top_up < 1 or sample is not None or not shapes.is_dataset(problems):
            _fail("--top-up N takes N >= 1, a dataset as --problems, and no "
                  "--sample (it draws what each problem lacks)")
        measured = io.measured_configs(problems)
        # the problems closest to N first: a sweep cut by its budget completes the most
        lacking = {p.key(): top_up - len(measured.get(p.key(), ())) for p in plist}
        plist = sorted((p for p in plist if lacking[p.key()] > 0), key=lambda p: lacking[p.key()])
    if limit is not None:
        done = io.done_problems(out)
        plist = [p for p in plist if p.key() not in done][:limit]
    opts = SweepOptions(families=family, sample=sample, pool=pool, pool_seed=pool_seed, seed=seed,
                        processes=processes,
                        retime_top=retime_top, rounds=rounds, noise_fraction=noise_fraction,
                        screen=ScreenSettings(long_ms=check_probe_ms, chunk=screen_chunk),
                        model_top=model_top, model_dir=model,
                        order=order, top_up=top_up, measured=measured)
    if (model_top or order == "model") and plist:   # a missing model: before any compiling
        from tilepick.bench.sweep import ModelPicks
        from tilepick.model.artifacts import ModelError

        try:
            picks = ModelPicks(model_top, model)
            for tok in dict.fromkeys(p.dtype_token for p in plist):
                picks.predictor(tok)
        except ModelError as exc:
            flag = "--model-top" if model_top else "--order model"
            _fail(f"{flag}: {exc}")
    from tilepick.bench.signals import interrupt_on_sigterm

    interrupt_on_sigterm()
    try:
        summary = run_sweep(plist, out, opts)
    except KeyboardInterrupt:
        typer.echo(f"sweep interrupted: measured problems are saved in {out}; run the same "
                   "command again to resume", err=True)
        raise typer.Exit(130)
    typer.echo(json.dumps(summary.to_dict(), indent=1))


@app.command()
def warmup(problems: str = typer.Option(..., "--problems",
                                        help="a named problem set or a CSV/JSONL file of problems"),
           dtype: str = typer.Option("bf16", "--dtype"),
           layout: str = LAYOUT_OPT,
           count: Optional[int] = typer.Option(None, "--count", help="problems to take from a named set"),
           top: int = typer.Option(4, "--top", help="candidates per problem (the hybrid mode's k)"),
           processes: Optional[int] = typer.Option(None, "--processes"),
           mode: Optional[str] = typer.Option(None, "--mode", help="find mode whose ranking to use: heuristic, db, hybrid or exhaustive (default: $TILEPICK_FIND_MODE, else db)"),
           as_json: bool = typer.Option(False, "--json")):
    """Compile ahead, in parallel, the kernels the dispatcher would pick for a list of problems
    (Triton's on-disk cache then serves the first real call with nothing to compile)."""
    from tilepick.dispatch import MODES, Dispatcher
    from tilepick.dispatch.warmup import warmup as run_warmup

    if mode is not None and mode not in MODES:
        _fail(f"--mode {mode!r}: one of {', '.join(MODES)}")
    plist = _problem_list(problems, dtype, layout, 0, count)
    _kernel_device()   # before any compiling: without a GPU every binary failed, exit 0
    try:   # (no --mode: TILEPICK_FIND_MODE's, which may be wrong too)
        dispatcher = Dispatcher(mode=mode, user_db=None)
    except ValueError as exc:
        _fail(str(exc))
    report = run_warmup(plist, dispatcher, top=top, processes=processes, progress=not as_json)
    d = report.to_dict()
    if as_json:
        typer.echo(json.dumps(d, indent=1))
    else:
        med = f"{d['median_compile_s']:.2f} s" if d["median_compile_s"] is not None else "n/a"
        typer.echo(f"{d['problems']} problems, {d['pairs']} (problem, config) pairs, "
                   f"{d['binaries']} binaries compiled in {d['seconds']:.1f} s "
                   f"(median {med} per config), {len(d['failed'])} failed")
        for f in d["failed"]:
            typer.echo(f"  failed: {f}")


data_app = typer.Typer(help="dataset maintenance", no_args_is_help=True)
app.add_typer(data_app, name="data")


def _dataset(path: str) -> None:
    """Exit 2 unless ``path`` is a dataset folder or parquet file (``io.dataset_path``, the
    check ``data drop`` makes): a mistyped path must not read as an empty dataset."""
    from pathlib import Path

    from tilepick.data import io

    if not Path(path).exists():
        _fail(f"{path}: no such file or folder")
    try:
        io.dataset_path(path)
    except ValueError as exc:
        _fail(str(exc))


@data_app.command("compact")
def data_compact(src: str = typer.Argument(..., help="folder of parts"),
                 dest: str = typer.Argument(..., help="output parquet file (a new one)"),
                 force: bool = typer.Option(False, "--force", help="overwrite DEST if it "
                                            "exists")):
    """Merge a sweep's parts into one compressed parquet file."""
    from tilepick.data import io

    _dataset(src)
    try:
        n = io.compact(src, dest, overwrite=force)
    except FileExistsError as exc:
        _fail(str(exc))
    typer.echo(f"{n} rows -> {dest}")


@data_app.command("drop")
def data_drop(paths: list[str] = typer.Argument(..., help="dataset folders or parquet files"),
              family: str = typer.Option(..., "--family", help="the family whose rows go")):
    """Remove one family's rows from datasets (files rewritten; emptied ones deleted), before
    re-measuring a family whose launch changed: its old rows describe a kernel that no longer
    runs (git history keeps them)."""
    from pathlib import Path

    from tilepick import config as cfg
    from tilepick.data import io

    if family not in cfg.FAMILIES:
        raise typer.BadParameter(f"unknown family {family!r} (known: {', '.join(cfg.FAMILIES)})",
                                 param_hint="--family")
    for path in paths:   # every path checked before any file is rewritten
        try:
            io.dataset_path(path)
        except ValueError as e:
            raise typer.BadParameter(str(e), param_hint="PATHS") from None
    total = 0
    for path in paths:
        for f, n in io.drop_family(path, family).items():
            typer.echo(f"{f}: {n} rows dropped" + ("" if Path(f).exists() else " (file deleted)"))
            total += n
    typer.echo(f"{total} rows of {family} dropped")


@data_app.command("summary")
def data_summary(path: str = typer.Argument(..., help="a parquet file or folder")):
    """Rows, problems, configs per problem, invalid rows by reason, GPUs, and per family how
    many distinct configs of its declared space the data measured (``configs_measured``): a
    model can only learn, and its trained catalog only hold, configs some row measured; sweeps
    that all drew the same ``--pool`` measured 82 of ~700 valid fused split-K configs until
    session 24 (data PROVENANCE)."""
    from tilepick import config as cfg
    from tilepick.data import io

    _dataset(path)
    df = io.read_frame(path)
    if df.empty:
        typer.echo("no rows")
        return
    per = df.groupby("problem_key").size()
    reasons = df.loc[~df.valid, "invalid_reason"].str.split(":").str[0].value_counts()
    typer.echo(json.dumps({
        "rows": len(df), "problems": int(per.size), "configs_per_problem_median": float(per.median()),
        "valid_rows": int(df.valid.sum()), "invalid_by_reason": reasons.to_dict(),
        "families": df.family.value_counts().to_dict(),
        "configs_measured": {fam: f"{n} of {len(cfg.space(fam))}" for fam, n in
                             df.groupby("family").config_id.nunique().items() if fam in cfg.SPACES},
        "gpus": df.gpu_name.unique().tolist(),
        "retimed_rows": int(df.retimed.fillna(False).sum())}, indent=1))


def _problem_keys(problems: Optional[str]) -> Optional[frozenset]:
    """The keys of a problem file's problems (None: no file, every problem of the data)."""
    if problems is None:
        return None
    from tilepick.bench.shapes import read_problem_file

    return frozenset(p.key() for p in read_problem_file(problems))


@data_app.command("retime")
def data_retime(data: list[str] = typer.Argument(..., help="dataset folders or parquet files"),
                out: str = typer.Option(..., "--out", help="folder for the new rows (parts; a "
                                        "killed pass resumes there)"),
                within: float = typer.Option(0.9, "--within", help="contenders: configs at >= this fraction of the problem's best TFLOP/s"),
                top: int = typer.Option(32, "--top", help="at most this many of them per problem, best first"),
                model_top: int = typer.Option(8, "--model-top", help="plus the model's first N measured configs (0: none)"),
                baselines: bool = typer.Option(True, "--baselines/--no-baselines", help="plus the untrained baselines' candidates (the tutorial's configs, nvMatmulHeuristics' first 8)"),
                previous: bool = typer.Option(True, "--previous/--no-previous", help="plus every config re-timed before (--no-previous: only the near ones, the picks and cuBLAS, so that more rounds fit the same GPU time)"),
                model: Optional[str] = typer.Option(None, "--model", help="that model's folder (default: the shipped one for the dtype)"),
                rounds: int = typer.Option(5, "--rounds"),
                reps: int = typer.Option(10, "--reps", help="repetitions per round, at most"),
                max_ms: float = typer.Option(20.0, "--max-ms", help="about this much GPU time per candidate and round"),
                processes: Optional[int] = typer.Option(None, "--processes", help="compile processes"),
                limit: Optional[int] = typer.Option(None, "--limit", help="at most this many problems not yet done"),
                problems: Optional[str] = typer.Option(None, "--problems", help="only these problems (a CSV/JSONL problem file): e.g. those a new family was swept on"),
                picks: Optional[str] = typer.Option(None, "--picks", help="plus these configs (a file of `tilepick data picks`: another model's first picks)")):
    """Re-time each problem's contenders together in interleaved rounds (GPU), so that its
    best and the picks scored against it share one timing regime (tilepick.bench.retime);
    the rows are a new sweep the loaders prefer over older re-timings."""
    from tilepick.bench.retime import RetimeOptions, retime
    from tilepick.bench.signals import interrupt_on_sigterm

    try:
        keys = _problem_keys(problems)
        extra = None
        if picks is not None:
            from tilepick.bench.retime import read_picks

            extra = read_picks(picks)
        opts = RetimeOptions(within=within, top=top, model_top=model_top, model_dir=model,
                             baselines=baselines, previous=previous, rounds=rounds, reps=reps,
                             max_ms=max_ms,
                             processes=processes, only=keys, picks=extra)
    except ValueError as exc:
        _fail(str(exc))
    _kernel_device()   # before any compiling
    interrupt_on_sigterm()
    try:
        summary = retime(data, out, opts, limit=limit)
    except ValueError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        typer.echo(f"retime interrupted: finished problems are saved in {out}; run the same "
                   "command to resume", err=True)
        raise typer.Exit(130)
    typer.echo(json.dumps({k: v for k, v in summary.items() if k != "provenance"}, indent=1,
                          default=str))


@data_app.command("picks")
def data_picks(data: list[str] = typer.Argument(..., help="dataset folders or parquet files"),
               out: str = typer.Option(..., "--out", help="the picks file to write (JSON)"),
               model: Optional[str] = typer.Option(None, "--model", help="the model's folder (default: the shipped one for the dtype)"),
               top: int = typer.Option(8, "--top", help="the model's first N measured configs per problem"),
               problems: Optional[str] = typer.Option(None, "--problems", help="only these problems (a CSV/JSONL problem file)")):
    """Write a model's first measured configs per problem (CPU), for `data retime --picks` on
    a GPU machine the model does not travel to: a pass that holds a variant model's picks
    scores it inside the pass."""
    from tilepick.bench.retime import write_picks

    try:
        keys = _problem_keys(problems)
        picks = write_picks(data, out, model_dir=model, n=top, only=keys)
    except (ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
    typer.echo(f"{sum(map(len, picks.values()))} picks for {len(picks)} problems -> {out}")


db_app = typer.Typer(help="the performance database (user db; TILEPICK_USER_DB sets its path)",
                      no_args_is_help=True)
app.add_typer(db_app, name="db")
DB_OPT = typer.Option(None, "--db", help="database file (default: the user db)")


def _read_db(path: Optional[str]):
    """The perf-db a read command (list, show, export) reads, opened read-only the way the
    dispatcher opens the shipped system db (a packed ``.sqlite.gz`` is unpacked into the
    cache): reading never creates or changes a file. A --db that does not exist or cannot be
    read is an error (exit 2), not an empty db; the default user db before any tuning is
    empty."""
    from tilepick.dispatch.perfdb import PerfDb, default_user_db_path

    store = PerfDb(path or default_user_db_path(), readonly=True)
    if path is not None or store.path.exists():
        _require(store)
    return store


def _write_db(path: Optional[str]):
    """The perf-db ``db clear`` changes; it (and its folder) is created if it does not exist.
    Exit 2 if it cannot be opened for writing."""
    from tilepick.dispatch.perfdb import PerfDb, default_user_db_path

    return _require(PerfDb(path or default_user_db_path()))


def _require(store):
    """``store`` connected, or exit 2 naming its path and what is wrong (no bypass warning)."""
    from tilepick.dispatch.perfdb import PerfDbError

    try:
        store.require()
    except PerfDbError as exc:
        _fail(str(exc))
    return store


@db_app.command("list")
def db_list(db: Optional[str] = DB_OPT, as_json: bool = typer.Option(False, "--json")):
    """One line per tuned problem: winner, mode, date, GPU and versions."""
    rows = _read_db(db).entries()
    if as_json:
        typer.echo(json.dumps(rows))
        return
    for r in rows:
        typer.echo(f"{r['problem_key']}  {r['winner']}  {r['mode']}  {r['date']}  "
                   f"{r['gpu_name']}  torch {r['torch']}  triton {r['triton']}  "
                   f"({r['candidates']} candidates)")
    typer.echo(f"{len(rows)} problems")


@db_app.command("show")
def db_show(problem_key: str = typer.Argument(..., help="problem key, e.g. gemm.bf16.rr.m128.n4096.k4096"),
            db: Optional[str] = DB_OPT):
    """Every benchmarked candidate of a problem (all environments)."""
    store = _read_db(db)
    rows = [r for r in store.entries() if r["problem_key"] == problem_key]
    for r in rows:
        rec = store.lookup_env_key(r["env_key"], problem_key)
        typer.echo(f"{problem_key} on {r['gpu_name']} (env {r['env_key']}, torch {r['torch']}, "
                   f"triton {r['triton']}): winner {rec.winner} ({rec.mode}, {rec.date})")
        order = sorted(rec.timings.items(), key=lambda kv: (kv[1][0] is None, kv[1][0] or 0))
        for cid, (ms, status, reason) in order:
            typer.echo(f"  {cid:48s} {'-' if ms is None else f'{ms:.4f} ms':>12s} {status} {reason or ''}")
    if not rows:
        typer.echo(f"error: {problem_key} is not in {store.path}", err=True)
        raise typer.Exit(1)


@db_app.command("export")
def db_export(out: str = typer.Option(..., "--out", help="tuning file (JSON) to write; its "
                                      "folder is created if missing"),
              db: Optional[str] = DB_OPT):
    """Write every entry to a tuning file: tune on one machine, ship the file, import elsewhere."""
    from pathlib import Path

    from tilepick.dispatch.perfdb import PerfDbError

    if Path(out).is_dir():
        _fail(f"--out {out} is a folder: name the tuning file to write, e.g. "
              f"{Path(out) / 'tuning.json'}")
    store = _read_db(db)
    try:
        n = store.export(out)
    except (OSError, PerfDbError) as exc:
        _fail(f"cannot write the tuning file {out}: {exc}")
    typer.echo(f"{n} problems -> {out}")


@db_app.command("import")
def db_import(file: str = typer.Argument(..., help="tuning file written by 'db export'"),
              db: Optional[str] = DB_OPT):
    """Merge a tuning file into the database, all or nothing: a malformed entry (named by its
    index) imports none. Entries keep the date they were measured; where the database holds
    the same problem in the same environment measured later, its own entry is kept."""
    from tilepick.dispatch.perfdb import PerfDb, PerfDbError, default_user_db_path

    try:   # the whole file is checked before the db is opened (and created, if new)
        n, kept = PerfDb(db or default_user_db_path()).merge_file(file)
    except PerfDbError as exc:
        _fail(str(exc))
    typer.echo(f"{n} problems imported" + (f", {kept} kept (this database's entry is newer)"
                                           if kept else ""))


@db_app.command("build")
def db_build(data: list[str] = typer.Option(..., "--data", help="dataset folder or parquet "
                                            "(repeatable)"),
             out: str = typer.Option(..., "--out", help="perf-db file to add to, e.g. "
                                     "models/perfdb_h200.sqlite.gz (the shipped system db; .gz: packed)"),
             exhaustive: bool = typer.Option(False, "--exhaustive", help="the data measured "
                                             "every valid config of each problem")):
    """Store measured datasets' winners in a perf-db (how the shipped system db is built)."""
    from tilepick.dispatch.systemdb import build

    try:
        summary = build(data, out, exhaustive=exhaustive, log=lambda m: typer.echo(m, err=True))
    except (OSError, ValueError) as exc:
        _fail(str(exc))
    typer.echo(json.dumps(summary))


@db_app.command("clear")
def db_clear(db: Optional[str] = DB_OPT, yes: bool = typer.Option(False, "--yes")):
    """Delete every entry."""
    if not yes:
        _fail("pass --yes to delete every entry")
    typer.echo(f"{_write_db(db).clear()} problems deleted")


def main():  # pragma: no cover
    sys.exit(app())


from tilepick.cli_lt import lt_app as _lt_app  # noqa: E402
from tilepick.cli_model import register as _register_model_commands  # noqa: E402

# before main() runs, so `python -m tilepick.cli train` (or `lt train`) works too
_register_model_commands(app)
app.add_typer(_lt_app, name="lt")

if __name__ == "__main__":  # pragma: no cover
    main()
