"""Streamed reading of raw trace tables, and the Parquet cache of their cleaned form.

The published Alibaba tables are tens of gigabytes, so nothing here holds a
whole file: `stream_batches` yields Arrow record batches of a bounded number of
rows (pyarrow's CSV reader, only the needed columns) with the file line of
their first row for error messages, and `stream_table` the same as pandas
frames; `cached_parquet` runs a conversion once, writes its output batch by
batch with a Parquet writer, and reuses the file while the source file and the
options are unchanged.

**Header or not.** The raw tables are published without a header, but copies
with one circulate (the v2017 batch_task sample's uploader wrote
``task_create_time, task_end_time, job_id, ...`` with names unlike the official
schema's). Row 1 is a header when, after stripping spaces, a UTF-8 byte-order
mark and case, either

* its fields are the table's column names (`TableSpec.columns`) or one of its
  known header spellings (`TableSpec.aliases`), or
* it has the table's number of fields and *every* field of a numeric column is
  a name: not empty, not a number (``inf`` and ``nan`` count as numbers), and
  starting with a letter or ``_``.

Anything else is data: a first row with one damaged value still has numbers in
its other numeric columns, so it is read as data and fails with a
`TraceFormatError` naming line 1 and the column, instead of being dropped as a
header. (A row whose every numeric field is a word cannot be told from a
header; such a row is taken as one.) A UTF-8 byte-order mark is ignored, also
at the start of a ``.gz`` file's content.

**Numbers.** Every number of every trace and machine table is read by one parser, Arrow's (the
fast_float algorithm, which Arrow has used since its version 3): the value is the double nearest to
its decimal text, whatever pandas, pyarrow or numpy version is installed. The raw tables are
converted by Arrow's CSV reader with typed columns (`stream_batches`); tables with a header of their
own (CloudSimPy's jobs.csv, the openb lists) are read as text (`read_text_table`) and their numbers
converted by `exact_floats`, the same parser; SWF's whitespace-separated fields go through
`exact_floats` too. pandas' CSV reader is never used for a trace: before pandas 3.1 its default float
parser rounds some texts one unit in the last place off (``47.351351351351354`` in CloudSimPy's
jobs.csv), which changed Tetris's choices.

**Values.** Every message about a row names the file, the line and the column:
a value that is not a number, an integer column's value that is not a whole
number or is beyond the 64-bit range, an infinite value (``inf``, ``1e999``),
a number of any column of magnitude 2**53 or more (`cloudsim.specs.EXACT_BOUND`:
a time, count or id there is rounded in float64, a quantity overflows when summed),
a byte that is not UTF-8 (convert the file to UTF-8), a wrong number of fields.
An empty file, and a table with a header row but no data rows, are errors that
say so.

**The cache.** One entry is one Parquet file, named
``<source stem>.<kind>.<key>.parquet``; its conversion report, its row count
and a random token identifying this build are stored in the file's own
key-value metadata, so report and data can never be out of step (one file, one
atomic rename). The key covers the cache format version, the source's absolute
path, size, modification time (ns) and a SHA-256 of its first and last MiB
(an edit that keeps the size and restores the mtime is still caught when it
touches those blocks), the kind and the options. Writing goes to a temporary
file of a name unique to the process (``.<entry>.<pid>-<random>.tmp``) in the
cache folder, then `os.replace`: two processes converting the same trace at
once both succeed, and a reader never sees a half-written entry. A temporary
file is removed when its conversion fails or is interrupted; one left by a
killed process is removed by the next use of the folder once it has not been
written for an hour (`STALE_SECONDS`). Before an entry is used its Parquet
footer is read and its row count checked against its metadata; a truncated,
unreadable or inconsistent entry is removed and rebuilt, with a one-line note
on stderr. Entries derived from another entry (`cached_derived`, e.g. the job
index of `traces.alibaba`) are keyed by their parent's build token, so a
rebuilt parent never meets a stale child.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import zlib
import hashlib
import json
import math
import os
import re
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from cloudsim.specs import EXACT_BOUND

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CacheError",
    "DamagedCacheEntry",
    "EmptyWorkloadError",
    "TableSpec",
    "TraceFormatError",
    "BEYOND_EXACT",
    "cache_dir",
    "cached_derived",
    "cached_parquet",
    "discard_entry",
    "entry_token",
    "exact_floats",
    "fingerprint",
    "first_row",
    "has_header",
    "non_utf8_message",
    "open_text",
    "read_text_table",
    "reading",
    "stream_batches",
    "stream_table",
]

# 4: numbers read by the one exact parser of every loader (the entries of version 3 were read by it
# too; the bump rebuilds every entry made before the rule was written down).
CACHE_VERSION = 4
# Arrow's CSV reader reads a few dozen blocks ahead of a slower consumer (about 36 measured here):
# small blocks keep that read-ahead, and so peak memory, small whatever the file size.
BLOCK_BYTES = 2 << 20
# Rows per Parquet row group of a cache entry. A job selection reads whole row groups, so they are
# kept small (a few MB); small CSV blocks are buffered up to this size so that the footer of a
# billion-row table stays a few MB too.
ROW_GROUP_ROWS = 1 << 16
# The fingerprint hashes this many bytes at each end of the source.
FINGERPRINT_BYTES = 1 << 20
# A temporary file not written for this long belongs to a conversion that is gone.
STALE_SECONDS = 3600
_REPORT_KEY, _ROWS_KEY, _TOKEN_KEY = b"cloudsim.report", b"cloudsim.rows", b"cloudsim.token"
_INT64 = (-(2**63), 2**63 - 1)
_NAME_LIKE = re.compile(r"^[a-z_]")
_INTEGER_TEXT = re.compile(r"^[+-]?\d+$")
# What a number of magnitude EXACT_BOUND or more is, for the messages of every loader.
BEYOND_EXACT = (f"reaches 2**53 ({EXACT_BOUND}) in magnitude, where float64 stops holding every whole number; no "
                f"time, count or quantity of a real trace comes near it: the file is damaged")
_TEMPORARY = re.compile(r"^\..+\.parquet\.\d+-[0-9a-f]{8}\.tmp$|^.+\.[0-9a-f]{16}\.partial$")


class TraceFormatError(ValueError):
    """A trace file does not match its declared format; the message names file, line and column."""


class EmptyWorkloadError(TraceFormatError):
    """A trace, window or job selection leaves no job to replay; the message gives the skip counts."""


class CacheError(OSError, ValueError):
    """The cache folder cannot be used; the message names it and says how to choose another.

    Also a ValueError, so that callers that report bad input as one message report this too.
    """


class DamagedCacheEntry(Exception):
    """A cache entry could not be read as written; the loader discards it and builds it again."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"cache entry {path} is damaged ({reason})")
        self.path, self.reason = Path(path), reason


