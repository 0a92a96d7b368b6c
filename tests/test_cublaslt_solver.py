"""The gemm.cublaslt family on a CPU: its config ids, its empty static space, its rules, the
problem -> cuBLASLt descriptor mapping, and the per-(device, stream) workspace logic of its
prepared launches (with a fake LtGemm and fake torch.cuda stream functions: the cuBLASLt calls
themselves run on the GPU only)."""

import ctypes
import pytest

from tilepick import config as cfg
from tilepick import solvers
from tilepick.config import ConfigError, KernelConfig
from tilepick.problem import LAYOUTS, GemmProblem
from tilepick.solvers import NotInThisContextError, cublaslt
from tilepick.solvers import cublaslt_lib as lt
from tilepick.solvers.cublaslt import CublasLtSolver

ENTRY = "a66.t197.s35.k1.r0.w0.c2.i0.cl5"
LT_ID = "gemm.cublaslt." + ENTRY

# -- config ids ------------------------------------------------------------------------------


def test_family_keeps_its_place_and_is_named_vendor():
    # appended as the 14th family; only families added since come after it (family codes are
    # positions), and the solvers are registered in the same order
    assert list(cfg.FAMILIES).index("gemm.cublaslt") == 13
    assert list(cfg.FAMILIES)[14:] == ["gemm.gemv_n_splitk"]
    assert cfg.NAMED_VENDOR_FAMILIES == ("gemm.cublaslt",)
    assert cfg.VENDOR_FAMILIES == ("gemm.cublas", "gemm.cublas_repack")   # unchanged
    assert list(solvers.SOLVERS) == list(cfg.FAMILIES)
    assert isinstance(solvers.SOLVERS["gemm.cublaslt"], CublasLtSolver)


def test_id_round_trip():
    c = KernelConfig("gemm.cublaslt", entry=ENTRY)
    assert c.id == LT_ID and str(c) == LT_ID
    assert KernelConfig.from_id(LT_ID) == c
    assert c.is_vendor and c.params == {}
    assert solvers.solver_for(LT_ID).family == "gemm.cublaslt"
    # another entry is another config
    other = KernelConfig.from_id("gemm.cublaslt.a66.t23.s35.k1.r0.w0.c7.i0.cl5")
    assert other != c and other.entry == "a66.t23.s35.k1.r0.w0.c7.i0.cl5"


@pytest.mark.parametrize("bad, why", [
    ("gemm.cublaslt", "not a gemm.cublaslt config id"),                  # no entry
    ("gemm.cublaslt.", "not a gemm.cublaslt config id"),
    ("gemm.cublaslt.a66.t197.s35.k1.r0.w0.c2.i0", "not a gemm.cublaslt config id"),
    ("gemm.cublaslt.a66.t197.s35.k1.r0.w0.c2.cl5.i0", "not a gemm.cublaslt config id"),
    ("gemm.cublaslt.a66.tX.s35.k1.r0.w0.c2.i0.cl5", "not a gemm.cublaslt config id"),
    ("gemm.cublaslt.lt.a66.t197.s35.k1.r0.w0.c2.i0.cl5", "not a gemm.cublaslt config id"),
    ("gemm.cublaslt.m128n128k64.g8.w4.s3", "not a gemm.cublaslt config id"),
    ("gemm.cublaslt.a066.t197.s35.k1.r0.w0.c2.i0.cl5", "non-canonical"),  # leading zero
    ("gemm.cublaslt.a66.t197.s35.k01.r0.w0.c2.i0.cl5", "non-canonical"),
])
def test_malformed_and_non_canonical_ids_are_refused_by_name(bad, why):
    with pytest.raises(ConfigError, match=why) as e:
        KernelConfig.from_id(bad)
    assert repr(bad) in str(e.value)


def test_non_canonical_message_names_the_id():
    with pytest.raises(ConfigError, match=f"the id is '{LT_ID}'"):
        KernelConfig.from_id("gemm.cublaslt.a066.t197.s35.k1.r0.w0.c2.i0.cl5")


