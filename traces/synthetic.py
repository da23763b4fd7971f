"""Synthetic workloads: the papers' generators, and the Alibaba-like default workload.

Two families, each seeded so that the same arguments give the same jobs:

* **Bimodal jobs at a target load** (`deeprm_workload`, `poisson_workload`,
  `rlsk_workload`): single-task, single-instance jobs with a short/long
  duration mix and one dominant resource, as DeepRM (section 4.1) introduced
  and DeepRM_Plus (section V-B) and RLSK (section IV-A) reuse with other
  numbers (`BimodalJobs`). Time is in steps of 1; demands are in units of a
  resource pool of ``units`` per resource.
* **Alibaba-like jobs** (`alibaba_like`): the project's built-in workload, whose
  distributions are statistics of the real Alibaba samples, fitted by
  `fit_alibaba_like` and stored below as numbers so that no trace is needed:

  - from CloudSimPy's jobs.csv (v2017 batch jobs; 5,216 jobs, 31,756 tasks):
    job inter-arrival times exponential with the trace's mean gap, 11.47 s;
    tasks per job with the trace's frequencies of 1..11 tasks, and 12..40
    uniformly for the 8 % of jobs with 12 or more; instances per task
    log-normal (mean of log 1.708, sd 2.098), rounded, >= 1; duration (s)
    log-normal (mean of log 2.668, sd 1.519), >= 1; cpu (cores) 0.5 with
    probability 0.695, 1.0 with 0.292, else 0.4 .. 0.75, 2 or 3; memory
    (normalised) log-normal (mean of log -5.092, sd 0.399);
  - from the v2018 batch_task sample (selected_DAGs.csv; 55,874 tasks of
    2,120 DAG jobs; 2,108 load whole): the number of parents of a task, 0..18, with the
    sample's frequencies. A DAG job's tasks are in topological order and a
    task's parents are drawn uniformly among the tasks before it (the sample
    numbers its tasks in no topological order, so which earlier task is a
    parent is not fitted). The share of DAG jobs, ``dag_fraction``, is a
    choice, not a fit: the sample holds DAG jobs only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from cloudsim.specs import ClusterSpec, JobSpec, TaskSpec

__all__ = [
    "BimodalJobs",
    "DEEPRM",
    "DEEPRM_PLUS",
    "RLSK",
    "alibaba_like",
    "bimodal_cluster",
    "deeprm_workload",
    "fit_alibaba_like",
    "poisson_workload",
    "rlsk_workload",
]


# ------------------------------------------------------------------ bimodal jobs
@dataclass(frozen=True)
class BimodalJobs:
    """DeepRM's job distribution: a short/long duration mix and one dominant resource.

    Durations are whole time steps drawn uniformly from ``short`` (with
    probability ``short_fraction``) or ``long`` (both inclusive). Each job's
    dominant resource is picked uniformly; its demand is uniform in
    ``dominant`` and every other resource's in ``other``, both as fractions of
    one pool's capacity.
    """

    short_fraction: float
    short: tuple[int, int]
    long: tuple[int, int]
    dominant: tuple[float, float]
    other: tuple[float, float]
    resources: tuple[str, ...] = ("cpu", "memory")

    def mean_work(self) -> float:
        """Expected duration x expected demand of one resource, in pool-time units (steps x fraction)."""
        mean_duration = self.short_fraction * sum(self.short) / 2 + (1 - self.short_fraction) * sum(self.long) / 2
        share = 1 / len(self.resources)
        mean_demand = share * sum(self.dominant) / 2 + (1 - share) * sum(self.other) / 2
        return mean_duration * mean_demand

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(durations[n], demands[n, resources]) with demands as fractions of a pool."""
        short = rng.random(n) < self.short_fraction
        durations = np.where(short, rng.integers(self.short[0], self.short[1] + 1, n),
                             rng.integers(self.long[0], self.long[1] + 1, n))
        demands = rng.uniform(*self.other, (n, len(self.resources)))
        dominant = rng.integers(0, len(self.resources), n)
        demands[np.arange(n), dominant] = rng.uniform(*self.dominant, n)
        return durations.astype(float), demands


