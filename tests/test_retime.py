"""The re-timing pass (tilepick.bench.retime): who is re-timed, the rows it writes, how the
loader prefers them, resume, and the command; end to end through the interpreter."""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from tilepick.bench.retime import (CUBLAS_ID, RetimeOptions, baseline_candidates,
                                   check_same_gpu, contenders, retime)
from tilepick.bench.sweep import SweepOptions, run_sweep
from tilepick.cli import app
from tilepick.data import io
from tilepick.data.schema import SCHEMA
from tilepick.model.dataset import clean
from tilepick.problem import GemmProblem

TINY = [GemmProblem(16, 24, 32, dtype="fp16"), GemmProblem(32, 16, 16, dtype="fp32")]


def _view(rows):
    return pd.DataFrame(rows, columns=["problem_key", "config_id", "tflops", "retimed"])


def test_contenders_rule():
    key = GemmProblem(64, 64, 64, dtype="bf16").key()
    view = _view([(key, CUBLAS_ID, 50.0, True),     # always, and re-timed before
                  (key, "a", 100.0, False),         # the best
                  (key, "b", 95.0, False),          # within 0.9
                  (key, "c", 91.0, True),           # within 0.9, re-timed before
                  (key, "d", 80.0, True),           # re-timed before: again
                  (key, "e", 70.0, False),          # the model's pick
                  (key, "f", 60.0, False)])         # nobody's
    out = contenders(view, RetimeOptions(model_top=1),
                     ranker=lambda p: ["unmeasured", "e", "f"])
    assert out == {key: ["c", "d", CUBLAS_ID, "a", "b", "e"]}
    # at most `top` of the near ones, best first; no model; the baselines' measured ones
    out = contenders(view, RetimeOptions(top=1, model_top=0),
                     others=lambda p: ["f", "unmeasured", "a"])
    assert out == {key: ["c", "d", CUBLAS_ID, "a", "f"]}
    # a narrower pass: the configs re-timed before come back only as near ones or picks
    out = contenders(view, RetimeOptions(model_top=1, previous=False),
                     ranker=lambda p: ["unmeasured", "e", "f"])
    assert out == {key: [CUBLAS_ID, "a", "b", "c", "e"]}
    # a problem with one candidate has nothing to compare
    lone = _view([(key, "a", 1.0, False)])
    assert contenders(lone, RetimeOptions(model_top=0)) == {}


def test_baseline_candidates_are_the_tutorials_valid_configs_and_nvmh_picks():
    from tilepick.hardware import profile
    from tilepick.model import baselines, nvmh

    p = GemmProblem(512, 512, 512, dtype="bf16")
    got = baseline_candidates("h200")(p)
    tutorial = baselines.tutorial_valid_ids(p, profile("h200"))
    assert tutorial and got[:len(tutorial)] == tutorial
    if nvmh.unavailable_reason("h200") is None:
        assert set(got[len(tutorial):]) == set(nvmh.ranked_ids(p, "h200")[:nvmh.COUNT])
    else:
        assert got == tutorial


def test_options_refuse_nonsense():
    with pytest.raises(ValueError, match="within"):
        RetimeOptions(within=1.5)
    with pytest.raises(ValueError, match="top"):
        RetimeOptions(top=0)


def test_refuses_another_kind_of_gpu():
    view = pd.DataFrame({"gpu_name": ["NVIDIA H200", "NVIDIA H200"]})
    check_same_gpu(view, "NVIDIA H200 NVL")      # the same kind
    with pytest.raises(ValueError, match="h200.*H100"):
        check_same_gpu(view, "NVIDIA H100 80GB HBM3")


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    run_sweep(TINY, out, SweepOptions(sample=3, rounds=1, noise_fraction=0.0, processes=1,
                                      progress=False, seed=0))
    return out


