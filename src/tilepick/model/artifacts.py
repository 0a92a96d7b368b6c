"""The model directory (``models/<op>_<dtype>_<arch>/``): what is in it, writing and reading.

Files:

* ``model.txt.gz``: the ranking booster trained on all data (LightGBM text, gzip).
* ``ensemble.txt.gz``: one packed booster (see :func:`.booster.pack`) whose output columns are
  the cross-validation fold models (their first ``uncertainty_trees`` trees; their spread is
  the uncertainty), the problem-level model of the best TFLOP/s (see :mod:`.scale`) and, where
  the model has one, the vendor gate (see :mod:`.gate`): one call on the hot path.
* ``predictor.json``: how the Predictor uses them: objective, cascade, calibration, which
  catalog of configs it ranks (see :func:`catalog_of`), the configs its training data
  measured, the layouts it was trained on.
* ``feature_spec.json``: ordered feature names, kinds, encodings and schema version.
* ``manifest.json``: data files with sha256, parameters, versions, commit, date, counts.
* ``cv_metrics.json``, ``feature_importance.json``: the evidence.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

try:  # training and warm starts need LightGBM; loading a model for prediction does not
    import lightgbm as lgb
except ImportError:
    lgb = None

from tilepick.features import FeatureSpec, current_spec
from tilepick.model.booster import interleave, pack, read_model_text, write_model_text

MODEL_FILE = "model.txt.gz"
ENSEMBLE_FILE = "ensemble.txt.gz"
MAX_MODEL_BYTES = 10 * 2**20
PREDICTOR_VERSION = 2   # 2: "catalog" names the pool ("trained" | "space"); 1 listed it

# What the Predictor ranks for a problem (before the per-problem validity rules):
# "trained": the configs its training data measured that came within ``catalog_min_rel`` of
#            some problem's best (its ``trained_configs``, see train.catalog_configs);
# "space": every config of every family's declared space (config.SPACES) and cuBLAS.
CATALOGS = ("trained", "space")
DEFAULT_CATALOG = "trained"


class ModelError(ValueError):
    """A model directory that is missing, incomplete or does not fit the request."""


class ModelNotFound(ModelError):
    """No model folder for (op, dtype, arch) on the search path: the one ModelError a caller
    may answer with choices of its own (the CLI lists the --arch values that would load)."""

    def __init__(self, message: str, op: str, dtype: str, arch: str):
        super().__init__(message)
        self.op, self.dtype, self.arch = op, dtype, arch


def model_dirname(op: str, dtype: str, arch: str) -> str:
    return f"{op}_{dtype}_{arch}"


def search_roots() -> list[Path]:
    """Where shipped models are looked for: ``$TILEPICK_MODELS`` (os.pathsep-separated), then
    the repository's ``models/`` folder (this package is installed from a source tree)."""
    roots = [Path(p) for p in os.environ.get("TILEPICK_MODELS", "").split(os.pathsep) if p]
    roots.append(Path(__file__).resolve().parents[3] / "models")
    return roots


def available_models(op: str) -> list[str]:
    """The model folders of ``op`` on the search path (``gemm``: not the cuBLASLt entry
    models beside them, which are no choice of --arch)."""
    return sorted({p.name for root in search_roots() if root.is_dir() for p in root.iterdir()
                   if p.name.startswith(f"{op}_") and (p / MODEL_FILE).is_file()})


def find_model_dir(op: str, dtype: str, arch: str) -> Path:
    name = model_dirname(op, dtype, arch)
    for root in search_roots():
        if (root / name / MODEL_FILE).is_file():
            return root / name
    available = available_models(op)
    raise ModelNotFound(f"no model {name} in {[str(r) for r in search_roots()]} "
                        f"(available: {available or 'none'}); train one with `tilepick train`",
                        op, dtype, arch)


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise ModelError(f"model directory {path.parent} lacks {path.name}") from None
    except json.JSONDecodeError as exc:
        raise ModelError(f"{path} is not valid JSON: {exc}") from None


def catalog_of(meta: dict) -> tuple[str, tuple[str, ...]]:
    """(catalog, trained config ids) of a predictor.json.

    Version 1 files list the trained configs under ``catalog`` (they rank only those);
    version 2 files name the catalog and list the trained configs under ``trained_configs``.
    """
    cat = meta.get("catalog")
    if isinstance(cat, list):
        return "trained", tuple(cat)
    if cat not in CATALOGS:
        raise ModelError(f"predictor.json names catalog {cat!r}; known: {list(CATALOGS)}")
    trained = tuple(meta.get("trained_configs", ()))
    if cat == "trained" and not trained:
        raise ModelError("predictor.json: catalog 'trained' without trained_configs")
    return cat, trained


def check_version(meta: dict, where) -> None:
    version = meta.get("version", 1)
    if not isinstance(version, int) or version > PREDICTOR_VERSION:
        raise ModelError(f"{where}: predictor.json version {version!r} is newer than this "
                         f"tilepick reads ({PREDICTOR_VERSION}); upgrade tilepick")


def check_spec(model_dir: Path) -> FeatureSpec:
    """The saved spec, checked against the code's (FeatureSchemaError naming the mismatch)."""
    saved = FeatureSpec.from_dict(read_json(Path(model_dir) / "feature_spec.json"))
    saved.check_matches(current_spec(), where=f"model {Path(model_dir).name}")
    return saved


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_json(path: Path, obj) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1, sort_keys=False) + "\n")
    os.replace(tmp, path)


