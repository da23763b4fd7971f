"""`PlanCheck`: a broker's plan checked decision by decision against the state the earlier ones leave,
before the engine applies any of it (`cloudsim.Simulation.apply`), so that a bad decision anywhere is
refused whole with a message naming it; `check_decision` does the same for one decision. `check_plan` is
what the engine calls: a long plan of plain starts is checked first in one compiled call (`cloudsim.engine.kernels`)
and comes back as `Starts` arrays; anything else, or a plan that call refuses, goes through `PlanCheck`."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from cloudsim.engine.broker import (ArrayPlan, ClusterView, Decision, InvalidDecisionError, Suspend, is_index,
                             sequential_fit, sequential_fit_count)
from cloudsim.engine.cluster import ClusterState, instances_applied
from cloudsim.engine.devices import default_devices, device_problem
from cloudsim.engine.reservations import on_tick

__all__ = ["COMPILED_CHECK_FROM", "CheckedDecision", "PlanCheck", "Starts", "check_decision", "check_plan"]

# Plans this long are checked compiled (`cloudsim.engine.kernels`). Importing numba costs 0.4 s once, which a short
# plan does not repay; once a compiled broker has imported it, every bulk plan is checked compiled.
COMPILED_CHECK_FROM = 256


@dataclass(slots=True)
class CheckedDecision:
    """A decision known to be possible: ``count`` instances of the view's task ``task`` on ``machine``,
    started now (``at`` None) or reserved from ``at``."""

    machine: int
    task: int
    count: int
    at: float | None = None
    free_after: np.ndarray | None = field(default=None, repr=False, compare=False)
    """The machine's free vector after these instances start (None: not computed; the engine computes it)."""
    devices: list[tuple[int, ...]] | None = None
    """Per instance, the devices it takes (None: the task asks for none)."""


