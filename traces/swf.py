"""Loader for the Standard Workload Format (SWF) of the Parallel Workloads Archive.

SWF is the common currency of HPC scheduling research: one job a line, 18 whitespace-separated
fields, -1 where a value is unknown, and header comments (lines that start with ``;``) such as
``; MaxNodes: 256``. The fields, in order, are `SWF_FIELDS`.

How a log becomes jobs (one task each):

- A rigid job is one task whose instances are its processors: each instance takes one ``cpu``
  (one processor) for the job's run time (field 4). The processors are the allocated ones
  (field 5), or the requested ones (field 8) where the allocation is unknown.
- The requested time (field 9) is kept as the task's `TaskSpec.estimate` (``view.estimate``), for
  brokers that schedule on users' estimates; -1 leaves it unknown.
- The job number (field 1) is the job id and the submit time (field 2) its arrival; jobs are
  sorted by submit time, stably (the archive's files are already sorted).

Lines not replayed are skipped and counted (`Workload.skipped`), never dropped silently:

- ``partial_execution``: status 2, 3 or 4, a line for one part of a checkpointed or swapped job,
  whose summary line (status 0, 1 or 5) already describes the whole job;
- ``cancelled_before_start``: status 5 (cancelled) without a positive run time or known processors;
  a cancelled job that ran is kept, since it held its processors for its run time;
- ``unknown_run_time``, ``unknown_processors``, ``unknown_submit_time``: -1 where the replay needs a value;
- ``larger_than_machine``: more processors than the logged machine has (``MaxProcs``, else
  ``MaxNodes``, from the header).

A damaged file is refused with a `TraceFormatError` that names the file, the line and the field: a
line without 18 fields, a field that is not a number, a value that is not finite or beyond 2**53, a
negative value other than -1, a count that is not whole, a status the format does not define, a job
number given twice, or a header size that is not a whole number >= 1. A ``.swf.gz`` file is read as well.

The machine the log was recorded on (`machines_swf`) is ``MaxNodes`` machines of ``MaxProcs /
MaxNodes`` processors each (one each without ``MaxProcs``; ``MaxProcs`` machines of one without
``MaxNodes``).

The engine does not start a task's instances together: a broker may start some processors of a job
before others, as if the job were moldable (docs/guide/replay.md, "The Standard Workload Format").
"""

from __future__ import annotations

import gzip
import math
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cloudsim.engine.specs import EXACT_BOUND, ClusterSpec, JobSpec, TaskSpec
from traces.rawcsv import BEYOND_EXACT, EmptyWorkloadError, TraceFormatError, exact_floats, open_text
from traces.workload import Workload

__all__ = ["SWF_FIELDS", "SwfHeader", "load_swf", "machines_swf", "swf_header"]

SWF_FIELDS = ("job", "submit_time", "wait_time", "run_time", "allocated_processors", "average_cpu_time",
              "used_memory", "requested_processors", "requested_time", "requested_memory", "status", "user",
              "group", "executable", "queue", "partition", "preceding_job", "think_time")
_FIELD = {name: i for i, name in enumerate(SWF_FIELDS)}
_USED = ("job", "submit_time", "run_time", "allocated_processors", "requested_processors", "requested_time",
         "status")
_WHOLE = ("job", "allocated_processors", "requested_processors", "status")
_STATUSES = (-1, 0, 1, 2, 3, 4, 5)  # unknown, failed, completed, partial (3 kinds), cancelled
_PARTIAL = (2, 3, 4)
_CANCELLED = 5
SKIP_REASONS = ("partial_execution", "cancelled_before_start", "unknown_submit_time", "unknown_run_time",
                "unknown_processors", "larger_than_machine")


@dataclass(frozen=True)
class SwfHeader:
    """The header comments that size the logged machine (None where the header does not say)."""

    max_nodes: int | None = None
    max_procs: int | None = None

    @property
    def processors(self) -> int | None:
        """How many processors the logged machine has, if the header says."""
        return self.max_procs if self.max_procs is not None else self.max_nodes


def _open(path: Path):
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such trace file")
    return open_text(path)


