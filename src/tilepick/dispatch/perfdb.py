"""The performance database: what was benchmarked for a problem, and which candidate won.

SQLite through the standard library, normalised like MIOpen's perf-db: an environment table
(GPU, driver/CUDA, torch, Triton, kernel source hash), a problem table keyed by (environment,
problem key), and per problem the winner plus the timing of every benchmarked candidate. An
upgrade of any component changes the environment key, so stale entries are simply not found.

Robustness: WAL journaling and transactions with retries let several processes tune at once
without losing records; a corrupt or unreadable database is reported once (a warning) and
bypassed, never a crash.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import gzip
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS envs (
    env_key TEXT PRIMARY KEY, gpu_name TEXT, driver TEXT, cuda TEXT, torch TEXT, triton TEXT,
    source_hash TEXT);
CREATE TABLE IF NOT EXISTS problems (
    id INTEGER PRIMARY KEY, env_key TEXT NOT NULL REFERENCES envs(env_key),
    problem_key TEXT NOT NULL, winner TEXT, mode TEXT, date TEXT,
    UNIQUE (env_key, problem_key));
CREATE TABLE IF NOT EXISTS timings (
    problem_id INTEGER NOT NULL REFERENCES problems(id), config_id TEXT NOT NULL,
    ms REAL, status TEXT NOT NULL, reason TEXT, date TEXT,
    PRIMARY KEY (problem_id, config_id));
"""


class PerfDbError(RuntimeError):
    """The database cannot be used (corrupt, unreadable, wrong schema version)."""


@dataclass(frozen=True)
class Environment:
    """What a measurement depends on besides the problem; entries of other environments are
    ignored, so an upgrade never serves a stale winner."""

    gpu_name: str
    driver: str
    cuda: str
    torch: str
    triton: str
    source_hash: str

    @property
    def key(self) -> str:
        text = "|".join((self.gpu_name, self.driver, self.cuda, self.torch, self.triton,
                         self.source_hash))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @classmethod
    def current(cls) -> "Environment":
        from tilepick.provenance import collect

        info = collect()
        return cls(info["gpu_name"], info["driver_version"], info["cuda_version"],
                   info["torch_version"], info["triton_version"], kernel_source_hash())


KERNEL_SOURCE_DIR = "kernels"   # the package folder of the Triton kernels


def hash_sources(kernel_files: dict[str, bytes], plan_fingerprint: str) -> str:
    """The source key of timings: the kernels' ``.py`` files (by name) and the launch plans'
    fingerprint (``solvers.fingerprint``). Solver edits that leave the plans as they were
    (rules, host paths, refactors) keep the key; a changed kernel or plan retires it."""
    h = hashlib.sha256()
    for name in sorted(n for n in kernel_files if n.endswith(".py")):
        h.update(name.encode())
        h.update(kernel_files[name])
    h.update(plan_fingerprint.encode())
    return h.hexdigest()[:16]


