"""The dataset schema and its parquet I/O: round trips, validation, crash safety, compaction."""

import math

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tilepick.config import KernelConfig
from tilepick.data import io
from tilepick.data.schema import (CONFIG_COLUMNS, NAMES, PROBLEM_COLUMNS, PROVENANCE_COLUMNS,
                                  SCHEMA, SchemaError, config_fields, problem_fields, to_table,
                                  validate)
from tilepick.problem import GemmProblem

P1 = GemmProblem(16, 24, 32, dtype="fp16")
P2 = GemmProblem(32, 16, 16, batch=2, dtype="fp32", tf32=True, layout="cr")
P3 = GemmProblem(48, 64, 80, dtype="bf16", layout="rc", lda=96, base_align=8)
PTR = KernelConfig.from_id("gemm.ptr.m16n32k32.g8.w4.s3")
SPLITK = KernelConfig.from_id("gemm.splitk.m16n64k64.g8.w4.s3.sk2")
CUBLAS = KernelConfig("gemm.cublas")

MEASUREMENT_COLUMNS = [n for n in NAMES if n not in PROBLEM_COLUMNS + CONFIG_COLUMNS
                       + PROVENANCE_COLUMNS]


def provenance(sweep_id="s1", **over):
    prov = {"gpu_name": "NVIDIA H200", "sm_count": 132, "driver_version": "560.35",
            "cuda_version": "12.6", "torch_version": "2.5.0", "triton_version": "3.1.0",
            "tilepick_version": "0.1.0", "tilepick_commit": "abc123",
            "date": "2025-01-02T03:04:05Z", "sweep_id": sweep_id}
    prov.update(over)
    return prov


def full_row(problem, config, time_ms=1.25, sweep_id="s1", valid=True, **over):
    """A row with every schema column set (no nulls)."""
    row = {**problem_fields(problem), **config_fields(config),
           "valid": valid, "invalid_reason": "" if valid else "wrong: relative error 1 > 0.02",
           "rel_error": 1.5e-4, "time_ms": time_ms, "time_p20_ms": time_ms * 0.9,
           "time_p80_ms": time_ms * 1.1, "reps": 7, "stopped_early": False, "retimed": True,
           "retime_spread": 0.03, "round_ms": [time_ms * 0.99, time_ms, time_ms * 1.02],
           "tflops": problem.flops / (time_ms * 1e9),
           "gbps": problem.min_bytes / (time_ms * 1e6), "timing_meaningful": True,
           "compile_s": 2.5, **provenance(sweep_id)}
    row.update(over)
    return row


def sparse_row(problem, config, sweep_id="s1", **over):
    """Only the required columns (+ sweep id): everything else becomes null."""
    row = {**problem_fields(problem), **config_fields(config), "valid": False,
           "invalid_reason": "compile: OutOfResources", "sweep_id": sweep_id}
    row.update(over)
    return row


# -- schema ----------------------------------------------------------------------------------


def test_schema_declared_once_and_partitioned():
    assert NAMES == [f.name for f in SCHEMA]
    assert len(set(NAMES)) == len(NAMES)
    # the named groups are all schema columns, disjoint, and cover it with the measurements
    groups = PROBLEM_COLUMNS + CONFIG_COLUMNS + PROVENANCE_COLUMNS
    assert len(set(groups)) == len(groups) and set(groups) <= set(NAMES)
    assert {"valid", "invalid_reason", "time_ms", "tflops", "timing_meaningful"} <= set(
        MEASUREMENT_COLUMNS)
    # the field helpers produce exactly their groups
    assert list(problem_fields(P3)) == PROBLEM_COLUMNS
    assert list(config_fields(SPLITK)) == CONFIG_COLUMNS
    assert problem_fields(P2)["dtype"] == "tf32"
    assert problem_fields(P3)["problem_key"] == P3.key()
    assert config_fields(CUBLAS)["block_m"] == 0 and config_fields(CUBLAS)["split_k"] == 1


