"""Immutable descriptions of what is simulated: the cluster and the jobs.

A workload is a sequence of `JobSpec`; a job holds `TaskSpec`s; a task holds
`instances` identical copies that each occupy the task's `demand` for its duration.
A `JobBlock` holds many plain jobs as columns: the fast way to feed a streamed
simulation (no object per job or task). A `MachineEvent` says when a machine goes down, fails or comes back up.
A machine may also hold devices (GPUs, `DEVICE_MILLI` milli-units each) and attributes (a GPU
model); a task may ask for part of one device or for whole ones (`DeviceRequest`)
and accept only some attribute values (``TaskSpec.accepts``).
Specs never change while a simulation runs: the mutable state lives in numpy
arrays (`cloudsim.engine.cluster`, `cloudsim.engine.tasks`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Hashable, Mapping, Sequence

import numpy as np
from cloudsim.engine.checks import is_finite_number, is_whole

__all__ = [
    "ClusterSpec",
    "DEVICE_MILLI",
    "DeviceRequest",
    "JobBlock",
    "JobSpec",
    "MACHINE_STATES",
    "EXACT_BOUND",
    "MachineEvent",
    "TaskSpec",
    "UnschedulableTaskError",
    "check_jobs_fit",
    "unholdable",
    "parse_capacity",
]

MACHINE_STATES = ("up", "down", "failed")
# Counts the engine takes, and every number the trace loaders read, stay below 2**53 in magnitude: from
# there a float64 (the clock, durations, sums of demands) no longer holds every whole number, so a time,
# count or id would be rounded silently, and an int64 total of such counts could overflow.
EXACT_BOUND = 2**53
DEVICE_MILLI = 1000
"""A device (a GPU) in milli-units: a sharing task takes part of one device, an exclusive task whole free ones."""


@dataclass(frozen=True)
class DeviceRequest:
    """What one instance of a task asks of its machine's devices: ``count`` devices with ``milli`` free each.

    ``milli`` below `DEVICE_MILLI` is a *sharing* request: part of exactly one device (``count`` 1), which
    other sharing instances may use too. ``milli`` equal to `DEVICE_MILLI` is *exclusive*: ``count`` whole
    devices that are completely free (a partly used device is never given to it).
    """

    count: int
    milli: int

    def __post_init__(self) -> None:
        whole = is_whole(self.count) and is_whole(self.milli)
        if not whole or self.count < 1 or not 1 <= self.milli <= DEVICE_MILLI:
            raise ValueError(f"a device request needs a whole count >= 1 and whole milli in 1..{DEVICE_MILLI}, "
                             f"got count={self.count!r}, milli={self.milli!r}")
        if self.milli < DEVICE_MILLI and self.count != 1:
            raise ValueError(f"a request of {self.milli} milli per device shares one device: count must be 1, "
                             f"got {self.count} (ask for {DEVICE_MILLI} milli to take whole devices)")
        object.__setattr__(self, "count", int(self.count))
        object.__setattr__(self, "milli", int(self.milli))

    @property
    def sharing(self) -> bool:
        """Whether the instance takes part of one device, which other sharing instances may use too."""
        return self.milli < DEVICE_MILLI

    @property
    def total(self) -> int:
        """Milli-units one instance takes over all its devices."""
        return self.count * self.milli


def _accepted(value: object, owner: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """An attribute constraint as a sorted tuple of (attribute, accepted values)."""
    pairs = value.items() if isinstance(value, Mapping) else value
    out = []
    for name, values in pairs:
        values = (values,) if isinstance(values, str) else tuple(values)
        if not isinstance(name, str) or not name or not values or not all(isinstance(v, str) and v for v in values):
            raise ValueError(f"{owner}: accepts maps an attribute name to the values accepted (non-empty strings), "
                             f"got {name!r}: {values!r}")
        out.append((name, tuple(sorted(set(values)))))
    names = [name for name, _ in out]
    if len(set(names)) != len(names):
        raise ValueError(f"{owner}: accepts names an attribute twice")
    return tuple(sorted(out))


@dataclass(frozen=True)
class TaskSpec:
    """One task of a job.

    Attributes:
        id: the task's id, unique inside its job.
        instances: how many instances the task has (at least 1).
        demand: resources one instance occupies while it runs, by resource name
            (for example ``{"cpu": 0.5, "memory": 0.01}``). A resource the task does
            not name is not used by it.
        duration: how long each instance runs: one number for all instances, or a
            sequence with one duration per instance (in instance start order).
        parents: ids of tasks of the same job that must finish before any instance
            of this task may start (a DAG, as in Alibaba v2018).
        estimate: what the user said an instance would run for (an SWF log's requested
            time), or None. The engine runs instances for ``duration``; brokers that
            schedule on estimates read it as ``view.estimate``.
        devices: what one instance asks of its machine's devices (`DeviceRequest`), or None.
        accepts: the machine attribute values the task accepts, per attribute (``{"model":
            ("V100M16", "V100M32")}``); an attribute not named is not constrained. Stored as a
            sorted tuple of (attribute, values).
    """

    id: Hashable
    instances: int
    demand: Mapping[str, float]
    duration: float | tuple[float, ...]
    parents: tuple[Hashable, ...] = ()
    estimate: float | None = None
    devices: DeviceRequest | None = None
    accepts: Mapping[str, tuple[str, ...]] | tuple = ()

    def __post_init__(self) -> None:
        if not is_whole(self.instances) or not 1 <= self.instances < EXACT_BOUND:
            raise ValueError(
                f"task {self.id!r}: instances must be a whole number >= 1 and below 2**53 ({EXACT_BOUND}), "
                f"got {self.instances!r}"
            )
        for name, value in self.demand.items():
            if not (is_finite_number(value) and value >= 0):
                raise ValueError(
                    f"task {self.id!r}: demand {name}={value!r} must be a finite number >= 0"
                )
        if isinstance(self.duration, (int, float, np.number)):
            durations: Sequence[float] = (self.duration,)
        else:
            object.__setattr__(self, "duration", tuple(float(d) for d in self.duration))
            durations = self.duration
            if len(durations) != self.instances:
                raise ValueError(
                    f"task {self.id!r}: {len(durations)} per-instance durations given "
                    f"for {self.instances} instances"
                )
        if not all(math.isfinite(d) and d >= 0 for d in durations):
            raise ValueError(f"task {self.id!r}: durations must be finite and >= 0, got {self.duration!r}")
        if self.estimate is not None and not (is_finite_number(self.estimate) and self.estimate >= 0):
            raise ValueError(f"task {self.id!r}: estimate must be None or a finite number >= 0, "
                             f"got {self.estimate!r}")
        object.__setattr__(self, "parents", tuple(self.parents))
        if self.devices is not None and not isinstance(self.devices, DeviceRequest):
            raise ValueError(f"task {self.id!r}: devices must be a DeviceRequest(count, milli) or None, "
                             f"got {self.devices!r}")
        object.__setattr__(self, "accepts", _accepted(self.accepts, f"task {self.id!r}"))

    @property
    def nominal_duration(self) -> float:
        """The task's duration as one number: the mean over instances when they differ."""
        if isinstance(self.duration, tuple):
            return float(np.mean(self.duration))
        return float(self.duration)

    @property
    def longest_duration(self) -> float:
        """The duration of the task's slowest instance."""
        if isinstance(self.duration, tuple):
            return max(self.duration)
        return float(self.duration)


