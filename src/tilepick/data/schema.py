"""The dataset column schema, declared once.

Every sweep writes these columns, every reader validates against them, and features, training
and evaluation take their column names from here. A row is one (problem, config) measurement.
"""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = 1

# (name, arrow type, meaning)
COLUMNS: list[tuple[str, pa.DataType, str]] = [
    # problem
    ("op", pa.string(), "operation: gemm"),
    ("problem_key", pa.string(), "GemmProblem.key(): the stable problem id"),
    ("m", pa.int64(), "rows of A and C"),
    ("n", pa.int64(), "columns of B and C"),
    ("k", pa.int64(), "inner dimension"),
    ("batch", pa.int64(), "batch count"),
    ("dtype", pa.string(), "input dtype token (fp16, bf16, fp32, tf32, fp8e4m3)"),
    ("layout", pa.string(), "rr | rc | cr | cc (A then B; r = row-major)"),
    ("lda", pa.int64(), "leading dimension of A"),
    ("ldb", pa.int64(), "leading dimension of B"),
    ("ldc", pa.int64(), "leading dimension of C"),
    ("base_align", pa.int64(), "byte alignment of every base pointer (<= 16)"),
    # config
    ("config_id", pa.string(), "KernelConfig.id: the stable config id"),
    ("family", pa.string(), "kernel family (first part of config_id)"),
    ("block_m", pa.int64(), "tile rows (0 for vendor libraries)"),
    ("block_n", pa.int64(), "tile columns"),
    ("block_k", pa.int64(), "tile depth"),
    ("group_m", pa.int64(), "grouped tile order width"),
    ("num_warps", pa.int64(), "warps per program"),
    ("num_stages", pa.int64(), "software pipeline depth"),
    ("split_k", pa.int64(), "K splits (1 = none)"),
    # measurement
    ("valid", pa.bool_(), "compiled, ran and matched the float64 reference"),
    ("invalid_reason", pa.string(), "why not valid (compile failure, wrong result, ...)"),
    ("rel_error", pa.float64(), "relative Frobenius error vs float64"),
    ("time_ms", pa.float64(), "median time (the interleaved re-timing median when retimed)"),
    ("time_p20_ms", pa.float64(), "20th percentile of the screening timing"),
    ("time_p80_ms", pa.float64(), "80th percentile of the screening timing"),
    ("reps", pa.int64(), "timed repetitions of the screening timing"),
    ("stopped_early", pa.bool_(), "screening stopped early: clearly slower than the best"),
    ("retimed", pa.bool_(), "time_ms is the median over interleaved re-timing rounds"),
    ("retime_spread", pa.float64(), "(max - min) / min of the re-timing round medians"),
    ("round_ms", pa.list_(pa.float64()),
     "the re-timing pass's round medians, in round order (null outside passes)"),
    ("tflops", pa.float64(), "2*M*N*K*batch / time"),
    ("gbps", pa.float64(), "minimum bytes moved / time"),
    ("timing_meaningful", pa.bool_(), "False for Triton-interpreter (CPU) timings"),
    ("compile_s", pa.float64(), "compile time of the config's binary (0 if cached/vendor)"),
    # provenance
    ("gpu_name", pa.string(), "GPU name"),
    ("sm_count", pa.int64(), "multiprocessors"),
    ("driver_version", pa.string(), "NVIDIA driver"),
    ("cuda_version", pa.string(), "CUDA runtime of torch"),
    ("torch_version", pa.string(), "torch"),
    ("triton_version", pa.string(), "Triton"),
    ("tilepick_version", pa.string(), "tilepick"),
    ("tilepick_commit", pa.string(), "git commit of the code that measured"),
    ("date", pa.string(), "UTC time of the measurement (ISO 8601)"),
    ("sweep_id", pa.string(), "identifier of the sweep run"),
]

SCHEMA = pa.schema([pa.field(name, typ) for name, typ, _ in COLUMNS])
NAMES = [name for name, _, _ in COLUMNS]
#: columns that follow from others (the problem and ``time_ms``): computed on reading
#: (:func:`add_derived`), never stored. Stored as float64 they were 42% of a dataset's bytes,
#: and a second copy of a fact can disagree with the first.
DERIVED = ("tflops", "gbps")
STORED_NAMES = [n for n in NAMES if n not in DERIVED]
#: columns added after datasets were first written: a file without one reads as all null.
#: ``round_ms`` (session 25): a pass's per-round times, so that a pick and the oracle can be
#: compared round by round and the oracle chosen on rounds it is not scored on
#: (:func:`tilepick.model.metrics.crossfit`); passes before it kept only their summary.
OPTIONAL = ("round_ms",)
STORED_SCHEMA = pa.schema([f for f in SCHEMA if f.name not in DERIVED])


def _narrow(typ: pa.DataType) -> pa.DataType:
    if pa.types.is_float64(typ):
        return pa.float32()
    if pa.types.is_list(typ) and pa.types.is_float64(typ.value_type):
        return pa.list_(pa.float32())
    return typ


