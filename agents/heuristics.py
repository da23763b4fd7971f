"""Classic placement heuristics as brokers: first-fit, Tetris and random.

Each one answers from the view's vectorised fit matrix; none loops over
machines x tasks in Python.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from cloudsim.broker import ClusterView, Decision

__all__ = ["FirstFit", "RandomFit", "Tetris"]


class FirstFit:
    """The first fit pair in machine-major order: the first machine that fits some
    waiting task, with the first such task (DeepJS's first-fit baseline).

    It answers with a count: while machine m still fits task t and t has waiting
    instances, no earlier machine and no earlier task can start to fit (free
    resources only shrink within an instant), so the next decisions would repeat
    (m, t). Starting them at once gives the same run as one at a time.
    """

    name = "first-fit"

    def decide(self, view: ClusterView) -> Decision | None:
        candidates = view.machine_fits_some
        machine = int(np.argmax(candidates)) if len(candidates) else 0
        if view.num_tasks == 0 or not candidates[machine]:
            return None
        task = int(np.argmax(view.fits[machine]))
        return Decision(machine, task, view.fit_count(machine, task))


class Tetris:
    """The fit pair with the largest dot product of machine free resources and
    task demand (Grandl et al., as used by DeepJS), the first one in
    machine-major order on ties.

    Args:
        resources: the dimensions scored. ``None`` means (cpu, memory), DeepJS's
            choice, when the cluster has both, else every resource.
    """

    name = "tetris"

    def __init__(self, resources: Sequence[str] | None = None) -> None:
        self.resources = tuple(resources) if resources is not None else None

    def _columns(self, view: ClusterView) -> list[int]:
        names = self.resources
        if names is None:
            names = ("cpu", "memory") if {"cpu", "memory"} <= set(view.resources) else view.resources
        missing = [r for r in names if r not in view.resources]
        if missing:
            raise ValueError(f"Tetris scores resources {missing!r} that the cluster lacks ({view.resources!r})")
        return [view.resources.index(r) for r in names]

    def decide(self, view: ClusterView) -> Decision | None:
        machines, tasks = view.fit_pairs
        if len(machines) == 0:
            return None
        columns = self._columns(view)
        score = (view.free[machines][:, columns] * view.demand[tasks][:, columns]).sum(axis=1)
        best = int(np.argmax(score))
        return Decision(int(machines[best]), int(tasks[best]))


class RandomFit:
    """A fit pair drawn uniformly at random, one instance at a time; seeded."""

    name = "random"

    def __init__(self, seed: int | None = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def decide(self, view: ClusterView) -> Decision | None:
        machines, tasks = view.fit_pairs
        if len(machines) == 0:
            return None
        pick = int(self.rng.integers(len(machines)))
        return Decision(int(machines[pick]), int(tasks[pick]))