@dataclass(frozen=True)
class TableSpec:
    """A headerless raw table: its column names in file order and the types of the columns read.

    ``aliases``: other spellings of its header row seen in circulating copies (see the module
    docstring for how a header row is recognised).
    """

    name: str
    columns: tuple[str, ...]
    types: Mapping[str, pa.DataType]
    aliases: tuple[tuple[str, ...], ...] = ()

    def describe(self) -> str:
        return f"{self.name} ({len(self.columns)} columns: {', '.join(self.columns)})"


# ----------------------------------------------------------------------------- text input
def open_text(path: Path):
    """The file as text (``.gz`` decompressed on the fly), without a UTF-8 byte-order mark.

    Bytes that are not UTF-8 come through as lone surrogates (``surrogateescape``), so that
    callers can say on which line and in which column they are.
    """
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", errors="surrogateescape", newline="")
    return open(path, encoding="utf-8-sig", errors="surrogateescape", newline="")


def _is_tar(path: Path) -> bool:
    """A tar archive has "ustar" at byte 257 of its first header."""
    with gzip.open(path, "rb") as handle:
        return handle.read(263)[257:262] == b"ustar"


def first_row(path: Path) -> list[str]:
    """The fields of the file's first row; refuses a tar archive, an empty file and a blank line 1."""
    try:
        if path.name.endswith((".tar.gz", ".tgz", ".tar")) or (path.suffix == ".gz" and _is_tar(path)):
            raise TraceFormatError(
                f"{path}: is a tar archive, as Alibaba publishes the v2018 tables; extract the CSV first "
                f"(tar xzf {path.name}) and pass it, or gzip the CSV alone (.csv.gz)")
        with open_text(path) as handle:
            row = next(csv.reader(handle), None)
    except FileNotFoundError:
        raise
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise TraceFormatError(f"{path}: is not a whole gzip file ({err}); compress or download it again, "
                               f"or pass the plain CSV") from None
    except (OSError, csv.Error) as err:
        raise TraceFormatError(f"{path}: cannot be read ({err})") from None
    if row is None:
        raise TraceFormatError(f"{path}: the file is empty (no header, no rows)")
    if not row:
        raise TraceFormatError(f"{path}: line 1 is blank")
    return row