def _read_lines(path: Path):
    """(line number, text) of every line, with gzip and UTF-8 damage named."""
    try:
        with _open(path) as handle:
            for number, line in enumerate(handle, start=1):
                if not line.isascii() and any("\udc80" <= c <= "\udcff" for c in line):
                    raise TraceFormatError(f"{path}: line {number}: a byte is not UTF-8; an SWF log is plain "
                                           f"text (convert it with iconv -f latin1 -t utf-8)")
                yield number, line
    except (EOFError, zlib.error, gzip.BadGzipFile) as err:
        raise TraceFormatError(f"{path}: is not a whole gzip file ({err}); compress or download it again, "
                               f"or pass the plain .swf") from None


def _header_size(path: Path, number: int, key: str, text: str) -> int | None:
    try:
        value = float(text.split()[0]) if text.split() else math.nan
    except ValueError:
        value = math.nan
    if value == -1:
        return None  # unknown, as everywhere in SWF
    if not (math.isfinite(value) and value == int(value) and 1 <= value < EXACT_BOUND):
        raise TraceFormatError(f"{path}: line {number}: header {key} is {text.strip()!r}; it must be a whole "
                               f"number >= 1 (or -1 for unknown)")
    return int(value)


def _parse_header_line(path: Path, number: int, line: str, sizes: dict) -> None:
    key, colon, value = line.lstrip(";").partition(":")
    key = key.strip()
    if colon and key in ("MaxNodes", "MaxProcs"):
        sizes[key] = _header_size(path, number, key, value)


def swf_header(path: str | Path) -> SwfHeader:
    """The machine size the log's header comments give (read up to the first job line)."""
    path = Path(path)
    sizes: dict[str, int | None] = {}
    for number, line in _read_lines(path):
        text = line.strip()
        if not text:
            continue
        if not text.startswith(";"):
            break
        _parse_header_line(path, number, text, sizes)
    return SwfHeader(sizes.get("MaxNodes"), sizes.get("MaxProcs"))


