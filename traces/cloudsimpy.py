"""Loader for CloudSimPy's jobs.csv: one row per task of the Alibaba v2017 batch workload.

Columns: submit_time (s), duration (s, the mean over the task's instances), cpu
(cores), memory (normalised to 1), job_id, task_id, instances_num, disk. A
leading unnamed column (a pandas index) is ignored. A file without a header row
is read as these columns in this order (with or without the index column).
Row 1 is a header when, after stripping spaces, a UTF-8 byte-order mark and
case, one of its fields is one of these column names, or none of its fields is
a number (a header of other names then fails with the missing columns); any
other row 1 is data, so a damaged first row is reported (line 1 and its
column), not dropped. A ``.csv.gz`` file is read as well; a UTF-8 byte-order
mark is ignored. An empty file is a `TraceFormatError`, a header without rows
an `EmptyWorkloadError`; every message about a row names the file, the line(s)
and the column, including values that are not finite, beyond the 64-bit
integer range or reaching 2**53 (`cloudsim.specs.EXACT_BOUND`), and bytes that are not UTF-8.

Jobs are built exactly as CloudSimPy builds them, which replays need for equal
makespans: rows are grouped by job_id in order of first appearance, tasks keep
file order, a job's submit time is the submit_time of its *last* row (some jobs
have tasks with different submit times), and jobs are then sorted by submit
time, stably. The file is parsed with pandas' default CSV reader, as CloudSimPy
does, so every float is the same double.
"""

from __future__ import annotations

import csv
import gzip
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from cloudsim.specs import EXACT_BOUND, JobSpec, TaskSpec
from traces.rawcsv import (BEYOND_EXACT, EmptyWorkloadError, TraceFormatError, first_row, is_number, non_utf8_message,
                           open_text)

__all__ = ["CLOUDSIMPY_COLUMNS", "EmptyWorkloadError", "TraceFormatError", "load_cloudsimpy"]

CLOUDSIMPY_COLUMNS = ("submit_time", "duration", "cpu", "memory", "job_id", "task_id", "instances_num", "disk")
_WHOLE = ("job_id", "task_id", "instances_num")


def _rows_error(path: Path, frame: pd.DataFrame, bad: pd.Series, column: str, what: str) -> TraceFormatError:
    rows = np.flatnonzero(bad.to_numpy())
    first = frame.attrs["first_data_line"]
    lines = ", ".join(str(r + first) for r in rows[:5]) + (" ..." if len(rows) > 5 else "")
    example = frame[column].iloc[rows[0]]
    example = example.item() if isinstance(example, np.generic) else example  # as written: 5, not np.int64(5)
    return TraceFormatError(
        f"{path}: column {column!r} {what} on {len(rows)} line(s): {lines} (first value: {example!r})"
    )


def _is_header(first: list[str]) -> bool:
    names = [field.replace("\ufeff", "").strip().lower() for field in first]
    return any(name in CLOUDSIMPY_COLUMNS for name in names) or not any(is_number(name) for name in names)


def _non_utf8(path: Path, names: list[str]) -> str:
    """Where the first byte that is not UTF-8 is (error path only: reads the file again)."""
    with open_text(path) as handle:
        for number, row in enumerate(csv.reader(handle), start=1):
            for i, value in enumerate(row):
                bad = next((ord(c) - 0xDC00 for c in value if "\udc80" <= c <= "\udcff"), None)
                if bad is not None:
                    column = names[i] if i < len(names) and names[i] else f"#{i + 1}"
                    return non_utf8_message(number, column, bad)
    return "a byte is not UTF-8; convert the file to UTF-8"


