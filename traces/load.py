"""The offered load of a workload on a cluster, and the one factor on its submit times that sets it.

A trace's jobs arrive as they arrived on the trace's own cluster; replayed on another cluster (or on the
trace's machines, which the sample's few jobs leave almost idle) nothing may ever queue, and no scheduler
can differ from another. ``--load X`` on a trace scales every submit time by one factor so that the
workload offers X of the cluster's capacity, and changes nothing else: the same jobs, tasks, instances,
demands and durations.

The definition, written here once: over the jobs' arrival span (the last submit time minus the first), the
work the jobs bring, per resource, is the sum over tasks of instances x demand x duration (each instance's
own duration where it has one); the capacity is the cluster's total of that resource times the span.
Devices (GPUs, `cloudsim.engine.specs.DeviceRequest`) are one more resource, ``gpu``, counted in milli-units: an
instance's demand is the milli-units it takes over all its devices (a share of one device, or ``count`` x
`DEVICE_MILLI` for whole devices), the cluster's capacity is its devices x `DEVICE_MILLI` (every device,
whatever model a task accepts). The offered load is the largest ratio of work to capacity over the
resources any task asks for: the resource that binds first. Scaling submit times (relative to the first)
by ``f`` scales the span by ``f`` and the load by ``1 / f``, so ``f = offered / X``. A workload whose jobs
all arrive at one instant has no span to scale.

The factor is bounded so that the scaled times stay what float64 holds: ``f`` is at least the smallest
normal float64 (`MIN_FACTOR`; below it the scaled times lose their precision), and the scaled arrival span
(the last scaled submit time, the first being 0) stays below 2**53 (`cloudsim.engine.specs.EXACT_BOUND`, the bound
the loaders put on every number they read), beyond which float64 no longer holds every whole second and a
start plus a duration is rounded (a job would seem to finish before its duration). A target outside these
bounds is refused, naming the nearest load that works (`LoadOutOfRange`, `load_that_works`).
"""

from __future__ import annotations

import math
import sys
from typing import Iterable, NamedTuple

import numpy as np

from cloudsim.engine.checks import is_finite_number
from cloudsim.engine.specs import DEVICE_MILLI, EXACT_BOUND, ClusterSpec, JobSpec

__all__ = ["DEVICES", "Limits", "LoadOutOfRange", "MIN_FACTOR", "Scaling", "load_limits", "load_that_works",
           "offered_load", "time_scale"]

DEVICES = "gpu"
"""The name the devices (GPUs, in milli-units) go by among the resources of the offered load."""

MIN_FACTOR = sys.float_info.min
"""The smallest factor on submit times: the smallest normal float64 (about 2.2e-308)."""


def _work(jobs: Iterable[JobSpec], cluster: ClusterSpec) -> tuple[np.ndarray, float, float, int]:
    """(work per resource and, last, on the devices, first submit time, last submit time, jobs)."""
    work = np.zeros(len(cluster.resources))
    devices = 0.0
    first, last, count = np.inf, -np.inf, 0
    for job in jobs:
        count += 1
        first, last = min(first, job.submit_time), max(last, job.submit_time)
        for task in job.tasks:
            seconds = sum(task.duration) if isinstance(task.duration, tuple) else task.instances * task.duration
            work += cluster.demand_vector(task) * seconds
            if task.devices is not None:
                devices += task.devices.total * seconds
    return np.append(work, devices), first, last, count


