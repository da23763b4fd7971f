"""Real Alibaba tasks as jobsets of DeepRM's environment (DeepRM_Plus's trace-driven experiment).

Section V-C4 of DeepRM_Plus draws 20,000 tasks of the Alibaba v2018 trace and
keeps four attributes of each: start time, end time, cpu and memory, "scaled to
the input format" of DeepRM's environment, which counts time in steps and
resources in units. The paper does not say how; this module does it in the
plainest way and says so:

* every task is one job (its instances and dependencies are not modelled:
  DeepRM's jobs have none);
* length: ``ceil(duration / step_s)`` steps, capped at ``max_job_len`` (a task
  longer than the cap is counted in ``capped``);
* demands: cpu and memory as fractions of the largest demand among the chosen
  tasks, times ``max_job_size`` units, rounded up (at least one unit);
* arrivals: the tasks keep their trace order (by their job's submit time); the
  gaps between submit times are scaled by one factor so that the sample offers
  ``load`` on average, and floored to whole steps;
* jobsets: consecutive runs of ``per_jobset`` tasks, each rebased to start at 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cloudsim.engine.checks import check_number
from cloudsim.engine.envs.deeprm import DeepRMParams
from traces.workload import Workload

__all__ = ["TraceJobsets", "deeprm_jobsets_from_trace"]


@dataclass(frozen=True)
class TraceJobsets:
    """Jobsets made from trace tasks, as `cloudsim.engine.envs.deeprm.DeepRMBatch` takes them, and how they were
    made."""

    lengths: np.ndarray
    sizes: np.ndarray
    arrivals: np.ndarray
    tasks: int
    """Tasks in the jobsets."""
    capped: int
    """Tasks longer than ``max_job_len`` steps, shortened to it."""
    available: int
    """Tasks of the trace the sample was drawn from."""
    load: float
    """The load the sample offers after scaling (per resource, mean over resources)."""


def deeprm_jobsets_from_trace(workload: Workload, params: DeepRMParams, *, tasks: int = 20_000, load: float = 1.4,
                              step_s: float = 20.0, per_jobset: int = 50, seed: int = 0) -> TraceJobsets:
    """``tasks`` tasks of ``workload`` drawn at random (``seed``), as jobsets of ``per_jobset`` tasks.

    Raises ValueError when the trace holds fewer tasks than asked, or a setting is out of range.
    """
    for name, value in (("tasks", tasks), ("per_jobset", per_jobset)):
        check_number(name, value, whole=True, at_least=1)
    if not (math.isfinite(load) and load > 0 and math.isfinite(step_s) and step_s > 0):
        raise ValueError(f"load and step_s must be numbers > 0, got {load!r} and {step_s!r}")
    submit, duration, cpu, memory = [], [], [], []
    for job in workload.jobs:
        for task in job.tasks:
            submit.append(job.submit_time)
            duration.append(max(task.duration) if isinstance(task.duration, tuple) else task.duration)
            cpu.append(task.demand.get("cpu", 0.0))
            memory.append(task.demand.get("memory", 0.0))
    available = len(submit)
    if available < tasks:
        raise ValueError(f"the trace holds {available:,} tasks, fewer than the {tasks:,} asked; ask for fewer")
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(available, size=tasks, replace=False))  # trace order is submit order
    submit = np.asarray(submit)[chosen]
    duration = np.asarray(duration)[chosen]
    raw_length = np.maximum(np.ceil(duration / step_s), 1)
    lengths = np.minimum(raw_length, params.max_job_len).astype(np.int64)
    demand = np.stack([np.asarray(cpu)[chosen], np.asarray(memory)[chosen]], axis=1)[:, :params.resources]
    top = demand.max(axis=0)
    sizes = np.maximum(np.ceil(demand / np.where(top > 0, top, 1) * params.max_job_size), 1).astype(np.int64)
    # one scale for the gaps: tasks x mean(len x size) / (steps x res_slot) = load
    work = float(np.mean(lengths[:, None] * sizes)) * tasks / params.res_slot
    span = max(float(submit[-1] - submit[0]), 1e-9)
    steps_per_second = (work / load) / span
    arrivals = np.floor((submit - submit[0]) * steps_per_second).astype(np.int64)
    count = tasks // per_jobset
    keep = count * per_jobset
    shape = (count, per_jobset)
    arrivals = arrivals[:keep].reshape(shape)
    arrivals -= arrivals[:, :1]
    offered = float(np.mean(lengths[:keep, None] * sizes[:keep])) * keep / params.res_slot / max(
        float(arrivals[:, -1].sum() + count), 1.0)
    return TraceJobsets(lengths[:keep].reshape(shape), sizes[:keep].reshape(shape + (params.resources,)), arrivals,
                        keep, int((raw_length[:keep] > params.max_job_len).sum()), available, offered)
