"""One episode: SimPy processes that submit jobs, ask the broker, run instances and free them.

Three kinds of activity share one `simpy.Environment`:

* the **arrival process** sleeps until each job's submit time and hands its
  tasks without parents to the waiting set;
* the **scheduler** asks the broker for decisions, one at a time, until it
  answers ``None``; each decision starts instances on a machine;
* every **instance group** (instances of one task started on one machine at one
  instant with one duration) is one timeout; when it fires, the instances
  finish, their resources are freed, and children of finished tasks become ready.

The scheduler runs in one of two trigger modes:

* **event-driven** (``tick=None``, the default): once per instant at which
  something happened, after every event of that instant has been applied;
* **fixed tick** (``tick=1.0``): every ``tick`` time units from t=0, as in
  CloudSimPy. With ``tick=1`` and first-fit or Tetris the run reproduces
  CloudSimPy's makespans exactly; the ordering rules that requires are written
  down in DESIGN.md and follow here from SimPy's own rule that events due at
  the same instant fire in the order they were created.

Cluster and task state are numpy arrays (``free[M, d]``, ``task_started[N]``...);
the waiting set is a sorted array of global task indices, so a broker sees ready
tasks in arrival order without any scan.
"""

from __future__ import annotations

import heapq
import math
import time as wallclock
from dataclasses import dataclass
from typing import Hashable, Iterable

import numpy as np
import simpy
from simpy.events import NORMAL, Event
from tqdm.auto import tqdm

from cloudsim.broker import ClusterView, Decision, InvalidDecisionError, broker_name, frozen
from cloudsim.metrics import EpisodeResult
from cloudsim.specs import ClusterSpec, JobSpec, UnschedulableTaskError, check_jobs_fit

__all__ = ["MachineEvent", "Simulation", "SimulationStalledError", "UnschedulableTaskError", "simulate"]

MACHINE_STATES = ("up", "down", "failed")
FAILURE_POLICIES = ("requeue", "fail")

# SimPy pops events by (time, priority, creation order): a priority above NORMAL
# makes an event fire after every ordinary event of its instant.
_END_OF_INSTANT = NORMAL + 1


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


class SimulationStalledError(RuntimeError):
    """Jobs are unfinished, nothing runs or arrives, and the broker keeps waiting."""


@dataclass(frozen=True)
class MachineEvent:
    """Machine ``machine`` (its index in the cluster) enters ``state`` at ``time``.

    * ``"up"``: the machine takes work;
    * ``"down"``: it takes no new work, its running instances go on;
    * ``"failed"``: it takes no new work and its running instances end at once;
      they are re-queued (the simulation's ``on_failure="requeue"``) or counted
      as failed (``"fail"``).
    """

    time: float
    machine: int
    state: str

    def __post_init__(self) -> None:
        if self.state not in MACHINE_STATES:
            raise ValueError(f"machine event state must be one of {MACHINE_STATES}, got {self.state!r}")
        if not (math.isfinite(self.time) and self.time >= 0):
            raise ValueError(f"machine event time must be finite and >= 0, got {self.time!r}")


class _EndOfInstant(Event):
    """An event that fires after all ordinary events due at the current instant."""

    def __init__(self, env: simpy.Environment) -> None:
        super().__init__(env)
        self._ok = True
        self._value = None
        env.schedule(self, priority=_END_OF_INSTANT)


