"""Score a trained model on a held-out, exhaustively measured validation set.

Out-of-fold numbers (``evaluate``) re-train fold models on the training data; this scores the
*shipped* model, as the dispatcher would use it, on problems it never saw, whose every valid
config was measured and whose best candidates were re-timed in interleaved rounds (so the
oracle is not a winner's-curse outlier). Rules are the ones of :mod:`tilepick.model.metrics`:
the pick is the model's best-ranked *measured* candidate; a config the model does not know is
never picked but still counts for the oracle. A pick inside the noise band of the best (its
re-timed median within the larger of the two candidates' round-to-round spreads) is a tie.
The untrained baselines of :mod:`tilepick.model.baselines` are scored beside the model, and
the report (validation.json, validation.md, efficiency_cdf.png) shows them side by side.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tilepick.data.schema import RETIME_PREFIX
from tilepick.model import baselines, metrics
from tilepick.model.dataset import load
from tilepick.problem import GemmProblem

TOP_K = (2, 4, 8)


def model_scores(predictor, ds) -> np.ndarray:
    """The model's order of every row as a score, higher first (minus its position in the
    ranking: the dispatcher takes the first; NaN where it ranks no such config). Not the
    predicted TFLOP/s: the calibration is piecewise constant, so candidates can tie on it,
    and a tie must not be broken by the order of the data's rows."""
    scores = np.full(len(ds), np.nan)
    for i, key in enumerate(ds.problem_keys):
        pred = {cid: -float(pos) for pos, (cid, _, _)
                in enumerate(predictor.rank(GemmProblem.from_key(key)))}
        lo, hi = ds.starts[i], ds.starts[i] + ds.sizes[i]
        scores[lo:hi] = [pred.get(cid, np.nan) for cid in ds.config_ids[lo:hi]]
    return scores


def first_picks(predictor, ds, data_paths) -> dict:
    """Where the model's pick is not what a problem is scored by, and why, as lists of
    problem keys. ``unmeasured``: its first-ranked config was never measured for the problem
    (the sweeps sampled a family's space: scored by its first *measured* config, the rule of
    :mod:`tilepick.model.metrics`, but the dispatcher would run the unmeasured one);
    ``outside_pass``: its first measured config was measured by the sweeps but the problem's
    re-timing pass did not re-time it (scored there by its next config in the pass). Both are
    zero for a model whose picks were measured and re-timed (``tilepick sweep --model-top``,
    ``tilepick data retime --model DIR``)."""
    from tilepick.data.io import measured_configs

    measured: dict = {}
    for path in data_paths:
        for key, ids in measured_configs(path).items():
            measured.setdefault(key, set()).update(ids)
    out: dict = {"unmeasured": [], "outside_pass": []}
    for i, key in enumerate(ds.problem_keys):
        lo, hi = ds.starts[i], ds.starts[i] + ds.sizes[i]
        ranked = [cid for cid, _, _ in predictor.rank(GemmProblem.from_key(key))]
        have = measured.get(key, ())
        if ranked and ranked[0] not in have:
            out["unmeasured"].append(str(key))
        if not str(ds.frame["sweep_id"].iloc[lo]).startswith(RETIME_PREFIX):
            continue
        first = next((cid for cid in ranked if cid in have), None)
        if first is not None and first not in set(ds.config_ids[lo:hi]):
            out["outside_pass"].append(str(key))
    return out


CROSSFIT_RULE = ("per problem with round times, each round of its pass is scored against the "
                 "config that is best over the other rounds (its time in that round over the "
                 "pick's time in that round; top-k: the best of the k chosen the same way); "
                 "the problem's efficiency is the median over rounds, and can exceed 100%")


CEILING_RULE = (f"each contender's rounds resampled with replacement "
                f"{metrics.CEILING_DRAWS} times; the config with the best median over all its "
                "rounds scored against the best of the resampled medians")