# Source keys whose kernels were measured to run as fast as a later key's: an edit that
# changes no timing (its evidence, a ``benchmarks/kernel_ab.py`` run on the GPU, is in
# BENCHMARKS.md) need not retire every measured winner. The system db builder stores rows of
# a vouched-for key under the later one; user dbs stay keyed by what they measured.
# key -> the earlier keys it vouches for.
SAME_SPEED: dict[str, tuple[str, ...]] = {
    # session 14: the pointer kernel reads its split count from the grid, no constexpr
    # (BENCHMARKS "fewer binaries"; pass-to-pass ratios of 4,400 pointer and split-K rows)
    "8f5667bc20d5f19f": ("9b19a46c8e124169",),
    # session 16: a family added (gemm.gemv, kernels/gemm_gemv.py), nothing else changed: the
    # earlier kernels' files are byte-identical and their plan code untouched (against 7307a75
    # the kernels folder gains one file and solvers/triton_gemm.py only appends GemvSolver)
    "83b3ec04b34ee491": ("8f5667bc20d5f19f",),
    # session 17: the GEMV takes block_m rows of A (new constexprs BLOCK_M, SUM_K, EVEN_M); at
    # block_m 1 its PTX is the single-row kernel's but for one row-mask compare, and
    # `kernel_ab.py --kernel gemv` on 24 of the family's best M = 1 configs (H200) read new/old
    # 0.996-1.012 on the problems above 25 us (round spreads <= 2.4%; the smaller ones' spreads
    # were larger than any effect). The other kernels' files are byte-identical.
    "f1b58e60b33ec825": ("83b3ec04b34ee491",),
    # session 20: two families added, each a kernel appended to an existing file
    # (gemm.splitk_fused in kernels/gemm_ptr.py, gemm.tma_splitk in kernels/gemm_tma.py); the
    # earlier kernels' shared parts moved unchanged into jit helpers the new kernels call too
    # (ptr_partial: gemm_ptr_kernel's tile loop; _k_step: one TMA K step; the new kernels
    # also share kernels/common.meet_partials, which no earlier kernel calls). Compiled for sm_90
    # on the CPU (benchmarks/ptx_ab.py): the TMA kernels' PTX code is identical but for empty
    # labels (16 sets); the pointer kernel's too with split-K (16 sets), and without it the
    # epilogue waits for the last cp.async group a few integer instructions earlier (16 sets).
    "a9d95dd383f65cfd": ("f1b58e60b33ec825",),
    # session 28: a family added (gemm.gemv_t, the GEMV kernel on C^T), whose one change to
    # the GEMV kernel is C's column stride as a last run-time argument (1 for gemm.gemv; the
    # store of a block_m x block_n output tile). Every earlier family's launch plan is the
    # same (all of their configs on the fingerprint's probes and two decode problems: 56,040
    # plans, equal); `kernel_ab.py --kernel gemv --drop-last-args 1` on 12 of the GEMV's best
    # configs (H200, commit ee3137c) read new/old median 1.001, 0.999-1.001 on the three
    # above 100 us (the small ones' round spreads, 6-15%, exceed any effect). The other
    # kernels' files are byte-identical.
    "6a07b51fb8129f8e": ("a9d95dd383f65cfd",),
    # session 29: gemm.gemv_t serves a row-major B of any width (N <= 4), its K x N tile
    # loaded transposed under a new constexpr A_T that defaults to off and is set only in
    # those plans, which no earlier key could serve. Every other plan is the same (the earlier
    # families': 56,040 on the probes, benchmarks/analysis_s28/plans_unchanged.py; gemm.gemv_t's
    # on every problem of its datasets: 40,172), and the kernel compiled for sm_90 without A_T
    # gives the earlier PTX (`ptx_ab.py --kernel gemv`: 16 of 16 sets identical).
    "d782cc68d36713cc": ("6a07b51fb8129f8e",),
    # session 29, later: a family added (gemm.gemv_t_splitk, a kernel appended to
    # kernels/gemm_gemv.py); the GEMV kernel's loop moved unchanged into a jit helper both call
    # (gemv_partial). Compiled for sm_90 (`ptx_ab.py --kernel gemv` and `--kernel gemv_t`
    # against the d782cc68 file): 24 of 24 sets identical but for empty labels; the earlier
    # families' 56,040 probe plans and gemm.gemv_t's 58,616 plans of its datasets are equal.
    "0afec108f0cca52a": ("d782cc68d36713cc",),
    # session 30: gemm.gemv loads several rows of a column-major A (layout cc) as a transposed
    # tile (A_T, as gemm.gemv_t loads a row-major B's columns) instead of one element at a
    # time: a plan change only, the kernels' files byte-identical. Every other plan is the
    # same (`analysis_s28/plans_unchanged.py --each`: of 56,040 probe plans only gemm.gemv's on
    # the probes with a column-major A differ; `analysis_s29/gemv_t_plans.py --family ...`:
    # the 32,236 / 71,161 / 75,703 measured plans of the three GEMV families equal), and no
    # dataset measured gemm.gemv on a column-major A.
    "05b794d14934d80d": ("0afec108f0cca52a",),
    # session 31: the fingerprint also hashes the host-side plan of gemm.cublas_repack (its
    # padded copies), a family added this session whose rows were all measured with today's
    # copies (the first version's rows, which padded leading dimensions only, were dropped
    # before any was committed); the kernels' files and every Triton plan are unchanged (the
    # fingerprint of the trees of this session's data commits, e870b7f-04f5846, is 9c24203044).
    "367de8060cac8600": ("05b794d14934d80d",),
    # session 32: gemm.cublas_repack's copies became one Triton launch each (kernels/pad_copy.py,
    # a file of its own; its host_plan names the copies and their tiles). No other kernel file
    # or plan changed. Every bf16 row of the family was dropped from the datasets and measured
    # again at this key (PROVENANCE "Session 32"), so a system db built from them serves none
    # of the old copies' timings; a user db's records of the old key may still hold them: they
    # read the family 1.1-1.5x slower than it now runs (median), never faster.
    "d9244d5ddae278af": ("367de8060cac8600",),
    # session 59: a family added (gemm.gemv_n_splitk, the x @ W decode GEMV), its kernel in a
    # file of its own (kernels/gemm_gemv_n.py): every earlier kernel file is byte-identical,
    # and without the new family's plans the fingerprint is the earlier one, 707471ab21c88ace
    # (tests/test_cublaslt_solver.py::test_plan_fingerprint_unchanged)
    "02da2654823f1986": ("eec0ef05ff38af3e",),
}