def offered_load(jobs: Iterable[JobSpec], cluster: ClusterSpec) -> tuple[float, str]:
    """The offered load of ``jobs`` on ``cluster`` and the resource that sets it (see the module; `DEVICES`
    for the devices).

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
    capacity = np.append(cluster.capacity_array().sum(axis=0), float(cluster.device_counts().sum() * DEVICE_MILLI))
    names = (*cluster.resources, DEVICES)
    asked = work > 0
    if not asked.any():
        raise ValueError("the jobs ask for no resource (every demand or duration is 0): they offer no load")
    if (capacity[asked] <= 0).any():
        missing = [r for r, a, c in zip(names, asked, capacity) if a and c <= 0]
        raise ValueError(f"the jobs ask for {', '.join(missing)}, which the cluster has none of")
    ratios = np.where(asked, work / np.where(capacity > 0, capacity, 1.0) / span, -np.inf)
    binding = int(np.argmax(ratios))
    return float(ratios[binding]), names[binding]


class Scaling(NamedTuple):
    """What `time_scale` found: the factor on submit times, the load before, the resource that sets it, and
    the arrival span after scaling."""

    factor: float
    load: float
    resource: str
    span: float


class Limits(NamedTuple):
    """What bounds the loads a workload can be scaled to (see the module): its offered load as it is, the
    resource that sets it, and its arrival span."""

    load: float
    resource: str
    span: float

    def problem(self, target: float) -> str | None:
        """Why the factor that makes the offered load ``target`` leaves what float64 holds; None when it does not."""
        factor = self.load / target
        if not factor >= MIN_FACTOR:
            return (f"the factor on submit times would be {factor:.3g}, below the smallest normal float64 "
                    f"({MIN_FACTOR:.3g}), where the scaled times would lose their precision")
        if not self.span * factor < EXACT_BOUND:
            return (f"the last job would arrive at t={self.span * factor:.6g}, past 2**53 ({EXACT_BOUND}), where "
                    f"float64 stops holding every whole second and a start plus a duration would be rounded")
        return None

    @property
    def offers(self) -> str:
        return f"as it is, the workload offers {self.load:.3g} of the cluster's {self.resource}"


class LoadOutOfRange(ValueError):
    """A target load whose factor on submit times would leave what float64 holds (see the module): ``problem``
    says why, ``limits`` is the workload's `Limits`; the message also names a load that works."""

    def __init__(self, problem: str, limits: Limits, target: float) -> None:
        self.problem, self.limits = problem, limits
        super().__init__(f"{problem}; {load_that_works([limits], target)} ({limits.offers})")


def load_limits(jobs: Iterable[JobSpec], cluster: ClusterSpec) -> Limits:
    """The `Limits` of ``jobs`` on ``cluster`` (one pass; ValueError when the offered load is undefined)."""
    work, first, last, count = _work(jobs, cluster)
    return Limits(*_load(work, first, last, count, cluster), last - first)


def _rounded(bound: float, works, up: bool) -> float:
    """A load of three significant digits next to ``bound`` (above it when ``up``, else below) that ``works``."""
    if not 0 < bound < math.inf:
        return bound
    exponent = math.floor(math.log10(bound)) - 2
    step = 10.0 ** exponent
    value = (math.ceil if up else math.floor)(bound / step) * step
    for _ in range(100):
        value = float(f"{value:.3g}")
        if works(value):
            return value
        value = value + step if up else value - step
    return bound


def load_that_works(limits: list[Limits], target: float) -> str:
    """"ask for a load of at least (or at most) X": the nearest load to ``target``, in three significant digits,
    that every workload of ``limits`` takes (above ``target`` where it is too low for one of them)."""
    up = any(not limit.span * (limit.load / target) < EXACT_BOUND for limit in limits)
    bound = (max(limit.load * limit.span / EXACT_BOUND for limit in limits) if up
             else min(limit.load / MIN_FACTOR for limit in limits))
    value = _rounded(bound, lambda x: all(limit.problem(x) is None for limit in limits), up)
    return f"ask for a load of {'at least' if up else 'at most'} {value:g}"


def time_scale(jobs: Iterable[JobSpec], cluster: ClusterSpec, target: float) -> Scaling:
    """The factor on submit times that makes the offered load ``target`` (one pass over ``jobs``).

    Raises ValueError when the offered load is undefined (`offered_load`), and `LoadOutOfRange` when the
    factor would leave what float64 holds (see the module).
    """
    if not (is_finite_number(target) and target > 0):
        raise ValueError(f"a load must be a finite number > 0, got {target!r}")
    limits = load_limits(jobs, cluster)
    problem = limits.problem(target)
    if problem is not None:
        raise LoadOutOfRange(problem, limits, target)
    factor = limits.load / target
    return Scaling(factor, limits.load, limits.resource, limits.span * factor)
