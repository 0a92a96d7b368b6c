"""GemmProblem: validation, keys, alignment facts and description from torch tensors."""

import random

import pytest
import torch

from tilepick.problem import LAYOUTS, DType, GemmProblem, ProblemError
from tilepick.tensors import make_inputs

# -- validation ------------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs, needles", [
    (dict(m=0, n=4, k=4), ["m=0", "> 0"]),
    (dict(m=4, n=-3, k=4), ["n=-3", "> 0"]),
    (dict(m=4, n=4, k=0), ["k=0"]),
    (dict(m=4, n=4, k=4, batch=0), ["batch=0"]),
    (dict(m=4, n=4, k=4, batch=-2), ["batch=-2"]),
])
def test_sizes_must_be_positive(kwargs, needles):
    with pytest.raises(ProblemError) as exc:
        GemmProblem(**kwargs)
    for needle in needles:
        assert needle in str(exc.value)


@pytest.mark.parametrize("name, value", [
    ("m", 4.0), ("n", "8"), ("k", None), ("batch", 2.5), ("m", True), ("k", False),
])
def test_sizes_must_be_ints(name, value):
    kwargs = dict(m=4, n=4, k=4)
    kwargs[name] = value
    with pytest.raises(ProblemError) as exc:
        GemmProblem(**kwargs)
    msg = str(exc.value)
    assert name in msg and "int" in msg and repr(value) in msg


@pytest.mark.parametrize("dtype", ["int8", "fp64", "float64", "e5m2", ""])
def test_unknown_dtype(dtype):
    with pytest.raises(ProblemError) as exc:
        GemmProblem(16, 16, 16, dtype=dtype)
    msg = str(exc.value)
    assert repr(dtype) in msg
    assert "bf16" in msg  # lists the choices


@pytest.mark.parametrize("layout", ["RR", "rt", "r", "rrr", "", "nn"])
def test_unknown_layout(layout):
    with pytest.raises(ProblemError) as exc:
        GemmProblem(16, 16, 16, layout=layout)
    assert repr(layout) in str(exc.value)
    assert "rc" in str(exc.value)


@pytest.mark.parametrize("dtype", ["fp16", "bf16", "fp8e4m3"])
def test_tf32_only_for_fp32(dtype):
    with pytest.raises(ProblemError) as exc:
        GemmProblem(16, 16, 16, dtype=dtype, tf32=True)
    assert "tf32" in str(exc.value) and dtype in str(exc.value)
    assert GemmProblem(16, 16, 16, dtype="fp32", tf32=True).tf32


@pytest.mark.parametrize("layout, name, value, packed", [
    ("rr", "lda", 15, 16),   # A row-major: lda >= k
    ("cr", "lda", 7, 8),     # A column-major: lda >= m
    ("rr", "ldb", 23, 24),   # B row-major: ldb >= n
    ("rc", "ldb", 15, 16),   # B column-major: ldb >= k
    ("cc", "ldc", 1, 24),    # C always row-major: ldc >= n
])
def test_leading_dimension_below_packed(layout, name, value, packed):
    with pytest.raises(ProblemError) as exc:
        GemmProblem(8, 24, 16, layout=layout, **{name: value})
    msg = str(exc.value)
    assert f"{name}={value}" in msg and str(packed) in msg and layout in msg


@pytest.mark.parametrize("name", ["lda", "ldb", "ldc"])
def test_leading_dimensions_must_be_ints(name):
    with pytest.raises(ProblemError):
        GemmProblem(4, 4, 8, **{name: 10.5})


def test_batch_limit():
    assert GemmProblem(2, 2, 2, batch=65535).batch == 65535
    with pytest.raises(ProblemError) as exc:
        GemmProblem(2, 2, 2, batch=65536)
    assert "65536" in str(exc.value) and "65535" in str(exc.value)


@pytest.mark.parametrize("align", [0, 3, 32, 6])
def test_base_align_must_be_power_of_two_up_to_16(align):
    with pytest.raises(ProblemError) as exc:
        GemmProblem(8, 8, 8, base_align=align)
    assert str(align) in str(exc.value)


