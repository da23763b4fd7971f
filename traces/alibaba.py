"""Loaders for the Alibaba cluster traces v2017 and v2018, as published (headerless CSV).

Each raw table is converted once, streamed, into a typed Parquet file in the
cache (see `traces.cache`). From it a per-job index is computed once per
status policy and cached beside it: for every job its submit time, whether it
is replayable, where its rows are (Parquet row groups) and its skipped tasks
by reason. Loading then reads the index and only the rows of the jobs asked
for. Units after loading, for every format of the project: cpu in cores (the
traces' ``plan_cpu`` / 100), memory as a fraction of a machine's normalised
memory (v2017 as published, v2018 ``plan_mem`` / 100), times in seconds of
trace time.

Rows that the real data is known to have and that cannot be replayed are
skipped, counted by reason in `Workload.skipped` (in tasks), never dropped silently:

========================  =========================================================
``status_<Status>``        the task's status is not Terminated and the policy is "drop"
``missing_demand``         plan_cpu or plan_mem is empty (or NaN)
``missing_instances``      the instance count is empty or below 1
``missing_time``           the start (create) or end time is empty
``no_end_time``            end time is 0 (still running when the trace ended)
``before_window``          start (create) time <= 0: before the trace window
``end_before_start``       end time before start (create) time
``zero_demand``            plan_cpu and plan_mem both 0 (nothing to place)
``job_incomplete``         v2018: another task of the same DAG job was skipped (whole job)
``unknown_parent``         v2018: a dependency names a task absent from the job (whole job)
``dependency_cycle``       v2018: the job's dependencies form a loop, e.g. ``R1_2`` and
                           ``R2_1`` (Alibaba's own tracker reports loops in the 2018
                           trace); the job is skipped whole
========================  =========================================================

`Workload.notes` counts things kept but worth knowing:

=====================================  ==================================================
``truncated_task_names``               v2018 task names cut by the trace at 50 characters
``tasks_timed_by_instances``           tasks whose durations come from batch_instance
``instances_without_terminated_row``   instances of the task count with no Terminated row
``instances_beyond_instance_count``    Terminated rows beyond the task's instance count
``instance_rows_skipped_bad_times``    Terminated instance rows with start <= 0 or end < start
``instance_rows_unknown_task``         Terminated instance rows of a loaded job naming a task
                                       that batch_task does not list for that job
``instance_rows_unknown_job``          Terminated instance rows of jobs that are not in
                                       batch_task at all (whole trace, whatever the window)
=====================================  ==================================================

Values that are wrong rather than dirty (a negative demand, an instance count
that is not a whole number, an unknown status, a duplicate task id in a job)
raise `TraceFormatError` naming the file, line and column. A trace, window or
job selection left with no replayable job raises `EmptyWorkloadError` with
the skip counts.

**Selecting jobs.** ``window=(start, end)`` keeps the jobs submitted in
[start, end) with all their tasks; ``jobs=(a, b)`` keeps the replayable jobs
a..b-1 in submit order (of the window's jobs when both are given): exactly
``load(...).jobs[a:b]``, since jobs are sorted by submit time, ties in the order
of their first replayable row in the file. ``b`` None, or beyond the end,
means up to the last job; `Workload.total_jobs` says how many there are, so a
caller can refuse a range past the end. ``skipped`` and ``truncated_task_names``
always count the whole trace (the window's jobs with a window), selection or
not; the per-instance notes count the batch_instance rows of the jobs loaded.

**Machine tables** (`machines_v2017`, `machines_v2018`). Errors name the
trace's machine id and the column: an empty or negative capacity, an unknown
v2017 event type, an event of a machine that has no ``add`` event, a v2018
machine id not of the form ``m_<n>``. `MachineTable.skipped` counts rows not
used, `MachineTable.notes` rows used with a reading worth knowing:

=============================  =========  ==========================================
``missing_time``               skipped    the timestamp is empty
``missing_status``             skipped    v2018: the status is empty
``before_window``              note       negative timestamp (before the trace window):
                                          the event applies from t=0
``unknown_status_<Status>``    note       v2018: a status other than USING and
                                          IMPORT_INSTALLING; the machine is out of
                                          service, as for any status but USING
=============================  =========  ==========================================
"""

from __future__ import annotations

import dataclasses
import operator
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from cloudsim.engine.specs import EXACT_BOUND, ClusterSpec, JobBlock, JobSpec, MachineEvent, TaskSpec
from traces.cache import CacheError, DamagedCacheEntry, cached_derived, cached_parquet, discard_entry, reading
from traces.rawcsv import BEYOND_EXACT, EmptyWorkloadError, TableSpec, TraceFormatError, stream_batches, stream_table
from traces.workload import Workload

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "MachineTable",
    "Workload",
    "load_alibaba_v2017",
    "load_alibaba_v2018",
    "machines_v2017",
    "machines_v2018",
    "parse_task_name",
    "shift_events",
]

STATUSES = frozenset({"Ready", "Waiting", "Running", "Terminated", "Failed", "Cancelled", "Interrupted"})
STATUS_POLICIES = ("drop", "keep")
MACHINE_STATUSES_V2018 = {"USING": "up", "IMPORT_INSTALLING": "down"}
I64, F64, STR = pa.int64(), pa.float64(), pa.string()

V2017_BATCH_TASK = TableSpec(
    "alibaba-v2017 batch_task",
    ("task_create_time", "task_end_time", "job_id", "task_id", "instances", "status", "plan_cpu", "plan_mem"),
    {"task_create_time": I64, "task_end_time": I64, "job_id": I64, "task_id": I64, "instances": F64,
     "status": STR, "plan_cpu": F64, "plan_mem": F64},
    # The header of the circulating copy of the real table (see ../shared/data/README.md).
    aliases=(("task_create_time", "task_end_time", "job_id", "task_id", "number_of_instances", "status",
              "number_of_cpus_requested_per_instance_in_the_task",
              "normalized_memory_requested_per_instance_in_the_task"),),
)
V2017_BATCH_INSTANCE = TableSpec(
    "alibaba-v2017 batch_instance",
    ("start_timestamp", "end_timestamp", "job_id", "task_id", "machine_id", "status", "seq_no", "total_seq_no",
     "real_cpu_max", "real_cpu_avg", "real_mem_max", "real_mem_avg"),
    {"start_timestamp": I64, "end_timestamp": I64, "job_id": I64, "task_id": I64, "status": STR},
)
V2017_SERVER_EVENT = TableSpec(
    "alibaba-v2017 server_event",
    ("timestamp", "machine_id", "event_type", "event_detail", "cpus", "memory", "disk"),
    {"timestamp": I64, "machine_id": I64, "event_type": STR, "cpus": F64, "memory": F64, "disk": F64},
)
V2018_BATCH_TASK = TableSpec(
    "alibaba-v2018 batch_task",
    ("task_name", "instance_num", "job_name", "task_type", "status", "start_time", "end_time", "plan_cpu", "plan_mem"),
    {"task_name": STR, "instance_num": F64, "job_name": STR, "status": STR, "start_time": I64, "end_time": I64,
     "plan_cpu": F64, "plan_mem": F64},
)
V2018_BATCH_INSTANCE = TableSpec(
    "alibaba-v2018 batch_instance",
    ("instance_name", "task_name", "job_name", "task_type", "status", "start_time", "end_time", "machine_id",
     "seq_no", "total_seq_no", "cpu_avg", "cpu_max", "mem_avg", "mem_max"),
    {"task_name": STR, "job_name": STR, "status": STR, "start_time": I64, "end_time": I64},
)
V2018_MACHINE_META = TableSpec(
    "alibaba-v2018 machine_meta",
    ("machine_id", "time_stamp", "failure_domain_1", "failure_domain_2", "cpu_num", "mem_size", "status"),
    {"machine_id": STR, "time_stamp": I64, "cpu_num": F64, "mem_size": F64, "status": STR},
)