def test_entry_on_another_family_is_refused():
    for fam in ("gemm.cublas", "gemm.cublas_repack"):
        with pytest.raises(ConfigError, match="has no named entries"):
            KernelConfig(fam, entry=ENTRY)
    with pytest.raises(ConfigError, match="has no named entries"):
        KernelConfig("gemm.ptr", 64, 64, 64, 8, 4, 3, entry=ENTRY)
    # and the plain ids of those families still parse to entry-less configs
    assert KernelConfig.from_id("gemm.cublas").entry == ""


@pytest.mark.parametrize("params", [dict(block_m=128), dict(num_warps=4), dict(num_stages=1),
                                    dict(group_m=1), dict(split_k=2), dict(split_k=0)])
def test_lt_configs_take_no_params(params):
    with pytest.raises(ConfigError, match="takes no parameters"):
        KernelConfig("gemm.cublaslt", entry=ENTRY, **params)


def test_lt_config_needs_a_canonical_entry():
    with pytest.raises(ConfigError, match="not a cuBLASLt algorithm name"):
        KernelConfig("gemm.cublaslt")
    with pytest.raises(ConfigError, match="non-canonical entry"):
        KernelConfig("gemm.cublaslt", entry="a66.t197.s35.k1.r0.w0.c2.i0.cl05")


@pytest.mark.parametrize("name", [ENTRY, "a1.t9999.s99.k1.r0.w0.c0.i0.cl99",
                                  "a0.t0.s0.k0.r0.w0.c0.i0.cl0", "a66.t23.s35.k4.r1.w1.c7.i3.cl5",
                                  "a066.t197.s35.k1.r0.w0.c2.i0.cl5"])
def test_entry_grammar_agrees_with_ltalgo(name):
    assert cfg.LT_ENTRY_RE.fullmatch(name)
    algo = lt.LtAlgo.parse(name)
    assert cfg.lt_entry_canonical(name) == algo.name
    if name == algo.name:
        assert KernelConfig("gemm.cublaslt", entry=name).entry == algo.name


@pytest.mark.parametrize("name", ["lt." + ENTRY, "a66.t197.s35.k1.r0.w0.c2.i0",
                                  "a66.t197.s35.k1.r0.w0.c2.cl5.i0", "a66.tX.s35.k1.r0.w0.c2.i0.cl5",
                                  "gemm.cublas", ""])
def test_entry_grammar_refuses_what_ltalgo_refuses(name):
    assert cfg.LT_ENTRY_RE.fullmatch(name) is None
    assert cfg.lt_entry_canonical(name) is None
    with pytest.raises(ValueError, match="not a cuBLASLt algorithm name"):
        lt.LtAlgo.parse(name)


def test_no_static_space():
    assert cfg.space("gemm.cublaslt") == []
    assert cfg.space("gemm.cublas") == [KernelConfig("gemm.cublas")]   # vendors keep theirs
    with pytest.raises(ConfigError, match="no parameter space"):
        cfg.nearest_in_space("gemm.cublaslt", block_m=64)
    from tilepick.features.candidates import space_configs

    assert not any(c.family == "gemm.cublaslt" for c in space_configs())


# -- rules on a CPU --------------------------------------------------------------------------

@pytest.fixture
def cpu_only(monkeypatch):
    """cuBLASLt's availability as a CPU machine sees it, asked afresh."""
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA machine")
    monkeypatch.setattr(cublaslt, "_availability", [])


def test_not_applicable_on_cpu_names_cuda(cpu_only, hw):
    s = solvers.SOLVERS["gemm.cublaslt"]
    p = GemmProblem(256, 512, 1024)
    assert s.not_applicable_reason(p, hw) == "cuBLASLt needs a CUDA device; torch sees none"
    assert not cublaslt.available()
    assert s.configs(p, hw) == []
    assert not any(c.family == "gemm.cublaslt" for c in solvers.applicable_configs(p, hw))
    assert "needs a CUDA device" in s.config_invalid_reason(
        p, KernelConfig.from_id(LT_ID), hw)
    with pytest.raises(solvers.NotApplicableError, match="needs a CUDA device"):
        s.check(p, KernelConfig.from_id(LT_ID), hw)
    assert s.default_config(p, hw) is None