DEEPRM = BimodalJobs(0.8, (1, 3), (10, 15), (0.25, 0.5), (0.05, 0.1))
"""DeepRM section 4.1: 80 % of jobs last 1-3 t, the rest 10-15 t; dominant demand 0.25-0.5 r, other 0.05-0.1 r."""
DEEPRM_PLUS = BimodalJobs(0.8, (1, 3), (10, 15), (0.5, 1.0), (0.1, 0.2))
"""DeepRM_Plus section V-B: DeepRM's durations; primary demand 0.5-1 r, auxiliary 0.1-0.2 r."""
RLSK = BimodalJobs(0.8, (1, 60), (200, 300), (0.025, 0.05), (0.005, 0.01))
"""RLSK section IV-A: 80 % of jobs last 1-60 t, the rest 200-300 t; dominant 0.025-0.05 r, other 0.005-0.01 r."""


def bimodal_cluster(pools: int = 1, units: float = 10, spec: BimodalJobs = DEEPRM) -> ClusterSpec:
    """``pools`` resource pools (machines or RLSK's clusters) of ``units`` per resource."""
    return ClusterSpec.uniform(pools, {r: float(units) for r in spec.resources})


def _bimodal_jobs(arrivals: np.ndarray, spec: BimodalJobs, units: float, rng: np.random.Generator) -> list[JobSpec]:
    """One single-instance task per arrival time; demands scaled to ``units`` per pool."""
    durations, demands = spec.sample(rng, len(arrivals))
    demands = demands * units
    return [
        JobSpec(j, float(arrivals[j]), (TaskSpec(0, 1, dict(zip(spec.resources, demands[j].tolist())), durations[j]),))
        for j in range(len(arrivals))
    ]


def _check_load(load: float, jobs: int) -> None:
    if not (math.isfinite(load) and load > 0):
        raise ValueError(f"load must be a positive fraction of capacity (0.7 = 70 %), got {load!r}")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")


def deeprm_workload(
    load: float, jobs: int = 50, seed: int = 0, *, units: float = 10, pools: int = 1, spec: BimodalJobs = DEEPRM
) -> list[JobSpec]:
    """DeepRM's workload: ``jobs`` jobs arriving by a Bernoulli process at ``load``.

    Load is the expected demand per resource per step over capacity,
    ``rate x spec.mean_work() / pools``, as a fraction (0.7 = 70 %); the
    arrival rate per step follows from it. A step gets one job with
    probability ``rate``; above one job per step (loads beyond
    ``spec.mean_work() / pools``, 0.92 for DeepRM's numbers) a step gets
    ``floor(rate)`` jobs plus one more with probability ``rate - floor(rate)``,
    the Bernoulli process with the same mean. Run the jobs on
    ``bimodal_cluster(pools, units, spec)``.
    """
    _check_load(load, jobs)
    rate = load * pools / spec.mean_work()
    rng = np.random.default_rng(seed)
    arrivals: list[int] = []
    step = 0
    while len(arrivals) < jobs:
        arrivals += [step] * (int(rate) + int(rng.random() < rate - int(rate)))
        step += 1
    return _bimodal_jobs(np.array(arrivals[:jobs]), spec, units, rng)


def poisson_workload(
    load: float, jobs: int | None = None, seed: int = 0, *, units: float = 10, pools: int = 1,
    spec: BimodalJobs = DEEPRM_PLUS,
) -> list[JobSpec]:
    """DeepRM_Plus's workload: Poisson arrivals, mean ``rate`` jobs per step, at ``load``.

    ``rate = load x pools / spec.mean_work()`` (see `deeprm_workload`); the
    number of jobs arriving in each step is Poisson(rate). ``jobs=None`` draws
    the job count uniformly from 5..50, as DeepRM_Plus's job sets.
    """
    rng = np.random.default_rng(seed)
    jobs = int(rng.integers(5, 51)) if jobs is None else jobs
    _check_load(load, jobs)
    rate = load * pools / spec.mean_work()
    counts: list[int] = []
    while sum(counts) < jobs:
        counts.append(int(rng.poisson(rate)))
    arrivals = np.repeat(np.arange(len(counts)), counts)[:jobs]
    return _bimodal_jobs(arrivals, spec, units, rng)


