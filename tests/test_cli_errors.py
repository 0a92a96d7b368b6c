"""The command line's user errors: each is one clear line and exit 2 (no traceback, no Python
warning, nothing written), and the perf-db commands read, import and export what they say."""

import json
import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tilepick import __version__
from tilepick.cli import app
from tilepick.dispatch.perfdb import Environment, PerfDb, PerfDbError, pack

ENV = Environment("NVIDIA H200", "570.1", "12.8", "2.7.0", "3.3.0", "abc123")
KEY = "gemm.bf16.rr.m8.n8.k8"
OTHER = "gemm.bf16.rr.m16.n8.k8"
TIMINGS = {"gemm.cublas": (0.01, "ok", None)}


@pytest.fixture
def runner():
    return CliRunner(env={"COLUMNS": "200"})


@pytest.fixture(autouse=True)
def private_dbs(tmp_path, monkeypatch):
    """No test reads or writes the real user db, cache or working folder; a Python warning
    fails the test."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TILEPICK_USER_DB", str(tmp_path / "user" / "perfdb.sqlite"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


def invoke(runner, *args):
    return runner.invoke(app, [str(a) for a in args])


def failed(res, *phrases):
    """Exit 2 with every phrase in one error line, and no traceback."""
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "Traceback" not in res.output and "Warning" not in res.output
    for phrase in phrases:
        assert phrase in res.output, res.output
    return True


def tuned_db(path, key=KEY, date=None) -> Path:
    db = PerfDb(path)
    assert db.record(ENV, key, "gemm.cublas", "hybrid", TIMINGS, date=date)
    db.close()
    return Path(path)


# -- 1: db export --out ----------------------------------------------------------------------


def test_export_creates_the_missing_folder_and_refuses_a_folder(runner, tmp_path):
    db = tuned_db(tmp_path / "a.sqlite")
    out = tmp_path / "new" / "deeper" / "t.json"
    res = invoke(runner, "db", "export", "--out", out, "--db", db)
    assert res.exit_code == 0, res.output
    assert json.loads(out.read_text())["entries"][0]["problem_key"] == KEY
    assert failed(invoke(runner, "db", "export", "--out", tmp_path, "--db", db),
                  f"--out {tmp_path} is a folder", "tuning.json")


# -- 2: packed and unreadable dbs ------------------------------------------------------------


def test_read_commands_open_a_packed_db_read_only(runner, tmp_path):
    plain = tuned_db(tmp_path / "sys.sqlite")
    packed = tmp_path / "sys.sqlite.gz"
    pack(plain, packed)
    before = packed.read_bytes()
    res = invoke(runner, "db", "list", "--db", packed)
    assert res.exit_code == 0, res.output
    assert KEY in res.output and "1 problems" in res.output
    res = invoke(runner, "db", "show", KEY, "--db", packed)
    assert res.exit_code == 0 and "0.0100 ms" in res.output, res.output
    out = tmp_path / "t.json"
    assert invoke(runner, "db", "export", "--out", out, "--db", packed).exit_code == 0
    assert len(json.loads(out.read_text())["entries"]) == 1
    assert packed.read_bytes() == before   # read, never written
    # writing commands refuse a packed db rather than fail on it as on a corrupt file
    assert failed(invoke(runner, "db", "import", out, "--db", packed), str(packed),
                  "packed (.gz) perf-db is read-only")


def test_shipped_system_db_lists_its_problems(runner):
    shipped = Path(__file__).resolve().parents[1] / "models" / "perfdb_h200.sqlite.gz"
    if not shipped.is_file():
        pytest.skip("no shipped system db")
    res = invoke(runner, "db", "list", "--db", shipped, "--json")
    assert res.exit_code == 0, res.output[-500:]
    assert len(json.loads(res.output)) > 1000


@pytest.mark.parametrize("name, content, reason", [
    ("bad.sqlite", b"not a database" * 100, "file is not a database"),
    ("bad.sqlite.gz", b"not gzip" * 100, "Not a gzipped file"),
])
@pytest.mark.parametrize("command", [["list"], ["show", KEY], ["export", "--out", "t.json"]])
def test_unreadable_db_is_an_error_naming_path_and_reason(runner, tmp_path, name, content,
                                                          reason, command):
    bad = tmp_path / name
    bad.write_bytes(content)
    assert failed(invoke(runner, "db", *command, "--db", bad),
                  f"cannot read the perf-db {bad}", reason)
    assert not Path("t.json").exists()


# -- 3: a missing db -------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["list"], ["show", KEY], ["export", "--out", "t.json"]])
def test_read_commands_refuse_a_missing_db_and_create_nothing(runner, tmp_path, command):
    missing = tmp_path / "newdir" / "x.sqlite"
    assert failed(invoke(runner, "db", *command, "--db", missing), f"no perf-db at {missing}")
    assert not missing.parent.exists()


def test_default_user_db_before_any_tuning_reads_empty(runner, tmp_path):
    res = invoke(runner, "db", "list")
    assert res.exit_code == 0 and "0 problems" in res.output, res.output
    out = tmp_path / "t.json"
    assert invoke(runner, "db", "export", "--out", out).exit_code == 0
    assert json.loads(out.read_text())["entries"] == []
    assert not (tmp_path / "user").exists()   # reading created nothing


def test_writing_commands_create_the_db(runner, tmp_path):
    src = tmp_path / "t.json"
    PerfDb(tuned_db(tmp_path / "a.sqlite"), readonly=True).export(src)
    new = tmp_path / "newdir" / "x.sqlite"
    res = invoke(runner, "db", "import", src, "--db", new)
    assert res.exit_code == 0 and "1 problems imported" in res.output, res.output
    assert [e["problem_key"] for e in PerfDb(new).entries()] == [KEY]


# -- 4, 5: db import -------------------------------------------------------------------------


def tuning_file(path, entries) -> Path:
    path.write_text(json.dumps({"format": "tilepick-tuning", "schema_version": 1,
                                "entries": entries}))
    return path


def entry(key, date="2025-01-01T00:00:00Z", winner="gemm.cublas"):
    return {"env": {"gpu_name": ENV.gpu_name, "driver": ENV.driver, "cuda": ENV.cuda,
                    "torch": ENV.torch, "triton": ENV.triton, "source_hash": ENV.source_hash},
            "problem_key": key, "winner": winner, "mode": "exhaustive", "date": date,
            "timings": {winner: {"ms": 0.02, "status": "ok", "reason": None}}}


@pytest.mark.parametrize("breakage, what", [
    (lambda e: e.pop("timings"), "missing field 'timings'"),
    (lambda e: e["env"].pop("torch"), "missing field 'torch'"),
    (lambda e: e["timings"]["gemm.cublas"].update(ms="fast"), "'ms' is 'fast'"),
    (lambda e: e.update(date="yesterday"), "'date' 'yesterday' is not an ISO 8601 date"),
])
def test_import_with_a_malformed_entry_imports_nothing(runner, tmp_path, breakage, what):
    entries = [entry(KEY), entry(OTHER), entry("gemm.bf16.rr.m32.n8.k8")]
    breakage(entries[1])
    db = tmp_path / "u.sqlite"
    res = invoke(runner, "db", "import", tuning_file(tmp_path / "t.json", entries), "--db", db)
    assert failed(res, "entry 1 (of 3", what, "nothing was imported")
    assert not db.exists()   # checked before the db was even created


def test_import_is_one_transaction(runner, tmp_path, monkeypatch):
    """A failure while writing (here: the second entry's store) leaves the db as it was."""
    db = tuned_db(tmp_path / "u.sqlite", OTHER, date="2020-01-01T00:00:00Z")
    stored = PerfDb._store
    calls = []

    def store_then_fail(self, *args):
        calls.append(args)
        if len(calls) == 2:
            raise PerfDbError("disk full")
        return stored(self, *args)

    monkeypatch.setattr(PerfDb, "_store", store_then_fail)
    res = invoke(runner, "db", "import",
                 tuning_file(tmp_path / "t.json", [entry(KEY), entry(OTHER)]), "--db", db)
    assert failed(res, "disk full")
    monkeypatch.setattr(PerfDb, "_store", stored)
    assert [(e["problem_key"], e["date"]) for e in PerfDb(db).entries()] == [
        (OTHER, "2020-01-01T00:00:00Z")]


def test_import_keeps_dates_and_newer_local_entries(runner, tmp_path):
    db = tmp_path / "u.sqlite"
    tuned_db(db, KEY, date="2025-06-01T00:00:00Z")     # newer than the file's: kept
    tuned_db(db, OTHER, date="2024-06-01T00:00:00Z")   # older: replaced
    f = tuning_file(tmp_path / "t.json", [
        entry(KEY, winner="gemm.ptr.m16n16k32.g1.w4.s3"),
        entry(OTHER, winner="gemm.ptr.m16n16k32.g1.w4.s3"),
        entry("gemm.bf16.rr.m32.n8.k8", date="2023-03-04T05:06:07Z")])
    res = invoke(runner, "db", "import", f, "--db", db)
    assert res.exit_code == 0, res.output
    assert "2 problems imported, 1 kept (this database's entry is newer)" in res.output
    got = {e["problem_key"]: (e["winner"], e["date"]) for e in PerfDb(db).entries()}
    assert got == {KEY: ("gemm.cublas", "2025-06-01T00:00:00Z"),
                   OTHER: ("gemm.ptr.m16n16k32.g1.w4.s3", "2025-01-01T00:00:00Z"),
                   "gemm.bf16.rr.m32.n8.k8": ("gemm.cublas", "2023-03-04T05:06:07Z")}


# -- 6, 7: warmup and sweep arguments ---------------------------------------------------------


def test_warmup_unknown_mode_lists_the_modes(runner, tmp_path):
    f = tmp_path / "w.jsonl"
    f.write_text('{"op": "gemm", "m": 128, "n": 256, "k": 512}\n')
    assert failed(invoke(runner, "warmup", "--problems", f, "--mode", "fastest"),
                  "--mode 'fastest'", "heuristic, db, hybrid, exhaustive")


def test_warmup_mode_from_a_wrong_environment_variable(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("TILEPICK_FIND_MODE", "fastest")
    f = tmp_path / "w.jsonl"
    f.write_text('{"op": "gemm", "m": 128, "n": 256, "k": 512}\n')
    assert failed(invoke(runner, "warmup", "--problems", f), "TILEPICK_FIND_MODE", "hybrid")


@pytest.mark.parametrize("command", [["warmup"], ["sweep", "--out", "sw"]])
@pytest.mark.parametrize("spec", ["nofile.jsonl", "nofile.csv", "some/dir/problems"])
def test_missing_problem_file_is_named_as_such(runner, command, spec):
    res = invoke(runner, command[0], "--problems", spec, *command[1:])
    assert failed(res, f"--problems {spec}: no such file or folder")
    assert "unknown problem set" not in res.output


def test_unknown_set_name_still_lists_the_sets(runner):
    assert failed(invoke(runner, "warmup", "--problems", "nosuchset"),
                  "unknown problem set 'nosuchset'", "edge")


# -- 8: data summary / compact ---------------------------------------------------------------


def test_data_commands_refuse_a_missing_dataset(runner, tmp_path):
    missing = tmp_path / "nonexistent"
    assert failed(invoke(runner, "data", "summary", missing), f"{missing}: no such file or folder")
    dest = tmp_path / "out.parquet"
    assert failed(invoke(runner, "data", "compact", missing, dest),
                  f"{missing}: no such file or folder")
    assert not dest.exists()
    other = tmp_path / "w.jsonl"
    other.write_text("{}\n")
    assert failed(invoke(runner, "data", "summary", other), "not a dataset folder or a parquet file")


# -- 9: no GPU -------------------------------------------------------------------------------


@pytest.fixture
def no_gpu(monkeypatch):
    """A machine without CUDA and without the interpreter; nothing may get to compiling."""
    import torch

    from tilepick.bench import retime, sweep
    from tilepick.dispatch import warmup

    monkeypatch.setenv("TRITON_INTERPRET", "0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)

    def refuse(*args, **kwargs):
        raise AssertionError("got past the GPU check")

    monkeypatch.setattr(sweep, "run_sweep", refuse)
    monkeypatch.setattr(retime, "retime", refuse)
    monkeypatch.setattr(warmup, "warmup", refuse)


@pytest.mark.parametrize("args", [
    ["run", "--m", 64, "--n", 64, "--k", 64, "--config", "gemm.tma.m64n64k32.g1.w4.s2"],
    ["sweep", "--problems", "edge", "--out", "sw", "--limit", 1, "--sample", 2,
     "--processes", 1],
    ["data", "retime", "data", "--out", "rt", "--limit", 1],
    ["warmup", "--problems", "edge", "--count", 1, "--processes", 1],
])
def test_kernel_commands_without_a_gpu(runner, no_gpu, args):
    assert failed(invoke(runner, *args), "no CUDA GPU is visible", "TRITON_INTERPRET=1")


# -- 10: --version ---------------------------------------------------------------------------


def test_version(runner):
    res = invoke(runner, "--version")
    assert res.exit_code == 0 and res.output.strip() == f"tilepick {__version__}"
    assert "--version" in invoke(runner, "--help").output
