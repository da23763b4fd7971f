"""Plans from one-decision rules: a view of the instant as a plan's earlier decisions leave it.

A broker that answers a round with a plan (`cloudsim.engine.broker`, "Rounds and plans") must choose
each decision as it would one at a time: after the earlier decisions of the round. `PlannedView`
is the round's view with those decisions counted: free resources (with the engine's own running
totals, `cloudsim.engine.cluster.instances_applied`), waiting instances, the fit matrix, what each job's
running instances hold, and the reservations and each machine's future (`reservations`,
`fits_from`, `earliest_start`, through the engine's own `cloudsim.engine.plan_check.PlanCheck`). A rule
written for one decision reads it as it reads a view, and `plan_of` asks the rule again after each
decision, until it waits.

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

from cloudsim.engine.broker import ClusterView, Decision, Plan, sequential_fit_count
from cloudsim.engine.plan_check import PlanCheck
from cloudsim.engine.cluster import instances_applied
from cloudsim.engine.devices import device_fit_count, device_fits
from cloudsim.engine.reservations import Reservation

__all__ = ["PlannedView", "plan_of"]


class PlannedView:
    """``view`` after the decisions given to `apply`: free, waiting, fits and job usage follow them;
    everything else is read from ``view`` (the same instant).

    The fit matrix is not copied: the machines a plan started on keep their own fit rows, and a
    count of fitting machines per task answers `tasks_fitting_some` in O(tasks); ``fits`` (the
    whole matrix) is built only for a rule that reads it.
    """

    def __init__(self, view: ClusterView) -> None:
        self._view = view
        self.free = view.free.copy()
        self.waiting = view.waiting.copy()
        # The fit rows of the machines the plan started on, in a buffer that grows: slot -> machine, row.
        self._slot: dict[int, int] = {}
        self._machines = np.empty(8, dtype=np.int64)
        self._rows = np.empty((8, view.num_tasks), dtype=bool)
        self._fitting: np.ndarray | None = None  # per task, the machines that fit it now (made on first use)
        self._fits: np.ndarray | None = None
        self._job_usage: np.ndarray | None = None
        self._usage_added: list[tuple[int, np.ndarray]] = []  # (job row, demand held), until job_usage is read
        self._applied: list[Decision] = []
        self._reserved: list[Reservation] = []  # the plan's reservations
        self._check: PlanCheck | None = None  # the plan's holdings over time, made when a rule asks for the future

    def __getattr__(self, name: str):
        return getattr(self._view, name)

    @property
    def device_free(self) -> np.ndarray:
        """The devices' free milli-units as the plan's earlier decisions leave them (the engine's own check
        picks their devices)."""
        if self._check is None:
            return self._view.device_free
        free = self._view.device_free.copy()
        for machine in {d.machine for d in self._applied}:
            free[machine] = self._check.device_free_of(machine)
        return free

    # ---------------------------------------------------------------- fits
    def _row(self, machine: int) -> np.ndarray:
        slot = self._slot.get(machine)
        return self._view.fits[machine] if slot is None else self._rows[slot]

    @property
    def fits(self) -> np.ndarray:
        if self._fits is None:
            touched = len(self._slot)
            self._fits = self._view.fits.copy()
            self._fits[self._machines[:touched]] = self._rows[:touched]
            self._fits[:, self.waiting == 0] = False
        return self._fits

    @property
    def machine_fits_some(self) -> np.ndarray:
        return self.fits.any(axis=1)

    @property
    def fit_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        return np.nonzero(self.fits)

    def tasks_fitting_some(self) -> np.ndarray:
        if self._fitting is None:  # the view's counts, with the rows the plan changed so far
            touched = len(self._slot)
            self._fitting = self._view.machines_fitting_each.astype(np.int64)
            self._fitting += self._rows[:touched].sum(axis=0) - self._view.fits[self._machines[:touched]].sum(axis=0)
        return (self._fitting > 0) & (self.waiting > 0)

    def machines_fitting(self, task: int) -> np.ndarray:
        if self.waiting[task] == 0:
            return np.zeros(self.num_machines, dtype=bool)
        column = self._view.fits[:, task].copy()
        touched = len(self._slot)
        column[self._machines[:touched]] = self._rows[:touched, task]
        return column

    def fits_one(self, machine: int, task: int) -> bool:
        return bool(self._row(machine)[task]) and self.waiting[task] > 0

    # ------------------------------------------------------------- the future
    def _future(self) -> PlanCheck:
        if self._check is None:
            self._check = PlanCheck(self._view, "plan", size=None)
            for position, decision in enumerate(self._applied):
                self._check.check(position, decision)
        return self._check

    @property
    def reservations(self) -> tuple[Reservation, ...]:
        return (*self._view.reservations, *self._reserved)

    def fits_from(self, machine: int, task: int, count: int = 1, at: float | None = None) -> bool:
        return self._future().fits_from(machine, task, count, at)

    def earliest_start(self, machine: int, task: int, count: int = 1) -> float:
        return self._future().earliest_start(machine, task, count)

    # ------------------------------------------------------------- the rest
    @property
    def job_usage(self) -> np.ndarray:
        if self._job_usage is None:  # read first now: the plan's starts so far added in their order
            self._job_usage = self._view.job_usage.copy()
            for job, held in self._usage_added:
                self._job_usage[job] += held
        return self._job_usage

    def waiting_instances(self, task: int) -> int:
        return int(self.waiting[task])

    def fit_count(self, machine: int, task: int) -> int:
        if not self.fits_one(machine, task):
            return 0
        fit = sequential_fit_count(self.free[machine], self.demand[task], int(self.waiting[task]))
        if self._view.constrained:  # (fits_one has checked the attributes)
            count, milli = (int(v) for v in self.device_request[task])
            fit = min(fit, device_fit_count(self._future().device_free_of(machine), count, milli))
        return fit

    def apply(self, decision: Decision) -> None:
        """Count a decision: instances started now, or reserved (the engine applies it only with the whole plan)."""
        machine, task, count = decision.machine, decision.task, decision.count
        demand = self.demand[task]
        reserves = decision.at is not None and decision.at != self.time
        constrained = self._view.constrained  # the engine's check picks the devices: keep it
        if reserves or self._check is not None or constrained:  # the plan's holdings over time are in use: keep them
            future = self._future()
            taken, duration = future.stay(task, count)
            future.check(len(self._applied), decision)
        self._applied.append(decision)
        self.waiting[task] -= count
        if reserves:  # it holds nothing now: free resources and fits stay
            at = float(decision.at)
            self._reserved.append(Reservation(machine, int(self.task_index[task]), count, at, at + duration,
                                              tuple(taken.tolist())))
            if self._fits is not None and self.waiting[task] == 0:
                self._fits[:, task] = False
            return
        self.free[machine] = instances_applied(self.free[machine], demand, count, np.subtract)
        row = self.up[machine] & (self.demand <= self.free[machine]).all(axis=1)
        if constrained:
            row &= device_fits(self._future().device_free_of(machine), self.device_request)
            row &= self._view.accepted_by(machine)
        if self._fitting is not None:
            self._fitting += row.astype(np.int64) - self._row(machine)
        slot = self._slot.get(machine)
        if slot is None:
            slot = self._slot[machine] = len(self._slot)
            if slot == len(self._machines):  # full: twice the room
                self._machines = np.concatenate([self._machines, np.empty_like(self._machines)])
                self._rows = np.concatenate([self._rows, np.empty_like(self._rows)])
            self._machines[slot] = machine
        self._rows[slot] = row
        if self._fits is not None:
            self._fits[machine] = row & (self.waiting > 0)
            if self.waiting[task] == 0:
                self._fits[:, task] = False
        if self._job_usage is not None:  # as the task table adds it
            self._job_usage[self.job_index[task]] += count * demand
        else:
            self._usage_added.append((self.job_index[task], count * demand))


def plan_of(view: ClusterView, decide: Callable[[ClusterView | PlannedView], Decision | None]) -> Plan | None:
    """The round's decisions of a one-decision rule ``decide``, each taken on the view its earlier
    ones leave, as one plan (None: it waits). The plan is final (the engine asks no more this round)
    unless a task window ended it early."""
    decision = decide(view)  # the first on the view itself: a round with nothing to start costs no copy
    if decision is None:
        return None
    planned = PlannedView(view)
    windowed = view.backlog > 0
    plan = []
    while decision is not None:
        plan.append(decision)
        planned.apply(decision)
        if windowed and planned.waiting[decision.task] == 0:
            return Plan(plan)  # a backlog task enters the window: the next view shows it
        decision = decide(planned)
    return Plan(plan, final=True)  # the rule waits on the view the plan leaves
