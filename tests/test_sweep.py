"""The sweep driver on the CPU (Triton interpreter): config sampling, an end-to-end sweep, resume
after a crash, invalid-row recording, and the ``sweep`` / ``data`` commands."""

import json
import random
from pathlib import Path
from collections import Counter

import pytest
from typer.testing import CliRunner

from tilepick import config as cfg
from tilepick import solvers
from tilepick.bench import sweep as sweep_mod
from tilepick.bench.compile_pool import CompileResult
from tilepick.bench.sweep import ALWAYS, SweepOptions, config_pool, run_sweep, sample_configs
from tilepick.cli import app
from tilepick.data import io
from tilepick.data.schema import NAMES, SCHEMA
from tilepick.problem import GemmProblem
from tilepick.solvers.triton_gemm import PointerSolver

# tiny problems: three Triton families apply to each (ptr, tma, tma_persistent) + cuBLAS
TINY = [GemmProblem(16, 24, 32, dtype="fp16"),
        GemmProblem(32, 16, 16, dtype="fp32"),
        GemmProblem(16, 16, 32, dtype="bf16", layout="rc")]
# five Triton families apply (the two split-K families too)
WIDE = GemmProblem(16, 64, 128, dtype="fp16")


def quiet(**kw) -> SweepOptions:
    base = dict(sample=2, rounds=0, noise_fraction=0.0, processes=1, progress=False, seed=0)
    base.update(kw)
    return SweepOptions(**base)


def triton_families(problem):
    return {c.family for c in solvers.applicable_configs(problem) if not c.is_vendor}


# -- config sampling -------------------------------------------------------------------------


def test_sweeps_leave_the_cublaslt_entries_out_unless_named(monkeypatch):
    """The entries are vendor candidates (measured on top of any sample), but the main ranker
    does not rank them and their model has its own probes: a sweep measures them only when
    ``--family`` names the family."""
    entry = cfg.KernelConfig.from_id("gemm.cublaslt.a66.t197.s35.k1.r0.w0.c2.i0.cl5")
    lt = solvers.SOLVERS["gemm.cublaslt"]
    monkeypatch.setattr(lt, "configs", lambda problem, hw=None: [entry])
    assert entry in solvers.applicable_configs(WIDE)
    assert "gemm.cublaslt" not in sweep_mod.SWEPT_FAMILIES
    for n in (None, 7):
        assert entry not in sample_configs(WIDE, n, random.Random(0))
        named = sample_configs(WIDE, n, random.Random(0), families=["gemm.ptr", "gemm.cublaslt"])
        assert entry in named and {c.family for c in named} == {"gemm.ptr", "gemm.cublaslt"}


def test_sample_configs_keeps_every_family_and_is_deterministic():
    fams = triton_families(WIDE)
    assert fams == {"gemm.ptr", "gemm.tma", "gemm.tma_persistent", "gemm.splitk",
                    "gemm.splitk_atomic", "gemm.splitk_fused", "gemm.tma_splitk"}
    everything = [c for c in solvers.applicable_configs(WIDE) if not c.is_vendor]
    for n in (len(fams), 7, 12, 40):
        chosen = sample_configs(WIDE, n, random.Random(3))
        assert len(chosen) == n
        assert len(set(chosen)) == n
        assert {c.family for c in chosen} == fams  # the small families are never crowded out
        assert set(chosen) <= set(everything)
        assert chosen == sorted(chosen)
        assert sample_configs(WIDE, n, random.Random(3)) == chosen  # same seed, same sample
    # other seeds give other samples
    draws = {tuple(c.id for c in sample_configs(WIDE, 7, random.Random(s))) for s in range(6)}
    assert len(draws) > 1
    # fewer requested than families: still one of every family (never a family dropped)
    for n in (1, 2):
        chosen = sample_configs(WIDE, n, random.Random(0))
        assert {c.family for c in chosen} == fams and len(chosen) == len(fams)
    # no sample, or a sample larger than the space: every valid Triton config (aligned: no
    # vendor candidate but cuBLAS, which is measured outside the sample)
    assert sample_configs(WIDE, None, random.Random(0)) == everything
    assert sample_configs(WIDE, len(everything) + 5, random.Random(0)) == everything
    assert all(not c.is_vendor for c in everything)


