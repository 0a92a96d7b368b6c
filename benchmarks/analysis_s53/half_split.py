"""Split dataset folders by shape into two halves, for a held-out check under `tilepick validate`'s
own rule (CPU, seconds).

Why: `benchmarks/extra_data_oof.py` scores the extra problems out of fold under the training
labels' rule, while the shipped model's figure on them comes from `tilepick validate` (inside
each problem's latest pass); the two do not compare. Here the problems of the given folders are
split by (M, N, K) — the long-K set has the same shapes in every layout, so a split by problem
would leak a shape's other layouts — into half A (to train on) and half B (to validate on), each
written as one folder per input folder holding its files filtered to that half.

    python benchmarks/analysis_s53/half_split.py OUT_DIR FOLDER [FOLDER ...] [--seed 0]
        [--sample-b N --shapes-out FILE]

OUT_DIR/A/<folder name>/<file> and OUT_DIR/B/<folder name>/<file>; with ``--sample-b``, N of
half B's shapes (seeded) as ``MxNxK,...`` in FILE, for `dispatch_llm_suite.py --shapes`.
"""

import argparse
from pathlib import Path

import numpy as np
import pyarrow as pa

from tilepick.data.io import read_table, write_file


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample-b", type=int, default=0)
    ap.add_argument("--shapes-out", default=None)
    args = ap.parse_args()
    if args.sample_b and not args.shapes_out:
        ap.error("--sample-b needs --shapes-out FILE")
    # each file read once, schema-checked; the halves written as dataset files
    tables = {(Path(d), f): read_table(f) for d in args.folders
              for f in sorted(Path(d).glob("*.parquet"))}
    mnk = {key: list(zip(*(t.column(c).to_pylist() for c in ("m", "n", "k"))))
           for key, t in tables.items()}
    shapes = sorted({s for rows in mnk.values() for s in rows})
    rng = np.random.default_rng(args.seed)
    in_a = dict(zip(shapes, rng.permutation(len(shapes)) < len(shapes) // 2))
    for (folder, f), table in tables.items():
        a = np.array([in_a[s] for s in mnk[(folder, f)]], dtype=bool)
        for half, keep in (("A", a), ("B", ~a)):
            dest = Path(args.out) / half / folder.name / f.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            write_file(dest, table.filter(pa.array(keep)))
    if args.sample_b:
        half_b = [s for s in shapes if not in_a[s]]
        pick = sorted(half_b[i] for i in rng.choice(len(half_b), args.sample_b, replace=False))
        with open(args.shapes_out, "w") as fh:
            fh.write(",".join(f"{m}x{n}x{k}" for m, n, k in pick) + "\n")
    print(f"{len(shapes)} shapes: {sum(in_a.values())} in A, {len(shapes) - sum(in_a.values())} in B "
          f"-> {args.out}/A, {args.out}/B")


if __name__ == "__main__":
    main()
