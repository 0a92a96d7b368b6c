"""What a model ranks: its trained catalog (the configs its data measured) or the whole declared
space. A space model ranks exactly the valid configs, configs its data never measured
included; predictor.json files of version 1 (an explicit catalog list) still load."""

import json
import shutil

import numpy as np
import pytest

from test_model import HW, data_dir, true_tflops  # noqa: F401 (data_dir: a shared fixture)
from tilepick import solvers
from tilepick.config import KernelConfig
from tilepick.data import io
from tilepick.features import candidate_table
from tilepick.model import ModelError, Predictor
from tilepick.model.ranking import CascadeSettings
from tilepick.model import dataset
from tilepick.model.train import TrainOptions, catalog_configs, train
from tilepick.problem import GemmProblem

# odd sizes, M=1, tiny, both trained layouts, batched
PARITY = [GemmProblem(1, 4096, 4096), GemmProblem(1, 1, 1), GemmProblem(37, 1001, 999),
          GemmProblem(3000, 77, 5000), GemmProblem(255, 4097, 129, layout="rc"),
          GemmProblem(1, 28672, 8192, layout="rc"), GemmProblem(64, 256, 100, batch=3),
          GemmProblem(8192, 8192, 8192),
          GemmProblem(1, 8190, 999, batch=2, layout="cr")]   # x @ W decode: gemm.gemv_n_splitk


@pytest.fixture(scope="module")
def space_dir(data_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("models") / "gemm_bf16_h200"
    train([data_dir], "bf16", "h200", out, TrainOptions(folds=3, catalog="space"))
    return out


def test_space_model_records_its_catalog(space_dir, data_dir):
    meta = json.loads((space_dir / "predictor.json").read_text())
    assert meta["version"] == 2 and meta["catalog"] == "space"
    data_ids = set(io.read_frame(data_dir)["config_id"])
    competed = set(catalog_configs(dataset.load([data_dir], "bf16", "h200"),
                                   TrainOptions().catalog_min_rel))
    assert set(meta["trained_configs"]) == competed and competed < data_ids
    assert meta["cascade"] == CascadeSettings.for_catalog("space").to_dict()
    manifest = json.loads((space_dir / "manifest.json").read_text())
    assert manifest["catalog"] == "space"
    assert manifest["configs_in_training_data"] == len(data_ids)
    assert manifest["configs_in_catalog"] > len(data_ids)
    pred = Predictor(space_dir)
    assert pred.catalog == "space" and set(pred.trained_configs) == competed


@pytest.mark.parametrize("problem", PARITY, ids=lambda p: p.key())
def test_space_model_ranks_exactly_the_valid_configs(space_dir, problem):
    pred = Predictor(space_dir, strict=False)   # the synthetic data is rr only
    ids = [r[0] for r in pred.rank(problem)]
    assert len(ids) == len(set(ids))
    assert set(ids) == {c.id for c in solvers.applicable_configs(problem, HW)}
    tf = [r[1] for r in pred.rank(problem)]
    assert tf == sorted(tf, reverse=True)


def test_space_model_picks_configs_its_data_never_measured(space_dir):
    """The features describe configs by their parameters: over unseen shapes, the model's
    first few include configs no training problem measured (which of them comes first
    depends on the synthetic sample: cuBLAS often wins it), and the picks are good against
    the true best of the whole valid space."""
    pred = Predictor(space_dir)
    trained = set(pred.trained_configs)
    unseen, effs = [], []
    for m, n, k in ((3, 4096, 4096), (700, 2000, 2000), (5000, 600, 9000), (64, 28672, 512),
                    (2048, 2048, 2048), (1000, 1000, 1000), (129, 7000, 3000),
                    (4096, 14336, 4096)):
        p = GemmProblem(m, n, k)
        first = [cid for cid, _, _ in pred.rank(p, top=3)]
        pick = first[0]
        unseen += [cid for cid in first if cid not in trained]
        truth = true_tflops([(p, c) for c in solvers.applicable_configs(p, HW)])
        effs.append(true_tflops([(p, KernelConfig.from_id(pick))])[0] / truth.max())
    assert unseen, "every pick was a trained config"
    assert np.mean(effs) > 0.9, effs


def test_trained_catalog_and_override(space_dir):
    p = GemmProblem(300, 5000, 2000)
    trained = Predictor(space_dir, catalog="trained")
    assert trained.catalog == "trained"
    assert {r[0] for r in trained.rank(p)} <= set(trained.trained_configs)
    assert "gemm.cublas" in {r[0] for r in trained.rank(p)}
    with pytest.raises(ModelError, match="catalog"):
        Predictor(space_dir, catalog="everything")


def test_version_1_predictor_json_loads_as_its_trained_catalog(space_dir, tmp_path):
    old = tmp_path / "gemm_bf16_h200"
    shutil.copytree(space_dir, old)
    meta = json.loads((old / "predictor.json").read_text())
    ids = meta.pop("trained_configs")
    meta.update(version=1, catalog=ids, cascade=CascadeSettings().to_dict())
    (old / "predictor.json").write_text(json.dumps(meta))
    pred = Predictor(old)
    assert pred.catalog == "trained" and pred.trained_configs == tuple(ids)
    p = GemmProblem(300, 5000, 2000)
    assert {r[0] for r in pred.rank(p)} <= set(ids)
    assert pred.rank(p) == Predictor(space_dir, catalog="trained",
                                     cascade=CascadeSettings()).rank(p)


def test_unknown_catalog_or_newer_version_is_refused(space_dir, tmp_path):
    bad = tmp_path / "gemm_bf16_h200"
    shutil.copytree(space_dir, bad)
    meta = json.loads((bad / "predictor.json").read_text())
    (bad / "predictor.json").write_text(json.dumps({**meta, "catalog": "all"}))
    with pytest.raises(ModelError, match="catalog 'all'"):
        Predictor(bad)
    (bad / "predictor.json").write_text(json.dumps({**meta, "version": 99}))
    with pytest.raises(ModelError, match="newer"):
        Predictor(bad)


def test_space_table_is_shared_and_repeats_are_lookups(space_dir):
    a, b = Predictor(space_dir), Predictor(space_dir)
    p = GemmProblem(123, 4567, 890)
    assert a._table(p) is b._table(p) is candidate_table(p, a.hw)
    assert a.rank(p) == b.rank(p)


def test_train_rejects_an_unknown_catalog():
    with pytest.raises(ValueError, match="catalog"):
        TrainOptions(catalog="all")


@pytest.mark.parametrize("dtype", ["bf16", "fp16", "fp8e4m3"])
def test_shipped_models_rank_with_the_default_cascade(dtype):
    """The shipped models' cascade is the code's default (session 34 widened both to 64): a
    default changed without the shipped predictor.json files, or the reverse, would make
    `evaluate` and the dispatcher rank differently from the figures the README reports."""
    from pathlib import Path

    meta = json.loads((Path(__file__).resolve().parents[1] / "models" / f"gemm_{dtype}_h200"
                       / "predictor.json").read_text())
    assert meta["catalog"] == "trained"
    assert meta["cascade"] == CascadeSettings.for_catalog("trained").to_dict()
    assert meta["cascade"]["stage2_top"] == 64
