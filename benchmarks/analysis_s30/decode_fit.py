"""The LLM suite's decode rows as a fixed cost plus bandwidth (CPU; session 30, BENCHMARKS
"Issue 5's 1.03x").

Over a suite run's rows with M <= 16, a least-squares fit of time = t0 + bytes / BW (bytes:
the weight, A and C once) for torch.matmul and for the faster of the heuristic and hybrid picks;
and how many rows with M >= 77 the picks leave within 1% of torch.matmul.

    python benchmarks/analysis_s30/decode_fit.py benchmarks/results/dispatch_llm_suite_s28_c3c2f39.jsonl.gz
"""

import json
import sys

import numpy as np

from tilepick.data.io import open_text


def main():
    path = sys.argv[1]
    with open_text(path) as f:
        rows = [json.loads(line) for line in f]
    for who in ("torch", "best"):
        mb, us = [], []
        for r in rows:
            m, n, k = (int(v[1:]) for v in r["problem"].split(".")[3:6])
            if m > 16:
                continue
            ms = r["ms"]
            t = ms["torch"] if who == "torch" else min(ms["heuristic"], ms["hybrid"], ms["torch"])
            mb.append((n * k + m * k + m * n) * 2 / 1e6)
            us.append(t * 1e3)
        a = np.vstack([np.ones(len(mb)), mb]).T
        (t0, us_per_mb), *_ = np.linalg.lstsq(a, np.array(us), rcond=None)
        resid = np.max(np.abs(a @ [t0, us_per_mb] / np.array(us) - 1))
        print(f"{who}: {len(mb)} rows, t0 {t0:.1f} us, BW {1 / us_per_mb:.2f} TB/s, "
              f"largest relative residual {resid:.2f}")
    big = [r for r in rows if int(r["problem"].split(".")[3][1:]) >= 77]
    faster = [r["ms"]["torch"] / min(r["ms"]["heuristic"], r["ms"]["hybrid"]) for r in big]
    print(f"M >= 77: {sum(x <= 1.01 for x in faster)} of {len(big)} rows within 1% of "
          f"torch.matmul in both modes; the others {sorted(round(x, 3) for x in faster if x > 1.01)}")


if __name__ == "__main__":
    main()
