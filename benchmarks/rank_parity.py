"""Parity of ``Predictor.rank`` on new problems: record full rankings, compare two records.

Why: latency work on the prediction path (``Predictor._rank_new``, the candidate table's
features, the tree stages) must not change any output. ``record`` ranks a fixed, seeded set
of problems with every model and writes the full ranked lists (config_id, predicted_tflops,
uncertainty) to a pickle; ``compare`` loads two such files and reports every difference:
problems whose ranked config order differs (count and examples) and the largest relative
difference of predicted_tflops and of uncertainty (None must stay None).

Problems (~500 per model, ``--problems``; ``--seed``): for each layout the model was trained
on, in turn: small M (1..16, decode), medium and large sizes (log-uniform), odd and prime
sizes, and a few batched, padded-leading-dimension and misaligned-base problems. The memo is
cleared before each problem, so every ranking is a new problem's (``_rank_new``).

    # baseline, from the unmodified code (e.g. a worktree of the base commit)
    PYTHONPATH=src python benchmarks/rank_parity.py record /tmp/parity_base.pkl
    # after a change
    PYTHONPATH=src python benchmarks/rank_parity.py record /tmp/parity_new.pkl
    python benchmarks/rank_parity.py compare /tmp/parity_base.pkl /tmp/parity_new.pkl

``record`` options: ``--models DIR [DIR ...]`` (default: every directory under models/ with a
predictor.json), ``--problems N`` (per model, default 500), ``--seed S`` (default 0),
``--catalog space`` (rank the whole config space instead of each model's catalog).
``compare`` exits 1 when any ranked order differs or a value differs by more than ``--rtol``
(default 1e-9, relative), else 0.
"""

from __future__ import annotations

import argparse
import pickle
import random
import sys
from pathlib import Path

from tilepick.model import Predictor
from tilepick.problem import GemmProblem

ROOT = Path(__file__).resolve().parent.parent
PRIMES = [2, 3, 5, 7, 11, 13, 17, 31, 61, 97, 127, 251, 509, 1021, 2039, 4093, 8191, 16381]


def default_models() -> list[Path]:
    return sorted(p.parent for p in (ROOT / "models").glob("*/predictor.json"))


def problems(pred: Predictor, count: int, seed: int) -> list[GemmProblem]:
    """``count`` distinct problems of the model's dtype over its layouts (deterministic)."""
    rng = random.Random(f"{seed}:{pred.name}")
    dtype = pred.dtype
    tf32 = dtype == "tf32"
    dtype = "fp32" if tf32 else dtype
    logu = lambda lo, hi: int(2 ** rng.uniform(lo, hi))   # noqa: E731
    odd = lambda: rng.choice(PRIMES) if rng.random() < 0.5 else 2 * logu(0, 13) + 1  # noqa: E731
    seen: dict = {}
    layouts = list(pred.layouts)
    i = 0
    while len(seen) < count:
        layout = layouts[i % len(layouts)]
        kind = (i // len(layouts)) % 8
        i += 1
        batch, pad, align = 1, 0, 16
        if kind in (0, 1):     # decode: small M
            m, n, k = rng.randint(1, 16), logu(6, 14.5), logu(6, 14.5)
        elif kind in (2, 3):   # medium
            m, n, k = logu(5, 11), logu(5, 11), logu(5, 11)
        elif kind == 4:        # large
            m, n, k = logu(11, 14.5), logu(11, 14.5), logu(10, 15)
        elif kind == 5:        # odd / prime sizes
            m, n, k = odd(), odd(), odd()
        elif kind == 6:        # anything, log-uniform
            m, n, k = logu(0, 14), logu(0, 14), logu(0, 14)
        else:                  # batched, padded leading dimensions, misaligned bases
            m, n, k = logu(0, 12), logu(3, 13), logu(3, 13)
            batch = rng.choice([1, 2, 8, 32])
            pad = rng.choice([0, 1, 8, 64])
            align = rng.choice([2, 4, 8, 16])
        p = GemmProblem(m, n, k, batch=batch, dtype=dtype, layout=layout, tf32=tf32,
                        base_align=align)
        if pad:
            p = p.replace(lda=p.lda + pad, ldb=p.ldb + pad, ldc=p.ldc + pad)
        seen.setdefault(p, None)
    return list(seen)


def record(args) -> None:
    models = [Path(m) for m in args.models] if args.models else default_models()
    out: dict = {"seed": args.seed, "problems": args.problems, "models": {}}
    for d in models:
        pred = Predictor(d, catalog=args.catalog)
        rows = []
        for p in problems(pred, args.problems, args.seed):
            pred.clear_memo()
            rows.append((p.key(), pred.rank(p)))
        out["models"][pred.name] = rows
        n = sum(len(r) for _, r in rows)
        print(f"{pred.name}: {len(rows)} problems, {n} ranked candidates "
              f"(compiled trees: {pred.compiled_trees})")
    Path(args.path).write_bytes(pickle.dumps(out))
    print(f"wrote {args.path}")


def _rel(a, b) -> float:
    if a is None or b is None:
        return 0.0 if a is b else float("inf")
    if a == b:
        return 0.0
    return abs(a - b) / max(abs(a), abs(b))


def compare(args) -> int:
    a, b = (pickle.loads(Path(p).read_bytes()) for p in (args.a, args.b))
    bad = 0
    for name in sorted(set(a["models"]) | set(b["models"])):
        if name not in a["models"] or name not in b["models"]:
            print(f"{name}: only in {'first' if name in a['models'] else 'second'} file")
            bad += 1
            continue
        ra, rb = dict(a["models"][name]), dict(b["models"][name])
        if ra.keys() != rb.keys():
            print(f"{name}: different problem sets ({len(ra)} vs {len(rb)})")
            bad += 1
            continue
        order_diff, examples, worst_t, worst_u, identical = 0, [], 0.0, 0.0, 0
        for key, la in ra.items():
            lb = rb[key]
            if [r[0] for r in la] != [r[0] for r in lb]:
                order_diff += 1
                if len(examples) < 5:
                    first = next((i for i, (x, y) in enumerate(zip(la, lb)) if x[0] != y[0]),
                                 min(len(la), len(lb)))
                    examples.append(f"  {key}: lengths {len(la)}/{len(lb)}, first difference "
                                    f"at {first}: {la[first:first + 2]} vs {lb[first:first + 2]}")
                continue
            for x, y in zip(la, lb):
                worst_t = max(worst_t, _rel(x[1], y[1]))
                worst_u = max(worst_u, _rel(x[2], y[2]))
            identical += la == lb
        ok = order_diff == 0 and worst_t <= args.rtol and worst_u <= args.rtol
        bad += not ok
        print(f"{name}: {len(ra)} problems, {order_diff} with a different ranked order, "
              f"{identical} bit-identical; max rel diff predicted_tflops {worst_t:.3g}, "
              f"uncertainty {worst_u:.3g} -> {'OK' if ok else 'DIFFERENT'}")
        for line in examples:
            print(line)
    print("parity: " + ("OK" if not bad else f"{bad} model(s) differ"))
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="rank the problems, write the rankings")
    r.add_argument("path")
    r.add_argument("--models", nargs="*")
    r.add_argument("--problems", type=int, default=500)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--catalog", choices=("trained", "space"), default=None,
                   help="override the models' catalog")
    c = sub.add_parser("compare", help="compare two recorded files")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--rtol", type=float, default=1e-9)
    args = ap.parse_args()
    if args.cmd == "record":
        record(args)
        return 0
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
