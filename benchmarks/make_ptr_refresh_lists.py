"""Problem lists and picks files for re-timing the pointer kernels' rows that session 35's
store fix made stale (CPU).

Why: ``kernels.gemm_ptr.store_tile`` (session 35) stores C without the alignment hint that
had made the pointer kernels' epilogue 1.1-4x slower. Where the epilogue dominates (K <= 256
with M x N >= 2^17: "output-bound") their old rows are 2-4x too slow, enough to change the
winner; elsewhere the change is a few percent (``benchmarks/kernel_ab.py --old-vec-c``,
BENCHMARKS "Session 35"). For every dataset folder given, the output-bound problems get a
problem list and a picks file (`.picks.json.gz`) naming every ``gemm.ptr`` and ``gemm.splitk_fused`` config
measured for them, for ``tilepick data retime --problems ... --picks ...``: a pass re-times
those configs (with the problem's near contenders and cuBLAS) under today's kernels, and its
rows win over the old ones wherever the loaders merge repeats.

    python benchmarks/make_ptr_refresh_lists.py FOLDER... [--out-dir benchmarks/problems/ptr_refresh]
    python benchmarks/make_ptr_refresh_lists.py --big FOLDER... --out-dir benchmarks/problems/ptr_refresh_big
    python benchmarks/make_ptr_refresh_lists.py --mid FOLDER... --out-dir benchmarks/problems/ptr_refresh_mid

``--big`` (session 36): the second place the fix mattered. ``ptr_store_probe.py`` read the
unhinted store 0.76-0.93x the hinted one's time for tiles of >= 8,192 outputs on 1024^3 and
4096^3 problems (0.95-0.99 for 16-row tiles), so on problems with M x N >= 2^20 the old rows of
those big tiles understate them by up to ~24%: where such a config was within 0.8 of the
problem's best, it may win today. Those configs (not output-bound problems, already done) are
the picks; the lists hold the problems that have any.

``--near X`` (session 36, for the campaign after it): every config of the two families that is
within X of its problem's best and has no row measured since the fix (``FIXED_SINCE``, the fix
commit's date), on any problem: what is left stale after the two passes (at X = 0.9: 62,533
configs of 7,068 problems, mostly small and decode problems, where the A/B read the fix at
0.98-0.99x the old time).

``--mid`` (session 48): mid-sized problems between the two passes (2^16 <= M x N < 2^20, 256 <
K <= 4096), whose 16-row pointer tiles were never re-timed since the fix. Tried because rr 511 x
512 x 513 (validation, re-timed since the fix) runs `gemm.ptr.m16n64k128.g8.w4.s4` in 10.0 us
against cuBLAS's 16.3, while its pre-fix row on the training problem rr 511 x 511 x 511 read
24.0 us. The pass over train_rr, train_fused_negative and train_splitk_fused found the rows were
not stale (`python benchmarks/pass_shift.py cac8115`: `gemm.ptr` new / old median 0.99-1.00;
511^3 re-timed 23.5 us): the difference is N's alignment (512 against 511;
`benchmarks/analysis_s48/sixteen_row_alignment.py`). The picks: the 16-row `gemm.ptr` and
`gemm.splitk_fused` configs within ``MID_NEAR`` of the best with no row since the fix.
"""

import argparse
from pathlib import Path

import pandas as pd

from tilepick.bench.retime import current_view, save_picks
from tilepick.bench.shapes import write_problem_file
from tilepick.data.io import read_frame
from tilepick.problem import GemmProblem

FAMILIES = ("gemm.ptr", "gemm.splitk_fused")
MAX_K = 256
MIN_OUTPUT = 2 ** 17
BIG_TILE = 8192          # block_m x block_n
BIG_OUTPUT = 2 ** 20     # M x N
NEAR = 0.8               # of the problem's best TFLOP/s, in the old rows
FIXED_SINCE = "2026-11-26T23:55:13Z"   # commit 4b68a85 (the unhinted store)
MID_OUTPUT = 2 ** 16     # --mid: M x N from here to BIG_OUTPUT
MID_MAX_K = 4096
MID_NEAR = 0.4           # 511^3's 16-row tile read 0.64 of that problem's best


