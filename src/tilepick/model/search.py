"""Surrogate search: find good configs in a family's whole space with the model, not the GPU.

The model's catalog is the few hundred configs that were measured; each family's space holds
thousands. Scoring a config with the model costs microseconds, so the space can be searched
for configs the model expects to be fast (candidates worth measuring next). Two strategies,
both deterministic for a seed and restricted to configs valid for the problem:

* ``random``: score ``budget`` valid configs drawn uniformly, keep the best;
* ``de``: a discrete differential evolution per family over the index of each parameter in
  its grid (mutation v = a + F (b - c), binomial crossover, greedy selection); an invalid
  trial is snapped to the nearest valid config of the family.

``budget`` counts distinct configs scored (cuBLAS, one config, is always scored as a reference).
:func:`compare_to_exhaustive` scores every valid config of the searched families and reports
how close the search's best came to the exhaustive model ranking.
Scores of configs outside the catalog are extrapolations of the model: they rank where to
look, and are no substitute for measuring.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tilepick.config import PARAM_NAMES, SPACES, VENDOR_FAMILIES
from tilepick.features import candidate_table
from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem

METHODS = ("random", "de")


@dataclass
class SearchResult:
    problem: str
    method: str
    seed: int
    budget: int
    evaluations: int
    space_valid: int
    ranked: list = field(default_factory=list)   # [(config_id, score)] best first

    @property
    def best(self) -> tuple:
        return self.ranked[0]


class _Scorer:
    """Model scores of configs of one problem's full space, memoised by table index."""

    def __init__(self, predictor: Predictor, problem: GemmProblem):
        predictor.check(problem)
        self.predictor = predictor
        self.problem = problem
        self.table = candidate_table(problem, predictor.hw)
        self.valid = self.table.valid_mask(problem)
        self.scores: dict[int, float] = {}

    def score(self, index) -> np.ndarray:
        index = np.asarray(index, dtype=np.int64)
        new = np.array(sorted({int(i) for i in index} - set(self.scores)), dtype=np.int64)
        if len(new):
            x = np.ascontiguousarray(self.table.features(self.problem, new))
            for i, s in zip(new.tolist(), self.predictor.model.predict(x).tolist()):
                self.scores[i] = s
        return np.array([self.scores[int(i)] for i in index])

    def ranked(self, top: int) -> list:
        items = sorted(self.scores.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return [(self.table.ids[i], s) for i, s in items]


def _random(sc: _Scorer, budget: int, rng: np.random.Generator) -> None:
    valid = np.flatnonzero(sc.valid)
    pick = rng.choice(valid, size=min(budget, len(valid)), replace=False)
    sc.score(pick)


def _family_grid(sc: _Scorer, family: str):
    """(table indices of the family's valid configs, their parameter-index vectors, sizes)."""
    grid = SPACES[family]
    rows = [i for i, c in enumerate(sc.table.configs) if c.family == family and sc.valid[i]]
    vecs = np.array([[grid[p].index(getattr(sc.table.configs[i], p)) for p in PARAM_NAMES]
                     for i in rows], dtype=np.int64).reshape(len(rows), len(PARAM_NAMES))
    sizes = np.array([len(grid[p]) for p in PARAM_NAMES])
    return np.array(rows, dtype=np.int64), vecs, sizes


def _de_family(sc: _Scorer, family: str, budget: int, rng: np.random.Generator,
               f_weight: float = 0.7, crossover: float = 0.6) -> None:
    rows, vecs, sizes = _family_grid(sc, family)
    if len(rows) == 0 or budget <= 0:
        return
    if len(rows) <= budget:   # small families: scoring all of them is the search
        sc.score(rows)
        return
    pop_size = int(min(len(rows), max(4, budget // 4)))
    members = rng.choice(len(rows), size=pop_size, replace=False)
    fitness = sc.score(rows[members])
    used = len(set(sc.scores) & set(rows.tolist()))
    stale = 0
    while used < budget and stale < 20:
        before = used
        for j in range(pop_size):
            a, b, c = rng.choice([i for i in range(pop_size) if i != j], size=3, replace=False)
            mutant = vecs[members[a]] + f_weight * (vecs[members[b]] - vecs[members[c]])
            mutant = np.clip(np.rint(mutant), 0, sizes - 1)
            cross = rng.random(len(sizes)) < crossover
            cross[rng.integers(len(sizes))] = True
            trial = np.where(cross, mutant, vecs[members[j]])
            # snap to the nearest valid config of the family (grid-index distance)
            k = int(np.argmin(np.abs(vecs - trial).sum(axis=1) + 1e-3 * rng.random(len(vecs))))
            s = sc.score([rows[k]])[0]
            if s >= fitness[j]:
                members[j], fitness[j] = k, s
            used = len(set(sc.scores) & set(rows.tolist()))
            if used >= budget:
                break
        stale = stale + 1 if used == before else 0


def search(predictor: Predictor, problem: GemmProblem, method: str = "de", budget: int = 200,
           seed: int = 0, top: int = 10) -> SearchResult:
    """Search the full config space of the problem's valid families with the model."""
    if method not in METHODS:
        raise ValueError(f"unknown search method {method!r}: choose one of {list(METHODS)}")
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    sc = _Scorer(predictor, problem)
    rng = np.random.default_rng(seed)
    vendor = [i for i, c in enumerate(sc.table.configs) if c.is_vendor and sc.valid[i]]
    sc.score(vendor)   # the library is always a candidate: one evaluation
    if method == "random":
        _random(sc, max(0, budget - len(vendor)), rng)
    else:
        families = [f for f in SPACES if any(sc.valid[i] and sc.table.configs[i].family == f
                                             for i in range(len(sc.table)))]
        counts = {f: sum(1 for i, c in enumerate(sc.table.configs)
                         if c.family == f and sc.valid[i]) for f in families}
        total = sum(counts.values()) or 1
        left = max(0, budget - len(vendor))
        for f in families:
            _de_family(sc, f, max(2, int(round(left * counts[f] / total))), rng)
    return SearchResult(problem.key(), method, seed, budget, len(sc.scores),
                        int(sc.valid.sum()), sc.ranked(top))


def compare_to_exhaustive(predictor: Predictor, result: SearchResult,
                          problem: GemmProblem) -> dict:
    """How close the search's best searched-family config is to the best of scoring every
    valid config of those families (the vendor library is not searched, so not compared)."""
    sc = _Scorer(predictor, problem)
    valid = np.array([i for i in np.flatnonzero(sc.valid) if not sc.table.configs[i].is_vendor],
                     dtype=np.int64)
    found = [(cid, s) for cid, s in result.ranked if cid not in VENDOR_FAMILIES]
    if len(valid) == 0 or not found:
        return {"problem": problem.key(), "method": result.method, "seed": result.seed,
                "evaluations": result.evaluations, "space_valid": int(sc.valid.sum()),
                "found": None, "exhaustive_best": None, "rank_in_exhaustive": None,
                "score_gap": None, "predicted_speed_ratio": None}
    scores = sc.score(valid)
    order = np.argsort(-scores, kind="stable")
    ids = [sc.table.ids[i] for i in valid[order]]
    best_id, best_score = found[0]
    rank = ids.index(best_id)
    cal = predictor.cal_full
    top_rel = float(cal(np.array([0.0]))[0]) or 1.0
    found_rel = float(cal(np.array([best_score - scores[order[0]]]))[0])
    return {"problem": problem.key(), "method": result.method, "seed": result.seed,
            "evaluations": result.evaluations, "space_valid": int(sc.valid.sum()),
            "found": best_id, "exhaustive_best": ids[0], "rank_in_exhaustive": rank,
            "score_gap": float(scores[order[0]] - best_score),
            "predicted_speed_ratio": found_rel / top_rel}
