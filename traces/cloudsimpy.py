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
integer range or reaching 2**53 (`cloudsim.engine.specs.EXACT_BOUND`), and bytes that are not UTF-8.

Jobs are built exactly as CloudSimPy builds them, which replays need for equal
makespans: rows are grouped by job_id in order of first appearance, tasks keep
file order, a job's submit time is the submit_time of its *last* row (some jobs
have tasks with different submit times), and jobs are then sorted by submit
time, stably. Every number is the double nearest to its text (`traces.rawcsv.exact_floats`, the
one parser of every loader), which is what CloudSimPy's own reading gave: its results are
reproduced exactly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cloudsim.engine.specs import EXACT_BOUND, JobSpec, TaskSpec
from traces.rawcsv import (BEYOND_EXACT, EmptyWorkloadError, TraceFormatError, exact_floats, first_row, is_number,
                           read_text_table)

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CLOUDSIMPY_COLUMNS", "EmptyWorkloadError", "TraceFormatError", "load_cloudsimpy"]

CLOUDSIMPY_COLUMNS = ("submit_time", "duration", "cpu", "memory", "job_id", "task_id", "instances_num", "disk")
_WHOLE = ("job_id", "task_id", "instances_num")


def _rows_error(path: Path, frame: pd.DataFrame, bad: np.ndarray, column: str, what: str) -> TraceFormatError:
    rows = np.flatnonzero(bad)
    first = frame.attrs["first_data_line"]
    lines = ", ".join(str(r + first) for r in rows[:5]) + (" ..." if len(rows) > 5 else "")
    example = frame[column].iloc[rows[0]]  # the text as written, or the number once converted
    example = example.item() if isinstance(example, np.generic) else example
    return TraceFormatError(
        f"{path}: column {column!r} {what} on {len(rows)} line(s): {lines} (first value: {example!r})"
    )


def _is_header(first: list[str]) -> bool:
    names = [field.replace("\ufeff", "").strip().lower() for field in first]
    return any(name in CLOUDSIMPY_COLUMNS for name in names) or not any(is_number(name) for name in names)


def _read(path: Path) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """The file's columns as text (a frame) and the numbers of `CLOUDSIMPY_COLUMNS` (NaN where not one)."""
    import pandas as pd
    first = first_row(path)
    header = _is_header(first)
    names = {len(CLOUDSIMPY_COLUMNS): list(CLOUDSIMPY_COLUMNS), len(CLOUDSIMPY_COLUMNS) + 1: ["", *CLOUDSIMPY_COLUMNS]}
    if not header and len(first) not in names:
        raise TraceFormatError(f"{path}: line 1 has {len(first)} columns and no header; a headerless jobs.csv "
                               f"has the {len(CLOUDSIMPY_COLUMNS)} columns {', '.join(CLOUDSIMPY_COLUMNS)}")
    columns, table, first_line = read_text_table(path, None if header else names[len(first)])
    missing = [c for c in CLOUDSIMPY_COLUMNS if c not in columns]
    if missing:
        raise TraceFormatError(
            f"{path}: missing column(s) {missing} for --format cloudsimpy; the header must name "
            f"{', '.join(CLOUDSIMPY_COLUMNS)} (found {columns})"
        )
    texts = {c: table.column(columns.index(c)) for c in CLOUDSIMPY_COLUMNS}
    frame = pd.DataFrame({c: np.asarray(texts[c].to_pylist(), dtype=object) for c in CLOUDSIMPY_COLUMNS})
    frame.attrs["first_data_line"] = first_line
    return frame, {c: exact_floats(texts[c]) for c in CLOUDSIMPY_COLUMNS}


def load_cloudsimpy(path: str | Path) -> list[JobSpec]:
    """Read a CloudSimPy jobs.csv into jobs in CloudSimPy's order (see the module docstring)."""
    import pandas as pd
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such trace file")
    frame, numbers = _read(path)
    if frame.empty:
        raise EmptyWorkloadError(f"{path}: has a header row but no data rows: no jobs to load")
    for column in CLOUDSIMPY_COLUMNS:
        values = numbers[column]
        for bad, what in ((np.isnan(values), "is empty or not a number"),
                          (np.isinf(values), "is not a finite number"),
                          (values < 0, "is negative")):
            if bad.any():
                raise _rows_error(path, frame, bad, column, what)
        if column in _WHOLE:  # checked before conversion: int64 would wrap around silently
            if (values % 1 != 0).any():
                raise _rows_error(path, frame, values % 1 != 0, column, "is not a whole number")
            if (values >= 2.0**63).any():
                raise _rows_error(path, frame, values >= 2.0**63, column, "is beyond the 64-bit integer range")
        if (values >= EXACT_BOUND).any():  # not negative: checked above
            raise _rows_error(path, frame, values >= EXACT_BOUND, column, BEYOND_EXACT)
        frame[column] = values.astype(np.int64) if column in _WHOLE else values
    if (frame.instances_num < 1).any():
        raise _rows_error(path, frame, (frame.instances_num < 1).to_numpy(), "instances_num", "is below 1")
    duplicated = frame.duplicated(["job_id", "task_id"], keep="first").to_numpy()
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