@pytest.mark.parametrize("kw, why", [
    (dict(batch=4), "batched problems are not bound yet"),
    (dict(dtype="fp8e4m3", layout="rc"), "fp8"),
    (dict(dtype="fp32"), "bf16 and fp16, not fp32"),
    (dict(dtype="fp32", tf32=True), "bf16 and fp16, not tf32"),
])
def test_refused_problems_say_why(monkeypatch, hw, kw, why):
    monkeypatch.setattr(cublaslt, "available", lambda: True)
    s = solvers.SOLVERS["gemm.cublaslt"]
    reason = s.not_applicable_reason(GemmProblem(128, 256, 512, **kw), hw)
    assert reason is not None and why in reason


def test_served_problems_pass_the_rules(monkeypatch, hw):
    monkeypatch.setattr(cublaslt, "available", lambda: True)
    s = solvers.SOLVERS["gemm.cublaslt"]
    for kw in (dict(), dict(dtype="fp16", layout="cc", lda=1032), dict(batch=1, layout="rc")):
        assert s.not_applicable_reason(GemmProblem(128, 256, 512, **kw), hw) is None


def test_stand_in_and_workspace(hw):
    s = solvers.SOLVERS["gemm.cublaslt"]
    p = GemmProblem(100, 200, 300, layout="cr")
    c = KernelConfig.from_id(LT_ID)
    assert s.stand_in(c, p, hw) == p
    assert s.workspace(p, c) == lt.WORKSPACE_BYTES


# -- problem -> descriptors -----------------------------------------------------------------

def _tensors(torch, p: GemmProblem, dtype):
    """Tensors of the problem's layout and leading dimensions, as callers pass them."""
    a = (torch.empty(p.m, p.lda, dtype=dtype)[:, :p.k] if p.a_row_major
         else torch.empty(p.k, p.lda, dtype=dtype)[:, :p.m].t())
    b = (torch.empty(p.k, p.ldb, dtype=dtype)[:, :p.n] if p.b_row_major
         else torch.empty(p.n, p.ldb, dtype=dtype)[:, :p.k].t())
    out = torch.empty(p.m, p.ldc, dtype=dtype)[:, :p.n]
    return a, b, out


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["bf16", "fp16"])
@pytest.mark.parametrize("pad", [False, True])
def test_problem_maps_to_what_for_tensors_builds(layout, dtype, pad):
    torch = pytest.importorskip("torch")
    base = GemmProblem(48, 80, 112, dtype=dtype, layout=layout)
    p = base if not pad else GemmProblem(
        48, 80, 112, dtype=dtype, layout=layout, lda=base.lda + 8, ldb=base.ldb + 24,
        ldc=base.ldc + 16)
    a, b, out = _tensors(torch, p, p.dtype.torch_dtype)
    assert (a.shape, b.shape, out.shape) == ((48, 112), (112, 80), (48, 80))
    got = cublaslt.lt_args(p)
    assert got == lt.tensor_args(a, b, out)
    # spelled out, so that a change to both sides at once still shows
    lda, ldb = p.lda, p.ldb
    assert got[4] == ((lda, 1) if layout[0] == "r" else (1, lda))
    assert got[5] == ((ldb, 1) if layout[1] == "r" else (1, ldb))
    assert got[6] == p.ldc and got[3] == {"bf16": "bfloat16", "fp16": "float16"}[dtype]
    # and the descriptors cuBLASLt is given: each operand row- or column-major as intended
    m, n, k, _, sa, sb, _ = got
    assert lt.operand_layout(n, k, sb)[0] == (lt.OP_N if layout[1] == "r" else lt.OP_T)
    assert lt.operand_layout(k, m, sa)[0] == (lt.OP_N if layout[0] == "r" else lt.OP_T)


def test_degenerate_sizes_map_like_tensors():
    torch = pytest.importorskip("torch")
    for p in (GemmProblem(1, 4096, 512, layout="cr"), GemmProblem(64, 1, 512, layout="rc"),
              GemmProblem(1, 1, 1, layout="cc")):
        a, b, out = _tensors(torch, p, torch.bfloat16)
        assert cublaslt.lt_args(p) == lt.tensor_args(a, b, out), p.key()


def test_lt_args_refuses_what_the_binding_cannot_serve():
    with pytest.raises(ValueError, match=r"gemm\.fp32\.rr\.m8\.n8\.k8.*fp32"):
        cublaslt.lt_args(GemmProblem(8, 8, 8, dtype="fp32"))
    with pytest.raises(ValueError, match="one batch"):
        cublaslt.lt_args(GemmProblem(8, 8, 8, batch=2))


