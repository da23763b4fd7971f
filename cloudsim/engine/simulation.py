"""One episode: SimPy processes that submit jobs, ask the broker, run instances and free them.

Three kinds of activity share one `simpy.Environment`:

* the **arrival process** sleeps until each job's submit time and hands its
  tasks without parents to the waiting set;
* the **scheduler** asks the broker for decisions, one at a time or a plan
  (a list of them) at a time, until it answers ``None`` or a final plan; each
  decision starts instances on a machine;
* every **instance group** (instances of one task started on one machine at one
  instant with one duration) is one timeout; when it fires, the instances
  finish, their resources are freed, and children of finished tasks become ready.

The scheduler runs in one of two trigger modes:

* **event-driven** (``tick=None``, the default): once per instant at which
  something happened, after every event of that instant has been applied;
* **fixed tick** (``tick=1.0``): every ``tick`` time units from t=0, as in
  CloudSimPy. With ``tick=1`` and first-fit or Tetris the run reproduces
  CloudSimPy's makespans exactly; the ordering rules that requires are written
  down in docs/design.md and follow here from SimPy's own rule that events due at
  the same instant fire in the order they were created.

The engine can be driven from outside one decision at a time, which is what a
Gymnasium environment needs::

    sim = Simulation(cluster, jobs)
    while (view := sim.next_decision()) is not None:
        sim.apply(my_decision(view))        # a Decision, a plan (list), or None to end the round
    result = sim.result()

``next_decision`` steps the SimPy environment (``Environment.step``, the loop
``Environment.run`` makes) until an event's callback opens a decision round, and
returns the view; ``apply(None)`` closes the round and the environment moves on.
`Simulation.run` is this loop with a broker's ``decide``.

The state lives in `cloudsim.engine.cluster.ClusterState` (machines, fit cache) and
`cloudsim.engine.tasks.TaskTable` (tasks, DAG release, re-queues, the waiting set);
the view and the checks of decisions in `cloudsim.engine.broker`; results are built
from the public `cloudsim.engine.record.EpisodeRecord`.
"""

from __future__ import annotations

import heapq
import math
import time as wallclock
from collections.abc import Sized
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np
import simpy
from simpy.core import EmptySchedule
from simpy.events import NORMAL, URGENT, Event
from tqdm.auto import tqdm

from cloudsim.engine.broker import (ClusterView, CompiledRound, InvalidDecisionError, Suspend, as_plan, broker_name,
                                    ends_round, is_final)
from cloudsim.engine.checks import check_number, is_whole
from cloudsim.engine.plan_check import CheckedDecision, Starts, check_plan
from cloudsim.engine.cluster import ClusterState
from cloudsim.engine.foreign import failure
from cloudsim.engine.metrics import EpisodeResult
from cloudsim.engine.record import EpisodeRecord, by_end_time
from cloudsim.engine.reservations import FIT_TOLERANCE, Reservation, Timeline
from cloudsim.engine.specs import ClusterSpec, JobBlock, JobSpec, MachineEvent, UnschedulableTaskError, check_jobs_fit
from cloudsim.engine.streaming import ResultWriter, StreamedResult, check_stream_folder
from cloudsim.engine.tasks import TaskTable

if TYPE_CHECKING:
    from cloudsim.engine.energy import StreamMeter
    from cloudsim.engine.carbon import GridSignal

__all__ = ["FAILURE_POLICIES", "STREAM_BLOCK", "Simulation", "SimulationStalledError", "UnschedulableTaskError",
           "simulate"]

FAILURE_POLICIES = ("requeue", "fail")
STREAM_BLOCK = 1024  # jobs a streamed simulation reads at a time (from a stream of JobSpec objects)
_END = object()  # (the end of a stream)
BULK_FROM = 16  # plans this long are applied as array operations over the plan (`Simulation._start_all`)
EXTERNAL = "external"  # the broker name of a simulation driven from outside

# SimPy pops events by (time, priority, creation order): a priority above NORMAL
# makes an event fire after every ordinary event of its instant.
_END_OF_INSTANT = NORMAL + 1


def _stream_length(jobs) -> int | None:
    """A stream's jobs when it knows them (its ``len``; of a list or tuple holding `JobBlock` objects, their jobs)."""
    if isinstance(jobs, (list, tuple)) and any(isinstance(item, JobBlock) for item in jobs):
        return sum(len(item) if isinstance(item, JobBlock) else 1 for item in jobs)
    return len(jobs) if isinstance(jobs, Sized) else None


class SimulationStalledError(RuntimeError):
    """Jobs are unfinished, nothing runs or arrives, and the broker keeps waiting."""


def _scheduled(env: simpy.Environment, priority: int) -> Event:
    """An event, already triggered, that fires at the current instant with ``priority``."""
    event = Event(env)
    event._ok = True
    event._value = None
    env.schedule(event, priority=priority)
    return event


