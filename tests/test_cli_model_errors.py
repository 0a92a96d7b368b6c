"""`tilepick predict`, `search` and `lt evaluate` as a user meets them: flags a CLI user can
pass in place of Python-API hints (--extrapolate), one default length for the table and the
JSON, config ids never cut in tables, --top validated alike, --arch in any case with the valid
choices named, batch-line defaults from the flags, and shipped models found from any cwd."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tilepick import solvers
from tilepick.cli import app
from tilepick.cli_model import DEFAULT_TOP
from tilepick.hardware import profile
from tilepick.problem import GemmProblem

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
CONTRACT = {"problem", "arch", "model", "ranked"}


def shipped(name):
    return pytest.mark.skipif(not (MODELS / name / "model.txt.gz").is_file(),
                              reason=f"the shipped model models/{name} is missing")


pytestmark = shipped("gemm_bf16_h200")


@pytest.fixture
def runner():
    return CliRunner()


def invoke(runner, *args, env=None):
    return runner.invoke(app, [str(a) for a in args], env=env)


def flat(text):
    """Help text with its line wrapping (and rich's box edges) taken out."""
    return " ".join(text.replace("│", " ").split())


# 1. layouts a model was not trained on: --extrapolate, named by the refusal

FP16_CC = ["--m", 1024, "--n", 1024, "--k", 1024, "--dtype", "fp16", "--layout", "cc"]


@shipped("gemm_fp16_h200")
@pytest.mark.parametrize("command", ["predict", "search"])
def test_untrained_layout_refusal_names_the_flag(runner, command):
    res = invoke(runner, command, *FP16_CC, "--json")
    assert res.exit_code == 2, res.output
    assert "--extrapolate" in res.stderr and "strict=False" not in res.stderr
    assert "['rc', 'rr']" in res.stderr and res.stdout == ""


@shipped("gemm_fp16_h200")
def test_predict_extrapolate_json_says_so(runner):
    res = invoke(runner, "predict", *FP16_CC, "--extrapolate", "--top", 5, "--json")
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout)
    assert set(obj) == CONTRACT | {"extrapolated"} and obj["extrapolated"] is True
    assert obj["problem"] == GemmProblem(1024, 1024, 1024, dtype="fp16", layout="cc").key()
    assert len(obj["ranked"]) == 5
    assert all(r["uncertainty"] is None for r in obj["ranked"])   # no confidence
    assert "warning:" in res.stderr and "extrapolation" in res.stderr


@shipped("gemm_fp16_h200")
def test_predict_extrapolate_table_and_search(runner):
    table = invoke(runner, "predict", *FP16_CC, "--extrapolate", "--top", 3)
    assert table.exit_code == 0, table.output
    assert "extrapolated" in table.stdout and "warning:" in table.stderr
    found = invoke(runner, "search", *FP16_CC, "--extrapolate", "--budget", 30, "--top", 3,
                   "--json")
    assert found.exit_code == 0, found.output
    obj = json.loads(found.stdout)
    assert obj["extrapolated"] is True and len(obj["ranked"]) == 3
    assert "warning:" in found.stderr


def test_trained_layout_has_no_extrapolated_key(runner):
    res = invoke(runner, "predict", "--m", 64, "--n", 64, "--k", 64, "--extrapolate", "--json")
    assert res.exit_code == 0, res.output
    assert set(json.loads(res.stdout)) == CONTRACT and res.stderr == ""


# 2. config ids whole in tables, whatever the terminal width

@pytest.mark.parametrize("columns", [80, 40])
def test_table_never_cuts_config_ids(runner, columns):
    args = ["predict", "--m", 16, "--n", 128, "--k", 65536, "--top", 10]
    ids = [r["config_id"] for r in json.loads(invoke(runner, *args, "--json").stdout)["ranked"]]
    assert max(map(len, ids)) >= 40                  # ids as long as the catalog's longest
    res = invoke(runner, *args, env={"COLUMNS": str(columns)})
    assert res.exit_code == 0, res.output
    assert "…" not in res.stdout
    for cid in ids:
        assert cid in res.stdout


