"""Reading and writing datasets: crash-safe parquet parts, and compaction into one file.

A sweep writes each finished group of problems as one part, atomically (a temporary file
renamed into place), so a crash loses at most the problems in flight and never leaves a
half-written part; on resume, a problem whose rows are in a part is done and is skipped, so no
row is measured twice.
"""

from __future__ import annotations

import gzip
import io as io_
import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from tilepick.data.schema import SCHEMA, STORED_NAMES, STORED_SCHEMA, stored, to_table, validate

PART_GLOB = "part-*.parquet"
COMPRESSION = "zstd"


def write_part(out_dir: str | os.PathLike, rows: list[dict]) -> Path | None:
    """Write rows as a new part; the file appears complete or not at all."""
    if not rows:
        return None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = to_table(rows)
    name = f"part-{uuid.uuid4().hex[:12]}.parquet"
    tmp = out / f".{name}.tmp"
    pq.write_table(stored(table), tmp, compression=COMPRESSION)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, out / name)
    return out / name


def part_files(path: str | os.PathLike) -> list[Path]:
    p = Path(path)
    if p.is_file():
        return [p]
    return sorted(p.glob("*.parquet"))  # parts (part-*.parquet) and compacted chunks


def read_table(path: str | os.PathLike) -> pa.Table:
    """All rows under ``path`` (a parquet file or a folder of them), schema-checked."""
    files = list(dict.fromkeys(part_files(path)))
    if not files:
        return SCHEMA.empty_table()
    return pa.concat_tables([validate(pq.read_table(f)) for f in files])


def read_frame(path: str | os.PathLike):
    """The dataset as a pandas DataFrame (columns in schema order)."""
    return read_table(path).to_pandas()


def _part_columns(path: str | os.PathLike, columns: list[str]):
    """Each part's ``columns`` under ``path`` (none if it does not exist), as Python lists."""
    files = list(dict.fromkeys(part_files(path))) if Path(path).exists() else []
    for f in files:
        t = pq.read_table(f, columns=columns)
        yield [t.column(i).to_pylist() for i in range(len(columns))]


def done_problems(path: str | os.PathLike) -> set[str]:
    """Problem keys already measured under ``path`` (resume skips them)."""
    keys: set[str] = set()
    for (part_keys,) in _part_columns(path, ["problem_key"]):
        keys.update(part_keys)
    return keys


def measured_configs(path: str | os.PathLike) -> dict[str, set[str]]:
    """{problem key: the config ids measured for it} under ``path`` (for a top-up sweep)."""
    out: dict[str, set[str]] = {}
    for keys, cids in _part_columns(path, ["problem_key", "config_id"]):
        for key, cid in zip(keys, cids):
            out.setdefault(key, set()).add(cid)
    return out


def compact(src: str | os.PathLike, dest: str | os.PathLike, overwrite: bool = False) -> int:
    """Merge every part under ``src`` into one compressed file, dropping duplicate
    (problem, config, sweep) rows; returns the row count. An existing ``dest`` is refused
    unless ``overwrite``: dataset chunks are numbered by hand, and session 33 overwrote a
    committed pass's file by reusing its number."""
    if Path(dest).exists() and not overwrite:
        raise FileExistsError(f"{dest} exists: compact into a new file (or overwrite=True, "
                              f"--force on the command line)")
    df = read_frame(src)
    df = df.drop_duplicates(subset=["problem_key", "config_id", "sweep_id"], keep="last")
    df = df.sort_values(["problem_key", "config_id"]).reset_index(drop=True)
    table = pa.Table.from_pandas(df[STORED_NAMES], schema=STORED_SCHEMA, preserve_index=False)
    Path(dest).parent.mkdir(parents=True, exist_ok=True)
    write_file(dest, table)
    return table.num_rows


def _float_columns(table: pa.Table) -> list[str]:
    return [f.name for f in table.schema if pa.types.is_floating(f.type)]


def write_file(dest: str | os.PathLike, table: pa.Table) -> None:
    """``dest`` becomes ``table`` as a dataset file (derived columns left out, floats narrowed
    to the disk types), complete or not at all.

    Float columns (the times, mostly; float32 on disk, ``schema.DISK_SCHEMA``) are written
    byte-stream-split rather than dictionary encoded: lossless, and 12% smaller files on the
    bf16 data (session 36), which matters because the datasets ship in the repository and the
    repository must fit the GPU machine's upload."""
    table = stored(table)
    tmp = Path(str(dest) + ".tmp")
    floats = _float_columns(table)
    pq.write_table(table, tmp, compression=COMPRESSION, compression_level=9,
                   use_dictionary=[n for n in table.column_names if n not in floats],
                   use_byte_stream_split=floats)
    os.replace(tmp, dest)


def dataset_path(path: str | os.PathLike) -> Path:
    """``path`` if it is a dataset folder or a parquet file (ValueError otherwise): a command
    that rewrites files checks every path it was given before it touches any."""
    p = Path(path)
    if not (p.is_dir() or (p.is_file() and p.suffix == ".parquet")):
        raise ValueError(f"{path}: not a dataset folder or a parquet file")
    return p


def drop_family(path: str | os.PathLike, family: str) -> dict[str, int]:
    """Remove ``family``'s rows from every parquet file under ``path``, rewriting each file
    that held some (a file left empty is deleted); returns {file: rows dropped}.

    Why: when a family's launch changes its speed (session 32: ``gemm.cublas_repack``'s copies
    became one Triton launch), its earlier rows describe a kernel that no longer runs and are
    replaced by a re-measurement; git history keeps them. Rows of every other family, pass
    rows included, are left as they were."""
    dropped: dict[str, int] = {}
    for f in part_files(dataset_path(path)):
        table = pq.read_table(f)   # rewritten as stored (validate adds derived columns)
        validate(table)
        keep = pc.invert(pc.equal(table.column("family"), family))
        n = table.num_rows - pc.sum(keep.cast(pa.int64())).as_py()
        if n == 0:
            continue
        dropped[str(f)] = n
        if n == table.num_rows:
            os.remove(f)
            continue
        write_file(f, table.filter(keep))   # checked above
    return dropped


def open_text(path: str | os.PathLike, mode: str = "r", **kw):
    """A text file, gzip'd when its name ends in ``.gz`` (how long lists and results ship:
    the repository must fit the GPU machine's upload), else plain; UTF-8 either way."""
    if not str(path).lower().endswith(".gz"):
        return open(path, mode, encoding="utf-8", **kw)
    if "w" in mode:   # no time stamp: the same content gives the same bytes
        return io_.TextIOWrapper(gzip.GzipFile(path, mode="wb", mtime=0), encoding="utf-8", **kw)
    return gzip.open(path, mode + "t", encoding="utf-8", **kw)


def write_json(path: str | os.PathLike | None, obj) -> None:
    """A benchmark's result file (indented, newline-terminated); nothing when ``path`` is None."""
    import json

    if path is not None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(obj, indent=1) + "\n")