# The common cleaned form of a task row, whatever the trace version.
_TASK_SCHEMA = pa.schema([
    ("line", I64), ("job", STR), ("task", STR), ("instances", F64), ("status", STR),
    ("start", I64), ("end", I64), ("cpu", F64), ("memory", F64),
])
_INSTANCE_SCHEMA = pa.schema([("line", I64), ("job", STR), ("task", STR), ("start", I64), ("end", I64)])
_INSTANCE_INDEX_SCHEMA = pa.schema([("job", STR), ("rows", I64), ("rg_first", I64), ("rg_last", I64)])
# Bump when the job index's content or meaning changes: it is part of the index entry's key.
_INDEX_VERSION = 1

# Skip reasons and their codes in the job index; a row takes the first reason that applies, in this order.
_STATUS_REASONS = tuple(f"status_{s}" for s in sorted(STATUSES - {"Terminated"})) + ("status_(empty)",)
_ROW_REASONS = ("missing_demand", "missing_instances", "missing_time", "no_end_time", "before_window",
                "end_before_start", "zero_demand")
_JOB_REASONS = ("job_incomplete", "unknown_parent", "dependency_cycle")
REASONS = ("",) + _STATUS_REASONS + _ROW_REASONS + _JOB_REASONS
_CODE = {reason: code for code, reason in enumerate(REASONS)}
_SKIP = "skip:"
_NONE = np.iinfo(np.int64).max


@dataclass
class MachineTable:
    """Machines read from a trace: the cluster and the machine events to replay on it.

    ``skipped``: rows not used, by reason; ``notes``: rows used with a reading worth
    knowing (the keys are in this module's docstring).
    """

    cluster: ClusterSpec
    events: list[MachineEvent]
    skipped: dict[str, int] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)

    def sample(self, count: int, seed: int | None = 0) -> "MachineTable":
        """``count`` of the table's machines, drawn with ``seed`` so that each shape (capacity row) keeps its
        share: shape k of ``c_k`` machines gets ``count x c_k / machines`` of them, rounded by largest remainder
        (the earlier shape on ties), its machines drawn uniformly without replacement and kept in table order.
        Their events are kept, renumbered; the notes count the machines drawn from (``machines_sampled_from``)."""
        machines = self.cluster.machines
        if not 1 <= count <= machines:
            raise ValueError(f"{count} machines cannot be drawn from a table of {machines}")
        shapes: dict[tuple, list[int]] = {}
        for m, row in enumerate(self.cluster.capacities):
            shapes.setdefault(tuple(row), []).append(m)
        quotas = [count * len(members) / machines for members in shapes.values()]
        taken = [int(q) for q in quotas]
        order = sorted(range(len(quotas)), key=lambda k: (-(quotas[k] - taken[k]), k))  # largest remainder first
        for k in order[:count - sum(taken)]:
            taken[k] += 1
        rng = np.random.default_rng(seed)
        chosen = sorted(m for members, n in zip(shapes.values(), taken)
                        for m in rng.choice(members, size=n, replace=False).tolist())
        position = {m: k for k, m in enumerate(chosen)}
        cluster = ClusterSpec(self.cluster.resources, tuple(self.cluster.capacities[m] for m in chosen),
                              machine_ids=tuple(self.cluster.machine_ids[m] for m in chosen))
        events = [dataclasses.replace(e, machine=position[e.machine]) for e in self.events if e.machine in position]
        return MachineTable(cluster, events, dict(self.skipped), {**self.notes, "machines_sampled_from": machines})


def _plain(value: object) -> object:
    """A value as the file had it, for messages: numpy scalars as Python ones, NaN (an empty field) as ''."""
    value = value.item() if isinstance(value, np.generic) else value
    return "" if value is None or (isinstance(value, float) and value != value) else value


def _bad_rows(path: Path, column: str, what: str, lines: Sequence[int], first_value: object,
              machines: Sequence[object] = ()) -> TraceFormatError:
    first_value = _plain(first_value)
    machines = [_plain(m) for m in machines]
    shown = ", ".join(map(str, lines[:5])) + (" ..." if len(lines) > 5 else "")
    which = ""
    if machines:
        which = ("machine " if len(machines) == 1 else "machines ") + ", ".join(map(str, machines[:5]))
        which += (" ..." if len(machines) > 5 else "") + "; "
    return TraceFormatError(f"{path}: column {column!r} {what} on {len(lines)} line(s): {shown} "
                            f"({which}first value: {first_value!r})")


def _check_values(path: Path, frame: pd.DataFrame, column: str, bad: pd.Series, what: str,
                  machine_column: str | None = None) -> None:
    if bad.any():
        rows = frame.loc[bad.to_numpy()]
        machines = rows[machine_column].tolist() if machine_column and machine_column != column else []
        raise _bad_rows(path, column, what, rows.line.tolist(), rows[column].iloc[0], machines)


def _check_statuses(path: Path, first_line: int, status: pa.Array) -> None:
    """Empty or one of `STATUSES` on every row of a batch whose first row is file line ``first_line``."""
    unknown = pc.and_(pc.is_valid(status), pc.invert(pc.is_in(status, value_set=pa.array(sorted(STATUSES)))))
    if pc.any(unknown).as_py():
        bad = pc.indices_nonzero(unknown).to_pylist()
        raise _bad_rows(path, "status", f"is not one of {sorted(STATUSES)}", [first_line + i for i in bad],
                        status[bad[0]].as_py())


