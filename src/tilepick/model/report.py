"""The evaluation report (a markdown page and three small PNG plots, matplotlib Agg) and the
validation report (a markdown page and the efficiency CDF): one methods table and one CDF
for both, so a method added to one shows in the other the same way. Each page is also
written as standalone HTML (python-markdown), for reading in a browser beside its plots."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body {{font-family: sans-serif; max-width: 72em; margin: 2em auto; padding: 0 1em}}
table {{border-collapse: collapse; margin: 1em 0}} th, td {{border: 1px solid #bbb;
padding: 0.25em 0.6em; text-align: right}} th:first-child, td:first-child {{text-align: left}}
img {{max-width: 100%}} code {{background: #f3f3f3}}</style></head>
<body>
{body}
</body></html>
"""


def write_page(out: Path, name: str, lines: list[str]) -> None:
    """``name``.md and ``name``.html (same content; images are the PNGs beside them)."""
    import html

    import markdown

    text = "\n".join(lines) + "\n"
    (out / f"{name}.md").write_text(text)
    title = next((ln.lstrip("# ") for ln in lines if ln.startswith("# ")), name)
    body = markdown.markdown(text, extensions=["tables"])
    (out / f"{name}.html").write_text(_HTML.format(title=html.escape(title), body=body))


def _save(out: Path, fig, name: str, files: list) -> None:
    fig.tight_layout()
    fig.savefig(out / name)
    _pyplot().close(fig)
    files.append(name)


def efficiency_cdf(out: Path, tables: dict, title: str, files: list) -> None:
    """One step curve per method; the legend gives each method's problem count, since a
    baseline may be scored on fewer problems than the model (see its coverage)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=90)
    for name, eff in tables.items():
        e = np.sort(np.asarray(eff))
        if e.size:
            ax.step(e, np.arange(1, len(e) + 1) / len(e), where="post",
                    label=f"{name} (n={e.size})", lw=1.2)
    ax.set_xlabel("efficiency (pick / best measured)")
    ax.set_ylabel("fraction of problems <= x")
    ax.set_xlim(0.3, 1.01)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(title, fontsize=10)
    _save(out, fig, "efficiency_cdf.png", files)


def _plots(out: Path, tables: dict, measured, predicted, worst) -> list[str]:
    plt = _pyplot()
    files: list[str] = []

    def save(fig, name):
        _save(out, fig, name, files)

    efficiency_cdf(out, tables, "Efficiency CDF (out-of-fold)", files)

    fig, ax = plt.subplots(figsize=(4.8, 4.4), dpi=90)
    ok = np.isfinite(predicted) & (predicted > 0)
    ax.scatter(measured[ok], predicted[ok], s=2, alpha=0.15, lw=0)
    lo = max(1e-4, float(min(measured[ok].min(), predicted[ok].min())))
    hi = float(max(measured[ok].max(), predicted[ok].max()))
    ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("measured TFLOP/s")
    ax.set_ylabel("predicted TFLOP/s (out-of-fold)")
    ax.set_title("Predicted vs measured, every candidate", fontsize=10)
    save(fig, "predicted_vs_measured.png")

    fig, ax = plt.subplots(figsize=(7.0, 5.0), dpi=90)
    w = worst.iloc[::-1]
    ax.barh(np.arange(len(w)), w["efficiency"], color="tab:red")
    ax.set_yticks(np.arange(len(w)))
    ax.set_yticklabels([k.replace("gemm.", "") for k in w["problem_key"]], fontsize=7)
    ax.set_xlabel("efficiency of the model's pick")
    ax.set_xlim(0, 1)
    ax.set_title("20 worst problems (out-of-fold)", fontsize=10)
    save(fig, "worst_problems.png")
    return files


def write_report(out: Path, report: dict, tables: dict, measured, predicted, worst) -> None:
    files = _plots(out, tables, np.asarray(measured), np.asarray(predicted), worst)
    lines = [f"# Evaluation of {report['model']} ({report['objective']})", "",
             f"{report['problems']} problems, {report['rows']} measured rows, "
             f"{report['folds']}-fold GroupKFold by shape (M, N, K); every number is out of fold.",
             "", f"Rule: {report['rule']}.", "",
             f"Ranking as shipped: cascade {report['cascade']}.", "",
             ] + _tie_lines(report["methods"]["model top-1"]) \
        + methods_lines(report["methods"], report.get("unavailable", {}))
    counts = {s: v["problems"] for s, v in report["methods"]["model top-1"].get("by_m", {}).items()}
    lines += ["", f"Problems per slice: {counts}.", "",
              f"R2 of log time (predicted TFLOP/s, every candidate): "
              f"{report['r2_log_time']:.3f}; of log TFLOP/s: {report['r2_log_tflops']:.3f}.", "",
              "Static leaders per fold: "
              + ", ".join(d["config_id"] for d in report["static_leaders"]["any"])
              + "; Triton only: "
              + ", ".join(d["config_id"] for d in report["static_leaders"]["triton"]) + ".", "",
              "## 20 worst problems (model top-1)", "",
              "| problem | efficiency | pick | best measured |", "|---|---|---|---|"]
    for _, r in worst.iterrows():
        lines.append(f"| {r['problem_key']} | {_pct(r['efficiency'])} | {r['pick']} "
                     f"| {r['best']} |")
    lines += ["", "## Plots", ""] + [f"![{f}]({f})" for f in files]
    if report.get("todo"):
        lines += ["", "## TODO", ""] + [f"- {t} (not run in this pass)" for t in report["todo"]]
    write_page(out, "report", lines)


def _tie_lines(top1: dict) -> list[str]:
    """The model's hit rates counted at the resolution of the measurement (ties)."""
    if "ties_rate" not in top1:
        return []
    return [f"Within the re-timing noise band of the best: the model's top-1 on "
            f"{_pct(top1['ties_rate'])} of the problems (strict top-1 accuracy "
            f"{_pct(top1['top1_accuracy'])}); one of its top 5 on "
            f"{_pct(top1.get('top5_hit_or_tie_rate'))} (strict top-5 hit "
            f"{_pct(top1['top5_hit_rate'])}).", ""]