def crossfit_report(ds, scores: np.ndarray, table) -> dict | None:
    """The model's and cuBLAS's efficiency with the oracle chosen on other rounds than it is
    scored on (:func:`tilepick.model.metrics.crossfit`), beside the same problems' figures
    under the usual rule; None where no problem has round times (passes before session
    25)."""
    cf = metrics.crossfit(ds, scores, (1, *TOP_K), fixed={"cublas": baselines.cublas_rows(ds)})
    have = cf["crossfit_top1"].notna().to_numpy()
    if not have.any():
        return None

    def both(col, usual):
        new = cf.loc[have, col].dropna().to_numpy()
        old = usual[have[table["problem"].to_numpy()]] if usual is not None else None
        out = {"crossfit": metrics.summarize(new), "above_1": float(np.mean(new > 1.0))}
        if old is not None:
            out["usual_rule_same_problems"] = metrics.summarize(old)
        return out

    eff = table.set_index("problem")
    methods = {"model top-1": both("crossfit_top1", eff["efficiency"].to_numpy())}
    for k in TOP_K:
        methods[f"model top-{k} benchmarked"] = both(f"crossfit_top{k}",
                                                      eff[f"top{k}_efficiency"].to_numpy())
    methods[baselines.CUBLAS] = both("crossfit_cublas", None)
    return {"problems": int(have.sum()), "rule": CROSSFIT_RULE, "methods": methods}


def validate(model_dir, data_paths, out_dir=None) -> dict:
    from tilepick.model.predictor import Predictor

    pred = Predictor(Path(model_dir))
    ds = load(data_paths, pred.dtype, pred.arch, within_pass=True)
    sweeps = ds.frame.groupby("problem_key")["sweep_id"].first().fillna("")
    in_pass = int(sweeps.str.startswith(RETIME_PREFIX).sum())
    scores = model_scores(pred, ds)
    firsts = first_picks(pred, ds, data_paths)
    outside = len(firsts["outside_pass"])
    table = metrics.per_problem(ds.problem_index, ds.tflops, scores)
    m_of = ds.frame["m"].to_numpy()[ds.starts][table["problem"].to_numpy()]

    def summary(t, eff_col="efficiency"):
        s = metrics.method_summary(t.assign(efficiency=t[eff_col]), m_of[t.index],
                                   ds.problem_groups)
        if eff_col != "efficiency":  # best of k benchmarked: accuracy is the first pick's
            s["top1_accuracy"] = s["top5_hit_rate"] = None
        return s

    methods = {"model top-1": summary(table)}
    methods["model top-1"].update(metrics.tie_rates(ds, scores))
    for k in TOP_K:
        methods[f"model top-{k} benchmarked"] = summary(table, f"top{k}_efficiency")
    extra, extra_effs = baselines.methods(ds, summary, table["efficiency"])
    methods.update(extra)
    crossfit = crossfit_report(ds, scores, table)
    ceiling = metrics.noise_ceiling(ds)
    have = np.isfinite(ceiling)
    worst = table.sort_values("efficiency").head(20)
    report = {
        "model": str(model_dir), "data": [str(p) for p in data_paths],
        "problems": ds.n_problems, "rows": len(ds), "model_layouts": list(pred.layouts),
        "rule": ("efficiency = re-timed TFLOP/s of the model's best-ranked measured candidate / "
                 "the best measured; ties = pick within the re-timing noise band of the best; "
                 "a problem with a re-timing pass is scored inside it (its contenders only, "
                 "every value from the same interleaved rounds)"),
        "problems_scored_within_pass": in_pass,
        "model_top1_outside_pass": outside,
        "model_top1_outside_pass_problems": firsts["outside_pass"],
        "model_top1_unmeasured": len(firsts["unmeasured"]),
        "model_top1_unmeasured_problems": firsts["unmeasured"],
        "methods": methods, "unavailable": baselines.unavailable(ds),
        "crossfit": crossfit,
        "noise_ceiling": ({**metrics.summarize(ceiling[have]), "rule": CEILING_RULE}
                          if have.any() else None),
        "model_top1_by_layout": methods["model top-1"]["by_layout"],   # kept for readers
        "worst": [{"problem": ds.problem_keys[p], "pick": ds.config_ids[r],
                   "efficiency": float(e)}
                  for p, r, e in zip(worst["problem"], worst["pick_row"], worst["efficiency"])],
    }
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "validation.json").write_text(json.dumps(report, indent=1) + "\n")
        from tilepick.model.report import write_validation_report

        effs = {"model top-1": table["efficiency"].to_numpy(),
                "model top-4 benchmarked": table["top4_efficiency"].to_numpy()}
        write_validation_report(out, report, effs | extra_effs)
    return report