class PlanCheck:
    """Checks the decisions of one plan in order, each against the state the earlier ones leave.

    A plan means its decisions given one by one, in order; every decision indexes the tasks of
    the view the plan answers. The check keeps what the earlier decisions would change (free
    resources of the machines they use, computed as the engine computes them; waiting counts;
    the holdings of their instances over time) without changing the engine, so that a plan
    with a bad decision anywhere is refused whole.

    Args:
        view: the view the plan answers.
        broker: the broker's name, for messages.
        tick: the scheduler's tick (None: event-driven): a reservation starts at a tick.
        size: how many decisions the plan has (messages of a plan of several name the position); None
            for a plan still being made (`agents.planning.PlannedView`): every decision's effects are
            kept for the next.
    """

    def __init__(self, view: ClusterView, broker: str, tick: float | None = None, size: int | None = 1) -> None:
        self.view, self.broker, self.tick, self.size = view, broker, tick, size
        self._free: dict[int, np.ndarray] = {}  # machine -> free vector after the plan's earlier starts
        self._waiting: dict[int, int] = {}  # view task -> waiting instances left
        self._taken: dict[int, int] = {}  # view task -> instances the plan's earlier decisions took
        # machine -> what the plan's earlier decisions hold on it: (start, view task, instances the plan had
        # taken of the task before, count), turned into holdings over time only when a check needs them
        self._held: dict[int, list[tuple[float, int, int, int]]] = {}
        self._reserved: set[int] = set()  # machines on which the plan's earlier decisions reserve
        self._device_free: dict[int, np.ndarray] = {}  # machine -> its devices' free milli-units after them

    def _where(self, position: int) -> str:
        if self.size is None:
            plan = f"decision {position} of the plan: "
        else:
            plan = f"decision {position} of the plan ({self.size} decisions): " if self.size > 1 else ""
        return f"broker {self.broker!r} at t={self.view.time}: {plan}"

    def check(self, position: int, decision: object) -> CheckedDecision:
        """Check the plan's decision at ``position`` (after those before it) and count its effects.

        Raises `InvalidDecisionError` naming the broker, the instant, the position in the plan, the
        machine and the task, and saying what is wrong, for anything the cluster cannot do then.
        """
        view = self.view
        if isinstance(decision, Suspend):
            raise InvalidDecisionError(
                f"{self._where(position)}returned {decision!r} among starts; a suspension changes the view, so it is "
                f"answered alone (a Suspend, or a list of them) and the next view shows what it freed")
        if isinstance(decision, Decision):
            fields = (decision.machine, decision.task, decision.count)
        elif isinstance(decision, tuple) and len(decision) in (2, 3):
            fields = (*decision, 1) if len(decision) == 2 else decision
        else:
            raise InvalidDecisionError(
                f"{self._where(position)}returned {decision!r}; return a Decision(machine, task, count), a "
                f"(machine, task[, count]) tuple, a list of them (a plan), or None to wait")
        machine, task, count = fields
        if not (type(machine) is type(task) is type(count) is int
                or (is_index(machine) and is_index(task) and is_index(count))):
            raise InvalidDecisionError(f"{self._where(position)}machine, task and count must be integers, "
                                       f"got {fields!r}")
        machine, task, count = int(machine), int(task), int(count)
        if not (0 <= machine < view.num_machines and 0 <= task < view.num_tasks):
            where = f"{self._where(position)}machine {machine}, task {task}: no such"
            if not 0 <= machine < view.num_machines:
                raise InvalidDecisionError(f"{where} machine (the cluster has {view.num_machines})")
            raise InvalidDecisionError(f"{where} task (the view has {view.num_tasks} ready tasks)")
        at = decision.at if isinstance(decision, Decision) else None
        named = decision.devices if isinstance(decision, Decision) else None
        if named is not None or (view._state.constrained and (view.device_request[task, 0] > 0
                                                              or view.task_accepts(task))):
            return self._devices(position, machine, task, count, at, named)
        if at is not None and at != view.time:
            return self._reservation(self._where(position), machine, task, count, at)
        timeline = view._timeline
        reserved = timeline is not None and (timeline.has_reservations(machine) or machine in self._reserved)
        # A view's task has at least one waiting instance, and one instance fits exactly when the
        # (up-to-date) fit matrix says so: the common case needs nothing more.
        if (count == 1 and machine not in self._free and task not in self._waiting and not reserved
                and view.fits_one(machine, task)):
            if self.size is None or position < self.size - 1:
                self._took(machine, task, count, view.time)
                return CheckedDecision(machine, task, count, free_after=self._free[machine])  # computed once
            return CheckedDecision(machine, task, count)
        waiting = self._waiting_of(task)
        free = self._free.get(machine)
        demand = view.demand[task]
        left = None
        if 1 <= count <= waiting and view.up[machine]:
            # the free vector before each of the count starts must hold one more instance
            fitting, left = sequential_fit(view.free[machine] if free is None else free, demand, count)
            if fitting < count:
                left = None
        if left is None:
            fitting = 0
            if view.up[machine]:
                fitting = view.fit_count(machine, task) if free is None else \
                    sequential_fit_count(free, demand, waiting)
            job_id, task_id = view.task_key(task)
            where = f"{self._where(position)}machine {machine}, task {task} (job {job_id!r}, task {task_id!r})"
            if not 1 <= count <= waiting:
                raise InvalidDecisionError(f"{where}: count {count} not in 1..{waiting} waiting instances")
            if not view.up[machine]:
                raise InvalidDecisionError(f"{where}: the machine is down")
            now_free = view.free[machine] if free is None else free
            raise InvalidDecisionError(
                f"{where}: {count} instance(s) do not fit: only {fitting} fit; free "
                f"{dict(zip(view.resources, now_free.tolist()))}, demand per instance "
                f"{dict(zip(view.resources, view.demand[task].tolist()))}")
        if reserved and not self.fits_from(machine, task, count):
            raise InvalidDecisionError(
                f"{self._where(position)}machine {machine}, task {task}: {count} instance(s) started now would "
                f"take resources reserved on the machine for later (view.reservations); start them elsewhere, or "
                f"reserve them at view.earliest_start(...)")
        if self.size is None or position < self.size - 1:  # a later decision of the plan sees its effects
            self._took(machine, task, count, view.time, left)
        return CheckedDecision(machine, task, count, free_after=left)

    def _devices(self, position: int, machine: int, task: int, count: int, at: object,
                 named: object) -> CheckedDecision:
        """Check a decision of a task that asks for devices or machine attributes, or that names devices,
        and give each instance its devices: ``named``, or the default rule's (`cloudsim.engine.devices`)."""
        view = self.view

        def refuse(problem: str) -> InvalidDecisionError:  # the message is made only when something is wrong
            job_id, task_id = view.task_key(task)
            return InvalidDecisionError(f"{self._where(position)}machine {machine}, task {task} (job {job_id!r}, "
                                        f"task {task_id!r}): {problem}")

        need, milli = (int(v) for v in view.device_request[task])
        if named is not None and need == 0:
            raise refuse(f"names devices {named!r}, but the task asks for none; leave devices out")
        if at is not None and at != view.time:
            raise refuse("a task that asks for devices or machine attributes cannot be reserved for later "
                         "(reservations do not model devices); start it now")
        if named is not None and count != 1:
            raise refuse(f"names devices for {count} instances; name one instance's devices at a time (count 1), "
                         "or leave devices out for the default rule")
        waiting = self._waiting_of(task)
        if not 1 <= count <= waiting:
            raise refuse(f"count {count} not in 1..{waiting} waiting instances")
        if not view.up[machine]:
            raise refuse("the machine is down")
        if view.task_accepts(task) and not view.accepts(task)[machine]:  # (a cached mask; message on refusal)
            name, values = next((n, v) for n, v in view.task_accepts(task)
                                if view.machine_attribute(n)[machine] not in v)
            value = view.machine_attribute(name)[machine]
            raise refuse(f"the machine's {name} {value or '(none)'!r} is not one the task accepts "
                         f"({', '.join(values)})")
        free = view.free[machine] if machine not in self._free else self._free[machine]
        fitting, left = sequential_fit(free, view.demand[task], count)
        if fitting < count:
            raise refuse(
                f"{count} instance(s) do not fit: only {fitting} fit; free "
                f"{dict(zip(view.resources, free.tolist()))}, demand per instance "
                f"{dict(zip(view.resources, view.demand[task].tolist()))}")
        device_free = (view.device_free[machine] if machine not in self._device_free
                       else self._device_free[machine]).copy()
        chosen = []
        for k in range(count if need else 0):
            if named is not None:
                problem = device_problem(device_free, named, need, milli)
                if problem is not None:
                    raise refuse(problem)
                devices = tuple(int(d) for d in named)
            else:
                devices = default_devices(device_free, need, milli)
                if devices is None:
                    raise refuse(
                        f"{count} instance(s) do not fit the machine's devices: only {k} fit; free milli per "
                        f"device {device_free[device_free >= 0].tolist()}, each instance asks for {need} device(s) of "
                        f"{milli}")
            np.subtract.at(device_free, list(devices), milli)
            chosen.append(devices)
        timeline = view._timeline
        if ((timeline is not None and timeline.has_reservations(machine)) or machine in self._reserved) \
                and not self.fits_from(machine, task, count):
            raise refuse(
                f"{count} instance(s) started now would take resources reserved on the machine for "
                f"later (view.reservations); start them elsewhere")
        if self.size is None or position < self.size - 1:
            self._took(machine, task, count, view.time, left)
            self._device_free[machine] = device_free
        return CheckedDecision(machine, task, count, free_after=left, devices=chosen if need else None)

    def device_free_of(self, machine: int) -> np.ndarray:
        """The free milli-units of ``machine``'s devices as the plan's earlier decisions leave them."""
        free = self._device_free.get(machine)
        return self.view.device_free[machine] if free is None else free

    def _reservation(self, where: str, machine: int, task: int, count: int, at: object) -> CheckedDecision:
        view = self.view
        now = view.time
        where = f"{where}reservation of machine {machine}, task {task} at {at!r}"
        waiting = self._waiting_of(task)
        if not 1 <= count <= waiting:
            raise InvalidDecisionError(f"{where}: count {count} not in 1..{waiting} waiting instances")
        if isinstance(at, bool) or not isinstance(at, (int, float, np.integer, np.floating)) or not math.isfinite(at):
            raise InvalidDecisionError(f"{where}: 'at' must be a finite time, or None to start now")
        at = float(at)
        if at < now:
            raise InvalidDecisionError(f"{where}: the time has passed; reserve at a time >= {now}")
        if self.tick is not None and not on_tick(at, now, self.tick):
            raise InvalidDecisionError(f"{where}: with a scheduler tick of {self.tick}, a reservation starts at a "
                                       "tick; reserve a whole number of ticks ahead")
        if not self.fits_from(machine, task, count, at):
            times, profile = view._future().free_profile(machine, now, self._free.get(machine),
                                                         self.holdings(machine))
            raise InvalidDecisionError(
                f"{where}: {count} instance(s) do not fit the machine's free profile for their whole duration "
                f"(profile from now: times {times.tolist()}, free {profile.tolist()}); reserve at "
                f"view.earliest_start(machine, task) = {view.earliest_start(machine, task, count)} or elsewhere")
        self._held.setdefault(machine, []).append((at, task, self._taken.get(task, 0), count))
        self._reserved.add(machine)
        self._waiting[task] = waiting - count
        self._taken[task] = self._taken.get(task, 0) + count
        return CheckedDecision(machine, task, count, at)

    def _waiting_of(self, task: int) -> int:
        waiting = self._waiting.get(task)
        return self.view.waiting_instances(task) if waiting is None else waiting

    def _durations(self, task: int, count: int, taken: int | None = None) -> list[float]:
        """The durations of the next ``count`` instances of ``task`` after the ``taken`` ones (default:
        those the plan took so far)."""
        taken = self._taken.get(task, 0) if taken is None else taken
        return self.view._tasks.next_durations(int(self.view.task_index[task]), taken + count)[taken:]

    def holdings(self, machine: int) -> list[tuple[float, float, np.ndarray]]:
        """(start, end, demand) of the instances the plan's earlier decisions start or reserve on
        ``machine``: one holding per run of equal durations, as the engine's instance groups."""
        holdings = []
        for start, task, taken, count in self._held.get(machine, ()):
            durations, demand = self._durations(task, count, taken), self.view.demand[task]
            if start > self.view.time:  # a reservation holds all its instances until its longest one ends
                holdings.append((start, start + max(durations), demand * count))
                continue
            for duration in sorted(set(durations)):  # started now: each run of equal durations ends together
                holdings.append((start, start + duration, demand * durations.count(duration)))
        return holdings

    def stay(self, task: int, count: int) -> tuple[np.ndarray, float]:
        """What ``count`` instances of ``task`` take together, and how long the longest of them runs
        (the next instances, after those the plan took)."""
        return self.view.demand[task] * count, max(self._durations(task, count), default=0.0)

    def fits_from(self, machine: int, task: int, count: int = 1, at: float | None = None) -> bool:
        """`ClusterView.fits_from` on the machine as the plan's earlier decisions leave it."""
        demand, duration = self.stay(task, count)
        now = self.view.time
        start = now if at is None else float(at)
        return self.view._future().fits(machine, demand, start, start + duration, now, self._free.get(machine),
                                        self.holdings(machine))

    def earliest_start(self, machine: int, task: int, count: int = 1) -> float:
        """`ClusterView.earliest_start` on the machine as the plan's earlier decisions leave it."""
        demand, duration = self.stay(task, count)
        return self.view._future().earliest_start(machine, demand, duration, self.view.time,
                                                  self._free.get(machine), self.holdings(machine))

    def _took(self, machine: int, task: int, count: int, now: float, free_after: np.ndarray | None = None) -> None:
        """Count a start now: the machine's free vector (``free_after``, when known), the task's waiting
        instances, their holdings."""
        view = self.view
        if free_after is None:
            free = view.free[machine] if machine not in self._free else self._free[machine]
            free_after = instances_applied(free, view.demand[task], count, np.subtract)
        self._free[machine] = free_after
        self._held.setdefault(machine, []).append((now, task, self._taken.get(task, 0), count))
        self._waiting[task] = self._waiting_of(task) - count
        self._taken[task] = self._taken.get(task, 0) + count