@dataclass(frozen=True)
class JobSpec:
    """A job: tasks submitted together at ``submit_time``.

    Task order matters: brokers see waiting tasks in job arrival order, then in
    the order of ``tasks``. ``deadline``: when the job should have finished (None: never late); brokers see it
    (``view.deadline``), and a run counts the jobs that finish after theirs (``deadline_misses``).
    """

    id: Hashable
    submit_time: float
    tasks: tuple[TaskSpec, ...]
    deadline: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tasks", tuple(self.tasks))
        if self.deadline is not None and not (is_finite_number(self.deadline) and is_finite_number(self.submit_time)
                                              and self.deadline >= self.submit_time):
            raise ValueError(f"job {self.id!r}: deadline {self.deadline!r} is no time at or after its submit time "
                             f"{self.submit_time!r}; give a finite deadline no earlier than the job arrives, or None")
        if not (math.isfinite(self.submit_time) and self.submit_time >= 0):
            raise ValueError(f"job {self.id!r}: submit_time must be finite and >= 0, got {self.submit_time!r}")
        if not self.tasks:
            raise ValueError(f"job {self.id!r} has no tasks")
        ids = [t.id for t in self.tasks]
        if len(set(ids)) != len(ids):
            dup = sorted({repr(i) for i in ids if ids.count(i) > 1})
            raise ValueError(f"job {self.id!r}: duplicate task ids {', '.join(dup)}")
        known = set(ids)
        for task in self.tasks:
            missing = [p for p in task.parents if p not in known]
            if missing:
                raise ValueError(f"job {self.id!r}, task {task.id!r}: unknown parent tasks {missing!r}")
        self.topological_order()  # raises on a cycle

    @property
    def instances(self) -> int:
        return sum(t.instances for t in self.tasks)

    def arriving_at(self, submit_time: float) -> JobSpec:
        """The job arriving at ``submit_time`` instead, its deadline (if any) moved with it: a trace's chunk
        rebased to 0 or its arrivals scaled to a load keep each job's time to its deadline."""
        deadline = None if self.deadline is None else self.deadline + (submit_time - self.submit_time)
        return JobSpec(self.id, submit_time, self.tasks, deadline)

    def with_slack(self, slack: float) -> JobSpec:
        """The job with a deadline ``slack`` after it would finish on an empty cluster (its arrival plus its
        critical path); a job that has a deadline keeps it."""
        if self.deadline is not None:
            return self
        return JobSpec(self.id, self.submit_time, self.tasks, self.submit_time + self.critical_path() + slack)

    def topological_order(self) -> list[int]:
        """Positions of the tasks, parents before children; raises ValueError on a cycle."""
        position = {t.id: i for i, t in enumerate(self.tasks)}
        pending = [len(t.parents) for t in self.tasks]
        children: list[list[int]] = [[] for _ in self.tasks]
        for i, t in enumerate(self.tasks):
            for p in t.parents:
                children[position[p]].append(i)
        order = [i for i, n in enumerate(pending) if n == 0]
        for i in order:  # grows while iterating: Kahn's algorithm
            for c in children[i]:
                pending[c] -= 1
                if pending[c] == 0:
                    order.append(c)
        if len(order) != len(self.tasks):
            cyclic = [self.tasks[i].id for i, n in enumerate(pending) if n > 0]
            raise ValueError(f"job {self.id!r}: task dependencies form a cycle among {cyclic!r}")
        return order

    def critical_path(self) -> float:
        """Length of the longest parent-to-child chain of task durations.

        This is the job's duration on an infinitely large, empty cluster, the
        denominator of the job slowdown.
        """
        position = {t.id: i for i, t in enumerate(self.tasks)}
        finish = [0.0] * len(self.tasks)
        for i in self.topological_order():
            task = self.tasks[i]
            start = max((finish[position[p]] for p in task.parents), default=0.0)
            finish[i] = start + task.longest_duration
        return max(finish)

    def tails(self) -> tuple[float, ...]:
        """Per task, in order: the longest chain of its descendants' durations, how long the job still runs after
        the task ends on an infinitely large, empty cluster (0 for a task without children). A task that must
        end by ``deadline - tail`` leaves its descendants the time they need to meet the job's deadline."""
        position = {t.id: i for i, t in enumerate(self.tasks)}
        children: list[list[int]] = [[] for _ in self.tasks]
        for i, task in enumerate(self.tasks):
            for parent in task.parents:
                children[position[parent]].append(i)
        tail = [0.0] * len(self.tasks)
        for i in reversed(self.topological_order()):
            tail[i] = max((tail[c] + self.tasks[c].longest_duration for c in children[i]), default=0.0)
        return tuple(tail)


