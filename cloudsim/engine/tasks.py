"""The work of an episode as arrays: every task's progress, DAG release, re-queues and the waiting set.

Jobs -> tasks are flattened into a global task index in arrival order (job
submit order, then the task's order in its job). `TaskTable` keeps, per task,
how many instances started, finished and failed, and per job whether it
arrived and finished. The waiting set ``ready`` is a sorted array of the global
indices of ready tasks with waiting instances, which is arrival order, so a
broker sees waiting tasks in arrival order without any scan. A task becomes
ready when its job arrives (tasks without parents) or when its last parent
finishes; instances ended by a machine failure, or suspended by the broker, wait again, before fresh ones. A
suspended instance keeps its remaining work (a checkpoint) and resumes with that, plus the table's
``resume_cost``; a machine failure after it resumed sends it back to that checkpoint, not to its start.
"""

from __future__ import annotations

import math
from typing import Hashable, Iterable, Sequence

import numpy as np

from cloudsim.engine.cluster import frozen
from cloudsim.engine.specs import ClusterSpec, JobBlock, JobSpec

__all__ = ["TaskTable"]


class TaskTable:
    """Progress of every task and job of one episode.

    Tasks are known by their global index and jobs by their arrival position, numbers
    that never change. Array attributes hold one row per task (``task_*``) or per job
    (``job_*``): the row of global task ``g`` is ``g - task_base`` and that of job ``j``
    is ``j - job_base``. Both bases are 0 and the rows cover the whole episode, unless
    the simulation streams its jobs: then `extend` adds jobs before they arrive and
    `retire` drops finished ones, and the rows are the jobs in between. Values stored
    in the arrays (``task_job``, ``job_first_task``, ``ready``, ``children``) are global.
    All are public and read by the view and the results, and written only by this
    class's methods.
    """

    _TASK_ARRAYS = ("task_job", "task_demand", "task_duration", "task_estimate", "task_instances",
                    "task_pending_parents", "task_device_count", "task_device_milli", "task_started",
                    "task_reserved", "task_finished", "task_failed", "task_restarts",
                    "_next_fresh", "task_ready_time", "task_start_time", "task_finish_time", "task_waiting_change",
                    "task_tail")
    _TASK_LISTS = ("task_ids", "instance_durations", "children", "task_accepts")
    _JOB_ARRAYS = ("job_submit", "_job_length", "job_arrival", "job_finish", "job_unfinished_tasks", "job_deadline")

    def __init__(self, cluster: ClusterSpec, jobs: Sequence[JobSpec] = (), resume_cost: float = 0.0) -> None:
        self.cluster = cluster
        self.resume_cost = resume_cost  # time added to a suspended instance's remaining work when it resumes
        resources = len(cluster.resources)
        self.task_base = 0
        self.job_base = 0
        self.job_ids: list[Hashable] = []  # per job row, its id
        self.task_ids: list[Hashable] = []
        self.instance_durations: list[tuple[float, ...] | None] = []
        self.children: list[list[int]] = []
        self.task_job = np.empty(0, dtype=np.int64)
        self.task_demand = np.empty((0, resources))
        self.task_duration = np.empty(0)
        self.task_estimate = np.empty(0)  # NaN where the workload gives no estimate
        self.task_instances = np.empty(0, dtype=np.int64)
        # Per instance, devices wanted and milli-units on each (0, 0: none); the attribute constraint of each task
        self.task_device_count = np.empty(0, dtype=np.int64)
        self.task_device_milli = np.empty(0, dtype=np.int64)
        self.task_accepts: list[tuple] = []
        self.task_pending_parents = np.empty(0, dtype=np.int64)
        # The longest chain of each task's descendants' durations (`JobSpec.tails`): kept for jobs with a deadline
        # (0 for the others, which need none)
        self.task_tail = np.empty(0)
        self.task_started = np.empty(0, dtype=np.int64)  # running or ended (a re-queued start is undone)
        self.task_reserved = np.empty(0, dtype=np.int64)  # held for a later start: neither waiting nor started
        self.task_finished = np.empty(0, dtype=np.int64)
        self.task_failed = np.empty(0, dtype=np.int64)
        self.task_restarts = np.empty(0, dtype=np.int64)
        self._next_fresh = np.empty(0, dtype=np.int64)  # next never-started instance
        self.task_ready_time = np.empty(0)
        self.task_start_time = np.empty(0)
        self.task_finish_time = np.empty(0)
        # Changes of waiting counts, counted as ClusterState counts machine changes: a broker whose
        # scores read `waiting` asks which tasks changed since it last looked.
        self.task_waiting_change = np.empty(0, dtype=np.int64)
        self.job_first_task = np.zeros(1, dtype=np.int64)  # one more than the jobs: where the next starts
        self.job_arrival = np.empty(0)
        self.job_finish = np.empty(0)
        self.job_unfinished_tasks = np.empty(0, dtype=np.int64)
        self._requeued: dict[int, list[list[int]]] = {}  # task -> [first, count] ranges waiting again
        # task -> {instance: its remaining work when last suspended}; dropped when the task finishes
        self._checkpoint: dict[int, dict[int, float]] = {}
        # Resources held by each job's running instances: kept from the first `usage_by_job` call
        # on (dominant-resource fairness reads them at every decision; other brokers never do).
        self._job_usage: np.ndarray | None = None
        self._job_running: np.ndarray | None = None
        self.unfinished_jobs = 0
        self.running_instances = 0
        self.latest_finish = 0.0  # when the last job to finish so far finished
        self.job_submit = np.empty(0)
        self.job_deadline = np.empty(0)  # each job's deadline (NaN: none)
        self._job_length = np.empty(0)  # each job's critical path (`job_length`)
        self._in_system: np.ndarray | None = None  # `jobs_in_system`, until a job arrives or finishes
        self.waiting_changes = 0
        self.ready_version = -1
        self._set_ready(np.empty(0, dtype=np.int64))
        self.extend(jobs)

    @property
    def task_end(self) -> int:
        """One more than the largest global task index known so far."""
        return int(self.job_first_task[-1])

    @property
    def job_end(self) -> int:
        """One more than the largest job position known so far."""
        return self.job_base + len(self.job_ids)

    def extend(self, jobs: Sequence[JobSpec] | JobBlock) -> None:
        """Add ``jobs`` (`JobSpec` objects, or a `JobBlock`) after those known (they arrive later, with `arrive`)."""
        if not len(jobs):
            return
        if isinstance(jobs, JobBlock):
            self._extend_block(jobs)
            return
        demand_vector = self.cluster.demand_vector
        base = self.task_end
        task_job, demand, duration, estimate, instances, pending, firsts = [], [], [], [], [], [], []
        device_count, device_milli, children, accepts, ids, per_instance, tails = [], [], [], [], [], [], []
        for j, job in enumerate(jobs, self.job_end):
            firsts.append(base)
            position = {task.id: base + t for t, task in enumerate(job.tasks)}
            kids = [[] for _ in job.tasks]
            for t, task in enumerate(job.tasks):
                task_job.append(j)
                demand.append(demand_vector(task, where=f"job {job.id!r}: "))
                duration.append(task.nominal_duration)
                estimate.append(np.nan if task.estimate is None else task.estimate)
                instances.append(task.instances)
                device_count.append(0 if task.devices is None else task.devices.count)
                device_milli.append(0 if task.devices is None else task.devices.milli)
                accepts.append(task.accepts)
                ids.append(task.id)
                per_instance.append(task.duration if isinstance(task.duration, tuple) else None)
                pending.append(len(task.parents))
                for p in task.parents:
                    kids[position[p] - firsts[-1]].append(base + t)
            children += kids
            tails.extend(job.tails() if job.deadline is not None else (0.0,) * len(job.tasks))
            base += len(job.tasks)
        n = base - self.task_end
        resources = self.task_demand.shape[1]
        self.task_accepts.extend(accepts)
        self.task_ids.extend(ids)
        self.instance_durations.extend(per_instance)
        self._append(
            {"task_job": np.array(task_job, dtype=np.int64),
             "task_demand": np.array(demand, dtype=np.float64).reshape(n, resources),
             "task_duration": np.array(duration, dtype=np.float64),
             "task_estimate": np.array(estimate, dtype=np.float64),
             "task_instances": np.array(instances, dtype=np.int64),
             "task_device_count": np.array(device_count, dtype=np.int64),
             "task_device_milli": np.array(device_milli, dtype=np.int64),
             "task_pending_parents": np.array(pending, dtype=np.int64),
             "task_tail": np.array(tails, dtype=np.float64)},
            children, np.array(firsts, dtype=np.int64), [job.id for job in jobs],
            np.array([job.submit_time for job in jobs], dtype=np.float64),
            np.array([job.critical_path() for job in jobs], dtype=np.float64),
            np.array([len(job.tasks) for job in jobs], dtype=np.int64),
            np.array([np.nan if job.deadline is None else job.deadline for job in jobs], dtype=np.float64))

    def _extend_block(self, block: JobBlock) -> None:
        """`extend` with the columns of a `JobBlock` (no object per job or task)."""
        base, rows = self.task_end, len(block.task_ids)
        tasks_of = np.diff(block.task_start)
        parents_of = np.diff(block.parent_start)
        children: list[list[int]] = [[] for _ in range(rows)]
        child = np.repeat(np.arange(base, base + rows), parents_of).tolist()
        for parent, kid in zip(block.parents.tolist(), child):
            children[parent].append(kid)
        self.task_ids.extend(block.task_ids)
        self.instance_durations.extend([None] * rows)
        self.task_accepts.extend([()] * rows)
        zeros = np.zeros(rows, dtype=np.int64)
        self._append(
            {"task_job": np.repeat(np.arange(self.job_end, self.job_end + len(block)), tasks_of),
             "task_demand": self.cluster.demand_matrix(block), "task_duration": block.duration.copy(),
             "task_estimate": np.full(rows, np.nan), "task_instances": block.instances.copy(),
             "task_device_count": zeros, "task_device_milli": zeros, "task_pending_parents": parents_of},
            children, base + block.task_start[:-1], block.ids, block.submit.copy(), block.critical_paths(), tasks_of)

    def _append(self, new: dict[str, np.ndarray], children: list[list[int]], firsts: np.ndarray, ids: Sequence,
                submit: np.ndarray, length: np.ndarray, tasks_of: np.ndarray,
                deadline: np.ndarray | None = None) -> None:
        """New task rows (``new``: the given columns, the others start at 0; ``children``: global task
        indices) and job rows (each job's first task, id, submit time, critical path, tasks and deadline, NaN
        for none)."""
        n, jobs = len(children), len(ids)
        new = {**new, "task_ready_time": np.full(n, np.nan), "task_start_time": np.full(n, np.nan),
               "task_finish_time": np.full(n, np.nan)}
        for name in self._TASK_ARRAYS:
            old = getattr(self, name)
            setattr(self, name, np.concatenate([old, new.get(name, np.zeros(n, dtype=old.dtype))]))
        self.children.extend(children)
        self.job_first_task = np.concatenate([self.job_first_task[:-1], firsts, [self.task_end + n]]).astype(np.int64)
        self.job_ids.extend(ids)
        self.job_submit = np.concatenate([self.job_submit, submit])
        deadline = np.full(jobs, np.nan) if deadline is None else deadline
        self.job_deadline = np.concatenate([self.job_deadline, deadline])
        self._job_length = np.concatenate([self._job_length, length])
        self.job_arrival = np.concatenate([self.job_arrival, np.full(jobs, np.nan)])
        self.job_finish = np.concatenate([self.job_finish, np.full(jobs, np.nan)])
        self.job_unfinished_tasks = np.concatenate([self.job_unfinished_tasks, tasks_of])
        self.unfinished_jobs += jobs
        if self._job_usage is not None:
            self._job_running = np.concatenate([self._job_running, np.zeros(jobs, dtype=np.int64)])
            self._job_usage = np.concatenate([self._job_usage, np.zeros((jobs, self.task_demand.shape[1]))])
        self._in_system = None
        self._ready_demand = self._ready_demand_by_resource = self._ready_devices = None

    def retire(self, jobs: int) -> None:
        """Drop the first ``jobs`` job rows and their task rows: finished jobs whose results
        have been written out. Their global numbers are not reused."""
        if jobs <= 0:
            return
        if not np.all(np.isfinite(self.job_finish[:jobs])):
            raise ValueError("only finished jobs can be retired")
        tasks = int(self.job_first_task[jobs]) - self.task_base
        for name in self._TASK_ARRAYS:
            setattr(self, name, getattr(self, name)[tasks:].copy())
        for name in self._TASK_LISTS:
            del getattr(self, name)[:tasks]
        for name in self._JOB_ARRAYS:
            setattr(self, name, getattr(self, name)[jobs:].copy())
        self.job_first_task = self.job_first_task[jobs:].copy()
        del self.job_ids[:jobs]
        if self._job_usage is not None:
            self._job_running = self._job_running[jobs:].copy()
            self._job_usage = self._job_usage[jobs:].copy()
        self.task_base += tasks
        self.job_base += jobs
        self._in_system = None
        self._ready_demand = self._ready_demand_by_resource = self._ready_devices = None

    def finished_jobs(self) -> int:
        """How many job rows, from the first, are finished: the rows `retire` may drop."""
        unfinished = np.flatnonzero(np.isnan(self.job_finish))
        return int(unfinished[0]) if len(unfinished) else len(self.job_finish)

    def rows(self, g):
        """The row of global task index ``g`` in the ``task_*`` arrays (the rows of an array of them)."""
        return g - self.task_base

    def demand(self, g: int) -> np.ndarray:
        """The per-instance demand of global task ``g`` (a row of ``task_demand``)."""
        return self.task_demand[g - self.task_base]

    # ------------------------------------------------------------ lookups
    def task_key(self, g: int) -> tuple[Hashable, Hashable]:
        """(job id, task id) of the global task index ``g``."""
        r = g - self.task_base
        return self.job_ids[self.task_job[r] - self.job_base], self.task_ids[r]

    def job_length(self) -> np.ndarray:
        """Critical-path duration of each job row (`JobSpec.critical_path`), read-only."""
        return frozen(self._job_length)

    def jobs_in_system(self) -> np.ndarray:
        """Rows of the jobs that have arrived and not finished, read-only; kept until one arrives or finishes."""
        if self._in_system is None:
            self._in_system = frozen(np.flatnonzero(~np.isnan(self.job_arrival) & np.isnan(self.job_finish)))
        return self._in_system

    def waiting_instances(self, g: int) -> int:
        """Instances of task ``g`` neither started nor reserved (fresh or re-queued)."""
        r = g - self.task_base
        return int(self.task_instances[r] - self.task_started[r] - self.task_reserved[r])

    def waiting_counts(self, g: np.ndarray) -> np.ndarray:
        """`waiting_instances` of every global task index in ``g``."""
        r = g - self.task_base
        return self.task_instances[r] - self.task_started[r] - self.task_reserved[r]

    def next_durations(self, g: int, count: int) -> list[float]:
        """The durations of the ``count`` instances of task ``g`` that start next (re-queued and suspended ones
        first; a suspended one runs for its remaining work plus ``resume_cost``)."""
        r = g - self.task_base
        if self.instance_durations[r] is None and g not in self._checkpoint:
            return [float(self.task_duration[r])] * count
        numbers = []
        for first, n in self._requeued.get(g, []):
            numbers.extend(range(first, first + n))
        fresh = int(self._next_fresh[r])
        numbers.extend(range(fresh, fresh + max(count - len(numbers), 0)))
        return [self._duration_of(g, i) for i in numbers[:count]]

    def _duration_of(self, g: int, instance: int) -> float:
        """How long instance ``instance`` of task ``g`` runs when it starts next."""
        r = g - self.task_base
        remaining = self._checkpoint.get(g, {}).get(instance)
        if remaining is not None:
            return remaining + self.resume_cost
        per_instance = self.instance_durations[r]
        return float(self.task_duration[r] if per_instance is None else per_instance[instance])

    @property
    def has_suspended(self) -> bool:
        """Whether some unfinished task has instances that were suspended."""
        return bool(self._checkpoint)

    def suspended_waiting(self, g: int) -> int:
        """Instances of task ``g`` waiting to resume (suspended, and not started since)."""
        checkpoints = self._checkpoint.get(g)
        if not checkpoints:
            return 0
        return sum(1 for first, n in self._requeued.get(g, ()) for i in range(first, first + n) if i in checkpoints)

    # ------------------------------------------------------ the waiting set
    def _set_ready(self, ready: np.ndarray) -> None:
        self.ready = ready
        self.ready_view = frozen(ready)
        self.ready_version += 1
        self._ready_demand: np.ndarray | None = None
        self._ready_demand_by_resource: np.ndarray | None = None
        self._ready_devices: np.ndarray | None = None

    def ready_demand(self) -> np.ndarray:
        """Demand rows of the waiting tasks, shape (tasks, resources), read-only; cached per waiting set."""
        if self._ready_demand is None:
            self._ready_demand = frozen(self.task_demand[self.ready - self.task_base])
        return self._ready_demand

    def ready_device_request(self) -> np.ndarray:
        """Per waiting task, its instances' device request (count, milli) (0 0: none), shape (tasks, 2),
        read-only; cached per waiting set."""
        if self._ready_devices is None:
            rows = self.ready - self.task_base
            request = np.empty((len(rows), 2), dtype=np.int64)  # (np.stack costs more than the copies)
            request[:, 0] = self.task_device_count[rows]
            request[:, 1] = self.task_device_milli[rows]
            self._ready_devices = frozen(request)
        return self._ready_devices

    def ready_demand_by_resource(self) -> np.ndarray:
        """`ready_demand` transposed, shape (resources, tasks), C-contiguous and read-only; cached per
        waiting set. A fit test over many tasks runs one resource at a time along a contiguous row,
        several times faster than over the rows of ``ready_demand``."""
        if self._ready_demand_by_resource is None:
            self._ready_demand_by_resource = frozen(np.ascontiguousarray(self.ready_demand().T))
        return self._ready_demand_by_resource

    def _make_ready(self, g: int, now: float) -> None:
        self.task_ready_time[g - self.task_base] = now
        self._set_ready(np.insert(self.ready, np.searchsorted(self.ready, g), g))

    # ------------------------------------------------------------ changes
    def arrive(self, j: int, now: float) -> None:
        """Job ``j`` arrives: its tasks without parents become ready."""
        jr = j - self.job_base
        self.job_arrival[jr] = now
        self._in_system = None
        first, end = self.job_first_task[jr] - self.task_base, self.job_first_task[jr + 1] - self.task_base
        roots = first + np.flatnonzero(self.task_pending_parents[first:end] == 0)
        self.task_ready_time[roots] = now
        # Later jobs have larger task indices: appending keeps `ready` sorted.
        self._set_ready(np.concatenate([self.ready, roots + self.task_base]))

    def start(self, g: int, count: int, now: float, reserved: bool = False,
              settle: bool = True) -> list[tuple[int, int, float]]:
        """Start ``count`` waiting instances of task ``g`` (``reserved``: instances it reserved);
        return their (first, n, duration) runs.

        Re-queued instances start before fresh ones; instances with durations
        of their own each make a run of one. With ``settle=False`` a task left with
        no waiting instances stays in ``ready`` until `settle` is called: a plan's
        starts then change the waiting set once, not once per task.
        """
        r = g - self.task_base
        if self.task_started[r] == 0 and math.isnan(self.task_start_time[r]):
            self.task_start_time[r] = now
        self.task_started[r] += count
        self.running_instances += count
        self._waiting_changed(r)
        self._change_job_usage(r, count)
        if reserved:  # they had left the waiting set when reserved
            self.task_reserved[r] -= count
        elif settle:
            self.settle((g,))
        per_instance = self.instance_durations[r]
        checkpoints = self._checkpoint.get(g)
        runs = []
        for first, n in self._take_instances(g, count):
            if checkpoints is not None:  # resumed instances run their remaining work: runs of equal durations
                for i in range(first, first + n):
                    duration = self._duration_of(g, i)
                    last = runs[-1] if runs else None
                    if last is not None and last[0] + last[1] == i and last[2] == duration:
                        runs[-1] = (last[0], last[1] + 1, duration)
                    else:
                        runs.append((i, 1, duration))
            elif per_instance is None:
                runs.append((first, n, float(self.task_duration[r])))
            else:
                runs.extend((i, 1, per_instance[i]) for i in range(first, first + n))
        return runs

    def start_many(self, g: np.ndarray, count: np.ndarray, now: float) -> np.ndarray | None:
        """`start` (with ``settle=False``) of ``count[k]`` instances of task ``g[k]``, for every k in order,
        as array operations; returns the first instance number of each start, every start being one run
        with its task's duration.

        Only for starts that are one run each: no task with durations of its own or with re-queued
        instances, and no job usage kept (`usage_by_job`). Otherwise nothing changes and None is
        returned: start them one by one.
        """
        if self._job_usage is not None:
            return None
        r = g - self.task_base
        per_instance, requeued = self.instance_durations, self._requeued
        if any(per_instance[row] is not None for row in r.tolist()) or \
                (requeued and any(task in requeued for task in g.tolist())):
            return None
        # A start's first instance follows those the plan's earlier starts of its task took.
        order = np.argsort(r, kind="stable")
        by_task, counts = r[order], count[order]
        taken_before = np.cumsum(counts) - counts
        begins = np.ones(len(r), dtype=bool)
        begins[1:] = by_task[1:] != by_task[:-1]
        task_begins = np.flatnonzero(begins)
        lengths = np.empty(len(task_begins), dtype=np.int64)
        lengths[:-1] = task_begins[1:] - task_begins[:-1]
        lengths[-1] = len(r) - task_begins[-1]
        within = taken_before - np.repeat(taken_before[task_begins], lengths)
        first = np.empty(len(r), dtype=np.int64)
        first[order] = self._next_fresh[by_task] + within
        first_start = (self.task_started[r] == 0) & np.isnan(self.task_start_time[r])
        self.task_start_time[r[first_start]] = now
        np.add.at(self.task_started, r, count)
        np.add.at(self._next_fresh, r, count)
        self.running_instances += int(count.sum())
        # Each start changes its task's waiting count: the task keeps the number of its last change
        # (the largest: the numbers only grow; np.unique would cost more than this on a short plan).
        change = np.arange(self.waiting_changes + 1, self.waiting_changes + len(r) + 1)
        np.maximum.at(self.task_waiting_change, r, change)
        self.waiting_changes += len(r)
        return first

    def reserve(self, g: int, count: int) -> None:
        """Hold ``count`` waiting instances of task ``g`` for a later start (`start` with ``reserved``)."""
        self.task_reserved[g - self.task_base] += count
        self._waiting_changed(g - self.task_base)
        self.settle((g,))

    def cancel_reservation(self, g: int, count: int) -> None:
        """``count`` reserved instances of task ``g`` wait again."""
        self.task_reserved[g - self.task_base] -= count
        self._waiting_changed(g - self.task_base)
        if self.waiting_instances(g) == count:  # it had left the waiting set
            self._set_ready(np.insert(self.ready, np.searchsorted(self.ready, g), g))

    def reject(self, g: int, now: float) -> bool:
        """Every waiting instance of task ``g`` fails now without running (counted as started and failed);
        returns whether this finished the task's job."""
        r = g - self.task_base
        count = self.waiting_instances(g)
        self._take_instances(g, count)
        self.task_started[r] += count
        self.task_failed[r] += count
        self._waiting_changed(r)
        self.settle((g,))
        return self._count_ended(r, now)

    def _waiting_changed(self, r: int) -> None:
        self.waiting_changes += 1
        self.task_waiting_change[r] = self.waiting_changes

    def settle(self, tasks: Iterable[int]) -> None:
        """Those of ``tasks`` left with no waiting instances leave the waiting set, at once (after
        `start` with ``settle=False``; `start` and `reserve` settle their own task)."""
        gone = sorted(g for g in set(tasks) if self.waiting_instances(g) == 0)
        if len(gone) == 1:  # most rounds: one task leaves (np.delete costs more than two slices)
            at = int(np.searchsorted(self.ready, gone[0]))
            if at < len(self.ready) and self.ready[at] == gone[0]:
                self._set_ready(np.concatenate((self.ready[:at], self.ready[at + 1:])))
        elif gone:
            at = np.searchsorted(self.ready, gone)
            present = at < len(self.ready)
            present[present] = self.ready[at[present]] == np.array(gone)[present]
            if present.any():  # (a reservation of the same plan may have taken it out already)
                self._set_ready(np.delete(self.ready, at[present]))

    def _take_instances(self, g: int, count: int) -> list[tuple[int, int]]:
        """(first, n) ranges of instance numbers to start: re-queued ones first, then fresh ones."""
        ranges = []
        queue = self._requeued.get(g)
        while queue and count:
            first, n = queue[0]
            take = min(n, count)
            ranges.append((first, take))
            count -= take
            if take == n:
                queue.pop(0)
            else:
                queue[0] = [first + take, n - take]
        if not queue:
            self._requeued.pop(g, None)  # a finished task leaves nothing behind
        if count:
            r = g - self.task_base
            ranges.append((int(self._next_fresh[r]), count))
            self._next_fresh[r] += count
        return ranges

    def end(self, g: int, first: int, count: int, outcome: str, now: float) -> bool:
        """Instances ``first..first+count-1`` of task ``g`` end now: "finished", "failed" or "requeued".

        Returns whether this finished the task's job.
        """
        r = g - self.task_base
        self.running_instances -= count
        self._change_job_usage(r, -count)
        if outcome == "requeued":
            self.task_restarts[r] += count
            self._wait_again(g, first, count)
            return False
        (self.task_finished if outcome == "finished" else self.task_failed)[r] += count
        return self._count_ended(r, now)

    def suspend(self, g: int, first: int, count: int, remaining: float) -> None:
        """Instances ``first..first+count-1`` of task ``g`` stop now with ``remaining`` of their work left: they
        wait again, before fresh ones, and resume with that work plus ``resume_cost``."""
        r = g - self.task_base
        self.running_instances -= count
        self._change_job_usage(r, -count)
        self._checkpoint.setdefault(g, {}).update(dict.fromkeys(range(first, first + count), remaining))
        self._wait_again(g, first, count)

    def _wait_again(self, g: int, first: int, count: int) -> None:
        """Started instances ``first..first+count-1`` of task ``g`` wait again (re-queued or suspended)."""
        r = g - self.task_base
        self.task_started[r] -= count
        self._waiting_changed(r)
        self._requeued.setdefault(g, []).append([first, count])
        if self.waiting_instances(g) == count:  # it had left the waiting set
            self._set_ready(np.insert(self.ready, np.searchsorted(self.ready, g), g))

    def _count_ended(self, r: int, now: float) -> bool:
        """After instances of the task of row ``r`` ended: when none is left to run, the task is finished
        (`_task_finished`); returns whether its job finished."""
        if self.task_finished[r] + self.task_failed[r] < self.task_instances[r]:
            return False
        return self._task_finished(r, now)

    def _task_finished(self, r: int, now: float) -> bool:
        """The task of row ``r`` has no instance left to run: its children may become ready, its job
        may finish (returns whether it did)."""
        self.task_finish_time[r] = now
        self._checkpoint.pop(r + self.task_base, None)
        for child in self.children[r]:
            c = child - self.task_base
            self.task_pending_parents[c] -= 1
            if self.task_pending_parents[c] == 0:
                self._make_ready(child, now)
        jr = self.task_job[r] - self.job_base
        self.job_unfinished_tasks[jr] -= 1
        if self.job_unfinished_tasks[jr]:
            return False
        self.job_finish[jr] = now
        self._in_system = None
        self.latest_finish = max(self.latest_finish, now)
        self.unfinished_jobs -= 1
        return True

    def finish_many(self, g: np.ndarray, count: np.ndarray, now: float) -> int | None:
        """`end` of ``count[k]`` instances of task ``g[k]``, all "finished", for every k, as array
        operations; returns how many jobs this finished. None, with nothing changed, when job usage
        is kept (`usage_by_job`): end them one by one."""
        if self._job_usage is not None:
            return None
        r = g - self.task_base
        self.running_instances -= int(count.sum())
        np.add.at(self.task_finished, r, count)
        done = r[self.task_finished[r] + self.task_failed[r] >= self.task_instances[r]]
        jobs = 0
        for task in sorted(set(done.tolist())):  # tasks whose last instances ended now (they ran until now)
            jobs += self._task_finished(task, now)
        return jobs

    def set_progress(self, *, started: np.ndarray, finished: np.ndarray, pending_parents: np.ndarray,
                     ready_time: np.ndarray, start_time: np.ndarray, finish_time: np.ndarray, job_arrival: np.ndarray,
                     job_finish: np.ndarray, job_unfinished_tasks: np.ndarray, unfinished_jobs: int,
                     running_instances: int, latest_finish: float) -> None:
        """Take the progress of an episode run on the engine's compiled path (`cloudsim.engine.compiled`), one value
        per task or job row: instances started (fresh ones: nothing was re-queued) and finished, parents
        pending, times, and the counters. The waiting set becomes the ready tasks with waiting instances."""
        for name, values in (("task_started", started), ("_next_fresh", started), ("task_finished", finished),
                             ("task_pending_parents", pending_parents), ("task_ready_time", ready_time),
                             ("task_start_time", start_time), ("task_finish_time", finish_time),
                             ("job_arrival", job_arrival), ("job_finish", job_finish),
                             ("job_unfinished_tasks", job_unfinished_tasks)):
            column = getattr(self, name)
            if np.shape(values) != column.shape:
                raise ValueError(f"set_progress: {name} has shape {np.shape(values)}, the table {column.shape}")
            column[:] = values
        self.unfinished_jobs = unfinished_jobs
        self.running_instances = running_instances
        self.latest_finish = latest_finish
        self._in_system = None
        waits = ~np.isnan(self.task_ready_time) & (self.task_instances > self.task_started + self.task_reserved)
        self._set_ready(np.flatnonzero(waits) + self.task_base)

    def usage_by_job(self) -> np.ndarray:
        """Resources held by each job's running instances, shape (job rows, resources); read-only.
        Kept up to date from the first call on."""
        if self._job_usage is None:
            running = self.task_started - self.task_finished - self.task_failed
            job_rows = self.task_job - self.job_base
            self._job_running = np.bincount(job_rows, running, minlength=len(self.job_ids)).astype(np.int64)
            self._job_usage = np.zeros((len(self.job_ids), self.task_demand.shape[1]))
            np.add.at(self._job_usage, job_rows, running[:, None] * self.task_demand)
            self._job_usage[self._job_running == 0] = 0.0
        return frozen(self._job_usage)

    def _change_job_usage(self, r: int, count: int) -> None:
        """``count`` more (or, negative, fewer) instances of the task of row ``r`` run: update its job's usage."""
        if self._job_usage is None:
            return
        j = self.task_job[r] - self.job_base
        self._job_running[j] += count
        if self._job_running[j] == 0:
            self._job_usage[j] = 0.0  # exactly: no float residue once nothing of the job runs
        else:
            self._job_usage[j] += count * self.task_demand[r]
