"""Does another cuBLASLt algorithm beat torch.matmul where cuBLAS wins today? (GPU)

Why: on the LLM suite the heuristic mode keeps cuBLAS on every row with M >= 77 but five
(BENCHMARKS "Session 37"): the Triton families lose there, so issue 5's >= 1.03x cannot come
from choosing among them. cuBLAS itself runs one algorithm of its own heuristic's list;
cuBLASLt exposes that list (``cublasLtMatmulAlgoGetHeuristic``: algorithm id, tile, stages,
split-K, swizzle, cluster shape) and runs any of its entries. PyTorch's TunableOp cannot ask
for them on CUDA (its algorithm lists are ROCm's). If some entry beats torch.matmul by more
than the noise on the large rows, cuBLASLt's algorithms are candidates of their own for the
model to rank; if not, the vendor's choice stands.

Per shape: up to ``--algos`` heuristic entries, each run once and checked against float64
(``probe_kit.CheckedCandidates``), then all of them and torch.matmul timed together in a few
interleaved rounds (L2 flushed); the fastest few entries re-timed against torch.matmul in more
rounds. cuBLASLt is called through ctypes on the library torch has loaded (no extra package):

    PYTHONPATH=src python3 benchmarks/cublaslt_probe.py --out FILE.json [--shapes MxNxK:L ...]
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from probe_kit import CheckedCandidates  # noqa: E402

# cuBLASLt enums (cublasLt.h, library_types.h, cublas_api.h)
CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF = 0, 2, 14
CUBLAS_COMPUTE_32F = 68
DESC_TRANSA, DESC_TRANSB = 3, 4
PREF_MAX_WORKSPACE_BYTES = 1
OP_N, OP_T = 0, 1
# algorithm config attributes: (name, id, size in bytes)
ALGO_ATTRS = [("algo", 0, 4), ("tile", 1, 4), ("splitk", 2, 4), ("reduction", 3, 4),
              ("swizzle", 4, 4), ("custom", 5, 4), ("stages", 6, 4), ("inner", 7, 2),
              ("cluster", 8, 2)]
WORKSPACE_BYTES = 32 << 20


class Algo(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64 * 8)]


class HeuristicResult(ctypes.Structure):
    _fields_ = [("algo", Algo), ("workspaceSize", ctypes.c_size_t), ("state", ctypes.c_int),
                ("wavesCount", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


def _library():
    """The libcublasLt torch has loaded (after a CUDA matmul), by its path in this process,
    with every function's argument types declared (sizes and handles are 64-bit)."""
    import torch

    torch.ones(8, 8, device="cuda") @ torch.ones(8, 8, device="cuda")
    torch.cuda.synchronize()
    path = next((line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()
                 if "libcublasLt" in Path(line.split()[-1]).name), None)
    if path is None:
        raise RuntimeError("libcublasLt is not loaded in this process")
    lib = ctypes.CDLL(path)
    vp, out = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)
    i32, size = ctypes.c_int, ctypes.c_size_t
    for name, args in {
        "cublasLtCreate": [out],
        "cublasLtMatmulDescCreate": [out, i32, i32],
        "cublasLtMatmulDescSetAttribute": [vp, i32, vp, size],
        "cublasLtMatrixLayoutCreate": [out, i32, ctypes.c_uint64, ctypes.c_uint64,
                                       ctypes.c_int64],
        "cublasLtMatmulPreferenceCreate": [out],
        "cublasLtMatmulPreferenceSetAttribute": [vp, i32, vp, size],
        "cublasLtMatmulAlgoGetHeuristic": [vp, vp, vp, vp, vp, vp, vp, i32,
                                           ctypes.POINTER(HeuristicResult),
                                           ctypes.POINTER(i32)],
        "cublasLtMatmul": [vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp, vp,
                           ctypes.POINTER(Algo), vp, size, vp],
        "cublasLtMatmulAlgoConfigGetAttribute": [ctypes.POINTER(Algo), i32, vp, size,
                                                 ctypes.POINTER(size)],
    }.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, i32
    return lib


