"""Re-train a shipped model on exactly the files its manifest lists, with its options, and the
held-out weight shapes left out (session 33: F6 from F5; the same run on fp8's model read
-1.9 points and was not shipped).

Why a script: the fp16 and fp8 recipes are "session N's files", not folders (their folders have
grown since), so `tilepick train --data FOLDER ...` would not rebuild them.

    python benchmarks/retrain_manifest.py MODEL_DIR OUT_DIR [--no-hold-out]
"""

import argparse
import dataclasses
from pathlib import Path

from tilepick.model.artifacts import read_json
from tilepick.model.evaluate import recipe_options
from tilepick.model.train import train


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--no-hold-out", action="store_true")
    args = ap.parse_args()
    manifest = read_json(Path(args.model) / "manifest.json")
    opts = dataclasses.replace(recipe_options(args.model), hold_out=not args.no_hold_out)
    train([d["path"] for d in manifest["data"]], manifest["dtype"], manifest["arch"], args.out,
          opts, log=print)


if __name__ == "__main__":
    main()
