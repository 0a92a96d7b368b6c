"""The cuBLASLt binding's CPU-checkable parts: algorithm names, operand layouts, the library's
lookup and declarations, the enum tables. Its calls into cuBLASLt run on the GPU only
(``benchmarks/cublaslt_confirm.py`` rebuilt all 1,152 heuristic entries of the LLM suite from
their names, byte for byte)."""

import ctypes

import pytest

from tilepick.solvers import cublaslt_lib as lt


def test_name_round_trip():
    name = "a66.t197.s35.k1.r0.w0.c2.i0.cl5"
    algo = lt.LtAlgo.parse(name)
    assert (algo.algo, algo.tile, algo.stages, algo.splitk, algo.custom, algo.cluster) == \
        (66, 197, 35, 1, 2, 5)
    assert algo.name == name
    assert lt.LtAlgo.parse(algo.name) == algo


@pytest.mark.parametrize("bad", [
    "lt.a66.t197.s35.k1.r0.w0.c2.i0.cl5",      # the probe's prefixed form
    "a66.t197.s35.k1.r0.w0.c2.i0",             # a field missing
    "a66.t197.s35.k1.r0.w0.c2.cl5.i0",         # fields out of order
    "a66.tX.s35.k1.r0.w0.c2.i0.cl5",           # not a number
    "gemm.cublas",
])
def test_bad_names_are_refused_by_name(bad):
    with pytest.raises(ValueError, match="not a cuBLASLt algorithm name"):
        lt.LtAlgo.parse(bad)


@pytest.mark.parametrize("rows,cols,strides,want", [
    (4096, 1024, (4096, 1), (lt.OP_N, 4096, 1024, 4096)),      # row-major [1024, 4096]
    (4096, 1024, (4160, 1), (lt.OP_N, 4096, 1024, 4160)),      # padded row stride
    (4096, 1024, (1, 1024), (lt.OP_T, 1024, 4096, 1024)),      # column-major
    (4096, 1024, (1, 1032), (lt.OP_T, 1024, 4096, 1032)),      # padded column stride
    (1, 4096, (1, 1), (lt.OP_N, 1, 4096, 1)),                  # a single column
    (4096, 1, (4096, 1), (lt.OP_N, 4096, 1, 4096)),            # a single row
])
def test_operand_layout(rows, cols, strides, want):
    assert lt.operand_layout(rows, cols, strides) == want


def test_operand_layout_refuses_other_strides():
    with pytest.raises(ValueError, match="neither row- nor column-major"):
        lt.operand_layout(64, 64, (2, 128))


def test_loaded_library_path():
    maps = ("7f01 r-xp 00000000 00:2a 1 /site/nvidia/cu13/lib/libcublas.so.13\n"
            "7f02 r-xp 00000000 00:2a 2 /site/nvidia/cu13/lib/libcublasLt.so.13\n")
    assert lt.loaded_library_path(maps) == "/site/nvidia/cu13/lib/libcublasLt.so.13"
    assert lt.loaded_library_path(maps.splitlines()[0]) is None
    assert lt.loaded_library_path("") is None


def test_library_without_cuda_says_so():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA machine")
    lt.library.cache_clear()
    with pytest.raises(lt.LtError, match="needs a CUDA device"):
        lt.library()


@pytest.mark.parametrize("shapes,dtypes,why", [
    (((4, 8), (8, 16), (4, 16, 1)), None, "2-D operands"),
    (((4, 8), (7, 16), (4, 16)), None, "do not multiply"),
    (((4, 8), (8, 16), (4, 15)), None, "do not multiply"),
    (((4, 8), (8, 16), (4, 16)), ("bfloat16", "float16", "bfloat16"), "dtypes differ"),
    (((4, 8), (8, 16), (4, 16)), None, "one CUDA device"),     # CPU tensors
])
def test_for_tensors_refuses_what_it_cannot_serve(shapes, dtypes, why):
    torch = pytest.importorskip("torch")
    dtypes = dtypes or ("bfloat16",) * 3
    a, b, out = (torch.zeros(s, dtype=getattr(torch, d)) for s, d in zip(shapes, dtypes))
    with pytest.raises(ValueError, match=why):
        lt.for_tensors(a, b, out)


def test_for_tensors_refuses_a_column_major_out():
    torch = pytest.importorskip("torch")
    a, b = torch.zeros(4, 8), torch.zeros(8, 16)
    with pytest.raises(ValueError, match="out must be row-major"):
        lt.for_tensors(a, b, torch.zeros(16, 4).t())


def test_run_refuses_tensors_of_another_signature_before_launching():
    """A plan's descriptors describe one signature; other tensors would be read out of
    bounds, so run() refuses them before calling cuBLASLt (no library needed to see it)."""
    torch = pytest.importorskip("torch")
    plan = object.__new__(lt.LtGemm)   # the signature only: no library on this machine
    plan.signature = ((4, 8), (8, 16), (4, 16), (8, 1), (16, 1), 16, "bfloat16")
    a, b = torch.zeros(4, 8, dtype=torch.bfloat16), torch.zeros(8, 16, dtype=torch.bfloat16)
    for out, other in ((torch.zeros(4, 16, dtype=torch.float16), None),      # dtype
                       (torch.zeros(4, 32, dtype=torch.bfloat16)[:, :16], None),   # ldc
                       (torch.zeros(4, 16, dtype=torch.bfloat16), (8, 32))):    # a's shape
        x = torch.zeros(*other, dtype=torch.bfloat16) if other else a
        with pytest.raises(ValueError, match="do not fit this plan"):
            plan.run(None, x, b, out, 0)


class _FakeLib:
    """Records the declarations ``_declare`` makes."""

    def __init__(self):
        self.fns = {}

    def __getattr__(self, name):
        return self.fns.setdefault(name, type("Fn", (), {})())


def test_declarations_match_the_c_signatures():
    lib = _FakeLib()
    lt._declare(lib)
    arity = {"cublasLtMatmul": 16, "cublasLtMatmulAlgoGetHeuristic": 10,
             "cublasLtMatmulAlgoInit": 9, "cublasLtMatmulAlgoCheck": 8,
             "cublasLtMatrixLayoutCreate": 5, "cublasLtMatmulAlgoConfigGetAttribute": 5}
    for name, n in arity.items():
        assert len(lib.fns[name].argtypes) == n, name
    for name, fn in lib.fns.items():   # statuses, but the version is a size_t
        assert fn.restype is (ctypes.c_size_t if name == "cublasLtGetVersion" else ctypes.c_int)
    # sizes and ld are 64-bit (undeclared, ctypes would pass them as 32-bit ints)
    assert lib.fns["cublasLtMatmul"].argtypes[14] is ctypes.c_size_t
    assert lib.fns["cublasLtMatrixLayoutCreate"].argtypes[4] is ctypes.c_int64
    assert ctypes.sizeof(lt._HeuristicResult) == 96   # cublasLtMatmulHeuristicResult_t


def test_enum_tables_and_describe():
    e = lt.enums()
    assert e["tile"][20] == (128, 128) and e["tile"][23] == (128, 256)
    assert e["stages"][35] == (64, 0)        # CUBLASLT_MATMUL_STAGES_64xAUTO
    assert e["cluster"][2] == (1, 1, 1)
    text = lt.describe(lt.LtAlgo.parse("a66.t23.s35.k1.r0.w0.c7.i0.cl5"))
    assert text == "algo 66 tile 128x256 k64xauto cluster 1x2x1 split-K 1 custom 7"
    assert "tile9999" in lt.describe(lt.LtAlgo.parse("a1.t9999.s99.k1.r0.w0.c0.i0.cl99"))