def test_sample_configs_always_adds_the_tutorial_configs():
    """The Triton tutorial's configs (both lists, as gemm.ptr ids) come on top of the sample,
    whatever the pool, so the tutorial baseline has its data in every sweep."""
    from tilepick.bench.sweep import ALWAYS

    p = GemmProblem(512, 512, 512, dtype="bf16")
    valid_tutorial = {c.id for c in solvers.applicable_configs(p) if c.id in ALWAYS}
    assert valid_tutorial and valid_tutorial <= set(cfg.tutorial_ids("bf16")) | set(
        cfg.tutorial_ids("fp8e4m3"))
    chosen = sample_configs(p, 10, random.Random(0))
    ids = {c.id for c in chosen}
    assert valid_tutorial <= ids
    assert len(chosen) == 10 + len(valid_tutorial) and len(ids) == len(chosen)
    assert chosen == sorted(chosen)
    # a pool outside the tutorial's configs (here: empty) still measures them
    assert {c.id for c in sample_configs(p, 10, random.Random(0), pool=set())} == valid_tutorial


def test_sample_configs_family_filter():
    chosen = sample_configs(WIDE, 4, random.Random(0), families=["gemm.ptr", "gemm.splitk"])
    assert len(chosen) == 4
    assert {c.family for c in chosen} == {"gemm.ptr", "gemm.splitk"}
    assert sample_configs(WIDE, 4, random.Random(0), families=["gemm.cublas"]) == []


def test_config_pool_restricts_configs():
    assert config_pool(None, 0) is None
    pool = config_pool(3, seed=11)
    assert config_pool(3, seed=11) == pool
    assert config_pool(3, seed=12) != pool
    per_family = Counter(cid.split(".m")[0] for cid in pool)
    assert per_family == {fam: min(3, len(cfg.space(fam))) for fam in cfg.SPACES}
    for cid in pool:  # ids of the declared spaces
        assert cid in {c.id for c in cfg.space(cid.split(".m")[0])}
    # a large pool on a problem: only pool members are chosen, the rest of the space never
    big = config_pool(200, seed=1)
    chosen = sample_configs(WIDE, None, random.Random(0), pool=big)
    assert chosen and all(c.id in big for c in chosen)
    everything = {c for c in solvers.applicable_configs(WIDE) if not c.is_vendor}
    assert set(chosen) == {c for c in everything if c.id in big}
    assert len(chosen) < len(everything)
    sampled = sample_configs(WIDE, 5, random.Random(0), pool=big)
    assert len(sampled) == 5 and all(c.id in big for c in sampled)
    # an empty intersection gives no configs (the problem is then measured on cuBLAS only)
    assert sample_configs(WIDE, 3, random.Random(0), pool=set()) == []


def test_pool_seed_moves_the_pool_and_keeps_the_problem_sampler():
    """A campaign continuing a seeded problem list keeps --seed (the per-problem samplers and
    the problem order) and moves --pool-seed, so successive sweeps measure other configs."""
    from tilepick.bench.sweep import plan_configs

    base = SweepOptions(sample=None, pool=20, seed=0)
    (_, same), = plan_configs([WIDE], base)
    (_, also), = plan_configs([WIDE], SweepOptions(sample=None, pool=20, seed=0, pool_seed=0))
    (_, moved), = plan_configs([WIDE], SweepOptions(sample=None, pool=20, seed=0, pool_seed=5))
    assert same == also                         # None means the sweep's seed, as before
    assert {c.id for c in moved} != {c.id for c in same}
    assert {c.id for c in moved} <= config_pool(20, 5) | ALWAYS


# -- end to end ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    summary = run_sweep(TINY, out, SweepOptions(sample=2, rounds=1, noise_fraction=1.0,
                                                processes=1, progress=False, seed=0))
    return summary, out, io.read_frame(out)


def test_sweep_rows_have_the_schema(tiny_sweep):
    summary, out, df = tiny_sweep
    assert io.read_table(out).schema.equals(SCHEMA)
    assert list(df.columns) == NAMES
    assert summary.problems == 3 and summary.skipped_done == 0
    assert summary.rows == len(df)
    assert set(df.problem_key) == {p.key() for p in TINY}
    assert set(df.sweep_id) == {summary.sweep_id}
    assert not df.duplicated(["problem_key", "config_id"]).any()
    # the sampled configs of each problem: every family once (3 families for 2 requested)
    for p in TINY:
        sub = df[df.problem_key == p.key()]
        assert set(sub.family) == triton_families(p) | {"gemm.cublas"}
        assert (sub.m == p.m).all() and (sub.n == p.n).all() and (sub.k == p.k).all()
        assert (sub.dtype == p.dtype_token).all() and (sub.layout == p.layout).all()
    # every row is complete: no nulls in the measurement and provenance columns (round_ms:
    # only the rows of a re-timing pass carry it)
    required = [n for n in NAMES if n not in ("invalid_reason", "round_ms")]
    assert df[required].notna().all().all(), df[required].isna().sum()[lambda s: s > 0]
    assert df.valid.all() and (df.invalid_reason == "").all()
    assert (df.gpu_name == "cpu-interpreter").all() and (df.sm_count == 0).all()
    assert (df.reps >= 1).all()


