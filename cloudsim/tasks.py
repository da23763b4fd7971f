"""The work of an episode as arrays: every task's progress, DAG release, re-queues and the waiting set.

Jobs -> tasks are flattened into a global task index in arrival order (job
submit order, then the task's order in its job). `TaskTable` keeps, per task,
how many instances started, finished and failed, and per job whether it
arrived and finished. The waiting set ``ready`` is a sorted array of the global
indices of ready tasks with waiting instances, which is arrival order, so a
broker sees waiting tasks in arrival order without any scan. A task becomes
ready when its job arrives (tasks without parents) or when its last parent
finishes; instances ended by a machine failure wait again, before fresh ones.
"""

from __future__ import annotations

import math
from typing import Hashable, Sequence

import numpy as np

from cloudsim.cluster import frozen
from cloudsim.specs import ClusterSpec, JobSpec

__all__ = ["TaskTable"]


class TaskTable:
    """Progress of every task and job of one episode.

    Array attributes are indexed by global task index (``task_*``) or by the
    job's position in arrival order (``job_*``); all are public and read by the
    view and the results, and written only by this class's methods.
    """

    def __init__(self, cluster: ClusterSpec, jobs: Sequence[JobSpec]) -> None:
        self.jobs = jobs
        tasks = [(j, job, task) for j, job in enumerate(jobs) for task in job.tasks]
        n = len(tasks)
        self.task_job = np.array([j for j, *_ in tasks], dtype=np.int64)
        self.task_ids = [task.id for *_, task in tasks]
        self.task_demand = np.empty((n, len(cluster.resources)))
        self.task_duration = np.empty(n)
        self.task_instances = np.empty(n, dtype=np.int64)
        self.instance_durations: list[tuple[float, ...] | None] = [None] * n
        self.children: list[list[int]] = [[] for _ in range(n)]
        self.task_pending_parents = np.zeros(n, dtype=np.int64)
        self.job_first_task = np.zeros(len(jobs) + 1, dtype=np.int64)
        base = 0
        for j, job in enumerate(jobs):
            self.job_first_task[j] = base
            position = {task.id: base + t for t, task in enumerate(job.tasks)}
            for t, task in enumerate(job.tasks):
                g = base + t
                self.task_demand[g] = cluster.demand_vector(task, where=f"job {job.id!r}: ")
                self.task_duration[g] = task.nominal_duration
                self.task_instances[g] = task.instances
                if isinstance(task.duration, tuple):
                    self.instance_durations[g] = task.duration
                self.task_pending_parents[g] = len(task.parents)
                for p in task.parents:
                    self.children[position[p]].append(g)
            base += len(job.tasks)
        self.job_first_task[len(jobs)] = base
        self.task_started = np.zeros(n, dtype=np.int64)  # running or ended (a re-queued start is undone)
        self.task_reserved = np.zeros(n, dtype=np.int64)  # held for a later start: neither waiting nor started
        self.task_finished = np.zeros(n, dtype=np.int64)
        self.task_failed = np.zeros(n, dtype=np.int64)
        self.task_restarts = np.zeros(n, dtype=np.int64)
        self._next_fresh = np.zeros(n, dtype=np.int64)  # next never-started instance
        self._requeued: dict[int, list[list[int]]] = {}  # task -> [first, count] ranges waiting again
        self.task_ready_time = np.full(n, np.nan)
        self.task_start_time = np.full(n, np.nan)
        self.task_finish_time = np.full(n, np.nan)
        self.job_arrival = np.full(len(jobs), np.nan)
        self.job_finish = np.full(len(jobs), np.nan)
        self.job_unfinished_tasks = np.array([len(job.tasks) for job in jobs], dtype=np.int64)
        # Resources held by each job's running instances: kept from the first `usage_by_job` call
        # on (dominant-resource fairness reads them at every decision; other brokers never do).
        self._job_usage: np.ndarray | None = None
        self._job_running: np.ndarray | None = None
        self.unfinished_jobs = len(jobs)
        self.running_instances = 0
        self._job_length: np.ndarray | None = None
        # Changes of waiting counts, counted as ClusterState counts machine changes: a broker whose
        # scores read `waiting` asks which tasks changed since it last looked.
        self.waiting_changes = 0
        self.task_waiting_change = np.zeros(n, dtype=np.int64)
        self.ready_version = -1
        self._set_ready(np.empty(0, dtype=np.int64))

    # ------------------------------------------------------------ lookups
    def task_key(self, g: int) -> tuple[Hashable, Hashable]:
        """(job id, task id) of the global task index ``g``."""
        return self.jobs[self.task_job[g]].id, self.task_ids[g]

    def job_length(self) -> np.ndarray:
        """Critical-path duration of each job (arrival order), read-only; computed on first use."""
        if self._job_length is None:
            self._job_length = frozen(np.array([job.critical_path() for job in self.jobs], dtype=float))
        return self._job_length

    def waiting_instances(self, g: int) -> int:
        """Instances of task ``g`` neither started nor reserved (fresh or re-queued)."""
        return int(self.task_instances[g] - self.task_started[g] - self.task_reserved[g])

    def waiting_counts(self, g: np.ndarray) -> np.ndarray:
        """`waiting_instances` of every global task index in ``g``."""
        return self.task_instances[g] - self.task_started[g] - self.task_reserved[g]

    def next_durations(self, g: int, count: int) -> list[float]:
        """The durations of the ``count`` instances of task ``g`` that start next (re-queued ones first)."""
        per_instance = self.instance_durations[g]
        if per_instance is None:
            return [float(self.task_duration[g])] * count
        numbers = []
        for first, n in self._requeued.get(g, []):
            numbers.extend(range(first, first + n))
        fresh = int(self._next_fresh[g])
        numbers.extend(range(fresh, fresh + max(count - len(numbers), 0)))
        return [float(per_instance[i]) for i in numbers[:count]]

    # ------------------------------------------------------ the waiting set
    def _set_ready(self, ready: np.ndarray) -> None:
        self.ready = ready
        self.ready_view = frozen(ready)
        self.ready_version += 1
        self._ready_demand: np.ndarray | None = None

    def ready_demand(self) -> np.ndarray:
        """Demand rows of the waiting tasks, shape (tasks, resources), read-only; cached per waiting set."""
        if self._ready_demand is None:
            self._ready_demand = frozen(self.task_demand[self.ready])
        return self._ready_demand

    def _make_ready(self, g: int, now: float) -> None:
        self.task_ready_time[g] = now
        self._set_ready(np.insert(self.ready, np.searchsorted(self.ready, g), g))

    # ------------------------------------------------------------ changes
    def arrive(self, j: int, now: float) -> None:
        """Job ``j`` arrives: its tasks without parents become ready."""
        self.job_arrival[j] = now
        first, end = self.job_first_task[j], self.job_first_task[j + 1]
        roots = first + np.flatnonzero(self.task_pending_parents[first:end] == 0)
        self.task_ready_time[roots] = now
        # Later jobs have larger task indices: appending keeps `ready` sorted.
        self._set_ready(np.concatenate([self.ready, roots]))

    def start(self, g: int, count: int, now: float, reserved: bool = False) -> list[tuple[int, int, float]]:
        """Start ``count`` waiting instances of task ``g`` (``reserved``: instances it reserved);
        return their (first, n, duration) runs.

        Re-queued instances start before fresh ones; instances with durations
        of their own each make a run of one.
        """
        if self.task_started[g] == 0 and math.isnan(self.task_start_time[g]):
            self.task_start_time[g] = now
        self.task_started[g] += count
        self.running_instances += count
        self._waiting_changed(g)
        self._change_job_usage(g, count)
        if reserved:  # they had left the waiting set when reserved
            self.task_reserved[g] -= count
        else:
            self._leave_if_none_waiting(g)
        per_instance = self.instance_durations[g]
        runs = []
        for first, n in self._take_instances(g, count):
            if per_instance is None:
                runs.append((first, n, float(self.task_duration[g])))
            else:
                runs.extend((i, 1, per_instance[i]) for i in range(first, first + n))
        return runs

    def reserve(self, g: int, count: int) -> None:
        """Hold ``count`` waiting instances of task ``g`` for a later start (`start` with ``reserved``)."""
        self.task_reserved[g] += count
        self._waiting_changed(g)
        self._leave_if_none_waiting(g)

    def cancel_reservation(self, g: int, count: int) -> None:
        """``count`` reserved instances of task ``g`` wait again."""
        self.task_reserved[g] -= count
        self._waiting_changed(g)
        if self.waiting_instances(g) == count:  # it had left the waiting set
            self._set_ready(np.insert(self.ready, np.searchsorted(self.ready, g), g))

    def _waiting_changed(self, g: int) -> None:
        self.waiting_changes += 1
        self.task_waiting_change[g] = self.waiting_changes

    def _leave_if_none_waiting(self, g: int) -> None:
        if self.waiting_instances(g) == 0:
            self._set_ready(np.delete(self.ready, np.searchsorted(self.ready, g)))

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
        if count:
            ranges.append((int(self._next_fresh[g]), count))
            self._next_fresh[g] += count
        return ranges

    def end(self, g: int, first: int, count: int, outcome: str, now: float) -> bool:
        """Instances ``first..first+count-1`` of task ``g`` end now: "finished", "failed" or "requeued".

        Returns whether this finished the task's job.
        """
        self.running_instances -= count
        self._change_job_usage(g, -count)
        if outcome == "requeued":
            self.task_started[g] -= count
            self.task_restarts[g] += count
            self._waiting_changed(g)
            self._requeued.setdefault(g, []).append([first, count])
            if self.waiting_instances(g) == count:  # it had left the waiting set
                self._set_ready(np.insert(self.ready, np.searchsorted(self.ready, g), g))
            return False
        (self.task_finished if outcome == "finished" else self.task_failed)[g] += count
        if self.task_finished[g] + self.task_failed[g] < self.task_instances[g]:
            return False
        self.task_finish_time[g] = now
        for child in self.children[g]:
            self.task_pending_parents[child] -= 1
            if self.task_pending_parents[child] == 0:
                self._make_ready(child, now)
        j = self.task_job[g]
        self.job_unfinished_tasks[j] -= 1
        if self.job_unfinished_tasks[j]:
            return False
        self.job_finish[j] = now
        self.unfinished_jobs -= 1
        return True

    def usage_by_job(self) -> np.ndarray:
        """Resources held by each job's running instances, shape (jobs, resources), by arrival
        position; read-only. Kept up to date from the first call on."""
        if self._job_usage is None:
            running = self.task_started - self.task_finished - self.task_failed
            self._job_running = np.bincount(self.task_job, running, minlength=len(self.jobs)).astype(np.int64)
            self._job_usage = np.zeros((len(self.jobs), self.task_demand.shape[1]))
            np.add.at(self._job_usage, self.task_job, running[:, None] * self.task_demand)
            self._job_usage[self._job_running == 0] = 0.0
        return frozen(self._job_usage)

    def _change_job_usage(self, g: int, count: int) -> None:
        """``count`` more (or, negative, fewer) instances of task ``g`` run: update its job's usage."""
        if self._job_usage is None:
            return
        j = self.task_job[g]
        self._job_running[j] += count
        if self._job_running[j] == 0:
            self._job_usage[j] = 0.0  # exactly: no float residue once nothing of the job runs
        else:
            self._job_usage[j] += count * self.task_demand[g]