def test_problem_error_is_value_error():
    assert issubclass(ProblemError, ValueError)


def test_defaults_and_aliases():
    p = GemmProblem(10, 20, 30)
    assert (p.batch, p.dtype, p.layout, p.tf32, p.base_align) == (1, DType.BF16, "rr", False, 16)
    assert (p.lda, p.ldb, p.ldc) == (30, 20, 20)
    assert GemmProblem(10, 20, 30, layout="cc").lda == 10
    assert GemmProblem(10, 20, 30, layout="cc").ldb == 30
    for alias, dt in [("bfloat16", DType.BF16), ("half", DType.FP16), ("float16", DType.FP16),
                      ("float32", DType.FP32), ("FP32", DType.FP32), ("fp8", DType.FP8),
                      ("e4m3", DType.FP8), (DType.FP16, DType.FP16)]:
        assert GemmProblem(4, 4, 4, dtype=alias).dtype is dt
    # explicit packed leading dimensions are the same problem as the defaults
    assert GemmProblem(10, 20, 30, lda=30, ldb=20, ldc=20) == p
    assert hash(GemmProblem(10, 20, 30, lda=30)) == hash(p)


def test_dtype_properties():
    assert [d.itemsize for d in DType] == [2, 2, 4, 1]
    assert DType.FP8.out_dtype is DType.BF16
    assert DType.FP16.out_dtype is DType.FP16
    assert DType.FP8.torch_dtype is torch.float8_e4m3fn
    assert DType.from_torch(torch.bfloat16) is DType.BF16
    with pytest.raises(ProblemError, match="int32"):
        DType.from_torch(torch.int32)


def test_flops_and_min_bytes():
    p = GemmProblem(2, 3, 4, batch=5, dtype="fp8e4m3")
    assert p.flops == 2 * 2 * 3 * 4 * 5
    # fp8 inputs (1 byte), bf16 output (2 bytes)
    assert p.min_bytes == 5 * ((2 * 4 + 4 * 3) * 1 + 2 * 3 * 2)


# -- keys ------------------------------------------------------------------------------------


@pytest.mark.parametrize("problem, key", [
    (GemmProblem(1024, 4096, 4096), "gemm.bf16.rr.m1024.n4096.k4096"),
    (GemmProblem(1, 2, 3, batch=4, dtype="fp16", layout="rc"), "gemm.fp16.rc.m1.n2.k3.b4"),
    (GemmProblem(64, 64, 64, dtype="fp32", tf32=True), "gemm.tf32.rr.m64.n64.k64"),
    (GemmProblem(64, 64, 64, dtype="fp32"), "gemm.fp32.rr.m64.n64.k64"),
    (GemmProblem(10, 20, 30, lda=31), "gemm.bf16.rr.m10.n20.k30.lda31"),
    (GemmProblem(10, 20, 30, layout="cr", lda=12), "gemm.bf16.cr.m10.n20.k30.lda12"),
    (GemmProblem(10, 20, 30, layout="cr", lda=30), "gemm.bf16.cr.m10.n20.k30.lda30"),
    (GemmProblem(10, 20, 30, ldb=21, ldc=40), "gemm.bf16.rr.m10.n20.k30.ldb21.ldc40"),
    (GemmProblem(10, 20, 30, lda=30, ldb=20, ldc=20), "gemm.bf16.rr.m10.n20.k30"),
    (GemmProblem(8, 8, 8, base_align=4), "gemm.bf16.rr.m8.n8.k8.al4"),
    (GemmProblem(5, 6, 7, batch=2, dtype="fp8e4m3", layout="cc", lda=9, ldb=8, ldc=7, base_align=2),
     "gemm.fp8e4m3.cc.m5.n6.k7.b2.lda9.ldb8.ldc7.al2"),
])
def test_key_exact_format(problem, key):
    assert problem.key() == key
    assert problem.key() == problem.key()  # stable
    assert GemmProblem.from_key(key) == problem