def _normalise(field: str) -> str:
    return field.replace("\ufeff", "").strip().lower()


def is_number(field: str) -> bool:
    """Whether the text reads as a number (float syntax, inf and nan included)."""
    try:
        float(field)
    except ValueError:
        return False
    return True


def has_header(spec: TableSpec, first: list[str]) -> bool:
    """Whether row ``first`` is a header row of ``spec``'s table (the rule of the module docstring)."""
    names = tuple(_normalise(f) for f in first)
    if names == spec.columns or names in spec.aliases:
        return True
    if len(first) != len(spec.columns):
        return False
    numeric = [names[i] for i, column in enumerate(spec.columns)
               if column in spec.types and _is_numeric(spec.types[column])]
    return bool(numeric) and all(n and not is_number(n) and _NAME_LIKE.match(n) for n in numeric)


def _is_numeric(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) or pa.types.is_floating(kind)


def _field_problem(kind: pa.DataType, value: str) -> str | None:
    """Why ``value`` cannot be a value of a column of type ``kind`` (None: it can, or is empty)."""
    text = value.strip()
    if text == "" or not _is_numeric(kind):
        return None
    try:
        number = float(text)
    except ValueError:
        return f"{value!r} is not a number"
    if "_" in text:  # Python reads 1_000; Arrow does not
        return f"{value!r} is not a number"
    if not math.isfinite(number) and text.lower() not in ("nan", "+nan", "-nan"):
        return f"{value!r} is not a finite number"
    if pa.types.is_integer(kind):
        if math.isnan(number) or not number.is_integer():
            return f"{value!r} is not a whole number"
        if not _INTEGER_TEXT.match(text):
            return f"{value!r} is not written as an integer (no decimal point or exponent)"
        if not _INT64[0] <= int(text) <= _INT64[1]:
            return f"{value!r} is beyond the 64-bit integer range"
        number = int(text)  # exact: a float would round 2**53 + 1 down into range
    if abs(number) >= EXACT_BOUND:
        return f"{value!r} {BEYOND_EXACT}"
    return None


def _non_utf8(field: str) -> int | None:
    """The first byte of ``field`` that was not UTF-8 (read with surrogateescape), or None."""
    for char in field:
        if "\udc80" <= char <= "\udcff":
            return ord(char) - 0xDC00
    return None


def non_utf8_message(line: int, column: str, byte: int) -> str:
    return (f"line {line}, column {column!r}: byte 0x{byte:02x} is not UTF-8; convert the file to UTF-8 "
            f"(for example: iconv -f latin1 -t utf-8 FILE > FILE.utf8.csv)")


def _locate_bad_value(path: Path, spec: TableSpec, skip: int) -> str:
    """Scan the file once (error path only) for the first line pyarrow could not convert."""
    with open_text(path) as handle:
        for number, row in enumerate(csv.reader(handle), start=1):
            if number <= skip:
                continue
            if len(row) != len(spec.columns):
                return f"line {number}: expected {len(spec.columns)} columns, found {len(row)}"
            for column, value in zip(spec.columns, row):
                kind = spec.types.get(column)
                if kind is None:
                    continue
                byte = _non_utf8(value)
                if byte is not None:
                    return non_utf8_message(number, column, byte)
                problem = _field_problem(kind, value)
                if problem is not None:
                    return f"line {number}, column {column!r}: {problem}"
    return "the file could not be parsed"


