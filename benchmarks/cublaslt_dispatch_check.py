"""GPU check: every cuBLASLt entry of a few shapes (all four layouts) and the heuristic
mode's pick against float64 (relative max error > 2e-2 counts as wrong).

    PYTHONPATH=src python3 benchmarks/cublaslt_dispatch_check.py
"""
import torch
from tilepick import solvers
from tilepick.dispatch import Dispatcher
from tilepick.dispatch.devices import RealDevice
from tilepick.problem import GemmProblem
s = solvers.SOLVERS["gemm.cublaslt"]
bad = 0
for m, n, k, lay in [(128, 57344, 8192, "rr"), (1000, 4096, 4096, "rc"), (77, 6144, 4096, "rr"), (333, 1000, 999, "cc"), (4096, 28672, 4096, "cr")]:
    p = GemmProblem(m, n, k, dtype="bf16", layout=lay)
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    if lay[0] == "c": a = a.t().contiguous().t()
    if lay[1] == "c": b = b.t().contiguous().t()
    ref = (a.double() @ b.double())
    cfgs = s.configs(p)
    for c in cfgs:
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        solvers.launch(p, c, a, b, out)
        err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
        bad += err > 2e-2
    d = Dispatcher(mode="heuristic", device=RealDevice(), user_db=None, system_db=None)
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    d.run(p, a, b, out)
    err = ((out.double() - ref).abs().max() / ref.abs().max()).item()
    print(p.key(), len(cfgs), "entries; heuristic pick", d.cache[p].config_id, f"err {err:.2e}", flush=True)
    bad += err > 2e-2
print("entries/picks with a wrong result:", bad)