def rlsk_workload(
    load: float = 0.7, jobs: int = 1000, seed: int = 0, *, clusters: int = 3, units: float = 1
) -> list[JobSpec]:
    """RLSK's workload: DeepRM's Bernoulli process with RLSK's job numbers, over ``clusters`` pools.

    Load is relative to all clusters together (RLSK evaluates at about 70 %);
    run the jobs on ``bimodal_cluster(clusters, units, RLSK)``.
    """
    return deeprm_workload(load, jobs, seed, units=units, pools=clusters, spec=RLSK)


# --------------------------------------------------------------- Alibaba-like
# fit_alibaba_like(load_cloudsimpy(jobs.csv), load_alibaba_v2018(selected_DAGs.csv, status_policy="keep").jobs)
_MEAN_INTERARRIVAL = 11.47
_TASKS_PER_JOB = np.array([0.1237, 0.1603, 0.0961, 0.1026, 0.1313, 0.0546, 0.0581, 0.0266, 0.0387, 0.0387, 0.0895, 0.0798])
_LOG_INSTANCES = (1.708, 2.098)
_LOG_DURATION = (2.668, 1.519)
_LOG_MEMORY = (-5.092, 0.399)
_CPU_VALUES = np.array([0.5, 1.0, 0.4, 0.75, 0.55, 0.65, 0.7, 0.6, 2.0, 3.0])
_CPU_WEIGHTS = np.array([0.695, 0.2924, 0.0048, 0.0032, 0.0015, 0.0012, 0.0009, 0.0007, 0.0001, 0.0001])
# Tasks with 0, 1, ..., 18 parents among the v2018 sample's loaded DAG jobs.
_PARENTS_PER_TASK = np.array([14496, 32058, 4268, 2419, 403, 510, 209, 99, 102, 73, 37, 28, 20, 12, 5, 148, 83, 58, 56])


def _dag_parents(rng: np.random.Generator, n: int, ids: Sequence[int]) -> list[tuple[int, ...]]:
    """Parents for tasks in topological order: a fitted count, drawn among the earlier tasks."""
    counts = rng.choice(len(_PARENTS_PER_TASK), size=n, p=_PARENTS_PER_TASK / _PARENTS_PER_TASK.sum())
    parents = []
    for i in range(n):
        k = min(int(counts[i]), i)
        parents.append(tuple(ids[p] for p in np.sort(rng.choice(i, size=k, replace=False))) if k else ())
    return parents


ALIBABA_LIKE_JOBS = 100  # jobs the alibaba-like generator makes when not told


def alibaba_like(
    jobs: int = ALIBABA_LIKE_JOBS, seed: int = 0, max_instances: int = 2000, dag_fraction: float = 0.5
) -> list[JobSpec]:
    """``jobs`` jobs drawn from Alibaba-like distributions; the same seed gives the same jobs.

    ``max_instances`` caps instances per task (the trace's tail reaches 36,326),
    which keeps small demo runs quick. A job of two or more tasks is a DAG job
    with probability ``dag_fraction`` (see the module docstring); with
    ``dag_fraction=0`` every task of a job is independent, as in v2017.
    `iter_alibaba_like` gives the same jobs one at a time.
    """
    return list(iter_alibaba_like(jobs, seed, max_instances, dag_fraction))


_SUBMIT_BLOCK = 65536  # inter-arrival times drawn at a time when streaming


def iter_alibaba_like(
    jobs: int = ALIBABA_LIKE_JOBS, seed: int = 0, max_instances: int = 2000, dag_fraction: float = 0.5
):
    """The jobs of `alibaba_like`, the same ones, made one at a time: memory stays flat at any ``jobs``.

    The in-memory generator draws every inter-arrival time first, then each job's
    shape from the same random stream. Here the inter-arrival times come in blocks from
    a copy of that stream, and the job stream first skips past them, block by block.
    """
    if jobs < 0:
        raise ValueError(f"jobs must be >= 0, got {jobs}")
    if not 0 <= dag_fraction <= 1:
        raise ValueError(f"dag_fraction must be in [0, 1], got {dag_fraction!r}")
    rng = np.random.default_rng(seed)
    arrivals = np.random.default_rng(seed)  # the same stream: its first draws are the inter-arrival times
    for start in range(0, jobs, _SUBMIT_BLOCK):
        rng.exponential(_MEAN_INTERARRIVAL, min(_SUBMIT_BLOCK, jobs - start))
    dag_rng = np.random.default_rng([seed, 1])  # DAG shapes do not disturb the other draws
    probabilities = _TASKS_PER_JOB / _TASKS_PER_JOB.sum()
    cpu_weights = _CPU_WEIGHTS / _CPU_WEIGHTS.sum()
    total, first = 0.0, None
    for start in range(0, jobs, _SUBMIT_BLOCK):
        # A running sum carried over blocks adds in the same order as one cumsum over all.
        steps = np.cumsum(np.concatenate(([total], arrivals.exponential(_MEAN_INTERARRIVAL,
                                                                       min(_SUBMIT_BLOCK, jobs - start)))))[1:]
        total = steps[-1]
        submit = np.floor(steps)
        if first is None:
            first = submit[0]
        submit -= first
        for offset in range(len(submit)):
            yield _alibaba_job(start + offset + 1, float(submit[offset]), rng, dag_rng, probabilities, cpu_weights,
                               max_instances, dag_fraction)


