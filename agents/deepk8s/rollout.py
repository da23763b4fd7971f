"""A look-ahead oracle for Deepk8s's problem: how far below SJF a scheduler can get on a workload at all.

Deepk8s (Zhao & Sun, 2021) picks, at each decision, a (visible task, machine)
pair or waits, to lower the tasks' mean weighted turnaround (completion time /
duration). `RolloutOracle` makes the same choices with knowledge no policy has:
the whole workload, arrivals to come included. At each decision it tries every
candidate action, plays each one out to the end of the workload in a fresh
simulation that continues with a base policy (SJF on the same window), and takes
the candidate whose play-out has the lowest summed weighted turnaround. This is
rollout policy improvement: since the base policy's own choice is always a
candidate and wins ties, the oracle does at least as well as the base policy
(to the play-outs' exactness, below), and usually better; the margin is a lower
bound on what a learned policy could gain over SJF here.

The play-out starts from the current state rebuilt exactly: each machine's
future free resources (`ClusterView.free_profile`) become stand-in tasks started
on it at once, one per step of the profile (its freed amount, running until
that step), so that the machine frees what the running instances free, when
they end; the waiting tasks arrive at once in their order, and the jobs to come
at their submit times.

Candidates per decision: each visible task that fits somewhere, on the fitting
machine it leaves least room on and the one it leaves most room on (machines
with equal free resources are the same choice), and waiting (while something
runs). With one candidate there is nothing to play out.

With ``knows_arrivals=False`` the play-outs hold only the tasks that have
arrived: the jobs to come are left out. That is an online look-ahead, a
scheduler that could run for real, since it uses only what it has seen (the
whole queue and the running tasks' ends, more than a learned policy's window).
It loses the guarantee: a choice that is best among the tasks here can be worse
once others arrive, so it can end above the base policy.
"""

from __future__ import annotations

import itertools
from typing import Callable, Sequence

import numpy as np

from cloudsim.engine.broker import ClusterView, Decision, as_plan
from cloudsim.engine.simulation import Simulation
from cloudsim.engine.specs import ClusterSpec, JobSpec, TaskSpec

__all__ = ["RolloutOracle"]

WAIT = None
"""The candidate that starts nothing now."""


class RolloutOracle:
    """The look-ahead oracle (module docstring) for one episode of ``jobs`` on ``cluster``.

    Args:
        jobs: the episode's workload (the oracle knows it in full); single-task jobs of one
            instance each, as Deepk8s's.
        cluster: the machines.
        base: builds the policy each play-out continues with (a broker with ``decide``),
            whose first choice is also the oracle's default.
        window: the visible tasks, as the learned policy's (Deepk8s's 10).
        max_wait: a wait lasts until the next event, at most this long (Deepk8s's 16).
        knows_arrivals: the play-outs include the jobs to come (the oracle, a bound); False
            leaves them out (the online look-ahead of the module docstring).
    """

    def __init__(self, jobs: Sequence[JobSpec], cluster: ClusterSpec, base: Callable[[], object], *,
                 window: int = 10, max_wait: float = 16.0, knows_arrivals: bool = True) -> None:
        for job in jobs:
            if len(job.tasks) != 1 or job.tasks[0].instances != 1 or job.tasks[0].parents:
                raise ValueError(f"the rollout oracle plays out single-task jobs of one instance (Deepk8s's); "
                                 f"job {job.id!r} has {len(job.tasks)} tasks")
        self.jobs = {job.id: job for job in jobs}
        self.cluster = cluster
        self.base = base
        self.window = window
        self.max_wait = max_wait
        self.knows_arrivals = knows_arrivals
        self.name = "rollout-oracle" if knows_arrivals else "rollout-online"
        self.playouts = 0
        self._seen: set = set()

    @property
    def wake_after(self) -> float:
        """A wait lasts at most ``max_wait`` (the engine asks again then), as Deepk8s's environment's."""
        return self.max_wait

    def decide(self, view: ClusterView) -> Decision | None:
        visible = view.window(self.window)
        self._seen.update(view.task_key(t)[0] for t in range(view.num_tasks))
        candidates = self._candidates(visible)
        if len(candidates) == 1:
            return candidates[0]
        costs = [self._playout(view, choice) for choice in candidates]
        return candidates[int(np.argmin(costs))]  # the first minimum: the base policy's choice wins ties

    def _candidates(self, view: ClusterView) -> list[Decision | None]:
        first = as_plan(self.base().decide(view))
        candidates = [first[0] if first else WAIT]
        free = view.free
        for task in np.flatnonzero(view.tasks_fitting_some()):
            machines = np.flatnonzero(view.machines_fitting(task))
            room = (free[machines] - view.demand[task]).sum(axis=1)  # argmin/argmax: the first of equal machines
            for machine in (machines[np.argmin(room)], machines[np.argmax(room)]):
                candidates.append(Decision(int(machine), int(task)))
        if (view.free < view.capacity).any():  # something runs: a wait ends when it does, at the latest
            candidates.append(WAIT)
        return list(dict.fromkeys(candidates))  # each once, in order

    def _playout(self, view: ClusterView, choice: Decision | None) -> float:
        """Summed weighted turnaround of the jobs not yet started, if ``choice`` is taken now and the
        base policy decides from then on."""
        self.playouts += 1
        now = view.time
        stand_ins, pins = [], []
        fresh = itertools.count()
        for machine in range(view.num_machines):
            times, free = view.free_profile(machine)
            for k in range(1, len(times)):
                freed = free[k] - free[k - 1]
                if (freed > 0).any():
                    demand = dict(zip(view.resources, np.maximum(freed, 0.0).tolist()))
                    stand_ins.append(JobSpec(("running", next(fresh)), 0.0,
                                             (TaskSpec(0, 1, demand, float(times[k] - now)),)))
                    pins.append(machine)
        # the play-out's clock starts now: a job's submit time there is offset[job] (waiting ones at 0)
        waiting = [view.task_key(t)[0] for t in np.flatnonzero(view.waiting)]
        coming = [j for j, job in self.jobs.items()
                  if self.knows_arrivals and j not in self._seen and job.submit_time >= now]
        offset = {j: self.jobs[j].submit_time - now for j in waiting + coming}
        here = set(waiting)  # at 0, even where the engine's clock lags a submit time by a rounding error
        later = [JobSpec(j, 0.0 if j in here else max(offset[j], 0.0), self.jobs[j].tasks) for j in offset]
        sim = Simulation(self.cluster, stand_ins + later)
        start = sim.next_decision()
        rows = {start.task_key(t)[0]: t for t in range(start.num_tasks)}
        plan = [Decision(machine, rows[job.id]) for machine, job in zip(pins, stand_ins)]
        if choice is not None:
            plan.append(Decision(choice.machine, rows[view.task_key(choice.task)[0]]))
        sim.apply(plan)
        if choice is None:  # a wait: nothing more starts until the next event (or max_wait)
            following = sim.next_decision()
            while following is not None and following.time == 0.0:
                sim.apply(None, self.max_wait)
                following = sim.next_decision()
        else:
            following = sim.next_decision()
        base = self.base()
        while following is not None:
            sim.apply(base.decide(following))
            following = sim.next_decision()
        # sim.jobs are the play-out's job rows, in the order of sim.tasks' job arrays
        return sum((finish - offset[job.id]) / job.tasks[0].duration
                   for job, finish in zip(sim.jobs, sim.tasks.job_finish) if job.id in offset)
