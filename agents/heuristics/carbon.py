"""Carbon-aware brokers: they start work when the grid's forecast intensity is low (Wiesner et al., "Let's Wait
Awhile: How Temporal Workload Shifting Can Reduce Carbon Emissions in the Cloud", Middleware 2021).

They read the run's grid signal from the view (``view.carbon``, `cloudsim.engine.carbon.GridSignal`: the forecast
the run was given, with its error), and start a task later than it could by a reservation
(`cloudsim.Decision` with ``at``), which holds its machine's room from then.
"""

from __future__ import annotations

import math

import numpy as np

from cloudsim import Decision
from cloudsim.engine.checks import check_number

__all__ = ["CarbonShift"]


class CarbonShift:
    """Temporal shifting within a window (the study's Scenario I strategy), or before a deadline (its Scenario II
    strategy for work that cannot be interrupted).

    Each waiting task, in arrival order, may start at its ready time plus a whole number of ``step`` seconds up
    to ``window`` seconds later (never before now), and where its job has a deadline (`cloudsim.JobSpec.deadline`),
    no later than lets it finish by then; ``window`` None (or ``inf``) bounds the starts by the deadline alone (a
    task whose job has none starts at once; on the command line ``--broker-options carbon-shift.window=None``). It
    starts at the one whose forecast intensity, averaged over
    the task's duration, is lowest (the earliest on ties), on the first machine where some of its waiting
    instances fit from then for their whole run (as many as fit; the rest are asked about again). A start later
    than now is a reservation. ``window`` 0 starts a task as soon as it fits, as first-fit would. A task that fits
    no machine at any of its starts waits for the next event; once its window has passed it starts as soon as it
    fits. Only machines that are up and that the task accepts (`cloudsim.TaskSpec.accepts`) are considered; a task
    that asks for devices (GPUs) starts now, one instance at a time, on the first machine that fits it
    (reservations hold resources, not devices).
    """

    name = "carbon-shift"

    def __init__(self, window: float | None = 0.0, step: float = 1800.0) -> None:
        if window is not None and window != math.inf:  # (None or inf: up to each job's deadline)
            check_number("carbon-shift: window", window, at_least=0, hint="seconds, or None (up to the deadline)")
        check_number("carbon-shift: step", step, above=0, hint="seconds between the starts it weighs")
        self.window = None if window is None or window == math.inf else float(window)
        self.step = float(step)

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
        for task in np.flatnonzero(view.waiting > 0).tolist():
            if view.device_request[task, 0] > 0:  # devices are given to a start now, not held by a reservation
                fitting = np.flatnonzero(view.fits[:, task])
                if fitting.size:
                    return Decision(int(fitting[0]), task, 1)
                continue
            allowed = view.up & view.accepts(task)
            count = int(view.waiting[task])
            duration = float(view.duration[task])
            deadline = float(view.deadline[task])
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
