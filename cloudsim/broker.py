"""The plug-in point: what a broker sees, what it may answer, and how answers are checked.

A broker is any object with a ``decide(view)`` method. The simulation calls it
repeatedly at a decision instant; each call returns one `Decision` (start
``count`` instances of ``view`` task ``task`` on machine ``machine``) or ``None``
to end the instant. The view is a read-only picture of the cluster and the ready
tasks, indexed so that vectorised brokers can work on whole arrays::

    class SmallestFirst:
        def decide(self, view):
            machines, tasks = view.fit_pairs
            if len(tasks) == 0:
                return None
            best = np.argmin(view.demand[tasks, 0])      # smallest cpu demand
            return Decision(machines[best], tasks[best])
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Hashable, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from cloudsim.simulation import Simulation

__all__ = ["Broker", "ClusterView", "Decision", "InvalidDecisionError", "broker_name", "sequential_fit_count"]


@dataclass(frozen=True)
class Decision:
    """Start ``count`` waiting instances of the view's task ``task`` on machine ``machine``.

    ``machine`` indexes the cluster's machines; ``task`` indexes the view's ready
    tasks (the rows of `ClusterView.demand`). A plain tuple ``(machine, task)`` or
    ``(machine, task, count)`` is accepted too.
    """

    machine: int
    task: int
    count: int = 1


@runtime_checkable
class Broker(Protocol):
    """A scheduling policy. Return one `Decision` per call, or ``None`` to wait."""

    def decide(self, view: "ClusterView") -> Decision | tuple | None: ...


class InvalidDecisionError(ValueError):
    """A broker asked for something the cluster cannot do; the state is left untouched."""


def broker_name(broker: object) -> str:
    """The broker's ``name`` attribute, else its class name."""
    return str(getattr(broker, "name", type(broker).__name__))


def sequential_fit_count(free: np.ndarray, demand: np.ndarray, limit: int) -> int:
    """How many instances of ``demand`` fit into ``free`` one after another (at most ``limit``).

    The k-th start is allowed when the free vector left by the previous starts is
    ``>= demand`` in every dimension. Free resources are running float64 totals,
    so the check repeats the exact sequence of subtractions the simulation makes
    rather than dividing: ``1.0 - 0.05 - 0.05 ...`` fits 19 instances, not 20.
    """
    # The first few starts step by step on Python floats (the same IEEE doubles):
    # most decisions start only a handful of instances.
    left = free.tolist()
    need = demand.tolist()
    count = 0
    while count < limit and count < _STEPWISE:
        if not all(f >= d for f, d in zip(left, need)):
            return count
        left = [f - d for f, d in zip(left, need)]
        count += 1
    if count == limit:
        return count
    # Many more may fit: the same subtractions, vectorised with an upper bound.
    positive = demand > 0
    rest = limit - count
    if positive.any():
        rest = min(rest, int((np.asarray(left)[positive] / demand[positive]).min()) + 2)  # +2: rounding slack
    steps = np.empty((max(rest, 1), free.shape[0]))
    steps[0] = left
    steps[1:] = demand
    remaining = np.subtract.accumulate(steps, axis=0)  # remaining[k]: free after k more starts
    allowed = (remaining >= demand).all(axis=1)
    return count + (len(allowed) if allowed.all() else int(np.argmin(allowed)))


_STEPWISE = 8