class Lt:
    """A cuBLASLt handle, and plans for row-major C = A @ B of torch tensors."""

    def __init__(self):
        import torch

        self.lib = _library()
        self.handle = ctypes.c_void_p()
        self._ok(self.lib.cublasLtCreate(ctypes.byref(self.handle)), "cublasLtCreate")
        self.workspace = torch.empty(WORKSPACE_BYTES, dtype=torch.uint8, device="cuda")

    @staticmethod
    def _ok(status, what):
        if status != 0:
            raise RuntimeError(f"{what}: cuBLAS status {status}")

    def _layout(self, dtype, rows, cols, ld):
        lay = ctypes.c_void_p()
        self._ok(self.lib.cublasLtMatrixLayoutCreate(
            ctypes.byref(lay), dtype, rows, cols, ld), "cublasLtMatrixLayoutCreate")
        return lay

    def plan(self, a, b, out, count: int):
        """The heuristic's entries for out = a @ b (2-D, each operand row- or column-major,
        out row-major): (config ids, a runner per entry). Column-major view: out^T = b^T a^T,
        so cuBLASLt's A is b and its B is a."""
        import torch

        dt = {torch.bfloat16: CUDA_R_16BF, torch.float16: CUDA_R_16F}[a.dtype]
        m, k = a.shape
        n = b.shape[1]
        desc = ctypes.c_void_p()
        self._ok(self.lib.cublasLtMatmulDescCreate(ctypes.byref(desc), CUBLAS_COMPUTE_32F,
                                                   CUDA_R_32F), "cublasLtMatmulDescCreate")

        def operand(t, rows, cols):
            # t is [rows_of_op, cols_of_op] of the column-major product's operand, transposed
            if t.stride(1) == 1:       # row-major [cols, rows] storage = col-major rows x cols
                return OP_N, self._layout(dt, rows, cols, t.stride(0))
            return OP_T, self._layout(dt, cols, rows, t.stride(1))

        op_a, lay_a = operand(b, n, k)     # b^T: n x k
        op_b, lay_b = operand(a, k, m)     # a^T: k x m
        for attr, op in ((DESC_TRANSA, op_a), (DESC_TRANSB, op_b)):
            v = ctypes.c_int32(op)
            self._ok(self.lib.cublasLtMatmulDescSetAttribute(desc, attr, ctypes.byref(v), 4),
                     "cublasLtMatmulDescSetAttribute")
        lay_c = self._layout(dt, n, m, out.stride(0))
        pref = ctypes.c_void_p()
        self._ok(self.lib.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "preference")
        ws = ctypes.c_uint64(WORKSPACE_BYTES)
        self._ok(self.lib.cublasLtMatmulPreferenceSetAttribute(
            pref, PREF_MAX_WORKSPACE_BYTES, ctypes.byref(ws), 8), "preference workspace")
        results = (HeuristicResult * count)()
        got = ctypes.c_int(0)
        self._ok(self.lib.cublasLtMatmulAlgoGetHeuristic(
            self.handle, desc, lay_a, lay_b, lay_c, lay_c, pref, count, results,
            ctypes.byref(got)), "cublasLtMatmulAlgoGetHeuristic")
        alpha, beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
        entries = []
        for i in range(got.value):
            r = results[i]
            if r.state != 0:
                continue
            cfg = self.config(r.algo)
            cfg.update(rank=i, workspace=int(r.workspaceSize), waves=float(r.wavesCount))

            def run(r=r):
                self._ok(self.lib.cublasLtMatmul(
                    self.handle, desc, ctypes.byref(alpha), b.data_ptr(), lay_a, a.data_ptr(),
                    lay_b, ctypes.byref(beta), out.data_ptr(), lay_c, out.data_ptr(), lay_c,
                    ctypes.byref(r.algo), self.workspace.data_ptr(), WORKSPACE_BYTES,
                    torch.cuda.current_stream().cuda_stream), "cublasLtMatmul")
            entries.append((cfg, run))
        return entries

    def config(self, algo) -> dict:
        cfg = {}
        for name, attr, size in ALGO_ATTRS:
            buf = ctypes.c_uint64(0)
            written = ctypes.c_size_t(0)
            st = self.lib.cublasLtMatmulAlgoConfigGetAttribute(
                ctypes.byref(algo), attr, ctypes.byref(buf), size, ctypes.byref(written))
            cfg[name] = int(buf.value) if st == 0 else None
        return cfg


def config_id(cfg: dict) -> str:
    return ("lt.a{algo}.t{tile}.s{stages}.k{splitk}.r{reduction}.w{swizzle}.c{custom}"
            ".i{inner}.cl{cluster}").format(**cfg)


SUITE_WEIGHTS = [(4096, 4096), (6144, 4096), (28672, 4096), (4096, 14336), (8192, 8192),
                 (10240, 8192), (57344, 8192), (8192, 28672)]   # (N, K) of the LLM suite


