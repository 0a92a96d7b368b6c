"""Scripts behind the committed GPU runs: the probe list that continues an earlier run
(benchmarks/problems/make_lt_llm_list.py --next) and the retrain script's overrides
(benchmarks/retrain_manifest.py's options and --param, and its check of --add files), whose
outputs are quoted in BENCHMARKS.md."""

import gzip
import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _module(relpath: str, name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / relpath)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lt_list = _module("benchmarks/problems/make_lt_llm_list.py", "make_lt_llm_list")
retrain = _module("benchmarks/retrain_manifest.py", "retrain_manifest")


def test_the_order_is_seeded_and_keeps_out_the_suite_weights():
    specs = lt_list.ordered_specs()
    assert specs == lt_list.ordered_specs() and len(specs) == len(set(specs))
    suite = {(6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336),    # Llama-3-8B (N, K)
             (10240, 8192), (8192, 8192), (57344, 8192), (8192, 28672)}  # Llama-3-70B
    for spec in specs:
        m, n, k = map(int, spec.split(":")[0].split("x"))
        assert (n, k) not in suite and m * n * k <= lt_list.MAX_FLOP


def test_the_next_list_skips_probed_shapes_in_the_same_order(tmp_path, monkeypatch):
    specs = lt_list.ordered_specs()
    done = tmp_path / "probe.json.gz"
    with gzip.open(done, "wt") as f:
        json.dump({"rows": [{"spec": s} for s in specs[:5] + specs[7:9]]}, f)
    monkeypatch.setattr(lt_list, "OUT_NEXT", tmp_path / "next.txt")
    monkeypatch.setattr(lt_list, "COUNT", 4)
    monkeypatch.setattr("sys.argv", ["make_lt_llm_list.py", "--next", str(done)])
    lt_list.main()
    assert (tmp_path / "next.txt").read_text().split() == specs[5:7] + specs[9:11]


def test_a_file_that_is_no_probe_result_is_named(tmp_path):
    bad = tmp_path / "x.json"
    bad.write_text('{"shapes": []}')
    with pytest.raises(SystemExit, match="x.json: not a cublaslt_probe.py result"):
        lt_list.probed([str(bad)])
    with pytest.raises(SystemExit, match="missing.json.gz: not a cublaslt_probe.py result"):
        lt_list.probed([str(tmp_path / "missing.json.gz")])


def test_params_are_read_as_json_where_they_parse():
    assert retrain.parse_params(["learning_rate=0.1", "objective=rank_xendcg",
                                 "lambdarank_truncation_level=40"]) == {
        "learning_rate": 0.1, "objective": "rank_xendcg", "lambdarank_truncation_level": 40}
    with pytest.raises(SystemExit, match="KEY=VALUE"):
        retrain.parse_params(["learning_rate"])


def test_the_command_line_varies_only_the_options_it_names():
    from tilepick.model.train import TrainOptions
    recipe = TrainOptions(rounds=700, gate_splits=1, params={"num_leaves": 63})
    args = retrain.parser().parse_args(["M", "O", "--gate-splits", "3", "--gate-seeds", "2",
                                        "--gate-label-top", "3", "--param", "learning_rate=0.1"])
    opts = retrain.with_overrides(recipe, args)
    assert opts.gate_splits == 3 and opts.gate_seeds == 2 and opts.gate_label_top == 3
    assert opts.rounds == 700 and opts.hold_out
    assert opts.params == {"num_leaves": 63, "learning_rate": 0.1}
    assert opts.gate_lambda_l2 == recipe.gate_lambda_l2 and opts.label_times == recipe.label_times
    same = retrain.with_overrides(recipe, retrain.parser().parse_args(["M", "O", "--no-hold-out"]))
    assert same == TrainOptions(rounds=700, gate_splits=1, params={"num_leaves": 63},
                                hold_out=False)
    # an explicit 0 is refused by name, not taken as "unset" (the script once ignored it)
    for flag, field in (("--rounds", "rounds"), ("--seed-ensemble", "seed_ensemble"),
                        ("--gate-splits", "gate_splits"), ("--gate-seeds", "gate_seeds"),
                        ("--gate-label-top", "gate_label_top")):
        with pytest.raises(ValueError, match=f"{field} must be >= 1, got 0"):
            retrain.with_overrides(recipe, retrain.parser().parse_args(["M", "O", flag, "0"]))


def test_added_files_outside_the_recipe_folders_need_new_folder():
    files = ["d/train_rr/chunk-001.parquet"]
    assert retrain.with_added(files, ["d/train_rr/retime-002.parquet", files[0]]) == [
        files[0], "d/train_rr/retime-002.parquet"]
    with pytest.raises(SystemExit, match="train_low_flop"):
        retrain.with_added(files, ["d/train_low_flop/chunk-001.parquet"])
    assert retrain.with_added(files, ["d/train_low_flop/chunk-001.parquet"], True) == [
        files[0], "d/train_low_flop/chunk-001.parquet"]


def test_an_added_file_of_another_gpu_or_dtype_is_refused(tmp_path):
    from test_model import SHAPES, synthetic_rows

    from tilepick.data import io

    rows = synthetic_rows(SHAPES[:2], seed=1)
    h200 = io.write_part(tmp_path / "h200", rows)
    h100 = io.write_part(tmp_path / "h100", [{**r, "gpu_name": "NVIDIA H100 80GB HBM3"}
                                             for r in rows])
    retrain.check_added([str(h200)], ["bf16", "fp16"], "h200")
    with pytest.raises(SystemExit, match=r"no rows of bf16/fp16 on h200 .*\('bf16', 'h100'\)"):
        retrain.check_added([str(h200), str(h100)], ["bf16", "fp16"], "h200")
    with pytest.raises(SystemExit, match="no rows of fp8e4m3 on h200"):
        retrain.check_added([str(h200)], ["fp8e4m3"], "h200")


suite_picks = _module("benchmarks/analysis_s54/suite_picks.py", "suite_picks")


def test_the_changed_rows_become_one_shapes_argument_each_shape_once():
    from tilepick.problem import GemmProblem

    rows = [GemmProblem(1, 4096, 4096, dtype="bf16", layout="rr"),
            GemmProblem(1, 4096, 4096, dtype="bf16", layout="rc"),
            GemmProblem(16, 57344, 8192, dtype="bf16", layout="rc")]
    assert suite_picks.shapes_arg(rows) == "1x4096x4096,16x57344x8192"
    assert suite_picks.shapes_arg([]) == ""


def test_a_model_against_itself_changes_no_pick(capsys):
    model = str(ROOT / "models" / "gemm_bf16_h200")
    problems = suite_picks.suite(["llama3-8b"])[:6]
    assert suite_picks.changed_picks(model, model, problems) == []
    suite_picks.main([model, model, "--shapes"])
    assert capsys.readouterr().out == "\n"  # nothing to time: the device script skips the A/B


def test_the_one_call_experiment_stops_on_any_gpu_but_an_h200(tmp_path):
    """gemv_n_full_call.sh trains and times for the H200 models only: on the H100 the device
    often lends in its place it must stop before measuring anything (exit 3)."""
    import os
    import subprocess

    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "nvidia-smi").write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3'\n")
    (fake / "nvidia-smi").chmod(0o755)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}", "OUT": str(out)}
    run = subprocess.run(["bash", str(ROOT / "benchmarks" / "gemv_n_full_call.sh")], env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 3 and "not an H200" in run.stdout
    assert not any(out.iterdir())