# -- prepared launches: workspaces per (device, stream), graph capture -------------------

class _FakeGemm:
    """LtGemm's rebuild and launcher, recording what they were given."""

    built = []

    def __init__(self, a, b, out):
        self.args = lt.tensor_args(a, b, out)
        self.rebuilt, self.runs = [], []
        _FakeGemm.built.append(self)

    def rebuild(self, name):
        if name.algo == 999:
            raise lt.LtError(f"cublasLtMatmulAlgoCheck({name.name}): cuBLAS status 15 "
                             "(NOT_SUPPORTED)")
        self.rebuilt.append(name)
        return ("algo", name.name)

    def launcher(self, algo):
        def launch(a_ptr, b_ptr, out_ptr, workspace, stream):
            self.runs.append((algo, (a_ptr, b_ptr, out_ptr), stream, workspace))
        return launch


class _Streams:
    """The current stream's handle and torch.cuda.is_current_stream_capturing as the test sets
    them."""

    def __init__(self):
        self.handle, self.capturing = 0x1000, False

    def raw_stream(self, device_index):
        return self.handle

    def is_current_stream_capturing(self):
        return self.capturing


@pytest.fixture
def fake_cuda(monkeypatch):
    torch = pytest.importorskip("torch")
    _FakeGemm.built = []
    streams = _Streams()
    monkeypatch.setattr(lt, "for_tensors", _FakeGemm)
    monkeypatch.setattr(cublaslt, "raw_stream_getter", lambda: streams.raw_stream)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing",
                        streams.is_current_stream_capturing)
    monkeypatch.setattr(lt, "WORKSPACE_BYTES", 4096)   # CPU tensors: keep them small
    # CPU allocations are 64-byte aligned, CUDA ones 512: the 256-byte rule is tested below
    monkeypatch.setattr(cublaslt, "POINTER_ALIGN", 16)
    return torch, streams


def _bound(torch, layout="rr", dtype=None):
    """A fresh solver bound to 16x64 @ 64x32 tensors of ``layout``: (solver, problem,
    tensors, the prepared launch)."""
    s = CublasLtSolver()
    p = GemmProblem(16, 32, 64, layout=layout)
    a, b, out = _tensors(torch, p, dtype or torch.bfloat16)
    return s, p, (a, b, out), s.bind(p, KernelConfig.from_id(LT_ID), a, b, out)


def test_operands_off_the_heuristics_alignment_are_refused_for_the_call(fake_cuda):
    torch, _ = fake_cuda
    _, _, (a, b, out), run = _bound(torch)
    store = torch.empty(16 * 64 + 1, dtype=torch.bfloat16)
    shifted = store[1:].view(16, 64)            # 2 bytes past an aligned start
    with pytest.raises(NotInThisContextError, match="not a multiple of 16 bytes"):
        run(shifted, b, out)
    (gemm,) = _FakeGemm.built
    assert gemm.runs == []                       # refused before cuBLASLt saw it
    run(a, b, out)
    assert len(gemm.runs) == 1


def test_bind_runs_the_rebuilt_entry_with_a_workspace_per_stream(fake_cuda):
    torch, streams = fake_cuda
    s, p, (a, b, out), run = _bound(torch)
    assert run(a, b, out) is out
    (gemm,) = _FakeGemm.built
    assert gemm.rebuilt == [lt.LtAlgo.parse(ENTRY)]
    algo, pointers, stream, ws1 = gemm.runs[-1]
    assert algo == ("algo", ENTRY) and stream == 0x1000
    assert pointers == (a.data_ptr(), b.data_ptr(), out.data_ptr())
    assert ws1.dtype == torch.uint8 and ws1.numel() == 4096
    run(a, b, out)                        # same stream: the same buffer, not a new one
    assert gemm.runs[-1][3] is ws1
    streams.handle = 0x2000               # another stream: a buffer of its own
    run(a, b, out)
    ws2 = gemm.runs[-1][3]
    assert gemm.runs[-1][2] == 0x2000 and ws2 is not ws1
    assert set(s._workspaces) == {(None, 0x1000), (None, 0x2000)}
    # another entry on the same tensors shares the descriptors and the stream's buffer
    other = "gemm.cublaslt.a66.t23.s35.k1.r0.w0.c7.i0.cl5"
    s.bind(p, KernelConfig.from_id(other), a, b, out)(a, b, out)
    assert len(_FakeGemm.built) == 1 and gemm.runs[-1][3] is ws2
    assert gemm.runs[-1][0] == ("algo", other.removeprefix("gemm.cublaslt."))
    # a repeated bind rebuilds nothing
    s.bind(p, KernelConfig.from_id(LT_ID), a, b, out)
    assert len(gemm.rebuilt) == 2 and len(_FakeGemm.built) == 1
    # launch = bind + call
    s.launch(p, KernelConfig.from_id(LT_ID), a, b, out)
    assert gemm.runs[-1][0] == ("algo", ENTRY)


