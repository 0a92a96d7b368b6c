"""The Predictor: a shipped model ranking the valid candidates of a problem, in < 1 ms.

Ranking of a new problem (see :mod:`.ranking` for why a cascade):

1. candidates: the model's catalog filtered by the solvers' validity rules for the problem,
   vectorised (:mod:`tilepick.features.candidates`). The catalog (predictor.json, chosen at
   train time) is ``trained``, the configs its training data measured, or ``space``, every
   config of every family's declared space (config.SPACES); ``gemm.cublas`` is in both, so
   always a candidate where cuBLAS applies;
2. features of every candidate (config-only columns cached per catalog: the ``space`` table is
   shared by every model and the surrogate search);
3. the first trees score every candidate; all trees score the best ``stage2_top`` (compiled
   trees, :mod:`.compiled`, where the ``fast`` extra is installed: the same scores, ~3x less
   time);
4. predicted TFLOP/s = problem-level best-speed model x calibrated fraction of the best;
5. the vendor gate (:mod:`.gate`, models that have one): its call puts cuBLAS first, or below
   the first Triton candidate; where it moves cuBLAS past that candidate, cuBLAS's predicted
   TFLOP/s becomes that candidate's (the gate says "at least" or "at most as fast", not by
   how much), so the list stays in the order of predicted speed;
6. uncertainty of the best ``uncertainty_top``: the standard deviation, across the
   cross-validation fold models, of the log of their predicted speed (each fold model's
   scores calibrated against its own best among those candidates): dimensionless, ~ the
   relative error (0.05 = +-5%), 0 where every fold model agrees; None below them. The
   dispatcher's hybrid mode benchmarks every candidate within exp(-2 u) of the best.

A repeated problem is a dictionary lookup (the ranking is memoised per problem).
"""

from __future__ import annotations

import copy
import math
import threading
from functools import partial
from pathlib import Path

import numpy as np

from tilepick.config import VENDOR_FAMILIES, space
from tilepick.features.columns import FAMILY_CODES
from tilepick.features import candidate_table
from tilepick.hardware import HardwareProfile, current, profile
from tilepick.model.artifacts import (CATALOGS, ENSEMBLE_FILE, MODEL_FILE, ModelError,
                                      catalog_of, check_spec, check_version, find_model_dir,
                                      read_json)
from tilepick.model import compiled
from tilepick.model.booster import FastBooster
from tilepick.model.ranking import CascadeSettings, Calibration
from tilepick.problem import GemmProblem

MEMO_SIZE = 8192
REL_FLOOR = 1e-3  # calibrated fractions of the best below this are "very slow" alike

Ranked = tuple  # (config_id, predicted_tflops, uncertainty or None)


