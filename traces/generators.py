"""The workload generators, each declared once in `WORKLOAD_GENERATORS` (what makes its jobs and cluster,
whether it takes a load, the task window its paper shows the scheduler), and `generate` by name, as the command
line's ``--generator`` names them.

Apart from `traces.synthetic` because one of them, deepk8s, replays real task sequences
(`traces.deepk8s`), which itself falls back on the synthetic Alibaba-like jobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from cloudsim.engine.envs.deepk8s import DEEPK8S_WINDOW
from cloudsim.engine.specs import ClusterSpec, JobSpec
from traces.deepk8s import DEFAULT_TASKS, deepk8s_cluster, deepk8s_tasks, deepk8s_workload
from traces.synthetic import (DEEPRM, DEEPRM_PLUS, RLSK, alibaba_like, bimodal_cluster, deeprm_workload,
                              poisson_workload, rlsk_workload)

__all__ = ["GENERATORS", "Generator", "WORKLOAD_GENERATORS", "generate", "generator_skips"]


@dataclass(frozen=True)
class Generator:
    """One workload generator, by its ``--generator`` name.

    Attributes:
        name: its name on the command line.
        make: ``make(jobs, seed, load) -> (jobs, cluster)``: the jobs (``jobs=None``: its default count) and the
            cluster its paper runs them on.
        loaded: whether it takes a target load (``--load``); the others replay a trace's arrivals or a fitted
            model's.
        window: the tasks its paper's scheduler sees at once, which the heuristics then see too; None: all.
        skips: what it left out of the real data it is built from, by reason (none for the synthetic ones).
    """

    name: str
    make: Callable[[int | None, int, float], tuple[list[JobSpec], ClusterSpec]]
    loaded: bool = True
    window: int | None = None
    skips: Callable[[], dict[str, int]] | None = None


def _count(jobs: int | None) -> dict[str, int]:
    return {} if jobs is None else {"jobs": jobs}


WORKLOAD_GENERATORS: dict[str, Generator] = {generator.name: generator for generator in (
    Generator("alibaba-like", lambda jobs, seed, load: (
        alibaba_like(seed=seed, **_count(jobs)), ClusterSpec.uniform(5, {"cpu": 64, "memory": 1, "disk": 1})),
        loaded=False),
    Generator("deeprm", lambda jobs, seed, load: (
        deeprm_workload(load, seed=seed, **_count(jobs)), bimodal_cluster(1, 10, DEEPRM))),
    Generator("deepk8s", lambda jobs, seed, load: (
        deepk8s_workload(seed, jobs if jobs is not None else DEFAULT_TASKS), deepk8s_cluster()),
        loaded=False, window=DEEPK8S_WINDOW, skips=lambda: dict(deepk8s_tasks()[1])),
    Generator("poisson", lambda jobs, seed, load: (
        poisson_workload(load, seed=seed, **_count(jobs)), bimodal_cluster(1, 10, DEEPRM_PLUS))),
    Generator("rlsk", lambda jobs, seed, load: (
        rlsk_workload(load, seed=seed, **_count(jobs)), bimodal_cluster(3, 1, RLSK))),
)}
"""Every workload generator by name: a new one is its function plus one `Generator` line here."""
GENERATORS = tuple(WORKLOAD_GENERATORS)
"""The generators' names, in the order the command line lists them."""


def generator_skips(name: str) -> dict[str, int]:
    """What a generator built from real data left out of the trace, by reason (empty for the others)."""
    skips = WORKLOAD_GENERATORS[name].skips
    return skips() if skips is not None else {}


def generate(name: str, jobs: int | None = None, seed: int = 0, load: float = 0.7) -> tuple[list[JobSpec], ClusterSpec]:
    """(jobs, the cluster its paper runs them on) for a generator named in `GENERATORS`.

    ``jobs=None`` takes each generator's default count; ``load`` applies to the
    bimodal generators. Clusters: alibaba-like, DeepJS's 5 machines of (64 cpu,
    1 memory, 1 disk); deeprm and poisson, one pool of 10 units per resource;
    rlsk, 3 clusters of 1 unit per resource; deepk8s (real v2017 task sequences,
    `traces.deepk8s`, where ``jobs`` is the number of tasks and ``load`` is not
    used), 5 machines of 10 cpu and 64 memory.
    """
    if name not in WORKLOAD_GENERATORS:
        raise ValueError(f"unknown generator {name!r}; choose from {', '.join(GENERATORS)}")
    return WORKLOAD_GENERATORS[name].make(jobs, seed, load)
