"""Cross-validation by problem shape: folds, fitting, out-of-fold scores.

Folds are GroupKFold over problems with the shape (M, N, K) as the group, so a shape is never
both trained on and tested on (not even under another dtype, layout or stride). Every objective
and baseline is scored on the same folds.
"""

from __future__ import annotations

from dataclasses import dataclass

import lightgbm as lgb
import numpy as np

from tilepick.features import current_spec
from tilepick.features.compute import FEATURE_NAMES
from tilepick.model.dataset import DataError, Dataset
from tilepick.model.objectives import NUM_ROUNDS, Objective


@dataclass
class Fold:
    train: np.ndarray   # bool per problem
    test: np.ndarray    # bool per problem


# fold grouping -> what a group is (cv_metrics says it)
GROUPINGS = {"shape": "shape (M, N, K)", "weight": "weight (N, K)"}


def problem_groups(ds: Dataset, by: str = "shape") -> np.ndarray:
    """Per problem, its fold group: the shape (M, N, K), or the weight (N, K), which keeps
    every token count M of an LLM weight on one side, as the validation sets do (a gain that
    needs the other Ms of a weight in training shows out of fold by shape only: BENCHMARKS,
    "Session 12: what else the vendor gate could learn from")."""
    if by == "shape":
        return ds.groups[ds.starts]
    if by == "weight":
        n = ds.frame["n"].to_numpy()[ds.starts].astype(np.int64)
        k = ds.frame["k"].to_numpy()[ds.starts].astype(np.int64)
        return n * (1 << 32) + k
    raise ValueError(f"fold grouping {by!r}: one of {tuple(GROUPINGS)}")


def make_folds(ds: Dataset, n_folds: int = 5, seed: int = 0, by: str = "shape") -> list[Fold]:
    """GroupKFold over problems, grouped by shape (or weight: :func:`problem_groups`);
    deterministic for a seed."""
    from sklearn.model_selection import GroupKFold

    groups = problem_groups(ds, by)
    n_groups = len(np.unique(groups))
    if n_folds < 2:
        raise DataError(f"cross-validation needs at least 2 folds, got {n_folds}")
    if n_groups < n_folds:
        raise DataError(f"{n_groups} distinct {by}s cannot fill {n_folds} folds")
    splitter = GroupKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    folds = []
    for tr, te in splitter.split(np.zeros(len(groups)), groups=groups):
        train = np.zeros(len(groups), bool)
        test = np.zeros(len(groups), bool)
        train[tr] = True
        test[te] = True
        folds.append(Fold(train, test))
    return folds


def _lgb_dataset(ds: Dataset, obj: Objective, weights: np.ndarray | None) -> lgb.Dataset:
    spec = current_spec()
    data = lgb.Dataset(ds.x, label=obj.labels(ds.tflops, ds.rel), weight=weights,
                       feature_name=list(spec.names), categorical_feature=list(spec.categorical),
                       free_raw_data=False, params={"verbose": -1, "max_bin": 255})
    if obj.is_ranking:
        data.set_group(ds.sizes)
    return data


def strata(ds: Dataset) -> np.ndarray:
    """Per problem: its layout and whether its strides meet the TMA rules (the feature
    ``tma_aligned``), e.g. ``rc/aligned``. Why these two: the kernels' speed order changes most
    across them (a pointer config that wins aligned LLM shapes ran 22x slower than the best on
    an rc shape with K = 12,674), and LLM-heavy data holds few unaligned problems."""
    aligned = ds.x[ds.starts, FEATURE_NAMES.index("tma_aligned")] > 0
    layout = ds.frame["layout"].to_numpy()[ds.starts].astype(str)
    return np.char.add(layout, np.where(aligned, "/aligned", "/unaligned"))


def sample_weights(ds: Dataset, retimed_weight: float,
                   minority_layout_weight: float = 1.0,
                   stratum_balance: float = 0.0, stratum_cap: float = 0.0) -> np.ndarray | None:
    """Row weights: re-timed rows (median over interleaved rounds) count ``retimed_weight``
    times; rows of every layout other than the data's most common one (by problems) count
    ``minority_layout_weight`` times, so that a layout with a tenth of the problems (bf16 rc
    had 330 against 3,209 rr) is not ranked as an afterthought of the other (BENCHMARKS.md,
    "Session 6: weighting the minority layout, ..."; not needed since rc has 1,785). Data of
    one layout is unaffected. ``stratum_balance`` P: the rows of a stratum (:func:`strata`)
    of n problems count (n_max / n) ** P times, n_max being the largest stratum's count (0:
    off; 1: every stratum weighs as much as the largest; BENCHMARKS.md, "Session 7").
    ``stratum_cap`` C > 0 caps that factor at C: four strata of a new layout (cc/cr, 150-315
    problems each against rr's 3,066) otherwise took half the weight (BENCHMARKS "Session 30")."""
    w = np.ones(len(ds))
    if retimed_weight != 1.0:
        w = np.where(ds.frame["retimed"].to_numpy(bool), retimed_weight, 1.0)
    if minority_layout_weight != 1.0:
        layout = ds.frame["layout"].to_numpy()
        names, counts = np.unique(layout[ds.starts], return_counts=True)
        w = w * np.where(layout == names[np.argmax(counts)], 1.0, minority_layout_weight)
    if stratum_balance != 0.0:
        names, inverse, counts = np.unique(strata(ds), return_inverse=True, return_counts=True)
        factor = (counts.max() / counts) ** stratum_balance
        if stratum_cap > 0:
            factor = np.minimum(factor, stratum_cap)
        w = w * factor[inverse][ds.problem_index]
    return None if np.all(w == 1.0) else w


def fit(ds: Dataset, obj: Objective, params: dict | None = None, rounds: int = NUM_ROUNDS,
        retimed_weight: float = 1.0, init_model: lgb.Booster | None = None,
        minority_layout_weight: float = 1.0, stratum_balance: float = 0.0,
        stratum_cap: float = 0.0) -> lgb.Booster:
    """Train one booster on every row of ``ds`` (``init_model``: continue boosting it)."""
    data = _lgb_dataset(ds, obj, sample_weights(ds, retimed_weight, minority_layout_weight,
                                                    stratum_balance, stratum_cap))
    return lgb.train(obj.params(params), data, num_boost_round=rounds, init_model=init_model,
                     keep_training_booster=False)
