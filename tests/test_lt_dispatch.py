"""cuBLASLt's entries in the dispatcher and the entry model (CPU: a simulated device, a fake
cuBLASLt heuristic; the entry model trained on a slice of the shipped probe data)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from tilepick import solvers
from tilepick.dispatch import Dispatcher, Environment, SimulatedDevice
from tilepick.features import lt_entries
from tilepick.hardware import profile
from tilepick.model import lt_ranker
from tilepick.problem import GemmProblem
from tilepick.solvers.cublaslt_lib import LtAlgo

ROOT = Path(__file__).resolve().parent.parent
TRAIN = ROOT / "benchmarks" / "results" / "cublaslt_probe_train_bf16_h200_2ffff36.json.gz"
ENV = Environment("NVIDIA H200", "580", "13.0", "2.11", "3.6", "abc")
HW = profile("h200")
P = GemmProblem(1024, 4096, 4096, dtype="bf16", layout="rr")
NAMES = ["a66.t23.s35.k1.r0.w0.c4.i0.cl3", "a66.t20.s35.k1.r0.w0.c1.i0.cl3",
         "a66.t197.s35.k1.r0.w0.c2.i0.cl5", "a24.t15.s0.k1.r0.w0.c0.i0.cl0"]
IDS = [f"gemm.cublaslt.{n}" for n in NAMES]


def entries():
    return [(LtAlgo.parse(n), {"rank": i, "workspace": 0, "waves": 1.0})
            for i, n in enumerate(NAMES)]


class FakeRanker:
    """Ranks the entries in reverse heuristic order; ``ahead`` says whether the best runs."""

    def __init__(self, ahead: bool):
        self.ahead = ahead

    def choose(self, problem, ents, sm_count):
        return [(name, 1.0 - 0.1 * i) for i, (name, _) in enumerate(reversed(ents))], self.ahead


class Model:
    def rank(self, problem, top=None):
        return [("gemm.cublas", 500.0, 0.01), ("gemm.ptr.m128n128k64.g8.w4.s3", 450.0, 0.01)]


@pytest.fixture
def fake_lt(monkeypatch):
    """cuBLASLt 'usable' on this CPU, its heuristic returning :data:`NAMES`."""
    solver = solvers.SOLVERS["gemm.cublaslt"]
    monkeypatch.setattr(type(solver), "is_applicable", lambda self, p, hw=None: True)
    monkeypatch.setattr(type(solver), "entries", lambda self, p: entries())
    return solver


def tensors():
    a, b = torch.randn(P.m, P.k).bfloat16(), torch.randn(P.k, P.n).bfloat16()
    return a, b, torch.empty(P.m, P.n, dtype=torch.bfloat16)


def dispatcher(mode, ranker, device=None, **kw):
    return Dispatcher(mode=mode, device=device or SimulatedDevice(), predictor=Model(),
                      user_db=None, system_db=None, hw=HW, env=ENV, lt_ranker=ranker, **kw)


def test_heuristic_runs_the_entry_models_pick_ahead_of_cublas(fake_lt):
    d = dispatcher("heuristic", FakeRanker(ahead=True))
    ranked, _ = d.ranked(P)
    assert [r[0] for r in ranked] == [IDS[-1], "gemm.cublas", "gemm.ptr.m128n128k64.g8.w4.s3"]
    assert ranked[0][1:] == ranked[1][1:]   # it inherits cuBLAS's prediction
    a, b, out = tensors()
    d.run(P, a, b, out)
    assert d.device.launched == [(P.key(), IDS[-1])] and d.device.benchmarked == []


def test_cublas_stays_first_where_no_entry_clears_the_gap(fake_lt):
    d = dispatcher("heuristic", FakeRanker(ahead=False))
    assert d.decide(P).config_id == "gemm.cublas"


def test_without_an_entry_model_or_cublaslt_nothing_changes(fake_lt, monkeypatch):
    assert dispatcher("heuristic", None).decide(P).config_id == "gemm.cublas"
    monkeypatch.setattr(type(fake_lt), "is_applicable", lambda self, p, hw=None: False)
    assert dispatcher("heuristic", FakeRanker(True)).decide(P).config_id == "gemm.cublas"


def test_a_failing_entry_falls_back_to_cublas_and_is_not_offered_again(fake_lt):
    d = dispatcher("heuristic", FakeRanker(ahead=True), SimulatedDevice(failing={IDS[-1]}))
    d.run(P, *tensors())
    assert d.device.launched == [(P.key(), "gemm.cublas")]
    assert IDS[-1] in d.invalid[P]
    assert IDS[-1] not in [r[0] for r in d.ranked(P)[0]]


def test_hybrid_benchmarks_the_entry_models_best_entries_with_cublas(fake_lt):
    times = {(P.key(), "gemm.cublas"): 1.0, (P.key(), "gemm.ptr.m128n128k64.g8.w4.s3"): 1.2,
             (P.key(), IDS[3]): 1.05, (P.key(), IDS[2]): 0.9, (P.key(), IDS[1]): 0.95}
    d = dispatcher("hybrid", FakeRanker(ahead=False), SimulatedDevice(times=times), k=2, lt_k=3)
    decision = d.decide(P, tensors())
    benched = [c for _, c in d.device.benchmarked]
    assert set(benched) == {"gemm.cublas", "gemm.ptr.m128n128k64.g8.w4.s3", *IDS[1:]}
    assert decision.config_id == IDS[2]   # the simulated device has no rounds: medians decide
    with pytest.raises(ValueError, match="lt_k"):
        dispatcher("hybrid", None, lt_k=-1)


def test_unavailable_entries_warn_once_and_leave_cublas(fake_lt, monkeypatch):
    def broken(self, p):
        raise RuntimeError("cublasLtMatmulAlgoGetHeuristic: cuBLAS status 15 (NOT_SUPPORTED)")
    monkeypatch.setattr(type(fake_lt), "entries", broken)
    d = dispatcher("heuristic", FakeRanker(True))
    with pytest.warns(RuntimeWarning, match="NOT_SUPPORTED"):
        assert d.decide(P).config_id == "gemm.cublas"


# -- the entry features and model ---------------------------------------------------------------
def test_entry_features_on_a_hand_computed_case():
    name = LtAlgo.parse("a66.t20.s35.k2.r2.w0.c1.i0.cl5")   # 128x128 tile, k64xAUTO, 1x2x1
    p = GemmProblem(100, 300, 1000, dtype="bf16", layout="rc")
    x = lt_entries.compute(lt_entries.entry_inputs(p, [(name, {"rank": 3, "workspace": 1023,
                                                               "waves": 0.5})], 132))
    f = dict(zip(lt_entries.FEATURE_NAMES, x[0]))
    assert (f["tile_n"], f["tile_m"], f["stage_k"]) == (128, 128, 64)
    assert math.isnan(f["stage_count"])                         # AUTO
    assert (f["cluster_n"], f["cluster_m"]) == (1, 2)
    assert (f["tiles_m"], f["tiles_n"]) == (1, 3)
    assert f["eff_m"] == pytest.approx(100 / 128) and f["eff_n"] == pytest.approx(300 / 384)
    assert f["ctas_per_sm"] == pytest.approx(3 * 2 / 132)
    assert f["k_per_split"] == pytest.approx(math.log2(500))
    assert (f["a_row_major"], f["b_row_major"], f["rank"], f["log_workspace"]) == (1, 0, 3, 10)
    assert (f["m_align8"], f["n_align8"], f["k_align8"]) == (0, 0, 1)
    # an algorithm without a tile (older kernels): tile features missing, not zero
    old = lt_entries.compute(lt_entries.entry_inputs(
        p, [(LtAlgo.parse("a12.t0.s0.k1.r0.w0.c0.i0.cl0"), {"rank": 0, "workspace": 0,
                                                             "waves": 0.0})], 132))
    g = dict(zip(lt_entries.FEATURE_NAMES, old[0]))
    assert math.isnan(g["tile_m"]) and math.isnan(g["eff_m"])
    with pytest.raises(KeyError, match="waves"):
        lt_entries.compute({k: [1] for k in lt_entries.INPUTS if k != "waves"})


def test_entry_features_against_the_first_entry_and_the_cluster():
    p = GemmProblem(100, 300, 1000, dtype="bf16", layout="rc")
    first = LtAlgo.parse("a66.t20.s35.k1.r0.w0.c1.i0.cl5")    # 128x128 tile, cluster 1x2x1
    wide = LtAlgo.parse("a66.t29.s35.k1.r0.w0.c1.i0.cl2")     # 128x160 (N x M), 1x1x1
    entries = [(wide, {"rank": 1, "workspace": 0, "waves": 1.0}),
               (first, {"rank": 0, "workspace": 0, "waves": 0.25})]
    x = lt_entries.compute(lt_entries.entry_inputs(p, entries, 132))
    f = [dict(zip(lt_entries.FEATURE_NAMES, row)) for row in x]
    assert (f[0]["tile_n"], f[0]["tile_m"]) == (128, 160) and f[0]["cluster_m"] == 1
    # the first entry against itself; the other against it (the entry listed first is not
    # the heuristic's first: rank decides)
    assert f[1]["tile_area_vs_first"] == f[1]["tile_m_vs_first"] == f[1]["waves_vs_first"] == 0
    assert f[0]["tile_area_vs_first"] == pytest.approx(math.log2(1.25))
    assert f[0]["tile_m_vs_first"] == pytest.approx(math.log2(1.25))
    assert f[0]["waves_vs_first"] == pytest.approx(2.0)
    # M = 100 in clusters of 2 x 128 rows: 100 / 256; N = 300 in 3 x 128 columns
    assert f[1]["eff_m_cluster"] == pytest.approx(100 / 256)
    assert f[1]["eff_n_cluster"] == pytest.approx(300 / 384)
    assert f[1]["wave_fill"] == pytest.approx(3 / 132)   # 3 programs fill 3 of 132 SMs
    # rows of several problems at once (training's frame) = each problem on its own
    q = GemmProblem(4096, 300, 1000, dtype="bf16", layout="rc")
    both = {k: a + b for (k, a), b in zip(lt_entries.entry_inputs(p, entries, 132).items(),
                                          lt_entries.entry_inputs(q, entries[::-1], 132).values())}
    alone = lt_entries.compute(lt_entries.entry_inputs(q, entries[::-1], 132))
    np.testing.assert_array_equal(lt_entries.compute(both), np.vstack([x, alone]))


@pytest.fixture(scope="module")
def probe_rows():
    return lt_ranker.probe_frame(TRAIN)


def test_probe_rows_carry_labels_and_provenance(probe_rows):
    df = probe_rows
    assert df["gpu_name"].eq("NVIDIA H200").all() and df["cublaslt_version"].eq(130100).all()
    assert (df["over_torch"] > 0).all() and set(df["label_from"]) == {"screen", "final"}
    # every entry name parses back to its fields
    row = df.iloc[0]
    assert LtAlgo.parse(row["entry"]).tile == row["tile"]
    g = lt_ranker.grades(df)
    best = df.assign(g=g).groupby("spec")["g"].max()
    assert (best == lt_ranker.GRADES - 1).all() and g.min() >= 0


def test_train_load_choose_round_trip(tmp_path, probe_rows, monkeypatch):
    monkeypatch.setattr(lt_ranker, "ROUNDS", 20)
    monkeypatch.setattr(lt_ranker, "PARAMS", {**lt_ranker.PARAMS, "num_threads": 1})
    specs = sorted(probe_rows["spec"].unique())[:150]
    small = tmp_path / "probe.json"
    import gzip
    import json

    doc = json.load(gzip.open(TRAIN))
    doc["rows"] = [r for r in doc["rows"] if r["spec"] in set(specs)]
    small.write_text(json.dumps(doc))
    meta = lt_ranker.train([small], tmp_path / "model")
    assert meta["shapes"] == 150 and meta["delta"] in lt_ranker.DELTAS
    assert meta["features"] == list(lt_entries.FEATURE_NAMES)
    r = lt_ranker.LtRanker.load(tmp_path / "model")
    ranked, ahead = r.choose(P, entries(), HW.sm_count)
    assert sorted(n.name for n, _ in ranked) == sorted(NAMES)
    gaps = [g for _, g in ranked]
    assert gaps == sorted(gaps, reverse=True) and ahead == (gaps[0] > r.delta)
    # the gap is measured from the heuristic's first entry (rank 0): its own gap is 0
    assert dict((n.name, g) for n, g in ranked)[NAMES[0]] == 0.0
    assert r.choose(P, [], HW.sm_count) == ([], False)
    # a model of another feature list is refused
    meta_path = tmp_path / "model" / lt_ranker.META_FILE
    meta_path.write_text(meta_path.read_text().replace('"log_m"', '"log_mm"'))
    with pytest.raises(ValueError, match="retrain"):
        lt_ranker.LtRanker.load(tmp_path / "model")


def test_choices_score_the_pick_by_its_own_label():
    import pandas as pd

    df = pd.DataFrame({"spec": ["s"] * 3, "m": [8] * 3, "layout": ["rr"] * 3,
                       "rank": [0, 1, 2], "entry": ["x", "y", "z"],
                       "over_torch": [1.0, 1.04, 0.9]})
    ch = lt_ranker.choices(df, np.array([0.0, 0.2, 0.5]), delta=0.1)
    assert ch["pick"].iloc[0] == "z" and ch["chosen"].iloc[0] == 0.9
    assert ch["best"].iloc[0] == 1.04 and ch["first"].iloc[0] == 1.0
    ch = lt_ranker.choices(df, np.array([0.0, 0.2, 0.5]), delta=0.6)
    assert ch["pick"].iloc[0] == lt_ranker.TORCH and ch["chosen"].iloc[0] == 1.0


def test_the_shipped_entry_model_loads():
    r = lt_ranker.LtRanker.load(ROOT / "models" / "cublaslt_bf16_h200")
    assert r.meta["gpu_name"] == ["NVIDIA H200"] and r.delta in lt_ranker.DELTAS


def test_lt_evaluate_cli_scores_the_shipped_model_on_held_out_shapes():
    import json

    from typer.testing import CliRunner

    from tilepick.cli import app

    val = ROOT / "benchmarks" / "results" / "cublaslt_probe_validation_rr_h200_e2492d3.json.gz"
    res = CliRunner().invoke(app, ["lt", "evaluate", str(val), "--model",
                                   str(ROOT / "models" / "cublaslt_bf16_h200")])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["shapes"] == 200 and 0 < out["replaced_torch"] < 1
    assert out["chosen_min"] <= out["chosen_geomean"] <= out["best_geomean_inflated"]


def test_lt_evaluate_cli_delta_overrides_the_models_gap():
    """--delta scores another gap on the same shapes: a wider gap runs entries on fewer of
    them, and without it the model's own gap is reported."""
    import json

    from typer.testing import CliRunner

    from tilepick.cli import app

    val = ROOT / "benchmarks" / "results" / "cublaslt_probe_validation_rr_h200_e2492d3.json.gz"
    model = ROOT / "models" / "cublaslt_bf16_h200"
    outs = {}
    for extra in ([], ["--delta", "0.8"]):
        res = CliRunner().invoke(app, ["lt", "evaluate", str(val), "--model", str(model),
                                       *extra])
        assert res.exit_code == 0, res.output
        outs[tuple(extra)] = json.loads(res.output)
    own, wide = outs[()], outs[("--delta", "0.8")]
    assert own["delta"] == lt_ranker.LtRanker.load(model).delta and wide["delta"] == 0.8
    assert wide["replaced_torch"] < own["replaced_torch"]
    assert wide["first_geomean"] == own["first_geomean"]


