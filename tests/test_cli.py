"""The command line: the JSON contracts of ``configs`` and ``run``, and its error exits."""

import json

import pytest
from typer.testing import CliRunner

from tilepick import solvers
from tilepick.cli import app
from tilepick.config import KernelConfig
from tilepick.problem import GemmProblem
from tilepick.solvers import ConfigInvalidError
from tilepick.tensors import tolerance

SMALL = ["--m", "64", "--n", "64", "--k", "64"]
TMA_ID = "gemm.tma.m64n64k32.g1.w4.s2"


@pytest.fixture
def runner():
    return CliRunner(env={"COLUMNS": "200"})


def invoke(runner, *args):
    return runner.invoke(app, [str(a) for a in args])


# -- configs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype, layout", [("bf16", "rr"), ("fp8e4m3", "rc"), ("fp32", "cc")])
def test_configs_json(runner, dtype, layout):
    res = invoke(runner, "configs", "--op", "gemm", "--m", 256, "--n", 512, "--k", 1024,
                 "--dtype", dtype, "--layout", layout, "--json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert isinstance(rows, list) and rows
    for row in rows:
        assert set(row) == {"config_id", "family", "solver", "params"}
        cfg = KernelConfig.from_id(row["config_id"])
        assert cfg.id == row["config_id"]
        assert row["family"] == cfg.family
        assert row["params"] == cfg.params
        assert row["solver"] == type(solvers.SOLVERS[cfg.family]).__name__
    p = GemmProblem(256, 512, 1024, dtype=dtype, layout=layout)
    assert [r["config_id"] for r in rows] == [c.id for c in solvers.applicable_configs(p)]
    families = {r["family"] for r in rows}
    assert "gemm.ptr" in families and "gemm.tma" in families
    assert ("gemm.cublas" in families) == (dtype != "fp8e4m3" or layout == "rc")


def test_configs_json_family_filter(runner):
    res = invoke(runner, "configs", *SMALL, "--family", "gemm.tma", "--family", "gemm.cublas",
                 "--json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert {r["family"] for r in rows} == {"gemm.tma", "gemm.cublas"}
    assert [r for r in rows if r["family"] == "gemm.cublas"] == [
        {"config_id": "gemm.cublas", "family": "gemm.cublas", "solver": "CublasSolver",
         "params": {}}]


def test_configs_json_batch_tf32(runner):
    res = invoke(runner, "configs", *SMALL, "--dtype", "fp32", "--tf32", "--batch", 4, "--json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    p = GemmProblem(64, 64, 64, batch=4, dtype="fp32", tf32=True)
    assert [r["config_id"] for r in rows] == [c.id for c in solvers.applicable_configs(p)]


def test_configs_table(runner):
    res = invoke(runner, "configs", *SMALL, "--k", 67)
    assert res.exit_code == 0, res.output
    assert "valid configs for gemm.bf16.rr.m64.n64.k67" in res.output
    for fam in solvers.SOLVERS:
        assert fam in res.output
    # families that cannot serve the problem say why
    assert "not a multiple of 16" in res.output


# -- run -------------------------------------------------------------------------------------


def test_run_check_json(runner):
    res = invoke(runner, "run", "--op", "gemm", *SMALL, "--dtype", "bf16", "--config", TMA_ID,
                 "--check", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert {"config_id", "rel_error", "ms"} <= set(out)
    assert out["config_id"] == TMA_ID
    assert out["ms"] is None  # interpreter timings are not meaningful
    assert out["tflops"] is None
    assert out["status"] == "ok"
    assert out["device"] == "cpu-interpreter"
    assert out["problem"] == "gemm.bf16.rr.m64.n64.k64"
    assert 0 <= out["rel_error"] <= tolerance(GemmProblem(64, 64, 64))


@pytest.mark.parametrize("args, config", [
    (["--m", 37, "--n", 45, "--k", 71, "--dtype", "fp16", "--layout", "cc"],
     "gemm.ptr.m64n64k128.g8.w8.s5"),
    (["--m", 16, "--n", 64, "--k", 256, "--dtype", "fp32", "--tf32", "--batch", 2],
     "gemm.splitk.m16n64k64.g8.w4.s3.sk4"),
    (["--m", 48, "--n", 64, "--k", 32, "--dtype", "fp8e4m3", "--layout", "rc"], "gemm.cublas"),
])
def test_run_other_families(runner, args, config):
    res = invoke(runner, "run", *args, "--config", config, "--check", "--json", "--seed", 5)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["status"] == "ok" and out["config_id"] == config
    assert out["rel_error"] is not None and out["rel_error"] < 2e-2


def test_run_without_check_plain_output(runner):
    res = invoke(runner, "run", *SMALL, "--config", TMA_ID)
    assert res.exit_code == 0, res.output
    assert f"config_id: {TMA_ID}" in res.stdout
    assert "rel_error: None" in res.stdout
    assert "status: ok" in res.stdout


def test_run_not_applicable(runner):
    # K = 67: lda = 134 bytes breaks the TMA stride rule
    res = invoke(runner, "run", "--m", 64, "--n", 64, "--k", 67, "--config", TMA_ID, "--check",
                 "--json")
    assert res.exit_code != 0
    assert "not applicable" in res.output
    assert "lda=67" in res.output
    assert res.stdout.strip() == ""  # no JSON result for a refused config


def test_run_config_too_big_for_problem(runner):
    res = invoke(runner, "run", "--m", 16, "--n", 16, "--k", 32, "--config",
                 "gemm.ptr.m256n64k32.g8.w8.s3", "--json")
    assert res.exit_code != 0
    assert "not applicable" in res.output and "block_m=256" in res.output


@pytest.mark.parametrize("bad", ["gemm.ptr.m64", "nonsense", "gemm.foo.m16n64k64.g8.w4.s3",
                                 "gemm.ptr.m64n64k64.g8.w4.s3.sk2"])
def test_run_malformed_config(runner, bad):
    res = invoke(runner, "run", *SMALL, "--config", bad, "--json")
    assert res.exit_code != 0
    assert "error" in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_run_requires_config(runner):
    res = invoke(runner, "run", *SMALL)
    assert res.exit_code != 0
    assert "--config" in res.output


@pytest.mark.parametrize("command", ["configs", "run"])
def test_invalid_problem(runner, command):
    extra = ["--config", TMA_ID] if command == "run" else []
    res = invoke(runner, command, "--m", 0, "--n", 64, "--k", 64, *extra, "--json")
    assert res.exit_code != 0
    assert "m=0" in res.output and "> 0" in res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)  # no traceback


@pytest.mark.parametrize("command", ["configs", "run"])
def test_unknown_dtype(runner, command):
    extra = ["--config", TMA_ID] if command == "run" else []
    res = invoke(runner, command, *SMALL, "--dtype", "int8", *extra, "--json")
    assert res.exit_code != 0
    assert "unsupported dtype 'int8'" in res.output


def test_unknown_layout_and_op(runner):
    res = invoke(runner, "configs", *SMALL, "--layout", "xx", "--json")
    assert res.exit_code != 0 and "unknown layout 'xx'" in res.output
    res = invoke(runner, "configs", "--op", "conv", *SMALL, "--json")
    assert res.exit_code != 0 and "conv" in res.output


def test_tf32_needs_fp32(runner):
    res = invoke(runner, "configs", *SMALL, "--dtype", "bf16", "--tf32", "--json")
    assert res.exit_code != 0 and "tf32" in res.output


def test_run_wrong_result_exits_1(runner, monkeypatch):
    def garbage(problem, config, a, b, out, scale_a=None, scale_b=None):
        out.zero_()
        return out

    monkeypatch.setattr(solvers.SOLVERS["gemm.tma"], "launch", garbage)
    res = invoke(runner, "run", *SMALL, "--config", TMA_ID, "--check", "--json")
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert out["status"] == "wrong" and out["rel_error"] == pytest.approx(1.0)
    assert "tolerance" in res.output


def test_run_invalid_config_exits_3(runner, monkeypatch):
    def fail(problem, config, *args, **kwargs):
        raise ConfigInvalidError(f"{config.id} failed: OutOfResources")

    monkeypatch.setattr(solvers.SOLVERS["gemm.tma"], "launch", fail)
    res = invoke(runner, "run", *SMALL, "--config", TMA_ID, "--check", "--json")
    assert res.exit_code == 3
    assert "invalid for this problem" in res.output and "OutOfResources" in res.output


def test_demo_lists_without_gpu(runner):
    res = invoke(runner, "demo", *SMALL)
    assert res.exit_code == 0, res.output
    assert "valid configs for gemm.bf16.rr.m64.n64.k64" in res.output
    assert "No CUDA GPU" in res.output


def test_help_lists_commands(runner):
    res = invoke(runner, "--help")
    assert res.exit_code == 0
    for command in ("configs", "run", "demo"):
        assert command in res.output


def test_warmup_lists_what_the_dispatcher_would_compile(runner, tmp_path):
    """Under the interpreter nothing is compiled ahead, but the plan (problems, pairs of the
    model's top-k without cuBLAS) is the one a GPU run compiles; a bad file is a clear error."""
    f = tmp_path / "problems.jsonl"
    f.write_text('{"op": "gemm", "m": 128, "n": 4096, "k": 4096}\n'
                 '{"op": "gemm", "m": 16, "n": 4096, "k": 14336, "layout": "rc"}\n')
    r = runner.invoke(app, ["warmup", "--problems", str(f), "--top", "3", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output[r.output.index("{"):])
    assert d["problems"] == 2 and 0 < d["pairs"] <= 6 and d["failed"] == []
    r = runner.invoke(app, ["warmup", "--problems", str(tmp_path / "missing.jsonl")])
    assert r.exit_code == 2 and "missing.jsonl" in r.output