class Simulation:
    """A single episode of ``jobs`` on ``cluster``, run to the end by ``broker`` or stepped from outside.

    Args:
        cluster: the machines.
        jobs: the workload; jobs are taken in submit-time order (a stable sort,
            so jobs with equal submit times keep the order given).
        broker: an object with ``decide(view) -> Decision | None``; needed by
            `run`, not when the simulation is driven with `next_decision` and `apply`.
            In event-driven mode, a broker with a ``wake_after`` attribute (a
            number, or None for no wake; read each time it waits) is asked
            again at most that long after it waits.
        tick: ``None`` for event-driven scheduling, or the period of a fixed
            scheduler tick (``1.0`` for CloudSimPy-compatible replays).
        machine_events: `MachineEvent`s to apply (a trace's failures and
            recoveries); their order at equal times is kept.
        faults: a fault model (an object with ``events(machines)`` yielding
            time-ordered `MachineEvent`s, such as `cloudsim.engine.faults.RandomFaults`),
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
        name: the broker's name in results and messages (default: the broker's
            ``name`` or class name; ``"external"`` without a broker).
        stream_to: a folder: stream the run (see `cloudsim.engine.streaming`). ``jobs``
            is then read lazily, `STREAM_BLOCK` jobs at a time, and must be in
            submit-time order (any iterable: a generator such as
            `traces.iter_alibaba_like`); the tasks, jobs and groups that can no
            longer change are written there as Parquet and dropped, so memory
            follows the jobs in flight; `run` and `result` return a
            `cloudsim.engine.streaming.StreamedResult`. A run that fails leaves the
            folder as it was.
        compiled: whether `run` takes the engine's compiled path (`cloudsim.engine.compiled`): ``None`` (the
            default) where it applies, ``False`` never, ``True`` always (ValueError where it does not
            apply, saying why). It applies to a broker that declares a compiled round
            (``compiled_round``, as `agents.heuristics.FirstFit` does) in a run without machine events,
            faults or per-instance durations, streamed or not, and on a cluster with devices or machine
            attributes to the rounds of `cloudsim.engine.broker.CompiledRound.WITH_DEVICES` in a run held in memory;
            it gives the same results, bit for bit, many times faster (a streamed run's files and summary
            included, and the devices each group's instances took).
        on_round: called as ``on_round(time, machines)`` after every decision round, the empty ones
            included (a round the broker is not asked in because nothing waits): in event-driven mode at the
            end of every instant where jobs arrived, instances ended or a machine changed, and at every tick;
            not once the episode is over. ``machines`` has the machines' ``free`` resources and
            ``device_free`` milli-GPU, and counts their changes as `cloudsim.engine.cluster.ClusterState` does:
            ``machine_change > c`` picks the machines changed since a call that read ``changes`` as ``c``
            (the counts themselves differ between the paths); read it during the call only. It sees the state
            the round's decisions left, whatever the broker: `cloudsim.engine.fragmentation.GpuSampler` samples a
            run so, on either path.
        carbon_forecast: what brokers know of the grid's carbon intensity (`cloudsim.engine.carbon.GridSignal`,
            in run time), shown to them as ``view.carbon``: the signal itself, or a forecast of it with an error
            (`GridSignal.forecast`). The run's own carbon is metered afterwards on the true signal
            (`cloudsim.engine.energy.meter`). None: the views have no signal.
        resume_cost: time (>= 0) added to a suspended instance's remaining work each time it resumes (restoring
            its checkpoint, moving it), whichever machine it resumes on; see `cloudsim.Suspend`.
        energy: with ``stream_to``, a `cloudsim.engine.energy.StreamMeter` that meters the groups as they are
            written: the summary then holds the run's energy (and carbon). A run kept in memory is metered from
            its result (`cloudsim.engine.energy.meter`).

    Attributes:
        jobs: the jobs in arrival order (empty in a streamed simulation: ``tasks`` holds
            the jobs read and not yet written out).
        tasks: the `TaskTable` (every task's and job's progress).
        state: the `ClusterState` (free resources, machines up, fit cache).
        record: the public `EpisodeRecord` the results are built from.
    """

    def __init__(
        self,
        cluster: ClusterSpec,
        jobs: Iterable[JobSpec],
        broker: object | None = None,
        *,
        tick: float | None = None,
        machine_events: Iterable[MachineEvent] = (),
        faults: object | None = None,
        on_failure: str = "requeue",
        max_idle_ticks: int = 1000,
        progress: bool = False,
        name: str | None = None,
        stream_to: str | Path | None = None,
        compiled: bool | None = None,
        on_round: Callable[[float, Any], None] | None = None,
        carbon_forecast: GridSignal | None = None,
        resume_cost: float = 0.0,
        energy: StreamMeter | None = None,
    ) -> None:
        if broker is not None and not callable(getattr(broker, "decide", None)):
            raise TypeError(f"broker {broker!r} has no decide(view) method")
        self._skip_empty_rounds = False  # set by run() for a broker that declares empty_rounds = False
        if tick is not None and not (math.isfinite(tick) and tick > 0):
            raise ValueError(f"tick must be a positive number or None, got {tick!r}")
        if on_failure not in FAILURE_POLICIES:
            raise ValueError(f"on_failure must be one of {FAILURE_POLICIES}, got {on_failure!r}")
        self.carbon_forecast = carbon_forecast
        if energy is not None and stream_to is None:
            raise ValueError("energy meters a streamed run (stream_to=FOLDER); meter a run kept in memory from its "
                             "result: cloudsim.engine.energy.meter(result, power)")
        self._energy = energy
        check_number("resume_cost", resume_cost, at_least=0, hint="time added to suspended work when it resumes")
        self.resume_cost = float(resume_cost)
        self.machine_events = sorted(machine_events, key=lambda e: e.time)
        for event in self.machine_events:
            self._check_machine_event(event, cluster.machines)
        if faults is not None and not callable(getattr(faults, "events", None)):
            raise TypeError(f"faults {faults!r} has no events(machines) method; use "
                            "cloudsim.engine.faults.RandomFaults")
        self.faults = faults
        self.on_failure = on_failure
        self.cluster = cluster
        self.stream_to = None if stream_to is None else check_stream_folder(stream_to)
        self._source = iter(jobs) if stream_to is not None else None  # read lazily, but refused now if not iterable
        self._latest_read = -math.inf  # (the submit time of the last job read from the source)
        self._held = _END  # (a JobBlock read after a run of JobSpec objects: the next block)
        self._stream_length = _stream_length(jobs) if stream_to is not None else None
        ordered: list[JobSpec] = [] if stream_to is not None else list(jobs)  # (read once: jobs may be a generator)
        if any(isinstance(job, JobBlock) for job in ordered):
            raise TypeError("a JobBlock feeds a streamed simulation: pass stream_to=FOLDER, or give JobSpec objects")
        ordered.sort(key=lambda j: j.submit_time)
        self.broker = broker
        if compiled not in (None, True, False):
            raise ValueError(f"compiled must be None (where it applies), True or False, got {compiled!r}")
        self.compiled = compiled
        if on_round is not None and not callable(on_round):
            raise TypeError(f"on_round must be a function of (time, machines) or None, got {on_round!r}")
        self.on_round = on_round
        self._compiled = None  # the compiled path's state (`cloudsim.engine.compiled.CompiledState`) while it runs
        self.tick = tick
        self.max_idle_ticks = max_idle_ticks
        self.progress = progress
        self.env = simpy.Environment()
        self.tasks = TaskTable(cluster, ordered, resume_cost=self.resume_cost)
        check_jobs_fit(cluster, ordered, self.tasks.task_demand)
        self.jobs = ordered
        self.state = ClusterState(cluster, self.tasks)
        if name is None:
            name = broker_name(broker) if broker is not None else EXTERNAL
        self.record = EpisodeRecord(cluster, self.jobs, self.tasks, self.state, broker=name, tick=tick)
        self._writer: ResultWriter | None = None
        self._result: StreamedResult | None = None
        self._phase = "new"  # new -> running -> done (or failed)
        self._round_open = False
        self._view: ClusterView | None = None

    @staticmethod
    def _check_machine_event(event: MachineEvent, machines: int) -> None:
        if not isinstance(event, MachineEvent):
            raise TypeError(f"machine events must be MachineEvent(time, machine, state), got {event!r}")
        event.check(machines)

    # ------------------------------------------------------- the stepping API
    @property
    def now(self) -> float:
        """The simulated time."""
        return self.env.now

    @property
    def done(self) -> bool:
        """Whether the episode is over (`next_decision` returned None)."""
        return self._phase == "done"

    def next_decision(self) -> ClusterView | None:
        """Run until the broker is asked for a decision and return the view; None once the episode is over.

        Within a round, every call returns a fresh view of the same instant.
        Raises `SimulationStalledError` when jobs are left that nothing can start.
        """
        if not self._round_open:
            if self._phase == "new":
                self._start_episode()
            elif self._phase != "running":
                if self._phase == "done":
                    return None
                raise RuntimeError("this simulation stopped with an error; build a new one")
            step = self.env.step
            try:
                while not self._round_open:  # step SimPy's events until one opens a round
                    step()
            except EmptySchedule:
                self._end_episode()
                return None
            except BaseException:
                self._fail()
                raise
        self._view = ClusterView(self.env.now, self.state, self.tasks, timeline=self._timeline,
                                 carbon=self.carbon_forecast)
        return self._view

    def apply(self, decision: object, wake_after: float | None = None) -> None:
        """Apply a decision or a plan about the view `next_decision` returned, or end the round with None.

        A decision is a `cloudsim.Decision`, or a ``(machine, task[, count])``
        tuple, with ``task`` a position in that view. A plan is a list of them:
        the same decisions given one by one, in order (each sees the resources the
        earlier ones took), every one indexing the tasks of that view. Everything
        is checked first (`cloudsim.InvalidDecisionError`, naming the decision's
        position in a plan of several; the state untouched, nothing of the plan
        applied); the round stays open for more, unless the plan is a final
        `cloudsim.engine.broker.Plan`. ``None`` (or an empty plan) ends the round: time
        moves on to the next event. A `cloudsim.Suspend`, or a list of them only, stops running
        instances (checked all first, as a plan is); the round stays open, and the next view shows
        what they freed and the work waiting to resume. With ``wake_after`` (event-driven mode only),
        a round that ends opens again after at most that long even if nothing happens.
        """
        view = self._view
        if view is None:
            raise RuntimeError("apply() needs an open decision: call next_decision() first, once before each apply()")
        if wake_after is not None:
            if self.tick is not None:
                raise ValueError("wake_after applies to event-driven simulations (tick=None) only")
            if not (math.isfinite(wake_after) and wake_after > 0):
                raise ValueError(f"wake_after must be a positive number, got {wake_after!r}")
        self._view = None
        plan = as_plan(decision)
        if plan and isinstance(plan[0], Suspend):
            self._suspend_all(view, plan)  # the round stays open: the next view shows what they freed
            return
        if plan:
            long = len(plan) >= BULK_FROM and not self.state.constrained  # devices: one by one
            checked = check_plan(view, plan, broker=self.record.broker, tick=self.tick, bulk=long,
                                 as_arrays=not self.state.constrained and not self._timeline.pending)
            started = self._start_all(view, checked) if long else None
            if started is None:
                started = []
                for item in checked.decisions() if isinstance(checked, Starts) else checked:
                    g = int(view.task_index[item.task])
                    if item.at is None:
                        self._start(item.machine, g, item.count, item.free_after, item.devices)
                        started.append(g)
                    else:
                        self._reserve(item.machine, g, item.count, item.at)
            self.tasks.settle(started)  # those left with nothing waiting leave the waiting set, at once
            self._made += len(plan)
            self.record.decisions += len(plan)
            if not is_final(decision):  # (the plan has decisions: only a final one ends the round)
                return
        self._round_open = False
        try:
            self._close_round(wake_after)
        except BaseException:
            self._fail()
            raise

    def _suspend_all(self, view: ClusterView, plan: list) -> None:
        """Suspensions (`cloudsim.Suspend`), all checked, then applied in order; nothing of them applied when one
        is refused."""
        now, groups = self.env.now, self.record.groups
        where = f"broker {self.record.broker!r} at t={now}: "
        taken: dict[int, int] = {}  # group -> instances the earlier suspensions take of it
        counts = []
        for position, item in enumerate(plan):
            at = f"{where}suspension {position} of {len(plan)}: " if len(plan) > 1 else where
            if not isinstance(item, Suspend):
                raise InvalidDecisionError(f"{at}{item!r} among suspensions; a suspension is answered alone (a "
                                           "Suspend, or a list of them): give the starts on the next view")
            gid = item.group
            if not (is_whole(gid) and groups.base <= gid < groups.base + len(groups) and groups.running(int(gid))):
                raise InvalidDecisionError(f"{at}{item!r}: group {gid!r} is not running; suspend a group of "
                                           "view.running_groups.group")
            gid = int(gid)
            r = gid - groups.base
            left = groups.instances[r] - taken.get(gid, 0)
            count = left if item.count is None else item.count
            if not (is_whole(count) and 1 <= count <= left):
                raise InvalidDecisionError(f"{at}{item!r}: count must be a whole number from 1 to the {left} "
                                           f"instance(s) of group {gid} still running, or None for all of them")
            if groups.start[r] + groups.duration[r] <= now:
                raise InvalidDecisionError(f"{at}{item!r}: group {gid} ends at this instant; nothing is left to "
                                           "suspend")
            taken[gid] = taken.get(gid, 0) + int(count)
            counts.append((gid, int(count)))
        for gid, count in counts:
            self._suspend(gid, count)

    def _suspend(self, gid: int, count: int) -> None:
        """The last ``count`` instances of running group ``gid`` stop now; their remaining work waits again."""
        groups, now = self.record.groups, self.env.now
        r = gid - groups.base
        machine, task = groups.machine[r], groups.task[r]
        remaining = groups.start[r] + groups.duration[r] - now
        devices = self.record.group_devices.get(gid)
        if count == groups.instances[r]:
            part = gid
            self._running_on[machine].discard(gid)
        else:  # the last instances become a group of their own, with the devices they took
            part = groups.split(gid, count)
            if devices is not None:
                taken = devices[len(devices) - count:]
                del devices[len(devices) - count:]
                self.record.group_devices[part] = devices = taken
        if self._round_last_group.get(machine) == gid:  # (no later start of this round may grow it)
            del self._round_last_group[machine]
        groups.end_group(part, now, "suspended")
        self.state.give_back(machine, self.tasks.demand(task), count)
        if devices is not None:
            self.state.give_devices(machine, devices, int(self.tasks.task_device_milli[task - self.tasks.task_base]))
        self.tasks.suspend(task, groups.first_instance[part - groups.base], count, remaining)
        self.record.suspensions += count

    def reject(self, task: int) -> None:
        """Give up on the view's ``task``: its waiting instances fail now without running (counted in
        ``instances_failed``), as the fill experiment drops a pod that fits nowhere. The round stays open:
        `next_decision` returns a fresh view of the same instant."""
        view = self._view
        if view is None:
            raise RuntimeError("reject() needs an open decision: call next_decision() first")
        if not (isinstance(task, (int, np.integer)) and 0 <= task < view.num_tasks):
            raise ValueError(f"task {task!r}: no such task (the view has {view.num_tasks} ready tasks)")
        self._view = None
        if self.tasks.reject(int(view.task_index[task]), self.env.now) and self._bar is not None:
            self._show_progress(1)

    def result(self) -> EpisodeResult | StreamedResult:
        """The results of the finished episode (a `StreamedResult` for a streamed one)."""
        if self._phase != "done":
            raise RuntimeError("the episode is not over: call next_decision() until it returns None")
        if self._result is not None:
            return self._result
        return EpisodeResult.from_record(self.record, wall_s=self._wall_s)

    def run(self) -> EpisodeResult | StreamedResult:
        """Run the episode to the end with the broker and return its results."""
        if self.broker is None:
            raise TypeError("run() needs a broker: Simulation(cluster, jobs, broker); or drive it with "
                            "next_decision() and apply()")
        if self._phase != "new":
            raise RuntimeError("a Simulation runs once; build a new one for another episode")
        broker = self.broker
        if self.compiled is not False:
            refusal = self.compiled_refusal()
            if refusal is None:
                return self._run_compiled()
            if self.compiled:
                raise ValueError(f"compiled=True: the compiled path does not apply: {refusal}; leave compiled "
                                 "unset to take it where it applies")
        decide, next_decision, apply = broker.decide, self.next_decision, self.apply
        # A broker may ask to be woken after waiting even if nothing happens (event-driven mode);
        # its wake_after is read each time it waits, so it may change during the run.
        wakes = self.tick is None and hasattr(broker, "wake_after")
        # A broker that declares ``empty_rounds = False`` is not asked when nothing waits.
        self._skip_empty_rounds = getattr(broker, "empty_rounds", True) is False
        calls = 0
        try:
            while (view := next_decision()) is not None:
                calls += 1
                try:
                    decision = decide(view)
                except BaseException as error:  # the broker's own error or exit: say whose, and where
                    raise failure(error, self.record.broker, f"decide(view) call {calls} at t={view.time}", broker)
                apply(decision, broker.wake_after if wakes and ends_round(decision) else None)
        except BaseException:
            self._fail()  # the broker raised, or Ctrl-C: close the progress bar
            raise
        return self.result()

    def _reserve(self, machine: int, g: int, count: int, at: float) -> None:
        """Hold ``count`` instances of global task ``g`` on ``machine`` to start at ``at`` (a checked reservation)."""
        now = self.env.now
        duration = max(self.tasks.next_durations(g, count))
        self.tasks.reserve(g, count)
        self._timeline.add(Reservation(machine, g, count, at, at + duration,
                                       tuple((self.tasks.demand(g) * count).tolist()), len(self.record.reservations)))
        self.record.reservations.append([now, machine, *self.tasks.task_key(g), count, at, ""])
        if self.tick is None:  # a round opens at that instant, where the instances start
            self.env.timeout(at - now).callbacks.append(lambda _event: self._request_round())

    def _start_due_reservations(self) -> None:
        """Start the reservations due now; one whose machine no longer holds it (it failed) is
        cancelled, and its instances wait again."""
        for r in self._timeline.pop_due(self.env.now):
            demand = self.tasks.demand(r.task) * r.count
            slack = FIT_TOLERANCE * self.state.capacity[r.machine]
            row = self.record.reservations[r.row]
            if self.state.up[r.machine] and np.all(self.state.free[r.machine] + slack >= demand):
                self.state.take(r.machine, self.tasks.demand(r.task), r.count)
                for first, n, duration in self.tasks.start(r.task, r.count, self.env.now, reserved=True):
                    self._add_to_group(r.machine, r.task, first, n, duration)
                row[-1] = "started"
            else:
                self.tasks.cancel_reservation(r.task, r.count)
                self.record.cancelled_reservations += 1
                row[-1] = "cancelled"

    # --------------------------------------------------------- the episode
    def _start_episode(self) -> None:
        if self.stream_to is not None:
            self._writer = ResultWriter(self.stream_to, self.record, self._energy)
        self._phase = "running"
        self._running_on: list[set[int]] = [set() for _ in range(self.cluster.machines)]
        self._timeline = Timeline(self.state, self.tasks, self.record.groups, self._running_on, self.tick)
        self._launch_queue: list[int] = []
        self._round_last_group: dict[int, int] = {}
        self._arrivals_done = False
        self._round_requested = False
        self._machine_event_pending = False
        self._idle_rounds = 0
        self._rounds_opened = 0
        self._made = 0
        self._bar = None
        if self.progress:
            streamed = self._source is not None
            total = self._stream_length if streamed else len(self.jobs)  # a generator's length is unknown
            self._bar = tqdm(total=total, unit="job", desc=self.record.broker, leave=False)
            self._last_arrival = None if streamed else float(self.tasks.job_submit.max(initial=0.0))
        self._started_at = wallclock.perf_counter()
        # Arrivals start before the scheduler: at an instant both are due,
        # the scheduler's tick comes first, as in CloudSimPy.
        self.env.process(self._arrivals() if self._compiled is None else self._compiled_arrivals())
        if self.tick is not None:
            # The first tick fires at t=0 with the priority a SimPy process starts with.
            _scheduled(self.env, URGENT).callbacks.append(self._tick if self._compiled is None else self._compiled_tick)
        if self.machine_events or self.faults is not None:
            self.env.process(self._machine_changes())

    def _end_episode(self) -> None:
        self._close_bar()
        if self.tasks.unfinished_jobs:
            self._fail()
            raise SimulationStalledError(self._stall_message())
        if self.tick is None:
            self.record.makespan = float(self.tasks.latest_finish)
        self._wall_s = wallclock.perf_counter() - self._started_at
        if self._writer is not None:
            try:
                self._result = self._writer.finish(self._wall_s)
            except BaseException:
                self._fail()
                raise
        self._phase = "done"

    def _fail(self) -> None:
        self._phase = "failed"
        self._round_open = False
        self._close_bar()
        if self._writer is not None:
            self._writer.abort()
            self._writer = None

    def _close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def _over(self) -> bool:
        return self._arrivals_done and self.tasks.unfinished_jobs == 0

    def _arrivals(self):
        streamed = self._source is not None
        for j, submit in enumerate(self._streamed_submits() if streamed else self.tasks.job_submit.tolist()):
            # max(..., 0): floating-point time can pass a submit time equal to the last one by an ulp.
            yield self.env.timeout(max(submit - self.env.now, 0.0))
            self.tasks.arrive(j, self.env.now)
            self._request_round()
        self._arrivals_done = True

    def _streamed_submits(self):
        """The submit times of the source's jobs, read a block at a time into the task table; before each
        block, what can no longer change is written out."""
        while block := self._read_block():
            self._writer.write_finished(self.env.now)
            self.tasks.extend(block)
            yield from self.tasks.job_submit[-len(block):].tolist()

    def _read_block(self) -> list[JobSpec] | JobBlock:
        """The source's next block, checked: a `JobBlock` as it comes, or its next `STREAM_BLOCK` `JobSpec`
        objects, fewer before a JobBlock (none at its end); in submit-time order, each task fitting the
        cluster."""
        first, self._held = (self._held, _END) if self._held is not _END else (next(self._source, _END), _END)
        if first is _END:
            return []
        if isinstance(first, JobBlock):
            block = first
            order = [(block.ids[0], float(block.submit[0]))]  # (a block's own submit times do not decrease)
            last = float(block.submit[-1])
        else:
            block = [first]
            while len(block) < STREAM_BLOCK and (job := next(self._source, _END)) is not _END:
                if isinstance(job, JobBlock):  # (its own block, next)
                    self._held = job
                    break
                block.append(job)
            for job in block:
                if not isinstance(job, JobSpec):
                    raise TypeError(f"stream_to: the jobs must be JobSpec objects (or JobBlocks, each a block), got "
                                    f"{job!r}")
            order = [(job.id, job.submit_time) for job in block]
            last = block[-1].submit_time
        latest = self._latest_read
        for job, submit in order:
            if submit < latest:
                raise ValueError(
                    f"stream_to: job {job!r} is submitted at {submit}, before the job read before it ({latest}); "
                    "a streamed simulation reads jobs in submit-time order: sort them, or run without stream_to "
                    "(the simulation then sorts them)")
            latest = submit
        self._latest_read = last
        check_jobs_fit(self.cluster, block, counted=f"among the {len(block)} jobs read last (a streamed simulation "
                                                    "checks its jobs as it reads them)")
        return block

    # ------------------------------------------------------ decision rounds
    def _open_round(self) -> None:
        """Open a decision round: `next_decision` stops stepping and hands out its view."""
        self._round_open = True
        self._rounds_opened += 1
        self._made = 0
        self._round_last_group.clear()
        if self._timeline.pending:
            self._start_due_reservations()

    def _close_round(self, wake_after: float | None) -> None:
        self._count_idle_round(self._made)
        if self.tick is not None:
            # The next tick is created before this round's completions: see the module docstring.
            self.env.timeout(self.tick).callbacks.append(self._tick)
        self._launch_started_groups()
        if wake_after is not None:
            # Only the latest wait's wake counts: a round opening for any reason cancels it.
            token = self._rounds_opened
            self.env.timeout(wake_after).callbacks.append(
                lambda _event: token == self._rounds_opened and self._request_round())
        self._round_ended(self.state)

    def _round_ended(self, machines) -> None:
        """A round ended (an empty one too): ``on_round`` sees the machines it left."""
        if self.on_round is not None:
            self.on_round(self.env.now, machines)

    def _tick(self, _event: Event) -> None:
        if self._over():
            self.record.makespan = float(self.env.now)
            return
        if self._nothing_to_decide():
            # Nothing waits: the round a broker would answer None in, without the broker. The next tick is
            # made where that round's end would make it (no other event comes between), so events keep their order.
            self._count_idle_round(0)
            self.env.timeout(self.tick).callbacks.append(self._tick)
            self._round_ended(self.state)
            return
        self._open_round()

    def _request_round(self) -> None:
        """Event-driven mode: open a decision round once this instant's events are all applied."""
        if self.tick is None and not self._round_requested:
            self._round_requested = True
            _scheduled(self.env, _END_OF_INSTANT).callbacks.append(self._event_round)

    def _event_round(self, _event: Event) -> None:
        self._round_requested = False
        if self._over():
            return
        if self._nothing_to_decide():  # nothing waits and no reservation is held: a round would hand the broker
            self._round_ended(self.state)  # nothing to do
            return
        self._open_round()

    # ---------------------------------------------------- the compiled path
    def compiled_refusal(self) -> str | None:
        """Why `run` would not take the compiled path (`cloudsim.engine.compiled`), in one sentence; None where it
        would. Raises as `run` does where the broker's ``compiled_round`` fails or answers something else than
        None or a `CompiledRound`."""
        if self.broker is None:
            return "it has no broker (a simulation driven with next_decision() and apply() runs no round itself)"
        broker = self.broker
        owner = next((cls for cls in type(broker).__mro__ if "compiled_round" in vars(cls)), None)
        if owner is None:
            return f"broker {self.record.broker!r} declares no compiled round (compiled_round)"
        decider = next(cls for cls in type(broker).__mro__ if "decide" in vars(cls))
        # The class that declares the compiled round declares decide, or inherits it: a subclass that changes
        # decide does not keep a compiled round that would not be its decisions.
        if not issubclass(owner, decider) or "decide" in getattr(broker, "__dict__", {}):
            return (f"broker {self.record.broker!r} changes decide() of {owner.__name__}, whose compiled round "
                    "would not be its decisions")
        reasons = [why for why, applies in (
            ("machine events or faults", bool(self.machine_events) or self.faults is not None),
            ("per-instance durations", any(d is not None for d in self.tasks.instance_durations)),
            ("a broker with wake_after", hasattr(broker, "wake_after")),
            ("a broker that asks for empty rounds", getattr(broker, "empty_rounds", True) is not False),
        ) if applies]
        if reasons:
            return "it runs without " + ", ".join(reasons)
        try:
            rule = broker.compiled_round(self.cluster.resources)
        except BaseException as error:
            raise failure(error, self.record.broker, "compiled_round(resources)", broker)
        if rule is None:
            return f"broker {self.record.broker!r} has no compiled round here (its compiled_round answers None)"
        if not isinstance(rule, CompiledRound) or any(c >= len(self.cluster.resources) for c in rule.columns):
            raise TypeError(f"broker {self.record.broker!r}: compiled_round(resources) must answer None or a "
                            f"cloudsim.engine.broker.CompiledRound over the cluster's {len(self.cluster.resources)} "
                            f"resources, got {rule!r}")
        if rule.rng is not None and type(rule.rng.bit_generator) is not np.random.PCG64:
            return (f"broker {self.record.broker!r} draws from a {type(rule.rng.bit_generator).__name__} generator; "
                    "the compiled round draws as numpy's default one, PCG64 (np.random.default_rng), does")
        if self.state.constrained and (rule.rule not in CompiledRound.WITH_DEVICES or self._source is not None):
            return (f"on a cluster with devices or machine attributes only the rounds "
                    f"{', '.join(CompiledRound.WITH_DEVICES)} run compiled, in a run held in memory (broker "
                    f"{self.record.broker!r}'s round is {rule.rule!r}"
                    f"{', streamed' if self._source is not None else ''})")
        self._compiled_rule = rule
        return None

    def _run_compiled(self) -> EpisodeResult:
        """`run` on the compiled path: the same SimPy events, each callback one compiled call."""
        from cloudsim.engine.compiled import CompiledState

        self._compiled = CompiledState(self.state.capacity, self.tasks, self._compiled_rule, self.record.broker,
                                       self.tick, groups=None if self._source is not None else self.record.groups,
                                       machines_state=self.state, group_devices=self.record.group_devices)
        self._on_finish = self._compiled_finish  # (one bound method for every end event)
        self._start_episode()
        try:
            self.env.run()
            self._compiled_write_back()
        except BaseException:
            if self._compiled is not None:
                self._compiled.keep_broker_state()
            self._fail()
            raise
        self._end_episode()
        return self.result()

    def _compiled_write_back(self) -> None:
        if self._compiled is not None:
            self.record.decisions = self._compiled.write_back(self.tasks, self.state, self.record.groups)
            self._compiled = None

    def _compiled_arrivals(self):
        """`_arrivals` on the compiled path: each arrival, and the round where it may run at once. A streamed
        run reads the next block after the arrival of its block's last job (the round waits for it), writes
        out what can no longer change, and hands the moved task table to the compiled state."""
        env, arrive, streamed = self.env, self._compiled.arrive, self._source is not None
        block = self._compiled_next_block() if streamed else self.jobs
        while len(block):
            jobs = len(self.tasks.job_ids)
            first, last = jobs - len(block), len(block) - 1  # (the block's jobs are the table's last)
            submit = self.tasks.job_submit[first:].tolist() + [math.inf]
            arrival = env.timeout(max(submit[0] - env.now, 0.0))
            for j in range(len(block)):
                yield arrival
                now = env.now
                # The next arrival's timeout comes before the events of a round run now, as it comes before
                # the round event's on the Python path.
                arrival = env.timeout(max(submit[j + 1] - now, 0.0)) if j < last else None
                self._arrivals_done = j == last and not streamed  # (before the round: it may run now)
                # No other arrival at this instant, and nothing else due now: the round may run at once.
                may_round = not (streamed and j == last) and self._may_round_now() and submit[j + 1] > now
                self._compiled_after(arrive(first + j, now, may_round))
            block = self._compiled_next_block() if streamed else []
        self._arrivals_done = True

    def _compiled_next_block(self) -> list[JobSpec] | JobBlock:
        """`_streamed_submits`'s step on the compiled path: the next block read, what can no longer change
        written out (the compiled state hands over its ended groups and progress first), the block added
        to the task table and the compiled state laid out again for the table's rows."""
        block = self._read_block()
        if block:
            compiled, tasks = self._compiled, self.tasks
            ended, kept_task = compiled.hand_over()
            compiled.write_progress(tasks)
            self._writer.write(ended, kept_task, min(self.env.now, compiled.first_kept_start()))
            tasks.extend(block)
            compiled.restream(tasks)
        return block

    def _may_round_now(self) -> bool:
        """Whether a round due now may run in the current event: event-driven, none asked for yet, and SimPy's
        next event later than now. The round event would have been the instant's next and last event, so
        the events the round makes come in the same order (`_compiled_arrivals` makes the next arrival's
        timeout before the round, as the Python path makes it before the round event)."""
        return self.tick is None and not self._round_requested and self.env.peek() > self.env.now and \
            self.on_round is None  # (which is called at the round event of every instant)

    def _compiled_after(self, outcome: tuple) -> None:
        """After an event's call: the round it ran (`_compiled_launch`), or the round event it asks for."""
        if outcome[0] >= 0:
            self._compiled_launch(*outcome)
        elif outcome[0] == self._compiled.ROUND_DUE or self.on_round is not None:  # (an empty round: on_round's)
            self._compiled_ask_round()

    def _compiled_ask_round(self) -> None:
        """`_request_round` on the compiled path, for a round that is due (none is asked for while nothing
        waits: anything that makes a task wait asks again)."""
        if self.tick is None and not self._round_requested:
            self._round_requested = True
            _scheduled(self.env, _END_OF_INSTANT).callbacks.append(self._compiled_round)

    def _compiled_round(self, _event: Event) -> None:
        """`_event_round` and the broker's round on the compiled path."""
        self._round_requested = False
        if self.on_round is not None and self._arrivals_done and not self._compiled.unfinished_jobs:
            return  # (over: `_event_round` calls no on_round then)
        outcome = self._compiled.round(self.env.now)
        if outcome[0] >= 0:  # (NOTHING_WAITS: a compiled broker asks for no empty round)
            self._compiled_launch(*outcome)
        if self.on_round is not None:  # (the machines counted only where something reads them)
            self._round_ended(self._compiled.machines_now)

    def _compiled_tick(self, _event: Event) -> None:
        """`_tick` on the compiled path: the next tick is made before the round's end events, as there."""
        compiled = self._compiled
        if self._arrivals_done and not compiled.unfinished_jobs:
            self.record.makespan = float(self.env.now)
            return
        outcome = compiled.round(self.env.now)
        if outcome[0] >= 0:
            self._compiled_launch(*outcome)
        else:  # nothing waits: no round (a compiled broker asks for no empty round)
            self._compiled_count_idle(0)
            self.env.timeout(self.tick).callbacks.append(self._compiled_tick)
        if self.on_round is not None:
            self._round_ended(compiled.machines_now)

    def _compiled_launch(self, made: int, end_times: int, delay: float, first: int, stop: int) -> None:
        """`_close_round` after a compiled round of ``made`` decisions: the idle count, the next tick, and one
        end event per distinct end time of its groups (``delay``, ``first``, ``stop``: the first one's), as
        `_launch_started_groups` makes them."""
        self._rounds_opened += 1
        if self._compiled.reserves:  # (before the end events, as `apply` makes a reservation's wake-up first)
            self._compiled_reservations()
        if made:
            self._idle_rounds = 0
        else:
            self._compiled_count_idle(0)
        if self.tick is not None:
            self.env.timeout(self.tick).callbacks.append(self._compiled_tick)
        if end_times == 1:
            self.env.timeout(delay, value=(first, stop)).callbacks.append(self._on_finish)
        elif end_times:
            for delay, launched in self._compiled.end_times(first, end_times):
                self.env.timeout(delay, value=launched).callbacks.append(self._on_finish)

    def _compiled_reservations(self) -> None:
        """After a compiled EASY round: the reservation it started (or cancelled) and the one it made, in the
        episode's record (`_start_due_reservations`, `_reserve`), and the made one's wake-up at its start."""
        outcome, made = self._compiled.reservation_news()
        now = self.env.now
        if outcome is not None:
            self.record.reservations[-1][-1] = outcome  # (one pending at a time: the latest made)
            if outcome == "cancelled":
                self.record.cancelled_reservations += 1
        if made is not None:
            machine, task, at = made
            self.record.reservations.append([now, machine, *self.tasks.task_key(task + self.tasks.task_base), 1,
                                             at, ""])
            if self.tick is None:  # (with a tick, the tick's round starts it)
                self.env.timeout(at - now).callbacks.append(lambda _event: self._compiled_ask_round())

    def _compiled_count_idle(self, made: int) -> None:
        """`_count_idle_round` on the compiled path (which runs without machine events)."""
        if made:
            self._idle_rounds = 0
        elif self._arrivals_done and not self._compiled.running_instances and not self._compiled.reservation_pending:
            self._idle_rounds += 1
            if self._idle_rounds > self.max_idle_ticks:
                self._compiled_write_back()
                raise SimulationStalledError(self._stall_message())

    def _compiled_finish(self, event: Event) -> None:
        """`_finish_groups` on the compiled path, and the round where it may run at once."""
        a, b = event.value
        outcome = self._compiled.end(a, b, self.env.now, self._may_round_now())
        if outcome[0] and self._bar is not None:
            self._show_progress(outcome[0])
        made = outcome[1]
        if made >= 0:
            self._compiled_launch(made, outcome[2], outcome[3], outcome[4], outcome[5])
        elif made == self._compiled.ROUND_DUE or self.on_round is not None:  # (an empty round: on_round's)
            self._compiled_ask_round()

    def _nothing_to_decide(self) -> bool:
        """Whether a round may be skipped: the broker declared it needs no empty round, nothing waits and no
        reservation is held."""
        return self._skip_empty_rounds and not len(self.tasks.ready) and not self._timeline.pending

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
        if self.tasks.running_instances or self._timeline.pending or not self._arrivals_done:
            return
        can_be_repaired = self._machine_event_pending and not self.state.up.all()
        if not can_be_repaired or (len(self.tasks.ready) and self.state.fit_matrix()[1].any()):
            self._idle_rounds += 1
            if self._idle_rounds > self.max_idle_ticks:
                raise SimulationStalledError(self._stall_message())

    # ----------------------------------------------------- machine changes
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
            yield self.env.timeout(max(event.time - self.env.now, 0.0))
            self._machine_event_pending = False
            if self._over():
                return  # the run is over; later events change nothing
            machine = event.machine
            self.state.set_up(machine, event.state == "up")
            if event.state == "failed":
                for gid in sorted(self._running_on[machine]):
                    self._end_group(gid, "requeued" if self.on_failure == "requeue" else "failed")
            self._request_round()

    # ------------------------------------------------------ instance groups
    def _start(self, machine: int, g: int, count: int, free_after: np.ndarray | None = None,
               devices: list[tuple[int, ...]] | None = None) -> None:
        self.state.take(machine, self.tasks.demand(g), count, free_after)
        if devices is not None:  # each instance's devices, in start order (`cloudsim.engine.devices`)
            self.state.take_devices(machine, devices, int(self.tasks.task_device_milli[g - self.tasks.task_base]))
        taken = 0
        for first, n, duration in self.tasks.start(g, count, self.env.now, settle=False):
            gid = self._add_to_group(machine, g, first, n, duration)
            if devices is not None:
                self.record.group_devices.setdefault(gid, []).extend(devices[taken:taken + n])
            taken += n

    def _start_all(self, view: ClusterView, checked: "list[CheckedDecision] | Starts") -> list[int] | None:
        """A plan's checked starts applied at once, as array operations over the plan (the same state,
        bit for bit, as `_start` one by one); returns the tasks started. None, with nothing changed,
        when the plan holds a reservation or a start that is not one run (see `TaskTable.start_many`)."""
        starts = checked if isinstance(checked, Starts) else Starts.of(checked, view, self.state)
        if starts is None:
            return None
        g = view.task_index[starts.task]
        first = self.tasks.start_many(g, starts.count, self.env.now)
        if first is None:
            return None
        self.state.take_many(starts.machine, starts.count, starts.free_after)
        self._add_groups(starts.machine, g, first, starts.count, self.tasks.task_duration[g - self.tasks.task_base])
        return g.tolist()

    def _add_groups(self, machine: np.ndarray, g: np.ndarray, first: np.ndarray, count: np.ndarray,
                    duration: np.ndarray) -> None:
        """`_add_to_group` of every start of a plan, in order, as array operations: each start (one run)
        joins the group of the start before it on its machine when that is the same task and its
        instances follow on, as `_add_to_group` would grow that group; the others begin groups."""
        groups = self.record.groups
        order = np.argsort(machine, kind="stable")  # each machine's starts together, in plan order
        m, t, f, n = machine[order], g[order], first[order], count[order]
        # (np.r_ would be simpler to read, but costs 10 µs a call)
        joins = np.zeros(len(m), dtype=bool)  # the start joins the group of its machine's previous start
        same_machine = joins.copy()
        same_machine[1:] = m[1:] == m[:-1]
        joins[1:] = same_machine[1:] & (t[1:] == t[:-1]) & (f[1:] == f[:-1] + n[:-1])
        # A machine's first start may join the machine's latest group of this round.
        target = np.full(len(m), -1, dtype=np.int64)  # the earlier group a chain grows (none in a round's first plan)
        for k in np.flatnonzero(~same_machine).tolist() if self._round_last_group else ():
            last = self._round_last_group.get(int(m[k]))
            if last is not None and groups.continues(last, int(t[k]), float(duration[order[k]]), int(f[k])):
                target[k] = last
        roots = ~joins
        chain = np.maximum.accumulate(np.where(roots, np.arange(len(m)), 0))  # each start's first of its chain
        instances = np.zeros(len(m), dtype=np.int64)
        np.add.at(instances, chain, n)
        new = np.zeros(len(m), dtype=bool)  # starts that begin a group, in plan order
        new[order] = roots & (target < 0)
        rows = np.flatnonzero(new)
        by_plan = np.empty(len(m), dtype=np.int64)  # each start's position in the machine-sorted order
        by_plan[order] = np.arange(len(m))
        first_gid = groups.add_many(g[rows], machine[rows], first[rows], instances[by_plan[rows]], duration[rows],
                                    self.env.now)
        gid = np.where(target < 0, 0, target)  # per machine-sorted start: its chain's group
        gid[by_plan[rows]] = first_gid + np.arange(len(rows))  # (roots only; spread over chains below)
        gid = gid[chain]
        for k in np.flatnonzero(target >= 0).tolist():
            groups.grow(int(target[k]), int(instances[k]))
        new_gids = range(first_gid, first_gid + len(rows))
        for mm, gg in zip(machine[rows].tolist(), new_gids):
            self._running_on[mm].add(gg)
        self._launch_queue.extend(new_gids)
        last_of_machine = np.ones(len(m), dtype=bool)
        last_of_machine[:-1] = ~same_machine[1:]
        self._round_last_group.update(zip(m[last_of_machine].tolist(), gid[last_of_machine].tolist()))

    def _add_to_group(self, machine: int, g: int, first: int, count: int, duration: float) -> int:
        """Join the machine's latest group of this round when it is the same task and duration; its number.

        Only the machine's latest group may grow: its instances then stay
        contiguous in start order on that machine, so freeing them together
        gives the same float totals as freeing them one by one.
        """
        groups = self.record.groups
        last = self._round_last_group.get(machine)
        if last is not None and groups.continues(last, g, duration, first):
            groups.grow(last, count)
            return last
        gid = groups.add(g, machine, first, count, duration, self.env.now)
        self._round_last_group[machine] = gid
        self._running_on[machine].add(gid)
        self._launch_queue.append(gid)
        return gid

    def _launch_started_groups(self) -> None:
        """One SimPy event for the round's groups that end at one time, made where the first of them
        would have made its own: events of one time fire in creation order, and nothing else of that
        time was created between them, so they end in the same order as with one event each."""
        groups, now, queue = self.record.groups, self.env.now, self._launch_queue
        if len(queue) == 1:  # most rounds
            self.env.timeout(groups.duration[queue[0] - groups.base], value=queue[:]).callbacks.append(
                self._finish_groups)
            queue.clear()
            return
        if len(queue) >= BULK_FROM:  # the same grouping, as array operations
            gids = np.array(queue, dtype=np.int64)
            duration = np.frombuffer(groups.duration, dtype=np.float64)[gids - groups.base]  # (a copy)
            for members in by_end_time(now, duration):
                self.env.timeout(float(duration[members[0]]), value=gids[members].tolist()).callbacks.append(
                    self._finish_groups)
            queue.clear()
            return
        ends: dict[float, tuple[float, list[int]]] = {}  # end time -> (duration, groups in launch order)
        for gid in queue:
            duration = groups.duration[gid - groups.base]
            ends.setdefault(now + duration, (duration, []))[1].append(gid)  # SimPy's time: now + delay
        for duration, gids in ends.values():
            self.env.timeout(duration, value=gids).callbacks.append(self._finish_groups)
        queue.clear()

    def _finish_groups(self, event: Event) -> None:
        groups = self.record.groups
        running = groups.running
        gids = event.value
        if len(gids) >= BULK_FROM:
            ids = np.array(gids, dtype=np.int64)
            gids = ids[np.frombuffer(groups.outcome, dtype=np.int8)[ids - groups.base] == 0].tolist()  # still running
            if len(gids) >= BULK_FROM and self._finish_all(gids):
                return
        for gid in gids:
            if running(gid):  # not already ended by a machine failure
                self._end_group(gid, "finished")

    def _finish_all(self, gids: list[int]) -> bool:
        """Groups that finish now, ended at once as array operations (the same state, bit for bit, as
        `_end_group` one by one); False, with nothing changed, where that is not possible."""
        if self.state.constrained:  # devices are given back group by group
            return False
        groups, now = self.record.groups, self.env.now
        rows = np.array(gids, dtype=np.int64) - groups.base
        task = np.frombuffer(groups.task, dtype=np.int64)[rows]  # copies: the columns can grow again
        instances = np.frombuffer(groups.instances, dtype=np.int64)[rows]
        jobs = self.tasks.finish_many(task, instances, now)
        if jobs is None:
            return False
        groups.end_many(gids, now, "finished")
        machine = np.frombuffer(groups.machine, dtype=np.int64)[rows]
        for m, gid in zip(machine.tolist(), gids):
            self._running_on[m].discard(gid)
        self.state.give_back_many(machine, self.tasks.task_demand[task - self.tasks.task_base], instances)
        if jobs and self._bar is not None:
            self._show_progress(jobs)
        self._request_round()
        return True

    def _end_group(self, gid: int, outcome: str) -> None:
        """The group's instances end now: finished, failed, or re-queued to run again."""
        groups = self.record.groups
        now = self.env.now
        groups.end_group(gid, now, outcome)
        r = gid - groups.base  # its row: read the columns, not a whole InstanceGroup, on this hot path
        machine, task, instances = groups.machine[r], groups.task[r], groups.instances[r]
        self._running_on[machine].discard(gid)
        self.state.give_back(machine, self.tasks.demand(task), instances)
        devices = self.record.group_devices.get(gid)
        if devices is not None:
            self.state.give_devices(machine, devices, int(self.tasks.task_device_milli[task - self.tasks.task_base]))
        if self.tasks.end(task, groups.first_instance[r], instances, outcome, now) and self._bar is not None:
            self._show_progress(1)
        self._request_round()

    def _show_progress(self, jobs: int) -> None:
        """``jobs`` more jobs finished, and how far simulated time has come against the last arrival."""
        last = "" if self._last_arrival is None else f" (last arrival {self._last_arrival:.6g})"
        self._bar.set_postfix_str(f"t={self.env.now:.6g}{last}", refresh=False)
        self._bar.update(jobs)

    def _stall_message(self) -> str:
        t = self.tasks
        waiting = int((t.task_instances - t.task_started - t.task_reserved).sum())
        down = int((~self.state.up).sum())
        machines = f" {down} of {len(self.state.up)} machine(s) are down;" if down else ""
        return (
            f"t={self.env.now}: {t.unfinished_jobs} job(s) unfinished with {waiting} instance(s) waiting, "
            f"none running and none left to arrive;{machines} broker {self.record.broker!r} keeps answering "
            f"None. A broker must eventually start waiting work (check its decide() method), and the machines "
            f"that can hold it must be up."
        )


def simulate(
    cluster: ClusterSpec, jobs: Iterable[JobSpec], broker: object, *, tick: float | None = None, **options
) -> EpisodeResult:
    """Run one episode and return its results: ``Simulation(...).run()`` in one call."""
    return Simulation(cluster, jobs, broker, tick=tick, **options).run()