def _coverage(cov: dict) -> str:
    text = f"scored on {cov['scored']} of {cov['problems']} problems"
    if cov["scored"] == 0:
        text += " (none of its configs was measured for any problem)"
    if "top1_measured" in cov:
        text += f"; its top-1 itself was measured on {_pct(cov['top1_measured'])}"
    if "model_top1_mean_same_problems" in cov:
        text += (f"; model top-1 on the same problems: "
                 f"{_pct(cov['model_top1_mean_same_problems'])} mean")
    return text


def methods_lines(methods: dict, unavailable: dict) -> list[str]:
    """The methods table, the mean (P10) by M slice, and each baseline's coverage."""
    lines = ["| method | mean | median | P10 | min | top-1 acc. | top-5 hit |",
             "|---|---|---|---|---|---|---|"]
    for name, m in methods.items():
        if m is None:
            lines.append(f"| {name} | unavailable | | | | | |")
            continue
        lines.append(f"| {name} | {_pct(m['mean'])} | {_pct(m['median'])} | {_pct(m['p10'])} "
                     f"| {_pct(m['min'])} | {_pct(m.get('top1_accuracy'))} "
                     f"| {_pct(m.get('top5_hit_rate'))} |")
    slices = list(methods["model top-1"].get("by_m", {}))
    lines += ["", "Mean efficiency (P10) by M:", "",
              "| method | " + " | ".join(slices) + " |",
              "|---|" + "---|" * len(slices)]
    for name, m in methods.items():
        by = (m or {}).get("by_m", {})
        cells = [f"{_pct(by[s]['mean'])} ({_pct(by[s]['p10'])})" if s in by else "-"
                 for s in slices]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    model = methods["model top-1"]
    for key, title in (("by_layout", "layout"), ("by_winner_family", "family of the best config")):
        if model.get(key):
            lines += ["", f"Model top-1 by {title}:", "",
                      "| " + title + " | problems | mean | P10 | min | top-1 acc. |",
                      "|---|---|---|---|---|---|"]
            lines += [f"| {v} | {s['problems']} | {_pct(s['mean'])} | {_pct(s['p10'])} "
                      f"| {_pct(s['min'])} | {_pct(s['top1_accuracy'])} |"
                      for v, s in model[key].items()]
    notes = [f"- {name}: {_coverage(m['coverage'])}." for name, m in methods.items()
             if m is not None and "coverage" in m]
    notes += [f"- {name}: unavailable ({why})." for name, why in unavailable.items()]
    if notes:
        lines += ["", "Baseline coverage (a problem none of whose candidates was measured is "
                  "left out of that baseline's numbers):", ""] + notes
    return lines