def _convert_tasks(path: Path, spec: TableSpec, rename: dict, cpu_scale: float, memory_scale: float):
    import pandas as pd
    def convert(write: Callable[[pa.Table], None]) -> dict:
        rows = 0
        for frame in stream_table(path, spec):
            if len(frame):
                _check_statuses(path, int(frame.line.iloc[0]), pa.array(frame.status, STR))
            count_column = rename["instances"]
            counts = frame[count_column]
            _check_values(path, frame, count_column, counts.notna() & ((counts % 1 != 0) | (counts < 0)),
                          "is not a whole number >= 0")
            for column in ("plan_cpu", "plan_mem"):
                _check_values(path, frame, column, frame[column] < 0, "is negative")
            for column in (rename["job"], rename["task"]):
                _check_values(path, frame, column, frame[column].isna(), "is empty")
            out = pd.DataFrame({
                "line": frame.line,
                "job": frame[rename["job"]].astype(str),
                "task": frame[rename["task"]].astype(str),
                "instances": counts,
                "status": frame.status,
                "start": frame[rename["start"]],
                "end": frame[rename["end"]],
                "cpu": frame.plan_cpu / cpu_scale,
                "memory": frame.plan_mem / memory_scale,
            })
            write(pa.Table.from_pandas(out, preserve_index=False))
            rows += len(out)
        return {"rows": rows}

    return convert


def _convert_instances(path: Path, spec: TableSpec, rename: dict):
    # The largest table (v2018: 1.35 billion rows) stays in Arrow: no Python objects per row.
    def convert(write: Callable[[pa.Table], None]) -> dict:
        rows = kept = 0
        for line, batch in stream_batches(path, spec):
            status = batch.column("status")
            _check_statuses(path, line, status)
            rows += batch.num_rows
            terminated = pc.fill_null(pc.equal(status, "Terminated"), False)  # one finished run per instance
            out = pa.table({
                "line": pa.array(range(line, line + batch.num_rows), I64),
                "job": pc.cast(batch.column(rename["job"]), STR),
                "task": pc.cast(batch.column(rename["task"]), STR),
                "start": batch.column(rename["start"]),
                "end": batch.column(rename["end"]),
            }).filter(terminated)
            write(out)
            kept += out.num_rows
        return {"rows": rows, "terminated_rows": kept}

    return convert


_NAME = re.compile(r"^[A-Za-z]+(\d+)((?:_\d*)*)$")


def parse_task_name(name: str) -> tuple[str, tuple[str, ...], bool]:
    """Split a v2018 task name into (task id, parent ids, truncated).

    ``M1`` -> ("1", (), False); ``R2_1`` -> ("2", ("1",), False); ``J3_1_2`` ->
    ("3", ("1", "2"), False). Names such as ``task_<base64>==`` are independent
    tasks: (name, (), False). The trace cuts names at a fixed length; a name
    ending in ``_`` or whose last number may be cut is reported as truncated,
    and an incomplete last number is not taken as a parent.
    """
    match = _NAME.match(name)
    if match is None:
        return name, (), False
    parents = tuple(p for p in match.group(2).split("_") if p)
    truncated = name.endswith("_") or len(name) >= 50
    if truncated and not name.endswith("_") and parents:
        parents = parents[:-1]
    return match.group(1), parents, truncated


# ----------------------------------------------------------------------------- row and job checks
def _numbers(table: pa.Table, column: str) -> np.ndarray:
    """A column as float64, NaN where empty (times are far below 2**53: exact)."""
    return np.asarray(table.column(column).to_numpy(), dtype=np.float64)


def _row_reasons(table: pa.Table, policy: str) -> np.ndarray:
    """The skip reason code (index into `REASONS`, 0 = kept) of every task row, vectorised."""
    code = np.zeros(table.num_rows, dtype=np.int8)

    def mark(condition: np.ndarray, reason: str) -> None:
        code[condition & (code == 0)] = _CODE[reason]

    if policy == "drop":
        status = pc.fill_null(table.column("status"), "(empty)")
        for name in pc.unique(status).to_pylist():
            if name != "Terminated":
                mark(pc.equal(status, name).to_numpy(), f"status_{name}")
    cpu, memory = _numbers(table, "cpu"), _numbers(table, "memory")
    instances, start, end = _numbers(table, "instances"), _numbers(table, "start"), _numbers(table, "end")
    mark(np.isnan(cpu) | np.isnan(memory), "missing_demand")
    mark(np.isnan(instances) | (instances < 1), "missing_instances")
    mark(np.isnan(start) | np.isnan(end), "missing_time")
    mark(end == 0, "no_end_time")
    mark(start <= 0, "before_window")
    mark(end < start, "end_before_start")
    mark((cpu == 0) & (memory == 0), "zero_demand")
    return code


def _combined(chunks: list[pa.ChunkedArray]) -> pa.Array:
    """String chunks as one array (large offsets: the whole trace's task names may pass 2 GB)."""
    arrays = [c for chunked in chunks for c in chunked.chunks]
    chunks.clear()  # the pieces are not needed once joined
    if not arrays:
        return pa.array([], pa.large_string())
    return pc.cast(pa.chunked_array(arrays), pa.large_string()).combine_chunks()


def _task_ids(names: pa.Array, dag: bool):
    """Per distinct task name: id code, truncated flag, and parents (CSR offsets, id codes).

    Only names of DAG form (``M1``, ``R2_1``) go through `parse_task_name` (a few
    thousand distinct ones in the real trace); the others are their own ids.
    """
    count = len(names)
    truncated = np.zeros(count, dtype=bool)
    offsets = np.zeros(count + 1, dtype=np.int64)
    if not dag:
        return np.arange(count, dtype=np.int64), truncated, offsets, np.zeros(0, dtype=np.int64)
    dag_like = np.flatnonzero(pc.fill_null(pc.match_substring_regex(names, _NAME.pattern), False).to_numpy(
        zero_copy_only=False))
    vocabulary: dict[str, int] = {}
    parsed = []
    for i, name in zip(dag_like.tolist(), names.take(pa.array(dag_like)).to_pylist()):
        task_id, parents, cut = parse_task_name(name)
        parsed.append((i, vocabulary.setdefault(task_id, len(vocabulary)),
                       [vocabulary.setdefault(p, len(vocabulary)) for p in parents]))
        truncated[i] = cut
    # Other names are ids of their own, after the DAG vocabulary, unless equal to a DAG id ("5" and "M5").
    ids = len(vocabulary) + np.arange(count, dtype=np.int64)
    if vocabulary:
        known = pa.array(list(vocabulary), pa.large_string())
        where = pc.index_in(names, value_set=known)
        same = np.flatnonzero(pc.is_valid(where).to_numpy(zero_copy_only=False))
        ids[same] = where.to_numpy(zero_copy_only=False)[same]
    counts = np.zeros(count, dtype=np.int64)
    for i, task_code, parents in parsed:
        ids[i] = task_code
        counts[i] = len(parents)
    offsets[1:] = np.cumsum(counts)
    flat = np.zeros(int(offsets[-1]), dtype=np.int64)
    for i, _, parents in parsed:
        flat[offsets[i]:offsets[i] + len(parents)] = parents
    return ids, truncated, offsets, flat