def _raw_field(path: Path, line: int, column_index: int) -> str:
    """The text of one field (error path only: reads the file up to that line)."""
    with open_text(path) as handle:
        for number, row in enumerate(csv.reader(handle), start=1):
            if number == line:
                return row[column_index] if column_index < len(row) else ""
    return ""


def stream_batches(
    path: str | Path, spec: TableSpec, batch_bytes: int = BLOCK_BYTES, progress: bool | None = None
) -> Iterator[tuple[int, pa.RecordBatch]]:
    """Yield (file line of its first row, record batch) for about ``batch_bytes`` of CSV at a time.

    A header row is detected (see the module docstring) and skipped. Only the
    columns in ``spec.types`` are read, typed as it says. A ``.gz`` file is
    decompressed while it is read. ``progress``: a bar of bytes read on stderr
    (None: only when stderr is a terminal).
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such trace file")
    first = first_row(path)
    header = has_header(spec, first)
    if len(first) != len(spec.columns):
        raise TraceFormatError(
            f"{path}: line 1 has {len(first)} columns, but {spec.describe()} has {len(spec.columns)}; "
            f"is this the right file for this format?"
        )
    skip = 1 if header else 0
    read = pacsv.ReadOptions(column_names=list(spec.columns), skip_rows=skip, block_size=batch_bytes)
    convert = pacsv.ConvertOptions(
        column_types=dict(spec.types), include_columns=list(spec.types), null_values=[""], strings_can_be_null=True
    )
    numeric = [c for c in spec.types if _is_numeric(spec.types[c])]
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
                for column in numeric:  # Arrow reads inf, 1e999 and 1e300 as floats: no replayable value
                    values = batch.column(column)
                    beyond = pc.or_(pc.greater_equal(values, EXACT_BOUND), pc.less_equal(values, -EXACT_BOUND))
                    if pc.any(beyond).as_py():
                        at = pc.index(beyond, True).as_py()
                        raw_text = _raw_field(path, line + at, spec.columns.index(column))
                        problem = _field_problem(spec.types[column], raw_text) or f"{raw_text!r} {BEYOND_EXACT}"
                        raise TraceFormatError(f"{path}: line {line + at}, column {column!r}: {problem}")
                yield line, batch
                line += batch.num_rows
    except pa.ArrowInvalid as err:
        where = _locate_bad_value(path, spec, skip)
        raise TraceFormatError(f"{path}: {where} ({spec.describe()}; reader said: {err})") from None
    except OSError as err:
        if path.suffix != ".gz":
            raise
        # Arrow's gzip reader: a file cut short or damaged after its first line.
        raise TraceFormatError(f"{path}: is not a whole gzip file ({err}); compress or "
                               f"download it again, or pass the plain CSV") from None
    finally:
        bar.close()
    if line == skip + 1:
        raise TraceFormatError(f"{path}: has a header row but no data rows" if header else
                               f"{path}: has no data rows")


def stream_table(
    path: str | Path, spec: TableSpec, batch_bytes: int = BLOCK_BYTES, progress: bool | None = None
) -> Iterator[pd.DataFrame]:
    """`stream_batches` as pandas frames, each with a ``line`` column (the 1-based file line)."""
    for line, batch in stream_batches(path, spec, batch_bytes, progress):
        frame = batch.to_pandas()
        frame.insert(0, "line", range(line, line + len(frame)))
        yield frame


# ----------------------------------------------------------------------------- numbers and text tables
# The texts Arrow's parser reads as numbers: decimal or exponent notation, and inf, infinity and nan
# (any case, with a sign); anything else (1_000, 0x10, 1,5, 1d5) is not a number.
_NUMBER_TEXT = r"(?i)^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?|inf|infinity|nan)$"


def exact_floats(texts: pa.Array | pa.ChunkedArray | list) -> np.ndarray:
    """The float64 value of each text: the double nearest to its decimal value, NaN where a text is
    empty, null or not a number (`_NUMBER_TEXT`); spaces around a number are ignored.

    The one conversion of text to numbers for every loader (see the module docstring): Arrow's
    parser, correctly rounded, so the result depends on no library version.
    """
    array = texts if isinstance(texts, (pa.Array, pa.ChunkedArray)) else pa.array(texts, pa.string())
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks() if array.num_chunks else pa.array([], pa.string())
    trimmed = pc.utf8_trim_whitespace(array.cast(pa.string()))
    numeric = pc.fill_null(pc.match_substring_regex(trimmed, _NUMBER_TEXT), False)
    try:
        values = pc.cast(pc.if_else(numeric, trimmed, pa.scalar("nan")), pa.float64())
    except pa.ArrowInvalid:  # a text the pattern admits and Arrow does not: convert one by one
        values = pa.array([_one_float(text) for text in pc.if_else(numeric, trimmed, "nan").to_pylist()],
                          pa.float64())
    return values.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)


def _one_float(text: str) -> float:
    try:
        return pc.cast(pa.array([text]), pa.float64())[0].as_py()
    except pa.ArrowInvalid:
        return math.nan


def _text_table_problem(path: Path, width: int, names: list[str], skip: int) -> str:
    """The first line with a wrong number of fields or a byte that is not UTF-8 (error path only)."""
    with open_text(path) as handle:
        for number, row in enumerate(csv.reader(handle), start=1):
            if number <= skip or not row:
                continue
            for i, value in enumerate(row):
                byte = _non_utf8(value)
                if byte is not None:
                    return non_utf8_message(number, names[i] if i < len(names) and names[i] else f"#{i + 1}", byte)
            if len(row) != width:
                cut = " (truncated?)" if len(row) < width else ""
                return f"line {number} has {len(row)} of {width} columns{cut}"
    return "the file could not be parsed"


def read_text_table(path: str | Path, names: list[str] | None = None) -> tuple[list[str], pa.Table, int]:
    """Every field of a CSV file as text, through Arrow's reader: (column names, table, file line of
    the first data row).

    ``names`` None: row 1 is the header, and its fields, stripped of spaces and a UTF-8 byte-order
    mark, name the columns (a name given twice is refused); else the file has no header and
    ``names`` name its columns in order. The table's columns are named by position (``"0"``,
    ``"1"``, ...: names may repeat or be empty) and hold the texts as written, empty fields as
    ``""``; convert numbers with `exact_floats`. A ``.gz`` file is read as well. Raises
    `TraceFormatError` naming the line for a row with another number of fields than the header,
    a byte that is not UTF-8, or a damaged gzip file.
    """
    path = Path(path)
    first = first_row(path)
    header = names is None
    names = [field.replace("\ufeff", "").strip() for field in first] if header else list(names)
    repeated = sorted({n for n in names if n and names.count(n) > 1})
    if header and repeated:
        raise TraceFormatError(f"{path}: the header names column(s) {', '.join(map(repr, repeated))} more than once; "
                               f"give each column one name")
    width, skip = len(names), 1 if header else 0
    positions = [str(i) for i in range(width)]
    read = pacsv.ReadOptions(column_names=positions, skip_rows=skip, block_size=BLOCK_BYTES)
    convert = pacsv.ConvertOptions(column_types={p: pa.string() for p in positions}, strings_can_be_null=False,
                                   quoted_strings_can_be_null=False)
    try:
        with pa.OSFile(str(path), "rb") as raw:
            source = pa.CompressedInputStream(raw, "gzip") if path.suffix == ".gz" else raw
            table = pacsv.read_csv(source, read_options=read, convert_options=convert)
    except pa.ArrowInvalid as err:
        raise TraceFormatError(f"{path}: {_text_table_problem(path, width, names, skip)} (reader said: "
                               f"{str(err).splitlines()[0]})") from None
    except OSError as err:
        if path.suffix != ".gz":
            raise
        raise TraceFormatError(f"{path}: is not a whole gzip file ({err}); compress or download it again, "
                               f"or pass the plain CSV") from None
    return names, table, skip + 1


# ----------------------------------------------------------------------------- the cache
def cache_dir() -> Path:
    """Where converted tables are kept: ``$CLOUDSIM_CACHE``, else ``~/.cache/cloudsim``."""
    return Path(os.environ.get("CLOUDSIM_CACHE", Path.home() / ".cache" / "cloudsim"))


def _cache_error(folder: Path, why: str) -> CacheError:
    return CacheError(f"cache folder {folder} cannot be used ({why}); pass --cache DIR or set CLOUDSIM_CACHE "
                      f"to a folder you can write")


def _folder(directory: str | Path | None) -> Path:
    folder = Path(directory) if directory is not None else cache_dir()
    if folder.exists() and not folder.is_dir():
        raise _cache_error(folder, "it is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise _cache_error(folder, err.strerror or str(err)) from None
    _remove_stale(folder)
    return folder


def _remove_stale(folder: Path) -> None:
    """Remove temporary files of conversions that died (not written for `STALE_SECONDS`).

    Only names this module writes are touched (the folder may be shared, ``--cache /tmp``):
    ``.<entry>.parquet.<pid>-<8 hex>.tmp``, and ``<entry>.<16 hex>.partial`` of cache version 1.
    """
    now = time.time()
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if _TEMPORARY.match(entry.name) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    if now - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS:
                        os.unlink(entry.path)


def fingerprint(path: Path) -> list:
    """Size, mtime (ns) and a SHA-256 of the first and last `FINGERPRINT_BYTES` of the file."""
    stat = path.stat()
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        digest.update(handle.read(FINGERPRINT_BYTES))
        if stat.st_size > FINGERPRINT_BYTES:
            handle.seek(max(FINGERPRINT_BYTES, stat.st_size - FINGERPRINT_BYTES))
            digest.update(handle.read(FINGERPRINT_BYTES))
    return [stat.st_size, stat.st_mtime_ns, digest.hexdigest()]


def _key(parts: list) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _check_entry(path: Path, schema: pa.Schema | None) -> dict | None:
    """The entry's report, None when there is no entry; raises DamagedCacheEntry when it is unusable."""
    try:
        with pq.ParquetFile(path) as handle:
            meta = handle.metadata
            kv = meta.metadata or {}
            if _REPORT_KEY not in kv or _ROWS_KEY not in kv or _TOKEN_KEY not in kv:
                raise DamagedCacheEntry(path, "no conversion report in its metadata")
            report = json.loads(kv[_REPORT_KEY])
            rows = int(kv[_ROWS_KEY])
            if meta.num_rows != rows:
                raise DamagedCacheEntry(path, f"{meta.num_rows} rows where its report says {rows}")
            if schema is not None and not handle.schema_arrow.remove_metadata().equals(schema.remove_metadata()):
                raise DamagedCacheEntry(path, "its columns are not those of this version")
            return report
    except FileNotFoundError:
        return None
    except DamagedCacheEntry:
        raise
    except (OSError, ValueError, pa.ArrowException) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DamagedCacheEntry(path, reason) from None