def write_validation_report(out: Path, report: dict, tables: dict) -> None:
    """validation.md and its efficiency CDF."""
    files: list[str] = []
    efficiency_cdf(out, tables, "Efficiency CDF (held-out validation)", files)
    in_pass = report.get("problems_scored_within_pass", 0)
    head = (f"{report['problems']} held-out problems (every valid config measured by the "
            f"sweeps), {in_pass} of them scored inside their re-timing pass (their contenders "
            f"re-timed together); {report['rows']} rows scored; the model's pick outside the "
            f"pass on {report.get('model_top1_outside_pass', 0)} (scored by its next config "
            "in the pass); its first-ranked config never measured on "
            f"{report.get('model_top1_unmeasured', 0)} (scored by its first measured one)."
            if in_pass else
            f"{report['problems']} held-out problems, {report['rows']} measured rows (every "
            "valid config measured).")
    lines = [f"# Validation of {report['model']}", "", head, "", f"Rule: {report['rule']}.",
             ""]
    lines += _tie_lines(report["methods"]["model top-1"])
    lines += methods_lines(report["methods"], report.get("unavailable", {}))
    lines += crossfit_lines(report.get("crossfit"))
    lines += ceiling_lines(report.get("noise_ceiling"))
    lines += ["", "## Plots", ""] + [f"![{f}]({f})" for f in files]
    write_page(out, "validation", lines)


def ceiling_lines(c: dict | None) -> list[str]:
    """What the usual rule gives a ranker that always picks the fastest config in expectation
    (:func:`tilepick.model.metrics.noise_ceiling`): the measurement's share of the loss."""
    if not c:
        return []
    return ["", "## The usual rule's noise ceiling", "",
            f"On {c['problems']} problems with per-round times, a ranker that always picks the "
            f"config fastest in expectation would score mean {_pct(c['mean'])}, P10 "
            f"{_pct(c['p10'])}, min {_pct(c['min'])} under the usual rule ({c['rule']})."]


def crossfit_lines(cf: dict | None) -> list[str]:
    """The cross-fitted table: each method under the winner's-curse-free rule, beside the
    usual rule on the same problems."""
    if not cf:
        return []
    lines = ["", "## The oracle chosen on other rounds (cross-fitted)", "",
             f"{cf['problems']} problems with per-round times. Rule: {cf['rule']}.", "",
             "| method | mean | median | P10 | min | problems above 100% | usual rule, same "
             "problems: mean / P10 / min |", "|---|---|---|---|---|---|---|"]
    for name, m in cf["methods"].items():
        c, u = m["crossfit"], m.get("usual_rule_same_problems")
        usual = (f"{_pct(u['mean'])} / {_pct(u['p10'])} / {_pct(u['min'])}" if u else "-")
        lines.append(f"| {name} | {_pct(c['mean'])} | {_pct(c['median'])} | {_pct(c['p10'])} "
                     f"| {_pct(c['min'])} | {_pct(m['above_1'])} | {usual} |")
    return lines
