"""What an episode produced, as pandas DataFrames, summary numbers and Parquet files.

Definitions (every number is derived from the instance groups the run recorded):

* task completion = last instance finish - first instance start, task slowdown =
  completion / task duration (CloudSimPy's ``average_completion`` and
  ``average_slowdown`` average these over tasks);
* job completion = job finish - job submit, job slowdown = completion / the
  job's critical-path duration (its duration on an empty, unbounded cluster),
  as DeepRM defines slowdown for single-task jobs;
* utilisation of a resource = used / total capacity, a step function of time;
  its mean is taken over [0, makespan].
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from cloudsim.broker import broker_name

if TYPE_CHECKING:
    from cloudsim.simulation import Simulation

__all__ = ["EpisodeResult"]

_GROUP_COLUMNS = ["task", "machine", "first_instance", "instances", "duration", "start", "end", "outcome"]
_GROUP_DTYPES = dict(zip(_GROUP_COLUMNS, ["int64"] * 4 + ["float64"] * 3 + ["object"]))


@dataclass
class EpisodeResult:
    """Results of one episode.

    Attributes:
        summary: headline numbers (makespan, averages, counts), JSON-ready.
        tasks: one row per task: ids, demand, times, completion, slowdown.
        jobs: one row per job: submit, finish, completion, duration, slowdown.
        groups: one row per instance group (instances of a task started on one
            machine at one instant with one duration): machine, start, end, and
            outcome ("finished", "failed", or "requeued" when a machine failure
            ended them and they waited again).
        capacity: per-machine capacity, one column per resource.
    """

    summary: dict
    tasks: pd.DataFrame
    jobs: pd.DataFrame
    groups: pd.DataFrame
    capacity: pd.DataFrame
    resources: tuple[str, ...] = field(default=())

    @classmethod
    def from_simulation(cls, sim: "Simulation", wall_s: float) -> "EpisodeResult":
        resources = sim.cluster.resources
        job_ids = [job.id for job in sim.jobs]
        task_ids = [task.id for _, _, _, task in sim._tasks]
        tasks = pd.DataFrame(
            {
                "job_id": pd.Series([job_ids[j] for j in sim.task_job], dtype=object),
                "task_id": pd.Series(task_ids, dtype=object),
                "instances": sim.task_instances,
                **{f"demand_{r}": sim.task_demand[:, i] for i, r in enumerate(resources)},
                "duration": sim.task_duration,
                "submit_time": sim.job_arrival[sim.task_job],
                "ready_time": sim.task_ready_time,
                "start_time": sim.task_start_time,
                "finish_time": sim.task_finish_time,
                "failed_instances": sim.task_failed,
                "restarts": sim.task_restarts,
            }
        )
        tasks["completion"] = tasks.finish_time - tasks.start_time
        tasks["wait"] = tasks.start_time - tasks.ready_time
        tasks["slowdown"] = tasks.completion / tasks.duration.where(tasks.duration > 0)
        jobs = pd.DataFrame(
            {
                "job_id": pd.Series(job_ids, dtype=object),
                "tasks": np.diff(sim.job_first_task),
                "instances": np.add.reduceat(sim.task_instances, sim.job_first_task[:-1])
                if len(sim.jobs)
                else np.empty(0, dtype=np.int64),
                "submit_time": sim.job_arrival,
                "finish_time": sim.job_finish,
                "duration": sim.job_length(),
            }
        )
        jobs["completion"] = jobs.finish_time - jobs.submit_time
        jobs["slowdown"] = jobs.completion / jobs.duration.where(jobs.duration > 0)
        groups = pd.DataFrame(sim._groups, columns=_GROUP_COLUMNS).astype(_GROUP_DTYPES)
        groups.insert(0, "job_id", pd.Series([job_ids[j] for j in sim.task_job[groups.task]], dtype=object))
        groups.insert(1, "task_id", pd.Series([task_ids[g] for g in groups.task], dtype=object))
        capacity = pd.DataFrame(sim.capacity, columns=list(resources))
        capacity.insert(0, "machine_id", list(sim.cluster.machine_ids))
        makespan = float(sim.makespan)
        occupied = (groups.instances * (groups.end - groups.start)).to_numpy()
        used = sim.task_demand[groups.task.to_numpy()] * occupied[:, None]
        total = sim.capacity.sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean_util = used.sum(axis=0) / (total * makespan) if makespan > 0 else np.zeros(len(resources))
        summary = {
            "broker": broker_name(sim.broker),
            "mode": "event" if sim.tick is None else f"tick={sim.tick:g}",
            "makespan": makespan,
            "jobs": len(sim.jobs),
            "tasks": int(len(tasks)),
            "instances": int(sim.task_instances.sum()),
            "instances_finished": int(sim.task_finished.sum()),
            "instances_failed": int(sim.task_failed.sum()),
            "instance_restarts": int(sim.task_restarts.sum()),
            "avg_completion": _mean(tasks.completion),
            "avg_slowdown": _mean(tasks.slowdown),
            "avg_job_completion": _mean(jobs.completion),
            "avg_job_slowdown": _mean(jobs.slowdown),
            **{f"utilisation_{r}": float(u) for r, u in zip(resources, mean_util)},
            "decisions": int(sim.decisions),
            "sim_wall_s": wall_s,
        }
        return cls(summary, tasks, jobs, groups, capacity, tuple(resources))

    @property
    def makespan(self) -> float:
        return self.summary["makespan"]

    def utilisation(self) -> pd.DataFrame:
        """Fraction of the cluster's total capacity in use, per resource, from each change onward.

        One row per instant at which usage changed; usage holds until the next row.
        """
        g = self.groups
        demand = self.tasks.loc[g.task, [f"demand_{r}" for r in self.resources]].to_numpy()
        delta = demand * g.instances.to_numpy()[:, None]
        times = np.concatenate([g.start.to_numpy(), g.end.to_numpy()])
        deltas = np.concatenate([delta, -delta])
        frame = pd.DataFrame(deltas, columns=list(self.resources))
        frame.insert(0, "time", times)
        steps = frame.groupby("time", sort=True).sum().cumsum()
        total = self.capacity[list(self.resources)].sum(axis=0).replace(0, np.nan)
        return (steps / total).clip(lower=0.0).reset_index()

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
        """Write tasks, jobs, groups, utilisation and capacity as Parquet, and summary.json."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        for name, frame in [
            ("tasks", self.tasks),
            ("jobs", self.jobs),
            ("groups", self.groups),
            ("utilisation", self.utilisation()),
            ("capacity", self.capacity),
        ]:
            _stringify_ids(frame).to_parquet(out / f"{name}.parquet", index=False)
        (out / "summary.json").write_text(json.dumps(self.summary, indent=2) + "\n")
        return out


def _mean(series: pd.Series) -> float:
    return float(series.mean()) if series.notna().any() else float("nan")


def _stringify_ids(frame: pd.DataFrame) -> pd.DataFrame:
    """Parquet needs one type per column; ids may mix ints and strings, so store them as text."""
    frame = frame.copy()
    for column in ("job_id", "task_id", "machine_id"):
        if column in frame and frame[column].dtype == object:
            frame[column] = frame[column].astype(str)
    return frame
