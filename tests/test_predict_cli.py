"""`tilepick predict` and `tilepick search` with the shipped model: the JSON contract, batch
order, and clear errors for bad input."""

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tilepick import solvers
from tilepick.cli import app
from tilepick.config import KernelConfig
from tilepick.hardware import profile
from tilepick.problem import GemmProblem

MODEL = Path(__file__).resolve().parents[1] / "models" / "gemm_bf16_h200"
HW = profile("h200")
RANKED_KEYS = {"config_id", "family", "predicted_tflops", "predicted_ms", "uncertainty"}

pytestmark = pytest.mark.skipif(not (MODEL / "model.txt.gz").is_file(),
                                reason="the shipped model models/gemm_bf16_h200 is missing")


@pytest.fixture
def runner():
    return CliRunner()


def invoke(runner, *args):
    return runner.invoke(app, [str(a) for a in args])


def check_result(obj, problem):
    assert set(obj) == {"problem", "arch", "model", "ranked"}
    assert obj["problem"] == problem.key()
    assert obj["arch"] == "h200" and obj["model"] == "gemm_bf16_h200"
    valid = {c.id for c in solvers.applicable_configs(problem, HW)}
    tflops = [r["predicted_tflops"] for r in obj["ranked"]]
    assert tflops == sorted(tflops, reverse=True), "best first"
    for r in obj["ranked"]:
        assert set(r) == RANKED_KEYS
        cfg = KernelConfig.from_id(r["config_id"])
        assert cfg.id in valid and r["family"] == cfg.family
        assert r["predicted_ms"] == pytest.approx(problem.flops / (r["predicted_tflops"] * 1e9),
                                                  rel=1e-3)
        assert r["uncertainty"] is None or r["uncertainty"] >= 0
    assert obj["ranked"][0]["uncertainty"] is not None


def test_predict_json_contract(runner):
    res = invoke(runner, "predict", "--op", "gemm", "--m", 128, "--n", 4096, "--k", 4096,
                 "--dtype", "bf16", "--all", "--json")
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout)
    check_result(obj, GemmProblem(128, 4096, 4096))
    assert any(r["config_id"] == "gemm.cublas" for r in obj["ranked"])


def test_predict_top_layout_arch_and_model_dir(runner):
    res = invoke(runner, "predict", "--m", 1, "--n", 8192, "--k", 1000, "--layout", "rr",
                 "--arch", "h200", "--top", 3, "--model", MODEL, "--json")
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout)
    assert len(obj["ranked"]) == 3
    check_result(obj, GemmProblem(1, 8192, 1000))



def test_shipped_model_ranks_its_trained_catalog():
    from tilepick.model import Predictor

    pred = Predictor(MODEL)
    meta = json.loads((MODEL / "predictor.json").read_text())
    if isinstance(meta["catalog"], list):          # version 1: the trained catalog, listed
        assert pred.catalog == "trained" and pred.trained_configs == tuple(meta["catalog"])
    else:
        assert pred.catalog == meta["catalog"]
    assert "gemm.cublas" in pred.trained_configs


@pytest.mark.parametrize("m, n, k, layout", [(128, 4096, 4096, "rr"), (1, 8191, 999, "rc")])
def test_predict_json_contract_with_the_whole_space(runner, tmp_path, m, n, k, layout):
    """The shipped model switched to the space catalog: the same JSON, every valid config of
    the families it was trained to know ranked, configs its data never measured among them."""
    from tilepick.model.ranking import CascadeSettings

    model = tmp_path / MODEL.name
    shutil.copytree(MODEL, model, ignore=shutil.ignore_patterns("report", "validation"))
    meta = json.loads((model / "predictor.json").read_text())
    trained = meta["catalog"] if isinstance(meta["catalog"], list) else meta["trained_configs"]
    # half of the trained list: the shipped data may by now cover every config of a shape,
    # and the point is that configs outside the list are ranked too
    trained = trained[::2]
    meta.update(version=2, catalog="space", trained_configs=trained,
                cascade=CascadeSettings.for_catalog("space").to_dict())
    (model / "predictor.json").write_text(json.dumps(meta))
    res = invoke(runner, "predict", "--m", m, "--n", n, "--k", k, "--layout", layout,
                 "--model", model, "--all", "--json")
    assert res.exit_code == 0, res.output
    obj = json.loads(res.stdout)
    problem = GemmProblem(m, n, k, layout=layout)
    check_result(obj, problem)
    ids = [r["config_id"] for r in obj["ranked"]]
    known = json.loads((model / "feature_spec.json").read_text())["encodings"]["family"]
    assert sorted(ids) == sorted(c.id for c in solvers.applicable_configs(problem, HW, known))
    assert set(ids) - set(trained)