def check_decision(decision: object, view: ClusterView, broker: str) -> tuple[int, int, int]:
    """(machine, task, count) of a single decision, once it is known to be possible now
    (`PlanCheck` of a plan of one; the engine checks plans with `PlanCheck`)."""
    checked = PlanCheck(view, broker).check(0, decision)
    return checked.machine, checked.task, checked.count


class Starts(NamedTuple):
    """A checked plan of starts now, as arrays: ``count[k]`` instances of the view's task ``task[k]`` on
    ``machine[k]``, which leave the machine's free vector ``free_after[k]``."""

    machine: np.ndarray
    task: np.ndarray
    count: np.ndarray
    free_after: np.ndarray

    @classmethod
    def of(cls, checked: list[CheckedDecision], view: ClusterView, state: ClusterState) -> "Starts | None":
        """The checked decisions as arrays; None when one of them is a reservation."""
        if any(item.at is not None for item in checked):
            return None
        free_after, free = [], {}  # the check leaves out the free vectors nothing later in the plan reads
        for item in checked:
            after = item.free_after
            if after is None:
                before = free.get(item.machine)
                before = state.free[item.machine] if before is None else before
                after = instances_applied(before, view.demand[item.task], item.count, np.subtract)
            free[item.machine] = after
            free_after.append(after)
        fields = np.array([(item.machine, item.task, item.count) for item in checked], dtype=np.int64)
        return cls(fields[:, 0], fields[:, 1], fields[:, 2], np.array(free_after))

    def decisions(self) -> list[CheckedDecision]:
        return [CheckedDecision(m, t, c, free_after=after) for m, t, c, after in
                zip(self.machine.tolist(), self.task.tolist(), self.count.tolist(), self.free_after)]


