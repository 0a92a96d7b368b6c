"""How scores become a ranking and a predicted speed: the cascade, and the calibration.

One procedure serves evaluation and prediction, so the reported metrics are those of what
ships.

Cascade: scoring every candidate with every tree does not fit the ~1 ms budget of a new
problem (LightGBM costs ~50 ns per tree and row here). Gradient boosting is additive, so the
first ``stage1_trees`` trees give a coarse score of every candidate, and the remaining trees
are added only for the ``stage2_top`` best of them. Candidates outside that set keep their
coarse order below it. How many candidates stage 2 needs depends on how many there are: the
full config space ("space" catalog, ~350 valid candidates for a median problem against ~60 of
the trained catalog) needs a wider stage 2 for the cascade's pick to stay the full model's
(:meth:`CascadeSettings.for_catalog`).

Calibration: ranking objectives (LambdaRank, normalised speed) give scores whose gap to the
problem's top score says how much slower a candidate is expected to be, but not in TFLOP/s.
An isotonic map, fitted on out-of-fold rows, turns that gap into the expected fraction of the
problem's best speed; a problem-level model predicts the best speed itself. Their product is
the predicted TFLOP/s. The same path serves every objective, so their R2 are comparable.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

# Within a problem, cascade keys put stage-2 rows above every stage-1-only row.
_STAGE2_OFFSET = 1e9


@dataclass(frozen=True)
class CascadeSettings:
    stage1_trees: int = 5
    stage2_top: int = 64
    uncertainty_top: int = 4
    uncertainty_trees: int = 10

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def for_catalog(cls, catalog: str) -> "CascadeSettings":
        """Default settings for a catalog (see :data:`tilepick.model.artifacts.CATALOGS`).

        Chosen by fidelity to the full model, which needs no measurements: how often the
        cascade's pick equals the all-trees pick on random shapes. With the whole space
        (~350 valid candidates a median problem) 8 kept 69%, 16 81%, 32 86%, 64 93% (600 rr
        and rc shapes, model of commit 2619a92), at ~+40 us a new problem. The trained catalog
        grew with the training data (59 valid candidates a median problem at 424 trained
        configs; ~290 at 1,892): stage2_top 8, enough at first (93%), kept 86% (bf16) / 89%
        (fp16) / 95% (fp8) of the full model's picks with the models of commit 0591a23, 32
        keeps 96% / 98% / 99.5% (16: 92 / 94 / 98; 64: 99 / 99 / 100), on 600 bf16 and 400
        fp16 and fp8 random shapes (session 6; BENCHMARKS.md, "Prediction latency"). By session
        34 the trained catalog held 3,757 bf16 configs (339 valid candidates a median random
        problem) and 32 kept only 93.8% (bf16, 150 random shapes of each layout) / 97%
        (fp16) / 87.5% (fp8); 64 keeps 97.5 / 99 / 98% (96: 99.7%) at ~+50 us a new problem
        (`benchmarks/catalog_vs_space.py`, BENCHMARKS "Session 34"), so both catalogs take 64.
        """
        return cls(stage2_top=64) if catalog == "space" else cls()


def within_problem_rank(problem_index: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """0-based rank of each row among its problem's rows, best score first (stable)."""
    n = len(scores)
    order = np.lexsort((np.arange(n), -scores, problem_index))
    starts = np.flatnonzero(np.r_[True, problem_index[order][1:] != problem_index[order][:-1]])
    sizes = np.diff(np.r_[starts, n])
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - np.repeat(starts, sizes)
    return rank


def cascade_keys(problem_index: np.ndarray, stage1: np.ndarray, full: np.ndarray,
                 stage2_top: int) -> np.ndarray:
    """Sort keys (higher = better) of the cascade for rows grouped by problem."""
    rank1 = within_problem_rank(problem_index, stage1)
    return np.where(rank1 < stage2_top, full + _STAGE2_OFFSET, stage1)


def score_gaps(problem_index: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """score - the problem's top score (<= 0)."""
    uniq, inv = np.unique(problem_index, return_inverse=True)
    top = np.full(len(uniq), -np.inf)
    np.maximum.at(top, inv, scores)
    return scores - top[inv]


@dataclass
class Calibration:
    """Piecewise-linear, non-decreasing map from score gap to expected fraction of the best."""

    x: np.ndarray
    y: np.ndarray

    @classmethod
    def fit(cls, gaps: np.ndarray, rel: np.ndarray, max_points: int = 200) -> "Calibration":
        from sklearn.isotonic import IsotonicRegression

        iso = IsotonicRegression(increasing=True, out_of_bounds="clip", y_min=0.0, y_max=1.0)
        iso.fit(gaps, rel)
        xs, ys = np.asarray(iso.X_thresholds_), np.asarray(iso.y_thresholds_)
        if len(xs) > max_points:  # keep the file small; the map stays monotone
            pick = np.unique(np.linspace(0, len(xs) - 1, max_points).round().astype(int))
            xs, ys = xs[pick], ys[pick]
        return cls(xs.astype(float), ys.astype(float))

    def __call__(self, gaps: np.ndarray) -> np.ndarray:
        return np.interp(gaps, self.x, self.y)

    def to_dict(self) -> dict:
        return {"x": [round(float(v), 6) for v in self.x],
                "y": [round(float(v), 6) for v in self.y]}

    @classmethod
    def from_dict(cls, d: dict) -> "Calibration":
        return cls(np.asarray(d["x"], float), np.asarray(d["y"], float))
