"""Plans from one-decision rules: a view of the instant as a plan's earlier decisions leave it.

A broker that answers a round with a plan (`cloudsim.broker`, "Rounds and plans") must choose
each decision as it would one at a time: after the earlier decisions of the round. `PlannedView`
is the round's view with those decisions counted: free resources (with the engine's own running
totals, `cloudsim.cluster.instances_applied`), waiting instances, the fit matrix and what each
job's running instances hold. A rule written for one decision reads it as it reads a view, and
`plan_of` asks the rule again after each decision, until it waits.

Task positions are those of the round's view, so the plan indexes them directly; a task with no
waiting instance left stays at its position with no fit (one at a time it would leave the view,
and the positions after it would shift: a rule must read positions relative to each other, as
"the first task that fits", never as fixed numbers). A windowed view (a backlog behind its
window) ends the plan when a task runs out of waiting instances: one at a time, the next backlog
task would then enter the window, and only a new view shows it.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from cloudsim.broker import ClusterView, Decision, sequential_fit_count
from cloudsim.cluster import instances_applied

__all__ = ["PlannedView", "plan_of"]


class PlannedView:
    """``view`` after the decisions given to `apply`: free, waiting, fits and job usage follow them;
    everything else is read from ``view`` (the same instant)."""

    def __init__(self, view: ClusterView) -> None:
        self._view = view
        self.free = view.free.copy()
        self.waiting = view.waiting.copy()
        self.fits = view.fits.copy()
        self._job_usage: np.ndarray | None = None

    def __getattr__(self, name: str):
        return getattr(self._view, name)

    @property
    def machine_fits_some(self) -> np.ndarray:
        return self.fits.any(axis=1)

    @property
    def fit_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        return np.nonzero(self.fits)

    @property
    def job_usage(self) -> np.ndarray:
        if self._job_usage is None:
            self._job_usage = self._view.job_usage.copy()
        return self._job_usage

    def fits_one(self, machine: int, task: int) -> bool:
        return bool(self.fits[machine, task])

    def waiting_instances(self, task: int) -> int:
        return int(self.waiting[task])

    def fit_count(self, machine: int, task: int) -> int:
        if not self.fits[machine, task]:
            return 0
        return sequential_fit_count(self.free[machine], self.demand[task], int(self.waiting[task]))

    def apply(self, decision: Decision) -> None:
        """Count a decision to start instances now (the engine applies it only with the whole plan)."""
        machine, task, count = decision.machine, decision.task, decision.count
        demand = self.demand[task]
        self.free[machine] = instances_applied(self.free[machine], demand, count, np.subtract)
        self.waiting[task] -= count
        self.fits[machine] = self.up[machine] & (self.demand <= self.free[machine]).all(axis=1) & (self.waiting > 0)
        if self.waiting[task] == 0:
            self.fits[:, task] = False
        if self._job_usage is not None:  # as the task table adds it
            self._job_usage[self.job_index[task]] += count * demand


def plan_of(view: ClusterView, decide: Callable[[PlannedView], Decision | None]) -> list[Decision] | None:
    """The round's decisions of a one-decision rule ``decide``, each taken on the view its earlier
    ones leave, as one plan (None: it waits)."""
    planned = PlannedView(view)
    windowed = view.backlog > 0
    plan = []
    while (decision := decide(planned)) is not None:
        if decision.at is not None and decision.at != view.time:
            raise ValueError("plan_of plans starts now; a rule that reserves answers one decision at a time")
        plan.append(decision)
        planned.apply(decision)
        if windowed and planned.waiting[decision.task] == 0:
            break  # a backlog task enters the window: the next view shows it
    return plan or None