def _identity(path: Path) -> tuple | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def discard_entry(path: Path, reason: str, identity: tuple | None = None) -> None:
    """Remove a damaged entry, saying so on stderr, so that the next use builds it again.

    With ``identity`` (see `_identity`) the file is removed only if it is still the one found
    damaged: another process may have put a good one in its place meanwhile.
    """
    print(f"cloudsim: cache entry {path} was damaged ({reason}); rebuilding", file=sys.stderr, flush=True)
    if identity is None or _identity(path) == identity:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def entry_token(handle: pq.ParquetFile) -> str:
    """The random token of one build of a cache entry (derived entries are keyed by it)."""
    return (handle.metadata.metadata or {}).get(_TOKEN_KEY, b"").decode()


def _build(target: Path, schema: pa.Schema | None, produce: Callable[[Callable[[pa.Table], None]], dict]) -> dict:
    """Run ``produce(write)`` into a temporary file, then move it into place atomically."""
    if not hasattr(pq.ParquetWriter, "add_key_value_metadata"):
        raise RuntimeError("the trace cache needs pyarrow >= 17 (ParquetWriter.add_key_value_metadata)")
    temporary = target.parent / f".{target.name}.{os.getpid()}-{secrets.token_hex(4)}.tmp"
    state = {"writer": None, "rows": 0, "buffer": [], "buffered": 0}

    def flush(final: bool) -> None:
        if not state["buffer"]:
            return
        table = pa.concat_tables(state["buffer"])
        full = table.num_rows if final else table.num_rows - table.num_rows % ROW_GROUP_ROWS
        if full:
            state["writer"].write_table(table.slice(0, full), row_group_size=ROW_GROUP_ROWS)
        rest = table.slice(full)
        state["buffer"], state["buffered"] = ([rest], rest.num_rows) if rest.num_rows else ([], 0)

    def write(table: pa.Table) -> None:
        if state["writer"] is None:
            try:
                state["writer"] = pq.ParquetWriter(temporary, schema if schema is not None else table.schema)
            except OSError as err:
                raise _cache_error(target.parent, err.strerror or str(err)) from None
        table = table.cast(state["writer"].schema) if schema is not None else table
        state["rows"] += table.num_rows
        state["buffer"].append(table)
        state["buffered"] += table.num_rows
        if state["buffered"] >= ROW_GROUP_ROWS:
            flush(final=False)

    try:
        report = produce(write)
        if state["writer"] is None:  # nothing written: an empty entry still has its schema
            if schema is None:
                raise ValueError(f"cache entry {target.name}: nothing to write and no schema")
            write(schema.empty_table())
        flush(final=True)
        state["writer"].add_key_value_metadata({
            _REPORT_KEY: json.dumps(report, sort_keys=True), _ROWS_KEY: str(state["rows"]),
            _TOKEN_KEY: secrets.token_hex(8)})
        state["writer"].close()
        state["writer"] = None
        try:
            os.replace(temporary, target)
        except OSError as err:
            raise _cache_error(target.parent, err.strerror or str(err)) from None
        return report
    finally:
        if state["writer"] is not None:
            with contextlib.suppress(Exception):
                state["writer"].close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _entry(target: Path, schema: pa.Schema | None, produce) -> tuple[Path, dict]:
    identity = _identity(target)
    try:
        report = _check_entry(target, schema)
    except DamagedCacheEntry as damaged:
        discard_entry(target, damaged.reason, identity)
        report = None
    if report is None:
        report = _build(target, schema, produce)
    return target, report


