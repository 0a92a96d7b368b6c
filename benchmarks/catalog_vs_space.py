"""One model, two catalogs: rank the configs its training data measured ("trained") or every
config of the declared spaces ("space"), on the held-out validation set and on random shapes.

    python benchmarks/catalog_vs_space.py [--model DIR] [--data DIR] [--stage2-top 8 64]
        [--catalogs trained space] [--layouts rr rc] [--fidelity 300] [--json]

Validation: the rules of ``tilepick validate`` (pick = best-ranked *measured* candidate; a tie
= the pick within the re-timing spread of the best), for each catalog and stage-2 width.
``unmeasured_top1``: problems whose overall top-1 was not measured (the validation data lacks
the pointer and split-K families, see the data PROVENANCE): the rule skips it.
Validation problems are scored inside their latest re-timing pass, as ``validate`` does.
Fidelity (no measurements needed): over random shapes of each of ``--layouts``, how often the cascade's pick
is the full model's (every tree over every candidate), and the full model's calibrated
fraction of its best for the cascade's pick.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from predict_latency import shapes  # noqa: E402

from tilepick.model import Predictor, metrics  # noqa: E402
from tilepick.model.dataset import load  # noqa: E402
from tilepick.model.ranking import CascadeSettings  # noqa: E402
from tilepick.model.validate import model_scores  # noqa: E402
from tilepick.problem import GemmProblem  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def predictor(model, catalog: str, stage2_top: int) -> Predictor:
    base = Predictor(model)
    cascade = CascadeSettings(**{**base.cascade.to_dict(), "stage2_top": stage2_top})
    return Predictor(model, catalog=catalog, cascade=cascade)


def validation(pred: Predictor, ds) -> dict:
    scores = model_scores(pred, ds)
    table = metrics.per_problem(ds.problem_index, ds.tflops, scores)
    s = metrics.summarize(table["efficiency"].to_numpy(), table["top1"].to_numpy(),
                          table["best_rank"].to_numpy())
    unmeasured = 0
    for i, key in enumerate(ds.problem_keys):
        measured = set(ds.config_ids[ds.starts[i]:ds.starts[i] + ds.sizes[i]])
        unmeasured += pred.rank(GemmProblem.from_key(key), top=1)[0][0] not in measured
    return {"mean": s["mean"], "p10": s["p10"], "min": s["min"],
            "top1_accuracy": s["top1_accuracy"], "top5_hit_rate": s["top5_hit_rate"],
            "top4_benchmarked_mean": float(table["top4_efficiency"].mean()),
            "ties_rate": metrics.tie_rates(ds, scores)["ties_rate"],
            "unmeasured_top1": unmeasured}


def fidelity(pred: Predictor, problems) -> dict:
    agree, rel = [], []
    for q in problems:
        table = pred._table(q)
        idx = np.flatnonzero(table.valid_mask(q))
        x = table.features(q, idx)
        full = pred.model.predict(x, 0, 0)
        s1 = pred.model.predict(x, 0, pred.cascade.stage1_trees)
        top = np.argsort(-s1, kind="stable")[:pred.cascade.stage2_top]
        pick, best = top[np.argmax(full[top])], int(np.argmax(full))
        agree.append(pick == best)
        cal = pred.cal_full(full - full[best])
        rel.append(cal[pick] / cal[best])
    return {"problems": len(problems), "agree_with_full_model": float(np.mean(agree)),
            "full_model_rel_mean": float(np.mean(rel)),
            "full_model_rel_p10": float(np.percentile(rel, 10)),
            "full_model_rel_min": float(np.min(rel))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(ROOT / "models" / "gemm_bf16_h200"))
    ap.add_argument("--data", default=str(ROOT / "data" / "gemm" / "bf16" / "h200" /
                                          "validation"))
    ap.add_argument("--stage2-top", type=int, nargs="+", default=[8, 64])
    ap.add_argument("--catalogs", nargs="+", default=["trained", "space"])
    ap.add_argument("--layouts", nargs="+", default=["rr", "rc"],
                    help="layouts of the random shapes for fidelity")
    ap.add_argument("--fidelity", type=int, default=300,
                    help="random shapes per layout; 0 skips")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    base = Predictor(args.model)
    ds = load([args.data], base.dtype, base.arch, within_pass=True)
    problems = [GemmProblem(q.m, q.n, q.k, dtype=base.dtype, layout=lay)
                for i, lay in enumerate(args.layouts) for q in shapes(args.fidelity, i + 1)]
    out = []
    for catalog in args.catalogs:
        for s2 in args.stage2_top:
            pred = predictor(args.model, catalog, s2)
            row = {"catalog": catalog, "stage2_top": s2, "validation": validation(pred, ds)}
            if args.fidelity:
                row["fidelity"] = fidelity(pred, problems)
            out.append(row)
    if args.json:
        print(json.dumps({"model": args.model, "data": args.data, "rows": out}, indent=1))
        return
    print(f"model {args.model}, validation {args.data} ({ds.n_problems} problems)")
    print("| catalog | stage2_top | mean | P10 | min | top-1 acc. | top-5 hit | top-4 bench. "
          "| ties | unmeasured top-1 | cascade = full model |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in out:
        v, f = r["validation"], r.get("fidelity", {})
        print(f"| {r['catalog']} | {r['stage2_top']} | {v['mean']:.2%} | {v['p10']:.2%} | "
              f"{v['min']:.2%} | {v['top1_accuracy']:.0%} | {v['top5_hit_rate']:.0%} | "
              f"{v['top4_benchmarked_mean']:.2%} | {v['ties_rate']:.0%} | "
              f"{v['unmeasured_top1']} | "
              f"{f.get('agree_with_full_model', float('nan')):.1%} |")


if __name__ == "__main__":
    main()