def same_speed_sources(key: str) -> set[str]:
    """``key`` and every earlier source key measured to run at its speed (transitively)."""
    seen, todo = {key}, [key]
    while todo:
        for earlier in SAME_SPEED.get(todo.pop(), ()):
            if earlier not in seen:
                seen.add(earlier)
                todo.append(earlier)
    return seen


_source_hash: str | None = None


def kernel_source_hash() -> str:
    """This installation's source key (computed once per process: ~0.1 s of launch plans)."""
    global _source_hash
    if _source_hash is None:
        from tilepick.solvers.fingerprint import plan_fingerprint

        root = Path(__file__).resolve().parent.parent / KERNEL_SOURCE_DIR
        _source_hash = hash_sources({f.name: f.read_bytes() for f in root.glob("*.py")},
                                    plan_fingerprint())
    return _source_hash


@dataclass
class Record:
    problem_key: str
    winner: str | None
    mode: str
    date: str
    timings: dict = field(default_factory=dict)  # config_id -> (ms | None, status, reason)

    @property
    def invalid(self) -> set[str]:
        return {cid for cid, (_, status, _) in self.timings.items() if status != "ok"}


def default_user_db_path() -> Path:
    env = os.environ.get("TILEPICK_USER_DB")
    if env:
        return Path(env)
    from tilepick.runtime import cache_root

    return cache_root() / "perfdb.sqlite"


ENV_SYSTEM_DB = "TILEPICK_SYSTEM_DB"


def default_system_db(arch: str) -> Path | None:
    """``$TILEPICK_SYSTEM_DB`` (a path; ``off`` or empty: none), else the shipped db of the
    arch (``models/perfdb_<arch>.sqlite``, found like the shipped models), if there is one."""
    from tilepick.model.artifacts import search_roots

    env = os.environ.get(ENV_SYSTEM_DB)
    if env is not None:
        return None if env.strip().lower() in ("", "off", "0", "none") else Path(env)
    for root in search_roots():
        for name in (f"perfdb_{arch}.sqlite", f"perfdb_{arch}.sqlite.gz"):
            if (root / name).is_file():
                return root / name
    return None


GZ_SUFFIX = ".gz"