class Simulation:
    """A single episode of ``jobs`` on ``cluster`` under ``broker``.

    Args:
        cluster: the machines.
        jobs: the workload; jobs are taken in submit-time order (a stable sort,
            so jobs with equal submit times keep the order given).
        broker: an object with ``decide(view) -> Decision | None``.
        tick: ``None`` for event-driven scheduling, or the period of a fixed
            scheduler tick (``1.0`` for CloudSimPy-compatible replays).
        machine_events: `MachineEvent`s to apply (a trace's failures and
            recoveries); their order at equal times is kept.
        faults: a fault model (an object with ``events(machines)`` yielding
            time-ordered `MachineEvent`s, such as `cloudsim.faults.RandomFaults`),
            read lazily and merged with ``machine_events`` until the last job ends.
        on_failure: what happens to the running instances of a machine that
            fails: ``"requeue"`` (they wait again and re-run from the start) or
            ``"fail"`` (they are counted failed).
        max_idle_ticks: how many decision rounds (ticks, or instants in
            event-driven mode) the broker may start nothing in, while nothing
            runs, nothing is left to arrive, and either some machine fits waiting
            work or no event can bring a machine up, before the run is declared
            stalled (rounds spent waiting for a repair do not count).
        progress: show a progress bar of finished jobs, with the simulated time
            against the last job's arrival.

    Call `run` once; it returns an `EpisodeResult`.
    """

    def __init__(
        self,
        cluster: ClusterSpec,
        jobs: Iterable[JobSpec],
        broker: object,
        *,
        tick: float | None = None,
        machine_events: Iterable[MachineEvent] = (),
        faults: object | None = None,
        on_failure: str = "requeue",
        max_idle_ticks: int = 1000,
        progress: bool = False,
    ) -> None:
        if not callable(getattr(broker, "decide", None)):
            raise TypeError(f"broker {broker!r} has no decide(view) method")
        if tick is not None and not (math.isfinite(tick) and tick > 0):
            raise ValueError(f"tick must be a positive number or None, got {tick!r}")
        if on_failure not in FAILURE_POLICIES:
            raise ValueError(f"on_failure must be one of {FAILURE_POLICIES}, got {on_failure!r}")
        self.machine_events = sorted(machine_events, key=lambda e: e.time)
        for event in self.machine_events:
            self._check_machine_event(event, cluster.machines)
        if faults is not None and not callable(getattr(faults, "events", None)):
            raise TypeError(f"faults {faults!r} has no events(machines) method; use cloudsim.faults.RandomFaults")
        self.faults = faults
        self.on_failure = on_failure
        self.cluster = cluster
        self.jobs: list[JobSpec] = sorted(jobs, key=lambda j: j.submit_time)
        self.broker = broker
        self.tick = tick
        self.max_idle_ticks = max_idle_ticks
        self.progress = progress
        self.env = simpy.Environment()
        self.capacity = cluster.capacity_array()
        self.free = self.capacity.copy()
        self.up = np.ones(cluster.machines, dtype=bool)
        self._build_task_tables()
        check_jobs_fit(cluster, self.jobs, self.task_demand)
        self._frozen_capacity = frozen(self.capacity)
        self._frozen_free = frozen(self.free)
        self._frozen_up = frozen(self.up)
        self._stale_rows: set[int] = set()
        self._job_length: np.ndarray | None = None
        self._set_ready(np.empty(0, dtype=np.int64))
        self._ran = False

    # ----------------------------------------------------------------- set-up
    def _build_task_tables(self) -> None:
        """Flatten jobs -> tasks into arrays indexed by a global task index (arrival order)."""
        tasks = [(j, job, t, task) for j, job in enumerate(self.jobs) for t, task in enumerate(job.tasks)]
        n = len(tasks)
        self.task_job = np.array([j for j, *_ in tasks], dtype=np.int64)
        self.task_demand = np.empty((n, len(self.cluster.resources)))
        self.task_duration = np.empty(n)
        self.task_instances = np.empty(n, dtype=np.int64)
        self._instance_durations: list[tuple[float, ...] | None] = [None] * n
        self._children: list[list[int]] = [[] for _ in range(n)]
        self.task_pending_parents = np.zeros(n, dtype=np.int64)
        self.job_first_task = np.zeros(len(self.jobs) + 1, dtype=np.int64)
        base = 0
        for j, job in enumerate(self.jobs):
            self.job_first_task[j] = base
            position = {task.id: base + t for t, task in enumerate(job.tasks)}
            for t, task in enumerate(job.tasks):
                g = base + t
                self.task_demand[g] = self.cluster.demand_vector(task, where=f"job {job.id!r}: ")
                self.task_duration[g] = task.nominal_duration
                self.task_instances[g] = task.instances
                if isinstance(task.duration, tuple):
                    self._instance_durations[g] = task.duration
                self.task_pending_parents[g] = len(task.parents)
                for p in task.parents:
                    self._children[position[p]].append(g)
            base += len(job.tasks)
        self.job_first_task[len(self.jobs)] = base
        self._tasks = tasks
        self.task_started = np.zeros(n, dtype=np.int64)  # running or ended (a re-queued start is undone)
        self.task_finished = np.zeros(n, dtype=np.int64)
        self.task_failed = np.zeros(n, dtype=np.int64)
        self.task_restarts = np.zeros(n, dtype=np.int64)
        self._next_fresh = np.zeros(n, dtype=np.int64)  # next never-started instance
        self._requeued: dict[int, list[list[int]]] = {}  # task -> [first, count] ranges waiting again
        self.task_ready_time = np.full(n, np.nan)
        self.task_start_time = np.full(n, np.nan)
        self.task_finish_time = np.full(n, np.nan)
        self.job_arrival = np.full(len(self.jobs), np.nan)
        self.job_finish = np.full(len(self.jobs), np.nan)
        self.job_unfinished_tasks = np.array([len(job.tasks) for job in self.jobs], dtype=np.int64)
        # Resources held by each job's running instances (dominant-resource fairness reads them).
        self.job_usage = np.zeros((len(self.jobs), len(self.cluster.resources)))
        self.job_running = np.zeros(len(self.jobs), dtype=np.int64)

    @staticmethod
    def _check_machine_event(event: MachineEvent, machines: int) -> None:
        if not isinstance(event, MachineEvent):
            raise TypeError(f"machine events must be MachineEvent(time, machine, state), got {event!r}")
        if not 0 <= event.machine < machines:
            raise ValueError(f"{event}: no such machine (the cluster has {machines})")

    def job_length(self) -> np.ndarray:
        """Critical-path duration of each job (arrival order), read-only; computed on first use."""
        if self._job_length is None:
            self._job_length = frozen(np.array([job.critical_path() for job in self.jobs], dtype=float))
        return self._job_length

    def task_key(self, g: int) -> tuple[Hashable, Hashable]:
        """(job id, task id) of the global task index ``g``."""
        _, job, _, task = self._tasks[g]
        return job.id, task.id

    # ------------------------------------------------------- the waiting set
    # `ready` holds the global indices of ready tasks with waiting instances,
    # sorted, which is arrival order. Their demand matrix and the machine x task
    # fit matrix are cached: a change of the set drops both, a change of one
    # machine's free vector marks only that machine's row stale.
    def _set_ready(self, ready: np.ndarray) -> None:
        self.ready = ready
        self._frozen_ready = frozen(ready)
        self._ready_demand: np.ndarray | None = None
        self._fits: np.ndarray | None = None

    def _machine_changed(self, machine: int) -> None:
        self._stale_rows.add(machine)

    def ready_demand(self) -> np.ndarray:
        """Demand rows of the ready tasks, shape (tasks, resources), read-only."""
        if self._ready_demand is None:
            demand = self.task_demand[self.ready]
            self._ready_demand = frozen(demand)
            # A resource no ready task asks for cannot fail a fit test: skip it.
            self._fit_resources = [int(r) for r in np.flatnonzero(demand.any(axis=0))]
            self._ready_demand_by_resource = np.ascontiguousarray(demand.T)
        return self._ready_demand

    def fit_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """The (machines, ready tasks) fit matrix and, per machine, whether its row has a fit.

        Both are read-only and kept up to date incrementally.
        """
        if self._fits is None:
            self.ready_demand()
            self._fits = np.empty((self.cluster.machines, len(self.ready)), dtype=bool)
            self._machine_fits_some = np.empty(self.cluster.machines, dtype=bool)
            self._frozen_fits = frozen(self._fits), frozen(self._machine_fits_some)
            self._refresh_fits(slice(None))  # every machine at once, vectorised
        else:
            for machine in self._stale_rows:
                self._refresh_fits(slice(machine, machine + 1))
        self._stale_rows.clear()
        return self._frozen_fits

    def _refresh_fits(self, machines: slice) -> None:
        """Recompute the fit rows of ``machines``: up, and ``demand <= free`` in every resource asked for."""
        rows = self._fits[machines]  # a view: written in place
        rows[:] = self.up[machines, None]
        for r in self._fit_resources:
            rows &= self._ready_demand_by_resource[r] <= self.free[machines, r, None]
        self._machine_fits_some[machines] = rows.any(axis=1)

    # ------------------------------------------------------------------- run
    def run(self) -> EpisodeResult:
        """Run the episode to the end and return its results."""
        if self._ran:
            raise RuntimeError("a Simulation runs once; build a new one for another episode")
        self._ran = True
        # [task, machine, first instance, count, duration, start, end, outcome]
        self._groups: list[list] = []
        self._running_on: list[set[int]] = [set() for _ in range(self.cluster.machines)]
        self._launch_queue: list[int] = []
        self._round_last_group: dict[int, int] = {}
        self._running_instances = 0
        self._unfinished_jobs = len(self.jobs)
        self._arrivals_done = False
        self._round_requested = False
        self._machine_event_pending = False
        self._idle_rounds = 0
        self.decisions = 0
        self.makespan = 0.0
        self._bar = None
        if self.progress:
            self._bar = tqdm(total=len(self.jobs), unit="job", desc=broker_name(self.broker), leave=False)
            self._last_arrival = max((job.submit_time for job in self.jobs), default=0.0)
        started = wallclock.perf_counter()
        try:
            # Arrivals start before the scheduler: at an instant both are due,
            # the scheduler's tick comes first, as in CloudSimPy.
            self.env.process(self._arrivals())
            if self.tick is not None:
                self.env.process(self._tick_scheduler())
            if self.machine_events or self.faults is not None:
                self.env.process(self._machine_changes())
            self.env.run()
        finally:
            if self._bar is not None:
                self._bar.close()
        if self._unfinished_jobs:
            raise SimulationStalledError(self._stall_message())
        if self.tick is None:
            self.makespan = float(np.max(self.job_finish, initial=0.0))
        return EpisodeResult.from_simulation(self, wall_s=wallclock.perf_counter() - started)

    def _arrivals(self):
        for j, job in enumerate(self.jobs):
            yield self.env.timeout(job.submit_time - self.env.now)
            self.job_arrival[j] = self.env.now
            first, end = self.job_first_task[j], self.job_first_task[j + 1]
            roots = first + np.flatnonzero(self.task_pending_parents[first:end] == 0)
            self.task_ready_time[roots] = self.env.now
            # Later jobs have larger task indices: appending keeps `ready` sorted.
            self._set_ready(np.concatenate([self.ready, roots]))
            self._request_round()
        self._arrivals_done = True

    def _tick_scheduler(self):
        while not (self._arrivals_done and self._unfinished_jobs == 0):
            self._decision_round()
            wake = self.env.timeout(self.tick)
            self._launch_started_groups()  # after `wake`: see the module docstring
            yield wake
        self.makespan = float(self.env.now)

    def _request_round(self) -> None:
        """Event-driven mode: run a decision round once this instant's events are all applied."""
        if self.tick is None and not self._round_requested:
            self._round_requested = True
            _EndOfInstant(self.env).callbacks.append(self._event_round)

    def _event_round(self, _event: Event) -> None:
        self._round_requested = False
        self._decision_round()
        self._launch_started_groups()

    def _count_idle_round(self, started: int) -> None:
        """Declare the run stalled after too many rounds in which the broker started
        nothing though only it could make progress.

        Nothing runs and nothing is left to arrive; then either a machine fits
        waiting work (the broker declines it) or no event can bring a machine up.
        Rounds spent waiting for a down machine's repair, with nothing fitting
        elsewhere, do not count: an endless fault model keeps the run going then.
        """
        if started:
            self._idle_rounds = 0
            return
        if self._running_instances or not self._arrivals_done:
            return
        can_be_repaired = self._machine_event_pending and not self.up.all()
        if not can_be_repaired or (len(self.ready) and self.fit_matrix()[1].any()):
            self._idle_rounds += 1
            if self._idle_rounds > self.max_idle_ticks:
                raise SimulationStalledError(self._stall_message())

    def _checked(self, events: Iterable[MachineEvent]):
        for event in events:
            self._check_machine_event(event, self.cluster.machines)
            yield event

    def _machine_changes(self):
        events: Iterable[MachineEvent] = self.machine_events  # checked in __init__
        if self.faults is not None:  # a model may never end: check and merge its events lazily
            modelled = self._checked(self.faults.events(self.cluster.machines))
            events = heapq.merge(events, modelled, key=lambda e: e.time)
        for event in events:
            self._machine_event_pending = True
            yield self.env.timeout(event.time - self.env.now)
            self._machine_event_pending = False
            if self._arrivals_done and self._unfinished_jobs == 0:
                return  # the run is over; later events change nothing
            machine = event.machine
            self.up[machine] = event.state == "up"
            self._machine_changed(machine)
            if event.state == "failed":
                for gid in sorted(self._running_on[machine]):
                    self._end_group(gid, "requeued" if self.on_failure == "requeue" else "failed")
            self._request_round()

    # ------------------------------------------------------------- decisions
    def _decision_round(self) -> int:
        """Ask the broker for decisions until it answers None; return how many it made."""
        self._round_last_group.clear()
        made = 0
        while True:
            view = ClusterView(self)
            decision = self.broker.decide(view)
            if decision is None:
                self._count_idle_round(made)
                return made
            machine, task, count = self._validate(decision, view)
            self._start(machine, int(view.task_index[task]), count)
            made += 1
            self.decisions += 1

    def _validate(self, decision: object, view: ClusterView) -> tuple[int, int, int]:
        name = broker_name(self.broker)
        if isinstance(decision, Decision):
            fields = (decision.machine, decision.task, decision.count)
        elif isinstance(decision, tuple) and len(decision) in (2, 3):
            fields = (*decision, 1) if len(decision) == 2 else decision
        else:
            raise InvalidDecisionError(
                f"broker {name!r} at t={self.env.now}: returned {decision!r}; return a "
                f"Decision(machine, task, count), a (machine, task[, count]) tuple, or None to wait"
            )
        machine, task, count = fields
        if not (_is_int(machine) and _is_int(task) and _is_int(count)):
            raise InvalidDecisionError(
                f"broker {name!r} at t={self.env.now}: machine, task and count must be integers, got {fields!r}"
            )
        machine, task, count = int(machine), int(task), int(count)
        if not (0 <= machine < view.num_machines and 0 <= task < view.num_tasks):
            where = f"broker {name!r} at t={self.env.now}: machine {machine}, task {task}"
            if not 0 <= machine < view.num_machines:
                raise InvalidDecisionError(f"{where}: no such machine (the cluster has {view.num_machines})")
            raise InvalidDecisionError(f"{where}: no such task (the view has {view.num_tasks} ready tasks)")
        g = int(view.task_index[task])
        waiting = int(self.task_instances[g] - self.task_started[g])
        # One instance fits exactly when the (up-to-date) fit matrix says so; more need the stepwise count.
        fits = view.fits[machine, task] if count == 1 else view.fit_count(machine, task) >= count
        if 1 <= count <= waiting and self.up[machine] and fits:
            return machine, task, count
        job_id, task_id = view.task_key(task)
        where = f"broker {name!r} at t={self.env.now}: machine {machine}, task {task} (job {job_id!r}, task {task_id!r})"
        if not 1 <= count <= waiting:
            raise InvalidDecisionError(f"{where}: count {count} not in 1..{waiting} waiting instances")
        if not self.up[machine]:
            raise InvalidDecisionError(f"{where}: the machine is down")
        free = dict(zip(view.resources, view.free[machine].tolist()))
        demand = dict(zip(view.resources, view.demand[task].tolist()))
        raise InvalidDecisionError(
            f"{where}: {count} instance(s) do not fit: only {view.fit_count(machine, task)} fit; "
            f"free {free}, demand per instance {demand}"
        )

    def _change_free(self, machine: int, g: int, count: int, op: np.ufunc) -> None:
        """Take (np.subtract) or give back (np.add) ``count`` instances' demand, one at a time.

        Free resources are running float64 totals, as in CloudSimPy: k instances
        change them by k separate roundings, not by one of ``k * demand``.
        """
        demand = self.task_demand[g]
        if count == 1:
            op(self.free[machine], demand, out=self.free[machine])
        else:
            steps = np.empty((count + 1, demand.shape[0]))
            steps[0] = self.free[machine]
            steps[1:] = demand
            self.free[machine] = op.accumulate(steps, axis=0)[-1]
        self._machine_changed(machine)

    def _change_job_usage(self, g: int, count: int) -> None:
        """``count`` more (or, negative, fewer) instances of task ``g`` run: update its job's usage."""
        j = self.task_job[g]
        self.job_running[j] += count
        if self.job_running[j] == 0:
            self.job_usage[j] = 0.0  # exactly: no float residue once nothing of the job runs
        else:
            self.job_usage[j] += count * self.task_demand[g]

    def _start(self, machine: int, g: int, count: int) -> None:
        self._change_free(machine, g, count, np.subtract)
        if self.task_started[g] == 0 and math.isnan(self.task_start_time[g]):
            self.task_start_time[g] = self.env.now
        self.task_started[g] += count
        self._running_instances += count
        self._change_job_usage(g, count)
        if self.task_started[g] == self.task_instances[g]:
            self._set_ready(np.delete(self.ready, np.searchsorted(self.ready, g)))
        per_instance = self._instance_durations[g]
        for first, n in self._take_instances(g, count):
            if per_instance is None:
                self._add_to_group(machine, g, first, n, float(self.task_duration[g]))
            else:
                for i in range(first, first + n):
                    self._add_to_group(machine, g, i, 1, per_instance[i])

    def _take_instances(self, g: int, count: int) -> list[tuple[int, int]]:
        """(first, n) ranges of instance numbers to start: re-queued ones first, then fresh ones."""
        ranges = []
        queue = self._requeued.get(g)
        while queue and count:
            first, n = queue[0]
            take = min(n, count)
            ranges.append((first, take))
            count -= take
            if take == n:
                queue.pop(0)
            else:
                queue[0] = [first + take, n - take]
        if count:
            ranges.append((int(self._next_fresh[g]), count))
            self._next_fresh[g] += count
        return ranges

    def _add_to_group(self, machine: int, g: int, first: int, count: int, duration: float) -> None:
        """Join the machine's latest group of this round when it is the same task and duration.

        Only the machine's latest group may grow: its instances then stay
        contiguous in start order on that machine, so freeing them together
        gives the same float totals as freeing them one by one.
        """
        last = self._round_last_group.get(machine)
        if last is not None:
            group = self._groups[last]
            if group[0] == g and group[4] == duration and group[2] + group[3] == first:
                group[3] += count
                return
        gid = len(self._groups)
        self._groups.append([g, machine, first, count, duration, self.env.now, math.nan, ""])
        self._round_last_group[machine] = gid
        self._running_on[machine].add(gid)
        self._launch_queue.append(gid)

    def _launch_started_groups(self) -> None:
        for gid in self._launch_queue:
            self.env.timeout(self._groups[gid][4], value=gid).callbacks.append(self._finish_group)
        self._launch_queue.clear()

    # ------------------------------------------------------------ completions
    def _finish_group(self, event: Event) -> None:
        if not self._groups[event.value][7]:  # not already ended by a machine failure
            self._end_group(event.value, "finished")

    def _end_group(self, gid: int, outcome: str) -> None:
        """The group's instances end now: finished, failed, or re-queued to run again."""
        group = self._groups[gid]
        g, machine, first, count = group[:4]
        group[6] = self.env.now
        group[7] = outcome
        self._running_on[machine].discard(gid)
        self._change_free(machine, g, count, np.add)
        self._running_instances -= count
        self._change_job_usage(g, -count)
        if outcome == "requeued":
            self.task_started[g] -= count
            self.task_restarts[g] += count
            self._requeued.setdefault(g, []).append([first, count])
            if self.task_started[g] + count == self.task_instances[g]:  # it had left the waiting set
                self._set_ready(np.insert(self.ready, np.searchsorted(self.ready, g), g))
        else:
            (self.task_finished if outcome == "finished" else self.task_failed)[g] += count
            if self.task_finished[g] + self.task_failed[g] == self.task_instances[g]:
                self._finish_task(g)
        self._request_round()

    def _finish_task(self, g: int) -> None:
        now = self.env.now
        self.task_finish_time[g] = now
        for child in self._children[g]:
            self.task_pending_parents[child] -= 1
            if self.task_pending_parents[child] == 0:
                self.task_ready_time[child] = now
                self._set_ready(np.insert(self.ready, np.searchsorted(self.ready, child), child))
        j = self.task_job[g]
        self.job_unfinished_tasks[j] -= 1
        if self.job_unfinished_tasks[j] == 0:
            self.job_finish[j] = now
            self._unfinished_jobs -= 1
            if self._bar is not None:
                # Jobs finished, and how far simulated time has come against the last arrival.
                self._bar.set_postfix_str(f"t={now:.6g} (last arrival {self._last_arrival:.6g})", refresh=False)
                self._bar.update()

    def _stall_message(self) -> str:
        waiting = int((self.task_instances - self.task_started).sum())
        down = int((~self.up).sum())
        machines = f" {down} of {len(self.up)} machine(s) are down;" if down else ""
        return (
            f"t={self.env.now}: {self._unfinished_jobs} job(s) unfinished with {waiting} instance(s) waiting, "
            f"none running and none left to arrive;{machines} broker {broker_name(self.broker)!r} keeps answering "
            f"None. A broker must eventually start waiting work (check its decide() method), and the machines "
            f"that can hold it must be up."
        )


def simulate(
    cluster: ClusterSpec, jobs: Iterable[JobSpec], broker: object, *, tick: float | None = None, **options
) -> EpisodeResult:
    """Run one episode and return its results: ``Simulation(...).run()`` in one call."""
    return Simulation(cluster, jobs, broker, tick=tick, **options).run()