def _write_booster(booster: lgb.Booster, path: Path) -> int:
    size = write_model_text(booster, path)
    if size > MAX_MODEL_BYTES:
        raise ModelError(f"{path} is {size} bytes, above the {MAX_MODEL_BYTES} byte limit: "
                         "train with fewer rounds or leaves")
    return size


def write(out, *, final, fold_models, scale, objective, opts, ds, trained_configs, layouts,
          calibration, cv_metrics, importance, previous, train_s, gate=None) -> Path:
    from tilepick.features import space_configs
    from tilepick.provenance import collect, git_dirty

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # a seed ensemble's fold models keep the first trees of every member (interleave)
    members = opts.seed_ensemble
    folds = [interleave(m, members) for m in fold_models]
    sizes = {MODEL_FILE: _write_booster(final, out / MODEL_FILE),
             ENSEMBLE_FILE: _write_booster(
                 pack(folds + [scale] + ([gate] if gate is not None else []),
                      [opts.cascade.uncertainty_trees * members] * len(folds) + [None]
                      + ([None] if gate is not None else [])),
                 out / ENSEMBLE_FILE)}
    dtype = ds.dtype
    _write_json(out / "predictor.json", {
        "version": PREDICTOR_VERSION, "op": "gemm", "dtype": dtype, "arch": ds.hw.arch,
        "objective": objective, "layouts": list(layouts),
        "cascade": opts.cascade.to_dict(), "calibration": calibration,
        "ensemble": {"fold_models": len(fold_models), "scale_column": len(fold_models),
                     "fold_trees": opts.cascade.uncertainty_trees * opts.seed_ensemble,
                     "scale_target": "log of the best measured TFLOP/s of the problem",
                     "gate_column": len(fold_models) + 1 if gate is not None else None,
                     "gate_target": "raw score > 0: cuBLAS beats the first Triton candidate"},
        "catalog": opts.catalog, "trained_configs": list(trained_configs)})
    _write_json(out / "feature_spec.json", current_spec().to_dict())
    prov = collect()
    data_files = list(ds.files)
    manifest = {
        "model": out.name, "objective": objective, "date": dt.datetime.now(
            dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_commit": prov.get("tilepick_commit", "unknown"),
        "git_dirty": git_dirty(),
        "versions": {"tilepick": prov.get("tilepick_version"), "lightgbm": lgb.__version__,
                     "python": prov.get("python_version")},
        "arch": ds.hw.arch, "dtype": dtype, "pooled_dtypes": ds.pooled_dtypes,
        "data": data_files, "rows": len(ds), "problems": ds.n_problems,
        "served_problems": int(ds.served.sum()), "catalog": opts.catalog,
        "configs_in_catalog": (len(trained_configs) if opts.catalog == "trained"
                               else len(space_configs())),
        "configs_in_training_data": len(set(ds.config_ids)),
        "catalog_min_rel": opts.catalog_min_rel,
        "parameters": {"lightgbm": _lgb_params(objective, opts), "rounds": opts.rounds,
                       "retimed_weight": opts.retimed_weight,
                       "minority_layout_weight": opts.minority_layout_weight,
                       "stratum_balance": opts.stratum_balance,
                       "stratum_cap": opts.stratum_cap,
                       "vendor_gate": opts.vendor_gate, "gate_splits": opts.gate_splits,
                       "gate_pool": opts.gate_pool,
                       "gate_lambda_l2": opts.gate_lambda_l2,
                       "gate_seeds": opts.gate_seeds,
                       "gate_label_top": opts.gate_label_top,
                       "seed_ensemble": opts.seed_ensemble,
                       "folds": opts.folds,
                       "fold_grouping": opts.fold_grouping,
                       "label_times": opts.label_times,
                       "hold_out": opts.hold_out,
                       "held_out_problems": ds.held_out_problems,
                       "seed": opts.seed, "cascade": opts.cascade.to_dict()},
        "trees": final.num_trees(),
        "warm_start": None, "train_seconds": round(train_s, 1),
        "files": {name: {"bytes": size, "sha256": _sha256(out / name)}
                  for name, size in sizes.items()},
    }
    if previous is not None:
        manifest["warm_start"] = {"from_model_sha256": previous.model_sha256,
                                  "previous_data": previous.manifest.get("data", []),
                                  "added_rounds": opts.warm_rounds}
    _write_json(out / "manifest.json", manifest)
    _write_json(out / "cv_metrics.json", cv_metrics)
    _write_json(out / "feature_importance.json", {"model": MODEL_FILE, "importance": importance})
    return out


def _lgb_params(name: str, opts) -> dict:
    from tilepick.model.objectives import OBJECTIVES

    return OBJECTIVES[name].params(opts.params)


@dataclass
class Previous:
    """An existing model directory to warm-start from."""

    booster: lgb.Booster
    objective: str
    trained_configs: list
    layouts: list
    manifest: dict
    model_sha256: str


def load_previous(out, dtype: str, arch: str) -> Previous | None:
    out = Path(out)
    if not (out / MODEL_FILE).is_file():
        raise ModelError(f"--warm-start needs an existing model in {out} ({MODEL_FILE} missing)")
    check_spec(out)
    pred = read_json(out / "predictor.json")
    check_version(pred, out)
    if pred.get("dtype") != dtype or pred.get("arch") != arch:
        raise ModelError(f"{out} holds a {pred.get('dtype')}/{pred.get('arch')} model, "
                         f"not {dtype}/{arch}")
    booster = lgb.Booster(model_str=read_model_text(out / MODEL_FILE))
    return Previous(booster, pred["objective"], list(catalog_of(pred)[1]),
                    pred.get("layouts", []), read_json(out / "manifest.json"),
                    _sha256(out / MODEL_FILE))
