"""Carbon-aware brokers: they start work when the grid's forecast intensity is low (Wiesner et al., "Let's Wait
Awhile: How Temporal Workload Shifting Can Reduce Carbon Emissions in the Cloud", Middleware 2021).

They read the run's grid signal from the view (``view.carbon``, `cloudsim.engine.carbon.GridSignal`: the forecast
the run was given, with its error), and start a task later than it could by a reservation
(`cloudsim.Decision` with ``at``), which holds its machine's room from then, or, for interruptible work, run it in
the lowest-carbon pieces of time before its deadline, suspending it in between (`cloudsim.Suspend`).
"""

from __future__ import annotations

import math

import numpy as np

from cloudsim import Decision, Suspend
from cloudsim.engine.checks import check_number

__all__ = ["CarbonShift"]


class CarbonShift:
    """Temporal shifting within a window (the study's Scenario I strategy), or before a deadline (its Scenario II
    strategies for work that cannot, and that can, be interrupted).

    Each waiting task, in arrival order, may start at its ready time plus a whole number of ``step`` seconds up
    to ``window`` seconds later (never before now), and where its job has a deadline (`cloudsim.JobSpec.deadline`),
    no later than lets it finish by its latest finish (the deadline less the time its descendants need,
    `cloudsim.ClusterView.latest_finish`); ``window`` None (or ``inf``) bounds the starts by the deadline alone (a
    task whose job has none starts at once; on the command line ``--broker-options carbon-shift.window=None``). It
    starts at the one whose forecast intensity, averaged over
    the task's duration, is lowest (the earliest on ties), on the first machine where some of its waiting
    instances fit from then for their whole run (as many as fit; the rest are asked about again). A start later
    than now is a reservation. ``window`` 0 starts a task as soon as it fits, as first-fit would. A task that fits
    no machine at any of its starts waits for the next event; once its window has passed it starts as soon as it
    fits. Only machines that are up and that the task accepts (`cloudsim.TaskSpec.accepts`) are considered; a task
    that asks for devices (GPUs) starts now, one instance at a time, on the first machine that fits it
    (reservations hold resources, not devices).

    ``interruptible=True`` (the study's interruptible strategy): work whose job has a deadline runs in the pieces
    of time with the lowest forecast intensity before it (before its latest finish, as above). The time from now
    to then is cut where the
    signal's steps begin; the pieces are taken lowest first (the earliest on ties) until they add up to the work
    left (a running group's time to its end; a waiting instance's `cloudsim.ClusterView.next_duration`, which
    counts a resume's cost). Work whose first piece, the one starting now, is among them runs: a waiting task
    starts on the first machines where its instances fit now; the others wait, and a running group among them is
    suspended (`cloudsim.Suspend`). The broker is asked again where the next step begins (``wake_after``). Work
    that cannot finish by its deadline any more, or whose job has none, runs as soon as it fits (a task that asks
    for devices, one instance at a time, as the engine gives each its devices); ``window`` and ``step`` do not
    apply.
    """

    name = "carbon-shift"

    def __init__(self, window: float | None = 0.0, step: float = 1800.0, interruptible: bool = False) -> None:
        if window is not None and window != math.inf:  # (None or inf: up to each job's deadline)
            check_number("carbon-shift: window", window, at_least=0, hint="seconds, or None (up to the deadline)")
        check_number("carbon-shift: step", step, above=0, hint="seconds between the starts it weighs")
        if not isinstance(interruptible, bool):
            raise ValueError(f"carbon-shift: interruptible must be True or False, got {interruptible!r}")
        self.window = None if window is None or window == math.inf else float(window)
        self.step = float(step)
        self.interruptible = interruptible
        self.wake_after: float | None = None  # (interruptible: where the forecast's next step begins)

    def starts(self, ready: float, now: float, latest: float = math.inf) -> np.ndarray:
        """The starts a task ready at ``ready`` may take, seen at ``now``, none after ``latest`` (the last that
        meets its deadline)."""
        if self.window is not None:
            last = ready + self.window
        else:  # up to the deadline; with none, at once
            last = math.inf if math.isfinite(latest) else ready
        last = min(last, latest)
        if last < ready:
            return np.empty(0)
        offsets = self.step * np.arange(int(math.floor((last - ready) / self.step + 1e-9)) + 1)
        starts = ready + offsets
        return starts[starts >= now]

    def decide(self, view) -> Decision | None:
        carbon = view.carbon
        if carbon is None:
            raise ValueError("carbon-shift plans by the grid's carbon intensity: give the run a signal "
                             "(--carbon FILE --start DATETIME; in Python, Simulation(..., carbon_forecast=signal))")
        if self.interruptible:
            return self._decide_interruptible(view, carbon)
        for task in np.flatnonzero(view.waiting > 0).tolist():
            if view.device_request[task, 0] > 0:  # devices are given to a start now, not held by a reservation
                fitting = np.flatnonzero(view.fits[:, task])
                if fitting.size:
                    return Decision(int(fitting[0]), task, 1)
                continue
            allowed = view.up & view.accepts(task)
            count = int(view.waiting[task])
            duration = float(view.duration[task])
            deadline = float(view.latest_finish[task])  # (its job's deadline, less what its descendants need)
            latest = deadline - duration if math.isfinite(deadline) else math.inf
            starts = self.starts(float(view.ready_time[task]), view.time, latest)
            if starts.size == 0:  # its window or deadline has passed (it waited for room): as soon as it fits
                starts = np.array([view.time])
            means = carbon.means(starts, duration)
            for k in np.lexsort((starts, means)).tolist():  # lowest forecast first, the earliest on ties
                start = float(starts[k])
                at = None if start <= view.time else start
                for machine in np.flatnonzero(allowed).tolist():
                    fitting = self._most(view, machine, task, count, at)
                    if fitting:
                        return Decision(machine, task, fitting, at=at)
        return None

    def _decide_interruptible(self, view, carbon) -> Decision | list | None:
        now = view.time
        running = view.running_groups
        stop = running.group[(running.end > now)
                             & ~self._runs_now(carbon, now, running.end - now, running.latest_finish)]
        if stop.size:
            return [Suspend(group) for group in stop.tolist()]
        waiting = np.flatnonzero((view.waiting > 0) & view.tasks_fitting_some())  # (what fits no machine waits)
        due = self._runs_now(carbon, now, view.next_duration[waiting], view.latest_finish[waiting])
        for task in waiting[due].tolist():
            if view.device_request[task, 0] > 0:  # the engine gives each start its devices: one at a time
                return Decision(int(np.flatnonzero(view.fits[:, task])[0]), task, 1)
            for machine in np.flatnonzero(view.fits[:, task]).tolist():  # (up, accepted, with room now)
                fitting = self._most(view, machine, task, int(view.waiting[task]), None)
                if fitting:
                    return Decision(machine, task, fitting)
        following = carbon.next_step(now) if now < carbon.end else math.inf
        self.wake_after = following - now if math.isfinite(following) and following > now else None
        return None

    @staticmethod
    def _runs_now(carbon, now: float, work: np.ndarray, deadline: np.ndarray) -> np.ndarray:
        """Whether each piece of work (``work`` seconds of it, due by ``deadline``, NaN: none) runs in the piece of
        time starting now: that piece is among the lowest-intensity pieces before its deadline that add up to the
        work. Taken lowest first, the earliest on ties, the pieces taken before it are those of a lower intensity
        than now's (none is earlier): it runs when they add up to less than the work."""
        runs = ~(deadline - now > work)  # (NaN deadline: no deadline; too little time left: at once)
        if runs.all():
            return runs
        shifts = np.flatnonzero(~runs)
        ends_by = deadline[shifts]
        starts, ends, values = carbon.pieces(now, float(ends_by.max()))
        lower = np.where(values < values[0], ends - starts, 0.0)  # each piece's time of lower intensity
        before = np.concatenate([[0.0], np.cumsum(lower)])  # ... in the pieces before each
        k = np.searchsorted(starts, ends_by)  # the pieces starting before each deadline: 0 .. k - 1
        overhang = np.where(lower[k - 1] > 0, ends[k - 1] - ends_by, 0.0)  # the last one's part after it
        runs[shifts] = before[k] - overhang < work[shifts]
        return runs

    @staticmethod
    def _most(view, machine: int, task: int, count: int, at: float | None) -> int:
        """The most of ``count`` instances of ``task`` that fit ``machine`` from ``at`` for their whole run (0:
        none); fitting is monotone in the count, so a binary search finds it."""
        if not view.fits_from(machine, task, 1, at):
            return 0
        low, high = 1, count
        while low < high:
            middle = (low + high + 1) // 2
            if view.fits_from(machine, task, middle, at):
                low = middle
            else:
                high = middle - 1
        return low