def _alibaba_job(job_id: int, submit: float, rng: np.random.Generator, dag_rng: np.random.Generator,
                 probabilities: np.ndarray, cpu_weights: np.ndarray, max_instances: int,
                 dag_fraction: float) -> JobSpec:
    n = int(rng.choice(len(probabilities), p=probabilities)) + 1
    if n == len(probabilities):
        n = int(rng.integers(12, 41))
    instances = np.clip(np.rint(rng.lognormal(*_LOG_INSTANCES, n)), 1, max_instances).astype(int)
    duration = np.maximum(1.0, np.round(rng.lognormal(*_LOG_DURATION, n), 3))
    cpu = rng.choice(_CPU_VALUES, size=n, p=cpu_weights)
    memory = np.round(rng.lognormal(*_LOG_MEMORY, n), 6)
    ids = list(range(1, n + 1))
    dag = n > 1 and dag_rng.random() < dag_fraction
    parents = _dag_parents(dag_rng, n, ids) if dag else [()] * n
    tasks = tuple(
        TaskSpec(
            id=ids[t],
            instances=int(instances[t]),
            demand={"cpu": float(cpu[t]), "memory": float(memory[t])},
            duration=float(duration[t]),
            parents=parents[t],
        )
        for t in range(n)
    )
    return JobSpec(job_id, submit, tasks)


def fit_alibaba_like(jobs: Sequence[JobSpec], dag_jobs: Sequence[JobSpec] = ()) -> dict:
    """The statistics `alibaba_like` is built on, measured on loaded jobs.

    ``jobs``: independent-task jobs (CloudSimPy's jobs.csv); ``dag_jobs``: DAG
    jobs (the v2018 sample). Returns the mean inter-arrival time, the
    frequencies of 1..11 and of 12+ tasks per job, (mean, sd) of the logs of
    instances, durations and memory, the cpu values with their frequencies, and
    the counts of tasks with 0, 1, 2, ... parents.
    """
    ordered = sorted(jobs, key=lambda j: j.submit_time)
    tasks = [t for j in ordered for t in j.tasks]
    if len(ordered) < 2 or not tasks:
        raise ValueError("fitting needs at least two jobs")
    sizes = np.array([len(j.tasks) for j in ordered])
    per_job = [float(np.mean(sizes == k)) for k in range(1, 12)] + [float(np.mean(sizes >= 12))]

    def log_stats(values) -> tuple[float, float]:
        logs = np.log(np.asarray(values, dtype=float))
        return float(logs.mean()), float(logs.std())

    cpu_values, cpu_counts = np.unique([t.demand.get("cpu", 0.0) for t in tasks], return_counts=True)
    order = np.argsort(-cpu_counts, kind="stable")
    parents = np.bincount([len(t.parents) for j in dag_jobs for t in j.tasks], minlength=1)
    return {
        "mean_interarrival": (ordered[-1].submit_time - ordered[0].submit_time) / (len(ordered) - 1),
        "tasks_per_job": per_job,
        "log_instances": log_stats([t.instances for t in tasks]),
        "log_duration": log_stats([t.nominal_duration for t in tasks]),
        "log_memory": log_stats([t.demand.get("memory", 0.0) for t in tasks]),
        "cpu_values": cpu_values[order].tolist(),
        "cpu_weights": (cpu_counts[order] / len(tasks)).tolist(),
        "parents_per_task": parents.tolist(),
    }