@dataclass(frozen=True, eq=False)
class JobBlock:
    """Jobs as columns: what a streamed simulation reads fastest (`cloudsim.Simulation` with ``stream_to``
    takes a stream of blocks as it takes one of `JobSpec`; `traces.iter_alibaba_like` makes them).

    A block holds the jobs `JobSpec` describes without the options: one duration per task (no per-instance
    durations), no estimates, devices or attribute constraints. Its tasks are rows, job after job in the
    order of its jobs, each job's tasks in their order; a task's parents are other rows of its job, in any
    order (a trace lists a DAG's tasks as it likes), without a cycle. The arrays are taken as given (not
    copied) and checked once, whole.

    Attributes:
        ids: each job's id.
        submit: each job's submit time, shape (jobs,), in non-decreasing order.
        task_start: where each job's rows begin, shape (jobs + 1,): job ``j``'s tasks are rows
            ``task_start[j]`` to ``task_start[j + 1] - 1``; ``task_start[0]`` is 0, the last is the rows.
        task_ids: each row's task id, unique within its job.
        instances: each task's instances (whole, >= 1), shape (rows,).
        resources: the names of the demand's columns.
        demand: what one instance occupies, shape (rows, resources).
        duration: how long each instance runs, shape (rows,).
        parent_start: where each row's parents begin in ``parents``, shape (rows + 1,).
        parents: the parents' rows, each in the same job as its child.
    """

    ids: tuple
    submit: np.ndarray
    task_start: np.ndarray
    task_ids: tuple
    instances: np.ndarray
    resources: tuple[str, ...]
    demand: np.ndarray
    duration: np.ndarray
    parent_start: np.ndarray
    parents: np.ndarray

    def __post_init__(self) -> None:
        object.__setattr__(self, "ids", tuple(self.ids))
        object.__setattr__(self, "task_ids", tuple(self.task_ids))
        object.__setattr__(self, "resources", tuple(self.resources))
        jobs, rows = len(self.ids), len(self.task_ids)
        for name, dtype, shape in (("submit", np.float64, (jobs,)), ("task_start", np.int64, (jobs + 1,)),
                                   ("instances", np.int64, (rows,)),
                                   ("demand", np.float64, (rows, len(self.resources))),
                                   ("duration", np.float64, (rows,)), ("parent_start", np.int64, (rows + 1,)),
                                   ("parents", np.int64, None)):
            value = getattr(self, name)
            if not isinstance(value, np.ndarray) or value.dtype != dtype or (shape and value.shape != shape) or (
                    shape is None and value.ndim != 1):
                raise ValueError(f"JobBlock: {name} must be a numpy array of {np.dtype(dtype)}"
                                 f"{f' of shape {shape}' if shape else ''} (for {jobs} jobs of {rows} tasks), got "
                                 f"{getattr(value, 'dtype', type(value).__name__)} of shape {np.shape(value)}")
        start, rows_of = self.task_start, np.diff(self.task_start)
        if jobs == 0 or start[0] != 0 or start[-1] != rows or (rows_of < 1).any():
            raise ValueError("JobBlock: task_start must begin at 0, end at the rows and give every job a task "
                             f"(a block holds at least one job), got {start.tolist()[:10]}")
        job_of = np.repeat(np.arange(jobs), rows_of)
        for bad, per_task, rule in (
                (~np.isfinite(self.submit) | (self.submit < 0), False, "submit times must be finite and >= 0"),
                (np.diff(self.submit, prepend=self.submit[0]) < 0, False, "submit times must not decrease"),
                ((self.instances < 1) | (self.instances >= EXACT_BOUND), True,
                 f"instances must be whole numbers >= 1 and below 2**53 ({EXACT_BOUND})"),
                (~(np.isfinite(self.demand) & (self.demand >= 0)).all(axis=1), True,
                 "demands must be finite numbers >= 0"),
                (~np.isfinite(self.duration) | (self.duration < 0), True, "durations must be finite and >= 0")):
            if bad.any():
                at = int(np.argmax(bad))
                where = f"job {self.ids[job_of[at]]!r}, task {self.task_ids[at]!r}" if per_task else \
                    f"job {self.ids[at]!r}"
                raise ValueError(f"JobBlock: {where}: {rule}")
        parent_start, parents = self.parent_start, self.parents
        if parent_start[0] != 0 or parent_start[-1] != len(parents) or (np.diff(parent_start) < 0).any():
            raise ValueError("JobBlock: parent_start must begin at 0, not decrease and end at len(parents)")
        child = np.repeat(np.arange(rows), np.diff(parent_start))
        wrong = (parents < 0) | (parents >= rows) | (job_of[np.clip(parents, 0, max(rows - 1, 0))] != job_of[child])
        if wrong.any():
            at = int(child[np.argmax(wrong)])
            raise ValueError(f"JobBlock: job {self.ids[job_of[at]]!r}, task {self.task_ids[at]!r}: a parent must "
                             "be a row of the same job")
        for j in range(jobs):
            names = self.task_ids[start[j]:start[j + 1]]
            if len(set(names)) != len(names):
                raise ValueError(f"JobBlock: job {self.ids[j]!r}: duplicate task ids")
        levels, waiting = self._levels()
        if waiting.any():
            cyclic = np.flatnonzero(waiting)
            j = int(job_of[cyclic[0]])
            among = [self.task_ids[r] for r in cyclic[job_of[cyclic] == j].tolist()]
            raise ValueError(f"JobBlock: job {self.ids[j]!r}: task dependencies form a cycle among {among!r}")
        object.__setattr__(self, "_topological_levels", levels)

    def _levels(self) -> tuple[list[np.ndarray], np.ndarray]:
        """The rows by level (Kahn's algorithm, a level at a time): first those without parents, then those
        whose parents are all in earlier levels; and which rows never get there (they are on a cycle or
        below one)."""
        rows = len(self.task_ids)
        pending = np.diff(self.parent_start)
        child = np.repeat(np.arange(rows), pending)
        by_parent = np.argsort(self.parents, kind="stable")
        kids, kid_start = child[by_parent], np.searchsorted(self.parents[by_parent], np.arange(rows + 1))
        levels, level = [], np.flatnonzero(pending == 0)
        while len(level):
            levels.append(level)
            released = kids[_runs(kid_start, level)]
            np.subtract.at(pending, released, 1)
            level = np.unique(released[pending[released] == 0])
        return levels, pending > 0

    def __len__(self) -> int:
        """The jobs the block holds."""
        return len(self.ids)

    def job_of(self, row: int) -> int:
        """The position in the block of the job that task row ``row`` belongs to."""
        return int(np.searchsorted(self.task_start, row, side="right")) - 1

    def critical_paths(self) -> np.ndarray:
        """Each job's critical path (`JobSpec.critical_path`): the longest parent-to-child chain of durations,
        added as `JobSpec.critical_path` adds them."""
        finish = 0.0 + self.duration  # (a task without parents starts at 0.0)
        parent_start, parents = self.parent_start, self.parents
        for level in self._topological_levels[1:]:  # each row has parents, all in earlier levels
            counts = parent_start[level + 1] - parent_start[level]
            latest = np.maximum.reduceat(finish[parents[_runs(parent_start, level)]], np.cumsum(counts) - counts)
            finish[level] = latest + self.duration[level]
        return np.maximum.reduceat(finish, self.task_start[:-1])