def check_plan(view: ClusterView, plan: list, *, broker: str, tick: float | None, bulk: bool,
               as_arrays: bool) -> "Starts | list[CheckedDecision]":
    """``plan`` (a list of decisions, or an `ArrayPlan`) about ``view``, checked: `Starts` when it was checked
    as arrays in one compiled call, else `PlanCheck`'s decisions (whose errors name the decision at fault).

    ``as_arrays``: whether starts may be checked as arrays at all (not while devices constrain the machines or
    reservations are held on the cluster); ``bulk``: whether the plan is long enough to be applied as arrays.
    An `ArrayPlan` is checked as arrays whenever it may be (a broker made it so); a list, when it is bulk and
    long enough for the compiled check to pay (`COMPILED_CHECK_FROM`, or numba already imported)."""
    checked = None
    if as_arrays:
        if isinstance(plan, ArrayPlan):
            checked = _checked_arrays(view, plan.machine, plan.task, plan.count)
        elif bulk and (len(plan) >= COMPILED_CHECK_FROM or "numba" in sys.modules):
            checked = _checked_compiled(view, plan)
    if checked is None:  # the reference checks, and their messages
        check = PlanCheck(view, broker, tick, len(plan))
        checked = [check.check(position, item) for position, item in enumerate(plan)]
    return checked


