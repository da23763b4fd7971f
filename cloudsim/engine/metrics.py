"""What an episode produced, as pandas DataFrames, summary numbers and Parquet files.

Definitions (every number is derived from the instance groups the run recorded):

* task completion = last instance finish - first instance start, task slowdown =
  completion / task duration (CloudSimPy's ``average_completion`` and
  ``average_slowdown`` average these over tasks);
* job completion = job finish - job submit, job slowdown = completion / the
  job's critical-path duration (its duration on an empty, unbounded cluster),
  as DeepRM defines slowdown for single-task jobs;
* job start = the earliest start of any of the job's tasks, job wait = job
  start - job submit (how long the job waited before it first got resources);
* cycling time (DeepRM_Plus) = job finish - job arrival at the data center:
  the same number as job completion, so ``avg_cycling_time`` always equals
  ``avg_job_completion`` (both keys exist so either paper's name can be used);
* percentiles (``*_p50``, ``*_p95``, ``*_p99`` of job completion, wait and
  slowdown) use numpy's default linear interpolation between order statistics;
* utilisation of a resource = used / total capacity, a step function of time;
  its mean is taken over [0, makespan];
* utilisation of machine m in resource i, U_m^i = used on m / m's capacity in
  i (NaN where that capacity is 0), also a step function of time, and U_m =
  the mean of U_m^i over the resources m has (RLSK eq. 5);
* imbalance between resources (RLSK eq. 7, "DiffCluster") = sum over machines
  m of sum over resource pairs i < j of |U_m^i - U_m^j|; resources m lacks
  are left out of m's pairs;
* imbalance between machines (RLSK eq. 8, "DiffRes") = sum over machine pairs
  i < j of |U_i - U_j|, over the machines with some capacity: idle ones count
  with U = 0, and a machine that is down with whatever it still runs;
* the summary's imbalance numbers are time averages of these step functions
  over [0, makespan] (each value x how long it holds, / makespan; before the
  first change every machine is idle and both are 0); NaN when the makespan is
  0, as there is no interval to average over. Averages and percentiles of
  empty sets are NaN too.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from cloudsim.engine import arithmetic
from cloudsim.version import __version__


if TYPE_CHECKING:
    import pandas as pd
    from cloudsim.engine.record import EpisodeRecord
    from cloudsim.engine.tasks import TaskTable

__all__ = ["EpisodeResult", "IMBALANCE_COLUMNS", "MEASURES", "Measure", "RESERVATION_COLUMNS", "capacity_frame",
           "group_frame", "job_frame", "jsonable", "reservation_frame", "shown_in",
           "stringify_ids", "summarise", "task_frame", "task_numbers", "TaskTotals", "used_resources",
           "write_summary"]


@dataclass(frozen=True)
class Measure:
    """A number of a run that reports show: its summary key, whether a higher value is the better one, and the
    tables that show it (``replay``: the table of ``cloudsim replay``; ``compare``: the comparison's table of
    means and spreads; ``leaderboard``: the measures the leaderboard ranks the brokers by)."""

    key: str
    higher_is_better: bool = False
    tables: frozenset[str] = frozenset()
    needs: str = ""  # what a run needs to report it (an option, "--power"); "": every run reports it


MEASURES = (
    Measure("makespan", tables=frozenset({"replay", "compare", "leaderboard"})),
    Measure("avg_completion", tables=frozenset({"replay"})),
    Measure("avg_slowdown", tables=frozenset({"replay"})),
    Measure("avg_job_completion", tables=frozenset({"replay", "compare", "leaderboard"})),
    Measure("avg_job_slowdown", tables=frozenset({"replay", "compare", "leaderboard"})),
    Measure("job_slowdown_p95", tables=frozenset({"compare"})),
    Measure("avg_job_wait", tables=frozenset({"compare"})),
    Measure("utilisation_cpu", higher_is_better=True, tables=frozenset({"leaderboard"})),
    Measure("gpu_allocated_pct_mean", higher_is_better=True),  # of the GPU sampler (`cloudsim.engine.fragmentation`)
    # A run with a power model (--power) and a grid signal (--carbon): `cloudsim.engine.energy.meter`. Tables show
    # them where the runs report them.
    Measure("energy_kwh", tables=frozenset({"replay", "compare"}), needs="--power"),
    Measure("carbon_kg", tables=frozenset({"replay", "compare"}), needs="--power and --carbon"),
    Measure("carbon_intensity_mean", tables=frozenset({"replay", "compare"}), needs="--power and --carbon"),
)
"""The measures reports show, in the order their tables list them: a new summary number is its line in
`summarise` and, where a table should show it, its line here."""


def shown_in(table: str) -> tuple[str, ...]:
    """The keys of the measures ``table`` shows (one of ``replay``, ``compare``, ``leaderboard``), in order."""
    return tuple(measure.key for measure in MEASURES if table in measure.tables)



_GROUP_COLUMNS = ["task", "machine", "first_instance", "instances", "duration", "start", "end", "outcome"]
_PERCENTILES = (50, 95, 99)
IMBALANCE_COLUMNS = ("imbalance_resources", "imbalance_machines")
# imbalance() holds (change instants x machines) matrices one block of instants at a time:
# about this many cells per block (a few arrays of 5e5 float64 are a few MB each).
_BLOCK_CELLS = 500_000
# The machines' usage steps are taken a block of machines at a time, about this many groups per block: a
# block's frame of changes (two rows a group) and its grouping take several times its 16 MB.
_GROUPS_PER_BLOCK = 125_000


@dataclass
class EpisodeResult:
    """Results of one episode.

    Attributes:
        summary: headline numbers (makespan, averages, counts), JSON-ready.
        tasks: one row per task: ids, demand, times, completion, slowdown.
        jobs: one row per job: submit, first start, wait, finish, completion,
            duration, slowdown.
        groups: one row per instance group (instances of a task started on one
            machine at one instant with one duration): machine, start, end, and
            outcome ("finished", "failed", or "requeued" when a machine failure
            ended them and they waited again).
        capacity: per-machine capacity, one column per resource.
        reservations: one row per reservation a broker made (`Decision` with
            ``at``): job, task, machine, instances, when it was made, when it was
            to start, and its outcome ("started", "cancelled" when its machine
            could not hold it then, "" if the episode ended first).
        devices: how many devices (GPUs) each machine holds (empty: none anywhere).
        device_milli: per task (the rows of ``tasks``), the milli-units of devices one
            of its instances holds, over all its devices (0: none); empty when no
            task asks for devices.
    """

    summary: dict
    tasks: pd.DataFrame
    jobs: pd.DataFrame
    groups: pd.DataFrame
    capacity: pd.DataFrame
    resources: tuple[str, ...] = field(default=())
    reservations: pd.DataFrame = field(default_factory=lambda: reservation_frame([]))
    devices: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    device_milli: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @classmethod
    def from_record(cls, record: "EpisodeRecord", wall_s: float) -> "EpisodeResult":
        """The results of a finished episode; ``wall_s`` is its wall-clock time in seconds."""
        table = record.tasks
        resources = record.cluster.resources
        tasks = task_frame(table, resources)
        jobs = job_frame(table)
        # The episode is over: its group table does not grow again, and the frame takes its columns as they are.
        groups = group_frame(record.groups.columns(), table, copy=False)
        milli = table.task_device_count * table.task_device_milli
        result = cls({}, tasks, jobs, groups, capacity_frame(record), tuple(resources),
                     reservation_frame(record.reservations), np.array(record.cluster.devices, dtype=np.int64),
                     milli if milli.any() else np.zeros(0, dtype=np.int64))
        # The summary's imbalance numbers are averages of the very series imbalance() returns.
        imbalance = result.imbalance()
        makespan = float(record.makespan)
        result.summary = summarise(record, task_numbers(tasks), jobs, used_resources(groups, table), {
            column: _time_mean(imbalance.time.to_numpy(), imbalance[column].to_numpy(), makespan)
            for column in IMBALANCE_COLUMNS}, wall_s)
        deadline = table.job_deadline
        if np.isfinite(deadline).any():  # jobs with deadlines: how many finished after theirs (unfinished: late)
            late = np.isfinite(deadline) & ~(table.job_finish <= deadline)
            result.summary.update(jobs_with_deadline=int(np.isfinite(deadline).sum()), deadline_misses=int(late.sum()))
        return result

    @property
    def makespan(self) -> float:
        return self.summary["makespan"]

    def utilisation(self) -> pd.DataFrame:
        """Fraction of the cluster's total capacity in use, per resource, from each change onward.

        One row per instant at which usage changed; usage holds until the next row.
        """
        steps = self.usage_changes().drop(columns="machine").groupby("time", sort=True).sum().cumsum()
        total = self.capacity[list(self.resources)].sum(axis=0).replace(0, np.nan)
        return (steps / total).clip(lower=0.0).reset_index()

    def machine_utilisation(self) -> pd.DataFrame:
        """Utilisation of each machine, per resource, from each change onward.

        Columns: time, machine (row of ``capacity``, as in ``groups``), then one column
        per resource with used / that machine's capacity (NaN where the capacity is 0).
        One row per (instant, machine) at which that machine's usage changed, sorted by
        time then machine; a machine's usage holds until its next row, and before its
        first row it is idle (0 from time 0).
        """
        import pandas as pd
        machine, time, util = self._machine_steps()
        frame = pd.DataFrame(util, columns=list(self.resources))
        frame.insert(0, "time", time)
        frame.insert(1, "machine", machine)
        return frame.sort_values(["time", "machine"], kind="stable").reset_index(drop=True)

    def imbalance(self) -> pd.DataFrame:
        """RLSK's imbalance measures (eq. 7 and 8) over time, one row per change instant.

        Columns: time, imbalance_resources (eq. 7: the sum over machines of |U_m^i - U_m^j|
        over resource pairs), imbalance_machines (eq. 8: the sum of |U_i - U_j| over machine
        pairs, U_m being machine m's mean utilisation over its resources). Each value holds
        until the next row; before the first row both are 0 (every machine idle). See the
        module docstring for machines and resources with zero capacity.
        """
        import pandas as pd
        has_capacity = (self.capacity[list(self.resources)].to_numpy() > 0).any(axis=1)
        # Eq. 7 is a sum of one step function per machine, each depending on that machine
        # alone: add up every machine's changes per instant and accumulate over time. Eq. 8 needs
        # each machine's mean utilisation (eq. 5) at its changes. Both are taken from the machines'
        # steps a block of machines at a time: the utilisation rows of a long run are never all held.
        # The instants at which some machine's usage changes are found first: every start and end of a
        # group (a running group's end is none yet).
        start, end = self.groups.start.to_numpy(), self.groups.end.to_numpy()
        times = np.union1d(np.unique(start), np.unique(end[~np.isnan(end)]))  # (each column's few distinct first)
        del start, end
        between_resources = np.zeros(len(times))
        # Eq. 8 pairs every machine with every other at each instant, idle ones included, so it
        # needs the whole U vector per instant: a dense (instants x machines) matrix, built and
        # reduced one block of instants at a time. Machines without any capacity have no U_m
        # and are left out: each change of a counted machine is one (column, instant) key, its column
        # among the counted machines.
        counted = int(has_capacity.sum())
        column_of = np.cumsum(has_capacity) - 1
        # (room for every group's two changes: the rows never filled are never touched, and take no memory)
        key, mean = np.empty(2 * len(self.groups), dtype=np.int64), np.empty(2 * len(self.groups))
        filled = 0
        for machine, time, util in self._machine_step_blocks():
            spread = np.zeros(len(util))
            for i in range(util.shape[1]):  # resource pairs: a handful, whatever the cluster size
                for j in range(i + 1, util.shape[1]):
                    spread += np.nan_to_num(np.abs(util[:, i] - util[:, j]))  # a missing resource adds nothing
            instant = np.searchsorted(times, time)
            # Eq. 7's changes added to their instants one at a time in row order (np.add.at), block after block:
            # the sums one bincount over every row would make. (A block begins with a machine's first row.)
            np.add.at(between_resources, instant, _changes(machine, spread))
            kept = has_capacity[machine]
            rows = slice(filled, filled + int(kept.sum()))
            key[rows] = column_of[machine[kept]] * len(times) + instant[kept]
            mean[rows] = np.nanmean(util[kept], axis=1)  # (a kept machine has a resource)
            filled = rows.stop
            del machine, time, util, spread, instant, kept
        between_resources = np.cumsum(between_resources)
        key, mean = key[:filled], mean[:filled]
        # Sum of |x_a - x_b| over pairs of n values: with x sorted, the k-th (from 0) is the larger
        # one in k pairs and the smaller one in n - 1 - k pairs.
        weights = 2.0 * np.arange(counted) - counted + 1
        between_machines = np.zeros(len(times))
        if counted > 1:  # one machine has no pair: 0
            for start, stop, u in _step_blocks(key, mean, len(times), counted):
                u.sort(axis=1)
                between_machines[start:stop] = arithmetic.dot(u, weights)
        return pd.DataFrame(dict(zip(("time", *IMBALANCE_COLUMNS), (times, between_resources, between_machines))))

    def usage_changes(self) -> pd.DataFrame:
        """Every change of a machine's usage: columns machine, time, one per resource. Each
        group adds its demand x instances to its machine at its start and takes it back at its
        end (starts first, then ends; rows not sorted). A running sum per machine over time is
        what the machine holds."""
        return self._usage_changes(slice(None))

    def _usage_changes(self, rows: slice | np.ndarray) -> pd.DataFrame:
        """`usage_changes` of the groups of ``rows`` (positions in ``groups``), in the same order."""
        import pandas as pd
        g = self.groups
        task = g.task.to_numpy()[rows]
        demand = self.tasks[[f"demand_{r}" for r in self.resources]].to_numpy()[task]
        delta = demand * g.instances.to_numpy()[rows][:, None]
        frame = pd.DataFrame(np.concatenate([delta, -delta]), columns=list(self.resources))
        frame.insert(0, "machine", np.concatenate([g.machine.to_numpy()[rows]] * 2))
        frame.insert(1, "time", np.concatenate([g.start.to_numpy()[rows], g.end.to_numpy()[rows]]))
        return frame

    def _machine_steps(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(machine, time, utilisation[rows, resources]) at each change of each machine.

        Rows are sorted by machine, then time: a start adds the group's demand x
        instances to its machine, an end takes it back, and the running sum per
        machine divided by the machine's capacity is its utilisation.
        """
        blocks = list(self._machine_step_blocks())
        if not blocks:
            return np.empty(0, dtype=np.int64), np.empty(0), np.empty((0, len(self.resources)))
        return tuple(np.concatenate(part) for part in zip(*blocks))

    def _machine_step_blocks(self) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """`_machine_steps` a block of machines at a time, in machine order (none without groups)."""
        names = list(self.resources)
        capacity = self.capacity[names].to_numpy(dtype=float)
        # A few machines at a time: each machine's steps depend on its own groups alone, and the
        # grouped frames of a long run's millions of groups would take several times their size.
        # Within a block every (machine, time) sums its rows in the order the whole frame has them.
        group_machine = self.groups.machine.to_numpy()
        for block in _machine_blocks(group_machine, _GROUPS_PER_BLOCK):
            rows = np.flatnonzero((group_machine >= block[0]) & (group_machine < block[1]))
            used = self._usage_changes(rows).groupby(["machine", "time"], sort=True).sum() \
                .groupby(level="machine").cumsum()
            machine = used.index.get_level_values("machine").to_numpy(dtype=np.int64)
            with np.errstate(divide="ignore", invalid="ignore"):
                util = np.where(capacity[machine] > 0, used.to_numpy() / capacity[machine], np.nan)
            # adding and taking back the same amounts may leave -1e-17
            yield machine, used.index.get_level_values("time").to_numpy(dtype=float), np.maximum(util, 0.0)

    def instances(self) -> pd.DataFrame:
        """One row per instance run (expanded from the groups): job, task, instance, machine, start, end, outcome.

        An instance re-queued after a machine failure has one row per run.
        """
        g = self.groups
        repeat = g.instances.to_numpy()
        rows = g.loc[g.index.repeat(repeat), ["job_id", "task_id", "machine", "start", "end", "outcome"]]
        offsets = np.arange(int(repeat.sum())) - np.repeat(np.cumsum(repeat) - repeat, repeat)
        rows.insert(2, "instance", g.first_instance.to_numpy().repeat(repeat) + offsets)
        return rows.reset_index(drop=True)

    def to_parquet(self, directory: str | Path) -> Path:
        """Write tasks, jobs, groups, utilisation, capacity and reservations as Parquet, and summary.json."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        for name, frame in [
            ("tasks", self.tasks),
            ("jobs", self.jobs),
            ("groups", self.groups),
            ("utilisation", self.utilisation()),
            ("capacity", self.capacity),
            ("reservations", self.reservations),
        ]:
            stringify_ids(frame).to_parquet(out / f"{name}.parquet", index=False)
        write_summary(out / "summary.json", self.summary)
        return out



def task_frame(table: "TaskTable", resources: tuple[str, ...], stop: int | None = None) -> pd.DataFrame:
    """One row per task of the task table's first ``stop`` rows (default all): the ``tasks``
    frame of `EpisodeResult`."""
    import pandas as pd
    stop = len(table.task_ids) if stop is None else stop
    task_job = table.task_job[:stop] - table.job_base
    job_ids = table.job_ids
    tasks = pd.DataFrame(
        {
            "job_id": pd.Series([job_ids[j] for j in task_job], dtype=object),
            "task_id": pd.Series(table.task_ids[:stop], dtype=object),
            "instances": table.task_instances[:stop],
            **{f"demand_{r}": table.task_demand[:stop, i] for i, r in enumerate(resources)},
            "duration": table.task_duration[:stop],
            "submit_time": table.job_arrival[task_job],
            "ready_time": table.task_ready_time[:stop],
            "start_time": table.task_start_time[:stop],
            "finish_time": table.task_finish_time[:stop],
            "failed_instances": table.task_failed[:stop],
            "restarts": table.task_restarts[:stop],
        }
    )
    tasks["completion"] = tasks.finish_time - tasks.start_time
    tasks["wait"] = tasks.start_time - tasks.ready_time
    tasks["slowdown"] = tasks.completion / tasks.duration.where(tasks.duration > 0)
    return tasks


def job_frame(table: "TaskTable", stop: int | None = None) -> pd.DataFrame:
    """One row per job of the task table's first ``stop`` job rows (default all): the ``jobs``
    frame of `EpisodeResult`."""
    import pandas as pd
    stop = len(table.job_ids) if stop is None else stop
    firsts = table.job_first_task[:stop] - table.task_base
    end = int(table.job_first_task[stop]) - table.task_base
    jobs = pd.DataFrame(
        {
            "job_id": pd.Series(table.job_ids[:stop], dtype=object),
            "tasks": np.diff(table.job_first_task[:stop + 1]),
            "instances": np.add.reduceat(table.task_instances[:end], firsts)
            if stop
            else np.empty(0, dtype=np.int64),
            "submit_time": table.job_arrival[:stop],
            "finish_time": table.job_finish[:stop],
            "duration": table.job_length()[:stop],
        }
    )
    # A job first gets resources when its first task starts. Every job has at least one
    # task, so each reduceat segment is non-empty; fmin skips a task that never started.
    jobs.insert(
        jobs.columns.get_loc("submit_time") + 1,
        "start_time",
        np.fmin.reduceat(table.task_start_time[:end], firsts) if stop else np.empty(0),
    )
    jobs["wait"] = jobs.start_time - jobs.submit_time
    jobs["completion"] = jobs.finish_time - jobs.submit_time
    jobs["slowdown"] = jobs.completion / jobs.duration.where(jobs.duration > 0)
    return jobs


def group_frame(columns: dict[str, np.ndarray], table: "TaskTable", copy: bool = True) -> pd.DataFrame:
    """The ``groups`` frame of `EpisodeResult` from `GroupTable.columns`; every group's task
    must still be in ``table``. ``copy=False``: the frame holds the columns themselves (an episode's
    table, which will not grow again)."""
    import pandas as pd
    groups = pd.DataFrame(columns, columns=_GROUP_COLUMNS, copy=copy)  # the columns' own dtypes
    rows = table.rows(groups.task.to_numpy())
    # Each group's ids picked from the table's ids as object arrays: no list of millions of names on the way.
    task_ids = np.fromiter(table.task_ids, dtype=object, count=len(table.task_ids))
    job_ids = np.fromiter(table.job_ids, dtype=object, count=len(table.job_ids))
    groups.insert(0, "job_id", pd.Series(job_ids[table.task_job[rows] - table.job_base], dtype=object, copy=False))
    groups.insert(1, "task_id", pd.Series(task_ids[rows], dtype=object, copy=False))
    return groups


RESERVATION_COLUMNS = ["made", "machine", "job_id", "task_id", "instances", "start", "outcome"]


def reservation_frame(rows: list[list]) -> pd.DataFrame:
    """The reservations of `EpisodeRecord.reservations` as a table (no rows: the same columns)."""
    import pandas as pd
    frame = pd.DataFrame(rows, columns=RESERVATION_COLUMNS)
    return frame.astype({"made": float, "machine": np.int64, "instances": np.int64, "start": float,
                         "outcome": str})


def capacity_frame(record: "EpisodeRecord") -> pd.DataFrame:
    """One row per machine: its id and its capacity, a column per resource."""
    import pandas as pd
    capacity = pd.DataFrame(record.state.capacity, columns=list(record.cluster.resources))
    capacity.insert(0, "machine_id", list(record.cluster.machine_ids))
    return capacity


def used_resources(groups: pd.DataFrame, table: "TaskTable", before: np.ndarray | None = None) -> np.ndarray:
    """Resource x time the groups held: per resource, the sum of demand x instances x (end - start), in
    group order; ``before``: the sum over the groups before these (a streamed run's), which it goes on from.

    numpy sums the (groups x resources) products along groups one after another (not pairwise: that is
    along the fast axis only), so the products are made a block of groups at a time, the sum so far added
    to the block's first row: the same sums without the whole matrix of products, and the same for groups
    handed over in parts, as a streamed run writes them. With one resource numpy sums pairwise: each part's
    sum is added to the total."""
    task, instances, start, end = (groups[name].to_numpy() for name in ("task", "instances", "start", "end"))
    demand = table.task_demand
    total = np.zeros(demand.shape[1]) if before is None else before
    if demand.shape[1] < 2:
        part = (demand[table.rows(task)] * (instances * (end - start))[:, None]).sum(axis=0)
        return part if before is None else total + part
    for first in range(0, len(task), _GROUPS_PER_BLOCK):
        rows = slice(first, first + _GROUPS_PER_BLOCK)
        products = demand[table.rows(task[rows])] * (instances[rows] * (end[rows] - start[rows]))[:, None]
        if first or before is not None:
            products[0] = total + products[0]
        total = products.sum(axis=0)
    return total


def task_numbers(tasks: pd.DataFrame) -> dict:
    """The summary's numbers over tasks, from the ``tasks`` frame (or its columns instances,
    failed_instances, restarts, completion and slowdown)."""
    return {"tasks": int(len(tasks)), "instances": int(tasks.instances.sum()),
            "instances_failed": int(tasks.failed_instances.sum()), "instance_restarts": int(tasks.restarts.sum()),
            "avg_completion": _mean(tasks.completion), "avg_slowdown": _mean(tasks.slowdown)}


class TaskTotals:
    """`task_numbers` added up one batch of task rows at a time: what a streamed run keeps instead
    of its task rows. Counts are exact; a mean is the exact sum (``math.fsum``) of each batch's
    numpy sum over the count, equal to the in-memory mean up to rounding in the last bits."""

    def __init__(self) -> None:
        self.counts = {"tasks": 0, "instances": 0, "instances_failed": 0, "instance_restarts": 0}
        self._sums: dict[str, list[float]] = {"completion": [], "slowdown": []}
        self._known = {"completion": 0, "slowdown": 0}  # values that are not NaN

    def add(self, tasks: pd.DataFrame) -> None:
        for key, column in (("tasks", None), ("instances", "instances"), ("instances_failed", "failed_instances"),
                            ("instance_restarts", "restarts")):
            self.counts[key] += len(tasks) if column is None else int(tasks[column].sum())
        for name in self._sums:
            values = tasks[name].to_numpy(dtype=float)
            known = values[~np.isnan(values)]
            self._sums[name].append(float(known.sum()))
            self._known[name] += len(known)

    def numbers(self) -> dict:
        means = {f"avg_{name}": math.fsum(self._sums[name]) / self._known[name] if self._known[name] else float("nan")
                 for name in self._sums}
        return {**self.counts, **means}


def summarise(record: "EpisodeRecord", tasks: dict, jobs: pd.DataFrame, used: np.ndarray,
              imbalance: dict[str, float], wall_s: float) -> dict:
    """The summary of a finished episode from its `task_numbers`, its jobs' columns completion, wait and
    slowdown (the ``jobs`` frame, or a mapping of those names to Series), the resources its groups used
    (`used_resources`) and its mean imbalance numbers."""
    makespan = float(record.makespan)
    total = record.state.capacity.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_util = used / (total * makespan) if makespan > 0 else np.zeros(len(total))
    completion, wait, slowdown = jobs["completion"], jobs["wait"], jobs["slowdown"]
    job_completion = _mean(completion)  # also DeepRM_Plus's average cycling time
    return {
        "broker": record.broker,
        "mode": "event" if record.tick is None else f"tick={record.tick:g}",
        "makespan": makespan,
        "jobs": int(len(completion)),
        "tasks": tasks["tasks"],
        "instances": tasks["instances"],
        # every instance has ended once, finished or failed
        "instances_finished": tasks["instances"] - tasks["instances_failed"],
        "instances_failed": tasks["instances_failed"],
        "instance_restarts": tasks["instance_restarts"],
        # a broker's suspensions (`cloudsim.Suspend`), each instance's each time; absent from a run without any
        **({"instance_suspensions": int(record.suspensions)} if record.suspensions else {}),
        "avg_completion": tasks["avg_completion"],
        "avg_slowdown": tasks["avg_slowdown"],
        "avg_job_completion": job_completion,
        "avg_job_slowdown": _mean(slowdown),
        "avg_job_wait": _mean(wait),
        "avg_cycling_time": job_completion,
        **_percentiles(completion, "job_completion"),
        **_percentiles(wait, "job_wait"),
        **_percentiles(slowdown, "job_slowdown"),
        **{f"utilisation_{r}": float(u) for r, u in zip(record.cluster.resources, mean_util)},
        **imbalance,
        "decisions": int(record.decisions),
        "sim_wall_s": wall_s,
    }


def write_summary(path: Path, summary: dict) -> None:
    """``summary`` as strict, indented JSON (NaN as null) at ``path``, with the version of cloudsim
    that made it (``cloudsim_version``), so that a results folder says which code wrote it."""
    path.write_text(json.dumps(jsonable({"cloudsim_version": __version__, **summary}), indent=2, allow_nan=False)
                    + "\n")


def jsonable(value: Any) -> Any:
    """``value`` ready for strict JSON: numpy scalars as Python numbers, NaN and infinities as
    None (JSON has no such numbers), tuples and arrays as lists, paths as text."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def _mean(series: pd.Series) -> float:
    return float(series.mean()) if series.notna().any() else float("nan")


def _percentiles(series: pd.Series, name: str) -> dict[str, float]:
    """``{name}_p50``, ``_p95`` and ``_p99`` of the series' values (NaN ones left out; all NaN when none)."""
    values = series.dropna().to_numpy(dtype=float)
    found = np.percentile(values, _PERCENTILES) if len(values) else np.full(len(_PERCENTILES), np.nan)
    return {f"{name}_p{p}": float(v) for p, v in zip(_PERCENTILES, found)}


def _time_mean(times: np.ndarray, values: np.ndarray, makespan: float) -> float:
    """Mean over [0, makespan] of a step function: ``values[k]`` holds from ``times[k]``
    to the next time (the last one to the makespan), 0 before the first time.

    NaN when the makespan is 0: there is no interval to average over.
    """
    if not makespan > 0:
        return float("nan")
    lengths = np.diff(np.append(times, makespan))
    return arithmetic.dot(values, lengths) / makespan  # in a fixed order: the same bits on every processor


def _machine_blocks(machine: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """Ranges [first, stop) of machine numbers, in order, each holding about ``rows`` of ``machine``'s
    entries (a machine with more has a range of its own); none when ``machine`` is empty."""
    if len(machine) == 0:
        return []
    counts = np.bincount(machine)
    blocks, first, held = [], 0, 0
    for m, n in enumerate(counts.tolist()):
        if held and held + n > rows:
            blocks.append((first, m))
            first, held = m, 0
        held += n
    blocks.append((first, len(counts)))
    return blocks


def _changes(machine: np.ndarray, value: np.ndarray) -> np.ndarray:
    """How much each row changes its machine's value: rows sorted by machine, then time;
    every machine's value is 0 before its first row."""
    change = np.diff(value, prepend=0.0)
    first = np.flatnonzero(np.diff(machine, prepend=-1))
    change[first] = value[first]
    return change


def _step_blocks(key: np.ndarray, value: np.ndarray, rows: int, columns: int) -> Iterator[tuple]:
    """A dense (rows x columns) matrix of step functions, one block of rows at a time.

    Change k is at the cell ``key[k] = column * rows + row``: from that row on, its column
    holds value[k] until the column's next change; every column is 0 before its first
    change. The keys must be sorted (by column, then row), with at most one change per cell.
    Yields (start, stop, block) for rows [start, stop), the block (C order, shape (stop -
    start, columns)) being the caller's to overwrite; about `_BLOCK_CELLS` cells per block
    keep memory bounded whatever the number of rows, each column's last value carrying over
    to the next block.
    """
    height = max(1, _BLOCK_CELLS // max(columns, 1))
    # A block's changes of one column are one run of the sorted keys, found by binary search;
    # gathered column after column, they stay sorted by column, then row, without a sorted copy of
    # every change (a long run has millions).
    carried = np.zeros(columns)
    machines = np.arange(columns)
    for start in range(0, rows, height):
        stop = min(start + height, rows)
        lo = np.searchsorted(key, machines * rows + start)
        counts = np.searchsorted(key, machines * rows + stop) - lo
        taken = np.cumsum(counts)
        picked = np.arange(taken[-1]) + np.repeat(lo - (taken - counts), counts)
        c = key[picked] // rows
        r, v = key[picked] - c * rows - start, value[picked]
        # Lay out each column's values over the block as runs, column after column: the
        # value carried in from the previous block, then one run per change. np.repeat
        # writes them in one pass and copies values exactly (a running sum would not).
        first = machines + np.searchsorted(c, machines)  # where each column's carried run goes
        later = np.arange(len(c)) + c + 1  # where each change's run goes
        starts = np.zeros(columns + len(c), dtype=np.int64)
        starts[later] = r
        runs = np.empty(columns + len(c))
        runs[first], runs[later] = carried, v
        ends = np.full(len(runs), stop - start, dtype=np.int64)
        continued = np.ones(len(runs), dtype=bool)  # the next run belongs to the same column
        continued[first[1:] - 1] = False
        continued[-1] = False
        ends[continued] = starts[np.flatnonzero(continued) + 1]
        by_column = np.repeat(runs, ends - starts).reshape(columns, stop - start)
        carried = by_column[:, -1].copy()
        yield start, stop, np.ascontiguousarray(by_column.T)


def stringify_ids(frame: pd.DataFrame) -> pd.DataFrame:
    """Parquet needs one type per column; ids may mix ints and strings, so store them as text."""
    frame = frame.copy()
    for column in ("job_id", "task_id", "machine_id"):
        if column in frame and frame[column].dtype == object:
            frame[column] = frame[column].astype(str)
    return frame