def output_bound(frame: pd.DataFrame) -> pd.Series:
    return (frame["k"] <= MAX_K) & (frame["m"] * frame["n"] >= MIN_OUTPUT)


def lists_for(folder: Path) -> dict[str, list[str]]:
    """{problem key: the families' measured config ids} of the folder's output-bound problems."""
    parts = [read_frame(f) for f in sorted(folder.glob("*.parquet"))]
    if not parts:
        return {}
    f = pd.concat(parts, ignore_index=True)
    f = f[output_bound(f) & f["family"].isin(FAMILIES) & f["valid"].fillna(False)]
    return {k: sorted(g["config_id"].unique()) for k, g in f.groupby("problem_key")}


def near_best_lists(folder: Path, near: float, select) -> dict[str, list[str]]:
    """{problem key: configs of the families within ``near`` of its best (in the folder's
    merged view) that ``select(view, raw rows)`` also keeps}."""
    from tilepick.model.dataset import read_raw

    files = sorted(folder.glob("*.parquet"))
    if not files:
        return {}
    v = current_view(files)
    best = v.groupby("problem_key")["time_ms"].transform("min")
    pick = (v["family"].isin(FAMILIES) & (best / v["time_ms"] >= near)
            & select(v, lambda: read_raw(files)))
    return {k: sorted(g["config_id"].unique()) for k, g in v[pick].groupby("problem_key")}


def big_tiles(v: pd.DataFrame, raw) -> pd.Series:
    """``--big``: tiles of >= BIG_TILE outputs on outputs of >= BIG_OUTPUT, not output-bound."""
    return (~output_bound(v) & (v["block_m"] * v["block_n"] >= BIG_TILE)
            & (v["m"] * v["n"] >= BIG_OUTPUT))


def mid_sixteen_rows(v: pd.DataFrame, raw) -> pd.Series:
    """``--mid``: 16-row tiles on mid-sized problems, not re-timed since the fix."""
    mn = v["m"] * v["n"]
    return (~output_bound(v) & (mn >= MID_OUTPUT) & (mn < BIG_OUTPUT) & (v["k"] <= MID_MAX_K)
            & (v["block_m"] == 16) & not_retimed_since_fix(v, raw))


def not_retimed_since_fix(v: pd.DataFrame, raw) -> pd.Series:
    """``--near``: no row of the (problem, config) measured since the fix (FIXED_SINCE)."""
    rows = raw()
    fresh = rows.loc[rows["date"].astype(str) >= FIXED_SINCE, ["problem_key", "config_id"]]
    fresh = set(zip(fresh["problem_key"], fresh["config_id"]))
    return pd.Series([(k, c) not in fresh for k, c in zip(v["problem_key"], v["config_id"])],
                     index=v.index)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--out-dir", default="benchmarks/problems/ptr_refresh")
    ap.add_argument("--big", action="store_true", help="big tiles near the best (see above)")
    ap.add_argument("--mid", action="store_true", help="16-row tiles on mid-sized problems")
    ap.add_argument("--near", type=float, default=None,
                    help="stale configs within this fraction of the best (see above)")
    args = ap.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for folder in map(Path, args.folders):
        if args.mid:
            picks = near_best_lists(folder, MID_NEAR, mid_sixteen_rows)
        elif args.near is not None:
            picks = near_best_lists(folder, args.near, not_retimed_since_fix)
        elif args.big:
            picks = near_best_lists(folder, NEAR, big_tiles)
        else:
            picks = lists_for(folder)
        if not picks:
            continue
        name = "_".join(folder.parts[-3:])   # dtype_arch_folder
        write_problem_file([GemmProblem.from_key(k) for k in picks], out / f"{name}.jsonl")
        save_picks(picks, out / f"{name}.picks.json.gz")   # gzip'd: the upload limit
        print(f"{folder}: {len(picks)} problems, {sum(map(len, picks.values()))} configs")


if __name__ == "__main__":
    main()
