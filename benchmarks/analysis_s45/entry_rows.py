"""Session 45's CPU analyses behind BENCHMARKS "Session 45" (no GPU; the committed results).

1. ``suite``: over the LLM suite runs of the shipped models (sessions 41-45), the heuristic's
   speed-up per run, and each row where it runs a cuBLASLt entry beside the suite probe's label
   of that entry (session 38): how far the suite's context moves an entry's edge.
2. ``gap``: the shipped entry model on the held-out probes at larger score gaps.
3. ``neighbours``: the pointer kernels' best time by BLOCK_K on the bf16 recipe's rr training
   problems with M <= 16 and K 128-320, the neighbours of the rr validation minimum.

    python benchmarks/analysis_s45/entry_rows.py [suite|gap|neighbours ...]
"""

import gzip
import json
import statistics
import sys
from collections import defaultdict

import numpy as np

RESULTS = "benchmarks/results"
SUITE_RUNS = ("s41_suite15_e1a8da6", "s41_suite15b_e1a8da6", "s42_suite15_388f407",
              "s42_suite15b_388f407", "s43_suite15_a446d2a", "s43_suite15b_a446d2a",
              "s44_suite15_3b663da", "s45_lt45ab_73ae8b0")
SUITE_PROBE = f"{RESULTS}/cublaslt_probe_suite_h200_b12542b.json.gz"
HELD_OUT = ("validation_rr_h200_e2492d3", "suite_h200_b12542b", "fp16_heldout_h200_a2593f7")


def suite():
    ratios, picks = defaultdict(list), {}
    paired = []
    for run in SUITE_RUNS:
        summary = json.load(open(f"{RESULTS}/dispatch_llm_suite_{run}.json"))
        paired.append(summary["paired_geomean_speedup_vs_torch"]["heuristic"])
        print(f"{run}: heuristic paired {paired[-1]:.4f}, rows below 0.97x "
              f"{summary['paired_rows_below_0.97']['heuristic']}")
        for line in gzip.open(f"{RESULTS}/dispatch_llm_suite_{run}.jsonl.gz", "rt"):
            r = json.loads(line)
            ratios[r["problem"]].append(r["ms"]["torch"] / r["ms"]["heuristic"])
            picks[r["problem"]] = r["choice"]["heuristic"]
    print(f"{len(paired)} runs: {min(paired):.4f}-{max(paired):.4f}, mean "
          f"{statistics.mean(paired):.4f}, at or above 1.03: {sum(p >= 1.03 for p in paired)}")
    labels = {}
    for r in json.load(gzip.open(SUITE_PROBE))["rows"]:
        dims, layout = r["spec"].split(":")
        m, n, k = dims.split("x")
        lab = {c["candidate"]: c["over_cublas"] for c in r["screen"]}
        lab.update({c["candidate"]: c["over_cublas"] for c in r["final"]})
        labels[f"gemm.bf16.{layout}.m{m}.n{n}.k{k}"] = lab
    probe, measured = [], []
    for problem, pick in sorted(picks.items(), key=lambda kv: np.mean(ratios[kv[0]])):
        if "cublaslt" not in pick:
            continue
        label = labels[problem].get("lt." + pick.split("gemm.cublaslt.")[1])
        if label is None:
            continue
        probe.append(label)
        measured.append(float(np.mean(ratios[problem])))
        if len(probe) <= 3:
            print(f"  {problem} {pick}: suite {measured[-1]:.3f} "
                  f"({min(ratios[problem]):.3f}-{max(ratios[problem]):.3f}), probe {label:.3f}")
    d = np.array(measured) - np.array(probe)
    print(f"{len(d)} entry rows: suite - probe label median {np.median(d):+.4f}, "
          f"correlation {np.corrcoef(probe, measured)[0, 1]:.2f}")


def gap():
    from tilepick.features import lt_entries
    from tilepick.model import lt_ranker

    ranker = lt_ranker.LtRanker.load("models/cublaslt_bf16_h200")
    for name in HELD_OUT:
        df = lt_ranker.probe_frame(f"{RESULTS}/cublaslt_probe_{name}.json.gz")
        scores = ranker.booster.predict(lt_entries.compute(df))
        cells = []
        for delta in (0.1, 0.2, 0.3, 0.5, 0.8):
            s = lt_ranker.summary(lt_ranker.choices(df, scores, delta))
            cells.append(f"{delta}: {s['chosen_geomean']:.4f} ({s['chosen_below_0.97']})")
        print(name, " | ".join(cells))


def neighbours():
    import pandas as pd
    import pyarrow.parquet as pq

    manifest = json.load(open("models/gemm_bf16_h200/manifest.json"))
    cols = ["problem_key", "m", "k", "layout", "dtype", "config_id", "block_k", "valid",
            "time_ms"]
    frames = []
    for d in manifest["data"]:
        t = pq.read_table(d["path"], columns=cols).to_pandas()
        frames.append(t[(t.m <= 16) & t.k.between(128, 320) & (t.layout == "rr")
                        & (t.dtype == "bf16") & t.valid])
    df = pd.concat(frames).sort_values("time_ms").drop_duplicates(["problem_key", "config_id"])
    print(df.problem_key.nunique(), "problems")
    for key, g in df.groupby("problem_key"):
        ptr = g[g.config_id.str.startswith("gemm.ptr.")]
        by_bk = {int(b): round(t * 1000, 1) for b, t in ptr.groupby("block_k").time_ms.min().items()}
        print(f"{key}: best {g.iloc[0].config_id} {g.iloc[0].time_ms * 1000:.1f} us; "
              f"pointer best by BLOCK_K (us) {by_bk}")


if __name__ == "__main__":
    parts = sys.argv[1:] or ["suite", "gap", "neighbours"]
    for part in parts:
        print(f"== {part}")
        {"suite": suite, "gap": gap, "neighbours": neighbours}[part]()