def test_issue_example_fits_80_columns(runner):
    res = invoke(runner, "predict", "--m", 128, "--n", 4096, "--k", 4096, "--top", 5,
                 env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    assert "gemm.tma_persistent.m64n64k128.g8.w4.s6" in res.stdout and "…" not in res.stdout
    assert max(len(line) for line in res.stdout.splitlines()) <= 80


# 3. one default length for the table and the JSON; --all for every candidate

def test_table_and_json_default_to_the_same_length(runner):
    args = ["predict", "--m", 128, "--n", 4096, "--k", 4096]
    obj = json.loads(invoke(runner, *args, "--json").stdout)
    assert len(obj["ranked"]) == DEFAULT_TOP
    table = invoke(runner, *args)
    assert table.exit_code == 0, table.output
    assert sum(r["config_id"] in table.stdout for r in obj["ranked"]) == DEFAULT_TOP
    assert f"default {DEFAULT_TOP}" in flat(invoke(runner, "predict", "--help",
                                                   env={"COLUMNS": "200"}).stdout)


def test_all_gives_every_candidate(runner):
    every = invoke(runner, "predict", "--m", 128, "--n", 4096, "--k", 4096, "--all", "--json")
    assert every.exit_code == 0, every.output
    ranked = json.loads(every.stdout)["ranked"]
    problem = GemmProblem(128, 4096, 4096)
    valid = {c.id for c in solvers.applicable_configs(problem, profile("h200"))}
    assert len(ranked) > DEFAULT_TOP and {r["config_id"] for r in ranked} <= valid
    both = invoke(runner, "predict", "--m", 8, "--n", 8, "--k", 8, "--all", "--top", 3)
    assert both.exit_code == 2 and "--top N or --all" in both.stderr


# 4. search: a table unless --json, --top validated as predict does, score explained

def test_search_prints_a_table_without_json(runner):
    res = invoke(runner, "search", "--m", 256, "--n", 1024, "--k", 512, "--budget", 30,
                 "--top", 3)
    assert res.exit_code == 0, res.output
    with pytest.raises(json.JSONDecodeError):
        json.loads(res.stdout)
    assert "config" in res.stdout and "score" in res.stdout
    assert "gemm.bf16.rr.m256.n1024.k512" in res.stdout
    assert "valid configs scored" in res.stdout


@pytest.mark.parametrize("command", ["predict", "search"])
@pytest.mark.parametrize("top", [0, -1])
def test_top_below_one_is_refused_alike(runner, command, top):
    res = invoke(runner, command, "--m", 64, "--n", 64, "--k", 64, "--top", top, "--json")
    assert res.exit_code == 2, res.output
    assert f"--top must be >= 1, got {top}" in res.stderr and res.stdout == ""


def test_search_help_explains_score(runner):
    text = flat(invoke(runner, "search", "--help", env={"COLUMNS": "200"}).stdout)
    assert "score: the model's raw ranking score" in text and "higher: predicted faster" in text


# 5. --arch in any case; the valid choices named

@pytest.mark.parametrize("arch", ["H200", "h200", " H200"])
def test_arch_any_case(runner, arch):
    res = invoke(runner, "predict", "--m", 64, "--n", 64, "--k", 64, "--arch", arch, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["arch"] == "h200"


def test_unknown_arch_lists_only_gemm_choices(runner):
    res = invoke(runner, "predict", "--m", 64, "--n", 64, "--k", 64, "--arch", "H100")
    assert res.exit_code == 2
    assert "gemm_bf16_h100" in res.stderr and "--arch choices for bf16: h200" in res.stderr
    assert "cublaslt" not in res.stderr
    search = invoke(runner, "search", "--m", 64, "--n", 64, "--k", 64, "--arch", "h100")
    assert search.exit_code == 2 and "--arch choices for bf16" in search.stderr


# 6. lt evaluate finds the shipped entry model from any working directory

LT_PROBE = ROOT / "benchmarks" / "results" / "cublaslt_probe_h100_1b6ee28.json.gz"


@shipped("cublaslt_bf16_h200")
@pytest.mark.skipif(not LT_PROBE.is_file(), reason="the probe result is missing")
def test_lt_evaluate_default_model_outside_the_repo(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = invoke(runner, "lt", "evaluate", LT_PROBE)
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout)
    assert Path(obj["model"]) == MODELS / "cublaslt_bf16_h200" and obj["shapes"] > 0


@pytest.mark.parametrize("model, message", [
    ("nowhere", "--model nowhere does not exist"),
    (MODELS / "gemm_bf16_h200", "has no lt_ranker.json"),
])
def test_lt_evaluate_bad_model(runner, tmp_path, model, message):
    res = invoke(runner, "lt", "evaluate", tmp_path / "probe.json", "--model", model)
    assert res.exit_code == 2, res.output
    assert message in res.stderr and "not a cuBLASLt entry model" in res.stderr


def test_lt_evaluate_no_shipped_model(runner, tmp_path, monkeypatch):
    from tilepick.model import artifacts

    monkeypatch.setattr(artifacts, "search_roots", lambda: [tmp_path])
    res = invoke(runner, "lt", "evaluate", tmp_path / "probe.json")
    assert res.exit_code == 2, res.output
    assert "no model cublaslt_bf16_h200" in res.stderr and "--model" in res.stderr


# 7. --layout and --batch-count are defaults of the batch lines, as --dtype is

def test_batch_lines_take_layout_and_batch_count_defaults(runner, tmp_path):
    f = tmp_path / "problems.jsonl"
    f.write_text(json.dumps({"m": 64, "n": 64, "k": 64}) + "\n"
                 + json.dumps({"m": 64, "n": 64, "k": 64, "layout": "rr", "batch": 1}) + "\n")
    res = invoke(runner, "predict", "--batch", f, "--layout", "cc", "--batch-count", 8,
                 "--top", 1, "--json")
    assert res.exit_code == 0, res.output
    keys = [json.loads(line)["problem"] for line in res.stdout.splitlines()]
    assert keys == [GemmProblem(64, 64, 64, batch=8, layout="cc").key(),
                    GemmProblem(64, 64, 64).key()]


def test_batch_help_lists_the_line_keys(runner):
    text = flat(invoke(runner, "predict", "--help", env={"COLUMNS": "200"}).stdout)
    assert "m, n, k (required), dtype, layout and batch" in text
    assert "--dtype, --layout and --batch-count" in text


# 8. which candidates get an uncertainty, and why, in --help

def test_predict_help_says_who_gets_an_uncertainty(runner):
    text = flat(invoke(runner, "predict", "--help", env={"COLUMNS": "200"}).stdout)
    assert "first few candidates only" in text and "hybrid mode" in text
    res = invoke(runner, "predict", "--m", 128, "--n", 4096, "--k", 4096, "--json")
    ranked = json.loads(res.stdout)["ranked"]
    assert ranked[0]["uncertainty"] is not None and ranked[-1]["uncertainty"] is None


@pytest.mark.parametrize("flag", ["--rounds", "--seed-ensemble", "--gate-splits", "--gate-seeds",
                                  "--gate-label-top"])
def test_train_refuses_a_zero_count_by_name(runner, tmp_path, flag):
    # `--rounds 0` once fell back to the default number of rounds without a word
    out = tmp_path / "model"
    res = invoke(runner, "train", "--data", tmp_path / "none.parquet", "--out", out, flag, 0)
    assert res.exit_code == 2, res.output
    assert f"{flag[2:].replace('-', '_')} must be >= 1, got 0" in res.stderr
    assert not out.exists()