def test_a_captured_launch_gets_a_workspace_of_its_own(fake_cuda):
    """Inside CUDA graph capture the stream's kept workspace would be baked into the graph
    (and shared by a replay on another stream with the eager launches there): each captured
    launch gets one of its own, on any stream, and the kept ones stay as they were."""
    torch, streams = fake_cuda
    s, p, (a, b, out), run = _bound(torch, "cc", torch.float16)
    run(a, b, out)                        # eager on stream 0x1000: its buffer exists
    (gemm,) = _FakeGemm.built
    kept = gemm.runs[-1][3]
    streams.capturing = True
    run(a, b, out)                        # captured on the stream with a kept buffer
    first = gemm.runs[-1][3]
    assert first is not kept and first.dtype == torch.uint8 and first.numel() == 4096
    run(a, b, out)                        # a second captured launch: another one again
    assert gemm.runs[-1][3] is not first and gemm.runs[-1][3] is not kept
    streams.handle = 0x3000               # captured on a stream never used eagerly: runs
    run(a, b, out)
    assert gemm.runs[-1][2] == 0x3000 and gemm.runs[-1][3] is not kept
    assert set(s._workspaces) == {(None, 0x1000)} and s._workspaces[(None, 0x1000)] is kept
    streams.capturing = False             # eager again: the kept buffer, and a new stream's own
    streams.handle = 0x1000
    run(a, b, out)
    assert gemm.runs[-1][3] is kept
    streams.handle = 0x3000
    run(a, b, out)
    assert gemm.runs[-1][3] is s._workspaces[(None, 0x3000)] is not kept


def test_first_bind_on_a_device_is_refused_inside_capture(fake_cuda):
    torch, streams = fake_cuda
    s = CublasLtSolver()
    p = GemmProblem(16, 32, 64)
    a, b, out = _tensors(torch, p, torch.bfloat16)
    streams.capturing = True
    with pytest.raises(NotInThisContextError, match="no handle on device"):
        s.bind(p, KernelConfig.from_id(LT_ID), a, b, out)
    assert _FakeGemm.built == []
    streams.capturing = False
    s.bind(p, KernelConfig.from_id(LT_ID), a, b, out)
    streams.capturing = True              # the device is ready now: new tensors are fine
    a2, b2, out2 = _tensors(torch, GemmProblem(8, 32, 64), torch.bfloat16)
    s.bind(GemmProblem(8, 32, 64), KernelConfig.from_id(LT_ID), a2, b2, out2)
    assert len(_FakeGemm.built) == 2


def test_bind_on_batch_one_3d_tensors_runs_on_their_views(fake_cuda):
    torch, _ = fake_cuda
    s = CublasLtSolver()
    p = GemmProblem(16, 32, 64)
    a, b, out = (t.unsqueeze(0) for t in _tensors(torch, p, torch.bfloat16))
    run = s.bind(p, KernelConfig.from_id(LT_ID), a, b, out)
    assert run(a, b, out) is out
    (gemm,) = _FakeGemm.built
    assert gemm.args == cublaslt.lt_args(p)
    assert gemm.runs[-1][1] == (a[0].data_ptr(), b[0].data_ptr(), out[0].data_ptr())
    two = torch.empty(2, 16, 64, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="3-D ones of batch 1"):
        run(two, b.expand(2, -1, -1), out.expand(2, -1, -1))
    with pytest.raises(ValueError, match=r"gemm\.bf16\.rr\.m16\.n32\.k64"):
        s.bind(p, KernelConfig.from_id(LT_ID), two, b.expand(2, -1, -1),
               out.expand(2, -1, -1))