class ClusterView:
    """A read-only picture of one decision instant, built fresh for every decision.

    Machine arrays are indexed by machine (0..M-1). Task arrays are indexed by the
    position of a ready task with waiting instances, in arrival order: job
    arrival order, then the task's order in its job. Heavier attributes
    (``fits``, ``fit_pairs``) are computed on first use. A view is valid during
    the ``decide`` call it was given to: copy what you want to keep.
    """

    def __init__(self, sim: "Simulation") -> None:
        self._sim = sim
        self._fit_counts: dict[tuple[int, int], int] = {}
        self.time: float = sim.env.now
        self.resources: tuple[str, ...] = sim.cluster.resources
        self.capacity: np.ndarray = sim._frozen_capacity
        """Capacity of each machine, shape (machines, resources)."""
        self.free: np.ndarray = sim._frozen_free
        """Free resources of each machine now, shape (machines, resources)."""
        self.up: np.ndarray = sim._frozen_up
        """Whether each machine is up (takes work)."""
        self.task_index: np.ndarray = sim._frozen_ready
        """Global index of each ready task (stable over the episode)."""
        self.demand: np.ndarray = sim.ready_demand()
        """Per-instance demand of each ready task, shape (tasks, resources)."""

    @property
    def num_machines(self) -> int:
        return self.capacity.shape[0]

    @property
    def num_tasks(self) -> int:
        return self.task_index.shape[0]

    @cached_property
    def duration(self) -> np.ndarray:
        """Nominal duration of each ready task (mean over instances when they differ)."""
        return frozen(self._sim.task_duration[self.task_index])

    @cached_property
    def waiting(self) -> np.ndarray:
        """Instances of each ready task not yet started."""
        s = self._sim
        return frozen(s.task_instances[self.task_index] - s.task_started[self.task_index])

    @cached_property
    def running(self) -> np.ndarray:
        """Instances of each ready task running now."""
        s = self._sim
        g = self.task_index
        return frozen(s.task_started[g] - s.task_finished[g] - s.task_failed[g])

    @cached_property
    def arrival_time(self) -> np.ndarray:
        """Arrival time of each ready task's job."""
        s = self._sim
        return frozen(s.job_arrival[s.task_job[self.task_index]])

    @cached_property
    def ready_time(self) -> np.ndarray:
        """When each ready task became ready (its job arrived, or its last parent finished)."""
        return frozen(self._sim.task_ready_time[self.task_index])

    @cached_property
    def job_index(self) -> np.ndarray:
        """Position of each ready task's job in the episode's arrival order."""
        return frozen(self._sim.task_job[self.task_index])

    @cached_property
    def jobs_in_system(self) -> np.ndarray:
        """Positions (in arrival order) of the jobs that have arrived and not finished."""
        s = self._sim
        return frozen(np.flatnonzero(~np.isnan(s.job_arrival) & np.isnan(s.job_finish)))

    @property
    def job_usage(self) -> np.ndarray:
        """Resources held by each job's running instances, shape (jobs, resources), by arrival position."""
        return frozen(self._sim.job_usage)

    @property
    def job_length(self) -> np.ndarray:
        """Each job's critical-path duration (its time on an empty, unbounded cluster), by arrival position."""
        return self._sim.job_length()

    def task_key(self, task: int) -> tuple[Hashable, Hashable]:
        """(job id, task id) of the view's task ``task``, for messages and logs."""
        return self._sim.task_key(int(self.task_index[task]))

    @property
    def fits(self) -> np.ndarray:
        """Boolean (machines, tasks): machine m is up and ``free[m] >= demand[t]`` in every dimension."""
        return self._sim.fit_matrix()[0]

    @property
    def machine_fits_some(self) -> np.ndarray:
        """Boolean (machines,): the machine fits at least one ready task (``fits.any(axis=1)``, kept incrementally)."""
        return self._sim.fit_matrix()[1]

    @cached_property
    def fit_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(machines, tasks) of every fit pair, machine-major: for m in machines, for t in tasks."""
        machines, tasks = np.nonzero(self.fits)
        return frozen(machines), frozen(tasks)

    def fit_count(self, machine: int, task: int) -> int:
        """How many waiting instances of ``task`` fit machine ``machine`` if started one after another now."""
        key = (machine, task)
        if key not in self._fit_counts:
            g = self.task_index[task]
            waiting = int(self._sim.task_instances[g] - self._sim.task_started[g])
            fit = sequential_fit_count(self.free[machine], self.demand[task], waiting) if self.up[machine] else 0
            self._fit_counts[key] = fit
        return self._fit_counts[key]


def frozen(array: np.ndarray) -> np.ndarray:
    """A read-only view of ``array`` (the array itself stays writeable for its owner)."""
    view = array.view()
    view.flags.writeable = False
    return view