def machines_swf(path: str | Path) -> ClusterSpec:
    """The machine the log was recorded on, from its header (see the module docstring).

    Raises `TraceFormatError` when the header gives neither ``MaxNodes`` nor ``MaxProcs``, or
    processors that do not split evenly over the nodes; the message says how to give a cluster.
    """
    path = Path(path)
    header = swf_header(path)
    fix = "give the cluster with --machines N --capacity cpu=P (P processors a machine)"
    if header.max_nodes is None and header.max_procs is None:
        raise TraceFormatError(f"{path}: the header gives neither MaxNodes nor MaxProcs, so the logged machine "
                               f"is unknown; {fix}")
    if header.max_nodes is None:
        return ClusterSpec.uniform(header.max_procs, {"cpu": 1.0})
    if header.max_procs is None:
        return ClusterSpec.uniform(header.max_nodes, {"cpu": 1.0})
    if header.max_procs % header.max_nodes:
        raise TraceFormatError(f"{path}: MaxProcs {header.max_procs} does not split evenly over MaxNodes "
                               f"{header.max_nodes} nodes; {fix}")
    return ClusterSpec.uniform(header.max_nodes, {"cpu": float(header.max_procs // header.max_nodes)})


def _parse(path: Path) -> tuple[np.ndarray, np.ndarray, SwfHeader]:
    """(the used fields of every job line as float64 (lines, len(_USED)), their line numbers, header)."""
    rows: list[list[str]] = []
    numbers: list[int] = []
    sizes: dict[str, int | None] = {}
    columns = [_FIELD[name] for name in _USED]
    for number, line in _read_lines(path):
        text = line.strip()
        if not text:
            continue
        if text.startswith(";"):
            if not rows:
                _parse_header_line(path, number, text, sizes)
            continue
        fields = text.split()
        if len(fields) != len(SWF_FIELDS):
            raise TraceFormatError(f"{path}: line {number}: expected {len(SWF_FIELDS)} fields (SWF: "
                                   f"{', '.join(SWF_FIELDS)}), found {len(fields)}")
        rows.append([fields[c] for c in columns])
        numbers.append(number)
    if not rows:
        raise EmptyWorkloadError(f"{path}: has no job lines (only {'header comments' if sizes else 'blank lines'}): "
                                 f"no jobs to load")
    texts = [field for row in rows for field in row]
    values = exact_floats(texts).reshape(len(rows), len(columns))
    unread = np.isnan(values) & ~np.array([field.lower().lstrip("+-") == "nan"
                                           for field in texts]).reshape(values.shape)
    if unread.any():
        row, k = np.argwhere(unread)[0]
        raise TraceFormatError(f"{path}: line {numbers[row]}: field {columns[k] + 1} ({SWF_FIELDS[columns[k]]}) is "
                               f"{rows[row][k]!r}, not a number")
    return values, np.array(numbers, dtype=np.int64), SwfHeader(sizes.get("MaxNodes"), sizes.get("MaxProcs"))


def _check(path: Path, values: np.ndarray, lines: np.ndarray) -> None:
    """Refuse a damaged value of a used field, naming its first line."""
    def refuse(bad: np.ndarray, name: str, problem: str) -> None:
        if bad.any():
            first = int(np.argmax(bad))
            count = int(bad.sum())
            more = f" (and {count - 1} more line(s))" if count > 1 else ""
            value = values[first, _USED.index(name)]
            raise TraceFormatError(f"{path}: line {lines[first]}: field {_FIELD[name] + 1} ({name}) is "
                                   f"{value:g}: {problem}{more}")

    for k, name in enumerate(_USED):
        column = values[:, k]
        refuse(~np.isfinite(column), name, "not a finite number")
        refuse(np.abs(column) >= EXACT_BOUND, name, BEYOND_EXACT)
        refuse((column < 0) & (column != -1), name, "negative; SWF writes -1 for unknown and defines no other "
               "negative value")
        if name in _WHOLE:
            refuse(column != np.floor(column), name, "not a whole number")
    status = values[:, _USED.index("status")]
    refuse(~np.isin(status, _STATUSES), "status", "not a status SWF defines (-1, 0, 1, 2, 3, 4 or 5)")


def load_swf(path: str | Path) -> Workload:
    """Read an SWF log (``.swf`` or ``.swf.gz``) into jobs of one task each (see the module docstring).

    Returns a `Workload` whose ``skipped`` counts every job line not replayed, by reason.
    Raises `TraceFormatError` (file, line, field) for a damaged file and `EmptyWorkloadError`
    when no line is left to replay.
    """
    path = Path(path)
    values, lines, header = _parse(path)
    _check(path, values, lines)
    column = {name: values[:, k] for k, name in enumerate(_USED)}

    status = column["status"]
    processors = np.where(column["allocated_processors"] >= 1, column["allocated_processors"],
                          np.where(column["requested_processors"] >= 1, column["requested_processors"], 0))
    run_time = column["run_time"]
    reasons = {
        "partial_execution": np.isin(status, _PARTIAL),
        "cancelled_before_start": (status == _CANCELLED) & ((run_time <= 0) | (processors == 0)),
        "unknown_submit_time": column["submit_time"] < 0,
        "unknown_run_time": run_time < 0,
        "unknown_processors": processors == 0,
        "larger_than_machine": (processors > header.processors if header.processors is not None
                                else np.zeros(len(values), dtype=bool)),
    }
    skipped: dict[str, int] = {}
    left = np.ones(len(values), dtype=bool)
    for reason in SKIP_REASONS:  # each line counts once, under its first reason
        hit = reasons[reason] & left
        if hit.any():
            skipped[reason] = int(hit.sum())
        left &= ~hit
    keep = np.flatnonzero(left)
    numbers = column["job"][keep]
    if len(np.unique(numbers)) != len(numbers):
        order = np.argsort(numbers, kind="stable")
        repeated = order[1:][np.diff(numbers[order]) == 0][0]
        first = order[np.searchsorted(numbers[order], numbers[repeated])]
        raise TraceFormatError(f"{path}: line {lines[keep[repeated]]}: job number {numbers[repeated]:g} was "
                               f"already given on line {lines[keep[first]]}; each job needs its own number")
    if not len(keep):
        counts = ", ".join(f"{n} {reason}" for reason, n in skipped.items())
        raise EmptyWorkloadError(f"{path}: no job line is left to replay (skipped: {counts})")
    requested_time = column["requested_time"]
    jobs = [
        JobSpec(int(column["job"][r]), float(column["submit_time"][r]), (
            TaskSpec(id=0, instances=int(processors[r]), demand={"cpu": 1.0}, duration=float(run_time[r]),
                     estimate=None if requested_time[r] < 0 else float(requested_time[r])),))
        for r in keep
    ]
    jobs.sort(key=lambda job: job.submit_time)
    source = {"swf": str(path)}
    return Workload(jobs, skipped=skipped, source=source)
