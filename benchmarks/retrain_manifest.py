"""Re-train a shipped model on exactly the files its manifest lists, with its options, and the
held-out weight shapes left out (session 33: F6 from F5; the same run on fp8's model read
-1.9 points and was not shipped).

Why a script: the fp16 and fp8 recipes are "session N's files", not folders (their folders have
grown since), so `tilepick train --data FOLDER ...` would not rebuild them. ``--add FILE ...``
trains on more files with everything else the same (session 36: the re-timed pointer-kernel
rows, each added file inside a folder the manifest already reads; others are refused, as they
would change the recipe, not refresh it; ``--new-folder`` lets them in, for a deliberate
extension of the recipe by a new dataset folder: session 46's `train_low_flop`; an added file
must hold rows of the recipe's dtypes measured on its GPU, session 60). ``--label-times`` and
``--seed-ensemble`` vary that one option; ``--rounds`` and ``--param KEY=VALUE`` (a LightGBM
parameter, repeatable) the booster's settings (session 45 re-checked them on today's data:
OUT_DIR/cv_metrics.json has the out-of-fold figures, `benchmarks/paired_validation.py` the
validation ones); ``--gate-l2``, ``--gate-splits``, ``--gate-seeds`` and ``--gate-label-top``
the vendor gate's L2, how many fold splits its labels average over (session 62: the labels at
M = 1, BENCHMARKS.md), how many seeds' fits it averages (session 63) and how many of the
ranker's first picks its label takes the fastest of (session 64).

    python benchmarks/retrain_manifest.py MODEL_DIR OUT_DIR [--no-hold-out] [--add F ...]
        [--new-folder]
        [--label-times retimed|aligned|screen] [--seed-ensemble N] [--rounds N]
        [--param KEY=VALUE ...] [--gate-l2 X] [--gate-splits N] [--gate-seeds N]
        [--gate-label-top N]
"""

import argparse
import dataclasses
import json
from pathlib import Path

from tilepick.data.io import read_table
from tilepick.model.artifacts import read_json
from tilepick.model.dataset import LABEL_TIMES, measured_pairs
from tilepick.model.evaluate import recipe_options
from tilepick.model.train import train


def with_added(files: list[str], added: list[str], new_folders: bool = False) -> list[str]:
    """The manifest's files and the added ones (new files of folders it reads, or of any
    folder with ``new_folders``; once each)."""
    folders = {str(Path(f).parent) for f in files}
    out = list(files)
    for f in added:
        if not new_folders and str(Path(f).parent) not in folders:
            raise SystemExit(f"{f}: not in a folder the model's manifest reads ({sorted(folders)})")
        if f not in out:
            out.append(f)
    return out


def check_added(added: list[str], dtypes: list[str], arch: str) -> None:
    """Refuse an added file that holds no rows of the recipe's dtypes measured on its GPU.

    Why: the loader keeps the rows of one GPU and the served or pooled dtypes, and it fails only
    when no file at all has any. So an added file of another GPU dropped out silently. Session
    60 retrained on session 59's H100 probe rows and got the old data back, with no warning."""
    for f in added:
        pairs = measured_pairs(read_table(f).select(["dtype", "gpu_name"]).to_pandas())
        if not any(d in dtypes and a == arch for d, a in pairs):
            raise SystemExit(f"{f}: no rows of {'/'.join(dtypes)} on {arch} "
                             f"(it holds dtype/arch {pairs[:6]})")


def parse_params(specs: list[str]) -> dict:
    """``["learning_rate=0.1", "objective=rank_xendcg"]`` -> {"learning_rate": 0.1, ...}."""
    out = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not key or not sep:
            raise SystemExit(f"--param wants KEY=VALUE, got {spec!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def with_overrides(opts, args):
    """The recipe's options with what the command line varies (an option left unset keeps the
    recipe's value)."""
    changes = {"hold_out": not args.no_hold_out}
    for field, value in (("label_times", args.label_times), ("seed_ensemble", args.seed_ensemble),
                         ("rounds", args.rounds), ("gate_lambda_l2", args.gate_l2),
                         ("gate_splits", args.gate_splits), ("gate_seeds", args.gate_seeds),
                         ("gate_label_top", args.gate_label_top)):
        if value is not None:
            changes[field] = value
    if args.param:
        changes["params"] = {**opts.params, **parse_params(args.param)}
    return dataclasses.replace(opts, **changes)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--no-hold-out", action="store_true")
    ap.add_argument("--add", nargs="*", default=[], help="more parquet files to train on")
    ap.add_argument("--new-folder", action="store_true",
                    help="--add may name files outside the manifest's folders (a new recipe)")
    ap.add_argument("--label-times", choices=LABEL_TIMES, default=None)
    ap.add_argument("--seed-ensemble", type=int, default=None, help="runs in the ensemble")
    ap.add_argument("--rounds", type=int, default=None, help="boosting rounds")
    ap.add_argument("--gate-l2", type=float, default=None, help="the vendor gate's lambda_l2")
    ap.add_argument("--gate-splits", type=int, default=None,
                    help="fold splits the vendor gate's labels average over")
    ap.add_argument("--gate-seeds", type=int, default=None,
                    help="the vendor gate: the mean of this many fits (seeds seed, seed+1, ...)")
    ap.add_argument("--gate-label-top", type=int, default=None,
                    help="the vendor gate's labels: cuBLAS against the fastest measured of the "
                         "ranker's first N Triton picks")
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="a LightGBM parameter (the value read as JSON where it parses)")
    return ap


def main():
    args = parser().parse_args()
    manifest = read_json(Path(args.model) / "manifest.json")
    opts = with_overrides(recipe_options(args.model), args)
    files = with_added([d["path"] for d in manifest["data"]], args.add, args.new_folder)
    check_added(args.add, [manifest["dtype"], *(manifest.get("pooled_dtypes") or [])],
                manifest["arch"])
    train(files, manifest["dtype"], manifest["arch"], args.out, opts, log=print)


if __name__ == "__main__":
    main()