def default_shapes(m_values) -> list[str]:
    return [f"{m}x{n}x{k}:{lay}" for m in m_values for n, k in SUITE_WEIGHTS
            for lay in ("rr", "rc")]


def probe(lt: Lt, spec: str, algos: int, screen_rounds: int, rounds: int, top: int) -> dict:
    t0 = time.time()
    cc = CheckedCandidates(spec)
    out = cc.output()
    ids = {}
    for cfg, run in lt.plan(cc.inp.a, cc.inp.b, out, algos):
        name = config_id(cfg)
        if name in ids:       # the heuristic can list an algorithm twice (other workspace)
            continue
        ids[name] = cfg
        cc.add(name, run, out)
    screen, _ = cc.time(screen_rounds, max_ms=20.0)
    lts = [r for r in screen if r["candidate"] != "cublas"]
    keep = {r["candidate"] for r in lts[:top]} | {"cublas"}
    first = next((n for n, c in ids.items() if c["rank"] == 0 and n in cc.fns), None)
    if first:
        keep.add(first)
    cc.fns = {n: f for n, f in cc.fns.items() if n in keep}
    final, _ = cc.time(rounds, max_ms=60.0)
    lib = next(r for r in final if r["candidate"] == "cublas")
    best = next((r for r in final if r["candidate"] != "cublas"), None)
    # the screen's fastest entry, scored in the final rounds only (round by round against
    # torch.matmul): chosen on other samples than it is scored on, free of the winner's curse
    pick = next((r for r in final if lts and r["candidate"] == lts[0]["candidate"]), None)
    paired = pick and statistics.median(
        t / p for t, p in zip(lib["rounds_ms"], pick["rounds_ms"]))
    return {"screen_pick": pick and pick["candidate"], "screen_pick_over_torch": paired,
            "spec": spec, "entries": ids, "notes": cc.notes, "screen": screen, "final": final,
            "heuristic_first": first, "best_lt": best and best["candidate"],
            "best_over_torch": best and best["tflops"] / lib["tflops"],
            "first_over_torch": next((r["tflops"] / lib["tflops"] for r in final
                                      if r["candidate"] == first), None),
            "torch_spread": lib["spread"], "seconds": time.time() - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--shapes", nargs="*", default=None)
    ap.add_argument("--m-values", default="128,1024,3000,8192",
                    help="M of the suite weights' shapes when --shapes is not given (the LLM "
                         "suite's: 1,16,77,128,1000,1024,3000,4096,8192)")
    ap.add_argument("--algos", type=int, default=24)
    ap.add_argument("--screen-rounds", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--budget-s", type=float, default=400.0)
    args = ap.parse_args()

    from tilepick.data.io import write_json
    from tilepick.provenance import collect

    lt = Lt()
    t0 = time.time()
    rows = []
    for spec in args.shapes or default_shapes([int(m) for m in args.m_values.split(",")]):
        if time.time() - t0 > args.budget_s:
            print(f"budget spent: stopped before {spec}")
            break
        try:
            row = probe(lt, spec, args.algos, args.screen_rounds, args.rounds, args.top)
        except Exception as exc:   # a shape cuBLASLt refuses is a finding, not the end
            row = {"spec": spec, "error": f"{type(exc).__name__}: {exc}"}
            print(spec, row["error"])
        else:
            print(f"{spec:24s} entries {len(row['entries']):2d}  best {row['best_lt']}  "
                  f"{row['best_over_torch'] or 0:.3f}x  first {row['first_over_torch'] or 0:.3f}x"
                  f"  screen pick {row['screen_pick_over_torch'] or 0:.3f}x"
                  f"  torch spread {row['torch_spread']:.1%}  {row['seconds']:.0f}s", flush=True)
        rows.append(row)
        write_json(args.out, {"provenance": collect(), "args": vars(args), "rows": rows})
    ok = [r["screen_pick_over_torch"] for r in rows if r.get("screen_pick_over_torch")]
    if ok:
        print(f"{len(ok)} shapes, the screen's pick in the final rounds over torch.matmul: "
              f"geomean {statistics.geometric_mean(ok):.4f}, median {statistics.median(ok):.3f},"
              f" of max(1, pick) {statistics.geometric_mean([max(1.0, x) for x in ok]):.4f}")


if __name__ == "__main__":
    main()