def test_round_trip_values_dtypes_and_order(tmp_path):
    rows = [full_row(P1, PTR), full_row(P2, SPLITK, time_ms=0.5, valid=False),
            full_row(P3, CUBLAS, time_ms=3.0)]
    # every schema column is populated, in an order other than the schema's
    assert all(set(r) == set(NAMES) for r in rows)
    rows = [dict(reversed(list(r.items()))) for r in rows]
    part = io.write_part(tmp_path, rows)
    assert part is not None and part.parent == tmp_path
    assert part.name.startswith("part-") and part.suffix == ".parquet"

    table = io.read_table(tmp_path)
    assert table.schema.equals(SCHEMA)
    df = io.read_frame(tmp_path)
    assert list(df.columns) == NAMES
    assert len(df) == len(rows)
    floats = {f.name for f in SCHEMA if f.type in (pa.float64(), pa.list_(pa.float64()))}
    for i, row in enumerate(rows):
        got = df.iloc[i].to_dict()
        for name in NAMES:
            want = row[name]
            value = list(got[name]) if isinstance(want, list) else got[name]
            if name in floats and want is not None:   # stored as float32 (DISK_SCHEMA)
                assert value == pytest.approx(want, rel=1e-6), name
            else:
                assert value == want, name
    # on disk the floats are float32, every other column as declared
    disk = pq.read_schema(part)
    for field in disk:
        want = SCHEMA.field(field.name).type
        assert field.type == (pa.float32() if want == pa.float64() else
                              pa.list_(pa.float32()) if want == pa.list_(pa.float64()) else want)
    # dtypes follow the arrow types (no silent float for int, object for bool, ...)
    for field in SCHEMA:
        dt = df[field.name].dtype
        if pa.types.is_int64(field.type):
            assert dt == "int64", field.name
        elif pa.types.is_float64(field.type):
            assert dt == "float64", field.name
        elif pa.types.is_boolean(field.type):
            assert dt == "bool", field.name
        elif pa.types.is_list(field.type):
            assert dt == object, field.name
        else:
            assert pd.api.types.is_string_dtype(dt), field.name
    # the frame is exactly what the rows convert to
    pd.testing.assert_frame_equal(df, to_table(rows).to_pandas())


def test_round_trip_nulls_for_optional_columns(tmp_path):
    rows = [sparse_row(P1, PTR), full_row(P1, CUBLAS)]
    io.write_part(tmp_path, rows)
    table = io.read_table(tmp_path)
    assert table.schema.equals(SCHEMA)
    recs = table.to_pylist()
    assert recs[0]["valid"] is False
    assert recs[0]["invalid_reason"] == "compile: OutOfResources"
    for name in ("time_ms", "reps", "retimed", "timing_meaningful", "tflops", "gpu_name"):
        assert recs[0][name] is None, name
    assert recs[1]["reps"] == 7 and recs[1]["retimed"] is True


def test_write_part_no_rows_writes_nothing(tmp_path):
    out = tmp_path / "never"
    assert io.write_part(out, []) is None
    assert not out.exists()
    assert io.read_frame(out).empty
    assert list(io.read_frame(out).columns) == NAMES
    assert io.done_problems(out) == set()


def test_to_table_rejects_unknown_columns():
    row = full_row(P1, PTR, speedup=1.3)
    with pytest.raises(SchemaError, match="speedup"):
        to_table([row])


@pytest.mark.parametrize("drop", ["problem_key", "m", "config_id", "split_k", "valid"])
def test_to_table_rejects_missing_required_columns(drop):
    good = full_row(P1, PTR)
    bad = {k: v for k, v in full_row(P2, CUBLAS).items() if k != drop}
    with pytest.raises(SchemaError, match=rf"\b{drop}\b"):
        to_table([good, bad])  # one row lacking it is enough


def test_to_table_optional_columns_may_be_absent():
    t = to_table([sparse_row(P1, PTR)])
    assert t.schema.equals(SCHEMA) and t.num_rows == 1
    assert t.column("time_ms").null_count == 1


def _table(rows, **replace):
    t = to_table(rows)
    for name, arr in replace.items():
        t = t.set_column(t.column_names.index(name), name, arr)
    return t


def test_validate_accepts_and_reorders_schema_columns():
    t = to_table([full_row(P1, PTR), full_row(P2, CUBLAS)])
    shuffled = t.select(list(reversed(NAMES)))
    out = validate(shuffled)
    assert out.schema.equals(SCHEMA)
    assert out.equals(t)