def test_sweep_interpreter_timings_not_meaningful(tiny_sweep):
    summary, _, df = tiny_sweep
    assert (df.timing_meaningful == False).all()  # noqa: E712
    assert summary.timed == len(df)
    assert (df.time_ms > 0).all()


def test_sweep_cublas_row_per_problem(tiny_sweep):
    _, _, df = tiny_sweep
    cub = df[df.config_id == "gemm.cublas"]
    assert sorted(cub.problem_key) == sorted(p.key() for p in TINY)
    assert (cub.family == "gemm.cublas").all()
    assert (cub.block_m == 0).all() and (cub.split_k == 1).all()
    assert cub.valid.all() and (cub.rel_error < 1e-2).all()


def test_sweep_rates(tiny_sweep):
    _, _, df = tiny_sweep
    by_key = {p.key(): p for p in TINY}
    for row in df.itertuples():
        p = by_key[row.problem_key]
        assert row.tflops == pytest.approx(2 * p.m * p.n * p.k * p.batch / (row.time_ms * 1e-3)
                                           / 1e12, rel=1e-12)
        assert row.gbps == pytest.approx(p.min_bytes / (row.time_ms * 1e-3) / 1e9, rel=1e-12)


def test_sweep_retimed_rows(tiny_sweep):
    _, _, df = tiny_sweep
    # a config of each family + cuBLAS per problem, all within retime_top=5: every row re-timed
    assert df.retimed.all()
    assert (df.retime_spread == 0).all()  # one round: one median per config
    assert df.groupby("problem_key").retimed.sum().to_dict() == {
        p.key(): len(triton_families(p)) + 1 for p in TINY}


def test_sweep_summary_file(tiny_sweep):
    summary, out, df = tiny_sweep
    files = list(out.glob("sweep-*.json"))
    assert [f.name for f in files] == [f"sweep-{summary.sweep_id}.json"]
    data = json.loads(files[0].read_text())
    assert data == json.loads(json.dumps(summary.to_dict()))
    assert data["problems"] == 3 and data["rows"] == len(df) and data["timed"] == len(df)
    assert data["invalid_by_reason"] == {}
    assert data["measure_s"] > 0
    assert data["timed_configs_per_s"] == pytest.approx(data["timed"] / data["measure_s"])
    assert data["compile_s"] >= 0 and data["binaries"] == 0  # nothing compiled ahead here
    # the host-time breakdown covers the parts of the measuring loop, within its wall time
    assert set(data["host_s"]) == {"inputs", "check", "screen", "retime"}
    # each part took time (the unrounded counters: the file rounds to ms, and a part of a
    # tiny sweep can take under half a millisecond, which CI saw as 0.0)
    assert set(summary.host_s) == set(data["host_s"])
    assert all(v > 0 for v in summary.host_s.values())
    assert all(v == round(summary.host_s[k], 3) for k, v in data["host_s"].items())
    assert sum(data["host_s"].values()) <= data["measure_s"] + 0.01
    # noise_fraction=1.0: every problem's top configs re-measured
    assert data["noise"]["pairs"] == len(df)
    assert 0 <= data["noise"]["median_rel_diff"] <= data["noise"]["max_rel_diff"]
    # the re-timing's own protocol, and the single-candidate one of sessions <= 11 beside it
    assert 0 <= data["noise"]["time_fn_median_rel_diff"] <= data["noise"]["time_fn_max_rel_diff"]


# -- resume ----------------------------------------------------------------------------------


def failing_on(nth: int, exc: BaseException, calls: list):
    """A _measure_problem that raises ``exc`` when asked for its ``nth`` problem."""
    real = sweep_mod._measure_problem

    def measure(problem, *args, **kwargs):
        calls.append(problem.key())
        if len(calls) == nth:
            raise exc
        return real(problem, *args, **kwargs)
    return measure


class Crash(RuntimeError):
    pass


