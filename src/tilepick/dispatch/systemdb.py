"""The shipped, read-only system perf-db: the measured datasets' winners, for the `db` mode.

Why: the sweeps already measured thousands of problems on the GPU the shipped models serve;
a user with the same GPU and software stack should get those winners without benchmarking
(MIOpen ships its find-db the same way). Each dataset row carries its provenance, so a
problem's record is stored under the environment it was measured in: GPU name, driver, CUDA,
torch and Triton versions from the row, and the source key (the kernel sources and the launch
plans' fingerprint, ``perfdb.hash_sources``) *at the commit that measured it*, worked out from
that commit's tree (``git archive``; its plans computed by running ``solvers/fingerprint.py``
on it). Rows measured with other kernels or plans than the current ones are left out (they
describe kernels that no longer exist), unless an A/B run showed those kernels as fast as
today's (``perfdb.SAME_SPEED``: then they are stored under today's key); records of another
software stack are kept but only match a machine with that stack (``Environment.key``).

A record holds the problem's fastest measured candidate and the timings of its
``TOP_TIMINGS`` fastest (re-timed medians where the sweep re-timed them), plus cuBLAS. Its mode
is ``exhaustive`` for a dataset where every valid config was measured (the validation sets:
``--exhaustive``), else ``sweep``: the best of a sample (which always holds cuBLAS, the
tutorial's configs and, for ``train_extra``, the model's top 8), which the `db` and `hybrid`
modes serve and the `exhaustive` mode does not trust.

    tilepick db build --data data/gemm/bf16/h200/train_rr ... --out models/perfdb_h200.sqlite.gz
    tilepick db build --exhaustive --data data/gemm/bf16/h200/validation ... --out (same file)

It ships gzip'd (``.sqlite.gz``: 1 MB instead of 5.4): readers unpack it once into the user's
cache (``perfdb.unpacked``).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import sqlite3
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import pandas as pd

from tilepick.config import VENDOR_FAMILIES
from tilepick.data.io import read_frame
from tilepick.dispatch.perfdb import (GZ_SUFFIX, KERNEL_SOURCE_DIR, Environment, PerfDb,
                                      hash_sources, kernel_source_hash, pack,
                                      same_speed_sources)
from tilepick.solvers import fingerprint as fingerprint_module

TOP_TIMINGS = 5
_PACKAGE = "src/tilepick"


def source_hash_at(commit: str, repo: Path) -> str | None:
    """``kernel_source_hash`` of the tree at ``commit`` (None: git does not know the commit, or
    the fingerprint script cannot run on its sources)."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            tree = subprocess.run(["git", "-C", str(repo), "archive", commit, _PACKAGE],
                                  check=True, capture_output=True).stdout
            with tarfile.open(fileobj=io.BytesIO(tree)) as tar:
                tar.extractall(tmp, filter="data")
            env = {**os.environ, "PYTHONPATH": str(Path(tmp) / "src"), "TILEPICK_ARCH": "h200",
                   "TRITON_INTERPRET": "1"}   # no GPU is touched: plans are arithmetic
            fingerprint = subprocess.run(
                [sys.executable, "-c", Path(fingerprint_module.__file__).read_text()], check=True,
                capture_output=True, text=True, env=env, cwd=tmp).stdout.strip()
        except (subprocess.CalledProcessError, FileNotFoundError, tarfile.TarError):
            return None
        kernels = Path(tmp) / _PACKAGE / KERNEL_SOURCE_DIR
        return hash_sources({f.name: f.read_bytes() for f in kernels.glob("*.py")}, fingerprint)


def _records(frame: pd.DataFrame):
    """(problem_key, winner, timings) per problem of one environment's rows."""
    for key, rows in frame.groupby("problem_key", sort=True):
        rows = rows.sort_values(["time_ms", "config_id"])
        keep = rows.head(TOP_TIMINGS)
        vendor = rows[rows["config_id"].isin(VENDOR_FAMILIES) & ~rows.index.isin(keep.index)]
        stored = pd.concat([keep, vendor])
        timings = {cid: (float(ms), "ok", None)
                   for cid, ms in zip(stored["config_id"], stored["time_ms"])}
        yield key, str(rows["config_id"].iloc[0]), timings


def build(data_paths, out, exhaustive: bool = False, repo: Path | None = None,
          log=lambda msg: None) -> dict:
    """Add the datasets' winners to the perf-db at ``out``; returns counts by outcome. An
    ``out`` ending in ``.gz`` (the shipped form) is unpacked, added to and packed again."""
    out = Path(out)
    if not out.name.endswith(GZ_SUFFIX):
        return _build(data_paths, out, exhaustive, repo, log)
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / out.name[:-len(GZ_SUFFIX)]
        if out.exists():
            plain.write_bytes(gzip.decompress(out.read_bytes()))
        summary = _build(data_paths, plain, exhaustive, repo, log)
        pack(plain, out)
    return summary


def _build(data_paths, out: Path, exhaustive: bool, repo: Path | None, log) -> dict:
    from tilepick.model.dataset import clean, data_files

    repo = repo or Path(__file__).resolve().parents[3]
    current = kernel_source_hash()
    frame = pd.concat([read_frame(f) for f in data_files(data_paths)], ignore_index=True)
    # valid, meaningful, re-timed medians preferred, one row per config; a problem with a
    # re-timing pass: its pass's contenders only (its winner and timings from the same rounds)
    frame = clean(frame, within_pass=True)
    db = PerfDb(out)
    if not db.usable:
        raise OSError(f"cannot write the perf-db {out}: {db.error}")
    env_cols = ["gpu_name", "driver_version", "cuda_version", "torch_version",
                "triton_version"]
    hashes = {c: source_hash_at(c, repo) for c in frame["tilepick_commit"].astype(str).unique()}
    source = frame["tilepick_commit"].astype(str).map(hashes)
    # today's key, and earlier ones whose kernels were measured to run at today's speed
    accepted = source.isin(same_speed_sources(current))
    summary = {"problems": 0, "exhaustive": 0, "sweep": 0,
               "stale_kernel_source": int(frame.loc[source.notna() & ~accepted,
                                                    "problem_key"].nunique()),
               "unknown_commit": int(frame.loc[source.isna(), "problem_key"].nunique())}
    for commit, h in sorted(hashes.items()):
        if h is None or h not in same_speed_sources(current):
            log(f"rows measured at {commit}: "
                f"{'not in this repository' if h is None else 'other kernels or launch plans than today'}"
                ", left out")
        elif h != current:
            log(f"rows measured at {commit}: earlier kernels measured to run at today's speed "
                "(perfdb.SAME_SPEED), kept")
    # A problem some of whose rows were left out is left out whole: the best of what remains
    # (e.g. only the families re-measured after a kernel fix) is no winner to serve.
    partial = set(frame.loc[~accepted, "problem_key"])
    frame = frame[accepted & ~frame["problem_key"].isin(partial)]
    for values, rows in frame.groupby(env_cols, sort=True, dropna=False):
        env = Environment(*(str(v) for v in values), current)
        for key, winner, timings in _records(rows):
            mode = "exhaustive" if exhaustive else "sweep"
            db.record(env, key, winner, mode, timings)
            summary["problems"] += 1
            summary[mode] += 1
        log(f"{rows['problem_key'].nunique()} problems measured on {values[0]} (driver "
            f"{values[1]}, CUDA {values[2]}, torch {values[3]}, Triton {values[4]}) stored")
    db.close()
    # a shipped file is opened read-only: no write-ahead log to replay, no free pages
    with contextlib.closing(sqlite3.connect(out)) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("VACUUM")
    return summary