def unpacked(path: Path) -> Path:
    """The SQLite file a gzip'd read-only db (``*.sqlite.gz``) holds, decompressed once into the
    user's cache, named by the archive's digest (a new archive gets a new file).

    Why gzip'd: the shipped system db is 5.4 MB of SQLite pages and 1 MB compressed, and the
    repository travels whole to the GPU machines under an upload limit it nearly fills."""
    from tilepick.runtime import cache_root

    data = path.read_bytes()
    stem = path.name[:-len(GZ_SUFFIX)]
    base = cache_root() / "systemdb"
    target = base / f"{stem}-{hashlib.sha256(data).hexdigest()[:16]}"
    if target.is_file():
        return target
    raw = gzip.decompress(data)   # a corrupt archive raises here: the caller bypasses the db
    try:
        base.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=base, suffix=".part")
        private = False
    except OSError:   # no writable cache: a private temporary copy
        fd, tmp = tempfile.mkstemp(suffix=".sqlite")
        private = True
    with os.fdopen(fd, "wb") as f:
        f.write(raw)
    if private:
        return Path(tmp)
    os.replace(tmp, target)   # atomic: concurrent processes see the whole file or none
    for old in base.glob(f"{stem}-*"):   # copies of earlier archives (open ones stay readable)
        if old != target and old.suffix != ".part":
            with contextlib.suppress(OSError):
                old.unlink()
    return target


