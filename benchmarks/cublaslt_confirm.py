"""Do the cuBLASLt entries one run picked hold up in another, rebuilt from their names? (GPU)

Why: ``cublaslt_probe.py`` read the entry fastest in a screening pass at 2.35% geomean over
torch.matmul on the LLM suite (one H200), scored in fresh rounds of the same run. This takes
that run's picks by name only, rebuilds each algorithm without the heuristic
(``tilepick.solvers.cublaslt_lib.LtGemm.rebuild``), checks it against float64 and times it
against torch.matmul and the heuristic's first entry in interleaved rounds (L2 flushed): the
pick is chosen in one process and scored in another. It also checks, on every shape, that each
heuristic entry rebuilt from its name is the same algorithm byte for byte, and, where the GPU
machine has ``cublasLt.h``, reads its tile, stage and cluster-shape enums into ``--enums``.

    PYTHONPATH=src python3 benchmarks/cublaslt_confirm.py --first RUN1.json[.gz] --out FILE.json
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from probe_kit import CheckedCandidates  # noqa: E402

from tilepick.data.io import open_text, write_json  # noqa: E402
from tilepick.solvers import cublaslt_lib as lt  # noqa: E402

ENUMS = {"tile": r"CUBLASLT_MATMUL_TILE_(\w+?)\s*=\s*(\d+)",
         "stages": r"CUBLASLT_MATMUL_STAGES_(\w+?)\s*=\s*(\d+)",
         "cluster": r"CUBLASLT_CLUSTER_SHAPE_(\w+?)\s*=\s*(\d+)",
         "inner": r"CUBLASLT_MATMUL_INNER_SHAPE_(\w+?)\s*=\s*(\d+)"}


def header_enums() -> dict:
    """{enum: {value: name suffix}} from the first cublasLt.h found (site-packages' nvidia
    wheels, then /usr/local/cuda), with its path."""
    import site

    roots = [Path(p) for p in site.getsitepackages()] + [Path("/usr/local")]
    for root in roots:
        for h in sorted(root.glob("**/cublasLt.h")):
            text = h.read_text(errors="replace")
            return {"header": str(h), **{e: {int(v): name for name, v in re.findall(rx, text)}
                                          for e, rx in ENUMS.items()}}
    return {"header": None}


def confirm(spec: str, pick: str | None, rounds: int) -> dict:
    import torch

    t0 = time.time()
    cc = CheckedCandidates(spec)
    out = cc.output()
    g = lt.for_tensors(cc.inp.a, cc.inp.b, out)
    entries = g.heuristic()
    same = {}
    for name, algo, _ in entries:
        try:
            same[name.name] = lt.same_algorithm(g.rebuild(name), algo)
        except lt.LtError as exc:
            same[name.name] = str(exc)
    stream = torch.cuda.current_stream().cuda_stream
    first = entries[0][0].name if entries else None
    for label, name in (("first", first), ("pick", pick)):
        if name is None:
            continue
        try:
            algo = g.rebuild(lt.LtAlgo.parse(name))
        except lt.LtError as exc:
            cc.notes[label] = str(exc)
            continue
        cc.add(label, lambda algo=algo: g.run(algo, cc.inp.a, cc.inp.b, out, stream), out)
    rows, timed = cc.time(rounds, max_ms=60.0)
    lib = timed["cublas"].rounds_ms

    def paired(label):
        if label not in timed:
            return None
        return statistics.median(t / p for t, p in zip(lib, timed[label].rounds_ms))

    return {"spec": spec, "pick": pick, "first": first, "entries": [e[0].name for e in entries],
            "rebuilt_same": same, "notes": cc.notes, "rows": rows,
            "pick_over_torch": paired("pick"), "first_over_torch": paired("first"),
            "torch_spread": timed["cublas"].spread, "seconds": time.time() - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--first", required=True, help="cublaslt_probe.py's result file")
    ap.add_argument("--out", required=True)
    ap.add_argument("--enums", default=None, help="where to write the header's enums (JSON)")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--budget-s", type=float, default=420.0)
    args = ap.parse_args()

    from tilepick.provenance import collect

    if args.enums:
        write_json(args.enums, header_enums())
    with open_text(args.first) as f:
        first = json.load(f)
    t0 = time.time()
    rows = []
    for r in first["rows"]:
        if time.time() - t0 > args.budget_s:
            print(f"budget spent: stopped before {r['spec']}")
            break
        pick = r.get("screen_pick")   # the probe named entries "lt.<name>"
        row = confirm(r["spec"], pick and pick.removeprefix("lt."), args.rounds)
        rows.append(row)
        bad = [n for n, ok in row["rebuilt_same"].items() if ok is not True]
        print(f"{row['spec']:22s} pick {row['pick_over_torch'] or 0:.3f}x  first "
              f"{row['first_over_torch'] or 0:.3f}x  rebuilt differently: {len(bad)} of "
              f"{len(row['rebuilt_same'])}  torch spread {row['torch_spread']:.1%}", flush=True)
        write_json(args.out, {"provenance": collect(), "args": vars(args), "rows": rows})
    got = [r["pick_over_torch"] for r in rows if r["pick_over_torch"]]
    if got:
        print(f"{len(got)} shapes: the first run's pick over torch.matmul, geomean "
              f"{statistics.geometric_mean(got):.4f}, median {statistics.median(got):.3f}, "
              f"min {min(got):.3f}")


if __name__ == "__main__":
    main()
