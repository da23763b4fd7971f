"""Streamed reading of raw trace tables: CSV text, headers, and numbers read exactly.

The published Alibaba tables are tens of gigabytes, so nothing here holds a
whole file: `stream_batches` yields Arrow record batches of a bounded number of
rows (pyarrow's CSV reader, only the needed columns) with the file line of
their first row for error messages, and `stream_table` the same as pandas
frames.

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
a number of any column of magnitude 2**53 or more (`cloudsim.engine.specs.EXACT_BOUND`:
a time, count or id there is rounded in float64, a quantity overflows when summed),
a byte that is not UTF-8 (convert the file to UTF-8), a wrong number of fields.
An empty file, and a table with a header row but no data rows, are errors that
say so.

Converted tables are kept in a Parquet cache (`traces.cache`).
"""

from __future__ import annotations

import csv
import gzip
import zlib
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
from tqdm.auto import tqdm

from cloudsim.engine.specs import EXACT_BOUND

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "EmptyWorkloadError",
    "TableSpec",
    "TraceFormatError",
    "BEYOND_EXACT",
    "exact_floats",
    "first_row",
    "has_header",
    "non_utf8_message",
    "open_text",
    "read_text_table",
    "stream_batches",
    "stream_table",
]

# Arrow's CSV reader reads a few dozen blocks ahead of a slower consumer (about 36 measured here):
# small blocks keep that read-ahead, and so peak memory, small whatever the file size.
BLOCK_BYTES = 2 << 20
_INT64 = (-(2**63), 2**63 - 1)
_NAME_LIKE = re.compile(r"^[a-z_]")
_INTEGER_TEXT = re.compile(r"^[+-]?\d+$")
# What a number of magnitude EXACT_BOUND or more is, for the messages of every loader.
BEYOND_EXACT = (f"reaches 2**53 ({EXACT_BOUND}) in magnitude, where float64 stops holding every whole number; no "
                f"time, count or quantity of a real trace comes near it: the file is damaged")


class TraceFormatError(ValueError):
    """A trace file does not match its declared format; the message names file, line and column."""


class EmptyWorkloadError(TraceFormatError):
    """A trace, window or job selection leaves no job to replay; the message gives the skip counts."""


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
