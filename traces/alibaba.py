"""Loaders for the Alibaba cluster traces v2017 and v2018, as published (headerless CSV).

Each raw table is converted once, streamed, into a typed Parquet file in the
cache (see `traces.rawcsv`); jobs are then built from the cache for the
requested time window. Units after loading, for every format of the project:
cpu in cores (the traces' ``plan_cpu`` / 100), memory as a fraction of a
machine's normalised memory (v2017 as published, v2018 ``plan_mem`` / 100),
times in seconds of trace time.

Rows that the real data is known to have and that cannot be replayed are
skipped, counted by reason in `Workload.skipped`, never dropped silently:

========================  =========================================================
``status_<Status>``        the task's status is not Terminated and the policy is "drop"
``missing_demand``         plan_cpu or plan_mem is empty
``missing_instances``      the instance count is empty
``missing_time``           the start (create) or end time is empty
``no_end_time``            end time is 0 (still running when the trace ended)
``end_before_start``       end time before start (create) time
``before_window``          start (create) time <= 0: before the trace window
``zero_demand``            plan_cpu and plan_mem both 0 (nothing to place)
``job_incomplete``         v2018: another task of the same DAG job was skipped
``unknown_parent``         v2018: a dependency names a task absent from the job (whole job)
========================  =========================================================

Values that are wrong rather than dirty (a negative demand, an instance count
that is not a whole number, an unknown status, a duplicate task id) raise
`TraceFormatError` naming the file, line and column.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from cloudsim.specs import ClusterSpec, JobSpec, TaskSpec
from cloudsim.simulation import MachineEvent
from traces.rawcsv import TableSpec, TraceFormatError, cached_parquet, stream_batches, stream_table
from traces.workload import Workload

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
_KNOWN_STATUSES = pa.array(sorted(STATUSES))
STATUS_POLICIES = ("drop", "keep")
I64, F64, STR = pa.int64(), pa.float64(), pa.string()

V2017_BATCH_TASK = TableSpec(
    "alibaba-v2017 batch_task",
    ("task_create_time", "task_end_time", "job_id", "task_id", "instances", "status", "plan_cpu", "plan_mem"),
    {"task_create_time": I64, "task_end_time": I64, "job_id": I64, "task_id": I64, "instances": F64,
     "status": STR, "plan_cpu": F64, "plan_mem": F64},
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


@dataclass
class MachineTable:
    """Machines read from a trace: the cluster and the machine events to replay on it."""

    cluster: ClusterSpec
    events: list[MachineEvent]


def _bad_rows(path: Path, column: str, what: str, lines: Sequence[int], first_value: object) -> TraceFormatError:
    shown = ", ".join(map(str, lines[:5])) + (" ..." if len(lines) > 5 else "")
    return TraceFormatError(f"{path}: column {column!r} {what} on {len(lines)} line(s): {shown} "
                            f"(first value: {first_value!r})")


def _check_values(path: Path, frame: pd.DataFrame, column: str, bad: pd.Series, what: str) -> None:
    if bad.any():
        rows = frame.loc[bad.to_numpy(), ["line", column]]
        raise _bad_rows(path, column, what, rows.line.tolist(), rows[column].iloc[0])


def _check_statuses(path: Path, first_line: int, status: pa.Array) -> None:
    """Empty or one of `STATUSES` on every row of a batch whose first row is file line ``first_line``."""
    unknown = pc.invert(pc.fill_null(pc.is_in(status, value_set=_KNOWN_STATUSES), True))
    if pc.any(unknown).as_py():
        bad = pc.indices_nonzero(unknown).to_pylist()
        raise _bad_rows(path, "status", f"is not one of {sorted(STATUSES)}", [first_line + i for i in bad],
                        status[bad[0]].as_py())


def _convert_tasks(path: Path, spec: TableSpec, rename: dict, cpu_scale: float, memory_scale: float):
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


def _read_tasks(target: Path, window: tuple[float, float] | None) -> pd.DataFrame:
    """Task rows of the jobs submitted in ``window`` (all rows when None), read from the cache.

    A job is submitted at its earliest valid start (> 0); every row of a job in
    the window is read, so a DAG is never cut at the window's edge.
    """
    if window is None:
        return pq.read_table(target).to_pandas()
    start, end = window
    inside = pq.read_table(target, columns=["job"], filters=[("start", ">=", start), ("start", "<", end),
                                                             ("start", ">", 0)])
    jobs = pc.unique(inside.column("job"))
    rows = pq.read_table(target, filters=[("job", "in", jobs)]).to_pandas()
    submit = rows.start.where(rows.start > 0).groupby(rows.job).transform("min")
    return rows[(submit >= start) & (submit < end)].reset_index(drop=True)


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


def _build_jobs(
    tasks: pd.DataFrame,
    instances: pd.DataFrame | None,
    path: Path,
    status_policy: str,
    dag: bool,
) -> tuple[list[JobSpec], Counter, Counter]:
    """Turn cleaned task rows into jobs; count what is skipped and why."""
    if status_policy not in STATUS_POLICIES:
        raise ValueError(f"status_policy must be one of {STATUS_POLICIES}, got {status_policy!r}")
    skipped: Counter = Counter()
    notes: Counter = Counter()
    reason = pd.Series("", index=tasks.index, dtype=object)

    def mark(condition: pd.Series, why: str) -> None:
        fresh = condition & (reason == "")
        reason[fresh] = why

    if status_policy == "drop":
        status = tasks.status.fillna("(empty)")
        for name in status[status != "Terminated"].unique():
            mark(status == name, f"status_{name}")
    mark(tasks.cpu.isna() | tasks.memory.isna(), "missing_demand")
    mark(tasks.instances.isna() | (tasks.instances < 1), "missing_instances")
    mark(tasks.start.isna() | tasks.end.isna(), "missing_time")
    mark(tasks.end == 0, "no_end_time")
    mark(tasks.start <= 0, "before_window")
    mark(tasks.end < tasks.start, "end_before_start")
    mark((tasks.cpu == 0) & (tasks.memory == 0), "zero_demand")
    durations = None
    if instances is not None and len(instances):
        valid = (instances.start > 0) & (instances.end >= instances.start)
        notes["instance_rows_skipped_bad_times"] += int((~valid).sum())
        instances = instances[valid]
        durations = (instances.end - instances.start).astype(float).groupby([instances.job, instances.task]).agg(tuple)

    kept = tasks[reason == ""]
    # Tasks skipped for their status were still created: they count for the submit time.
    submit_time = tasks.start.where(tasks.start > 0).groupby(tasks.job).min()
    skipped.update(reason[reason != ""].value_counts().to_dict())
    rows_per_job = tasks.job.value_counts()
    codes, job_ids = pd.factorize(kept.job, sort=False)  # jobs in order of first appearance
    order = np.argsort(codes, kind="stable")
    columns = {c: kept[c].to_numpy()[order].tolist() for c in ("line", "task", "instances", "start", "end", "cpu", "memory")}
    bounds = np.flatnonzero(np.diff(codes[order])) + 1
    jobs: list[JobSpec] = []
    for job_id, span in zip(job_ids, np.split(np.arange(len(order)), bounds) if len(order) else []):
        rows = range(span[0], span[-1] + 1)
        parsed = [parse_task_name(columns["task"][r]) if dag else (columns["task"][r], (), False) for r in rows]
        notes["truncated_task_names"] += sum(truncated for _, _, truncated in parsed)
        ids = [task_id for task_id, _, _ in parsed]
        if len(set(ids)) != len(ids):
            r = next(r for i, (r, t) in enumerate(zip(rows, ids)) if t in ids[:i])
            raise TraceFormatError(
                f"{path}: line {columns['line'][r]}: job {job_id!r} has task {columns['task'][r]!r} more than once")
        broken = ""
        if dag and len(rows) != rows_per_job[job_id]:
            broken = "job_incomplete"
        elif dag and any(p not in ids for _, parents, _ in parsed for p in parents):
            broken = "unknown_parent"
        if broken:
            skipped[broken] += len(rows)
            continue
        specs = []
        for r, (task_id, parents, _) in zip(rows, parsed):
            count = int(columns["instances"][r])
            duration: float | tuple[float, ...] = float(columns["end"][r] - columns["start"][r])
            if durations is not None and (job_id, columns["task"][r]) in durations.index:
                duration = durations[(job_id, columns["task"][r])]
                notes["tasks_timed_by_instances"] += 1
                notes["instances_without_terminated_row"] += max(0, count - len(duration))
                notes["instances_beyond_instance_count"] += max(0, len(duration) - count)
                count = len(duration)
            specs.append(TaskSpec(id=task_id, instances=count,
                                  demand={"cpu": columns["cpu"][r], "memory": columns["memory"][r]},
                                  duration=duration, parents=parents))
        jobs.append(JobSpec(job_id, float(submit_time[job_id]), tuple(specs)))
    jobs.sort(key=lambda j: j.submit_time)
    return jobs, skipped, notes


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
    cache: str | Path | None,
) -> Workload:
    batch_task = Path(batch_task)
    target, report = cached_parquet(
        batch_task, "tasks", {"spec": task_spec.name},
        _convert_tasks(batch_task, task_spec, task_names, 100.0, memory_scale), _TASK_SCHEMA, cache,
    )
    tasks = _read_tasks(target, window)
    instances = None
    source = {"batch_task": str(batch_task)}
    if batch_instance is not None:
        batch_instance = Path(batch_instance)
        instance_target, _ = cached_parquet(
            batch_instance, "instances", {"spec": instance_spec.name},
            _convert_instances(batch_instance, instance_spec, instance_names), _INSTANCE_SCHEMA, cache,
        )
        jobs_wanted = pa.array(tasks.job.unique())
        instances = pq.read_table(instance_target, filters=[("job", "in", jobs_wanted)]).to_pandas()
        source["batch_instance"] = str(batch_instance)
    jobs, skipped, notes = _build_jobs(tasks, instances, batch_task, status_policy, dag)
    return Workload(jobs, dict(skipped), source, {k: v for k, v in notes.items() if v})


def load_alibaba_v2017(
    batch_task: str | Path,
    batch_instance: str | Path | None = None,
    *,
    status_policy: str = "drop",
    window: tuple[float, float] | None = None,
    cache: str | Path | None = None,
) -> Workload:
    """Jobs of the v2017 trace: batch_task.csv, and batch_instance.csv for per-instance durations.

    A task's duration is its instances' run times when ``batch_instance`` is
    given (Terminated instance rows, one duration each), else its own
    ``task_end_time - task_create_time``; a job is submitted at its earliest
    task create time. ``status_policy`` "drop" skips tasks that did not
    terminate (counted by status), "keep" replays them with their recorded
    times. ``window=(start, end)`` keeps the jobs submitted in [start, end)
    seconds of trace time, with all their tasks.
    """
    names = {"job": "job_id", "task": "task_id", "instances": "instances", "start": "task_create_time",
             "end": "task_end_time"}
    instance_names = {"job": "job_id", "task": "task_id", "start": "start_timestamp", "end": "end_timestamp"}
    return _load(batch_task, batch_instance, V2017_BATCH_TASK, V2017_BATCH_INSTANCE, names, instance_names,
                 1.0, False, status_policy, window, cache)


def load_alibaba_v2018(
    batch_task: str | Path,
    batch_instance: str | Path | None = None,
    *,
    status_policy: str = "drop",
    window: tuple[float, float] | None = None,
    cache: str | Path | None = None,
) -> Workload:
    """Jobs of the v2018 trace, DAGs included: batch_task.csv, and batch_instance.csv if given.

    Dependencies come from task names (`parse_task_name`). A task's duration is
    its instances' run times when ``batch_instance`` is given, else
    ``end_time - start_time``; a job is submitted at its earliest task start.
    Memory is converted from the trace's 0-100 scale to a fraction. A DAG job
    with any skipped task is skipped whole (``job_incomplete``): its children
    could not be scheduled faithfully. ``window=(start, end)`` keeps the jobs
    submitted in [start, end) seconds of trace time, with all their tasks.
    """
    names = {"job": "job_name", "task": "task_name", "instances": "instance_num", "start": "start_time",
             "end": "end_time"}
    instance_names = {"job": "job_name", "task": "task_name", "start": "start_time", "end": "end_time"}
    return _load(batch_task, batch_instance, V2018_BATCH_TASK, V2018_BATCH_INSTANCE, names, instance_names,
                 100.0, True, status_policy, window, cache)


def _events_from_states(times: Sequence[float], machines: Sequence[int], states: Sequence[str]) -> list[MachineEvent]:
    """Machine events for every change of state, in time order (stable for equal times)."""
    order = np.argsort(np.asarray(times, dtype=float), kind="stable")
    current: dict[int, str] = {}
    events = []
    for i in order:
        machine, state = int(machines[i]), states[i]
        if current.get(machine, "up") != state:
            events.append(MachineEvent(float(times[i]), machine, str(state)))
        current[machine] = state
    return events


def machines_v2017(server_event: str | Path, softerror_downtime: float | None = None) -> MachineTable:
    """Machines and their events from v2017 server_event.csv.

    ``add`` rows define the machines (cpus, normalised memory, normalised disk)
    in order of machine id; a later ``add`` brings a machine back up.
    ``softerror`` makes it take no new work; ``harderror`` also ends its running
    instances (see `cloudsim.MachineEvent`). The trace records no recovery
    from a soft error (the real table has none, yet one machine reports five
    over the day, so they look temporary): with ``softerror_downtime=None`` a
    machine stays down until a later ``add``; with a number of seconds it is
    back up that long after its last soft error.
    """
    path = Path(server_event)
    frame = pd.concat(list(stream_table(path, V2017_SERVER_EVENT)), ignore_index=True)
    kinds = {"add": "up", "softerror": "down", "harderror": "failed"}
    _check_values(path, frame, "event_type", ~frame.event_type.isin(list(kinds)), f"is not one of {sorted(kinds)}")
    adds = frame[frame.event_type == "add"].sort_values(["machine_id", "timestamp"], kind="stable")
    first_add = adds.drop_duplicates("machine_id")
    _check_values(path, first_add, "cpus", first_add[["cpus", "memory", "disk"]].isna().any(axis=1),
                  "is empty on an add event (capacity unknown)")
    ids = first_add.machine_id.tolist()
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
    return MachineTable(cluster, events)


def machines_v2018(machine_meta: str | Path) -> MachineTable:
    """Machines and their status events from v2018 machine_meta.csv.

    Capacity: ``cpu_num`` cores and ``mem_size`` / 100 memory. Machines are
    ordered by their number (m_1, m_2, ...). A machine whose status is not
    USING takes no new work until it is USING again; one whose first record
    is not USING (being installed, say) is out of service from t=0.
    """
    path = Path(machine_meta)
    frame = pd.concat(list(stream_table(path, V2018_MACHINE_META)), ignore_index=True)
    numbers = pd.to_numeric(frame.machine_id.str.extract(r"^m_(\d+)$")[0], errors="coerce")
    _check_values(path, frame, "machine_id", numbers.isna(), "is not of the form m_<number>")
    frame["number"] = numbers.astype(np.int64)
    frame = frame.sort_values(["number", "time_stamp"], kind="stable")
    first = frame.drop_duplicates("number")
    _check_values(path, first, "cpu_num", first[["cpu_num", "mem_size"]].isna().any(axis=1), "is empty")
    ids = first.machine_id.tolist()
    index = {m: i for i, m in enumerate(ids)}
    cluster = ClusterSpec(("cpu", "memory"), np.column_stack([first.cpu_num, first.mem_size / 100.0]), tuple(ids))
    states = np.where(frame.status == "USING", "up", "down")
    times = frame.time_stamp.to_numpy().copy()
    times[frame.index.get_indexer(first.index)] = 0  # a machine is in its first recorded state from the start
    events = _events_from_states(times, [index[m] for m in frame.machine_id], list(states))
    return MachineTable(cluster, events)


def shift_events(events: Iterable[MachineEvent], origin: float) -> list[MachineEvent]:
    """Events re-timed so that ``origin`` becomes t=0 (as chunks rebase jobs); earlier ones apply at 0."""
    return [MachineEvent(max(0.0, e.time - origin), e.machine, e.state) for e in events]
