"""One cuBLASLt entry timed through each path that runs it, against torch.matmul (GPU).

Why: on rr 128 x 4096 x 14336 session 39's probe (`cublaslt_probe.py`) measured the entry
`a66.t15.s35.k1.r0.w0.c1.i0.cl3` at 0.995 of cuBLAS, while the LLM suite
(`dispatch_llm_suite.py`) measures it at 0.962-0.966 in three runs (BENCHMARKS "Session 41").
The two time different paths: the probe runs the heuristic's own algorithm with the device's
shared workspace (`LtGemm.run(..., workspace=None)`) against `torch.matmul(out=)`; the suite
runs `solvers.launch` (a bind per call, the rebuilt algorithm, the stream's kept workspace)
against `solvers.launch` of `gemm.cublas`. Here every path of each entry is a candidate of
the same interleaved rounds, each checked against float64 first:

- ``torch``: `torch.matmul(a, b, out=)` (the probe's yardstick, ``cublas``);
- ``cublas_solver``: `solvers.launch` of `gemm.cublas` (the suite's yardstick);
- ``probe:E``: the heuristic's algorithm for E, shared workspace (the probe's path);
- ``rebuilt:E``: E rebuilt from its name, shared workspace;
- ``launch:E``: `solvers.launch` of `gemm.cublaslt.E` (the suite's path);
- ``bound:E``: the solver's prepared launch, built once (the dispatcher's hot path).

``--paths`` keeps some of those paths only; ``--neighbours ID ...`` adds other configs
(``solvers.launch``, as ``n:ID``) to the same rounds. Session 42 found the paths alike (0.988-0.994
of cuBLAS); what differs in the suite is the company: its rounds hold the Triton tutorial's
pick too, a slow, low-power kernel (``--neighbours gemm.ptr.m32n64k32.g8.w2.s5``).

    PYTHONPATH=src python3 benchmarks/lt_path_ab.py [--shapes 128x4096x14336:rr ...]
        [--entries a66.t15.s35.k1.r0.w0.c1.i0.cl3 ...] [--paths launch ...]
        [--neighbours gemm.ptr.m32n64k32.g8.w2.s5 ...] [--rounds 15] [--out FILE.json]

Without ``--entries``: the heuristic's first entry and E of the session-41 row.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from probe_kit import CheckedCandidates  # noqa: E402

SHAPES = ["128x4096x14336:rr"]
ENTRIES = ["a66.t15.s35.k1.r0.w0.c1.i0.cl3"]
PATHS = ("probe", "rebuilt", "launch", "bound")


def add_paths(cc: CheckedCandidates, entries: list[str], paths=PATHS,
              neighbours: tuple[str, ...] = ()) -> None:
    """The chosen paths of each entry, the suite's cuBLAS and the neighbours as candidates of
    ``cc``."""
    import torch

    from tilepick import solvers
    from tilepick.config import KernelConfig
    from tilepick.solvers import cublaslt_lib as lt

    a, b, p = cc.inp.a, cc.inp.b, cc.p
    stream = torch.cuda.current_stream().cuda_stream
    out = cc.output()
    cub = KernelConfig.from_id("gemm.cublas")
    cc.add("cublas_solver", lambda: solvers.launch(p, cub, a, b, out, check=False), out)
    for cid in neighbours:
        c = KernelConfig.from_id(cid)
        cc.add(f"n:{cid}", lambda c=c, o=out: solvers.launch(p, c, a, b, o, check=False), out)
    g = lt.for_tensors(a, b, out)
    listed = {name.name: algo for name, algo, _ in g.heuristic()}
    first = next(iter(listed), None)
    for e in dict.fromkeys(([first] if first else []) + entries):
        if "probe" in paths and e in listed:
            cc.add(f"probe:{e}", lambda algo=listed[e], o=out: g.run(algo, a, b, o, stream), out)
        elif "probe" in paths:
            cc.notes[f"probe:{e}"] = "not in the heuristic's list for this shape"
        try:
            rebuilt = g.rebuild(lt.LtAlgo.parse(e))
        except lt.LtError as exc:
            cc.notes[f"rebuilt:{e}"] = str(exc)[:300]
            continue
        if "rebuilt" in paths:
            cc.add(f"rebuilt:{e}", lambda algo=rebuilt, o=out: g.run(algo, a, b, o, stream), out)
        c = KernelConfig.from_id(f"gemm.cublaslt.{e}")
        if "launch" in paths:
            cc.add(f"launch:{e}", lambda c=c, o=out: solvers.launch(p, c, a, b, o, check=False),
                   out)
        if "bound" in paths:
            bound = solvers.bind(p, c.id, a, b, out)
            cc.add(f"bound:{e}", lambda run=bound, o=out: run(a, b, o), out)


def paired(rows: list[dict], base: str) -> dict:
    """Each candidate's speed over ``base``: the median over rounds of base's time over its."""
    ref = next(r for r in rows if r["candidate"] == base)["rounds_ms"]
    return {r["candidate"]: statistics.median(t / m for t, m in zip(ref, r["rounds_ms"]))
            for r in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", nargs="*", default=SHAPES)
    ap.add_argument("--entries", nargs="*", default=ENTRIES)
    ap.add_argument("--paths", nargs="*", default=list(PATHS), choices=PATHS)
    ap.add_argument("--neighbours", nargs="*", default=[],
                    help="config ids timed in the same rounds (e.g. the suite's tutorial pick)")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    from tilepick.provenance import collect

    result = {"provenance": collect(), "args": vars(args), "shapes": []}
    for spec in args.shapes:
        cc = CheckedCandidates(spec)
        add_paths(cc, args.entries, tuple(args.paths), tuple(args.neighbours))
        rows, _ = cc.time(args.rounds, max_ms=40.0)
        row = {"spec": spec, "rows": rows, "notes": cc.notes,
               "over_torch": paired(rows, "cublas"),
               "over_cublas_solver": paired(rows, "cublas_solver")}
        result["shapes"].append(row)
        print(spec, json.dumps({k: round(v, 4) for k, v in row["over_torch"].items()}),
              json.dumps(cc.notes), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
