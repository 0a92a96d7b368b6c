"""The LLM suite problems whose main-model pick differs between two models (CPU, ~10 s).

Why: a suite A/B on the GPU costs ~4 minutes of device time; the main model's top-1 on each
suite problem is a CPU question, so the rows a retrain changes can be listed first and timed
alone (``dispatch_llm_suite.py --shapes``). cuBLASLt entries are chosen on the GPU after this
pick, so a row whose pick stays cuBLAS may still change there.

    python benchmarks/analysis_s54/suite_picks.py OLD_MODEL_DIR NEW_MODEL_DIR
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from dispatch_llm_suite import suite  # noqa: E402

from tilepick.model import Predictor  # noqa: E402


def main(old: str, new: str):
    a, b = Predictor(old), Predictor(new)
    problems = suite(["llama3-8b", "llama3-70b"])
    changed = [(p, a.rank(p, 1)[0][0], b.rank(p, 1)[0][0]) for p in problems]
    changed = [c for c in changed if c[1] != c[2]]
    for p, x, y in changed:
        print(f"{p.key()}  {x} -> {y}")
    print(f"{len(changed)} of {len(problems)} picks differ")


if __name__ == "__main__":
    main(*sys.argv[1:3])
