"""Measured data as training data: filtered, deduplicated, grouped by problem, featurised.

Rules (each is a decision about what the model may learn from):

* only ``valid`` rows with a meaningful, positive time are learned from: a config that failed
  has no speed, and prediction never ranks it (the solvers' validity rules exclude it);
* ``stopped_early`` rows are kept: their time is a rough single estimate, but "clearly slower
  than the best" is exactly what the model must learn about them;
* the same (problem, config) measured twice in one sweep (a part copied into two chunk files)
  is one row; measured in several sweeps, the re-timed rows are preferred (their time is the
  median over interleaved rounds), those of the latest re-timing first (a re-timing pass,
  :mod:`tilepick.bench.retime`, times a problem's contenders together, so its values share
  one timing regime; an older re-timing's do not), and the median time of the preferred
  rows is kept;
* rows are sorted by problem so that each problem is one contiguous query (LambdaRank);
* a model's Dataset (:func:`load`) leaves out the cuBLASLt entries' rows
  (:data:`~tilepick.config.NAMED_VENDOR_FAMILIES`): this ranker does not rank them (the entry
  model of ``tilepick lt`` does, from its own probes), so its labels are relative to the best
  of what it ranks. Session 46's first `train_low_flop` sweep sampled them with the rest;
  sweeps leave them out by default since (:data:`tilepick.bench.sweep.SWEPT_FAMILIES`);
  :func:`clean` keeps them for the tools that re-time contenders.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from tilepick.config import NAMED_VENDOR_FAMILIES
from tilepick.data.io import part_files, read_frame
from tilepick.data.schema import RETIME_PREFIX
from tilepick.features import frame_matrix
from tilepick.hardware import HardwareProfile, arch_label, profile


class DataError(ValueError):
    """Training or evaluation data that cannot be used; the message says why."""


def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def data_files(paths) -> list[Path]:
    files: list[Path] = []
    for p in paths:
        if not Path(p).exists():
            raise DataError(f"data path {p} does not exist")
        found = list(dict.fromkeys(part_files(p)))
        if not found:
            raise DataError(f"no parquet files under {p}")
        files.extend(found)
    return list(dict.fromkeys(files))


def read_raw(paths) -> pd.DataFrame:
    """Every row of the parquet files under ``paths``, as measured (DataError if none)."""
    raw = pd.concat([read_frame(f) for f in data_files(paths)], ignore_index=True)
    if raw.empty:
        raise DataError(f"no rows in {[str(p) for p in paths]}")
    return raw


def shape_group(frame: pd.DataFrame) -> np.ndarray:
    """The cross-validation group of each row: its (M, N, K), whatever the dtype, layout or
    strides, so one shape is never both trained on and tested on."""
    return (frame["m"].astype(str) + "x" + frame["n"].astype(str) + "x"
            + frame["k"].astype(str)).to_numpy()


#: what a row's time is for learning: "retimed" (the re-timing rounds' median where a config
#: was re-timed, else its screening median), "screen" (the screening samples for every row:
#: one timing regime per problem; a re-timed row's screening median is estimated as
#: sqrt(p20 x p80) of its screening samples, which the sweep keeps) or "aligned" ("retimed",
#: with every other row of a problem that has a re-timing pass scaled into the regime of its
#: latest pass, see :func:`_align_to_pass`)
LABEL_TIMES = ("retimed", "screen", "aligned")
#: the fewest configs a sweep's rows of one timing regime must share with a problem's pass for
#: their own scale factor; fewer: the problem's factor over every shared config
ALIGN_MIN_SHARED = 2


def clean(frame: pd.DataFrame, dtype=None, arch: str | None = None,
          meaningful_only: bool = True, within_pass: bool = False,
          label_times: str = "retimed") -> pd.DataFrame:
    """The learnable rows of a dataset frame (see the module doc), sorted by problem.

    ``dtype``: one dtype token or a collection of them (a pooled training set).
    ``meaningful_only=False`` keeps interpreter timings (the CPU tests of tools that read
    datasets the way the model does). ``within_pass``: a problem re-timed by a re-timing pass
    (:mod:`tilepick.bench.retime`) keeps only the rows of its latest pass, so that its best
    and every pick come from the same rounds (``validate``); other problems keep every row.
    ``label_times``: :data:`LABEL_TIMES`."""
    if label_times not in LABEL_TIMES:
        raise ValueError(f"label_times must be one of {LABEL_TIMES}, got {label_times!r}")
    df = frame
    if "op" in df:
        df = df[df["op"].fillna("gemm") == "gemm"]
    if dtype is not None:
        wanted = [dtype] if isinstance(dtype, str) else list(dtype)
        df = df[df["dtype"].isin(wanted)]
    if arch is not None and "gpu_name" in df:
        archs = df["gpu_name"].fillna("").map(arch_label)
        df = df[archs == arch]
    ok = df["valid"].fillna(False).astype(bool) & df["time_ms"].notna() & (df["time_ms"] > 0)
    if meaningful_only and "timing_meaningful" in df:
        ok &= df["timing_meaningful"].fillna(True).astype(bool)
    df = df[ok].copy()
    df["retimed"] = df["retimed"].fillna(False).astype(bool) if "retimed" in df else False
    df["stopped_early"] = (df["stopped_early"].fillna(False).astype(bool)
                           if "stopped_early" in df else False)
    if "sweep_id" in df:
        df = df.drop_duplicates(subset=["problem_key", "config_id", "sweep_id"], keep="last")
        if within_pass:
            df = _latest_pass(df)
    if label_times == "aligned" and "sweep_id" in df:
        df = _align_to_pass(df)
    df = _merge_repeats(df)
    if label_times == "screen":
        df = _screening_times(df)
    flops = 2.0 * df["m"] * df["n"] * df["k"] * df["batch"]
    df["tflops"] = flops / (df["time_ms"] * 1e9)
    return df.sort_values(["problem_key", "config_id"], kind="stable").reset_index(drop=True)


def _screening_times(df: pd.DataFrame) -> pd.DataFrame:
    """Re-timed rows back in the screening regime. The sweep overwrites a re-timed row's time
    with the rounds' median but keeps the p20 / p80 of its screening samples; for screened
    rows sqrt(p20 x p80) is within 1% of the median for 90% of them (BENCHMARKS, session 13).
    Rows of a re-timing pass (no screening samples of their own: their p20 / p80 are of the
    rounds) keep their time."""
    r = (df["retimed"].to_numpy(bool) & df["time_p20_ms"].notna().to_numpy()
         & df["time_p80_ms"].notna().to_numpy()
         & ~df["sweep_id"].fillna("").str.startswith(RETIME_PREFIX).to_numpy())
    if r.any():
        df = df.copy()
        df.loc[r, "time_ms"] = np.sqrt(df.loc[r, "time_p20_ms"] * df.loc[r, "time_p80_ms"])
    return df


def _align_to_pass(df: pd.DataFrame) -> pd.DataFrame:
    """Each problem with a re-timing pass: its rows outside its latest pass, scaled into that
    pass's timing regime.

    Why: a pass re-times a problem's best candidates in rounds run back to back, and on
    kernels of milliseconds those read ~6% slower than the sweep's own re-timing and ~10% slower
    than its single screening medians (the GPU runs hotter; session 27's passes over the
    training problems above 1 TFLOP). Rows the pass did not re-time keep their screening
    times, so next to the pass's rows they read several % too fast: a config at 0.88 of the
    best in one regime looks 0.95 of it across two. The factor of a sweep's rows of one kind
    (re-timed or screened) is the median, over the configs they share with the pass, of the
    pass's time over theirs (at least :data:`ALIGN_MIN_SHARED` configs; else the problem's
    median over every shared config; none shared: unscaled)."""
    df = df.reset_index(drop=True)   # rows are set by index label below
    ref_sid = _latest_pass_ids(df)
    if ref_sid is None:
        return df
    is_ref = (df["sweep_id"] == ref_sid).to_numpy()
    other = df[ref_sid.notna().to_numpy() & ~is_ref]
    if other.empty:
        return df
    ref = df[is_ref].set_index(["problem_key", "config_id"])["time_ms"]
    ref = ref[~ref.index.duplicated(keep="last")]
    at = pd.MultiIndex.from_arrays([other["problem_key"], other["config_id"]])
    ratio = pd.Series(ref.reindex(at).to_numpy() / other["time_ms"].to_numpy(),
                      index=other.index)
    kind = [other["problem_key"], other["sweep_id"].fillna(""), other["retimed"]]
    own = ratio.groupby(kind).transform("median")
    shared = ratio.notna().groupby(kind).transform("sum")
    whole = ratio.groupby(other["problem_key"]).transform("median")
    factor = own.where(shared >= ALIGN_MIN_SHARED, whole).fillna(1.0)
    df.loc[other.index, "time_ms"] = other["time_ms"] * factor
    return df


def _latest_pass_ids(df: pd.DataFrame) -> pd.Series | None:
    """Per row, the sweep id of its problem's latest re-timing pass (NaN where the problem has
    none); None where no row is of a pass."""
    in_pass = df["sweep_id"].fillna("").str.startswith(RETIME_PREFIX)
    if not in_pass.any():
        return None
    passes = df[in_pass].sort_values(["date", "sweep_id"], kind="stable")
    return df["problem_key"].map(passes.groupby("problem_key")["sweep_id"].last())


def _latest_pass(df: pd.DataFrame) -> pd.DataFrame:
    """Each problem with re-timing pass rows: only those of its latest pass."""
    chosen = _latest_pass_ids(df)
    if chosen is None:
        return df
    return df[chosen.isna() | (df["sweep_id"] == chosen)]


def _merge_repeats(df: pd.DataFrame) -> pd.DataFrame:
    dup = df.duplicated(subset=["problem_key", "config_id"], keep=False)
    if not dup.any():
        return df
    single, multi = df[~dup], df[dup]
    # Re-timed measurements win over screening ones, the latest re-timing over older ones;
    # the median of the winners is kept.
    by = multi.groupby(["problem_key", "config_id"])
    best_kind = by["retimed"].transform("max")
    multi = multi[multi["retimed"] == best_kind]
    if "date" in multi:
        when = multi["date"].fillna("").where(multi["retimed"], "")
        latest = when.groupby([multi["problem_key"], multi["config_id"]]).transform("max")
        multi = multi[when == latest]
    med = multi.groupby(["problem_key", "config_id"])["time_ms"].transform("median")
    multi = multi.assign(time_ms=med).drop_duplicates(subset=["problem_key", "config_id"],
                                                      keep="last")
    return pd.concat([single, multi], ignore_index=True)


@dataclass
class Dataset:
    """Featurised rows, with what evaluation needs per row and per problem."""

    frame: pd.DataFrame
    x: np.ndarray
    hw: HardwareProfile
    files: list = field(default_factory=list)   # [{"path", "sha256", "bytes"}]
    dtype: str | None = None    # the dtype a model trained on it serves (None: the frame's)
    held_out_problems: int = 0  # problems left out by load(hold_out=True)

    def __post_init__(self):
        f = self.frame
        if self.dtype is None and len(f):
            self.dtype = str(f["dtype"].iloc[0])
        self.problem_keys, self.problem_index = np.unique(f["problem_key"].to_numpy(),
                                                          return_inverse=True)
        self.tflops = f["tflops"].to_numpy(dtype=np.float64)
        best = f.groupby("problem_key")["tflops"].transform("max").to_numpy(dtype=np.float64)
        self.best = best
        self.rel = self.tflops / best
        self.groups = shape_group(f)
        self.config_ids = f["config_id"].to_numpy()
        # Contiguous problem blocks (rows are sorted by problem): start offsets and sizes.
        starts = np.flatnonzero(np.r_[True, self.problem_index[1:] != self.problem_index[:-1]])
        self.starts = starts
        self.sizes = np.diff(np.r_[starts, len(f)])

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def n_problems(self) -> int:
        return len(self.problem_keys)

    @functools.cached_property
    def served(self) -> np.ndarray:
        """Per problem: is it of the served dtype? (False for the rows of pooled dtypes, which
        are trained on but not scored: a model is judged on the problems it serves.)"""
        return self.frame["dtype"].to_numpy()[self.starts].astype(str) == self.dtype

    @property
    def pooled_dtypes(self) -> list[str]:
        """The dtypes trained on besides the served one."""
        return sorted(set(self.frame["dtype"].astype(str)) - {self.dtype})

    @functools.cached_property
    def best_row(self) -> np.ndarray:
        """Per problem: the row of its best measured candidate (the first one, on ties)."""
        return pd.Series(self.tflops).groupby(self.problem_index).idxmax().to_numpy()

    @functools.cached_property
    def problem_groups(self) -> dict[str, np.ndarray]:
        """Per-problem labels the metrics are sliced by (besides M): the layout, and the
        family of the fastest measured config (where the model misses matters by family)."""
        return {"layout": self.frame["layout"].to_numpy()[self.starts],
                "winner_family": self.frame["family"].to_numpy()[self.best_row]}

    def subset_problems(self, problem_mask: np.ndarray) -> "Dataset":
        rows = problem_mask[self.problem_index]
        return Dataset(self.frame[rows].reset_index(drop=True), self.x[rows], self.hw,
                       self.files, self.dtype)

    def served_only(self) -> "Dataset":
        """The problems of the served dtype (self when nothing is pooled)."""
        return self if self.served.all() else self.subset_problems(self.served)


def build(frame: pd.DataFrame, hw: HardwareProfile, files=None, dtype: str | None = None,
          held_out_problems: int = 0) -> Dataset:
    """Features for a cleaned frame."""
    if frame.empty:
        raise DataError("no valid, timed rows to learn from")
    return Dataset(frame, frame_matrix(frame, hw), hw, files or [], dtype, held_out_problems)


def drop_held_out(frame: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``frame`` without the problems on a held-out weight shape
    (:func:`tilepick.bench.shapes.held_out_weights`), and how many problems that was.

    Why at load time: the validation sets judge a model on weights it never saw at any M, and
    a training list drawn by a script that forgot the rule (session 33 found 8 such problems in
    `train_rr_decode/` and `train_mid_m/`) would otherwise leak them into the model."""
    from tilepick.bench.shapes import held_out_weights

    nk = pd.MultiIndex.from_arrays([frame["n"].to_numpy(), frame["k"].to_numpy()])
    on_held = nk.isin(list(held_out_weights()))
    dropped = int(frame.loc[on_held, "problem_key"].nunique())
    return frame.loc[~on_held].reset_index(drop=True), dropped