def test_retime_end_to_end(swept, tmp_path):
    before = io.read_frame(swept)
    opts = RetimeOptions(model_top=0, baselines=False, rounds=2, processes=1, progress=False)
    summary = retime([swept], tmp_path, opts)
    new = io.read_frame(tmp_path)
    assert io.read_table(tmp_path).schema.equals(SCHEMA)
    assert summary["problems"] == len(TINY) and summary["rows"] == len(new)
    assert not summary["meaningful"]                       # interpreter timings
    assert new["sweep_id"].str.startswith("rt-").all() and new["sweep_id"].nunique() == 1
    assert new["retimed"].all() and not new["timing_meaningful"].any()
    assert (new["reps"] == opts.rounds).all()              # one call a round in the interpreter
    # every row keeps its rounds, in order; its time is their median
    import statistics
    assert all(len(r) == opts.rounds for r in new["round_ms"])
    assert [statistics.median(r) for r in new["round_ms"]] == pytest.approx(list(new["time_ms"]))
    for key, g in new.groupby("problem_key"):
        assert CUBLAS_ID in set(g["config_id"])
        old = before[before["problem_key"] == key]
        # the old re-timed configs are all re-timed again
        assert set(old.loc[old["retimed"].fillna(False), "config_id"]) <= set(g["config_id"])
        # fields of the old rows carried over (the problem and the config's description)
        merged = g.merge(old, on="config_id", suffixes=("", "_old"))
        assert (merged["family"] == merged["family_old"]).all()
        assert (merged["m"] == merged["m_old"]).all()
    assert (tmp_path / f"retime-{summary['retime_id']}.json").is_file()
    # the loader takes the pass's rows for the configs it re-timed (the latest re-timing:
    # dates have a resolution of seconds, and here the sweep ran the same second)
    earlier = before.assign(date="2026-01-01T00:00:00Z")
    both = clean(pd.concat([earlier, new], ignore_index=True), meaningful_only=False)
    got = both.set_index(["problem_key", "config_id"])["time_ms"]
    for r in new.itertuples():
        assert got[(r.problem_key, r.config_id)] == pytest.approx(r.time_ms)
    # resume: nothing left to do
    again = retime([swept], tmp_path, opts)
    assert again["problems"] == 0 and again["skipped_done"] == len(TINY)
    assert len(io.read_frame(tmp_path)) == len(new)