def test_predict_table_output(runner):
    res = invoke(runner, "predict", "--m", 64, "--n", 64, "--k", 64)
    assert res.exit_code == 0, res.output
    assert "gemm.bf16.rr.m64.n64.k64" in res.stdout


def test_predict_batch_keeps_input_order(runner, tmp_path):
    shapes = [(4096, 4096, 4096), (1, 4096, 4096), (17, 333, 12345), (1000, 1000, 1000)]
    f = tmp_path / "problems.jsonl"
    f.write_text("\n".join(json.dumps({"op": "gemm", "m": m, "n": n, "k": k, "dtype": "bf16"})
                           for m, n, k in shapes) + "\n\n")
    res = invoke(runner, "predict", "--batch", f, "--top", 5, "--json")
    assert res.exit_code == 0, res.output
    lines = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(lines) == len(shapes)
    for obj, (m, n, k) in zip(lines, shapes):
        check_result(obj, GemmProblem(m, n, k))


def test_predict_batch_bad_lines(runner, tmp_path):
    f = tmp_path / "problems.jsonl"
    f.write_text("\n".join([
        json.dumps({"m": 64, "n": 64, "k": 64}),
        "{not json",
        json.dumps({"op": "conv", "m": 1, "n": 1, "k": 1}),
        json.dumps({"m": 0, "n": 64, "k": 64}),
        json.dumps({"m": 8, "n": 8}),
        json.dumps({"m": 8, "n": 8, "k": 8, "colour": "red"}),
        json.dumps([1, 2, 3]),
        json.dumps({"m": 8, "n": 8, "k": 8, "dtype": "fp32"}),
        json.dumps({"m": 8, "n": 8, "k": 8, "layout": "rr"}),
    ]) + "\n")
    res = invoke(runner, "predict", "--batch", f)
    assert res.exit_code == 2
    out = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(out) == 9
    assert "ranked" in out[0] and "ranked" in out[8]
    errors = {o["line"]: o["error"] for o in out if "error" in o}
    assert sorted(errors) == [2, 3, 4, 5, 6, 7, 8]
    assert "not JSON" in errors[2] and "op" in errors[3] and "m=0" in errors[4]
    assert "missing ['k']" in errors[5] and "colour" in errors[6] and "object" in errors[7]
    assert "gemm_fp32_h200" in errors[8]             # no fp32 model shipped: named
    assert f"{f}:2:" in res.stderr


@pytest.mark.parametrize("args, message", [
    (["--m", 0, "--n", 64, "--k", 64], "sizes must be > 0"),
    (["--m", 64, "--n", 64], "--k"),
    (["--m", 64, "--n", 64, "--k", 64, "--dtype", "int4"], "unsupported dtype"),
    (["--m", 64, "--n", 64, "--k", 64, "--layout", "xy"], "unknown layout"),
    (["--m", 64, "--n", 64, "--k", 64, "--op", "conv"], "unknown op"),
    (["--m", 64, "--n", 64, "--k", 64, "--arch", "h100"], "gemm_bf16_h100"),
    (["--m", 64, "--n", 64, "--k", 64, "--top", 0], "--top"),
    (["--m", 64, "--n", 64, "--k", 64, "--top", 2, "--all"], "--all"),
    (["--batch", "/nonexistent/problems.jsonl"], "does not exist"),
])
def test_predict_bad_input(runner, args, message):
    res = invoke(runner, "predict", *args, "--json")
    assert res.exit_code == 2, res.output
    assert message in res.stderr
    assert res.stdout == ""


def test_search_json(runner):
    args = ["search", "--m", 256, "--n", 1024, "--k", 512, "--method", "de", "--budget", 40,
            "--seed", 1, "--top", 5, "--json"]
    a, b = invoke(runner, *args), invoke(runner, *args)
    assert a.exit_code == 0, a.output
    assert a.stdout == b.stdout                       # deterministic for a seed
    obj = json.loads(a.stdout)
    assert len(obj["ranked"]) == 5 and obj["vs_exhaustive"]["space_valid"] > 0
    valid = {c.id for c in solvers.applicable_configs(GemmProblem(256, 1024, 512), HW)}
    assert all(r["config_id"] in valid for r in obj["ranked"])
    bad = invoke(runner, "search", "--m", 8, "--n", 8, "--k", 8, "--method", "annealing")
    assert bad.exit_code == 2 and "unknown method" in bad.stderr
    for top in (0, -1):
        bad = invoke(runner, "search", "--m", 8, "--n", 8, "--k", 8, "--top", top)
        assert bad.exit_code == 2 and "--top must be >= 1" in bad.stderr
