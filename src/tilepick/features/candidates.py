"""Candidate configs of a problem and their features, fast enough for every new shape.

``solvers.applicable_configs`` checks ~3,700 configs one by one in Python (15-40 ms a
problem); prediction has a budget of about a millisecond. So the candidates are a cached
*table* of configs (a pool: the whole space, or the catalog a model was trained on) whose
validity for a problem is one vectorised mask:

* rules that do not depend on the problem's sizes (shared memory, registers, warps) are the
  solvers' own ``config_invalid_reason``, evaluated once per (table, dtype, layout, GPU) on a
  stand-in problem sized so that every size rule passes;
* whether a family can serve the problem at all is the solvers' own
  ``not_applicable_reason``, asked once per problem;
* the size rules (a tile larger than the problem needs, split-K with empty splits or with
  enough output tiles already) are mirrored here, vectorised. ``tests/test_features.py``
  checks, over many shapes, that the mask selects exactly what ``applicable_configs`` returns;
  a rule added to the solvers without its mirror here fails that test.

Config-only features are computed once per table too; a new problem pays for its own scalars,
the interaction features of its valid candidates, and the model.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from tilepick.config import KernelConfig, space
from tilepick.features.columns import (CONFIG_INPUTS, FAMILY_CODES, Columns,
                                       candidate_columns, config_columns, dtype_of,
                                       hardware_columns)
from tilepick.features.compute import FEATURE_NAMES, compute
from tilepick.features.table import FEATURES
from tilepick.hardware import HardwareProfile
from tilepick.problem import GemmProblem, next_pow2
from tilepick.solvers import SOLVERS

_CONFIG_FEATURES = tuple(f.name for f in FEATURES if f.kind == "config")
_PER_PROBLEM = ("hardware", "problem")
_CONFIG_POS = [j for j, f in enumerate(FEATURES) if f.kind == "config"]
_PER_PROBLEM_POS = [j for j, f in enumerate(FEATURES) if f.kind in _PER_PROBLEM]
_INTERACTION_POS = [j for j, f in enumerate(FEATURES) if f.kind == "interaction"]
_INPUT_NAMES = CONFIG_INPUTS


def space_configs(families=None) -> list[KernelConfig]:
    """Every config of every solver family, in ``applicable_configs`` order."""
    return [c for fam in SOLVERS if families is None or fam in families for c in space(fam)]


def order_like_space(config_ids) -> list[KernelConfig]:
    """Config ids as KernelConfigs in the order ``applicable_configs`` would list them."""
    wanted = set(config_ids)
    known = {c.id for c in space_configs()}
    unknown = sorted(wanted - known)
    if unknown:
        raise ValueError(f"config ids not in any family's space: {unknown[:5]}"
                         f"{' ...' if len(unknown) > 5 else ''}")
    return [c for c in space_configs() if c.id in wanted]


def _stand_in(config: KernelConfig, problem_like: GemmProblem) -> GemmProblem:
    """A problem every size rule accepts for ``config``: one tile, enough K for its splits."""
    return GemmProblem(max(1, config.block_m), max(1, config.block_n),
                       max(1, config.block_k) * max(1, config.split_k) * 4,
                       dtype=problem_like.dtype, layout=problem_like.layout,
                       tf32=problem_like.tf32)


def hardware_key(hw: HardwareProfile) -> tuple:
    return (hw.name, hw.arch, hw.sm_count, hw.l2_bytes, hw.smem_per_block, hw.smem_per_sm,
            hw.regs_per_sm, hw.max_regs_per_thread, hw.mem_bw_gbps,
            tuple(sorted(hw.peak_tflops.items())), tuple(hw.capability))


@dataclass
class CandidateTable:
    """A pool of configs for one (dtype token, layout, GPU), with everything static cached."""

    configs: tuple[KernelConfig, ...]
    ids: tuple[str, ...]
    hw: HardwareProfile
    dtype: str
    layout: str
    static_ok: np.ndarray          # bool per config: the solvers' size-independent rules
    config_inputs: dict            # config input arrays (float64)
    config_features: dict          # config-kind feature arrays (float64)
    min_block_m: np.ndarray
    min_block_n: np.ndarray
    family_index: np.ndarray       # int family code per config

    @classmethod
    def build(cls, configs, problem_like: GemmProblem, hw: HardwareProfile) -> "CandidateTable":
        configs = tuple(configs)
        static_ok = np.array([
            SOLVERS[c.family].config_invalid_reason(_stand_in(c, problem_like), c, hw) is None
            for c in configs], dtype=bool)
        inputs = config_columns(configs)
        cols = Columns(inputs)
        tok = problem_like.dtype_token
        cols.update(hardware_columns(hw, tok))
        item = float(dtype_of(tok).itemsize)
        cols.update(itemsize=item, out_itemsize=float(dtype_of(tok).out_dtype.itemsize))
        compute(cols, kinds=("config",))
        feats = {name: np.asarray(cols[name], dtype=np.float64) for name in _CONFIG_FEATURES}
        attr = lambda c, name, dflt: getattr(SOLVERS[c.family], name, dflt)  # noqa: E731
        return cls(configs=configs, ids=tuple(c.id for c in configs), hw=hw, dtype=tok,
                   layout=problem_like.layout, static_ok=static_ok,
                   config_inputs={k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()},
                   config_features=feats,
                   min_block_m=np.array([attr(c, "min_block_m", 0) for c in configs], float),
                   min_block_n=np.array([attr(c, "min_block_n", 0) for c in configs], float),
                   family_index=inputs["family_code"].astype(np.int64))

    def __post_init__(self):
        # Column blocks gathered with one fancy index per problem (rows = columns here).
        self._static = np.stack([self.config_features[FEATURE_NAMES[j]] for j in _CONFIG_POS])
        self._inputs = np.stack([self.config_inputs[name] for name in _INPUT_NAMES])

    def __len__(self) -> int:
        return len(self.configs)

    def valid_mask(self, problem: GemmProblem) -> np.ndarray:
        """Which configs ``applicable_configs(problem, hw)`` would return (see the module doc)."""
        p, hw = problem, self.hw
        fam_ok = np.array([SOLVERS[f].not_applicable_reason(p, hw) is None if f in SOLVERS
                           else False for f in FAMILY_CODES], dtype=bool)
        ok = self.static_ok & fam_ok[self.family_index]
        ci = self.config_inputs
        bm, bn, bk, sk = ci["block_m"], ci["block_n"], ci["block_k"], ci["split_k"]
        ok &= bm <= np.maximum(self.min_block_m, next_pow2(p.m))
        ok &= bn <= np.maximum(self.min_block_n, next_pow2(p.n))
        ok &= bk <= max(32, next_pow2(p.k))
        split = sk > 1
        if split.any():
            with np.errstate(divide="ignore", invalid="ignore"):
                k_blocks = np.ceil(p.k / bk)
                tiles = np.ceil(p.m / bm) * np.ceil(p.n / bn) * p.batch
            ok &= ~split | ((k_blocks >= sk) & (tiles <= hw.sm_count))
        return ok

    def features(self, problem: GemmProblem, index: np.ndarray) -> np.ndarray:
        """The feature matrix (column-major, spec order) of the configs at ``index``."""
        x = np.empty((len(FEATURE_NAMES), len(index)), dtype=np.float64)
        x[_CONFIG_POS] = self._static[:, index]
        inputs = self._inputs[:, index]
        cols = candidate_columns(problem, self.hw,
                                 {name: inputs[i] for i, name in enumerate(_INPUT_NAMES)})
        compute(cols, kinds=_PER_PROBLEM)
        for j in _PER_PROBLEM_POS:
            x[j] = cols[FEATURE_NAMES[j]]
        for j in _CONFIG_POS:
            cols[FEATURE_NAMES[j]] = x[j]
        compute(cols, kinds=("interaction",))
        for j in _INTERACTION_POS:
            x[j] = cols[FEATURE_NAMES[j]]
        return x.T  # Fortran-ordered view: each feature column is contiguous

    def candidates(self, problem: GemmProblem) -> tuple[np.ndarray, np.ndarray]:
        """(index of the valid configs, their feature matrix)."""
        self._check(problem)
        index = np.flatnonzero(self.valid_mask(problem))
        return index, self.features(problem, index)

    def _check(self, problem: GemmProblem) -> None:
        if problem.dtype_token != self.dtype or problem.layout != self.layout:
            raise ValueError(f"candidate table for {self.dtype}/{self.layout} asked about "
                             f"{problem.key()}")


_TABLES: dict[tuple, CandidateTable] = {}
_LOCK = threading.Lock()


def candidate_table(problem: GemmProblem, hw: HardwareProfile, pool_ids=None,
                    pool_key: str | None = None) -> CandidateTable:
    """The cached table for the problem's dtype and layout on ``hw``.

    ``pool_ids`` restricts the pool to those config ids (a model's catalog); ``pool_key`` names
    that pool in the cache (the ids' digest when omitted). ``None``: the whole config space.
    """
    if pool_ids is not None and pool_key is None:
        pool_key = str(hash(tuple(sorted(pool_ids))))
    key = (pool_key or "space", problem.dtype_token, problem.layout, hardware_key(hw))
    table = _TABLES.get(key)
    if table is None:
        with _LOCK:
            table = _TABLES.get(key)
            if table is None:
                configs = space_configs() if pool_ids is None else order_like_space(pool_ids)
                table = CandidateTable.build(configs, problem, hw)
                _TABLES[key] = table
    return table


def candidate_ids(problem: GemmProblem, hw: HardwareProfile, pool_ids=None) -> list[str]:
    """Ids of the valid candidates of a problem (the fast equivalent of applicable_configs)."""
    table = candidate_table(problem, hw, pool_ids)
    return [table.ids[i] for i in np.flatnonzero(table.valid_mask(problem))]


__all__ = ["CandidateTable", "candidate_table", "candidate_ids", "space_configs",
           "order_like_space", "CONFIG_INPUTS"]