def _runs(start: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The positions ``start[r]`` to ``start[r + 1] - 1`` of each of ``rows``, one run after another."""
    counts = start[rows + 1] - start[rows]
    return np.repeat(start[rows] - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())


@dataclass(frozen=True)
class ClusterSpec:
    """The machines: a capacity vector per machine over named resource dimensions.

    Build one with `ClusterSpec.uniform` (n identical machines) or directly from a
    sequence of per-machine capacity rows.

    ``devices``: how many devices (GPUs of `DEVICE_MILLI` milli-units each) each
    machine holds; empty: none anywhere. ``attributes``: per attribute name, one
    value per machine (``{"model": ("V100M16", "T4", ...)}``), which tasks may
    constrain (`TaskSpec.accepts`); a machine without a value has "". Stored as a
    sorted tuple of (name, values).
    """

    resources: tuple[str, ...]
    capacities: tuple[tuple[float, ...], ...]
    machine_ids: tuple[Hashable, ...] = field(default=())
    devices: tuple[int, ...] = ()
    attributes: Mapping[str, tuple[str, ...]] | tuple = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "resources", tuple(self.resources))
        rows = tuple(tuple(float(v) for v in row) for row in self.capacities)
        object.__setattr__(self, "capacities", rows)
        if not self.resources or len(set(self.resources)) != len(self.resources):
            raise ValueError(f"resource names must be non-empty and distinct, got {self.resources!r}")
        if not rows:
            raise ValueError("a cluster needs at least one machine")
        for m, row in enumerate(rows):
            if len(row) != len(self.resources):
                raise ValueError(
                    f"machine {m}: {len(row)} capacities for {len(self.resources)} resources {self.resources!r}"
                )
            if not all(math.isfinite(v) and v >= 0 for v in row):
                raise ValueError(f"machine {m}: capacities must be finite and >= 0, got {row!r}")
        if not self.machine_ids:
            object.__setattr__(self, "machine_ids", tuple(range(len(rows))))
        elif len(self.machine_ids) != len(rows):
            raise ValueError(f"{len(self.machine_ids)} machine ids for {len(rows)} machines")
        devices = tuple(self.devices)
        if devices and (len(devices) != len(rows) or not all(
                is_whole(d) and 0 <= d for d in devices)):
            raise ValueError(f"devices must give a whole number >= 0 per machine ({len(rows)}), got {len(devices)} "
                             f"values: {devices[:5]!r}...")
        object.__setattr__(self, "devices", tuple(int(d) for d in devices) if any(devices) else ())
        pairs = self.attributes.items() if isinstance(self.attributes, Mapping) else self.attributes
        attributes = []
        for name, values in pairs:
            values = tuple("" if v is None else str(v) for v in values)
            if not isinstance(name, str) or not name or len(values) != len(rows):
                raise ValueError(f"attribute {name!r} needs a non-empty name and one value per machine ({len(rows)}), "
                                 f"got {len(values)}")
            attributes.append((name, values))
        object.__setattr__(self, "attributes", tuple(sorted(attributes)))

    @classmethod
    def uniform(cls, machines: int, capacity: Mapping[str, float]) -> "ClusterSpec":
        """``machines`` identical machines, e.g. ``ClusterSpec.uniform(5, {"cpu": 64, "memory": 1})``."""
        if machines < 1:
            raise ValueError(f"a cluster needs at least one machine, got machines={machines}")
        return cls(tuple(capacity), tuple(tuple(capacity.values()) for _ in range(machines)))

    @property
    def machines(self) -> int:
        return len(self.capacities)

    def capacity_array(self) -> np.ndarray:
        """Capacities as a float64 array of shape (machines, resources)."""
        return np.array(self.capacities, dtype=np.float64)

    def device_counts(self) -> np.ndarray:
        """Devices per machine, an int64 array of shape (machines,) (zeros when the cluster has none)."""
        return np.array(self.devices, dtype=np.int64) if self.devices else np.zeros(self.machines, dtype=np.int64)

    def attribute(self, name: str) -> tuple[str, ...]:
        """Each machine's value of attribute ``name`` ("" for every machine when the cluster has no such attribute)."""
        return dict(self.attributes).get(name, ("",) * self.machines)

    def accepting(self, accepts: tuple[tuple[str, tuple[str, ...]], ...]) -> np.ndarray:
        """Which machines a task's attribute constraint (`TaskSpec.accepts`) accepts, a bool array (machines,)."""
        mask = np.ones(self.machines, dtype=bool)
        for name, values in accepts:
            mask &= np.isin(np.array(self.attribute(name), dtype=object), list(values))
        return mask

    def demand_vector(self, task: TaskSpec, where: str = "") -> np.ndarray:
        """The task's demand aligned with this cluster's resources.

        A resource the cluster lacks is fine when the task asks for none of it;
        asking for a positive amount of it is an error.
        """
        unknown = {k: float(v) for k, v in task.demand.items() if k not in self.resources and v != 0}
        asked = ", ".join(f"{k}={v:g}" for k, v in unknown.items())
        if unknown:
            raise ValueError(
                f"{where}task {task.id!r} demands {asked} but the cluster only has resources "
                f"{self.resources!r}; add them to the capacity "
                f"(e.g. --capacity {','.join(f'{r}=...' for r in (*self.resources, *unknown))})"
            )
        return np.array([float(task.demand.get(r, 0.0)) for r in self.resources], dtype=np.float64)

    def demand_matrix(self, block: JobBlock) -> np.ndarray:
        """`demand_vector` of every task of a `JobBlock`, shape (tasks, this cluster's resources)."""
        matrix = np.zeros((len(block.task_ids), len(self.resources)))
        for column, name in enumerate(block.resources):
            if name in self.resources:
                matrix[:, self.resources.index(name)] = block.demand[:, column]
            elif (block.demand[:, column] != 0).any():
                row = int(np.argmax(block.demand[:, column] != 0))
                task = TaskSpec(block.task_ids[row], 1, dict(zip(block.resources, block.demand[row].tolist())), 0.0)
                self.demand_vector(task,
                                   where=f"job {block.ids[block.job_of(row)]!r}: ")  # (raises, naming what to add)
        return matrix

@dataclass(frozen=True)
class MachineEvent:
    """Machine ``machine`` (its index in the cluster) enters ``state`` at ``time``.

    * ``"up"``: the machine takes work;
    * ``"down"``: it takes no new work, its running instances go on;
    * ``"failed"``: it takes no new work and its running instances end at once;
      they are re-queued (the simulation's ``on_failure="requeue"``) or counted
      as failed (``"fail"``).
    """

    time: float
    machine: int
    state: str

    def __post_init__(self) -> None:
        if self.state not in MACHINE_STATES:
            raise ValueError(f"machine event state must be one of {MACHINE_STATES}, got {self.state!r}")
        if not (math.isfinite(self.time) and self.time >= 0):
            raise ValueError(f"machine event time must be finite and >= 0, got {self.time!r}")

    def check(self, machines: int) -> None:
        """Raise ValueError unless the event names one of ``machines`` machines."""
        if not 0 <= self.machine < machines:
            raise ValueError(f"{self}: no such machine (the cluster has {machines})")


class UnschedulableTaskError(ValueError):
    """A task demands more than any machine can ever offer; raised before the run starts."""


def check_jobs_fit(cluster: ClusterSpec, jobs: Sequence[JobSpec] | JobBlock, demand: np.ndarray | None = None,
                   counted: str = "in all") -> None:
    """Refuse a workload that could never finish on ``cluster``, before anything runs.

    Raises ValueError when a task asks for a resource the cluster lacks, and
    `UnschedulableTaskError` when a task's demand per instance exceeds every
    machine. ``jobs``: `JobSpec` objects or a `JobBlock`. ``demand`` (tasks x resources,
    in job then task order) may be given when the caller has already built it; ``counted``
    says which jobs the message's count of such tasks covers.
    """
    block = isinstance(jobs, JobBlock)
    if demand is None:
        if block:
            demand = cluster.demand_matrix(jobs)
        else:
            rows = [cluster.demand_vector(task, where=f"job {job.id!r}: ") for job in jobs for task in job.tasks]
            demand = np.array(rows, dtype=np.float64).reshape(len(rows), len(cluster.resources))
    if len(demand) == 0:
        return
    capacity = cluster.capacity_array()
    shapes = np.unique(capacity, axis=0)  # few distinct machine shapes, even in large clusters
    holdable = np.zeros(len(demand), dtype=bool)
    for shape in shapes:
        holdable |= (demand <= shape).all(axis=1)
    if not holdable.all():
        g = int(np.argmin(holdable))  # only on failure: which (job, task) that row is
        if block:
            job_id, task_id = jobs.ids[jobs.job_of(g)], jobs.task_ids[g]
        else:
            job_id, task_id = [(job.id, task.id) for job in jobs for task in job.tasks][g]
        asked = dict(zip(cluster.resources, demand[g].tolist()))
        largest = dict(zip(cluster.resources, capacity.max(axis=0).tolist()))
        raise UnschedulableTaskError(
            f"job {job_id!r}, task {task_id!r} demands {asked} per instance, which no machine can hold "
            f"(largest capacity per resource: {largest}); {int((~holdable).sum())} task(s) {counted} cannot run. "
            f"Give the cluster larger machines or drop these tasks from the workload."
        )
    if not block:  # (a block's tasks ask for no devices or attributes)
        _check_devices_fit(cluster, jobs, demand, counted)


def _able_machines(cluster: ClusterSpec, task: TaskSpec, demand: np.ndarray, capacity: np.ndarray, counts: np.ndarray,
                   accepting: dict[tuple, np.ndarray]) -> np.ndarray:
    """The machines that could hold one instance of ``task`` when empty: its ``demand`` (aligned with the
    cluster's resources) within ``capacity``, its devices within ``counts``, its attribute constraint met
    (``accepting`` caches the constraint's machines)."""
    if task.accepts not in accepting:
        accepting[task.accepts] = cluster.accepting(task.accepts)
    able = accepting[task.accepts] & (demand <= capacity).all(axis=1)
    return able & (counts >= task.devices.count) if task.devices is not None else able


def unholdable(cluster: ClusterSpec, tasks: Sequence[TaskSpec], demand: np.ndarray | None = None) -> list[int]:
    """The positions in ``tasks`` of those no machine of ``cluster``, empty, could hold one instance of (resources,
    devices and attributes): they can never run there. ``demand``: their demand rows aligned with the cluster's
    resources, when the caller has them. Each distinct (demand, devices, constraint) is checked once."""
    if demand is None:
        demand = np.array([cluster.demand_vector(task) for task in tasks]).reshape(len(tasks), len(cluster.resources))
    capacity, counts = cluster.capacity_array(), cluster.device_counts()
    accepting: dict[tuple, np.ndarray] = {}
    able: dict[tuple, bool] = {}  # pods repeat a few shapes
    bad = []
    for k, task in enumerate(tasks):
        key = (demand[k].tobytes(), task.devices, task.accepts)
        if key not in able:
            able[key] = bool(_able_machines(cluster, task, demand[k], capacity, counts, accepting).any())
        if not able[key]:
            bad.append(k)
    return bad


def _check_devices_fit(cluster: ClusterSpec, jobs: Sequence[JobSpec], demand: np.ndarray, counted: str) -> None:
    """Refuse a task whose device request or attribute constraint no machine meets (with its resources)."""
    tasks = [(job, task) for job in jobs for task in job.tasks]
    asking = [g for g, (_, task) in enumerate(tasks) if task.devices is not None or task.accepts]
    if not asking:
        return
    bad = [asking[k] for k in unholdable(cluster, [tasks[g][1] for g in asking], demand[asking])]
    if bad:
        job, task = tasks[bad[0]]
        wants = []
        if task.devices is not None:
            wants.append(f"{task.devices.count} device(s) of {task.devices.milli} milli per instance "
                         f"(the most any machine has: {int(cluster.device_counts().max())})")
        for name, values in task.accepts:
            wants.append(f"{name} in {{{', '.join(values)}}} "
                         f"(the cluster has {', '.join(sorted(set(cluster.attribute(name))))})")
        raise UnschedulableTaskError(
            f"job {job.id!r}, task {task.id!r} asks for {' and '.join(wants)} with its resources, which no machine "
            f"offers; {len(bad)} task(s) {counted} cannot run. Give the cluster such machines or drop these tasks "
            f"from the workload.")


def parse_capacity(text: str) -> dict[str, float]:
    """Parse ``"cpu=64,memory=1,disk=1"`` into ``{"cpu": 64.0, "memory": 1.0, "disk": 1.0}``."""
    capacity: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        name = name.strip()
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not name or not math.isfinite(number) or number < 0:
            raise ValueError(f"bad capacity {part!r} in {text!r}: write NAME=NUMBER pairs with finite numbers >= 0, "
                             f"e.g. cpu=64,memory=1")
        if name in capacity:
            raise ValueError(f"resource {name!r} given twice in capacity {text!r}")
        capacity[name] = number
    if not capacity:
        raise ValueError(f"empty capacity {text!r}: write NAME=NUMBER pairs, e.g. cpu=64,memory=1")
    return capacity

