"""The LLM suite rows a retrain changes, and what the H200 measured for its new picks before
(CPU, ~20 s).

Why (session 56): the suite A/B on the GPU could not run (no H200 came in the session), but
the suite runs committed since session 41 (`benchmarks/results/dispatch_*.jsonl.gz`) time
many configs on each suite problem: a retrain whose changed picks were all timed there, in
paired rounds against torch.matmul, has its suite rows measured already. For each problem
whose main-model pick differs between OLD and NEW (as ``analysis_s54/suite_picks.py``),
every committed row whose dispatcher ran NEW's pick on it: torch.matmul's time over that
pick's (median over rounds, > 1 = faster than torch.matmul), per run. A pick of cuBLAS is
matched by any heuristic row whose model picked cuBLAS there (the cuBLASLt entry the
dispatcher then runs is the entry model's choice, the same for both models). Only runs of
session ``--since`` (default 41: the entry model shipped then is today's) or later count, read
from the file names' ``_sNN_``.

    python benchmarks/analysis_s56/changed_picks_history.py OLD_MODEL_DIR NEW_MODEL_DIR [--since 41]
"""

import argparse
import glob
import gzip
import json
import math
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dispatch_llm_suite import suite  # noqa: E402

from tilepick.model import Predictor  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "results"


def runs(since: int) -> dict:
    """problem key -> [(run file, method, choice, torch ms / method ms, pick source)]."""
    out: dict = {}
    for f in sorted(glob.glob(str(RESULTS / "dispatch_*.jsonl.gz"))):
        session = re.search(r"_s(\d+)_", Path(f).name)
        if not session or int(session.group(1)) < since:
            continue
        with gzip.open(f, "rt") as fh:
            for line in fh:
                r = json.loads(line)
                ms, choice = r.get("ms", {}), r.get("choice", {})
                t = ms.get("torch")
                for method, v in ms.items():
                    if method == "torch" or not v or not t or method not in choice:
                        continue
                    out.setdefault(r["problem"], []).append(
                        (Path(f).name, method, choice[method], t / v,
                         r.get("source", {}).get(method)))
    return out


def ratios_of(rows: list, pick: str) -> list[float]:
    """The runs' torch.matmul / pick ratios of ``pick`` on one problem (``rows``: its
    :func:`runs` entries); a cuBLAS pick: the heuristic rows whose model chose cuBLAS (the
    dispatcher then ran cuBLAS or the entry model's cuBLASLt entry)."""
    if pick == "gemm.cublas":
        return [r[3] for r in rows if (r[2] == pick or r[2].startswith("gemm.cublaslt."))
                and r[1].startswith("heuristic") and r[4] in ("model", None)]
    return [r[3] for r in rows if r[2] == pick]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--since", type=int, default=41)
    args = ap.parse_args()
    a, b = Predictor(args.old), Predictor(args.new)
    history = runs(args.since)
    problems = suite(["llama3-8b", "llama3-70b"])
    worst, log_change = [], 0.0
    for p in problems:
        x, y = a.rank(p, 1)[0][0], b.rank(p, 1)[0][0]
        if x == y:
            continue
        rows = history.get(p.key(), [])
        old, new = ratios_of(rows, x), ratios_of(rows, y)
        text = (f"median {statistics.median(new):.3f}, min {min(new):.3f} over "
                f"{len(new)} runs" if new else "never timed")
        if old:
            text += f" (OLD's pick: median {statistics.median(old):.3f}, {len(old)} runs)"
        print(f"{p.key():34s} {x} -> {y}: {text}")
        if new:
            worst.append(min(new))
        if new and old:
            log_change += math.log(statistics.median(new) / statistics.median(old))
    if worst:
        print(f"lowest single run over the changed picks: {min(worst):.3f}")
    print(f"suite geomean, NEW over OLD, from the medians of the changed rows timed for both "
          f"picks over all {len(problems)} rows: {math.exp(log_change / len(problems)):.5f}")


if __name__ == "__main__":
    main()