def pack(plain: Path, out: Path) -> None:
    """``plain`` gzip'd into ``out`` reproducibly (no timestamp) and atomically."""
    tmp = out.with_name(out.name + ".part")
    with open(plain, "rb") as src, open(tmp, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
        shutil.copyfileobj(src, gz)
    os.replace(tmp, out)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class PerfDb:
    """One SQLite perf-db file. ``readonly`` databases (the shipped system db) are opened in
    SQLite's read-only mode and never written."""

    def __init__(self, path: str | os.PathLike, readonly: bool = False, retries: int = 20):
        self.path = Path(path)
        self.readonly = readonly
        self.retries = retries
        self._broken: str | None = None
        self._local = threading.local()

    # -- connection ---------------------------------------------------------------------------
    # One connection per thread. Why: an sqlite3 connection refuses every thread but the one
    # that made it, and a dispatcher is called from others: autograd runs backward GEMMs on its
    # own device threads, servers call from pools. A shared connection made the first such call
    # declare the user db and the system db unusable for the rest of the process (seen on the
    # GPU: benchmarks/api_edge_check.py, session 44). WAL lets the connections read and write
    # side by side, as it does for several processes.
    @property
    def _conn(self) -> sqlite3.Connection | None:
        return getattr(self._local, "conn", None)

    @_conn.setter
    def _conn(self, conn: sqlite3.Connection | None) -> None:
        self._local.conn = conn

    _OPEN_ERRORS = (sqlite3.DatabaseError, PerfDbError, OSError, ValueError, EOFError)

    def _connect(self, warn: bool = True) -> sqlite3.Connection | None:
        """This thread's connection; None when the db is bypassed (or read-only and missing).
        The first failure to open marks the db broken, with a warning where ``warn``."""
        if self._broken is not None:
            return None
        if self._conn is None:
            try:
                self._conn = self._open()
            except self._OPEN_ERRORS as exc:   # (a corrupt gzip archive: BadGzipFile is OSError)
                self._disable(exc, warn)
        return self._conn

    def _open(self) -> sqlite3.Connection | None:
        """A new connection (None: a read-only db that does not exist); raises what is wrong."""
        if self.readonly:
            if not self.path.exists():
                return None
            path = unpacked(self.path) if self.path.name.endswith(GZ_SUFFIX) else self.path
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
        else:
            if self.path.name.endswith(GZ_SUFFIX):
                raise PerfDbError("a packed (.gz) perf-db is read-only (`tilepick db build` "
                                  "adds datasets to one)")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_SCHEMA)
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                         (str(SCHEMA_VERSION),))
            conn.commit()
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None or int(row[0]) != SCHEMA_VERSION:
            conn.close()
            raise PerfDbError(f"schema version {row[0] if row else None} != {SCHEMA_VERSION}")
        return conn

    def require(self) -> None:
        """Connect now, or raise PerfDbError naming the path and the reason, with no warning.

        Why: a dispatcher bypasses an unusable db with a warning and carries on, but a command
        asked to read or change this very db (``tilepick db ...``) must fail, and a read-only
        one must not pass a mistyped path off as an empty db."""
        if self._connect(warn=False) is not None:
            return
        if self._broken is None:
            raise PerfDbError(f"no perf-db at {self.path}")
        action = "read" if self.readonly else "open"
        raise PerfDbError(f"cannot {action} the perf-db {self.path}: {self._broken}")

    def _disable(self, exc: Exception, warn: bool = True) -> None:
        self._broken = f"{type(exc).__name__}: {exc}"
        if warn:
            warnings.warn(f"tilepick perf-db {self.path} is unusable and is bypassed "
                          f"({self._broken})", RuntimeWarning, stacklevel=3)

    @property
    def usable(self) -> bool:
        return self._connect() is not None

    @property
    def error(self) -> str | None:
        """Why the database is bypassed (None while it is usable)."""
        return self._broken

    @contextlib.contextmanager
    def _write(self):
        """A write transaction, retried while another process holds the lock."""
        conn = self._connect()
        if conn is None or self.readonly:
            yield None
            return
        for attempt in range(self.retries):
            try:
                conn.execute("BEGIN IMMEDIATE")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    self._disable(exc)
                    yield None
                    return
                time.sleep(min(0.5, 0.01 * 2 ** attempt))
        else:
            self._disable(sqlite3.OperationalError("database stayed locked"))
            yield None
            return
        try:
            yield conn
            conn.commit()
        except sqlite3.DatabaseError as exc:
            conn.rollback()
            self._disable(exc)
        except BaseException:   # the caller's own error: nothing of the transaction is kept
            conn.rollback()
            raise

    def close(self) -> None:
        """Close this thread's connection (another thread's closes with that thread)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- queries ------------------------------------------------------------------------------
    def lookup(self, env: Environment, problem_key: str) -> Record | None:
        """The entry of ``problem_key`` measured in this environment, if any."""
        return self.lookup_env_key(env.key, problem_key)

    def lookup_env_key(self, env_key: str, problem_key: str) -> Record | None:
        conn = self._connect()
        if conn is None:
            return None
        try:
            row = conn.execute("SELECT id, winner, mode, date FROM problems WHERE env_key=? AND "
                               "problem_key=?", (env_key, problem_key)).fetchone()
            if row is None:
                return None
            timings = {cid: (ms, status, reason) for cid, ms, status, reason in conn.execute(
                "SELECT config_id, ms, status, reason FROM timings WHERE problem_id=?", (row[0],))}
        except sqlite3.DatabaseError as exc:
            self._disable(exc)
            return None
        return Record(problem_key, row[1], row[2], row[3], timings)

    def _problem_id(self, conn, env: Environment, problem_key: str) -> int:
        conn.execute("INSERT OR IGNORE INTO envs VALUES (?,?,?,?,?,?,?)",
                     (env.key, env.gpu_name, env.driver, env.cuda, env.torch, env.triton,
                      env.source_hash))
        conn.execute("INSERT OR IGNORE INTO problems (env_key, problem_key) VALUES (?, ?)",
                     (env.key, problem_key))
        return conn.execute("SELECT id FROM problems WHERE env_key=? AND problem_key=?",
                            (env.key, problem_key)).fetchone()[0]

    def record(self, env: Environment, problem_key: str, winner: str | None, mode: str,
               timings: dict, date: str | None = None) -> bool:
        """Store a tuning result: ``timings`` maps config_id -> (ms | None, status, reason);
        ``date`` (default: now) is when it was measured (an imported entry keeps its own)."""
        with self._write() as conn:
            if conn is None:
                return False
            self._store(conn, env, problem_key, winner, mode, timings, date or _now())
            return True
        return False

    def _store(self, conn, env: Environment, problem_key: str, winner: str | None, mode: str,
               timings: dict, date: str) -> None:
        pid = self._problem_id(conn, env, problem_key)
        conn.execute("UPDATE problems SET winner=?, mode=?, date=? WHERE id=?",
                     (winner, mode, date, pid))
        conn.executemany("INSERT OR REPLACE INTO timings VALUES (?,?,?,?,?,?)",
                         [(pid, cid, ms, status, reason, date)
                          for cid, (ms, status, reason) in timings.items()])

    def mark_invalid(self, env: Environment, problem_key: str, config_id: str, reason: str) -> bool:
        """A candidate that failed for this problem: never picked again here; if it was the
        winner, the problem loses its winner (the next lookup re-decides)."""
        with self._write() as conn:
            if conn is None:
                return False
            pid = self._problem_id(conn, env, problem_key)
            conn.execute("INSERT OR REPLACE INTO timings VALUES (?,?,?,?,?,?)",
                         (pid, config_id, None, "invalid", reason, _now()))
            conn.execute("UPDATE problems SET winner=NULL WHERE id=? AND winner=?", (pid, config_id))
            return True
        return False

    def entries(self) -> list[dict]:
        conn = self._connect()
        if conn is None:
            return []
        try:
            rows = conn.execute(
                "SELECT p.problem_key, p.winner, p.mode, p.date, e.gpu_name, e.torch, e.triton, "
                "e.env_key, (SELECT COUNT(*) FROM timings t WHERE t.problem_id = p.id) "
                "FROM problems p JOIN envs e ON e.env_key = p.env_key ORDER BY p.problem_key"
            ).fetchall()
        except sqlite3.DatabaseError as exc:
            self._disable(exc)
            return []
        names = ("problem_key", "winner", "mode", "date", "gpu_name", "torch", "triton",
                 "env_key", "candidates")
        return [dict(zip(names, r)) for r in rows]

    def clear(self) -> int:
        with self._write() as conn:
            if conn is None:
                return 0
            n = conn.execute("SELECT COUNT(*) FROM problems").fetchone()[0]
            conn.execute("DELETE FROM timings")
            conn.execute("DELETE FROM problems")
            conn.execute("DELETE FROM envs")
            return n
        return 0

    # -- tuning files ---------------------------------------------------------------------------
    def export(self, path: str | os.PathLike) -> int:
        """Write every entry (all environments) to a JSON tuning file; returns the count."""
        conn = self._connect()
        if conn is None and self._broken is not None:
            raise PerfDbError(f"cannot read {self.path}: {self._broken}")
        problems = self._export_entries(conn) if conn is not None else []   # None: no db yet
        doc = {"format": "tilepick-tuning", "schema_version": SCHEMA_VERSION, "entries": problems}
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(doc, indent=1))
        return len(problems)

    @staticmethod
    def _export_entries(conn) -> list[dict]:
        envs = {r[0]: dict(zip(("env_key", "gpu_name", "driver", "cuda", "torch", "triton",
                                "source_hash"), r))
                for r in conn.execute("SELECT * FROM envs")}
        problems = []
        for pid, env_key, pkey, winner, mode, date in conn.execute(
                "SELECT id, env_key, problem_key, winner, mode, date FROM problems"):
            timings = {cid: {"ms": ms, "status": st, "reason": rs} for cid, ms, st, rs in conn.execute(
                "SELECT config_id, ms, status, reason FROM timings WHERE problem_id=?", (pid,))}
            problems.append({"env": envs[env_key], "problem_key": pkey, "winner": winner,
                             "mode": mode, "date": date, "timings": timings})
        return problems

    def import_file(self, path: str | os.PathLike) -> int:
        """Merge a JSON tuning file written by :meth:`export`; returns how many entries were
        imported (:meth:`merge_file` also says how many local entries were kept)."""
        return self.merge_file(path)[0]

    def merge_file(self, path: str | os.PathLike) -> tuple[int, int]:
        """Merge a JSON tuning file written by :meth:`export`: (entries imported, local
        entries kept). All or nothing: the whole file is checked before anything is written,
        and written in one transaction.

        Entries keep their environment and their date (a file entry without one counts as
        measured now). Where this db already holds the same problem in the same environment
        measured later than the file's entry, the local entry is kept: a tuning file shipped
        from elsewhere must not roll back a newer local measurement."""
        entries = _read_tuning_file(path)
        self.require()   # an unusable db: PerfDbError, not a bypass warning
        imported = kept = 0
        with self._write() as conn:
            if conn is None:
                raise PerfDbError(f"cannot write the perf-db {self.path}: {self._broken}")
            for env, key, winner, mode, timings, date in entries:
                row = conn.execute("SELECT date FROM problems WHERE env_key=? AND problem_key=?",
                                   (env.key, key)).fetchone()
                if row is not None and _parse_date(row[0]) is not None \
                        and _parse_date(row[0]) > _parse_date(date):
                    kept += 1
                    continue
                self._store(conn, env, key, winner, mode, timings, date)
                imported += 1
        return imported, kept


_ENV_FIELDS = ("gpu_name", "driver", "cuda", "torch", "triton", "source_hash")


def _parse_date(text) -> _dt.datetime | None:
    """A stored date as an aware UTC datetime (None: none or unreadable); what the newer-entry
    rule of an import compares (ISO 8601 text, e.g. 2025-01-31T12:00:00Z)."""
    if not isinstance(text, str):
        return None
    try:
        when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=_dt.timezone.utc)


def _read_tuning_file(path) -> list[tuple]:
    """Every entry of a tuning file as (env, problem_key, winner, mode, timings, date), or
    PerfDbError naming the first malformed entry by its index (nothing is imported then)."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PerfDbError(f"cannot read tuning file {path}: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("format") != "tilepick-tuning":
        raise PerfDbError(f"{path} is not a tilepick tuning file (format != tilepick-tuning)")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise PerfDbError(f"{path} has schema version {doc.get('schema_version')}, "
                          f"this tilepick reads {SCHEMA_VERSION}")
    entries = doc.get("entries", [])
    if not isinstance(entries, list):
        raise PerfDbError(f"{path}: 'entries' is a {type(entries).__name__}, not a list")
    out = []
    for i, e in enumerate(entries):
        try:
            out.append(_tuning_entry(e))
        except (KeyError, TypeError, ValueError) as exc:
            what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc)
            raise PerfDbError(f"{path}: entry {i} (of {len(entries)}, counted from 0) is "
                              f"malformed: {what}; nothing was imported") from exc
    return out


