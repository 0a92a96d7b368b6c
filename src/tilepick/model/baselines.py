"""Baselines that need no training, scored the same way by ``evaluate`` and ``validate``.

* **cuBLAS alone**: the vendor library as the only candidate, on the problems it serves.
* **Triton tutorial's 8 configs, autotuned**: the CUDA autotune list of Triton's
  ``python/tutorials/03-matrix-multiplication.py`` (``get_cuda_autotune_config``), whose
  kernel is a masked pointer GEMM with grouped tile order, i.e. our ``gemm.ptr``. Autotuning
  benchmarks every config, so the pick is the fastest *measured* of those valid for the
  problem. The list's first 8 are its fp16/bf16 configs; its last 8 are marked "good for fp8
  inputs" and are used for fp8 problems. Two of the 8 use ``num_warps=2``, which tilepick's
  space does not declare (4 or 8): they are mapped to the nearest declared value, 4. Configs
  the solver declares invalid for a problem (tiles larger than the problem needs, too much
  shared memory) are not candidates: they are never measured, and a smaller tile of the list
  covers those shapes.
* **nvMatmulHeuristics top-1 / top-8 benchmarked**: see :mod:`tilepick.model.nvmh`. Its
  ranking is the library's order of the projected configs; top-1 is the first *measured*
  one (the rule every method follows, :mod:`tilepick.model.metrics`), top-8 benchmarked the
  fastest measured of the (up to) 8.

Sampled data (training sweeps measure ~150 configs per problem) may lack a baseline's
candidates: a problem where none was measured is left out of that method's numbers, and every
baseline reports its ``coverage`` (problems scored; for nvMatmulHeuristics also the fraction
whose top-1 itself was measured) so a reader knows what the numbers stand on.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from tilepick.config import TUTORIAL_FAMILY, VENDOR_FAMILIES, KernelConfig, tutorial_ids
from tilepick.model import metrics, nvmh
from tilepick.problem import GemmProblem
from tilepick.solvers import SOLVERS

CUBLAS = "cuBLAS alone"
TUTORIAL = "Triton tutorial's 8 configs autotuned"
NVMH_TOP1 = "nvMatmulHeuristics top-1"
NVMH_TOP8 = "nvMatmulHeuristics top-8 benchmarked"

def tutorial_valid_ids(problem: GemmProblem, hw) -> list[str]:
    solver = SOLVERS[TUTORIAL_FAMILY]
    if solver.not_applicable_reason(problem, hw) is not None:
        return []
    return [cid for cid in tutorial_ids(problem.dtype.value)
            if solver.config_invalid_reason(problem, KernelConfig.from_id(cid), hw) is None]


def candidate_table(ds, scores: np.ndarray) -> pd.DataFrame:
    """:func:`metrics.per_problem` for a method that ranks only some rows (finite scores),
    with efficiencies against the best of *every* measured row of the problem. Indexed by
    problem; problems without a finite-scored row are absent."""
    keep = np.isfinite(scores)
    rows = np.flatnonzero(keep)
    t = metrics.per_problem(ds.problem_index[keep], ds.tflops[keep], scores[keep])
    if t.empty:  # typed, so that callers can index by its (empty) problem column
        t = t.astype(float).astype({"problem": np.int64, "pick_row": np.int64})
        return t.set_index(t["problem"].to_numpy())
    t["pick_row"] = rows[t["pick_row"].to_numpy()]
    full = ds.best[ds.starts][t["problem"].to_numpy()]
    ratio = t["best_tflops"].to_numpy() / full
    for col in [c for c in t if c.endswith("efficiency")]:
        t[col] = t[col].to_numpy() * ratio
    t["top1"] = t["efficiency"].to_numpy() >= 1 - 1e-12
    # the problem's best was not a candidate: it is never reached
    t["best_rank"] = np.where(ratio >= 1 - 1e-12, t["best_rank"], np.iinfo(np.int32).max)
    t["best_tflops"] = full
    return t.set_index(t["problem"].to_numpy())


def _problems(ds) -> list[GemmProblem]:
    return [GemmProblem.from_key(k) for k in ds.problem_keys]


def tutorial(ds) -> tuple[pd.DataFrame, dict]:
    """Per-problem table of the tutorial's configs autotuned, and its coverage."""
    ids = np.asarray(ds.config_ids)
    cand = np.zeros(len(ds), bool)
    complete = 0
    for i, p in enumerate(_problems(ds)):
        valid = tutorial_valid_ids(p, ds.hw)
        lo, hi = ds.starts[i], ds.starts[i] + ds.sizes[i]
        cand[lo:hi] = np.isin(ids[lo:hi], valid)
        complete += bool(valid) and int(cand[lo:hi].sum()) == len(valid)
    t = candidate_table(ds, np.where(cand, ds.tflops, -np.inf))
    return t, {"problems": ds.n_problems, "scored": len(t),
               "all_valid_configs_measured": complete / max(ds.n_problems, 1),
               "configs": list(tutorial_ids(ds.frame["dtype"].iloc[0]))}


