"""For each LLM-suite row where the heuristic picked a Triton config: the vendor gate's raw
score, the pick's predicted TFLOP/s over cuBLAS's, and the measured speed-up over torch.matmul.

    python benchmarks/analysis_s34/suite_gate_scores.py ROWS.jsonl[.gz] [--model DIR]

Why: two suite rows on a held-out weight (rr 1 and 16 x 8192 x 8192) run ~4% under cuBLAS in
heuristic mode. A dispatcher-side guard would need a signal that separates them from the
rows where the Triton pick wins; this lists the candidates (session 34: none does).
"""
from __future__ import annotations

import argparse
import json


from tilepick.config import VENDOR_FAMILIES
from tilepick.data.io import open_text
from tilepick.model.predictor import Predictor
from tilepick.problem import GemmProblem


def gate_score(pred: Predictor, problem: GemmProblem) -> float | None:
    """The gate's raw score (> 0: cuBLAS beats the first Triton candidate)."""
    table = pred._table(problem)
    if pred._vendor_position(problem, table, table.valid_index(problem)) < 0:
        return None
    return pred.gate_raw(problem)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows")
    ap.add_argument("--model", default=None)
    a = ap.parse_args()
    with open_text(a.rows) as fh:
        rows = [json.loads(line) for line in fh]
    pred = Predictor(a.model) if a.model else Predictor.load(arch="h200", dtype="bf16")
    out = []
    for r in rows:
        p = GemmProblem.from_key(r["problem"])
        ranked = pred.rank(p)
        if ranked[0][0] in VENDOR_FAMILIES:
            continue
        cublas = next((t for cid, t, _ in ranked if cid == VENDOR_FAMILIES[0]), None)
        out.append((gate_score(pred, p), r["problem"], ranked[0][0],
                    ranked[0][1] / cublas if cublas else None,
                    r["ms"]["torch"] / r["ms"]["heuristic"]))
    print("gate score | problem | pick | predicted pick / cuBLAS | measured vs torch.matmul")
    for g, key, pick, ratio, speed in sorted(out, key=lambda o: (o[0] is None, o[0])):
        print(f"{g if g is None else round(g, 2)} | {key} | {pick} | "
              f"{ratio if ratio is None else round(ratio, 3)} | {speed:.3f}")


if __name__ == "__main__":
    main()