def cached_parquet(
    source: str | Path,
    kind: str,
    options: Mapping[str, object],
    convert: Callable[[Callable[[pa.Table], None]], dict],
    schema: pa.Schema,
    directory: str | Path | None = None,
) -> tuple[Path, dict]:
    """Return (parquet path, conversion report), converting ``source`` only when no valid cache exists.

    The cache key covers the source's absolute path and fingerprint (size,
    mtime, hash of its first and last MiB), ``kind``, ``options`` and the cache
    format version. ``convert`` is called with a ``write(table)`` function for
    each cleaned batch and returns a JSON-ready report (row counts, skips by
    reason), stored in the Parquet file's metadata. A damaged entry is rebuilt
    (see the module docstring). Raises `CacheError` when the folder cannot be
    created or written.
    """
    source = Path(source).resolve()
    folder = _folder(directory)
    key = _key([CACHE_VERSION, str(source), fingerprint(source), kind, dict(options)])
    return _entry(folder / f"{source.stem}.{kind}.{key}.parquet", schema, convert)


def cached_derived(
    parent: pq.ParquetFile,
    parent_path: Path,
    kind: str,
    options: Mapping[str, object],
    build: Callable[[Callable[[pa.Table], None]], dict],
    schema: pa.Schema | None = None,
) -> tuple[Path, dict]:
    """Like `cached_parquet`, for an entry computed from another entry (open as ``parent``).

    It lies beside its parent, keyed by the parent's build token: rebuilding the
    parent makes a new derived entry. ``schema`` None: that of the first table written.
    """
    parent_path = Path(parent_path)
    key = _key([CACHE_VERSION, parent_path.name, entry_token(parent), kind, dict(options)])
    stem = parent_path.name.split(".", 1)[0]
    return _entry(parent_path.parent / f"{stem}.{kind}.{key}.parquet", schema, build)


@contextlib.contextmanager
def reading(path: Path):
    """Turn an error while reading cache entry ``path`` into DamagedCacheEntry (the caller rebuilds)."""
    try:
        yield
    except (OSError, pa.ArrowException) as err:
        if isinstance(err, CacheError):
            raise
        if isinstance(err, FileNotFoundError):
            reason = "it was removed while in use, perhaps by another process rebuilding it"
        else:
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise DamagedCacheEntry(path, reason) from None