def _kahn_unfinished(nodes: int, child: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Nodes that a topological sort never reaches (on or after a cycle), all DAGs at once."""
    pending = np.bincount(child, minlength=nodes).astype(np.int64)
    order = np.argsort(parent, kind="stable")
    out_degree = np.bincount(parent, minlength=nodes)
    out_start = np.concatenate(([0], np.cumsum(out_degree)[:-1]))
    done = np.zeros(nodes, dtype=bool)
    frontier = np.flatnonzero(pending == 0)
    while frontier.size:
        done[frontier] = True
        counts = out_degree[frontier]
        total = int(counts.sum())
        if not total:
            break
        first = np.repeat(out_start[frontier], counts)
        within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        children = child[order[first + within]]
        np.subtract.at(pending, children, 1)
        candidates = np.unique(children)
        frontier = candidates[pending[candidates] == 0]
    return ~done


def _index_table(job: pa.Array, task: pa.Array, line: np.ndarray, start: np.ndarray, code: np.ndarray,
                 group: np.ndarray, dag: bool) -> pa.Table:
    """Per-job facts of the whole trace (one row per job, in order of first appearance).

    Row-sized arrays are int32 where they can be and dropped as soon as they are used:
    this runs once per cache entry over every row of the table.
    """
    encoded = job.dictionary_encode()
    jc = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int32)
    n = len(encoded.dictionary)
    rows = np.bincount(jc, minlength=n)
    kept_rows = np.flatnonzero(code == 0)
    kept_jc = jc[kept_rows]
    kept = np.bincount(kept_jc, minlength=n)

    submit = np.full(n, np.inf)
    valid = np.flatnonzero(start > 0)  # tasks skipped for their status were still created: they count
    np.minimum.at(submit, jc[valid], start[valid])
    del valid
    submit[np.isinf(submit)] = np.nan
    first_kept_line = np.full(n, _NONE, dtype=np.int64)
    np.minimum.at(first_kept_line, kept_jc, line[kept_rows])
    rg_first = np.full(n, _NONE, dtype=np.int64)
    rg_last = np.full(n, -1, dtype=np.int64)
    np.minimum.at(rg_first, jc, group)
    np.maximum.at(rg_last, jc, group)
    skips = {REASONS[c]: np.bincount(jc[code == c], minlength=n) for c in np.unique(code[code != 0]).tolist()}

    names = task.dictionary_encode()
    name_index = np.asarray(names.indices.to_numpy(zero_copy_only=False), dtype=np.int32)[kept_rows]
    id_of_name, truncated_name, parent_offsets, parent_codes = _task_ids(names.dictionary, dag)
    del names
    width = int(id_of_name.max()) + 1 if len(id_of_name) else 1
    key = kept_jc.astype(np.int64) * width + id_of_name[name_index]  # (job, task id) of each kept row

    # A task id twice among a job's kept rows is an error (raised when the job is loaded):
    # the first repeat in file order is the one reported.
    ordered = np.argsort(key, kind="stable")
    repeat = np.zeros(len(key), dtype=bool)
    repeat[1:] = key[ordered[1:]] == key[ordered[:-1]]
    repeats = ordered[repeat]  # positions among the kept rows
    del ordered, repeat
    duplicate_at = np.full(n, _NONE, dtype=np.int64)
    np.minimum.at(duplicate_at, kept_jc[repeats], repeats)
    has_duplicate = duplicate_at != _NONE
    duplicate_line = np.full(n, -1, dtype=np.int64)
    duplicate_line[has_duplicate] = line[kept_rows[duplicate_at[has_duplicate]]]
    duplicate_task = pa.nulls(n, STR)
    if has_duplicate.any():
        values: list[str | None] = [None] * n
        shown = task.take(pa.array(kept_rows[duplicate_at[has_duplicate]])).to_pylist()
        for j, name in zip(np.flatnonzero(has_duplicate).tolist(), shown):
            values[j] = name
        duplicate_task = pa.array(values, STR)
    truncated = np.bincount(kept_jc[truncated_name[name_index]], minlength=n)
    del kept_rows

    job_reason = np.zeros(n, dtype=np.int8)
    if dag:
        job_reason[(kept > 0) & (kept != rows)] = _CODE["job_incomplete"]
        complete = (kept > 0) & (kept == rows) & ~has_duplicate
        # Only jobs with dependencies can name an unknown parent or loop: the others are left out.
        parents = (parent_offsets[1:] - parent_offsets[:-1])[name_index]
        with_edges = np.bincount(kept_jc, weights=parents, minlength=n) > 0
        nodes = np.flatnonzero(complete[kept_jc] & with_edges[kept_jc])  # positions among the kept rows
        counts = parents[nodes]
        del parents
        total = int(counts.sum())
        child = np.repeat(nodes, counts)
        within = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        parent_key = kept_jc[child].astype(np.int64) * width + \
            parent_codes[np.repeat(parent_offsets[name_index[nodes]], counts) + within]
        del within, counts
        node_keys = key[nodes]
        by_key = np.argsort(node_keys)
        sorted_keys = node_keys[by_key]
        del node_keys
        at = np.minimum(np.searchsorted(sorted_keys, parent_key), max(len(sorted_keys) - 1, 0))
        found = sorted_keys[at] == parent_key if len(sorted_keys) else np.zeros(0, dtype=bool)
        unknown = np.zeros(n, dtype=bool)
        unknown[kept_jc[child[~found]]] = True
        job_reason[unknown & complete] = _CODE["unknown_parent"]
        # Cycles: one topological sort over every remaining DAG at once (node = position in ``nodes``).
        edges = found & ~unknown[kept_jc[child]]
        child_node = np.searchsorted(nodes, child[edges])
        parent_node = by_key[at[edges]]
        del child, parent_key, at, found, edges, by_key, sorted_keys
        open_nodes = _kahn_unfinished(len(nodes), child_node, parent_node)
        cyclic = np.zeros(n, dtype=bool)
        cyclic[kept_jc[nodes[open_nodes & ~unknown[kept_jc[nodes]]]]] = True
        job_reason[cyclic & complete & ~unknown] = _CODE["dependency_cycle"]
    replayable = (kept > 0) & ~has_duplicate & (job_reason == 0)
    for reason_code in np.unique(job_reason[job_reason != 0]).tolist():
        skips[REASONS[reason_code]] = np.where(job_reason == reason_code, kept, 0)

    columns = {
        "job": pc.cast(encoded.dictionary, STR), "submit": submit, "first_kept_line": first_kept_line,
        "kept": replayable, "rows": rows, "kept_rows": kept, "rg_first": rg_first, "rg_last": rg_last,
        "duplicate_line": duplicate_line, "duplicate_task": duplicate_task, "truncated": truncated,
    }
    columns.update({_SKIP + reason: counts for reason, counts in skips.items()})
    return pa.table(columns)


_INDEX_READ = ["line", "job", "task", "instances", "status", "start", "end", "cpu", "memory"]


def _build_index(handle: pq.ParquetFile, dag: bool, policy: str):
    def build(write: Callable[[pa.Table], None]) -> dict:
        jobs, tasks, lines, starts, codes, groups = [], [], [], [], [], []
        for g in range(handle.num_row_groups):  # one row group at a time: only the light columns stay
            table = handle.read_row_group(g, columns=_INDEX_READ)
            codes.append(_row_reasons(table, policy))
            jobs.append(table.column("job"))
            tasks.append(table.column("task"))
            lines.append(table.column("line").to_numpy())
            starts.append(_numbers(table, "start"))
            groups.append(np.full(table.num_rows, g, dtype=np.int32))
            del table

        def concat(parts: list, kind) -> np.ndarray:
            joined = np.concatenate(parts) if parts else np.zeros(0, dtype=kind)
            parts.clear()  # the pieces are not needed once joined
            return joined

        rows = sum(len(c) for c in codes)
        index = _index_table(_combined(jobs), _combined(tasks), concat(lines, np.int64), concat(starts, np.float64),
                             concat(codes, np.int8), concat(groups, np.int32), dag)
        write(index)
        return {"jobs": index.num_rows, "rows": int(rows)}

    return build


def _build_instance_index(handle: pq.ParquetFile):
    def build(write: Callable[[pa.Table], None]) -> dict:
        parts = []
        for g in range(handle.num_row_groups):
            counts = pc.value_counts(handle.read_row_group(g, columns=["job"]).column("job"))
            parts.append(pa.table({"job": counts.field("values"), "rows": counts.field("counts"),
                                   "rg": pa.array(np.full(len(counts), g, dtype=np.int64))}))
        if not parts:
            write(_INSTANCE_INDEX_SCHEMA.empty_table())
            return {"jobs": 0}
        index = pa.concat_tables(parts).group_by("job").aggregate([("rows", "sum"), ("rg", "min"), ("rg", "max")])
        write(pa.table({"job": index["job"], "rows": index["rows_sum"], "rg_first": index["rg_min"],
                        "rg_last": index["rg_max"]}))
        return {"jobs": index.num_rows}

    return build


def _row_groups(first: np.ndarray, last: np.ndarray, count: int) -> list[int]:
    """The row groups covered by the ranges [first, last]."""
    marks = np.zeros(count + 1, dtype=np.int64)
    np.add.at(marks, first, 1)
    np.add.at(marks, last + 1, -1)
    return np.flatnonzero(np.cumsum(marks)[:-1] > 0).tolist()


def _read_jobs(handle: pq.ParquetFile, path: Path, index: pa.Table, names: pa.Array, columns=None) -> pa.Table:
    """The rows of jobs ``names`` (rows of the index ``index``), reading only their row groups."""
    groups = _row_groups(index["rg_first"].to_numpy(), index["rg_last"].to_numpy(), handle.num_row_groups)
    parts = [handle.schema_arrow.empty_table().select(columns or handle.schema_arrow.names)]
    with reading(path):
        for g in groups:  # one row group at a time, keeping only the wanted jobs' rows
            part = handle.read_row_group(g, columns=columns)
            parts.append(part.filter(pc.is_in(part.column("job"), value_set=names)))
    table = pa.concat_tables(parts).combine_chunks()
    position = np.asarray(pc.index_in(table.column("job"), value_set=names).to_numpy(zero_copy_only=False),
                          dtype=np.int64)
    if not np.array_equal(np.bincount(position, minlength=len(names)), index["rows"].to_numpy()):
        raise DamagedCacheEntry(path, "its rows do not match its job index")
    return table


# ----------------------------------------------------------------------------- loading
def _skips_text(skipped: dict[str, int]) -> str:
    if not skipped:
        return "no task was skipped"
    total = sum(skipped.values())
    parts = ", ".join(f"{reason} {count}" for reason, count in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{total} task(s) skipped: {parts}"


def _check_jobs_argument(jobs) -> tuple[int, int | None] | None:
    if jobs is None:
        return None
    try:
        start, stop = jobs
        start = operator.index(start)
        stop = None if stop is None else operator.index(stop)
    except (TypeError, ValueError):
        raise ValueError(f"jobs must be (start, stop) with whole numbers 0 <= start < stop, got {jobs!r}") from None
    if start < 0 or (stop is not None and stop <= start):
        raise ValueError(f"jobs must be (start, stop) with 0 <= start < stop (stop None: to the end), got {jobs!r}")
    return start, stop


def _job_rows(rows: pa.Table, names: list[str], policy: str) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The kept task rows of jobs ``names`` as columns, job after job in this order, file order within a job;
    and where each job's rows begin (``len(names) + 1`` bounds)."""
    code = _row_reasons(rows, policy)
    kept = rows.filter(pa.array(code == 0))
    position = np.asarray(pc.index_in(kept.column("job"), value_set=pa.array(names, STR)).to_numpy(
        zero_copy_only=False), dtype=np.int64)
    order = np.argsort(position, kind="stable")  # by job, file order within a job
    columns = {c: kept.column(c).to_numpy(zero_copy_only=False)[order]
               for c in ("task", "instances", "start", "end", "cpu", "memory")}
    return columns, np.searchsorted(position[order], np.arange(len(names) + 1))


def _build_block(rows: pa.Table, names: list[str], submit: np.ndarray, policy: str, dag: bool) -> JobBlock:
    """The replayable jobs ``names`` (in this order) as one `JobBlock`: the jobs `_build_jobs` makes without
    per-instance durations, as columns."""
    columns, bounds = _job_rows(rows, names, policy)
    task_ids, parents, parent_start = [], [], [0]
    for j, job_id in enumerate(names):
        first, last = int(bounds[j]), int(bounds[j + 1])
        parsed = [parse_task_name(name) if dag else (name, (), False) for name in columns["task"][first:last].tolist()]
        row_of = {task_id: first + r for r, (task_id, _, _) in enumerate(parsed)}
        for task_id, of_task, _ in parsed:
            try:
                parents += [row_of[p] for p in of_task]
            except KeyError as missing:
                raise ValueError(f"job {job_id!r}, task {task_id!r}: unknown parent task {missing.args[0]!r}") from None
            parent_start.append(len(parents))
            task_ids.append(task_id)
    return JobBlock(ids=names, submit=np.asarray(submit, dtype=np.float64), task_start=bounds.astype(np.int64),
                    task_ids=task_ids, instances=columns["instances"].astype(np.int64), resources=("cpu", "memory"),
                    demand=np.column_stack([columns["cpu"], columns["memory"]]).astype(np.float64),
                    duration=(columns["end"] - columns["start"]).astype(np.float64),
                    parent_start=np.array(parent_start, dtype=np.int64), parents=np.array(parents, dtype=np.int64))


def _build_jobs(rows: pa.Table, names: list[str], submit: np.ndarray, instances: pd.DataFrame | None,
                policy: str, dag: bool, notes: Counter) -> list[JobSpec]:
    """JobSpecs of the replayable jobs ``names`` (in this order) from all their task rows."""
    arrays, bounds = _job_rows(rows, names, policy)
    columns = {c: values.tolist() for c, values in arrays.items()}
    durations = None
    if instances is not None and len(instances):
        valid = (instances.start > 0) & (instances.end >= instances.start)
        notes["instance_rows_skipped_bad_times"] += int((~valid).sum())
        usable = instances[valid]
        durations = (usable.end - usable.start).astype(float).groupby([usable.job, usable.task]).agg(tuple)
    jobs = []
    for j, job_id in enumerate(names):
        specs = []
        for r in range(bounds[j], bounds[j + 1]):
            name = columns["task"][r]
            task_id, parents, _ = parse_task_name(name) if dag else (name, (), False)
            count = int(columns["instances"][r])
            duration: float | tuple[float, ...] = float(columns["end"][r] - columns["start"][r])
            if durations is not None and (job_id, name) in durations.index:
                duration = durations[(job_id, name)]
                notes["tasks_timed_by_instances"] += 1
                notes["instances_without_terminated_row"] += max(0, count - len(duration))
                notes["instances_beyond_instance_count"] += max(0, len(duration) - count)
                count = len(duration)
            specs.append(TaskSpec(id=task_id, instances=count,
                                  demand={"cpu": columns["cpu"][r], "memory": columns["memory"][r]},
                                  duration=duration, parents=parents))
        jobs.append(JobSpec(job_id, float(submit[j]), tuple(specs)))
    return jobs


def _load_once(batch_task: Path, batch_instance: Path | None, task_spec: TableSpec, instance_spec: TableSpec,
               task_names: dict, instance_names: dict, memory_scale: float, dag: bool, status_policy: str,
               window: tuple[float, float] | None, jobs: tuple[int, int | None] | None, cache,
               as_blocks: bool) -> Workload:
    target, _ = cached_parquet(
        batch_task, "tasks", {"spec": task_spec.name},
        _convert_tasks(batch_task, task_spec, task_names, 100.0, memory_scale), _TASK_SCHEMA, cache,
    )
    with reading(target):
        handle = pq.ParquetFile(target)
    with handle:
        index_path, _ = cached_derived(handle, target, f"jobs-{status_policy}",
                                       {"dag": dag, "version": _INDEX_VERSION},
                                       _build_index(handle, dag, status_policy))
        with reading(index_path):
            index = pq.read_table(index_path)
        submit = index["submit"].to_numpy()
        scope = np.ones(index.num_rows, dtype=bool) if window is None else \
            (submit >= window[0]) & (submit < window[1])  # NaN (no valid start): in no window
        duplicate_line = index["duplicate_line"].to_numpy()
        clashing = np.flatnonzero(scope & (duplicate_line >= 0))
        if clashing.size:  # the first such job in file order, as a full read would meet it
            j = clashing[np.argmin(index["first_kept_line"].to_numpy()[clashing])]
            raise TraceFormatError(f"{batch_task}: line {duplicate_line[j]}: job {index['job'][j].as_py()!r} has task "
                                   f"{index['duplicate_task'][j].as_py()!r} more than once")
        skipped = {name[len(_SKIP):]: int(index[name].to_numpy()[scope].sum())
                   for name in index.column_names if name.startswith(_SKIP)}
        skipped = {reason: count for reason, count in skipped.items() if count}
        notes: Counter = Counter({"truncated_task_names": int(index["truncated"].to_numpy()[scope].sum())})
        ranked = np.flatnonzero(scope & index["kept"].to_numpy())
        ranked = ranked[np.lexsort((index["first_kept_line"].to_numpy()[ranked], submit[ranked]))]
        total = len(ranked)
        chosen = ranked if jobs is None else ranked[jobs[0]:jobs[1]]
        where = "" if window is None else f" submitted in the window [{window[0]:g}, {window[1]:g}) s"
        if total == 0:
            span = ""
            if window is not None and np.isfinite(submit).any():
                span = (f"; the trace's jobs are submitted from {np.nanmin(submit):g} to {np.nanmax(submit):g} s, "
                        f"{int(index['kept'].to_numpy().sum())} of them replayable")
            raise EmptyWorkloadError(f"{batch_task}: no replayable job{where} ({int(scope.sum())} job(s) there, "
                                     f"{_skips_text(skipped)}{span})")
        if not len(chosen):
            stop = "" if jobs[1] is None else jobs[1]
            raise EmptyWorkloadError(f"{batch_task}: jobs {jobs[0]}:{stop} select no job: the trace has {total} "
                                     f"replayable job(s){where} ({_skips_text(skipped)})")
        selected = index.take(pa.array(chosen))
        names = selected.column("job").to_pylist()
        rows = _read_jobs(handle, target, selected, pa.array(names, STR))

    source = {"batch_task": str(batch_task)}
    instances = None
    if batch_instance is not None:
        instances = _read_instances(batch_instance, instance_spec, instance_names, index, rows, names, notes, cache)
        source["batch_instance"] = str(batch_instance)
    if as_blocks:
        built = [_build_block(rows, names, selected["submit"].to_numpy(), status_policy, dag)]
    else:
        built = _build_jobs(rows, names, selected["submit"].to_numpy(), instances, status_policy, dag, notes)
    return Workload(built, skipped, source, {k: v for k, v in notes.items() if v}, total_jobs=total)


def _read_instances(batch_instance: Path, spec: TableSpec, rename: dict, task_index: pa.Table, task_rows: pa.Table,
                    names: list[str], notes: Counter, cache) -> pd.DataFrame:
    """Terminated instance rows of jobs ``names``; counts the rows no batch_task row explains."""
    import pandas as pd
    target, _ = cached_parquet(batch_instance, "instances", {"spec": spec.name},
                               _convert_instances(batch_instance, spec, rename), _INSTANCE_SCHEMA, cache)
    with reading(target):
        handle = pq.ParquetFile(target)
    with handle:
        index_path, _ = cached_derived(handle, target, "instance-jobs", {"version": _INDEX_VERSION},
                                       _build_instance_index(handle), _INSTANCE_INDEX_SCHEMA)
        with reading(index_path):
            index = pq.read_table(index_path)
        unknown = pc.invert(pc.is_in(index.column("job"), value_set=task_index.column("job")))
        notes["instance_rows_unknown_job"] += int(pc.sum(index.column("rows").filter(unknown)).as_py() or 0)
        wanted = index.filter(pc.is_in(index.column("job"), value_set=pa.array(names, STR)))
        frame = _read_jobs(handle, target, wanted, wanted.column("job"),
                           columns=["job", "task", "start", "end"]).to_pandas()
    known = pd.MultiIndex.from_arrays([task_rows.column("job").to_pandas(), task_rows.column("task").to_pandas()])
    listed = pd.MultiIndex.from_arrays([frame.job, frame.task]).isin(known)
    notes["instance_rows_unknown_task"] += int((~listed).sum())
    return frame


def _load(
    batch_task: str | Path,
    batch_instance: str | Path | None,
    task_spec: TableSpec,
    instance_spec: TableSpec,
    task_names: dict,
    instance_names: dict,
    memory_scale: float,
    dag: bool,
    status_policy: str,
    window: tuple[float, float] | None,
    jobs: tuple[int, int | None] | None,
    cache: str | Path | None,
    as_blocks: bool,
) -> Workload:
    if status_policy not in STATUS_POLICIES:
        raise ValueError(f"status_policy must be one of {STATUS_POLICIES}, got {status_policy!r}")
    if as_blocks and batch_instance is not None:
        raise ValueError("as_blocks=True: a JobBlock holds one duration per task, and batch_instance gives each "
                         "instance its own; leave batch_instance out, or load JobSpecs (as_blocks=False)")
    jobs = _check_jobs_argument(jobs)
    batch_task = Path(batch_task)
    batch_instance = None if batch_instance is None else Path(batch_instance)
    for attempt in range(2):
        try:
            return _load_once(batch_task, batch_instance, task_spec, instance_spec, task_names, instance_names,
                              memory_scale, dag, status_policy, window, jobs, cache, as_blocks)
        except DamagedCacheEntry as damaged:
            if attempt:
                raise CacheError(f"cache entry {damaged.path} is still unreadable after a rebuild "
                                 f"({damaged.reason}); remove it or pass --cache DIR") from None
            discard_entry(damaged.path, damaged.reason)
    raise AssertionError("unreachable")


def load_alibaba_v2017(
    batch_task: str | Path,
    batch_instance: str | Path | None = None,
    *,
    status_policy: str = "drop",
    window: tuple[float, float] | None = None,
    jobs: tuple[int, int | None] | None = None,
    cache: str | Path | None = None,
    as_blocks: bool = False,
) -> Workload:
    """Jobs of the v2017 trace: batch_task.csv, and batch_instance.csv for per-instance durations.

    A task's duration is its instances' run times when ``batch_instance`` is
    given (Terminated instance rows, one duration each), else its own
    ``task_end_time - task_create_time``; a job is submitted at its earliest
    task create time. ``status_policy`` "drop" skips tasks that did not
    terminate (counted by status), "keep" replays them with their recorded
    times. ``window=(start, end)`` keeps the jobs submitted in [start, end)
    seconds of trace time, with all their tasks; ``jobs=(a, b)`` the
    replayable jobs a..b-1 in submit order, reading only their rows (see the
    module docstring). ``as_blocks=True``: the jobs as one `cloudsim.JobBlock` (columns, no object per job
    or task: what a streamed simulation reads fastest), without ``batch_instance``. Raises
    `EmptyWorkloadError` when no job is left.
    """
    names = {"job": "job_id", "task": "task_id", "instances": "instances", "start": "task_create_time",
             "end": "task_end_time"}
    instance_names = {"job": "job_id", "task": "task_id", "start": "start_timestamp", "end": "end_timestamp"}
    return _load(batch_task, batch_instance, V2017_BATCH_TASK, V2017_BATCH_INSTANCE, names, instance_names,
                 1.0, False, status_policy, window, jobs, cache, as_blocks)


def load_alibaba_v2018(
    batch_task: str | Path,
    batch_instance: str | Path | None = None,
    *,
    status_policy: str = "drop",
    window: tuple[float, float] | None = None,
    jobs: tuple[int, int | None] | None = None,
    cache: str | Path | None = None,
    as_blocks: bool = False,
) -> Workload:
    """Jobs of the v2018 trace, DAGs included: batch_task.csv, and batch_instance.csv if given.

    Dependencies come from task names (`parse_task_name`). A task's duration is
    its instances' run times when ``batch_instance`` is given, else
    ``end_time - start_time``; a job is submitted at its earliest task start.
    Memory is converted from the trace's 0-100 scale to a fraction. A DAG job
    with any skipped task is skipped whole (``job_incomplete``): its children
    could not be scheduled faithfully; so is one whose dependencies name a
    missing task (``unknown_parent``) or form a loop (``dependency_cycle``).
    ``window=(start, end)`` keeps the jobs submitted in [start, end) seconds of
    trace time, with all their tasks; ``jobs=(a, b)`` the replayable jobs
    a..b-1 in submit order, reading only their rows (see the module
    docstring). ``as_blocks=True``: the jobs as one `cloudsim.JobBlock`, as for `load_alibaba_v2017`.
    Raises `EmptyWorkloadError` when no job is left.
    """
    names = {"job": "job_name", "task": "task_name", "instances": "instance_num", "start": "start_time",
             "end": "end_time"}
    instance_names = {"job": "job_name", "task": "task_name", "start": "start_time", "end": "end_time"}
    return _load(batch_task, batch_instance, V2018_BATCH_TASK, V2018_BATCH_INSTANCE, names, instance_names,
                 100.0, True, status_policy, window, jobs, cache, as_blocks)


# ----------------------------------------------------------------------------- machines
def _events_from_states(times: Sequence[float], machines: Sequence[int], states: Sequence[str]) -> list[MachineEvent]:
    """Machine events for every change of state, in time order (stable for equal times).

    A negative time (before the trace window) is applied at 0, after ordering, so
    the state at t=0 is the last one recorded before the window.
    """
    order = np.argsort(np.asarray(times, dtype=float), kind="stable")
    current: dict[int, str] = {}
    events = []
    for i in order:
        machine, state = int(machines[i]), states[i]
        if current.get(machine, "up") != state:
            events.append(MachineEvent(max(0.0, float(times[i])), machine, str(state)))
        current[machine] = state
    return events


def _read_machine_table(path: Path, spec: TableSpec) -> pd.DataFrame:
    import pandas as pd
    return pd.concat(list(stream_table(path, spec)), ignore_index=True)


def _check_capacities(path: Path, first: pd.DataFrame, columns: Sequence[str], id_column: str, event: str) -> None:
    for column in columns:
        _check_values(path, first, column, first[column].isna(), f"is empty on {event} (capacity unknown)", id_column)
        _check_values(path, first, column, first[column] < 0, "is negative", id_column)


def machines_v2017(server_event: str | Path, softerror_downtime: float | None = None) -> MachineTable:
    """Machines and their events from v2017 server_event.csv.

    ``add`` rows define the machines (cpus, normalised memory, normalised disk)
    in order of machine id; a later ``add`` brings a machine back up.
    ``softerror`` makes it take no new work; ``harderror`` also ends its running
    instances (see `cloudsim.MachineEvent`). The trace records no recovery
    from a soft error (the real table has none, yet one machine reports five
    over the day, so they look temporary): with ``softerror_downtime=None`` a
    machine stays down until a later ``add``; with a number of seconds it is
    back up that long after its last soft error. Skipped rows and notes: see
    the module docstring.
    """
    path = Path(server_event)
    frame = _read_machine_table(path, V2017_SERVER_EVENT)
    skipped: Counter = Counter()
    notes: Counter = Counter()
    kinds = {"add": "up", "softerror": "down", "harderror": "failed"}
    _check_values(path, frame, "machine_id", frame.machine_id.isna(), "is empty")
    _check_values(path, frame, "event_type", ~frame.event_type.isin(list(kinds)), f"is not one of {sorted(kinds)}",
                  "machine_id")
    no_time = frame.timestamp.isna()
    skipped["missing_time"] += int(no_time.sum())
    frame = frame[~no_time].copy()
    frame["timestamp"] = frame.timestamp.astype(np.int64)
    frame["machine_id"] = frame.machine_id.astype(np.int64)
    notes["before_window"] += int((frame.timestamp < 0).sum())
    adds = frame[frame.event_type == "add"].sort_values(["machine_id", "timestamp"], kind="stable")
    first_add = adds.drop_duplicates("machine_id")
    _check_capacities(path, first_add, ("cpus", "memory", "disk"), "machine_id", "an add event")
    ids = first_add.machine_id.tolist()
    if not ids:
        raise TraceFormatError(f"{path}: no machine: the table has no add event with a timestamp "
                               f"({dict(skipped)} row(s) skipped)")
    index = {m: i for i, m in enumerate(ids)}
    unknown = ~frame.machine_id.isin(index)
    _check_values(path, frame, "machine_id", unknown, "names a machine that has no add event")
    cluster = ClusterSpec(("cpu", "memory", "disk"), first_add[["cpus", "memory", "disk"]].to_numpy(),
                          tuple(ids))
    later = frame.drop(first_add.index).sort_values("timestamp", kind="stable")
    times, machines, states = later.timestamp.tolist(), later.machine_id.tolist(), [kinds[k] for k in later.event_type]
    if softerror_downtime is not None:
        if not softerror_downtime > 0:
            raise ValueError(f"softerror_downtime must be a positive number of seconds, got {softerror_downtime!r}")
        following = later.groupby("machine_id").timestamp.shift(-1)
        soft = later.event_type == "softerror"
        back_up = later.timestamp + softerror_downtime
        recovered = soft & ~(following <= back_up)  # no other event of the machine before it is back
        times += back_up[recovered].tolist()
        machines += later.machine_id[recovered].tolist()
        states += ["up"] * int(recovered.sum())
    events = _events_from_states(times, [index[m] for m in machines], states)
    return MachineTable(cluster, events, {k: v for k, v in skipped.items() if v}, {k: v for k, v in notes.items() if v})


def machines_v2018(machine_meta: str | Path) -> MachineTable:
    """Machines and their status events from v2018 machine_meta.csv.

    Capacity: ``cpu_num`` cores and ``mem_size`` / 100 memory. Machines are
    ordered by their number (m_1, m_2, ...). A machine whose status is not
    USING takes no new work until it is USING again; one whose first record
    is not USING (being installed, say) is out of service from t=0. Skipped
    rows and notes (unknown statuses among them): see the module docstring.
    """
    import pandas as pd
    path = Path(machine_meta)
    frame = _read_machine_table(path, V2018_MACHINE_META)
    skipped: Counter = Counter()
    notes: Counter = Counter()
    numbers = pd.to_numeric(frame.machine_id.str.extract(r"^m_(\d+)$")[0], errors="coerce")
    _check_values(path, frame, "machine_id", numbers.isna(), "is not of the form m_<number>")
    _check_values(path, frame, "machine_id", numbers >= EXACT_BOUND, f"has a number that {BEYOND_EXACT}")
    frame["number"] = numbers.astype(np.int64)
    for column, reason in (("time_stamp", "missing_time"), ("status", "missing_status")):
        empty = frame[column].isna()
        skipped[reason] += int(empty.sum())
        frame = frame[~empty]
    notes["before_window"] += int((frame.time_stamp < 0).sum())
    for status, count in frame.status[~frame.status.isin(list(MACHINE_STATUSES_V2018))].value_counts().items():
        notes[f"unknown_status_{status}"] += int(count)
    frame = frame.sort_values(["number", "time_stamp"], kind="stable")
    first = frame.drop_duplicates("number")
    if first.empty:
        raise TraceFormatError(f"{path}: no machine: every row was skipped ({dict(skipped)})")
    _check_capacities(path, first, ("cpu_num", "mem_size"), "machine_id", "the machine's first record")
    ids = first.machine_id.tolist()
    index = {m: i for i, m in enumerate(ids)}
    cluster = ClusterSpec(("cpu", "memory"), np.column_stack([first.cpu_num, first.mem_size / 100.0]), tuple(ids))
    states = np.where(frame.status == "USING", "up", "down")
    times = frame.time_stamp.to_numpy(dtype=np.int64).copy()
    times[frame.index.get_indexer(first.index)] = 0  # a machine is in its first recorded state from the start
    events = _events_from_states(times, [index[m] for m in frame.machine_id], list(states))
    return MachineTable(cluster, events, {k: v for k, v in skipped.items() if v}, {k: v for k, v in notes.items() if v})


def shift_events(events: Iterable[MachineEvent], origin: float) -> list[MachineEvent]:
    """Events re-timed so that ``origin`` becomes t=0 (as chunks rebase jobs); earlier ones apply at 0."""
    return [MachineEvent(max(0.0, e.time - origin), e.machine, e.state) for e in events]