def _read(path: Path) -> pd.DataFrame:
    first = first_row(path)
    header = _is_header(first)
    names = {len(CLOUDSIMPY_COLUMNS): list(CLOUDSIMPY_COLUMNS), len(CLOUDSIMPY_COLUMNS) + 1: ["", *CLOUDSIMPY_COLUMNS]}
    if not header and len(first) not in names:
        raise TraceFormatError(f"{path}: line 1 has {len(first)} columns and no header; a headerless jobs.csv "
                               f"has the {len(CLOUDSIMPY_COLUMNS)} columns {', '.join(CLOUDSIMPY_COLUMNS)}")
    # utf-8-sig: a byte-order mark is not part of the first name or value; compression follows the suffix.
    options = {"encoding": "utf-8-sig", "compression": "gzip" if path.suffix == ".gz" else None}
    try:
        frame = pd.read_csv(path, **options) if header else \
            pd.read_csv(path, header=None, names=names[len(first)], **options)
    except UnicodeDecodeError:
        columns = [field.replace("\ufeff", "").strip() for field in first] if header else names.get(len(first), [])
        raise TraceFormatError(f"{path}: {_non_utf8(path, columns)}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise TraceFormatError(f"{path}: not a readable CSV file ({err})") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise TraceFormatError(f"{path}: is not a whole gzip file ({err}); compress or download it again, "
                               f"or pass the plain CSV") from None
    frame.attrs["first_data_line"] = 2 if header else 1
    return frame


def load_cloudsimpy(path: str | Path) -> list[JobSpec]:
    """Read a CloudSimPy jobs.csv into jobs in CloudSimPy's order (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such trace file")
    frame = _read(path)
    frame.columns = [str(c).replace("\ufeff", "").strip() for c in frame.columns]
    missing = [c for c in CLOUDSIMPY_COLUMNS if c not in frame.columns]
    if missing:
        raise TraceFormatError(
            f"{path}: missing column(s) {missing} for --format cloudsimpy; the header must name "
            f"{', '.join(CLOUDSIMPY_COLUMNS)} (found {list(frame.columns)})"
        )
    if frame.empty:
        raise EmptyWorkloadError(f"{path}: has a header row but no data rows: no jobs to load")
    for column in CLOUDSIMPY_COLUMNS:
        values = pd.to_numeric(frame[column], errors="coerce")
        if values.isna().any():
            raise _rows_error(path, frame, values.isna(), column, "is empty or not a number")
        infinite = ~np.isfinite(values.to_numpy(dtype=np.float64))
        if infinite.any():
            raise _rows_error(path, frame, pd.Series(infinite), column, "is not a finite number")
        if (values < 0).any():
            raise _rows_error(path, frame, values < 0, column, "is negative")
        if column in _WHOLE:  # checked before conversion, so that the message shows the value as written
            if (values % 1 != 0).any():
                raise _rows_error(path, frame, values % 1 != 0, column, "is not a whole number")
            beyond = values.to_numpy(dtype=np.float64) >= 2.0**63  # int64 would wrap around silently
            if beyond.any():
                raise _rows_error(path, frame, pd.Series(beyond), column, "is beyond the 64-bit integer range")
        beyond = values.to_numpy(dtype=np.float64) >= EXACT_BOUND  # not negative: checked above
        if beyond.any():
            raise _rows_error(path, frame, pd.Series(beyond), column, BEYOND_EXACT)
        if column in _WHOLE:
            values = values.astype(np.int64)
        frame[column] = values
    if (frame.instances_num < 1).any():
        raise _rows_error(path, frame, frame.instances_num < 1, "instances_num", "is below 1")
    duplicated = frame.duplicated(["job_id", "task_id"], keep="first")
    if duplicated.any():
        raise _rows_error(path, frame, duplicated, "task_id", "repeats a task id of the same job")

    codes, _ = pd.factorize(frame.job_id, sort=False)  # job order = first appearance
    rows_by_job = np.argsort(codes, kind="stable")
    bounds = np.flatnonzero(np.diff(codes[rows_by_job])) + 1
    columns = {c: frame[c].to_numpy() for c in CLOUDSIMPY_COLUMNS}
    jobs = []
    for rows in np.split(rows_by_job, bounds):
        tasks = tuple(
            TaskSpec(
                id=int(columns["task_id"][r]),
                instances=int(columns["instances_num"][r]),
                demand={"cpu": columns["cpu"][r], "memory": columns["memory"][r], "disk": columns["disk"][r]},
                duration=float(columns["duration"][r]),
            )
            for r in rows
        )
        last = rows[-1]
        jobs.append(JobSpec(int(columns["job_id"][last]), columns["submit_time"][last].item(), tasks))
    jobs.sort(key=lambda j: j.submit_time)
    return jobs
