"""After re-measuring `gemm.cublas_repack` with its Triton copies (session 32): how much faster
its rows got, and which validation problems need a new re-timing pass (CPU).

Per folder: the new rows against the dropped ones (the torch copies; read from git at
``--old-commit``, the commit before the drop), same problem and config, time old / new.
With ``--passes OUTDIR``, per validation folder a problem file of the problems to re-time
together: those where the new row is within ``--within`` of the best other config's row, and
those whose latest pass held a repack row that the drop removed (their passes lack a
contender they had).

    python benchmarks/analysis_s32/repack_remeasure.py --old-commit 0fd1138 FOLDER ... \
        [--passes benchmarks/problems --suffix pass_s32]
"""

import argparse
import io as _io
import json
import subprocess
from pathlib import Path

import pandas as pd

from tilepick.data import io
from tilepick.data.schema import RETIME_PREFIX
from tilepick.model.dataset import clean

FAMILY = "gemm.cublas_repack"


def old_rows(folder: str, commit: str) -> pd.DataFrame:
    """The family's rows of ``folder`` as committed at ``commit``."""
    names = subprocess.run(["git", "ls-tree", "--name-only", f"{commit}:{folder}"],
                           capture_output=True, text=True, check=True).stdout.split()
    frames = []
    for name in names:
        if name.endswith(".parquet"):
            blob = subprocess.run(["git", "show", f"{commit}:{folder}/{name}"],
                                  capture_output=True, check=True).stdout
            df = pd.read_parquet(_io.BytesIO(blob))
            frames.append(df[df["family"] == FAMILY])
    return pd.concat(frames, ignore_index=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--old-commit", required=True)
    ap.add_argument("--within", type=float, default=0.85)
    ap.add_argument("--passes", default=None, help="write the pass problem files here")
    ap.add_argument("--suffix", default="pass_s32")
    args = ap.parse_args()
    for folder in args.folders:
        now = io.read_frame(folder)
        new = now[(now.family == FAMILY) & now.valid.fillna(False)]
        old_all = old_rows(folder.rstrip("/"), args.old_commit)
        in_pass = old_all.sweep_id.str.startswith(RETIME_PREFIX)
        old = old_all[old_all.valid.fillna(False) & ~in_pass]
        both = new.merge(old, on="problem_key", suffixes=("", "_old"))
        ratio = both.time_ms_old / both.time_ms
        line = {"folder": folder, "new_rows": len(new), "matched": len(both),
                "old_over_new": {"median": round(float(ratio.median()), 3),
                                 "p10": round(float(ratio.quantile(0.1)), 3),
                                 "p90": round(float(ratio.quantile(0.9)), 3),
                                 "min": round(float(ratio.min()), 3),
                                 "max": round(float(ratio.max()), 3)}}
        if args.passes and "validation" in folder:
            df = clean(now)
            other = df[df.family != FAMILY].groupby("problem_key").tflops.max()
            mine = df[df.family == FAMILY].set_index("problem_key").tflops
            close = set(mine.index[(mine / other.reindex(mine.index)) >= args.within])
            lost = set(old_all.problem_key[in_pass])
            keys = sorted(close | lost)
            first = df.drop_duplicates("problem_key").set_index("problem_key")
            name = Path(folder).name
            name = f"{name}_rr" if name == "validation" else name   # the rr set's folder
            out = Path(args.passes) / f"{name}_bf16_{args.suffix}.jsonl"
            with open(out, "w") as f:
                for k in keys:
                    r = first.loc[k]
                    f.write(json.dumps({"op": "gemm", "m": int(r.m), "n": int(r.n), "k": int(r.k),
                                        "batch": int(r.batch), "dtype": r["dtype"],
                                        "layout": r["layout"]}) + "\n")
            line.update(close=len(close), lost_from_passes=len(lost), pass_problems=len(keys),
                        file=str(out))
        print(json.dumps(line))


if __name__ == "__main__":
    main()
