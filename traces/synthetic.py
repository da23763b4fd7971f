"""Synthetic workloads, so the project runs with no trace on disk.

`alibaba_like` draws jobs whose distributions are summary statistics of the
Alibaba v2017 batch workload as CloudSimPy preprocessed it (jobs.csv: 5,216
jobs, 31,756 tasks), measured once and stored here as numbers:

* job inter-arrival times: exponential, mean 11.47 s (the trace's mean gap);
* tasks per job: the trace's frequencies of 1..11 tasks, and 12..40 uniformly
  for the 8 % of jobs with 12 or more;
* instances per task: log-normal, mean of log 1.708, sd 2.098, rounded, >= 1;
* duration (s): log-normal, mean of log 2.668, sd 1.519, >= 1;
* cpu (cores): 0.5 with probability 0.695, 1.0 with 0.292, else 0.4 .. 0.75;
* memory (normalised): log-normal, mean of log -5.092, sd 0.399.
"""

from __future__ import annotations

import numpy as np

from cloudsim.specs import JobSpec, TaskSpec

__all__ = ["alibaba_like"]

_MEAN_INTERARRIVAL = 11.47
_TASKS_PER_JOB = np.array([0.1237, 0.1603, 0.0961, 0.1026, 0.1313, 0.0546, 0.0581, 0.0266, 0.0387, 0.0387, 0.0895, 0.0798])
_LOG_INSTANCES = (1.708, 2.098)
_LOG_DURATION = (2.668, 1.519)
_LOG_MEMORY = (-5.092, 0.399)
_CPU_VALUES = np.array([0.5, 1.0, 0.4, 0.75, 0.55, 0.65, 0.7, 0.6])
_CPU_WEIGHTS = np.array([0.695, 0.2924, 0.0048, 0.0032, 0.0015, 0.0012, 0.0009, 0.0007])


def alibaba_like(jobs: int = 100, seed: int = 0, max_instances: int = 2000) -> list[JobSpec]:
    """``jobs`` jobs drawn from Alibaba-v2017-like distributions; the same seed gives the same jobs.

    ``max_instances`` caps instances per task (the trace's tail reaches 36,326),
    which keeps small demo runs quick.
    """
    if jobs < 0:
        raise ValueError(f"jobs must be >= 0, got {jobs}")
    rng = np.random.default_rng(seed)
    submit = np.floor(np.cumsum(rng.exponential(_MEAN_INTERARRIVAL, jobs)))
    submit -= submit[0] if jobs else 0
    probabilities = _TASKS_PER_JOB / _TASKS_PER_JOB.sum()
    cpu_weights = _CPU_WEIGHTS / _CPU_WEIGHTS.sum()
    out = []
    for j in range(jobs):
        n = int(rng.choice(len(probabilities), p=probabilities)) + 1
        if n == len(probabilities):
            n = int(rng.integers(12, 41))
        instances = np.clip(np.rint(rng.lognormal(*_LOG_INSTANCES, n)), 1, max_instances).astype(int)
        duration = np.maximum(1.0, np.round(rng.lognormal(*_LOG_DURATION, n), 3))
        cpu = rng.choice(_CPU_VALUES, size=n, p=cpu_weights)
        memory = np.round(rng.lognormal(*_LOG_MEMORY, n), 6)
        tasks = tuple(
            TaskSpec(
                id=t + 1,
                instances=int(instances[t]),
                demand={"cpu": float(cpu[t]), "memory": float(memory[t])},
                duration=float(duration[t]),
            )
            for t in range(n)
        )
        out.append(JobSpec(j + 1, float(submit[j]), tasks))
    return out
