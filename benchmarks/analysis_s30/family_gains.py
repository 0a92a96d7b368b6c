"""A family's best over the best other contender, per problem of a re-timing pass (CPU;
session 30: the transposed GEMVs on fp16 and fp8 training problems, PROVENANCE "Session 30").

    python benchmarks/analysis_s30/family_gains.py data/gemm/fp16/h200/train_gemv_t/retime-001.parquet gemm.gemv_t
"""

import sys

import numpy as np

from tilepick.data.io import read_frame


def main():
    path, family = sys.argv[1], sys.argv[2]
    d = read_frame(path)
    d = d[d.valid]
    med = d.groupby(["problem_key", "family", "config_id"]).time_ms.median().reset_index()
    r = np.array([x[x.family != family].time_ms.min() / x[x.family == family].time_ms.min()
                  for _, x in med.groupby("problem_key")])
    print(f"{family}: {len(r)} problems, median {np.median(r):.3f}, faster by > 5% on "
          f"{100 * (r > 1.05).mean():.0f}%, max {r.max():.2f}")


if __name__ == "__main__":
    main()
