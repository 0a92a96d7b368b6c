"""Which of cuBLASLt's heuristic entries to run where the main model picks cuBLAS.

Why a model of its own: torch.matmul runs the first entry of cuBLAS's heuristic list;
cuBLASLt lists ~8 (``solvers.cublaslt_lib``) and the fastest of them beat torch.matmul by
2-4% geomean on an H200 (BENCHMARKS "Session 38"). Those entries exist only per problem, on
the GPU (the heuristic names them; hundreds of distinct names across shapes), so they are not
configs of a declared space for the main model to rank. This model scores the entries the
heuristic returned, from their fields turned into sizes (:mod:`tilepick.features.lt_entries`):
LightGBM LambdaRank over each problem's entries, trained on their speeds measured in
interleaved rounds against torch.matmul on the same inputs (``benchmarks/cublaslt_probe.py``).
The dispatcher runs the best-scored entry only where its score beats the heuristic's first
entry (the one torch.matmul runs) by ``delta``, else cuBLAS. Why a ranker with a score gap,
not a regression of the gain with a margin: on the 897 training shapes (out of fold, 5
GroupKFold folds by shape) the ranker's picks read 1.026x torch.matmul geomean, the
regression's at its best margin 1.015x (session 39, ``tilepick lt-ranker train``'s
``out_of_fold``).

Labels: each entry's median, over rounds, of torch.matmul's time / the entry's time in the same
round; the probe's final rounds where the entry was re-timed there, else its screening rounds.
A model's pick is scored by its own label, which its choice did not select on (no winner's
curse); the best label of a problem is inflated by the selection and is reported as such.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tilepick.features import lt_entries
from tilepick.model.artifacts import MODEL_FILE   # the file find_model_dir looks for
from tilepick.model.booster import write_model_text

META_FILE = "lt_ranker.json"
#: what the dispatcher runs (cuBLAS through torch) where no entry beats the heuristic's first
#: by the score gap
TORCH = "cublas"
#: relevance grades: an entry's speed relative to its problem's best label, in steps of
#: GRADE_STEP of log-speed below it (the best: GRADES - 1, 10 steps below or worse: 0)
GRADES, GRADE_STEP = 11, 0.005
PARAMS = dict(objective="lambdarank", label_gain=list(range(GRADES)),
              lambdarank_truncation_level=3, learning_rate=0.05, num_leaves=31,
              min_data_in_leaf=20, feature_fraction=0.9, bagging_fraction=0.8, bagging_freq=1,
              lambda_l2=1.0, verbose=-1, seed=39, deterministic=True, num_threads=2)
ROUNDS = 300
#: the model is the mean of one LambdaRank booster per seed (``booster.average``: one model
#: file, the same serving paths). Why: single seeds' choices spread by ~0.1% out of fold and
#: ~0.15% on the held-out probes; on 2,211 shapes the mean of three read 1.0237x torch.matmul
#: out of fold against 1.0229x for seed 39 alone, and 1.0238x against 1.0204x on the bf16 rr
#: validation probe (session 40), for three times the trees (1.3 ms for 8 entries by numpy on a
#: 2-core CPU)
SEEDS = (39, 1, 2)
DELTAS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2)
#: dtypes without an entry model of their own and the model that chooses their entries. fp16:
#: the bf16 model (its features hold no dtype; cuBLASLt lists the same kinds of entries), which
#: on 226 held-out fp16 shapes read 1.023x torch.matmul, the heuristic's first entry 1.001x
#: (BENCHMARKS "Session 40": ``tilepick lt evaluate
#: benchmarks/results/cublaslt_probe_fp16_heldout_h200_a2593f7.json.gz``)
BORROWED_FROM = {"fp16": "bf16"}


def _paired(torch_ms: list[float], entry_ms: list[float]) -> float:
    return statistics.median(t / e for t, e in zip(torch_ms, entry_ms))


def probe_frame(path: str | Path):
    """One row per timed entry of a ``cublaslt_probe.py`` result (its JSON, gzip or not):
    :data:`lt_entries.INPUTS`, the label ``over_torch``, where it came from, the shape and the
    run's provenance. Entries that failed their check or were not timed are left out."""
    import pandas as pd

    from tilepick.data.io import open_text
    from tilepick.solvers.cublaslt_lib import LtAlgo

    try:
        with open_text(path) as f:
            doc = json.load(f)
        prov, probe_rows = doc["provenance"], doc["rows"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a cublaslt_probe.py result (JSON with provenance and "
                         f"rows): {type(exc).__name__}: {exc}") from None
    dtype = (doc.get("args") or {}).get("dtype") or "bf16"   # runs before --dtype: bf16
    rows = []
    for r in probe_rows:
        if "error" in r:
            continue
        dims, layout = r["spec"].split(":")
        m, n, k = map(int, dims.split("x"))
        timed = {}
        for stage in ("screen", "final"):
            by = {c["candidate"]: c["rounds_ms"] for c in r[stage]}
            if "cublas" in by:
                timed.update({(stage, c): _paired(by["cublas"], ms) for c, ms in by.items()
                              if c != "cublas"})
        for cand, info in r["entries"].items():
            stage = "final" if ("final", cand) in timed else "screen"
            if (stage, cand) not in timed:
                continue
            name = LtAlgo.parse(cand.removeprefix("lt."))
            rows.append({"spec": r["spec"], "layout": layout, "m": m, "n": n, "k": k,
                         "a_row_major": float(layout[0] == "r"),
                         "b_row_major": float(layout[1] == "r"), "sm_count": prov["sm_count"],
                         **{f: getattr(name, f) for f, *_ in LtAlgo.ATTRS},
                         "rank": info["rank"], "workspace": info["workspace"],
                         "waves": info["waves"], "entry": name.name,
                         "over_torch": timed[(stage, cand)], "label_from": stage,
                         "dtype": dtype,
                         "gpu_name": prov["gpu_name"],
                         "cublaslt_version": prov.get("cublaslt_version"),
                         "commit": prov["tilepick_commit"], "date": prov["date"]})
    return pd.DataFrame(rows)


def grades(df) -> np.ndarray:
    """Relevance grade of each row (see :data:`GRADES`)."""
    log = np.log(df["over_torch"].to_numpy(float))
    best = np.log(df.groupby("spec", sort=False)["over_torch"].transform("max").to_numpy(float))
    return np.clip(np.round(GRADES - 1 + (log - best) / GRADE_STEP), 0, GRADES - 1).astype(int)


def _train(df, rounds: int = ROUNDS, seeds: tuple[int, ...] = SEEDS):
    import lightgbm as lgb

    from tilepick.model.booster import average

    df = df.sort_values("spec", kind="stable")   # LambdaRank: each query's rows together
    sizes = df.groupby("spec", sort=False).size().to_numpy()
    data = lgb.Dataset(lt_entries.compute(df), grades(df), group=sizes,
                       feature_name=list(lt_entries.FEATURE_NAMES))
    return average([lgb.train({**PARAMS, "seed": seed}, data, num_boost_round=rounds)
                    for seed in seeds])


def out_of_fold(df, folds: int = 5, seeds: tuple[int, ...] = SEEDS):
    """Each row's prediction by a model that never saw its shape (GroupKFold by shape)."""
    from sklearn.model_selection import GroupKFold

    pred = np.empty(len(df))
    for train, test in GroupKFold(n_splits=folds).split(df, groups=df["spec"]):
        model = _train(df.iloc[train], seeds=seeds)
        pred[test] = model.predict(lt_entries.compute(df.iloc[test]))
    return pred


def choices(df, scores, delta: float):
    """Per shape: the measured speed over torch.matmul of what the dispatcher would run (the
    best-scored entry where its score beats the heuristic's first entry's by ``delta``, else
    torch.matmul: 1.0), of the heuristic's first entry, and the best label (inflated: see the
    module doc)."""
    import pandas as pd

    d = df.assign(score=scores)
    rows = []
    for spec, g in d.groupby("spec", sort=False):
        top, first = g["score"].idxmax(), g["rank"].idxmin()
        run = bool(g.at[top, "score"] - g.at[first, "score"] > delta)
        rows.append(choice_row(spec, g, top, first, run))
    return pd.DataFrame(rows)


def choice_row(spec: str, g, top, first, run: bool) -> dict:
    """One shape's row of :func:`choices`: its rows ``g``, the index labels of the entry a
    rule ranks first (``top``) and of the heuristic's first entry, and whether the rule runs
    ``top`` instead of torch.matmul (analyses of other rules build their rows here too)."""
    return {"spec": spec, "m": int(g.at[top, "m"]), "layout": g.at[top, "layout"],
            "pick": g.at[top, "entry"] if run else TORCH,
            "chosen": float(g.at[top, "over_torch"]) if run else 1.0,
            "first": float(g.at[first, "over_torch"]),
            "best": max(1.0, float(g["over_torch"].max()))}


def summary(ch) -> dict:
    """Geomeans over shapes (of the chosen entry, the heuristic's first, the best label), the
    worst chosen, and how often an entry replaced torch.matmul."""
    geo = lambda s: float(np.exp(np.log(s).mean()))  # noqa: E731
    return {"shapes": len(ch), "chosen_geomean": geo(ch["chosen"]),
            "first_geomean": geo(ch["first"]), "best_geomean_inflated": geo(ch["best"]),
            "chosen_min": float(ch["chosen"].min()),
            "chosen_below_0.97": int((ch["chosen"] < 0.97).sum()),
            "replaced_torch": float((ch["pick"] != TORCH).mean())}


def pick_delta(df, oof) -> tuple[float, dict]:
    """The score gap to run an entry by: of the :data:`DELTAS` whose out-of-fold geomean is
    within 0.05% of the best, the one with the fewest shapes below 0.97x torch.matmul (then
    the larger gap). Returns it and every gap's summary."""
    scores = {d: summary(choices(df, oof, d)) for d in DELTAS}
    top = max(s["chosen_geomean"] for s in scores.values())
    near = [d for d, s in scores.items() if s["chosen_geomean"] >= top - 5e-4]
    return min(near, key=lambda d: (scores[d]["chosen_below_0.97"], -d)), scores


def train(data: list[str | Path], out: str | Path, delta: float | None = None) -> dict:
    """Train on probe results, choose the score gap by cross-validation, write the model."""
    import pandas as pd

    from tilepick.model.artifacts import _sha256
    from tilepick.provenance import collect

    df = pd.concat([probe_frame(p) for p in data], ignore_index=True)
    oof = out_of_fold(df)
    chosen, scores = pick_delta(df, oof)
    delta = chosen if delta is None else delta
    booster = _train(df)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_model_text(booster, out / MODEL_FILE)
    prov = collect()
    meta = {"schema_version": lt_entries.FEATURE_SCHEMA_VERSION,
            "features": list(lt_entries.FEATURE_NAMES), "delta": delta,
            "out_of_fold": {str(k): v for k, v in scores.items()}, "params": PARAMS,
            "rounds": ROUNDS, "seeds": list(SEEDS), "grades": [GRADES, GRADE_STEP],
            "data": [{"path": str(p), "sha256": _sha256(Path(p))} for p in data],
            "rows": len(df), "shapes": int(df["spec"].nunique()),
            "gpu_name": sorted(set(df["gpu_name"])), "dtypes": sorted(set(df["dtype"])),
            "cublaslt_version": sorted({int(v) for v in df["cublaslt_version"].dropna()}),
            "commit": prov["tilepick_commit"], "date": prov["date"]}
    (out / META_FILE).write_text(json.dumps(meta, indent=1) + "\n")
    return meta


@dataclass
class LtRanker:
    """A trained entry model: scores a problem's heuristic entries, picks one or none."""

    booster: object
    delta: float
    meta: dict

    @classmethod
    def load(cls, model_dir: str | Path) -> "LtRanker":
        """The model in ``model_dir`` (LightGBM where installed, else the same trees by numpy:
        the GPU machines have no lightgbm)."""
        from tilepick.model.booster import FastBooster

        model_dir = Path(model_dir)
        meta = json.loads((model_dir / META_FILE).read_text())
        if meta["features"] != list(lt_entries.FEATURE_NAMES) \
                or meta["schema_version"] != lt_entries.FEATURE_SCHEMA_VERSION:
            raise ValueError(f"{model_dir}: trained on another cuBLASLt entry feature list "
                             f"(schema {meta['schema_version']}); retrain it")
        return cls(FastBooster.load(model_dir / MODEL_FILE), float(meta["delta"]), meta)

    def scores(self, problem, entries, sm_count: int) -> np.ndarray:
        """The ranker's score of each (LtAlgo, info) entry (higher: faster)."""
        if not entries:
            return np.empty(0)
        x = lt_entries.compute(lt_entries.entry_inputs(problem, entries, sm_count))
        return self.booster.predict(x)

    def choose(self, problem, entries, sm_count: int):
        """(the entries best-scored first as (LtAlgo, score gap over the heuristic's first
        entry), whether the first should replace torch.matmul: its gap exceeds ``delta``)."""
        s = self.scores(problem, entries, sm_count)
        if not len(s):
            return [], False
        first = s[int(np.argmin([info["rank"] for _, info in entries]))]
        order = np.argsort(-s, kind="stable")
        ranked = [(entries[i][0], float(s[i] - first)) for i in order]
        return ranked, ranked[0][1] > self.delta