def nvmatmul(ds) -> tuple[pd.DataFrame | None, dict]:
    """Per-problem table of nvMatmulHeuristics' projected ranking, and its coverage; None and
    the reason where the library is unavailable."""
    why = nvmh.unavailable_reason(ds.hw.arch)
    if why is not None:
        return None, {"unavailable": why}
    ids = np.asarray(ds.config_ids)
    scores = np.full(len(ds), -np.inf)
    top1_measured = failed = 0
    for i, p in enumerate(_problems(ds)):
        try:
            got = nvmh.ranked_ids(p, ds.hw.arch)
        except Exception:  # noqa: BLE001 - a problem the library refuses has no candidates
            got, failed = (), failed + 1
        ranked = {cid: -r for r, cid in enumerate(got)}
        lo, hi = ds.starts[i], ds.starts[i] + ds.sizes[i]
        scores[lo:hi] = [ranked.get(c, -np.inf) for c in ids[lo:hi]]
        top1_measured += bool(np.any(scores[lo:hi] == 0))
    t = candidate_table(ds, scores)
    return t, {"problems": ds.n_problems, "scored": len(t),
               "top1_measured": top1_measured / max(ds.n_problems, 1),
               "query_failures": failed, "gpu": nvmh.GPUS[ds.hw.arch], "count": nvmh.COUNT}


Summary = Callable[[pd.DataFrame, str], dict]


def _same_problems(cov: dict, t: pd.DataFrame, model_eff: pd.Series | None) -> dict:
    """Coverage plus the model's top-1 mean on the problems this baseline was scored on:
    a baseline scored on a subset is compared with the model on that subset."""
    if model_eff is not None and len(t):
        cov["model_top1_mean_same_problems"] = float(model_eff.loc[t.index].mean())
    return cov


def cublas_rows(ds) -> np.ndarray:
    """Per problem: the row of its cuBLAS measurement, -1 where it has none (cuBLAS does not
    serve every problem: fp8 needs sizes that are multiples of 16)."""
    is_cublas = ds.config_ids == VENDOR_FAMILIES[0]
    rows = np.full(ds.n_problems, -1)
    rows[ds.problem_index[is_cublas]] = np.flatnonzero(is_cublas)
    return rows


def cublas_alone(ds) -> tuple[pd.DataFrame, dict]:
    """Per-problem table of cuBLAS as the only candidate, on the problems where it was
    measured (:func:`cublas_rows`), and its coverage."""
    is_cublas = ds.config_ids == VENDOR_FAMILIES[0]
    t = metrics.per_problem(ds.problem_index, ds.tflops, np.where(is_cublas, 1.0, 0.0))
    has = cublas_rows(ds) >= 0
    return t[has[t["problem"].to_numpy()]], {"problems": int(ds.n_problems),
                                              "scored": int(has.sum())}


def methods(ds, summary: Summary, model_eff: pd.Series | None = None) -> tuple[dict, dict]:
    """The baselines' method summaries, with their coverage (None for a baseline that is
    unavailable here), and their per-problem efficiencies for the CDF plot.
    ``summary(table, eff_col)`` is the caller's, so the baselines are summarised exactly like
    its own methods; ``model_eff`` (the model's top-1 efficiency indexed by problem) adds the
    model's mean on each baseline's problems to its coverage."""
    out, effs = {}, {}
    t, cov = cublas_alone(ds)
    out[CUBLAS] = {**summary(t, "efficiency"), "top5_hit_rate": None,  # no ranking to hit
                   "coverage": _same_problems(cov, t, model_eff)}
    effs[CUBLAS] = t["efficiency"].to_numpy()
    t, cov = tutorial(ds)
    out[TUTORIAL] = {**summary(t, "efficiency"), "top5_hit_rate": None,
                     "coverage": _same_problems(cov, t, model_eff)}
    effs[TUTORIAL] = t["efficiency"].to_numpy()
    t, cov = nvmatmul(ds)
    if t is None:
        out[NVMH_TOP1] = out[NVMH_TOP8] = None
        return out, effs
    cov = _same_problems(cov, t, model_eff)
    out[NVMH_TOP1] = {**summary(t, "efficiency"), "coverage": cov}
    out[NVMH_TOP8] = {**summary(t, "top8_efficiency"), "coverage": cov}
    effs[NVMH_TOP1] = t["efficiency"].to_numpy()
    effs[NVMH_TOP8] = t["top8_efficiency"].to_numpy()
    return out, effs


def unavailable(ds) -> dict:
    """Why each unavailable baseline is (for the report)."""
    why = nvmh.unavailable_reason(ds.hw.arch)
    return {NVMH_TOP1: why, NVMH_TOP8: why} if why else {}
