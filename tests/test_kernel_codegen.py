"""Generated code of the pointer kernel, compiled offline for sm_90 (no GPU needed).

The interpreter cannot see vectorisation: a lost alignment fact turned every global load of the
pointer kernel into a 2-byte scalar and disabled cp.async pipelining (4-5x slower on the
H200, unnoticed by correctness tests). These tests compile real launch plans with Triton's
bundled ptxas in a subprocess (TRITON_INTERPRET unset) and read the PTX.
"""

import json
import os
import subprocess
import sys

import pytest

SCRIPT = r"""
import json, sys
from tilepick.config import KernelConfig
from tilepick.kernels.codegen import LoadStats, pointer_kernel_ptx
from tilepick.problem import GemmProblem
out = []
for key, cid in json.loads(sys.argv[1]):
    s = LoadStats.of(pointer_kernel_ptx(GemmProblem.from_key(key), KernelConfig.from_id(cid)))
    out.append([s.async_16b, s.scalar_b16, s.wgmma])
print(json.dumps(out))
"""


def compiled_stats(cases):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    r = subprocess.run([sys.executable, "-c", SCRIPT, json.dumps(cases)], env=env,
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0 and ("ptxas" in r.stderr or "GPUTarget" in r.stderr):
        pytest.skip(f"Triton cannot compile for sm_90 here: {r.stderr[-300:]}")
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_aligned_problems_get_vector_pipelined_loads():
    cases = [("gemm.bf16.rr.m1024.n28672.k4096", "gemm.ptr.m128n128k32.g8.w4.s4"),
             ("gemm.bf16.rc.m1024.n4096.k4096", "gemm.ptr.m128n128k64.g8.w8.s3"),
             ("gemm.fp16.rr.m16.n4096.k4096.b3", "gemm.ptr.m16n64k64.g8.w4.s4"),
             ("gemm.bf16.rr.m128.n4096.k8192", "gemm.splitk.m64n64k64.g8.w4.s4.sk4")]
    for (key, cid), (async16, scalar, wgmma) in zip(cases, compiled_stats(cases)):
        assert async16 > 0, f"{key} {cid}: no 16-byte cp.async in the PTX"
        assert scalar == 0, f"{key} {cid}: {scalar} 2-byte scalar global loads"
        if ".m16n" not in cid:  # a 16-row tile is below wgmma's 64 rows: mma.sync instead
            assert wgmma > 0, f"{key} {cid}: no wgmma"