def _random_problem(rng: random.Random) -> GemmProblem:
    dtype = rng.choice(["fp16", "bf16", "fp32", "fp8e4m3"])
    layout = rng.choice(LAYOUTS)
    m, n, k = (rng.choice([1, 2, 7, 16, 37, 128, 1000, 4096, 65536]) for _ in range(3))
    kw = {}
    probe = GemmProblem(m, n, k, layout=layout)
    for name in ("lda", "ldb", "ldc"):
        if rng.random() < 0.3:
            kw[name] = getattr(probe, name) + rng.choice([1, 3, 8, 64])
    return GemmProblem(m, n, k, batch=rng.choice([1, 1, 2, 3, 512]), dtype=dtype, layout=layout,
                       tf32=dtype == "fp32" and rng.random() < 0.5,
                       base_align=rng.choice([16, 16, 8, 4, 2, 1]), **kw)


def test_key_round_trip_random():
    rng = random.Random(1234)
    problems = [_random_problem(rng) for _ in range(1000)]
    keys = set()
    for p in problems:
        key = p.key()
        q = GemmProblem.from_key(key)
        assert q == p, key
        assert q.key() == key
        keys.add(key)
    # distinct problems have distinct keys
    assert len(keys) == len(set(problems))


@pytest.mark.parametrize("key", [
    "conv.bf16.rr.m1.n1.k1",
    "gemm.bf16.rr.m1.n1",
    "gemm.bf16.rr.m1.n1.kx",
    "gemm.bf16.rr.m1.n1.k1.zz3",
    "gemm.bf16.rr.m1.n1.k1.lda",
    "gemm.int8.rr.m1.n1.k1",
    "gemm.bf16.xy.m1.n1.k1",
    "gemm.bf16.rr.m0.n1.k1",
    "gemm.fp16.rr.m1.n1.k1.al3",
    "",
])
def test_from_key_rejects_bad_keys(key):
    with pytest.raises(ProblemError):
        GemmProblem.from_key(key)


def test_from_key_missing_size_field_is_problem_error():
    with pytest.raises(ProblemError):
        GemmProblem.from_key("gemm.bf16.rr.m1.n1.b2")


def test_to_dict_and_replace():
    p = GemmProblem(3, 5, 7, dtype="fp16", layout="rc")
    d = p.to_dict()
    assert d["dtype"] == "fp16" and d["layout"] == "rc" and d["ldb"] == 7
    assert GemmProblem(**d) == p
    q = p.replace(batch=4)
    assert q.batch == 4 and q.key().endswith(".b4") and p.batch == 1


# -- operand alignment -----------------------------------------------------------------------


@pytest.mark.parametrize("problem, operand, align", [
    (GemmProblem(64, 64, 1000), "a", 16),                    # bf16: 2000-byte rows
    (GemmProblem(64, 64, 1000, lda=1001), "a", 2),           # odd lda: 2002-byte rows
    (GemmProblem(64, 64, 1001), "a", 2),                     # odd K: masked edge
    (GemmProblem(64, 64, 1004), "a", 8),                     # 2008 bytes
    (GemmProblem(64, 64, 1000, base_align=4), "a", 4),       # the base pointer caps it
    (GemmProblem(64, 64, 6, dtype="fp32"), "a", 8),          # 24 bytes
    (GemmProblem(64, 64, 1000, dtype="fp8e4m3"), "a", 8),    # 1000 bytes
    (GemmProblem(36, 64, 64, layout="cr"), "a", 8),          # col-major A: M=36 -> 72 bytes
    (GemmProblem(8, 12, 64, layout="rr"), "b", 8),           # row-major B: N=12 -> 24 bytes
    (GemmProblem(8, 12, 64, layout="rc"), "b", 16),          # col-major B: K=64 -> 128 bytes
    (GemmProblem(8, 12, 64, layout="rc", ldb=65), "b", 2),
    (GemmProblem(8, 12, 64, dtype="fp8e4m3"), "c", 8),       # C is bf16 for fp8: 24 bytes
    (GemmProblem(8, 4, 4, dtype="fp8e4m3"), "a", 4),         # 4 bytes
    (GemmProblem(8, 64, 64, ldc=65, dtype="fp32"), "c", 4),
])
def test_operand_align(problem, operand, align):
    assert problem.operand_align(operand) == align