def test_lt_cli_names_what_is_not_a_probe_result_or_a_model(tmp_path):
    from typer.testing import CliRunner

    from tilepick.cli import app

    bad = tmp_path / "notes.txt"
    bad.write_text("not json")
    runner = CliRunner()
    for args, says in ((["lt", "evaluate", str(bad)], "is not a cublaslt_probe.py result"),
                       (["lt", "evaluate", str(tmp_path / "missing.json")], "missing.json"),
                       (["lt", "evaluate", str(TRAIN), "--model", str(tmp_path)],
                        "lt_ranker.json")):
        res = runner.invoke(app, args)
        assert res.exit_code == 2 and says in res.output, res.output
    with pytest.raises(ValueError, match="is not a cublaslt_probe.py result"):
        lt_ranker.probe_frame(bad)


def test_fp16_borrows_the_bf16_entry_model_unless_it_has_its_own(tmp_path, monkeypatch):
    import shutil

    from tilepick.dispatch.dispatcher import load_lt_ranker

    shipped = Path(__file__).resolve().parents[1] / "models" / "cublaslt_bf16_h200"
    monkeypatch.setenv("TILEPICK_MODELS", str(tmp_path))
    assert lt_ranker.BORROWED_FROM["fp16"] == "bf16"
    borrowed = load_lt_ranker("fp16", "h200")
    assert borrowed is not None and borrowed.meta == lt_ranker.LtRanker.load(shipped).meta
    assert load_lt_ranker("fp8e4m3", "h200") is None       # nothing to borrow
    assert load_lt_ranker("bf16", "h100") is None           # another GPU: no model
    own = tmp_path / "cublaslt_fp16_h200"
    shutil.copytree(shipped, own)
    meta = json.loads((own / lt_ranker.META_FILE).read_text())
    (own / lt_ranker.META_FILE).write_text(json.dumps({**meta, "delta": 9.0}))
    assert load_lt_ranker("fp16", "h200").delta == 9.0     # its own model comes first
