"""Would better gate labels at M = 1 move the suite's rr decode rows to `gemm.gemv_n_splitk`?
A pre-check of session 63's device call, on the data there is (CPU, ~5 min).

Why: the call measures the family's whole space on the rr M = 1 training problems so that the
out-of-fold ranker's first Triton pick there, whose time against cuBLAS is the vendor gate's
label, is the family's real best instead of one of 32 sampled configs. The labels that call can
give lie between two that can be computed now: the out-of-fold pick's (what the recipe fits)
and the best measured Triton config's (a ranker that knew the times; with 162 configs measured
the best can only be faster). This fits the gate on every training problem with each label, as
training fits the shipped one, and with labels from the best of the ranker's first k measured
picks in between, and prints each gate's raw score (> 0: cuBLAS first) on the eight decode rows,
beside the family's re-timed speed over cuBLAS there (session 61's suite probe). If even the
best-measured labels keep cuBLAS where the family is 4-10% faster, the call's data alone will
not move those rows.

    python benchmarks/analysis_s64/decode_gate_labels.py [--model work/s61/m61] [--k 1,3,5]
"""

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis_s63"))
from analysis_s59.gemv_n_suite import best_against_cublas  # noqa: E402
from analysis_s61.decode_gate import decode_rows  # noqa: E402
from gate_dead_zone import OutOfFold  # noqa: E402

from tilepick.model import Predictor, gate  # noqa: E402

PROBE = "benchmarks/results/gemv_n_s61_h200/gemvn_suite.parquet"


def probe_times(df: pd.DataFrame) -> dict[str, dict[str, tuple[float, bool]]]:
    """The suite probe's rows ``df``: per row, each config's time (ms) and whether re-timed."""
    df = df[df.valid]
    return {key: {c: (float(t), bool(r)) for c, t, r in zip(g.config_id, g.time_ms, g.retimed)}
            for key, g in df.groupby("problem_key")}


def family_over_cublas(df: pd.DataFrame) -> dict[str, float]:
    """The suite probe's rows ``df``: cuBLAS's re-timed median over the family's best, per
    row."""
    return {key: cublas / best.time_ms for key, cublas, best in best_against_cublas(df)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="work/s61/m61")
    ap.add_argument("--k", default="1,3,5")
    ap.add_argument("--oof", action="store_true",
                    help="also score each label's gate out of fold (the ranker's top-1 as the "
                         "dispatcher runs it: mean, P10, mean at M = 1)")
    args = ap.parse_args()
    oof = OutOfFold(args.model)
    sc = oof.sc
    # each label: the ranking its picks come from and how many of them (the best measured
    # config's: the measured speeds as the ranking, its first)
    rankings = {f"top-{k}": (oof.res.keys, int(k)) for k in args.k.split(",")}
    rankings["best"] = (sc.tflops, 1)
    m1rr = oof.m1 & (sc.frame["layout"].to_numpy()[sc.starts] == "rr")
    gates = {}
    for name, (keys, top) in rankings.items():
        y, has = gate.problem_outcomes(sc.problem_index, sc.config_ids, sc.tflops, keys, top)
        print(f"{name:6} labels: cuBLAS on {(y[has & m1rr] > 0).mean():.2f} of the "
              f"{int((has & m1rr).sum())} rr M = 1 problems, {(y[has] > 0).mean():.2f} of all "
              f"{int(has.sum())}")
        gates[name] = gate.fit(oof.x[has], y[has], 0, params=oof.params)
        if args.oof:
            s = oof.gated(oof.raw(0, keys, top))
            print(f"       out of fold, gated: mean {s[0]:.4f} p10 {s[1]:.4f} M=1 {s[2]:.4f}")
    predictor = Predictor(args.model)
    probe = pd.read_parquet(PROBE)   # session 61's suite probe
    fam, times = family_over_cublas(probe), probe_times(probe)
    print(f"\n{'rr decode row':34} {'family/cuBLAS':>13} " + " ".join(f"{n:>7}" for n in gates)
          + "  (gate raw; > 0: cuBLAS first)  the ranker's first Triton pick: its probe time "
          "over cuBLAS's (r: both re-timed; - : not in the probe)")
    for p in decode_rows():
        table = predictor._table(p)
        x = gate.problem_matrix(table.features(p, table.valid_index(p)[:1]))
        raws = [float(g.predict(x, raw_score=True)[0]) for g in gates.values()]
        pick = next(c for c, _, _ in predictor.rank(p) if c != gate.VENDOR)
        row = times.get(p.key(), {})
        if pick in row and gate.VENDOR in row:
            (t, r), (tc, rc) = row[pick], row[gate.VENDOR]
            said = f"{tc / t:.3f}{' r' if r and rc else ''}"
        else:
            said = "-"
        print(f"{p.key():34} {fam.get(p.key(), float('nan')):13.3f} "
              + " ".join(f"{r:7.2f}" for r in raws) + f"  {pick.removeprefix('gemm.')} {said}")


if __name__ == "__main__":
    main()
