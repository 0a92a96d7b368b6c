"""How many problems does cuBLAS's split-K term dropping touch? (GPU, ~1 minute, no kernels run.)

For every problem of the bf16 datasets and of the LLM suite: the split count cuBLAS runs it
with (cuBLASLt's first heuristic entry, ``splitk_guard.cublas_splits``), how many K terms that
split would leave out by the arithmetic alone (``splitk_guard.dropped_terms``), whether
``gemm.cublas`` refuses it (the arithmetic on an aligned problem: ``cublas_refusal``), and for
the repack family how far K is padded past its 16-byte padding. Counts per dataset folder; the affected problems listed.

    PYTHONPATH=src python3 benchmarks/splitk_guard_scan.py --out F.json
"""

from __future__ import annotations

import argparse
import collections
import glob
import sys
import time
from pathlib import Path

import pandas as pd

from tilepick.data.io import write_json
from tilepick.problem import GemmProblem
from tilepick.provenance import collect
from tilepick.solvers import SOLVERS, repack, splitk_guard

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dispatch_llm_suite import suite  # noqa: E402


def problems(data_glob: str) -> dict[str, list[str]]:
    by = collections.defaultdict(set)
    for f in sorted(glob.glob(data_glob)):
        keys = pd.read_parquet(f, columns=["problem_key"])["problem_key"].unique()
        by[Path(f).parent.name].update(keys)
    by["llm_suite"] = {p.key() for p in suite(["llama3-8b", "llama3-70b"])}
    return {k: sorted(v) for k, v in by.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="data/gemm/bf16/h200/*/*.parquet")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rep = SOLVERS["gemm.cublas_repack"]
    t0 = time.perf_counter()
    summary, affected, unique = {}, [], {}
    for folder, keys in problems(args.data).items():
        n = known = cut = flagged = repack_grown = 0
        for key in keys:
            p = GemmProblem.from_key(key)
            n += 1
            splits = splitk_guard.cublas_splits(p)
            if splits is None:
                continue
            known += 1
            lost = splitk_guard.dropped_terms(p.k, splits)   # the arithmetic alone
            refused = splitk_guard.cublas_refusal(p) is not None   # aligned problems only
            grown = None
            if rep.is_applicable(p):
                natural = repack.padded_problem(p).k
                try:
                    grown = rep.padded_for_cublas(p).k - natural
                except Exception as exc:  # noqa: BLE001 - recorded
                    grown = f"{type(exc).__name__}: {exc}"
            flagged += lost > 0
            cut += refused
            repack_grown += bool(grown)
            if folder != "llm_suite":
                unique[key] = (refused, bool(grown), lost > 0)
            if lost or grown:
                affected.append({"folder": folder, "problem": key, "splits": splits,
                                 "dropped_terms": lost, "aligned": splitk_guard.aligned(p),
                                 "cublas_refused": refused, "repack_k_grown_by": grown})
        summary[folder] = {"problems": n, "split_known": known, "arithmetic_flags": flagged,
                           "cublas_refused": cut, "repack_k_grown": repack_grown}
        print(folder, summary[folder], flush=True)
    total = {"problems": len({k for f, ks in problems(args.data).items() if f != "llm_suite"
                              for k in ks}),
             "split_known": len(unique),
             "arithmetic_flags": sum(f for _, _, f in unique.values()),
             "cublas_refused": sum(c for c, _, _ in unique.values()),
             "repack_k_grown": sum(g for _, g, _ in unique.values())}
    print("datasets", total, "seconds", round(time.perf_counter() - t0, 1))
    if args.out:
        write_json(args.out, {"provenance": collect(), "summary": summary, "datasets": total,
                              "affected": affected})


if __name__ == "__main__":
    main()
