"""Selection metrics: how good is the config a ranking picks, per problem and overall.

Efficiency of a pick on a problem = measured TFLOP/s of the picked config / the best measured
TFLOP/s among that problem's measured candidates (the oracle).

The winner's-curse rule: the data is sampled (each problem has ~100-150 of ~1,000 valid configs
measured), so a model may prefer a config that was never measured for the problem. Its speed is
unknown, and scoring it by a guess would flatter or punish the model arbitrarily. Evaluation
therefore ranks only the *measured* candidates of each problem: the pick is the best-ranked
measured candidate. The same rule applies to every method (static configs, cuBLAS, top-k), so
they are compared on equal terms; it measures ranking quality over what was measured, not the
speed of unmeasured configs.

Ties: candidates with equal scores keep the dataset order (config id); a pick whose measured
speed equals the best counts as a top-1 hit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

M_SLICES = (("M=1", 1, 1), ("M=2-16", 2, 16), ("M=17-128", 17, 128),
            ("M=129-1024", 129, 1024), ("M>1024", 1025, None))
TOPK = (1, 2, 4, 5, 8)


def per_problem(problem_index: np.ndarray, tflops: np.ndarray, scores: np.ndarray,
                ks=TOPK) -> pd.DataFrame:
    """One row per problem: best measured TFLOP/s, the pick's, and the best of the top k.

    ``problem_index`` must be sorted (rows grouped by problem), as in a Dataset.
    """
    problem_index = np.asarray(problem_index)
    n = len(problem_index)
    if n == 0:
        return pd.DataFrame(columns=["problem", "candidates", "best_tflops", "pick_row",
                                     "pick_tflops", "efficiency", "top1", "best_rank"]
                            + [f"top{k}_efficiency" for k in ks])
    if np.any(np.diff(problem_index) < 0):
        raise ValueError("rows must be grouped by problem (sorted problem_index)")
    tflops = np.asarray(tflops, dtype=np.float64)
    s = np.asarray(scores, dtype=np.float64)
    s = np.where(np.isnan(s), -np.inf, s)
    order = np.lexsort((np.arange(n), -s, problem_index))   # by problem, best score first
    starts = np.flatnonzero(np.r_[True, problem_index[order][1:] != problem_index[order][:-1]])
    sizes = np.diff(np.r_[starts, n])
    rank = np.arange(n) - np.repeat(starts, sizes)
    t_sorted = tflops[order]
    best = np.maximum.reduceat(t_sorted, starts)
    best_rep = np.repeat(best, sizes)
    is_best = t_sorted >= best_rep * (1 - 1e-12)
    # rank of the first candidate that reaches the best measured speed
    best_rank = np.minimum.reduceat(np.where(is_best, rank, n), starts)
    out = pd.DataFrame({
        "problem": problem_index[order][starts],
        "candidates": sizes,
        "best_tflops": best,
        "pick_row": order[starts],
        "pick_tflops": t_sorted[starts],
    })
    out["efficiency"] = out["pick_tflops"] / out["best_tflops"]
    out["top1"] = best_rank == 0
    out["best_rank"] = best_rank
    for k in ks:
        top = np.maximum.reduceat(np.where(rank < k, t_sorted, 0.0), starts)
        out[f"top{k}_efficiency"] = top / best
    return out


def summarize(eff: np.ndarray, top1: np.ndarray | None = None,
              best_rank: np.ndarray | None = None) -> dict:
    """Mean / median / P10 / min efficiency (+ top-1 accuracy and top-5 hit rate)."""
    eff = np.asarray(eff, dtype=np.float64)
    if eff.size == 0:
        return {"problems": 0, "mean": None, "median": None, "p10": None, "min": None,
                "top1_accuracy": None, "top5_hit_rate": None}
    out = {"problems": int(eff.size), "mean": float(eff.mean()), "median": float(np.median(eff)),
           "p10": float(np.percentile(eff, 10)), "min": float(eff.min())}
    out["top1_accuracy"] = float(np.mean(top1)) if top1 is not None else None
    out["top5_hit_rate"] = (float(np.mean(np.asarray(best_rank) < 5))
                            if best_rank is not None else None)
    return out


def r2(y_true: np.ndarray, y_pred: np.ndarray) -> float | None:
    y_true, y_pred = np.asarray(y_true, float), np.asarray(y_pred, float)
    ok = np.isfinite(y_true) & np.isfinite(y_pred)
    if ok.sum() < 2:
        return None
    ss_res = float(np.sum((y_true[ok] - y_pred[ok]) ** 2))
    ss_tot = float(np.sum((y_true[ok] - y_true[ok].mean()) ** 2))
    return 1.0 - ss_res / ss_tot if ss_tot > 0 else None


def m_slice(m: int) -> str:
    for name, lo, hi in M_SLICES:
        if m >= lo and (hi is None or m <= hi):
            return name
    raise ValueError(m)


def method_summary(table: pd.DataFrame, m_values: np.ndarray | None = None,
                   groups: dict[str, np.ndarray] | None = None) -> dict:
    """Summary of one method's per-problem table, overall and by M slice.

    ``m_values``: M of each row of ``table``. ``groups``: other slicings, each a label per
    problem of the dataset (indexed by ``table["problem"]``), summarised as ``by_<name>``."""
    out = summarize(table["efficiency"].to_numpy(), table["top1"].to_numpy(),
                    table["best_rank"].to_numpy())
    for k in TOPK:
        col = f"top{k}_efficiency"
        if col in table:
            out[f"top{k}_mean"] = float(table[col].mean()) if len(table) else None
    if m_values is not None and len(table):
        slices = np.array([m_slice(int(m)) for m in m_values])
        out["by_m"] = {}
        for name, _, _ in M_SLICES:
            sel = slices == name
            if sel.any():
                t = table[sel]
                out["by_m"][name] = summarize(t["efficiency"].to_numpy(), t["top1"].to_numpy(),
                                              t["best_rank"].to_numpy())
    for name, labels in (groups or {}).items():
        if not len(table):
            continue
        lab = np.asarray(labels)[table["problem"].to_numpy()]
        out[f"by_{name}"] = {str(v): summarize(table["efficiency"].to_numpy()[lab == v],
                                               table["top1"].to_numpy()[lab == v],
                                               table["best_rank"].to_numpy()[lab == v])
                             for v in sorted(set(lab))}
    return out


def tie_hits(ds, scores: np.ndarray, k: int) -> np.ndarray:
    """Per problem: is one of the model's first ``k`` measured candidates the best or tied
    with it (within the larger of the two candidates' re-timing spreads)? The strict top-5
    hit rate asks for the very fastest of ~800 configs, many of them inside each other's
    noise; this is the same question asked at the resolution of the measurement."""
    spread = np.nan_to_num(ds.frame["retime_spread"].to_numpy(dtype=np.float64), nan=0.0) \
        if "retime_spread" in ds.frame else np.zeros(len(ds))
    s = np.where(np.isnan(scores), -np.inf, scores)
    out = np.zeros(ds.n_problems, dtype=bool)
    for i, (lo, size) in enumerate(zip(ds.starts, ds.sizes)):
        rows = lo + np.argsort(-s[lo:lo + size], kind="stable")[:k]
        best = ds.best_row[i]
        band = np.maximum(spread[best], spread[rows])
        out[i] = bool(np.any(ds.tflops[rows] >= ds.tflops[best] / (1.0 + band) - 1e-12))
    return out


def tie_rates(ds, scores: np.ndarray) -> dict:
    """``ties_rate``: the pick is the best or inside its noise band; ``top5_hit_or_tie_rate``:
    one of the first five is. Rows without a re-timing spread have a band of zero."""
    return {"ties_rate": float(np.mean(tie_hits(ds, scores, 1))),
            "top5_hit_or_tie_rate": float(np.mean(tie_hits(ds, scores, 5)))}


#: the fewest rounds a cross-fitted score needs (each round is scored against an oracle chosen
#: on the others, so two are too few to leave anything to choose with)
CROSSFIT_MIN_ROUNDS = 3


def round_matrix(round_ms, lo: int, hi: int) -> np.ndarray | None:
    """The rows ``lo:hi``'s per-round times as a [rows, rounds] array, or None where any row
    lacks them or the rows do not share one round count (not one pass)."""
    got = [round_ms[i] for i in range(lo, hi)]
    if any(r is None for r in got):
        return None
    t = [np.asarray(r, dtype=np.float64) for r in got]
    if len({len(r) for r in t}) != 1 or len(t[0]) < CROSSFIT_MIN_ROUNDS:
        return None
    t = np.vstack(t)
    return t if np.all(np.isfinite(t) & (t > 0)) else None


def crossfit(ds, scores: np.ndarray, ks=(1, 2, 4, 8), fixed: dict | None = None) -> pd.DataFrame:
    """Efficiency scored round by round, with the oracle chosen on the *other* rounds.

    Why: the oracle of :func:`per_problem` is the best of a problem's re-timed medians, and the
    best of ~40 noisy medians reads faster than the config really runs (the winner's curse),
    so even a perfect ranker scores under 100% against it, by more where rounds spread more.
    Here, for each round r of a problem's pass, the oracle is the config with the best median
    over the rounds other than r, the best of the model's first k is chosen the same way, and
    the round-r time of that oracle over the round-r time of the pick is the round's ratio
    (both ran moments apart in round r, so a clock change between rounds cancels). A
    problem's efficiency is the median of its rounds' ratios; it can exceed 1 where the pick
    ran faster in held-out rounds than the config the other rounds call best. For k = 1 the
    pick is the model's first measured candidate whatever the round.

    ``fixed``: {name: per-problem row of a method's fixed pick, -1 where it has none} (e.g.
    cuBLAS alone). Problems whose rows lack round times (passes before ``round_ms`` existed,
    or no pass) get NaN. Returns one row per problem: ``problem``, ``crossfit_top{k}`` and
    ``crossfit_<name>``."""
    frame = ds.frame
    rounds = frame["round_ms"].to_numpy() if "round_ms" in frame else None
    s = np.where(np.isnan(scores), -np.inf, np.asarray(scores, dtype=np.float64))
    cols = {f"crossfit_top{k}": np.full(ds.n_problems, np.nan) for k in ks}
    cols |= {f"crossfit_{name}": np.full(ds.n_problems, np.nan) for name in (fixed or {})}
    for i, (lo, size) in enumerate(zip(ds.starts, ds.sizes)):
        t = None if rounds is None else round_matrix(rounds, lo, lo + size)
        if t is None:
            continue
        order = np.argsort(-s[lo:lo + size], kind="stable")
        n_rounds = t.shape[1]
        ratios = {c: [] for c in cols}
        for r in range(n_rounds):
            med = np.median(np.delete(t, r, axis=1), axis=1)
            oracle = int(np.argmin(med))
            for k in ks:
                cand = order[:k]
                pick = int(cand[np.argmin(med[cand])])
                ratios[f"crossfit_top{k}"].append(t[oracle, r] / t[pick, r])
            for name, rows in (fixed or {}).items():
                if rows[i] >= 0:
                    ratios[f"crossfit_{name}"].append(t[oracle, r] / t[rows[i] - lo, r])
        for c, v in ratios.items():
            if v:
                cols[c][i] = float(np.median(v))
    return pd.DataFrame({"problem": np.arange(ds.n_problems), **cols})


#: bootstrap draws of :func:`noise_ceiling`
CEILING_DRAWS = 200


def noise_ceiling(ds, draws: int = CEILING_DRAWS, seed: int = 0) -> np.ndarray:
    """Per problem: the usual rule's efficiency (:func:`per_problem`) of a ranker that always
    picks the config fastest in expectation, were the pass's rounds drawn again.

    Why: targets are set in the usual rule, whose oracle is the best of a problem's re-timed
    medians; with several near-tied contenders some other one's median often comes out faster,
    so a perfect ranker scores under 100%, and how far under says how much of a model's loss
    is the measurement's. Each contender's rounds are resampled with replacement (``draws``
    times), the config with the best median over all its rounds is scored against the best of
    the resampled medians, and the ratios are averaged. :func:`crossfit` asks the same
    question the other way (it re-scores the model; this scores the measurement). NaN where a
    problem lacks one pass's rounds for every contender."""
    rng = np.random.default_rng(seed)
    rounds = ds.frame["round_ms"].to_numpy() if "round_ms" in ds.frame else None
    out = np.full(ds.n_problems, np.nan)
    for i, (lo, size) in enumerate(zip(ds.starts, ds.sizes)):
        t = None if rounds is None else round_matrix(rounds, lo, lo + size)
        if t is None:
            continue
        star = int(np.argmin(np.median(t, axis=1)))
        idx = rng.integers(0, t.shape[1], size=(draws, *t.shape))
        med = np.median(np.take_along_axis(np.broadcast_to(t, idx.shape), idx, axis=2), axis=2)
        out[i] = float(np.mean(med.min(axis=1) / med[:, star]))
    return out
