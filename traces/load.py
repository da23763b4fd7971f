"""The offered load of a workload on a cluster, and the one factor on its submit times that sets it.

A trace's jobs arrive as they arrived on the trace's own cluster; replayed on another cluster (or on the
trace's machines, which the sample's few jobs leave almost idle) nothing may ever queue, and no scheduler
can differ from another. ``--load X`` on a trace scales every submit time by one factor so that the
workload offers X of the cluster's capacity, and changes nothing else: the same jobs, tasks, instances,
demands and durations.

The definition, written here once: over the jobs' arrival span (the last submit time minus the first), the
work the jobs bring, per resource, is the sum over tasks of instances x demand x duration (each instance's
own duration where it has one); the capacity is the cluster's total of that resource times the span. The
offered load is the largest ratio of work to capacity over the resources any task asks for: the resource
that binds first. Scaling submit times (relative to the first) by ``f`` scales the span by ``f`` and the
load by ``1 / f``, so ``f = offered / X``. A workload whose jobs all arrive at one instant has no span
to scale.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

import numpy as np

from cloudsim.specs import ClusterSpec, JobSpec

__all__ = ["Scaling", "offered_load", "time_scale"]


def _work(jobs: Iterable[JobSpec], cluster: ClusterSpec) -> tuple[np.ndarray, float, float, int]:
    """(work per resource, first submit time, last submit time, jobs)."""
    work = np.zeros(len(cluster.resources))
    first, last, count = np.inf, -np.inf, 0
    for job in jobs:
        count += 1
        first, last = min(first, job.submit_time), max(last, job.submit_time)
        for task in job.tasks:
            seconds = sum(task.duration) if isinstance(task.duration, tuple) else task.instances * task.duration
            work += cluster.demand_vector(task) * seconds
    return work, first, last, count


def offered_load(jobs: Iterable[JobSpec], cluster: ClusterSpec) -> tuple[float, str]:
    """The offered load of ``jobs`` on ``cluster`` and the resource that sets it (see the module).

    Raises ValueError when it is undefined: no job, all jobs at one instant, no work, or work on a
    resource the cluster has none of.
    """
    return _load(*_work(jobs, cluster), cluster)


def _load(work: np.ndarray, first: float, last: float, count: int, cluster: ClusterSpec) -> tuple[float, str]:
    span = last - first
    if count == 0:
        raise ValueError("the workload has no job: it offers no load")
    if not span > 0:
        raise ValueError(f"all {count} job(s) arrive at one instant ({first}): there is no arrival span whose "
                         "length sets a load; give more jobs, or leave --load out")
    capacity = cluster.capacity_array().sum(axis=0)
    asked = work > 0
    if not asked.any():
        raise ValueError("the jobs ask for no resource (every demand or duration is 0): they offer no load")
    if (capacity[asked] <= 0).any():
        missing = [r for r, a, c in zip(cluster.resources, asked, capacity) if a and c <= 0]
        raise ValueError(f"the jobs ask for {', '.join(missing)}, which the cluster has none of")
    ratios = np.where(asked, work / np.where(capacity > 0, capacity, 1.0) / span, -np.inf)
    binding = int(np.argmax(ratios))
    return float(ratios[binding]), cluster.resources[binding]


class Scaling(NamedTuple):
    """What `time_scale` found: the factor on submit times, the load before, the resource that sets it, and
    the arrival span after scaling."""

    factor: float
    load: float
    resource: str
    span: float


def time_scale(jobs: Iterable[JobSpec], cluster: ClusterSpec, target: float) -> Scaling:
    """The factor on submit times that makes the offered load ``target`` (one pass over ``jobs``)."""
    work, first, last, count = _work(jobs, cluster)
    load, resource = _load(work, first, last, count, cluster)
    factor = load / target
    return Scaling(factor, load, resource, (last - first) * factor)