@pytest.mark.parametrize("drop", ["num_warps", "timing_meaningful", "sweep_id"])
def test_validate_rejects_missing_column(drop):
    t = to_table([full_row(P1, PTR)])
    t = t.drop_columns([drop])
    with pytest.raises(SchemaError, match=rf"\b{drop}\b"):
        validate(t)


def test_files_written_before_an_optional_column_read_it_as_null(tmp_path):
    """Datasets written before ``round_ms`` existed still load, with the column all null; a
    required column missing is still refused (below)."""
    from tilepick.data.schema import OPTIONAL

    assert "round_ms" in OPTIONAL and set(OPTIONAL) <= set(NAMES)
    io.write_part(tmp_path, [full_row(P1, PTR)])
    pq.write_table(to_table([full_row(P2, CUBLAS)]).drop_columns(list(OPTIONAL)),
                   tmp_path / "part-old.parquet")
    table = io.read_table(tmp_path)
    assert table.schema.equals(SCHEMA)
    rounds = dict(zip(table.column("problem_key").to_pylist(),
                      table.column("round_ms").to_pylist()))
    assert rounds[P2.key()] is None and rounds[P1.key()] == pytest.approx([1.2375, 1.25, 1.275])


def test_float64_files_read_exactly_and_compact_narrows_them_to_float32(tmp_path):
    """Files written before session 37 store their floats as float64: they read back exactly
    (widened in memory either way); compacting one writes float32, the same values to 7
    digits, every other column unchanged."""
    row = full_row(P1, PTR, time_ms=0.123456789012)
    pq.write_table(stored_float64 := to_table([row]).drop_columns(["tflops", "gbps"]),
                   tmp_path / "old.parquet")
    assert stored_float64.schema.field("time_ms").type == pa.float64()
    old = io.read_frame(tmp_path / "old.parquet")
    assert old["time_ms"][0] == 0.123456789012 and old["time_ms"].dtype == "float64"
    io.compact(tmp_path / "old.parquet", tmp_path / "new.parquet")
    assert pq.read_schema(tmp_path / "new.parquet").field("time_ms").type == pa.float32()
    new = io.read_frame(tmp_path / "new.parquet")
    assert new["time_ms"].dtype == "float64"
    assert new["time_ms"][0] == pytest.approx(0.123456789012, rel=1e-7)
    assert new["time_ms"][0] != 0.123456789012          # narrowed, not kept
    assert list(new["round_ms"][0]) == pytest.approx(list(old["round_ms"][0]), rel=1e-7)
    assert new.drop(columns=[c for c in new if new[c].dtype == "float64"] + ["round_ms"]).equals(
        old.drop(columns=[c for c in old if old[c].dtype == "float64"] + ["round_ms"]))


def test_read_rejects_part_missing_a_column(tmp_path):
    io.write_part(tmp_path, [full_row(P1, PTR)])
    pq.write_table(to_table([full_row(P2, PTR)]).drop_columns(["block_k"]),
                   tmp_path / "part-handmade.parquet")
    with pytest.raises(SchemaError, match="block_k"):
        io.read_frame(tmp_path)


@pytest.mark.parametrize("name, arr", [
    ("num_warps", pa.array(["four"])),
    ("num_warps", pa.array([[4]])),
    ("time_ms", pa.array(["fast"])),
    ("valid", pa.array(["yes"])),
])
def test_validate_rejects_uncastable_type(name, arr):
    t = _table([full_row(P1, PTR)], **{name: arr})
    with pytest.raises(SchemaError):
        validate(t)


@pytest.mark.parametrize("name, arr", [
    ("num_warps", pa.array(["four"])),
    ("time_ms", pa.array(["fast"])),
])
def test_validate_type_error_names_the_column(name, arr):
    t = _table([full_row(P1, PTR)], **{name: arr})
    with pytest.raises(SchemaError, match=rf"\b{name}\b"):
        validate(t)