def measured_pairs(raw: pd.DataFrame) -> list[tuple[str, str]]:
    """The (dtype, arch) pairs that rows of ``raw`` were measured in, sorted (a GPU name no
    profile knows stands for itself): what an error names when the wanted pair is missing."""
    return sorted({(str(d), arch_label(str(g)))
                   for d, g in zip(raw["dtype"], raw["gpu_name"].fillna(""))})


def load(paths, dtype: str = "bf16", arch: str = "h200", pool=(),
         within_pass: bool = False, label_times: str = "retimed",
         hold_out: bool = False) -> Dataset:
    """Read, clean and featurise every parquet file under ``paths`` for one dtype and GPU
    (``within_pass``, ``label_times``: see :func:`clean`; ``hold_out``: leave out the
    problems on held-out weight shapes, :func:`drop_held_out`: training data only).

    ``pool``: further dtypes whose rows are learned from too (bf16 and fp16 run the same
    tensor-core rate on Hopper, so their rankings share most of their structure; dtype is a
    feature). The problems of ``dtype`` must be there; the pooled ones are optional."""
    raw = read_raw(paths)
    pool = [d for d in dict.fromkeys(pool) if d != dtype]
    frame = clean(raw, dtype=[dtype, *pool], arch=arch, within_pass=within_pass,
                  label_times=label_times)
    if not (frame["dtype"] == dtype).any():
        raise DataError(f"no valid {dtype} rows measured on {arch} in "
                        f"{[str(p) for p in paths]} (found dtype/arch pairs: "
                        f"{measured_pairs(raw)[:6]})")
    frame = frame[~frame["family"].isin(NAMED_VENDOR_FAMILIES)].reset_index(drop=True)
    dropped = 0
    if hold_out:
        frame, dropped = drop_held_out(frame)
    meta = [{"path": str(f), "sha256": sha256_file(f), "bytes": os.path.getsize(f)}
            for f in data_files(paths)]
    return build(frame, profile(arch), meta, dtype, dropped)