def _tuning_entry(e) -> tuple:
    """One checked entry of a tuning file (KeyError, TypeError or ValueError: what is wrong)."""
    if not isinstance(e, dict):
        raise TypeError(f"an entry is a JSON object, not {type(e).__name__}")
    if not isinstance(e["env"], dict):
        raise TypeError("'env' is not a JSON object")
    env = Environment(*(_text(e["env"], k) for k in _ENV_FIELDS))
    key, winner, mode = _text(e, "problem_key"), e.get("winner"), e.get("mode", "imported")
    if winner is not None and not isinstance(winner, str):
        raise TypeError(f"'winner' is {winner!r}, not a config id or null")
    if mode is not None and not isinstance(mode, str):   # null: a candidate marked invalid only
        raise TypeError(f"'mode' is {mode!r}, not a string or null")
    if not isinstance(e["timings"], dict):
        raise TypeError("'timings' is not a JSON object")
    timings = {cid: _timing(cid, t) for cid, t in e["timings"].items()}
    date = e.get("date")
    if date is None:
        date = _now()
    elif _parse_date(date) is None:
        raise ValueError(f"'date' {date!r} is not an ISO 8601 date")
    return env, key, winner, mode, timings, date


def _text(obj: dict, key: str) -> str:
    if not isinstance(obj[key], str):
        raise TypeError(f"{key!r} is {obj[key]!r}, not a string")
    return obj[key]


def _timing(cid: str, t) -> tuple:
    if not isinstance(t, dict):
        raise TypeError(f"timing of {cid} is not a JSON object")
    ms = t.get("ms")
    if ms is not None and (isinstance(ms, bool) or not isinstance(ms, (int, float))):
        raise TypeError(f"timing of {cid}: 'ms' is {ms!r}, not a number or null")
    if not isinstance(t.get("status"), str):
        raise TypeError(f"timing of {cid}: 'status' is {t.get('status')!r}, not a string")
    return ms, t["status"], t.get("reason")
