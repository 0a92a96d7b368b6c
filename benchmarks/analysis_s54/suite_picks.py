"""The LLM suite problems whose main-model pick differs between two models (CPU, ~10 s).

Why: a suite A/B on the GPU costs ~4 minutes of device time; the main model's top-1 on each
suite problem is a CPU question, so the rows a retrain changes can be listed first and timed
alone (``dispatch_llm_suite.py --shapes``). cuBLASLt entries are chosen on the GPU after this
pick, so a row whose pick stays cuBLAS may still change there.

    python benchmarks/analysis_s54/suite_picks.py OLD_MODEL_DIR NEW_MODEL_DIR [--shapes]

``--shapes`` prints only the changed rows' ``MxNxK`` list, comma-separated (each once, whatever
its layouts), for ``dispatch_llm_suite.py --shapes`` in the same device call that trained the
new model (session 63's ``benchmarks/gemv_n_full_call.sh``); nothing when no pick differs.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dispatch_llm_suite import suite  # noqa: E402

from tilepick.model import Predictor  # noqa: E402


def changed_picks(old: str, new: str, problems) -> list[tuple]:
    """(problem, old pick, new pick) for each problem whose top-1 differs."""
    a, b = Predictor(old), Predictor(new)
    picks = [(p, a.rank(p, 1)[0][0], b.rank(p, 1)[0][0]) for p in problems]
    return [c for c in picks if c[1] != c[2]]


def shapes_arg(problems) -> str:
    """``--shapes`` of dispatch_llm_suite.py: each problem's MxNxK once, in first-seen order."""
    return ",".join(dict.fromkeys(f"{p.m}x{p.n}x{p.k}" for p in problems))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--shapes", action="store_true",
                    help="print only the changed rows as dispatch_llm_suite.py's --shapes")
    args = ap.parse_args(argv)
    problems = suite(["llama3-8b", "llama3-70b"])
    changed = changed_picks(args.old, args.new, problems)
    if args.shapes:
        print(shapes_arg(p for p, _, _ in changed))
        return
    for p, x, y in changed:
        print(f"{p.key()}  {x} -> {y}")
    print(f"{len(changed)} of {len(problems)} picks differ")


if __name__ == "__main__":
    main()