def test_bind_names_the_problem_on_a_refused_entry(fake_cuda):
    torch, _ = fake_cuda
    s = CublasLtSolver()
    p = GemmProblem(16, 32, 64)
    a, b, out = _tensors(torch, p, torch.bfloat16)
    bad = KernelConfig("gemm.cublaslt", entry="a999.t1.s1.k1.r0.w0.c0.i0.cl0")
    with pytest.raises(solvers.ConfigInvalidError,
                       match=r"gemm\.cublaslt\.a999.* on gemm\.bf16\.rr\.m16\.n32\.k64: .*"
                             r"NOT_SUPPORTED"):
        s.bind(p, bad, a, b, out)


def test_bind_names_the_problem_on_bad_tensors(monkeypatch):
    """Without the fake, for_tensors refuses CPU tensors: the message names the problem, its
    dtype and the device."""
    torch = pytest.importorskip("torch")
    s = CublasLtSolver()
    p = GemmProblem(16, 32, 64)
    a, b, out = _tensors(torch, p, torch.bfloat16)
    with pytest.raises(ValueError, match=r"gemm\.bf16\.rr\.m16\.n32\.k64 \(bf16, tensors on "
                                         r"cpu\).*one CUDA device"):
        s.bind(p, KernelConfig.from_id(LT_ID), a, b, out)


def test_run_accepts_a_workspace_and_checks_its_size():
    """LtGemm.run's workspace argument: refused when smaller than WORKSPACE_BYTES, before
    cuBLASLt sees it (no library needed to get that far)."""
    torch = pytest.importorskip("torch")
    plan = object.__new__(lt.LtGemm)
    plan.signature = ((4, 8), (8, 16), (4, 16), (8, 1), (16, 1), 16, "bfloat16")
    a, b = torch.zeros(4, 8, dtype=torch.bfloat16), torch.zeros(8, 16, dtype=torch.bfloat16)
    out = torch.zeros(4, 16, dtype=torch.bfloat16)
    small = torch.empty(lt.WORKSPACE_BYTES - 1, dtype=torch.uint8)
    with pytest.raises(ValueError, match="smaller than"):
        plan.run(None, a, b, out, 0, small)


def _plan_without_library(calls: list, status: int = 0):
    """An LtGemm of a 4x8 @ 8x16 bf16 signature whose cublasLtMatmul records its arguments
    into ``calls`` and returns ``status``."""
    plan = object.__new__(lt.LtGemm)
    plan.signature = ((4, 8), (8, 16), (4, 16), (8, 1), (16, 1), 16, "bfloat16")
    plan.device_index, plan.handle, plan.desc = 3, "handle", "desc"
    plan.lay_a, plan.lay_b, plan.lay_c = "lay_a", "lay_b", "lay_c"
    plan._alpha, plan._beta = ctypes.c_float(1.0), ctypes.c_float(0.0)
    plan._scalars = (ctypes.byref(plan._alpha), ctypes.byref(plan._beta))

    class FakeLib:
        def cublasLtMatmul(self, *args):
            calls.append(args)
            return status

    plan.lib = FakeLib()
    return plan


def test_shared_workspace_only_for_launches_that_pass_none(monkeypatch):
    """The solver passes a workspace per (device, stream): the device's shared one (for the
    probes) must then never be allocated, or it holds 32 MiB more a device."""
    torch = pytest.importorskip("torch")
    calls = []
    plan = _plan_without_library(calls)
    shared = torch.empty(lt.WORKSPACE_BYTES, dtype=torch.uint8)
    asked = []
    monkeypatch.setattr(lt, "shared_workspace", lambda i: asked.append(i) or shared)
    a, b = torch.zeros(4, 8, dtype=torch.bfloat16), torch.zeros(8, 16, dtype=torch.bfloat16)
    out = torch.zeros(4, 16, dtype=torch.bfloat16)
    own = torch.empty(lt.WORKSPACE_BYTES, dtype=torch.uint8)
    plan.run(lt._Algo(), a, b, out, 0, own)
    assert asked == [] and [c[-3] for c in calls] == [own.data_ptr()]  # workspace pointer
    plan.run(lt._Algo(), a, b, out, 0)
    assert asked == [3] and calls[-1][-3] == shared.data_ptr()


