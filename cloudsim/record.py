"""What an episode leaves behind: its instance groups and a public record the results are built from.

An instance group is the engine's unit of work: instances of one task started
on one machine at one instant with one duration, finishing together (one SimPy
event). `EpisodeRecord` gathers what `cloudsim.metrics.EpisodeResult` needs,
so results never reach into the simulation's internals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from cloudsim.cluster import ClusterState
from cloudsim.specs import ClusterSpec, JobSpec
from cloudsim.tasks import TaskTable

__all__ = ["EpisodeRecord", "InstanceGroup", "OUTCOMES"]

OUTCOMES = ("finished", "failed", "requeued")


@dataclass(slots=True)
class InstanceGroup:
    """Instances ``first_instance .. first_instance + instances - 1`` of ``task`` on ``machine``.

    ``task`` is the global task index. ``end`` is NaN and ``outcome`` empty while
    the group runs; a machine failure ends it early ("failed" or "requeued").
    """

    task: int
    machine: int
    first_instance: int
    instances: int
    duration: float
    start: float
    end: float = math.nan
    outcome: str = ""

    @property
    def running(self) -> bool:
        return not self.outcome


@dataclass
class EpisodeRecord:
    """A finished (or stopped) episode, as the engine recorded it.

    Attributes:
        cluster: the machines.
        jobs: the jobs in arrival order.
        tasks: every task's and job's progress and times.
        state: the machines' final state (capacity, free, up).
        groups: every instance group, in start order.
        makespan: when the last job finished (event-driven), or the first
            scheduler tick at which every job had finished (fixed tick).
        broker: the broker's name.
        tick: the scheduler's period, or None for event-driven scheduling.
        decisions: how many decisions were applied (reservations included).
        cancelled_reservations: reservations whose machine could not hold them when
            due (it had failed); their instances waited again.
    """

    cluster: ClusterSpec
    jobs: list[JobSpec]
    tasks: TaskTable
    state: ClusterState
    groups: list[InstanceGroup] = field(default_factory=list)
    makespan: float = 0.0
    broker: str = ""
    tick: float | None = None
    decisions: int = 0
    cancelled_reservations: int = 0