def test_operand_align_unknown_operand():
    with pytest.raises(ValueError):
        GemmProblem(8, 8, 8).operand_align("d")


# -- from_tensors ----------------------------------------------------------------------------

M, N, K = 6, 10, 14


def _operands(layout, dtype=torch.float32, m=M, n=N, k=K):
    a = torch.randn(m, k).to(dtype) if layout[0] == "r" else torch.randn(k, m).to(dtype).t()
    b = torch.randn(k, n).to(dtype) if layout[1] == "r" else torch.randn(n, k).to(dtype).t()
    return a, b


@pytest.mark.parametrize("layout", LAYOUTS)
def test_from_tensors_layouts(layout):
    a, b = _operands(layout)
    p = GemmProblem.from_tensors(a, b)
    assert p.layout == layout
    assert (p.m, p.n, p.k, p.batch) == (M, N, K, 1)
    assert p.dtype is DType.FP32 and not p.tf32
    # packed operands: the default leading dimensions
    assert p == GemmProblem(M, N, K, dtype="fp32", layout=layout)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_from_tensors_batched(layout):
    B = 3
    a = torch.randn(B, M, K) if layout[0] == "r" else torch.randn(B, K, M).transpose(1, 2)
    b = torch.randn(B, K, N) if layout[1] == "r" else torch.randn(B, N, K).transpose(1, 2)
    out = torch.empty(B, M, N)
    p = GemmProblem.from_tensors(a, b, out)
    assert p == GemmProblem(M, N, K, batch=B, dtype="fp32", layout=layout)


def test_from_tensors_padded_leading_dimensions():
    a = torch.randn(M, K + 5)[:, :K]
    b = torch.randn(N, K + 3)[:, :K].t()          # column-major B, ldb = K + 3
    out = torch.empty(M, N + 7)[:, :N]
    p = GemmProblem.from_tensors(a, b, out)
    assert (p.layout, p.lda, p.ldb, p.ldc) == ("rc", K + 5, K + 3, N + 7)


def test_from_tensors_dtypes_and_tf32():
    a, b = _operands("rr", torch.bfloat16)
    assert GemmProblem.from_tensors(a, b).dtype is DType.BF16
    a, b = _operands("rr", torch.float16)
    assert GemmProblem.from_tensors(a, b).dtype is DType.FP16
    a, b = _operands("rc", torch.float8_e4m3fn)
    out = torch.empty(M, N, dtype=torch.bfloat16)
    assert GemmProblem.from_tensors(a, b, out).dtype is DType.FP8
    a, b = _operands("rr", torch.float32)
    assert GemmProblem.from_tensors(a, b, tf32=True).tf32
    assert not GemmProblem.from_tensors(a, b, tf32=False).tf32
    # tf32 is meaningless for half-precision inputs and dropped, not an error
    a, b = _operands("rr", torch.float16)
    assert not GemmProblem.from_tensors(a, b, tf32=True).tf32


def test_from_tensors_base_alignment():
    buf = torch.randn(M * K + 1).to(torch.bfloat16)
    a = buf[1:].view(M, K)                       # 2 bytes past a 64-byte aligned allocation
    b = torch.randn(K, N).to(torch.bfloat16)
    assert a.data_ptr() % 16 == 2
    assert GemmProblem.from_tensors(a, b).base_align == 2
    buf = torch.randn(M * K + 2)
    a = buf[2:].view(M, K)                       # fp32, 8 bytes past
    assert GemmProblem.from_tensors(a, torch.randn(K, N)).base_align == 8
    # batched: every batch's matrix counts, so an odd batch stride lowers the alignment
    a = torch.randn(2, 3, 5).to(torch.bfloat16)  # batch stride 15 elements = 30 bytes
    b = torch.randn(2, 5, 8).to(torch.bfloat16)
    assert GemmProblem.from_tensors(a, b).base_align == 2