def test_cli_data_retime(swept, tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["data", "retime", str(swept), "--out", str(tmp_path / "rt"),
                            "--model-top", "0", "--no-baselines", "--rounds", "1",
                            "--processes", "1",
                            "--limit", "1"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output[r.output.index("{"):])
    assert out["problems"] == 1 and out["rows"] >= 2
    r = runner.invoke(app, ["data", "retime", str(swept), "--out", str(tmp_path / "x"),
                            "--within", "2"])
    assert r.exit_code == 2 and "within" in r.output


def test_cli_data_retime_only_the_given_problems(swept, tmp_path):
    from tilepick.bench.shapes import write_problem_file

    runner = CliRunner()
    write_problem_file(TINY[1:], tmp_path / "only.jsonl")
    r = runner.invoke(app, ["data", "retime", str(swept), "--out", str(tmp_path / "rt"),
                            "--model-top", "0", "--no-baselines", "--rounds", "1",
                            "--processes", "1", "--problems", str(tmp_path / "only.jsonl")])
    assert r.exit_code == 0, r.output
    assert set(io.read_frame(tmp_path / "rt")["problem_key"]) == {TINY[1].key()}
    write_problem_file([GemmProblem(8, 8, 8)], tmp_path / "none.jsonl")
    r = runner.invoke(app, ["data", "retime", str(swept), "--out", str(tmp_path / "x"),
                            "--problems", str(tmp_path / "none.jsonl")])
    assert r.exit_code == 2 and "none of the given problems" in r.output


def test_picks_outside_the_pass_are_counted(tmp_path):
    """A model whose first measured config the pass did not re-time is flagged: inside the
    pass it would be scored by its next config there."""
    from types import SimpleNamespace

    import numpy as np

    from tilepick.model.validate import first_picks

    p, q = GemmProblem(64, 64, 64, dtype="bf16"), GemmProblem(128, 64, 64, dtype="bf16")
    pd.DataFrame({"problem_key": [k.key() for k in (p, q) for _ in range(4)],
                  "config_id": ["a", "b", "c", CUBLAS_ID] * 2}).to_parquet(tmp_path / "x.parquet")
    # p: its pass re-timed a and cuBLAS; q: no pass (every row kept)
    frame = pd.DataFrame({"problem_key": [p.key(), p.key(), q.key(), q.key()],
                          "config_id": ["a", CUBLAS_ID, "a", "b"],
                          "sweep_id": ["rt-1", "rt-1", "s", "s"]})
    ds = SimpleNamespace(problem_keys=np.array([p.key(), q.key()]), starts=np.array([0, 2]),
                         sizes=np.array([2, 2]), frame=frame,
                         config_ids=frame["config_id"].to_numpy())

    def ranker(order):
        return SimpleNamespace(rank=lambda problem: [(c, 1.0, None) for c in order])

    def outside(order):
        return len(first_picks(ranker(order), ds, [tmp_path])["outside_pass"])

    assert outside(["unmeasured", "a", "b"]) == 0
    assert outside(["b", "a"]) == 1   # p's b: not re-timed
    # a first pick never measured at all is named too: the dispatcher would run it
    got = first_picks(ranker(["unmeasured", "a", "b"]), ds, [tmp_path])
    assert got == {"unmeasured": [p.key(), q.key()], "outside_pass": []}
    assert first_picks(ranker(["b", "a"]), ds, [tmp_path]) == {"unmeasured": [],
                                                               "outside_pass": [p.key()]}


def test_picks_file_adds_a_models_measured_picks(swept, tmp_path, monkeypatch):
    """`data picks` writes a model's first measured configs; `data retime --picks` re-times
    them with the contenders, as `--model-top` would with the model on the machine."""
    from tilepick.bench import retime as rt

    view = rt.current_view([swept])
    key = TINY[0].key()
    measured = sorted(set(view.loc[view["problem_key"] == key, "config_id"]) - {CUBLAS_ID})
    order = ["never.measured"] + measured[::-1]
    monkeypatch.setattr(rt, "model_ranker", lambda dtype, model_dir: lambda p: order)
    picks = rt.write_picks([swept], tmp_path / "picks.json", n=2,
                           only=frozenset({key}))
    assert picks == {key: measured[::-1][:2]}
    assert rt.read_picks(tmp_path / "picks.json") == picks
    # the same ids as model_top would add, from the file instead of a model
    g = view[view["problem_key"] == key].assign(retimed=False, tflops=1.0)
    via_file = contenders(g, RetimeOptions(model_top=0, within=1.0, top=1),
                          others=rt._with_picks(None, picks))
    via_model = contenders(g, RetimeOptions(model_top=2, within=1.0, top=1),
                           ranker=lambda p: order)
    assert via_file == via_model and set(picks[key]) <= set(via_file[key])
    # through the command: the picks are among the re-timed configs
    runner = CliRunner()
    r = runner.invoke(app, ["data", "retime", str(swept), "--out", str(tmp_path / "rt"),
                            "--model-top", "0", "--no-baselines", "--rounds", "1",
                            "--processes", "1", "--within", "1", "--top", "1",
                            "--picks", str(tmp_path / "picks.json")])
    assert r.exit_code == 0, r.output
    new = io.read_frame(tmp_path / "rt")
    assert set(picks[key]) <= set(new.loc[new["problem_key"] == key, "config_id"])


def test_picks_file_errors_name_the_file(tmp_path):
    from tilepick.bench.retime import read_picks

    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(ValueError, match="bad.json"):
        read_picks(bad)
    import gzip   # the shipped lists' form: read the same, errors named the same
    good = {"gemm.bf16.rr.m1.n2.k3": ["gemm.cublas"]}
    (tmp_path / "p.json.gz").write_bytes(gzip.compress(json.dumps(good).encode()))
    assert read_picks(tmp_path / "p.json.gz") == good
    from tilepick.bench.retime import save_picks
    save_picks(good, tmp_path / "s.json.gz")   # what the list scripts write
    assert gzip.decompress((tmp_path / "s.json.gz").read_bytes()) == json.dumps(
        good, indent=0, sort_keys=True).encode()
    (tmp_path / "torn.json.gz").write_bytes(gzip.compress(b'{"a": [')[:-6])
    with pytest.raises(ValueError, match="torn.json.gz"):
        read_picks(tmp_path / "torn.json.gz")
    runner = CliRunner()
    r = runner.invoke(app, ["data", "retime", str(tmp_path), "--out", str(tmp_path / "x"),
                            "--picks", str(tmp_path / "missing.json")])
    assert r.exit_code == 2 and "missing.json" in r.output