def _checked_compiled(view: ClusterView, plan: list) -> "Starts | None":
    """A plan of plain starts now, checked in one compiled call; None when it has anything else (a
    reservation, a tuple, a number that is not an int) or a decision that cannot happen: `PlanCheck` then
    checks it and names what is wrong."""
    fields = []
    for item in plan:
        if type(item) is not Decision or item.at is not None:
            return None
        machine, task, count = item.machine, item.task, item.count
        if type(machine) is not int or type(task) is not int or type(count) is not int:
            return None
        fields.append((machine, task, count))
    machine, task, count = np.array(fields, dtype=np.int64).reshape(-1, 3).T
    return _checked_arrays(view, machine, task, count)


def _checked_arrays(view: ClusterView, machine: np.ndarray, task: np.ndarray, count: np.ndarray) -> "Starts | None":
    """Starts now given as arrays, checked in one compiled call; None when a start cannot happen (`PlanCheck`
    then checks them one by one and names what is wrong)."""
    from cloudsim.engine.kernels import check_starts  # numba: imported when a long plan first comes

    free_after = np.empty((len(machine), view.free.shape[1]))
    if check_starts(view.free.copy(), view.up, view.demand, view.waiting.copy(), machine, task, count,
                    free_after) >= 0:
        return None
    return Starts(machine, task, count, free_after)