def test_resume_after_crash(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(sweep_mod, "_measure_problem",
                        failing_on(3, Crash("killed while measuring the third problem"), calls))
    with pytest.raises(Crash):
        run_sweep(TINY, tmp_path, quiet(flush_every=1))
    monkeypatch.undo()
    assert calls == [p.key() for p in TINY]

    # the two finished problems are on disk, one part each; nothing of the third
    assert len(list(tmp_path.glob("part-*.parquet"))) == 2
    assert not list(tmp_path.glob(".*.tmp"))
    assert io.done_problems(tmp_path) == {TINY[0].key(), TINY[1].key()}
    before = io.read_frame(tmp_path)
    first_sweep = before.sweep_id.unique().tolist()
    assert len(first_sweep) == 1

    summary = run_sweep(TINY, tmp_path, quiet(flush_every=1))
    assert summary.skipped_done == 2
    assert summary.problems == 1
    df = io.read_frame(tmp_path)
    assert set(df.problem_key) == {p.key() for p in TINY}
    assert not df.duplicated(["problem_key", "config_id"]).any()
    for p in TINY:
        sub = df[df.problem_key == p.key()]
        assert "gemm.cublas" in set(sub.config_id)
        assert set(sub.family) == triton_families(p) | {"gemm.cublas"}
    # the first run's rows are all still there, untouched; the third problem is the new sweep's
    kept = df[df.sweep_id == first_sweep[0]]
    assert sorted(kept.config_id + kept.problem_key) == sorted(before.config_id
                                                               + before.problem_key)
    third = df[df.problem_key == TINY[2].key()]
    assert (third.sweep_id == summary.sweep_id).all()
    assert summary.rows == len(third)
    assert len(df) == len(before) + len(third)

    # a third run has nothing left to do
    again = run_sweep(TINY, tmp_path, quiet(flush_every=1))
    assert again.skipped_done == 3 and again.problems == 0 and again.rows == 0
    assert len(io.read_frame(tmp_path)) == len(df)


def test_interrupt_saves_buffered_problems(tmp_path, monkeypatch):
    """Ctrl-C / SIGTERM (as `timeout` sends) in the middle of a flush interval: the problems
    measured since the last part are written before the sweep stops, and marked interrupted."""
    monkeypatch.setattr(sweep_mod, "_measure_problem",
                        failing_on(3, KeyboardInterrupt("signal 15"), []))
    with pytest.raises(KeyboardInterrupt):
        run_sweep(TINY, tmp_path, quiet(flush_every=100))
    monkeypatch.undo()
    assert io.done_problems(tmp_path) == {TINY[0].key(), TINY[1].key()}
    assert len(list(tmp_path.glob("part-*.parquet"))) == 1   # the buffer, written once
    (summary_file,) = tmp_path.glob("sweep-*.json")
    data = json.loads(summary_file.read_text())
    assert data["interrupted"] and data["problems"] == 2
    resumed = run_sweep(TINY, tmp_path, quiet(flush_every=100))
    assert resumed.skipped_done == 2 and resumed.problems == 1


def test_duplicate_problems_measured_once(tmp_path):
    p = TINY[1]
    summary = run_sweep([p, p, GemmProblem(32, 16, 16, dtype="fp32")], tmp_path,
                        quiet(sample=1))
    assert summary.problems == 1
    df = io.read_frame(tmp_path)
    assert not df.duplicated(["problem_key", "config_id"]).any()
    assert set(df.problem_key) == {p.key()}


def test_resumed_sweep_samples_like_an_uninterrupted_one(tmp_path):
    # an uninterrupted sweep draws each problem's configs from its own (seed, problem) stream
    plan = {p.key(): {c.id for c in sample_configs(p, 2, random.Random(f"0:{p.key()}"))}
            for p in TINY}
    io.write_part(tmp_path, [  # the first two problems are already done
        {**sweep_mod._row(p, sweep_mod.CUBLAS, {}, "old"), "valid": True} for p in TINY[:2]])
    run_sweep(TINY, tmp_path, quiet(sample=2))
    df = io.read_frame(tmp_path)
    third = df[(df.problem_key == TINY[2].key()) & (df.family != "gemm.cublas")]
    assert set(third.config_id) == plan[TINY[2].key()]


def test_sweep_with_no_problems_into_new_folder(tmp_path):
    out = tmp_path / "new"
    summary = run_sweep([], out, quiet())
    assert summary.problems == 0
    assert (out / f"sweep-{summary.sweep_id}.json").is_file()


# -- invalid rows ----------------------------------------------------------------------------


class OutOfResources(Exception):
    """Named like Triton's compile error, which the solvers turn into an invalid config."""


@pytest.fixture
def invalid_sweep(tmp_path_factory, monkeypatch):
    """One problem whose three sampled configs fail in three ways: the pointer kernel raises
    a compile-like error at launch, the TMA kernel writes garbage, and the persistent TMA
    kernel failed in the compile pool."""
    p = TINY[0]
    out = tmp_path_factory.mktemp("invalid")

    def out_of_resources(self, *args, **kwargs):
        raise OutOfResources("out of resource: shared memory, Required: 300000, Hardware "
                             "limit: 232448")

    monkeypatch.setattr(PointerSolver, "calls", out_of_resources)

    def garbage(problem, config, a, b, out, scale_a=None, scale_b=None):
        out.fill_(1.0)
        return out

    monkeypatch.setattr(solvers.SOLVERS["gemm.tma"], "launch", garbage)

    def fake_compile_all(pairs, processes=None, progress=True):
        return {(q.key(), c.id): CompileResult(False, "PTXASError: ptxas fatal", 1.5)
                for q, c in pairs if c.family == "gemm.tma_persistent"}

    monkeypatch.setattr("tilepick.bench.compile_pool.compile_all", fake_compile_all)
    summary = run_sweep([p], out, quiet(sample=3, rounds=2, noise_fraction=1.0))
    monkeypatch.undo()
    return summary, out, io.read_frame(out).set_index("family")


def test_invalid_rows_recorded(invalid_sweep):
    summary, _, df = invalid_sweep
    assert sorted(df.index) == ["gemm.cublas", "gemm.ptr", "gemm.tma", "gemm.tma_persistent"]
    assert df.loc["gemm.cublas"].valid
    assert df.loc["gemm.cublas"].invalid_reason == ""

    ptr = df.loc["gemm.ptr"]
    assert not ptr.valid
    assert ptr.invalid_reason.startswith("invalid: ")
    assert "OutOfResources" in ptr.invalid_reason and ptr.config_id in ptr.invalid_reason
    assert "shared memory" in ptr.invalid_reason

    tma = df.loc["gemm.tma"]
    assert not tma.valid
    assert tma.invalid_reason.startswith("wrong")
    assert "tolerance" in tma.invalid_reason
    assert tma.rel_error > 2e-2  # the measured error is kept

    pers = df.loc["gemm.tma_persistent"]
    assert not pers.valid
    assert pers.invalid_reason == "compile: PTXASError: ptxas fatal"
    assert pers.compile_s == 1.5

    # invalid rows carry no timing
    bad = df[~df.valid]
    assert bad.time_ms.isna().all() and bad.tflops.isna().all()
    assert summary.invalid_by_reason == Counter({"invalid": 1, "wrong": 1, "compile": 1})
    assert summary.timed == 1 and summary.rows == 4
    # only cuBLAS is valid: nothing to re-time against, and it is the only noise pair
    assert not df.loc["gemm.cublas"].retimed
    assert summary.noise["pairs"] == 1


def test_invalid_rows_in_summary_file_and_data_summary(invalid_sweep):
    summary, out, _ = invalid_sweep
    data = json.loads((out / f"sweep-{summary.sweep_id}.json").read_text())
    assert data["invalid_by_reason"] == {"invalid": 1, "wrong": 1, "compile": 1}
    res = CliRunner().invoke(app, ["data", "summary", str(out)])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    assert s["rows"] == 4 and s["valid_rows"] == 1 and s["problems"] == 1
    assert s["invalid_by_reason"] == {"invalid": 1, "wrong": 1, "compile": 1}
    df = io.read_frame(out)
    fams = df[df.family != "gemm.cublas"].groupby("family").config_id.nunique()
    assert s["configs_measured"] == {f: f"{n} of {len(cfg.space(f))}" for f, n in fams.items()}
    assert "gemm.cublas" not in s["configs_measured"]   # not a space: one "config"


def test_wrong_result_from_unwritten_output(tmp_path, monkeypatch):
    """A kernel that writes nothing leaves the NaN poison: wrong, with an infinite error."""
    monkeypatch.setattr(solvers.SOLVERS["gemm.tma"], "launch",
                        lambda problem, config, a, b, out, *rest: out)
    run_sweep([TINY[1]], tmp_path, quiet(sample=3, families=["gemm.tma"]))
    df = io.read_frame(tmp_path)
    assert set(df.family) == {"gemm.tma", "gemm.cublas"}  # cuBLAS is always measured
    tma = df[df.family == "gemm.tma"]
    assert len(tma) == 3
    assert (~tma.valid).all()
    assert tma.invalid_reason.str.startswith("wrong: relative error inf").all()
    assert (tma.rel_error == float("inf")).all()


# -- command line ----------------------------------------------------------------------------


def test_cli_sweep_summary_compact(tmp_path):
    csv = tmp_path / "problems.csv"
    csv.write_text("m,n,k,dtype\n16,24,32,fp16\n")
    out = tmp_path / "ds"
    runner = CliRunner()
    args = ["sweep", "--problems", str(csv), "--out", str(out), "--sample", "1",
            "--rounds", "0", "--noise-fraction", "0"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    key = "gemm.fp16.rr.m16.n24.k32"
    assert summary["problems"] == 1 and summary["skipped_done"] == 0
    assert summary["rows"] == 4  # one config of each of the 3 families + cuBLAS
    assert summary["invalid_by_reason"] == {} and summary["noise"] == {}
    assert (out / f"sweep-{summary['sweep_id']}.json").is_file()
    assert io.done_problems(out) == {key}

    res = runner.invoke(app, ["data", "summary", str(out)])
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)
    assert s["rows"] == 4 and s["problems"] == 1 and s["valid_rows"] == 4
    assert s["configs_per_problem_median"] == 4.0
    assert s["retimed_rows"] == 0  # --rounds 0
    assert s["gpus"] == ["cpu-interpreter"]
    assert s["families"] == {"gemm.cublas": 1, "gemm.ptr": 1, "gemm.tma": 1,
                             "gemm.tma_persistent": 1}
    assert s["invalid_by_reason"] == {}

    dest = tmp_path / "all.parquet"
    res = runner.invoke(app, ["data", "compact", str(out), str(dest)])
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == f"4 rows -> {dest}"
    compacted = io.read_frame(dest)
    assert len(compacted) == 4 and set(compacted.problem_key) == {key}
    res = runner.invoke(app, ["data", "compact", str(out), str(dest)])
    assert res.exit_code == 2 and "exists" in res.output   # a committed chunk is safe
    res = runner.invoke(app, ["data", "compact", str(out), str(dest), "--force"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["data", "summary", str(dest)])
    assert res.exit_code == 0 and json.loads(res.stdout)["rows"] == 4

    # the same command again resumes: nothing left to measure
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    again = json.loads(res.stdout)
    assert again["skipped_done"] == 1 and again["problems"] == 0 and again["rows"] == 0
    assert len(io.read_frame(out)) == 4


def test_cli_sweep_flop_bounds(tmp_path):
    """--min-tflop / --max-tflop split a problem list by size (huge exhaustive problems get
    device calls of their own)."""
    csv = tmp_path / "problems.csv"
    csv.write_text("m,n,k,dtype\n16,24,32,fp16\n32,16,16,fp16\n")   # 24,576 and 16,384 flop
    base = ["sweep", "--problems", str(csv), "--sample", "1", "--rounds", "0",
            "--noise-fraction", "0"]
    runner = CliRunner()
    res = runner.invoke(app, base + ["--out", str(tmp_path / "small"), "--max-tflop", "2e-8"])
    assert res.exit_code == 0, res.output
    assert io.done_problems(tmp_path / "small") == {"gemm.fp16.rr.m32.n16.k16"}
    res = runner.invoke(app, base + ["--out", str(tmp_path / "big"), "--min-tflop", "2e-8"])
    assert res.exit_code == 0, res.output
    assert io.done_problems(tmp_path / "big") == {"gemm.fp16.rr.m16.n24.k32"}
    res = runner.invoke(app, base + ["--out", str(tmp_path / "none"), "--min-tflop", "2",
                                     "--max-tflop", "1"])
    assert res.exit_code == 2 and "select no problem" in res.output
    assert not (tmp_path / "none").exists()


def test_cli_data_summary_empty(tmp_path):
    res = CliRunner().invoke(app, ["data", "summary", str(tmp_path)])
    assert res.exit_code == 0 and res.stdout.strip() == "no rows"


def test_cli_sweep_unknown_problem_set(tmp_path):
    out = tmp_path / "ds"
    res = CliRunner().invoke(app, ["sweep", "--problems", "no_such_set", "--out", str(out)])
    assert res.exit_code != 0
    assert res.exception is None or isinstance(res.exception, SystemExit)  # no traceback
    assert "unknown problem set 'no_such_set'" in res.output
    from tilepick.bench.shapes import NAMED_SETS
    for name in NAMED_SETS:
        assert name in res.output
    assert not out.exists()


# -- measuring a model's picks (active sampling) -----------------------------------------------


def test_sample_zero_gives_only_the_tutorial_configs():
    from tilepick.bench.sweep import ALWAYS

    p = GemmProblem(512, 512, 512, dtype="bf16")
    tutorial = sorted(c for c in solvers.applicable_configs(p) if c.id in ALWAYS)
    assert tutorial and sample_configs(p, 0, random.Random(0)) == tutorial


def test_model_picks_are_the_models_best_triton_configs():
    """--model-top N adds the shipped model's N best-ranked Triton configs (cuBLAS is measured
    anyway) to the random sample; the family filter applies to them too."""
    from tilepick.bench.sweep import ModelPicks, plan_configs
    from tilepick.model import Predictor

    p = GemmProblem(64, 4096, 4096, dtype="bf16")
    ranked = [cid for cid, _, _ in Predictor.load(arch="h200", dtype="bf16").rank(p)]
    triton = [cid for cid in ranked if not cid.startswith("gemm.cublas")]
    picks = ModelPicks(3)(p)
    assert [c.id for c in picks] == triton[:3]
    ptr_only = ModelPicks(2, families=["gemm.ptr"])(p)
    assert [c.id for c in ptr_only] == [c for c in triton if c.startswith("gemm.ptr.")][:2]
    assert ModelPicks(0)(p) == []
    (_, cfgs), = plan_configs([p], SweepOptions(sample=0, model_top=3))
    assert set(cfgs) == set(picks) | set(sample_configs(p, 0, random.Random(0)))
    (_, more), = plan_configs([p], SweepOptions(sample=20, model_top=3))
    assert set(picks) <= set(more) and len(more) >= 20 and more == sorted(more)


def test_cli_sweep_measures_a_datasets_problems_with_the_model_picks(tmp_path):
    """Re-measuring a dataset's problems with the model's picks: --problems takes the dataset,
    --sample 0 --model-top 2 measures cuBLAS and the two picks (the tutorial's configs do not
    fit this tiny problem)."""
    runner = CliRunner()
    csv = tmp_path / "problems.csv"
    csv.write_text("m,n,k,dtype\n16,24,32,bf16\n16,24,32,fp16\n")
    first = tmp_path / "first"
    quiet_args = ["--rounds", "0", "--noise-fraction", "0"]
    res = runner.invoke(app, ["sweep", "--problems", str(csv), "--out", str(first), "--sample",
                              "1", "--dtype", "bf16"] + quiet_args)
    assert res.exit_code == 0, res.output
    # the CSV's dtype column wins over --dtype: both problems are measured
    assert len(io.done_problems(first)) == 2
    again = tmp_path / "again"
    res = runner.invoke(app, ["sweep", "--problems", str(first), "--out", str(again),
                              "--dtype", "bf16", "--sample", "0", "--model-top", "2"]
                        + quiet_args)
    assert res.exit_code == 0, res.output
    df = io.read_frame(again)
    p = GemmProblem(16, 24, 32, dtype="bf16")
    from tilepick.bench.sweep import ModelPicks

    assert set(df.problem_key) == {p.key()}   # only the bf16 problem of the dataset
    assert set(df.config_id) == {"gemm.cublas"} | {c.id for c in ModelPicks(2)(p)}
    assert df.valid.all()
    # no model for the dtype: a clear error before anything compiles
    res = runner.invoke(app, ["sweep", "--problems", str(first), "--out", str(tmp_path / "x"),
                              "--dtype", "fp16", "--model-top", "2", "--model",
                              str(tmp_path / "nope")] + quiet_args)
    assert res.exit_code == 2 and "--model-top" in res.output
    assert not (tmp_path / "x").exists()
    # a model of another dtype than the problems
    bf16_model = Path(__file__).resolve().parent.parent / "models" / "gemm_bf16_h200"
    res = runner.invoke(app, ["sweep", "--problems", str(csv), "--out", str(tmp_path / "z"),
                              "--model-top", "2", "--model", str(bf16_model)]
                        + quiet_args)
    assert res.exit_code == 2 and "ranks bf16 problems" in res.output
    assert not (tmp_path / "z").exists()
    # a dataset without problems of the asked dtype/layout
    res = runner.invoke(app, ["sweep", "--problems", str(first), "--out", str(tmp_path / "y"),
                              "--layout", "rc"] + quiet_args)
    assert res.exit_code == 2 and "no bf16 rc problems" in res.output


# -- measuring order and top-up -----------------------------------------------------------------


def test_model_order_measures_the_same_configs_likely_winners_first():
    """--order model changes when a config is measured, never which: the plan holds the same
    configs as the id order, led by the model's best-ranked one over the whole space."""
    from tilepick.bench.sweep import ModelPicks, plan_configs
    from tilepick.model import Predictor

    p = GemmProblem(1000, 1000, 1000, dtype="bf16")
    (_, by_id), = plan_configs([p], SweepOptions(sample=30))
    (_, by_model), = plan_configs([p], SweepOptions(sample=30, order="model"))
    assert set(by_model) == set(by_id) and by_id == sorted(by_id) and by_model != by_id
    space = Predictor(Predictor.load(arch="h200", dtype="bf16").model_dir, strict=False,
                      catalog="space")
    rank = {cid: i for i, (cid, _, _) in enumerate(space.rank(p))}
    # configs of families the model never learned (added after it) keep their order, last
    ranked = [c for c in by_model if c.id in rank]
    unranked = [c for c in by_model if c.id not in rank]
    assert ranked and by_model == ranked + unranked and unranked == sorted(unranked)
    assert [rank[c.id] for c in ranked] == sorted(rank[c.id] for c in ranked)
    assert ModelPicks(0).order(p, by_id) == by_model
    with pytest.raises(ValueError, match="measuring order"):
        plan_configs([p], SweepOptions(sample=30, order="fastest"))


def test_top_up_draws_only_unmeasured_configs_up_to_n(tmp_path):
    """--top-up N: each problem gets only configs its dataset lacks, as many as bring it to N
    (the tutorial's come on top, as in any sample); a problem that has N is left out; rows of
    configs the dataset has (cuBLAS, timed again as the stop bound's reference) are not
    written."""
    from tilepick.bench.sweep import plan_configs

    p, full = GemmProblem(512, 512, 512, dtype="bf16"), GemmProblem(256, 512, 64, dtype="bf16")
    valid = [c.id for c in solvers.applicable_configs(p) if not c.is_vendor]
    have = set(valid[::7][:12]) | {"gemm.cublas"}
    measured = {p.key(): have, full.key(): set(valid[:40])}
    plan = plan_configs([p, full], SweepOptions(top_up=40, measured=measured))
    assert [q for q, _ in plan] == [p]
    ids = {c.id for c in plan[0][1]}
    assert not ids & have and len(ids) >= 40 - len(have)
    assert len(ids | have) >= 40
    # end to end on a tiny problem (interpreter): cuBLAS and the measured config not written
    t = TINY[0]
    tvalid = [c.id for c in solvers.applicable_configs(t) if not c.is_vendor]
    tmeasured = {t.key(): {"gemm.cublas", tvalid[0]}}
    run_sweep([t], tmp_path, quiet(sample=None, top_up=4, measured=tmeasured))
    df = io.read_frame(tmp_path)
    # 2 lacking, but a sample keeps one config of each of the 3 applicable families
    assert len(df) == 3 and not set(df.config_id) & tmeasured[t.key()] and df.valid.all()
    # a family with nothing left to measure (here: not applicable to an aligned problem)
    # leaves the problem out, not a cuBLAS-only measurement that would write no row
    assert plan_configs([p], SweepOptions(top_up=10**6, measured=measured,
                                          families=["gemm.cublas_repack"])) == []
    odd = GemmProblem(37, 64, 128, dtype="bf16", layout="cc")
    [(q, cfgs)] = plan_configs([odd, p], SweepOptions(top_up=10**6, measured={},
                                                      families=["gemm.cublas_repack"]))
    assert q == odd and [c.id for c in cfgs] == ["gemm.cublas_repack"]


def test_cli_top_up_needs_a_dataset_and_no_sample(tmp_path):
    runner = CliRunner()
    data = str(Path(__file__).parents[1] / "data/gemm/fp16/h200/train_rr")
    for args in (["--problems", "train", "--top-up", "150"],
                 ["--problems", data, "--dtype", "fp16", "--top-up", "150", "--sample", "5"],
                 ["--problems", data, "--dtype", "fp16", "--top-up", "0"]):
        res = runner.invoke(app, ["sweep", "--out", str(tmp_path / "o")] + args)
        assert res.exit_code == 2 and "--top-up" in res.output, args
    res = runner.invoke(app, ["sweep", "--out", str(tmp_path / "o"), "--problems", "train",
                              "--order", "fastest"])
    assert res.exit_code == 2 and "--order" in res.output


def test_sample_configs_measure_the_other_vendor_candidates_on_top():
    """gemm.cublas_repack is one config: measured wherever it applies, on top of the sample and
    whatever the pool (cuBLAS itself is measured with every problem, outside the sample)."""
    odd = GemmProblem(37, 64, 128, dtype="bf16", layout="cc")   # lda = 37: misaligned
    rep = cfg.KernelConfig("gemm.cublas_repack")
    chosen = sample_configs(odd, 6, random.Random(0))
    assert rep in chosen and cfg.KernelConfig("gemm.cublas") not in chosen
    assert len(chosen) == 6 + 1 + len([c for c in chosen if c.id in ALWAYS])
    assert rep in sample_configs(odd, 6, random.Random(0), pool=set())
    assert sample_configs(odd, None, random.Random(0), families=["gemm.cublas_repack"]) == [rep]
    assert sample_configs(odd, 10**6, random.Random(0), families=["gemm.cublas_repack"],
                          exclude={rep.id}) == []
    assert rep not in sample_configs(WIDE, None, random.Random(0))   # aligned: not applicable
