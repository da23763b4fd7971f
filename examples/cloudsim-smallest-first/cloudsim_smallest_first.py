"""An example of a broker package: one broker, announced to cloudsim through the ``cloudsim.brokers``
entry-point group (see pyproject.toml), so that once installed ``--brokers smallest-first`` works in
every cloudsim command and ``cloudsim brokers`` lists it with this package's name and version."""

from __future__ import annotations

import numpy as np

from cloudsim import Decision

__all__ = ["SmallestFirst"]


class SmallestFirst:
    """The fit pair whose task asks for the least cpu, the first such pair in machine-major order on ties.

    Args:
        resource: the resource compared (default "cpu").
    """

    name = "smallest-first"
    empty_rounds = False  # nothing waiting: nothing to decide, no round needed

    def __init__(self, resource: str = "cpu") -> None:
        self.resource = resource

    def decide(self, view):
        machines, tasks = view.fit_pairs  # every (machine, task) that fits now, machine-major
        if len(tasks) == 0:
            return None  # nothing fits: wait for the next event
        column = view.resources.index(self.resource)
        best = int(np.argmin(view.demand[tasks, column]))  # argmin: the first pair on ties
        return Decision(int(machines[best]), int(tasks[best]))
