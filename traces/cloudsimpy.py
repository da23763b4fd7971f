"""Loader for CloudSimPy's jobs.csv: one row per task of the Alibaba v2017 batch workload.

Columns: submit_time (s), duration (s, the mean over the task's instances), cpu
(cores), memory (normalised to 1), job_id, task_id, instances_num, disk. A
leading unnamed column (a pandas index) is ignored. A file without a header row
is read as these columns in this order (with or without the index column).

Jobs are built exactly as CloudSimPy builds them, which replays need for equal
makespans: rows are grouped by job_id in order of first appearance, tasks keep
file order, a job's submit time is the submit_time of its *last* row (some jobs
have tasks with different submit times), and jobs are then sorted by submit
time, stably. The file is parsed with pandas' default CSV reader, as CloudSimPy
does, so every float is the same double.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd

from cloudsim.specs import JobSpec, TaskSpec
from traces.rawcsv import TraceFormatError

__all__ = ["CLOUDSIMPY_COLUMNS", "TraceFormatError", "load_cloudsimpy"]

CLOUDSIMPY_COLUMNS = ("submit_time", "duration", "cpu", "memory", "job_id", "task_id", "instances_num", "disk")


def _rows_error(path: Path, frame: pd.DataFrame, bad: pd.Series, column: str, what: str) -> TraceFormatError:
    rows = np.flatnonzero(bad.to_numpy())
    first = frame.attrs["first_data_line"]
    lines = ", ".join(str(r + first) for r in rows[:5]) + (" ..." if len(rows) > 5 else "")
    example = frame[column].iloc[rows[0]]
    return TraceFormatError(
        f"{path}: column {column!r} {what} on {len(rows)} line(s): {lines} (first value: {example!r})"
    )


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def load_cloudsimpy(path: str | Path) -> list[JobSpec]:
    """Read a CloudSimPy jobs.csv into jobs in CloudSimPy's order (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such trace file")
    try:
        with open(path, newline="") as handle:
            first = next(csv.reader(handle), [])
        headerless = bool(first) and all(_is_number(field) for field in first)
        names = {len(CLOUDSIMPY_COLUMNS): list(CLOUDSIMPY_COLUMNS), len(CLOUDSIMPY_COLUMNS) + 1: ["", *CLOUDSIMPY_COLUMNS]}
        if headerless and len(first) not in names:
            raise TraceFormatError(f"{path}: line 1 has {len(first)} columns and no header; a headerless jobs.csv "
                                   f"has the {len(CLOUDSIMPY_COLUMNS)} columns {', '.join(CLOUDSIMPY_COLUMNS)}")
        frame = pd.read_csv(path, header=None, names=names[len(first)]) if headerless else pd.read_csv(path)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as err:
        raise TraceFormatError(f"{path}: not a readable CSV file ({err})") from err
    frame.attrs["first_data_line"] = 1 if headerless else 2
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in CLOUDSIMPY_COLUMNS if c not in frame.columns]
    if missing:
        raise TraceFormatError(
            f"{path}: missing column(s) {missing} for --format cloudsimpy; the header must name "
            f"{', '.join(CLOUDSIMPY_COLUMNS)} (found {list(frame.columns)})"
        )
    for column in CLOUDSIMPY_COLUMNS:
        values = pd.to_numeric(frame[column], errors="coerce")
        if values.isna().any():
            raise _rows_error(path, frame, values.isna(), column, "is empty or not a number")
        if (values < 0).any():
            raise _rows_error(path, frame, values < 0, column, "is negative")
        frame[column] = values
    for column in ("job_id", "task_id", "instances_num"):
        if (frame[column] % 1 != 0).any():
            raise _rows_error(path, frame, frame[column] % 1 != 0, column, "is not a whole number")
        frame[column] = frame[column].astype(np.int64)
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
