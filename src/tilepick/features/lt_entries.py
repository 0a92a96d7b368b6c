"""Features of cuBLASLt's heuristic entries for one GEMM, declared once as a table.

Why a table of its own: the entries are not configs of a declared space but what cuBLASLt's
heuristic returns for each problem on the GPU (``solvers.cublaslt_lib``), named by the
settable fields of their algorithm (``a66.t197.s35.k1.r0.w0.c2.i0.cl5``). The model that
chooses among them (:mod:`tilepick.model.lt_ranker`) sees the problem, the entry's fields
turned into sizes (tile, K per stage, cluster shape, from the CUDA header's enums), what the
heuristic said about it (its rank, waves and workspace) and how it differs from the heuristic's
first entry, the one torch.matmul runs (schema 2), so training, the dispatcher and the tests
read one list.

Orientation: cuBLASLt's tile is rows x columns of its column-major C, which is our C
transposed (``out^T = b^T a^T``): its first dimension runs along our N, the second along M.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

FEATURE_SCHEMA_VERSION = 2

#: the raw inputs of one entry row: the problem, the GPU's SM count, the entry's name fields
#: (``cublaslt_lib.LtAlgo``) and what the heuristic said about it
INPUTS = ("m", "n", "k", "a_row_major", "b_row_major", "sm_count", "algo", "tile", "stages",
          "splitk", "reduction", "swizzle", "custom", "inner", "cluster", "rank", "workspace",
          "waves")
#: the inputs that name a problem: an entry's features relative to the heuristic's first
#: entry of the same problem (``_of_first``) group rows by them
PROBLEM_INPUTS = ("m", "n", "k", "a_row_major", "b_row_major", "sm_count")
_FIRST = "_first_row"   # compute()'s column of :func:`_first_rows`, not a feature


@dataclass(frozen=True)
class LtFeature:
    name: str
    fn: Callable
    doc: str


def _enum_column(c, table: str, index: int) -> np.ndarray:
    """One dimension of an enum (the input column of the same name: tile, stages, cluster)
    per row: NaN where the value is not in the table (0 = undefined, or a value this cuBLAS
    version added) and where the dimension is 0 (a stage count of AUTO)."""
    from tilepick.solvers.cublaslt_lib import enums

    e = enums()[table]
    return np.array([(e.get(int(v), ()) + (np.nan,) * 3)[index] or np.nan for v in c[table]],
                    dtype=float)


def _log2(x) -> np.ndarray:
    return np.log2(np.maximum(np.asarray(x, dtype=float), 1.0))


def _first_rows(c) -> np.ndarray:
    """Per row: the index of its problem's first-ranked entry (the one torch.matmul runs; the
    lowest rank present where a probe left the first out), problems told apart by
    :data:`PROBLEM_INPUTS`. Computed once per :func:`compute`, for every ``*_vs_first``."""
    key = np.column_stack([c[x] for x in PROBLEM_INPUTS])
    _, group = np.unique(key, axis=0, return_inverse=True)
    group = group.ravel()
    order = np.lexsort((c["rank"], group))
    firsts = order[np.r_[True, group[order][1:] != group[order][:-1]]]
    first_of_group = np.empty(group.max() + 1 if len(group) else 0, dtype=np.int64)
    first_of_group[group[firsts]] = firsts
    return first_of_group[group]


def _of_first(c, col: str) -> np.ndarray:
    """Per row: ``col`` of its problem's first-ranked entry. Why: the ranker compares entries
    within a problem, and "a larger tile than cuBLAS's own choice" is what it has to learn,
    which absolute sizes say only through interactions."""
    return c[col][c[_FIRST]]


def _cluster(c, dim: str) -> np.ndarray:
    return np.nan_to_num(c[f"cluster_{dim}"], nan=1.0)


def _tiles(size, tile) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.ceil(size / tile)


F = LtFeature
FEATURES: tuple[LtFeature, ...] = (
    # the problem
    F("log_m", lambda c: _log2(c["m"]), "log2 M"),
    F("log_n", lambda c: _log2(c["n"]), "log2 N"),
    F("log_k", lambda c: _log2(c["k"]), "log2 K"),
    F("log_flops", lambda c: _log2(2.0 * c["m"] * c["n"] * c["k"]), "log2 of 2MNK"),
    F("a_row_major", lambda c: c["a_row_major"], "A is row-major (K contiguous)"),
    F("b_row_major", lambda c: c["b_row_major"], "B is row-major (N contiguous)"),
    F("m_align8", lambda c: (c["m"] % 8 == 0).astype(float), "M a multiple of 16 bytes (bf16)"),
    F("n_align8", lambda c: (c["n"] % 8 == 0).astype(float), "N a multiple of 16 bytes"),
    F("k_align8", lambda c: (c["k"] % 8 == 0).astype(float), "K a multiple of 16 bytes"),
    # the entry
    F("algo", lambda c: c["algo"], "cuBLASLt algorithm id (66: Hopper; 23/24: older)"),
    F("tile_n", lambda c: _enum_column(c, "tile", 0), "tile along N (cuBLASLt's rows)"),
    F("tile_m", lambda c: _enum_column(c, "tile", 1), "tile along M (cuBLASLt's columns)"),
    F("stage_k", lambda c: _enum_column(c, "stages", 0), "K per stage"),
    F("stage_count", lambda c: _enum_column(c, "stages", 1), "stages (NaN: AUTO)"),
    F("splitk", lambda c: c["splitk"], "split-K factor"),
    F("reduction", lambda c: c["reduction"], "split-K reduction scheme"),
    F("swizzle", lambda c: c["swizzle"], "CTA swizzling"),
    F("custom", lambda c: c["custom"], "custom option (kernel variant)"),
    F("cluster_n", lambda c: _enum_column(c, "cluster", 0), "cluster along cuBLASLt's rows"),
    F("cluster_m", lambda c: _enum_column(c, "cluster", 1), "cluster along its columns"),
    F("rank", lambda c: c["rank"], "position in the heuristic's list (0: torch.matmul's)"),
    F("waves", lambda c: c["waves"], "waves the heuristic reports"),
    F("log_workspace", lambda c: _log2(np.asarray(c["workspace"], float) + 1), "workspace"),
    # the entry on the problem
    F("tiles_m", lambda c: _tiles(c["m"], c["tile_m"]), "tiles along M"),
    F("tiles_n", lambda c: _tiles(c["n"], c["tile_n"]), "tiles along N"),
    F("eff_m", lambda c: c["m"] / (c["tiles_m"] * c["tile_m"]), "M / covered M"),
    F("eff_n", lambda c: c["n"] / (c["tiles_n"] * c["tile_n"]), "N / covered N"),
    F("ctas_per_sm", lambda c: c["tiles_m"] * c["tiles_n"] * c["splitk"] / c["sm_count"],
      "programs per SM"),
    F("k_per_split", lambda c: _log2(c["k"] / c["splitk"]), "log2 of K per split"),
    F("wave_fill", lambda c: c["ctas_per_sm"] / np.ceil(c["ctas_per_sm"]),
      "fill of the last wave (programs per SM over its ceiling)"),
    F("eff_m_cluster", lambda c: c["m"] / (np.ceil(c["m"] / (c["tile_m"] * _cluster(c, "m")))
                                           * c["tile_m"] * _cluster(c, "m")),
      "M / M covered by whole clusters of tiles"),
    F("eff_n_cluster", lambda c: c["n"] / (np.ceil(c["n"] / (c["tile_n"] * _cluster(c, "n")))
                                           * c["tile_n"] * _cluster(c, "n")),
      "N / N covered by whole clusters of tiles"),
    # the entry against the heuristic's first (torch.matmul's) entry of the same problem
    F("tile_area_vs_first", lambda c: np.log2(c["tile_m"] * c["tile_n"]
                                              / (_of_first(c, "tile_m") * _of_first(c, "tile_n"))),
      "log2 of tile area over the first entry's"),
    F("tile_m_vs_first", lambda c: np.log2(c["tile_m"] / _of_first(c, "tile_m")),
      "log2 of tile M over the first entry's"),
    F("waves_vs_first", lambda c: np.log2(np.maximum(c["waves"], 1e-3)
                                          / np.maximum(_of_first(c, "waves"), 1e-3)),
      "log2 of the heuristic's waves over the first entry's"),
)
FEATURE_NAMES = tuple(f.name for f in FEATURES)
assert len(set(FEATURE_NAMES)) == len(FEATURE_NAMES)


def compute(inputs) -> np.ndarray:
    """The (entries x features) matrix in table order from a mapping of :data:`INPUTS`
    columns (a DataFrame or a dict of equal-length arrays)."""
    missing = [k for k in INPUTS if k not in inputs]
    if missing:
        raise KeyError(f"cuBLASLt entry features need the inputs {missing}")
    cols = {k: np.asarray(inputs[k], dtype=float) for k in INPUTS}
    cols[_FIRST] = _first_rows(cols)
    with np.errstate(invalid="ignore", divide="ignore"):
        for f in FEATURES:
            cols[f.name] = np.broadcast_to(np.asarray(f.fn(cols), dtype=float),
                                           cols["m"].shape)
    return np.column_stack([cols[name] for name in FEATURE_NAMES])


def entry_inputs(problem, entries, sm_count: int) -> dict:
    """:data:`INPUTS` columns of one problem's entries: ``entries`` = [(LtAlgo, {rank,
    workspace, waves})] as the heuristic returned them."""
    from tilepick.solvers.cublaslt_lib import LtAlgo

    rows = len(entries)
    out = {"m": [problem.m] * rows, "n": [problem.n] * rows, "k": [problem.k] * rows,
           "a_row_major": [float(problem.a_row_major)] * rows,
           "b_row_major": [float(problem.b_row_major)] * rows, "sm_count": [sm_count] * rows}
    for f in (a[0] for a in LtAlgo.ATTRS):
        out[f] = [getattr(name, f) for name, _ in entries]
    for f in ("rank", "workspace", "waves"):
        out[f] = [info[f] for _, info in entries]
    return out