#: the stored columns as written to disk: float64 (times, spreads, errors, compile seconds)
#: narrowed to float32. Why (session 37): the datasets ship in the repository, which must fit
#: the GPU machine's 64 MiB upload; float32 files are 30% smaller (49.4 -> 34.4 MB), and its
#: 7 significant digits are far below the timing noise (>= 0.3%). Readers widen back to the
#: in-memory float64 of :data:`STORED_SCHEMA`; files written before keep float64 and read the same.
DISK_SCHEMA = pa.schema([pa.field(f.name, _narrow(f.type)) for f in STORED_SCHEMA])
#: ``sweep_id`` of the rows of a re-timing pass (``tilepick data retime``): a problem's pass
#: re-times its contenders together, and ``validate`` scores such a problem inside its pass
RETIME_PREFIX = "rt-"
PROBLEM_COLUMNS = ["op", "problem_key", "m", "n", "k", "batch", "dtype", "layout", "lda", "ldb",
                   "ldc", "base_align"]
CONFIG_COLUMNS = ["config_id", "family", "block_m", "block_n", "block_k", "group_m",
                  "num_warps", "num_stages", "split_k"]
PROVENANCE_COLUMNS = ["gpu_name", "sm_count", "driver_version", "cuda_version", "torch_version",
                      "triton_version", "tilepick_version", "tilepick_commit", "date", "sweep_id"]


class SchemaError(ValueError):
    """A dataset that does not carry the declared columns with the declared types."""


def problem_fields(problem) -> dict:
    return {"op": "gemm", "problem_key": problem.key(), "m": problem.m, "n": problem.n,
            "k": problem.k, "batch": problem.batch, "dtype": problem.dtype_token,
            "layout": problem.layout, "lda": problem.lda, "ldb": problem.ldb, "ldc": problem.ldc,
            "base_align": problem.base_align}


def config_fields(config) -> dict:
    return {"config_id": config.id, "family": config.family, "block_m": config.block_m,
            "block_n": config.block_n, "block_k": config.block_k, "group_m": config.group_m,
            "num_warps": config.num_warps, "num_stages": config.num_stages,
            "split_k": config.split_k}


def to_table(rows: list[dict]) -> pa.Table:
    """Rows -> an Arrow table of exactly the schema (missing optional values become null)."""
    missing = [n for n in PROBLEM_COLUMNS + CONFIG_COLUMNS + ["valid"] if any(n not in r for r in rows)]
    if missing:
        raise SchemaError(f"rows lack required columns {sorted(set(missing))}")
    extra = sorted({k for r in rows for k in r} - set(NAMES))
    if extra:
        raise SchemaError(f"rows carry columns not in the schema: {extra}")
    return pa.Table.from_pylist(rows, schema=SCHEMA)


def validate(table: pa.Table) -> pa.Table:
    """Check a read table against the schema: every stored column present with its declared
    type (an all-null column may stand for any type); returns it in schema order with the
    :data:`DERIVED` columns computed (files written before they stopped being stored carry
    them: they are recomputed all the same)."""
    names = set(table.column_names)
    missing = [n for n in STORED_NAMES if n not in names and n not in OPTIONAL]
    if missing:
        raise SchemaError(f"dataset lacks columns {missing}")
    for name in OPTIONAL:
        if name not in names:
            table = table.append_column(name, pa.nulls(len(table), SCHEMA.field(name).type))
    wrong = [f"{f.name} is {table.schema.field(f.name).type}, expected {f.type}"
             for f, disk in zip(STORED_SCHEMA, DISK_SCHEMA)
             if table.schema.field(f.name).type not in (f.type, disk.type, pa.null())]
    if wrong:
        raise SchemaError("dataset columns have the wrong types: " + "; ".join(wrong))
    return add_derived(table.select(STORED_NAMES).cast(STORED_SCHEMA))


def stored(table: pa.Table) -> pa.Table:
    """What goes to disk: the table less its :data:`DERIVED` columns, floats narrowed to
    :data:`DISK_SCHEMA`'s float32."""
    names = [n for n in STORED_NAMES if n in table.column_names]
    return table.select(names).cast(pa.schema([DISK_SCHEMA.field(n) for n in names]))


def add_derived(table: pa.Table) -> pa.Table:
    """A stored table with ``tflops`` (2 M N K batch / time) and ``gbps`` (the problem's
    fewest bytes moved / time) appended in schema order; null where ``time_ms`` is not a
    positive time. Worked out once per distinct problem key."""
    import numpy as np
    import pyarrow.compute as pc

    from tilepick.problem import GemmProblem

    enc = pc.dictionary_encode(table.column("problem_key")).combine_chunks()
    problems = [GemmProblem.from_key(k) for k in enc.dictionary.to_pylist()]
    flops = np.array([p.flops for p in problems], dtype=np.float64)
    nbytes = np.array([p.min_bytes for p in problems], dtype=np.float64)
    idx = enc.indices.to_numpy(zero_copy_only=False)
    ms = table.column("time_ms").to_numpy().astype(np.float64)   # nulls -> nan
    ok = np.isfinite(ms) & (ms > 0)
    safe = np.where(ok, ms, 1.0)
    cols = {"tflops": flops[idx] / (safe * 1e9), "gbps": nbytes[idx] / (safe * 1e6)}
    out = table
    for name in DERIVED:
        out = out.append_column(SCHEMA.field(name), pa.array(cols[name], mask=~ok))
    return out.select(NAMES)