def test_from_tensors_single_row_and_column():
    a = torch.randn(1, K)
    b = torch.randn(K, 1)
    p = GemmProblem.from_tensors(a, b, torch.empty(1, 1))
    assert (p.m, p.n, p.k, p.layout, p.lda, p.ldb, p.ldc) == (1, 1, K, "rr", K, 1, 1)
    # a column vector as out of a wider buffer: ldc from its row stride
    out = torch.empty(M, 4)[:, :1]
    p = GemmProblem.from_tensors(torch.randn(M, K), torch.randn(K, 1), out)
    assert (p.n, p.ldc) == (1, 4)


@pytest.mark.parametrize("seed", range(4))
def test_from_tensors_of_make_inputs_round_trip(seed):
    """make_inputs lays operands out as a problem says; from_tensors must read the same back."""
    rng = random.Random(seed)
    for _ in range(50):
        dtype = rng.choice(["fp16", "bf16", "fp32", "fp8e4m3"])
        layout = rng.choice(LAYOUTS)
        m, n, k = (rng.randint(2, 40) for _ in range(3))
        probe = GemmProblem(m, n, k, layout=layout)
        kw = {name: getattr(probe, name) + rng.choice([0, 0, 1, 5, 16]) for name in ("lda", "ldb", "ldc")}
        itemsize = DType.parse(dtype).itemsize
        align = rng.choice([a for a in (1, 2, 4, 8, 16) if a >= itemsize])
        p = GemmProblem(m, n, k, dtype=dtype, layout=layout, base_align=align,
                        tf32=dtype == "fp32" and rng.random() < 0.5, **kw)
        inp = make_inputs(p, "cpu", seed)
        q = GemmProblem.from_tensors(inp.a, inp.b, inp.out, tf32=p.tf32)
        assert q == p, (p.key(), q.key())


# -- from_tensors: bad input -----------------------------------------------------------------


def _raises(*args, **kwargs) -> str:
    with pytest.raises(ProblemError) as exc:
        GemmProblem.from_tensors(*args, **kwargs)
    return str(exc.value)


def test_mismatched_inner_dimensions():
    msg = _raises(torch.randn(4, 5), torch.randn(6, 7))
    assert "inner dimensions" in msg and "(4, 5)" in msg and "(6, 7)" in msg


def test_mismatched_batches():
    msg = _raises(torch.randn(2, 4, 5), torch.randn(3, 5, 7))
    assert "batch" in msg and "(2, 4, 5)" in msg and "(3, 5, 7)" in msg


def test_mixed_ranks():
    msg = _raises(torch.randn(4, 5), torch.randn(2, 5, 7))
    assert "(4, 5)" in msg and "(2, 5, 7)" in msg


@pytest.mark.parametrize("shape", [(5,), (2, 2, 4, 5), ()])
def test_wrong_rank(shape):
    msg = _raises(torch.randn(shape), torch.randn(5, 7))
    assert "2-D or 3-D" in msg and str(tuple(shape)) in msg


def test_not_a_tensor():
    msg = _raises([[1.0, 2.0]], torch.randn(2, 2))
    assert "torch.Tensor" in msg and "list" in msg


def test_dtype_mix():
    msg = _raises(torch.randn(4, 5, dtype=torch.float16), torch.randn(5, 7, dtype=torch.bfloat16))
    assert "same dtype" in msg and "torch.float16" in msg and "torch.bfloat16" in msg


@pytest.mark.parametrize("dtype", [torch.int32, torch.float64, torch.int8, torch.complex64])
def test_unsupported_dtype(dtype):
    msg = _raises(torch.ones(4, 5, dtype=dtype), torch.ones(5, 7, dtype=dtype))
    assert str(dtype) in msg and "bfloat16" in msg


def test_different_devices():
    # a real second device needs a GPU; the meta device exercises the same check on a CPU
    msg = _raises(torch.empty(4, 5, device="meta"), torch.randn(5, 7))
    assert "meta" in msg and "cpu" in msg


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_different_devices_cuda():  # pragma: no cover - GPU machines only
    msg = _raises(torch.randn(4, 5, device="cuda"), torch.randn(5, 7))
    assert "cuda" in msg and "cpu" in msg


def test_out_on_another_device():
    msg = _raises(torch.randn(4, 5), torch.randn(5, 7), torch.empty(4, 7, device="meta"))
    assert "out" in msg and "meta" in msg


