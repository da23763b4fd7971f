"""Deepk8s's workload: sequences of real Alibaba v2017 tasks for 5 machines of 10 cpu and 64 memory.

Deepk8s (Zhao & Sun, 2021) trains and tests on task sequences from "Alibaba's
real cluster data" without saying how they were cut or scaled. Here:

* **Tasks.** Each task of the v2017 batch_task table (``$CLOUDSIM_DATA`` or
  ``../shared/data``: alibaba/v2017/batch_task.csv) that terminated, with a
  positive duration of at most ``MAX_DURATION_S`` seconds, becomes one Deepk8s
  task (a job of one single-instance task). Its instances run together, so its
  demand is the whole task's: cpu = cores per instance x instances, memory =
  the machine-normalised memory per instance x instances x 64. Tasks larger
  than one machine (10 cpu, 64 memory), rows the loader skips and tasks outside
  the duration range are counted (`deepk8s_tasks`) and left out.
* **Time.** One time unit is one trace second (``SECONDS_PER_UNIT``) for
  durations. Arrivals keep the trace's order and relative gaps but are
  stretched so that the sequence offers the cluster a cpu load of ``LOAD`` (0.9)
  over its arrival span (the trace's batch tasks arrive far faster than 5
  machines can serve them). Tasks longer than 300 s (about the 85th
  percentile; the longest runs 8 hours) are left out, so one task cannot
  outlast a sequence; they are counted.
* **Sequences.** A sequence is ``tasks`` consecutive tasks in submit order,
  starting at a position drawn from ``numpy.random.default_rng(seed)``, so
  each seed is a different stretch of the real trace with its real arrival
  pattern, and the same seed gives the same sequence.

With the defaults (250 tasks) the mean makespan over seeds 0-9 under SJF on the
window of 10 is about 620 time units (from about 230 to 1,300: the sequences'
work differs), the order of the paper's Table 1 (640-680); docs/papers/deepk8s.md and
benchmarks/results/deepk8s give the measured figures. When the trace sample is
absent, `deepk8s_workload` falls back to the Alibaba-like generator, converted
the same way, and says so with a `UserWarning`.
"""

from __future__ import annotations

import functools
import warnings
from pathlib import Path

import numpy as np

from cloudsim.engine.checks import check_number
from cloudsim.engine.envs.deepk8s import deepk8s_cluster
from cloudsim.engine.specs import JobSpec, TaskSpec
from traces.alibaba import load_alibaba_v2017
from traces.data import data_folder
from traces.synthetic import alibaba_like

__all__ = ["DEFAULT_TASKS", "deepk8s_cluster", "deepk8s_tasks", "deepk8s_workload"]

# The paper's cluster is defined once, beside its environment; its numbers scale the trace here.
MACHINES = deepk8s_cluster().machines
CPU, MEMORY = (float(c) for c in deepk8s_cluster().capacity_array()[0])
DEFAULT_TASKS = 250
SECONDS_PER_UNIT = 1.0
MAX_DURATION_S = 300.0
LOAD = 0.9


def default_trace() -> Path:
    return data_folder() / "alibaba" / "v2017" / "batch_task.csv"


@functools.lru_cache(maxsize=4)
def deepk8s_tasks(source: str | None = None) -> tuple[np.ndarray, dict[str, int]]:
    """Every usable task as rows (submit s, cpu, memory, duration units), in submit order; and the counts
    of what was left out or capped. ``source``: the v2017 batch_task.csv (default: the shared sample)."""
    path = Path(source) if source is not None else default_trace()
    counts: dict[str, int] = {}
    if path.is_file():
        workload = load_alibaba_v2017(path)
        jobs = workload.jobs
        counts.update({f"loader_{k}": v for k, v in workload.skipped.items()})
    else:
        if source is not None:
            raise FileNotFoundError(f"{path}: no such file; give the v2017 batch_task.csv, or no source for "
                                    f"the shared sample")
        warnings.warn(f"{path} is absent: the Deepk8s workload falls back to the Alibaba-like generator "
                      f"(set CLOUDSIM_DATA to the folder holding alibaba/v2017/batch_task.csv)", UserWarning,
                      stacklevel=2)
        jobs = alibaba_like(3000, seed=0, dag_fraction=0.0)
        counts["generated"] = 1
    rows = []
    for job in jobs:
        for task in job.tasks:
            seconds = task.nominal_duration
            if not 0 < seconds <= MAX_DURATION_S:
                counts["duration_out_of_range"] = counts.get("duration_out_of_range", 0) + 1
                continue
            cpu = task.demand.get("cpu", 0.0) * task.instances
            memory = task.demand.get("memory", 0.0) * task.instances * MEMORY
            if cpu <= 0 or memory <= 0:
                counts["no_demand"] = counts.get("no_demand", 0) + 1
                continue
            if cpu > CPU or memory > MEMORY:
                counts["larger_than_a_machine"] = counts.get("larger_than_a_machine", 0) + 1
                continue
            rows.append((job.submit_time, cpu, memory, seconds / SECONDS_PER_UNIT))
    table = np.array(rows, dtype=float).reshape(-1, 4)
    table = table[np.argsort(table[:, 0], kind="stable")]
    table.flags.writeable = False
    return table, counts


def deepk8s_workload(seed: int = 0, tasks: int = DEFAULT_TASKS, *, source: str | None = None) -> list[JobSpec]:
    """``tasks`` consecutive real tasks from a seed-drawn place in the trace, as single-task jobs."""
    check_number("tasks", tasks, whole=True, at_least=1)
    table, _ = deepk8s_tasks(None if source is None else str(source))
    if len(table) < tasks:
        raise ValueError(f"the Deepk8s workload has {len(table):,} usable tasks; ask for at most that many "
                         f"(tasks={tasks:,}; on the command line, --synthetic-jobs)")
    start = int(np.random.default_rng(seed).integers(len(table) - tasks + 1))
    submit, cpu, memory, duration = table[start: start + tasks].T
    work = float(np.sum(cpu * duration))
    gaps = submit - submit[0]
    span = work / (LOAD * MACHINES * CPU)  # the arrival span that offers the cluster LOAD of its cpu
    arrival = gaps * (span / gaps[-1]) if gaps[-1] > 0 else np.linspace(0.0, span, tasks)
    arrival = np.round(arrival, 6)
    return [JobSpec(i, float(arrival[i]), (TaskSpec(0, 1, {"cpu": float(cpu[i]), "memory": float(memory[i])},
                                                    float(duration[i])),))
            for i in range(tasks)]
