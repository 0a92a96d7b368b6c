"""On a GPU machine: does the shipped system perf-db match this machine's environment, and
does the `db` mode serve its winners (correct results, no benchmarking)?

    PYTHONPATH=src python3 benchmarks/systemdb_check.py [--problems 20]
"""

import argparse
import json

import torch

import tilepick
from tilepick.dispatch import Dispatcher, Environment, PerfDb
from tilepick.dispatch.perfdb import default_system_db
from tilepick.hardware import current
from tilepick.problem import GemmProblem


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", type=int, default=20)
    args = ap.parse_args()
    hw = current()
    path = default_system_db(hw.arch)
    env = Environment.current()
    out = {"arch": hw.arch, "system_db": str(path), "env": env.__dict__, "env_key": env.key}
    entries = PerfDb(path, readonly=True).entries() if path else []
    mine = [e for e in entries if e["env_key"] == env.key and e["problem_key"].startswith(
        "gemm.bf16.rr")]
    out.update(entries=len(entries), entries_for_this_env=len(mine))
    d = Dispatcher(mode="db", user_db=None)
    served = []
    for e in sorted(mine, key=lambda e: e["problem_key"])[:args.problems]:
        p = GemmProblem.from_key(e["problem_key"])
        if p.m * p.n * p.k > 2 ** 34 or p.batch != 1:
            continue
        a = torch.randn(p.m, p.k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(p.k, p.n, device="cuda", dtype=torch.bfloat16)
        c = tilepick.matmul(a, b, dispatcher=d)
        ref = (a.float() @ b.float())
        err = float((c.float() - ref).abs().max() / ref.abs().max().clamp_min(1e-6))
        dec = d.cache[p]
        served.append({"problem": p.key(), "db_winner": e["winner"], "ran": dec.config_id,
                       "source": dec.source, "rel_err": round(err, 5)})
    out["served"] = served
    out["stats"] = d.stats
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