def _std(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


class Predictor:
    """Ranks candidate configs of GEMM problems with one shipped model."""

    def __init__(self, model_dir: str | Path, hw: HardwareProfile | None = None,
                 strict: bool = True, catalog: str | None = None,
                 cascade: CascadeSettings | None = None):
        """``catalog`` and ``cascade`` override predictor.json's (for comparisons: the cascade
        stored with a model was chosen for its own catalog)."""
        self.model_dir = Path(model_dir)
        if not (self.model_dir / MODEL_FILE).is_file():
            raise ModelError(f"{self.model_dir} has no {MODEL_FILE}")
        self.families = check_spec(self.model_dir).families
        meta = read_json(self.model_dir / "predictor.json")
        check_version(meta, self.model_dir)
        self.meta = meta
        self.op, self.dtype, self.arch = meta["op"], meta["dtype"], meta["arch"]
        self.objective = meta["objective"]
        self.layouts = tuple(meta["layouts"])
        self.catalog, self.trained_configs = catalog_of(meta)
        if catalog is not None:
            if catalog not in CATALOGS:
                raise ModelError(f"unknown catalog {catalog!r}: {', '.join(CATALOGS)}")
            if catalog == "trained" and not self.trained_configs:
                raise ModelError(f"model {self.name} lists no trained configs")
            self.catalog = catalog
        self.cascade = cascade or CascadeSettings(**meta["cascade"])
        self.cal_stage1 = Calibration.from_dict(meta["calibration"]["stage1"])
        self.cal_full = Calibration.from_dict(meta["calibration"]["full"])
        self.hw = hw or profile(self.arch)
        self.strict = strict
        self.model = FastBooster.load(self.model_dir / MODEL_FILE)
        self.ensemble = FastBooster.load(self.model_dir / ENSEMBLE_FILE)
        # the two cascade stages: compiled trees where available (same scores), else LightGBM
        s1 = self.cascade.stage1_trees
        self._stage1 = (compiled.compile_iterations(self.model.booster, 0, s1)
                        or partial(self.model.predict, start=0, count=s1))
        self._stage2 = (compiled.compile_iterations(self.model.booster, s1, 0)
                        or partial(self.model.predict, start=s1, count=0))
        self.compiled_trees = not any(isinstance(f, partial) for f in (self._stage1, self._stage2))
        self.n_folds = int(meta["ensemble"]["fold_models"])
        self.scale_column = int(meta["ensemble"]["scale_column"])
        gate = meta["ensemble"].get("gate_column")   # None: a model without a vendor gate
        self.gate_column = None if gate is None else int(gate)
        self._catalog_set = frozenset(self.trained_configs or ())
        self._init_pool()

    def _init_pool(self) -> None:
        """The catalog's candidate pool and everything cached per pool."""
        # the candidate pool: None = the whole space (one table shared by every user)
        if self.catalog == "space" and set(self.families) >= set(FAMILY_CODES):
            self._pool_ids, self._pool_key = None, None
        elif self.catalog == "space":   # a family appended since training: not its to rank
            self._pool_ids = tuple(c.id for f in self.families for c in space(f))
            self._pool_key = f"space:{','.join(self.families)}"
        else:
            self._pool_ids = self.trained_configs
            self._pool_key = f"{self.model_dir.resolve()}:{len(self.trained_configs)}"
        self._memo: dict = {}
        self._space: Predictor | None = None   # the whole-space sibling (outside_catalog)
        self._tables: dict = {}
        self._vendor_at: dict = {}   # layout -> cuBLAS's row in that candidate table (or -1)
        self._lock = threading.Lock()

    @classmethod
    def load(cls, arch: str | None = None, dtype: str = "bf16", op: str = "gemm",
             model_dir: str | Path | None = None, strict: bool = True) -> "Predictor":
        """The shipped model for ``arch`` (default: the current GPU's, or the default arch on
        a machine without one) and ``dtype``; ``model_dir`` overrides the search."""
        hw = None
        if arch is None and model_dir is None:
            hw = current()   # the visible GPU's profile (its real SM count), or the default
            arch = hw.arch
        if model_dir is None:
            model_dir = find_model_dir(op, dtype, arch)
        return cls(model_dir, hw=hw, strict=strict)

    @property
    def name(self) -> str:
        return self.model_dir.name

    def check(self, problem: GemmProblem) -> None:
        """Refuse problems the model has no data for (dtype; layouts unless not strict)."""
        if problem.dtype_token != self.dtype:
            raise ModelError(f"model {self.name} ranks {self.dtype} problems, not "
                             f"{problem.dtype_token} ({problem.key()})")
        if self.strict and problem.layout not in self.layouts:
            raise ModelError(f"model {self.name} was trained on layouts {list(self.layouts)} "
                             f"only, not {problem.layout} ({problem.key()}); load it with "
                             "strict=False to extrapolate")

    def rank(self, problem: GemmProblem, top: int | None = None) -> list[Ranked]:
        """[(config_id, predicted_tflops, uncertainty)] best first, over the valid candidates.

        ``uncertainty`` (std of log speed across the fold models, see the module doc) is given
        for the first ``uncertainty_top`` entries and None after them.
        """
        ranked = self._memo.get(problem)
        if ranked is None:
            self.check(problem)
            ranked = self._rank_new(problem)
            with self._lock:
                if len(self._memo) >= MEMO_SIZE:
                    self._memo.pop(next(iter(self._memo)))
                self._memo[problem] = ranked
        return list(ranked[:top] if top is not None else ranked)

    def outside_catalog(self, problem: GemmProblem, n: int) -> list[Ranked]:
        """The model's ``n`` best valid configs of the declared space that its trained
        catalog leaves out, best first ([] for a model that ranks the whole space).

        Why: the catalog holds the configs the training data measured, so a config added to
        the space since (the GEMV row blocks of session 17) is never ranked, and hybrid mode
        never benchmarks it. The features describe configs by their parameters, so the model
        still scores them: on batched decode the shipped model put the row blocks that
        exhaustive search picks first among the configs its catalog lacks (BENCHMARKS,
        "Session 18: hybrid explores outside the catalog ...")."""
        if self.catalog == "space" or n <= 0:
            return []
        if self._space is None:   # the same boosters and settings over the whole space
            twin = copy.copy(self)
            twin.catalog = "space"
            twin._init_pool()
            self._space = twin
        inside = self._catalog_set
        return [r for r in self._space.rank(problem) if r[0] not in inside][:n]

    def clear_memo(self) -> None:
        with self._lock:
            self._memo.clear()

    def _table(self, problem: GemmProblem):
        table = self._tables.get(problem.layout)
        if table is None:
            table = candidate_table(problem, self.hw, self._pool_ids, pool_key=self._pool_key)
            self._tables[problem.layout] = table
        return table

    def gate_raw(self, problem: GemmProblem) -> float | None:
        """The vendor gate's raw score on ``problem`` (> 0: cuBLAS first), None for a model
        without a gate or a problem with no valid candidate.

        For analyses of the gate's calls (the ranking applies it inside ``_rank_new``): its
        columns are the problem's only, so any valid candidate's row gives it. Refuses what
        :meth:`rank` refuses."""
        self.check(problem)
        if self.gate_column is None:
            return None
        table = self._table(problem)
        index = table.valid_index(problem)
        if not len(index):
            return None
        x = table.features(problem, index[:1])
        return float(self.ensemble.predict(x)[0, self.gate_column])

    def _vendor_position(self, problem: GemmProblem, table, index: np.ndarray) -> int:
        """cuBLAS's position among the valid candidates ``index`` (-1: not a candidate)."""
        at = self._vendor_at.get(problem.layout)
        if at is None:
            hits = np.flatnonzero(table.id_array == VENDOR_FAMILIES[0])
            at = self._vendor_at[problem.layout] = int(hits[0]) if len(hits) else -1
        if at < 0:
            return -1
        pos = int(index.searchsorted(at))
        return pos if pos < len(index) and index[pos] == at else -1

    def _rank_new(self, problem: GemmProblem) -> tuple:
        """The ranking of a problem not memoised (see the module doc). Its fast paths (the
        table's ``valid_index`` and fused ``features``) give what the reference paths give,
        bit for bit (``tests/test_predict_fast.py``); session 56 rewrote its tail with fewer
        numpy calls, the same rankings over 1,500 problems of three models
        (``benchmarks/rank_parity.py``)."""
        table = self._table(problem)
        index = table.valid_index(problem)
        n = len(index)
        if n == 0:
            return ()
        x = table.features(problem, index)
        c = self.cascade
        # stage 1: the first trees, every candidate; stage 2: every tree, the best few
        s1 = self._stage1(x)
        by_s1 = (-s1).argsort(kind="stable")   # methods: no numpy Python wrapper
        top = by_s1[:c.stage2_top]
        n_top = len(top)
        s2 = s1[top] + self._stage2(x[top])
        by_s2 = (-s2).argsort(kind="stable")
        # one call: the fold models on the leading candidates (and cuBLAS, which the gate may
        # put first), the problem's best speed, and the gate
        k = max(1, min(c.uncertainty_top, n))
        vendor = self._vendor_position(problem, table, index) if self.gate_column is not None \
            else -1
        rows = top[by_s2[:k if vendor < 0 else max(k, 2)]].tolist()   # the gate may swap 1, 2
        if vendor >= 0 and vendor not in rows:
            rows.append(vendor)
        ens = self.ensemble.predict(x[rows])
        best_tflops = float(np.exp(ens[0, self.scale_column]))
        s2 = s2[by_s2]
        order = top[by_s2]
        rel = np.empty(n)
        rel[:n_top] = self.cal_full(s2 - s2[0])
        if n > n_top:
            rest = by_s1[n_top:]
            np.minimum(self.cal_stage1(s1[rest] - s1[by_s1[0]]), rel[n_top - 1],
                       out=rel[n_top:])
            order = np.concatenate((order, rest))
        if vendor >= 0 and n > 1:
            at = int((order == vendor).nonzero()[0][0])
            if ens[0, self.gate_column] > 0 and at > 0:   # cuBLAS first: at least as fast
                order = np.concatenate((order[at:at + 1], order[:at], order[at + 1:]))
                rel = np.concatenate((rel[at:at + 1], rel[:at], rel[at + 1:]))
                rel[0] = max(rel[0], rel[1])
            elif ens[0, self.gate_column] <= 0 and at == 0:   # second: at most as fast
                order[0], order[1] = order[1], order[0]
                rel[0], rel[1] = rel[1], rel[0]
                rel[1] = min(rel[0], rel[1])
        unc = [None] * n
        if self.n_folds > 1 and c.uncertainty_top > 0:
            lead = order[:k].tolist()
            if rows[:k] == lead:   # the gate moved nothing into the first k: ens's own rows
                folds = ens[:k, :self.n_folds]
            else:
                row_of = {r: i for i, r in enumerate(rows)}
                folds = ens[[row_of[r] for r in lead], :self.n_folds]
            logs = np.log(np.maximum(self.cal_full(folds - folds.max(axis=0)), REL_FLOOR))
            unc[:k] = [_std(row) for row in logs.tolist()]   # a few numbers: plain Python
        return tuple(zip(table.id_array[index[order]].tolist(),
                         (rel * best_tflops).tolist(), unc))
