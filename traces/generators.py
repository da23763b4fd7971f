"""The workload generators by name (`generate`), as the command line's ``--generator`` names them.

Apart from `traces.synthetic` because one of them, deepk8s, replays real task sequences
(`traces.deepk8s`), which itself falls back on the synthetic Alibaba-like jobs.
"""

from __future__ import annotations

from cloudsim.specs import ClusterSpec, JobSpec
from traces.deepk8s import DEFAULT_TASKS, deepk8s_cluster, deepk8s_tasks, deepk8s_workload
from traces.synthetic import (DEEPRM, DEEPRM_PLUS, RLSK, alibaba_like, bimodal_cluster, deeprm_workload,
                              poisson_workload, rlsk_workload)

__all__ = ["GENERATORS", "generate", "generator_skips"]

GENERATORS = ("alibaba-like", "deeprm", "deepk8s", "poisson", "rlsk")


def generator_skips(name: str) -> dict[str, int]:
    """What a generator built from real data left out of the trace, by reason (empty for the others)."""
    if name == "deepk8s":
        return dict(deepk8s_tasks()[1])
    return {}


def generate(name: str, jobs: int | None = None, seed: int = 0, load: float = 0.7) -> tuple[list[JobSpec], ClusterSpec]:
    """(jobs, the cluster its paper runs them on) for a generator named in `GENERATORS`.

    ``jobs=None`` takes each generator's default count; ``load`` applies to the
    bimodal generators. Clusters: alibaba-like, DeepJS's 5 machines of (64 cpu,
    1 memory, 1 disk); deeprm and poisson, one pool of 10 units per resource;
    rlsk, 3 clusters of 1 unit per resource; deepk8s (real v2017 task sequences,
    `traces.deepk8s`, where ``jobs`` is the number of tasks and ``load`` is not
    used), 5 machines of 10 cpu and 64 memory.
    """
    count = {} if jobs is None else {"jobs": jobs}
    if name == "alibaba-like":
        return alibaba_like(seed=seed, **count), ClusterSpec.uniform(5, {"cpu": 64, "memory": 1, "disk": 1})
    if name == "deeprm":
        return deeprm_workload(load, seed=seed, **count), bimodal_cluster(1, 10, DEEPRM)
    if name == "deepk8s":
        return deepk8s_workload(seed, jobs if jobs is not None else DEFAULT_TASKS), deepk8s_cluster()
    if name == "poisson":
        return poisson_workload(load, seed=seed, **count), bimodal_cluster(1, 10, DEEPRM_PLUS)
    if name == "rlsk":
        return rlsk_workload(load, seed=seed, **count), bimodal_cluster(3, 1, RLSK)
    raise ValueError(f"unknown generator {name!r}; choose from {', '.join(GENERATORS)}")