@pytest.mark.parametrize("which", ["a", "b"])
def test_out_aliases_input(which):
    a = torch.randn(4, 4)
    b = torch.randn(4, 4)
    out = (a if which == "a" else b)[:, :]  # a view of the input
    msg = _raises(a, b, out)
    assert "alias" in msg and f"input {which}" in msg


def test_out_partially_overlaps_input():
    buf = torch.randn(32)
    a = buf[:16].view(4, 4)
    out = buf[8:24].view(4, 4)
    assert "alias" in _raises(a, torch.randn(4, 4), out)
    # disjoint parts of one storage are fine
    out = buf[16:32].view(4, 4)
    assert GemmProblem.from_tensors(a, torch.randn(4, 4), out).ldc == 4


def test_out_wrong_shape():
    msg = _raises(torch.randn(4, 5), torch.randn(5, 6), torch.empty(6, 4))
    assert "(4, 6)" in msg and "(6, 4)" in msg
    msg = _raises(torch.randn(2, 4, 5), torch.randn(2, 5, 6), torch.empty(4, 6))
    assert "(2, 4, 6)" in msg and "(4, 6)" in msg


def test_out_not_a_tensor():
    msg = _raises(torch.randn(4, 5), torch.randn(5, 6), [[0.0] * 6] * 4)
    assert "(4, 6)" in msg and "list" in msg


def test_out_wrong_dtype():
    msg = _raises(torch.randn(4, 5), torch.randn(5, 6), torch.empty(4, 6, dtype=torch.float16))
    assert "torch.float32" in msg and "torch.float16" in msg
    # fp8 inputs write bf16
    a = torch.randn(4, 16).to(torch.float8_e4m3fn)
    b = torch.randn(16, 16).to(torch.float8_e4m3fn)
    msg = _raises(a, b, torch.empty(4, 16, dtype=torch.float8_e4m3fn))
    assert "torch.bfloat16" in msg and "fp8e4m3" in msg


def test_out_column_major():
    msg = _raises(torch.randn(4, 5), torch.randn(5, 6), torch.empty(6, 4).t())
    assert "row-major" in msg and "(1, 4)" in msg


def test_out_rows_overlap():
    out = torch.empty(32).as_strided((4, 6), (2, 1))  # ldc=2 < n=6
    msg = _raises(torch.randn(4, 5), torch.randn(5, 6), out)
    assert "ldc=2" in msg


@pytest.mark.parametrize("which", ["a", "b"])
def test_neither_row_nor_column_major(which):
    strided = torch.randn(10, 14)[::2, ::2]  # (5, 7), strides (28, 2)
    a, b = (strided, torch.randn(7, 3)) if which == "a" else (torch.randn(4, 5), strided)
    msg = _raises(a, b)
    assert f"{which} with shape (5, 7)" in msg and "(28, 2)" in msg and "contiguous" in msg


def test_every_other_column_is_neither_layout():
    a = torch.randn(4, 10)[:, ::2]  # (4, 5) with strides (10, 2)
    msg = _raises(a, torch.randn(5, 7))
    assert "(4, 5)" in msg and "(10, 2)" in msg


def test_broadcast_operand_rejected():
    # expand() gives a zero stride: rows alias each other
    assert "neither" in _raises(torch.randn(1, 5).expand(4, 5), torch.randn(5, 7))
    msg = _raises(torch.randn(1, 4, 5).expand(3, 4, 5), torch.randn(3, 5, 7))
    assert "batch stride 0" in msg


def test_overlapping_batches_rejected():
    a = torch.randn(64).as_strided((3, 4, 5), (10, 5, 1))  # batch stride 10 < 20
    msg = _raises(a, torch.randn(3, 5, 7))
    assert "batch stride 10" in msg


def test_out_broadcast_batch_rejected():
    out = torch.empty(1, 4, 4).expand(2, 4, 4)
    _raises(torch.randn(2, 4, 4), torch.randn(2, 4, 4), out)


def test_empty_tensors():
    msg = _raises(torch.empty(0, 4), torch.empty(4, 5))
    assert "m=0" in msg