def test_launcher_passes_what_run_passes_and_names_a_failure():
    """The prepared launch's unchecked call gives cublasLtMatmul the same arguments as the
    checked run(): the operands swapped into cuBLASLt's column-major view (b is its A), out
    as both C and D, the workspace and its size, the stream."""
    torch = pytest.importorskip("torch")
    calls = []
    plan = _plan_without_library(calls)
    a, b = torch.zeros(4, 8, dtype=torch.bfloat16), torch.zeros(8, 16, dtype=torch.bfloat16)
    out = torch.zeros(4, 16, dtype=torch.bfloat16)
    ws = torch.empty(lt.WORKSPACE_BYTES, dtype=torch.uint8)
    algo = lt._Algo()
    plan.run(algo, a, b, out, 7, ws)
    plan.launcher(algo)(a.data_ptr(), b.data_ptr(), out.data_ptr(), ws, 7)
    checked, prepared = calls
    swapped = ("handle", "desc", plan._scalars[0], b.data_ptr(), "lay_a", a.data_ptr(),
               "lay_b", plan._scalars[1], out.data_ptr(), "lay_c", out.data_ptr(), "lay_c")
    assert checked[:12] == prepared[:12] == swapped
    assert checked[12]._obj is prepared[12]._obj is algo
    assert checked[13:] == prepared[13:] == (ws.data_ptr(), lt.WORKSPACE_BYTES, 7)
    failing = _plan_without_library([], status=13)
    with pytest.raises(lt.LtError, match=r"cublasLtMatmul: cuBLAS status 13"):
        failing.launcher(algo)(a.data_ptr(), b.data_ptr(), out.data_ptr(), ws, 7)


# -- the perf-db key ------------------------------------------------------------------------

def test_plan_fingerprint_unchanged(monkeypatch):
    """gemm.cublaslt has no ``plan`` and no ``host_plan``: adding it must leave the launch-plan
    fingerprint as it was, or every perf-db winner measured before would be retired (the
    perf-db's source key hashes it). 707471ab21c88ace was printed on the tree before the family
    existed; it moves only with the Triton families' plans or a vendor's host plan. The
    families appended since (session 59: gemm.gemv_n_splitk) add their own plans to it, and
    without them it is the earlier value: every earlier family's plans are unchanged
    (``perfdb.SAME_SPEED`` relies on that)."""
    from tilepick.solvers.fingerprint import plan_fingerprint

    s = solvers.SOLVERS["gemm.cublaslt"]
    assert not hasattr(s, "plan") and not hasattr(s, "host_plan")
    assert plan_fingerprint() == "8f22364b129044c8"
    monkeypatch.setattr(solvers, "SOLVERS", {f: v for f, v in solvers.SOLVERS.items()
                                             if f != "gemm.gemv_n_splitk"})
    assert plan_fingerprint() == "707471ab21c88ace"


def test_prepared_launch_refuses_tensors_on_another_device(fake_cuda):
    torch, _ = fake_cuda
    s = CublasLtSolver()
    p = GemmProblem(16, 32, 64)
    a, b, out = _tensors(torch, p, torch.bfloat16)
    run = s.bind(p, KernelConfig.from_id(LT_ID), a, b, out)
    elsewhere = torch.empty(16, 32, dtype=torch.bfloat16, device="meta")
    with pytest.raises(ValueError, match=r"k64: out was prepared for \(16, 32\) strides "
                                         r"\(32, 1\) torch.bfloat16 on cpu, got .* on meta$"):
        run(a, b, elsewhere)
    # another signature on the right device: the descriptors would read out of bounds
    wider = torch.empty(16, 64, dtype=torch.bfloat16)[:, :32]
    with pytest.raises(ValueError, match=r"out was prepared for .* strides \(32, 1\) .*, "
                                         r"got \(16, 32\) strides \(64, 1\)"):
        run(a, b, wider)
    with pytest.raises(ValueError, match=r"^gemm\.cublaslt\S* on \S*: a was prepared .*"
                                         r"torch.bfloat16 on cpu, got .*torch.float16 on cpu$"):
        run(a.half(), b, out)
    assert _FakeGemm.built[0].runs == []
    run(a, b, out)
    assert len(_FakeGemm.built[0].runs) == 1
