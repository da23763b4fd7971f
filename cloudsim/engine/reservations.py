"""Reservations: instances that start at a later time, and each machine's free resources over time.

DeepRM places a job at the earliest offset of its horizon at which it fits for
its whole duration, and EASY backfilling reserves the earliest start of the
head of the queue; both need the cluster's future, not only its present. The
future of a machine is known: every running instance ends at its start plus
its duration (unless the machine fails), and every reservation holds its
resources from its start to its end. `Timeline` keeps the pending reservations
and answers, per machine, the free resources as a step function of time (the
*free profile*), whether a demand fits it over an interval, and the earliest
time it does.

The engine (`cloudsim.engine.simulation.Simulation`) validates a reservation against
the profile when the broker makes it, refuses a start now that would take
resources a reservation holds, and starts reserved instances when their time
comes, at the decision round of that instant, after the instant's completions.
A reservation whose machine failed in the meantime is cancelled: its instances
wait again. Brokers that never reserve see no change at all.
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:
    from cloudsim.engine.cluster import ClusterState
    from cloudsim.engine.record import GroupTable
    from cloudsim.engine.tasks import TaskTable

__all__ = ["FIT_TOLERANCE", "Reservation", "TICKS_SLACK", "Timeline", "next_tick", "on_tick"]

FIT_TOLERANCE = 1e-9
"""Relative slack (of a machine's capacity) when reserved instances start: the profile
adds the same numbers as the engine, in another order, so the last bit may differ."""


@dataclass(frozen=True)
class Reservation:
    """``count`` instances of the global task ``task`` held on ``machine`` from ``start`` to ``end``.

    ``end`` is the start plus the longest duration among the instances; ``demand``
    is what they take together (per-instance demand times ``count``); ``row`` is
    its row in the episode record's reservations (-1 for one not yet made).
    """

    machine: int
    task: int
    count: int
    start: float
    end: float
    demand: tuple[float, ...]
    row: int = field(default=-1, compare=False)


TICKS_SLACK = 1e-9  # how far from a whole number of ticks a time may be and still be on a tick


def on_tick(time: float, now: float, tick: float) -> bool:
    """Whether ``time`` is a whole number of ticks after ``now`` (itself a tick), within `TICKS_SLACK`."""
    ticks = (time - now) / tick
    return math.isclose(ticks, round(ticks), abs_tol=TICKS_SLACK)


def next_tick(time: float, now: float, tick: float) -> float:
    """The first tick at or after ``time``, counted from ``now`` (a tick): ``now + n x tick``."""
    return now + math.ceil((time - now) / tick - TICKS_SLACK) * tick


class Timeline:
    """The pending reservations and every machine's free resources over time.

    Args:
        state: the machines (free resources now, up or down).
        tasks: the tasks (demands).
        groups: every instance group of the episode (`EpisodeRecord.groups`).
        running_on: per machine, the ids of its running groups.
        tick: the scheduler's tick (None: event-driven): a reservation then starts at a tick, and
            `earliest_start` gives the earliest tick.
    """

    def __init__(self, state: "ClusterState", tasks: "TaskTable", groups: "GroupTable",
                 running_on: list[set[int]], tick: float | None = None) -> None:
        self.tick = tick
        self._state = state
        self._tasks = tasks
        self._groups = groups
        self._running_on = running_on
        self.pending: list[Reservation] = []
        """Reservations not yet started, by start time (then in the order made)."""
        self._machines_reserved: dict[int, int] = {}  # machine -> pending reservations on it
        # machine -> (now, the machine's change count, times, free): its profile, until the time moves, the
        # machine changes (a start, an end, a failure) or a reservation on it is made or starts.
        self._profiles: dict[int, tuple[float, int, np.ndarray, np.ndarray]] = {}

    # ------------------------------------------------------------- queries
    def released(self, start, end):
        """When what instances hold from ``start`` to ``end`` (numbers, or arrays of them) can be used again:
        at ``end``; but with a scheduler tick, instances that run exactly one tick end after the round of
        the tick at ``end`` (CloudSimPy's order: their completion is created after that tick), so the next
        tick."""
        if self.tick is None:
            return end
        if np.ndim(end):
            return np.where(end == start + self.tick, end + self.tick, end)
        return end + self.tick if end == start + self.tick else end

    def running_groups(self) -> tuple[np.ndarray, ...]:
        """(id, machine, task, instances, start, end) of every running group, in id order; ``end`` is when it
        finishes if left to run."""
        gids = np.array(sorted(g for machine in self._running_on for g in machine), dtype=np.int64)
        task, instances, start, duration = self._groups.holdings(gids)
        machine = self._groups.machines(gids)
        return gids, machine, task, instances, start, start + duration

    def has_reservations(self, machine: int) -> bool:
        return self._machines_reserved.get(machine, 0) > 0

    def free_profile(self, machine: int, now: float, free_now: np.ndarray | None = None,
                     held: Sequence[tuple[float, float, np.ndarray]] = ()) -> tuple[np.ndarray, np.ndarray]:
        """(times, free): ``free[k]`` is the machine's free resources on ``[times[k], times[k+1])``,
        from ``times[0] = now`` on; the last row holds for ever after.

        ``free_now`` and ``held`` describe decisions not yet applied (the earlier decisions of a
        plan): the free vector now after their starts, and their ``(start, end, demand)``
        holdings, those starting now counted in ``free_now`` already.
        """
        if free_now is None and not held:  # the machine as it is: its profile is kept until it changes
            kept = self._profiles.get(machine)
            change = int(self._state.machine_change[machine])
            if kept is not None and kept[1] == change:
                if kept[0] == now:
                    return kept[2], kept[3]
                if kept[0] < now and (len(kept[2]) == 1 or kept[2][1] > now):
                    # Time moved on and nothing changed in between (no change happened at an instant up to
                    # now, or the machine's counter would have moved): the same changes come after now, in
                    # the same order, so the same rows; only the first starts now.
                    times = np.r_[now, kept[2][1:]]
                    times.flags.writeable = False
                    self._profiles[machine] = (now, change, times, kept[3])
                    return times, kept[3]
            times, free = self._profile(machine, now, None, ())
            times.flags.writeable = free.flags.writeable = False
            self._profiles[machine] = (now, change, times, free)
            return times, free
        return self._profile(machine, now, free_now, held)

    def _profile(self, machine: int, now: float, free_now: np.ndarray | None,
                 held: Sequence[tuple[float, float, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        width = self._state.free.shape[1]
        # The changes in this order: the plan's holdings, the running groups' (in the order they were made), the
        # reservations' (a start takes, a release gives back).
        plan_when, plan_delta = [], []
        for start, end, taken in held:
            if start > now:
                plan_when.append(start)
                plan_delta.append(-taken)
            plan_when.append(self.released(start, end))
            plan_delta.append(taken)
        # (the running groups in the order they were made, ids ascending: a set's own order is CPython's layout)
        task, instances, start, duration = self._groups.holdings(np.sort(np.fromiter(self._running_on[machine],
                                                                                     np.int64)))
        group_when = self.released(start, start + duration)
        group_delta = self._tasks.demand(task) * instances[:, None]
        booked_when, booked_delta = [], []
        if self.has_reservations(machine):
            for r in self.pending:
                if r.machine == machine:
                    taken = np.asarray(r.demand, dtype=float)
                    booked_when += [r.start, self.released(r.start, r.end)]
                    booked_delta += [-taken, taken]
        when = np.concatenate([np.asarray(plan_when, float), group_when, np.asarray(booked_when, float)])
        delta = np.concatenate([np.reshape(plan_delta, (-1, width)), group_delta,
                                np.reshape(booked_delta, (-1, width))])
        now_free = self._state.free[machine] if free_now is None else free_now
        # Each change after now, in the order above, from its instant on: the same floats as the engine's
        # running totals.
        from cloudsim.engine.kernels import step_profile  # (numba, imported on first use)
        return step_profile(float(now), np.ascontiguousarray(now_free, dtype=float),
                            np.ascontiguousarray(when, dtype=float), np.ascontiguousarray(delta, dtype=float))

    def fits(self, machine: int, demand: np.ndarray, start: float, end: float, now: float,
             free_now: np.ndarray | None = None, held: Sequence[tuple[float, float, np.ndarray]] = ()) -> bool:
        """Whether ``demand`` fits the machine's free profile over ``[start, end)`` (and the machine is up);
        ``free_now`` and ``held``: decisions not yet applied, as in `free_profile`."""
        if not self._state.up[machine]:
            return False
        if start == now and not self.has_reservations(machine) and all(s <= now for s, _, _ in held):
            # free only rises from now on
            return bool(np.all((self._state.free[machine] if free_now is None else free_now) >= demand))
        times, free = self.free_profile(machine, now, free_now, held)
        after = np.append(times[1:], np.inf)
        end = self.released(start, end)
        # the pieces [times[k], after[k]) that meet [start, end); a zero-length stay needs the piece holding start
        overlap = (after > start) & ((times < end) if end > start else (times <= start))
        return bool(np.all(free[overlap] >= demand))

    def earliest_start(self, machine: int, demand: np.ndarray, duration: float, now: float,
                       free_now: np.ndarray | None = None,
                       held: Sequence[tuple[float, float, np.ndarray]] = ()) -> float:
        """The earliest time >= ``now`` from which ``demand`` fits the machine for ``duration``;
        ``inf`` when never (the machine is down or too small). ``free_now`` and ``held``: decisions
        not yet applied, as in `free_profile`. With a scheduler tick, the earliest such tick."""
        if not self._state.up[machine]:
            return float("inf")
        from cloudsim.engine.kernels import earliest_fit  # (numba, imported on first use)
        times, free = self.free_profile(machine, now, free_now, held)
        # A start can only be a breakpoint, free rises only there; with a tick, the first tick from a
        # breakpoint on (a later tick in the same stretch would be a later start of the same kind).
        return float(earliest_fit(times, free, np.ascontiguousarray(demand, dtype=float), float(duration), float(now),
                                  0.0 if self.tick is None else float(self.tick), TICKS_SLACK))

    # ------------------------------------------------------------- changes
    def add(self, reservation: Reservation) -> None:
        starts = [r.start for r in self.pending]
        self.pending.insert(int(np.searchsorted(starts, reservation.start, side="right")), reservation)
        m = reservation.machine
        self._machines_reserved[m] = self._machines_reserved.get(m, 0) + 1
        self._profiles.pop(m, None)

    def pop_due(self, now: float) -> list[Reservation]:
        """The reservations whose start has come, removed from the pending ones, in start order.
        With a scheduler tick, a start is due at the tick nearest it: ``now + n x tick`` and the
        simulated time's sum of ticks may differ in the last bits."""
        due = 0
        limit = now if self.tick is None else now + self.tick / 2
        while due < len(self.pending) and self.pending[due].start <= limit:
            due += 1
        popped, self.pending = self.pending[:due], self.pending[due:]
        for r in popped:
            self._machines_reserved[r.machine] -= 1
            self._profiles.pop(r.machine, None)
        return popped