@pytest.mark.parametrize("name, arr", [
    ("num_warps", pa.array(["4"])),
    ("valid", pa.array([1], pa.int64())),
    ("op", pa.array([7], pa.int64())),
])
def test_validate_rejects_castable_wrong_type(name, arr):
    t = _table([full_row(P1, PTR)], **{name: arr})
    with pytest.raises(SchemaError, match=rf"\b{name}\b"):
        validate(t)


# -- crash safety ----------------------------------------------------------------------------


def _visible_parts(folder):
    return sorted(p.name for p in folder.glob("part-*.parquet"))


@pytest.mark.parametrize("where", ["write_table", "rename"])
def test_crash_while_writing_a_part_leaves_no_visible_part(tmp_path, monkeypatch, where):
    first = io.write_part(tmp_path, [full_row(P1, PTR), full_row(P1, CUBLAS)])
    assert _visible_parts(tmp_path) == [first.name]

    real_write = pq.write_table

    class Crash(RuntimeError):
        pass

    if where == "write_table":
        def crashing_write(table, where_, *args, **kwargs):
            # a partial file: the first half of a real parquet file, then the crash
            import io as _io
            buf = _io.BytesIO()
            real_write(table, buf, *args, **kwargs)
            with open(where_, "wb") as f:
                f.write(buf.getvalue()[: len(buf.getvalue()) // 2])
            raise Crash("disk full")

        monkeypatch.setattr(pq, "write_table", crashing_write)
    else:
        def crashing_replace(src, dst):
            raise Crash("killed before the rename")

        monkeypatch.setattr(io.os, "replace", crashing_replace)

    with pytest.raises(Crash):
        io.write_part(tmp_path, [full_row(P2, PTR), full_row(P2, CUBLAS)])
    monkeypatch.undo()

    # the half-written part is a hidden temp file, never a part
    assert _visible_parts(tmp_path) == [first.name]
    leftovers = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(leftovers) == 1 and leftovers[0].name.startswith(".part-")
    # readers ignore it: only the first part's rows, and P2 is not done (it will be re-measured)
    df = io.read_frame(tmp_path)
    assert len(df) == 2 and set(df.problem_key) == {P1.key()}
    assert io.done_problems(tmp_path) == {P1.key()}
    assert set(io.part_files(tmp_path)) == {first}

    # a later write succeeds and is read alongside
    second = io.write_part(tmp_path, [full_row(P2, PTR), full_row(P2, CUBLAS)])
    assert second != first and second.exists()
    assert set(_visible_parts(tmp_path)) == {first.name, second.name}
    assert io.done_problems(tmp_path) == {P1.key(), P2.key()}
    df = io.read_frame(tmp_path)
    assert len(df) == 4
    assert sorted(df.problem_key.unique()) == sorted([P1.key(), P2.key()])


def test_write_part_invalid_rows_leave_no_file(tmp_path):
    with pytest.raises(SchemaError):
        io.write_part(tmp_path, [full_row(P1, PTR, bogus=1)])
    assert list(tmp_path.iterdir()) == []


def test_parts_get_distinct_names(tmp_path):
    names = {io.write_part(tmp_path, [full_row(P1, PTR)]).name for _ in range(5)}
    assert len(names) == 5
    assert len(io.read_frame(tmp_path)) == 5


# -- compaction ------------------------------------------------------------------------------


def test_compact_merges_dedupes_and_sorts(tmp_path):
    src = tmp_path / "parts"
    io.write_part(src, [full_row(P2, PTR, time_ms=1.0), full_row(P1, PTR, time_ms=2.0),
                        sparse_row(P1, SPLITK)])
    io.write_part(src, [
        full_row(P1, PTR, time_ms=2.5),                 # duplicate of (P1, PTR, s1)
        full_row(P1, PTR, time_ms=3.0, sweep_id="s2"),  # same pair, another sweep: kept
        full_row(P3, CUBLAS, time_ms=4.0),
        full_row(P2, CUBLAS, time_ms=5.0),
    ])
    io.write_part(src, [full_row(P2, PTR, time_ms=1.1)])  # duplicate of (P2, PTR, s1)
    assert len(io.read_frame(src)) == 8

    dest = tmp_path / "nested" / "dir" / "all.parquet"
    n = io.compact(src, dest)
    assert n == 6
    assert dest.is_file()
    assert not dest.with_name(dest.name + ".tmp").exists()
    # compressed as declared; the times byte-stream-split (lossless: read back exactly below)
    meta = pq.ParquetFile(dest).metadata
    assert meta.row_group(0).column(0).compression.lower() == io.COMPRESSION
    cols = {meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i)
            for i in range(meta.num_columns)}
    assert "BYTE_STREAM_SPLIT" in cols["time_ms"].encodings

    table = io.read_table(dest)
    assert table.schema.equals(SCHEMA)
    df = io.read_frame(dest)
    assert len(df) == 6 and list(df.columns) == NAMES
    keys = list(zip(df.problem_key, df.config_id, df.sweep_id))
    assert len(set(keys)) == len(keys)
    assert set(keys) == {(P1.key(), PTR.id, "s1"), (P1.key(), PTR.id, "s2"),
                         (P1.key(), SPLITK.id, "s1"), (P2.key(), PTR.id, "s1"),
                         (P2.key(), CUBLAS.id, "s1"), (P3.key(), CUBLAS.id, "s1")}
    assert list(zip(df.problem_key, df.config_id)) == sorted(zip(df.problem_key, df.config_id))
    # a kept duplicate is one of the written versions, not a mixture
    row = df[(df.problem_key == P1.key()) & (df.config_id == PTR.id) & (df.sweep_id == "s1")]
    assert row.time_ms.item() in (2.0, 2.5)
    row = df[(df.problem_key == P1.key()) & (df.config_id == PTR.id) & (df.sweep_id == "s2")]
    assert row.time_ms.item() == 3.0
    assert row.time_p20_ms.item() == pytest.approx(row.time_ms.item() * 0.9)
    row = df[(df.problem_key == P2.key()) & (df.config_id == PTR.id)]
    assert row.time_ms.item() in (1.0, pytest.approx(1.1, rel=1e-7))   # float32 on disk
    # nulls survive compaction (int and bool columns with nulls included)
    sp = df[df.config_id == SPLITK.id].iloc[0]
    assert not sp.valid and sp.invalid_reason == "compile: OutOfResources"
    assert math.isnan(sp.time_ms) and math.isnan(sp.reps) and sp.retimed is None
    assert io.read_table(dest).column("reps").null_count == 1

    # done problems: the same from the compacted file and from the folder of parts
    expect = {P1.key(), P2.key(), P3.key()}
    assert io.done_problems(dest) == expect
    assert io.done_problems(src) == expect
    assert io.done_problems(tmp_path / "missing") == set()
    assert io.part_files(dest) == [dest]

    # compacting a compacted file is a fixed point
    again = tmp_path / "again.parquet"
    assert io.compact(dest, again) == 6
    pd.testing.assert_frame_equal(io.read_frame(again), df)

    # an existing file is never overwritten by accident
    before = again.read_bytes()
    with pytest.raises(FileExistsError, match="again.parquet exists"):
        io.compact(src, again)
    assert again.read_bytes() == before
    assert io.compact(src, again, overwrite=True) == 6


def test_drop_family_rewrites_files_and_deletes_emptied_ones(tmp_path):
    """`tilepick data drop`: a family whose launch changed loses its rows; every other row,
    column and file stays as stored."""
    from typer.testing import CliRunner

    from tilepick.cli import app

    mixed = io.write_part(tmp_path, [full_row(P1, PTR), full_row(P1, CUBLAS),
                                     sparse_row(P2, SPLITK), full_row(P3, CUBLAS)])
    only = io.write_part(tmp_path, [full_row(P2, CUBLAS)])
    other = io.write_part(tmp_path, [full_row(P3, PTR)])
    before_other = other.read_bytes()
    dropped = io.drop_family(tmp_path, "gemm.cublas")
    assert dropped == {str(mixed): 2, str(only): 1}
    assert not only.exists() and other.read_bytes() == before_other
    df = io.read_frame(tmp_path)
    assert sorted(zip(df.problem_key, df.config_id)) == sorted(
        [(P1.key(), PTR.id), (P2.key(), SPLITK.id), (P3.key(), PTR.id)])
    assert pq.read_schema(mixed).names == pq.read_schema(other).names   # stored columns only
    assert io.drop_family(tmp_path, "gemm.cublas") == {}
    res = CliRunner().invoke(app, ["data", "drop", str(tmp_path), "--family", "gemm.ptr"])
    assert res.exit_code == 0 and "2 rows of gemm.ptr dropped" in res.output
    res = CliRunner().invoke(app, ["data", "drop", str(tmp_path), "--family", "gemm.nope"])
    assert res.exit_code != 0 and "unknown family 'gemm.nope'" in res.output
    notes = tmp_path / "PROVENANCE.md"
    notes.write_text("# notes")
    before = io.read_frame(tmp_path)
    res = CliRunner().invoke(app, ["data", "drop", str(tmp_path), str(notes), "--family",
                                   "gemm.splitk"])
    assert res.exit_code != 0 and "not a dataset folder or a parquet file" in res.output
    pd.testing.assert_frame_equal(io.read_frame(tmp_path), before)   # nothing rewritten
    with pytest.raises(ValueError, match="missing: not a dataset folder"):
        io.drop_family(tmp_path / "missing", "gemm.splitk")


def test_compact_empty_folder(tmp_path):
    (tmp_path / "parts").mkdir()
    dest = tmp_path / "all.parquet"
    assert io.compact(tmp_path / "parts", dest) == 0
    df = io.read_frame(dest)
    assert df.empty and list(df.columns) == NAMES
    assert io.done_problems(dest) == set()


def test_folder_reader_ignores_other_files(tmp_path):
    io.write_part(tmp_path, [full_row(P1, PTR)])
    (tmp_path / "sweep-abc.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / ".part-dead.parquet.tmp").write_bytes(b"PAR1garbage")
    assert len(io.read_frame(tmp_path)) == 1
    assert io.done_problems(tmp_path) == {P1.key()}


def test_write_json_round_trip_and_no_path(tmp_path):
    import json

    from tilepick.data.io import write_json

    out = tmp_path / "r.json"
    write_json(out, {"a": [1, 2.5], "b": None})
    assert out.read_text().endswith("\n") and json.loads(out.read_text()) == {"a": [1, 2.5],
                                                                            "b": None}
    write_json(None, {"a": 1})   # no file asked for: nothing written anywhere
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


# -- derived columns: computed on reading, never stored ----------------------------------------

def test_rates_are_not_stored_and_are_computed_on_reading(tmp_path):
    """tflops and gbps follow from the problem and time_ms: a part on disk lacks them, the
    reader brings them back (null where there is no time), and a file written before they
    stopped being stored gets them recomputed, not read (one source of truth)."""
    from tilepick.data.schema import DERIVED

    rows = [full_row(P1, PTR, time_ms=2.0), full_row(P2, SPLITK, time_ms=0.5),
            sparse_row(P3, CUBLAS)]
    part = io.write_part(tmp_path / "d", rows)
    assert not set(DERIVED) & set(pq.read_schema(part).names)
    df = io.read_frame(tmp_path / "d").set_index("problem_key")
    assert df.loc[P1.key(), "tflops"] == pytest.approx(P1.flops / 2.0e9)
    assert df.loc[P2.key(), "gbps"] == pytest.approx(P2.min_bytes / 0.5e6)
    assert P2.batch == 2 and P2.dtype_token != P1.dtype_token    # batch and dtype both count
    assert pd.isna(df.loc[P3.key(), "tflops"]) and pd.isna(df.loc[P3.key(), "gbps"])
    old = to_table([full_row(P1, PTR, time_ms=2.0, tflops=123.0, gbps=4.0)])   # stale copies
    pq.write_table(old, tmp_path / "old.parquet")
    again = io.read_frame(tmp_path / "old.parquet")
    assert again["tflops"][0] == pytest.approx(P1.flops / 2.0e9)
    assert again["gbps"][0] == pytest.approx(P1.min_bytes / 2.0e6)
    dest = tmp_path / "compact.parquet"
    io.compact(tmp_path / "d", dest)
    assert not set(DERIVED) & set(pq.read_schema(dest).names)
