"""Streamed reading of raw trace tables, and the Parquet cache of their cleaned form.

The published Alibaba tables are tens of gigabytes, so nothing here holds a
whole file: `stream_batches` yields Arrow record batches of a bounded number of
rows (pyarrow's CSV reader, only the needed columns) with the file line of
their first row for error messages, and `stream_table` the same as pandas frames; `cached_parquet` runs a conversion once, writes
its output batch by batch with a Parquet writer, and reuses the file while the
source file and the options are unchanged.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Mapping

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from tqdm.auto import tqdm

__all__ = ["TableSpec", "TraceFormatError", "cache_dir", "cached_parquet", "stream_batches", "stream_table"]

CACHE_VERSION = 1
# Arrow's CSV reader reads a few dozen blocks ahead of a slower consumer (about 36 measured here):
# small blocks keep that read-ahead, and so peak memory, small whatever the file size.
BLOCK_BYTES = 2 << 20


class TraceFormatError(ValueError):
    """A trace file does not match its declared format; the message names file, line and column."""


@dataclass(frozen=True)
class TableSpec:
    """A headerless raw table: its column names in file order and the types of the columns read."""

    name: str
    columns: tuple[str, ...]
    types: Mapping[str, pa.DataType]

    def describe(self) -> str:
        return f"{self.name} ({len(self.columns)} columns: {', '.join(self.columns)})"


def _open_text(path: Path):
    """The file as text; ``.gz`` files are decompressed on the fly."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", newline="")
    return open(path, newline="")


def _first_line(path: Path) -> list[str]:
    if path.name.endswith((".tar.gz", ".tgz", ".tar")) or (path.suffix == ".gz" and _is_tar(path)):
        raise TraceFormatError(
            f"{path}: is a tar archive, as Alibaba publishes the v2018 tables; extract the CSV first "
            f"(tar xzf {path.name}) and pass it, or gzip the CSV alone (.csv.gz)")
    with _open_text(path) as handle:
        return next(csv.reader(handle), [])


def _is_tar(path: Path) -> bool:
    """A tar archive has "ustar" at byte 257 of its first header."""
    with gzip.open(path, "rb") as handle:
        return handle.read(263)[257:262] == b"ustar"


def _has_header(spec: TableSpec, first: list[str]) -> bool:
    """A header row is present when the first field cannot be a value of the first column."""
    field = first[0].strip().lower() if first else ""
    if field == spec.columns[0]:
        return True
    kind = spec.types.get(spec.columns[0])
    if kind is not None and (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        try:
            float(field)
        except ValueError:
            return True
    return False


def _locate_bad_value(path: Path, spec: TableSpec, skip: int) -> str:
    """Scan the file once (error path only) for the first line pyarrow could not convert."""
    with _open_text(path) as handle:
        for number, row in enumerate(csv.reader(handle), start=1):
            if number <= skip:
                continue
            if len(row) != len(spec.columns):
                return f"line {number}: expected {len(spec.columns)} columns, found {len(row)}"
            for column, value in zip(spec.columns, row):
                kind = spec.types.get(column)
                if kind is None or value.strip() == "":
                    continue
                try:
                    number_value = float(value)
                except ValueError:
                    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
                        return f"line {number}, column {column!r}: {value!r} is not a number"
                    continue
                if pa.types.is_integer(kind) and not number_value.is_integer():
                    return f"line {number}, column {column!r}: {value!r} is not a whole number"
    return "the file could not be parsed"


def stream_batches(
    path: str | Path, spec: TableSpec, batch_bytes: int = BLOCK_BYTES, progress: bool | None = None
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """Yield (file line of its first row, record batch) for about ``batch_bytes`` of CSV at a time.

    A header row is detected and skipped. Only the columns in ``spec.types``
    are read, typed as it says. A ``.gz`` file is decompressed while it is
    read. ``progress``: a bar of bytes read on stderr (None: only when stderr
    is a terminal).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such trace file")
    first = _first_line(path)
    if len(first) != len(spec.columns):
        raise TraceFormatError(
            f"{path}: line 1 has {len(first)} columns, but {spec.describe()} has {len(spec.columns)}; "
            f"is this the right file for this format?"
        )
    skip = 1 if _has_header(spec, first) else 0
    read = pacsv.ReadOptions(column_names=list(spec.columns), skip_rows=skip, block_size=batch_bytes)
    convert = pacsv.ConvertOptions(
        column_types=dict(spec.types), include_columns=list(spec.types), null_values=[""], strings_can_be_null=True
    )
    line = skip + 1
    bar = tqdm(total=path.stat().st_size, unit="B", unit_scale=True, desc=f"reading {path.name}",
               disable=None if progress is None else not progress, leave=False)
    try:
        # Arrow reads the file itself (no Python callbacks from its reader threads); the bar follows
        # the position in the file as stored, compressed or not.
        with pa.OSFile(str(path), "rb") as raw:
            source = pa.CompressedInputStream(raw, "gzip") if path.suffix == ".gz" else raw
            for batch in pacsv.open_csv(source, read_options=read, convert_options=convert):
                bar.update(raw.tell() - bar.n)
                yield line, batch
                line += batch.num_rows
    except pa.ArrowInvalid as err:
        where = _locate_bad_value(path, spec, skip)
        raise TraceFormatError(f"{path}: {where} ({spec.describe()}; reader said: {err})") from None
    finally:
        bar.close()


def stream_table(
    path: str | Path, spec: TableSpec, batch_bytes: int = BLOCK_BYTES, progress: bool | None = None
) -> Iterator[pd.DataFrame]:
    """`stream_batches` as pandas frames, each with a ``line`` column (the 1-based file line)."""
    for line, batch in stream_batches(path, spec, batch_bytes, progress):
        frame = batch.to_pandas()
        frame.insert(0, "line", range(line, line + len(frame)))
        yield frame


def cache_dir() -> Path:
    """Where converted tables are kept: ``$CLOUDSIM_CACHE``, else ``~/.cache/cloudsim``."""
    return Path(os.environ.get("CLOUDSIM_CACHE", Path.home() / ".cache" / "cloudsim"))


def cached_parquet(
    source: str | Path,
    kind: str,
    options: Mapping[str, object],
    convert: Callable[[Callable[[pa.Table], None]], dict],
    schema: pa.Schema,
    directory: str | Path | None = None,
) -> tuple[Path, dict]:
    """Return (parquet path, conversion report), converting ``source`` only when no valid cache exists.

    The cache key covers the source's absolute path, size and modification
    time, ``kind``, ``options`` and the cache format version. ``convert`` is
    called with a ``write(table)`` function for each cleaned batch and returns a
    JSON-ready report (row counts, skips by reason), stored beside the file.
    """
    source = Path(source).resolve()
    stat = source.stat()
    key_text = json.dumps(
        [CACHE_VERSION, str(source), stat.st_size, stat.st_mtime_ns, kind, dict(options)], sort_keys=True, default=str
    )
    key = hashlib.sha256(key_text.encode()).hexdigest()[:16]
    folder = Path(directory) if directory is not None else cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{source.stem}.{kind}.{key}.parquet"
    report_path = target.with_suffix(".json")
    if target.is_file() and report_path.is_file():
        return target, json.loads(report_path.read_text())
    partial = target.with_suffix(".partial")
    with pq.ParquetWriter(partial, schema) as writer:
        report = convert(lambda table: writer.write_table(table.cast(schema)))
    partial.replace(target)
    report_path.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return target, report
