"""The plug-in point: what a broker sees, what it may answer, and how answers are checked.

A broker is any object with a ``decide(view)`` method. The simulation calls it
repeatedly at a decision instant (a decision round); each call returns one
`Decision` (start ``count`` instances of ``view`` task ``task`` on machine
``machine``), a plan (a list of decisions, meaning them one by one in order, each
indexing that view's tasks; checked whole by `cloudsim.engine.plan_check.PlanCheck`; a final `Plan` also ends
the round), or ``None`` to end the instant. The view is a read-only picture of the cluster and the ready
tasks, indexed so that vectorised brokers can work on whole arrays::

    class SmallestFirst:
        def decide(self, view):
            machines, tasks = view.fit_pairs
            if len(tasks) == 0:
                return None
            best = np.argmin(view.demand[tasks, 0])      # smallest cpu demand
            return Decision(machines[best], tasks[best])
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from functools import cached_property
from collections.abc import Sequence
from typing import TYPE_CHECKING, Hashable, Protocol, runtime_checkable

import numpy as np

from cloudsim.engine.checks import is_whole
from cloudsim.engine.cluster import frozen
from cloudsim.engine.devices import device_fit_count

if TYPE_CHECKING:
    from cloudsim.engine import arithmetic
    from cloudsim.engine.carbon import GridSignal
    from cloudsim.engine.cluster import ClusterState
    from cloudsim.engine.fragmentation import TargetWorkload
    from cloudsim.engine.reservations import Reservation, Timeline
    from cloudsim.engine.tasks import TaskTable

__all__ = [
    "ArrayPlan",
    "Broker",
    "ClusterView",
    "CompiledRound",
    "Decision",
    "InvalidDecisionError",
    "Plan",
    "RunningGroups",
    "Suspend",
    "as_plan",
    "ends_round",
    "is_final",
    "is_index",
    "broker_name",
    "frozen",
    "sequential_fit",
    "sequential_fit_count",
]


@dataclass(frozen=True)
class Decision:
    """Start ``count`` waiting instances of the view's task ``task`` on machine ``machine``.

    ``machine`` indexes the cluster's machines; ``task`` indexes the view's ready
    tasks (the rows of `ClusterView.demand`). A plain tuple ``(machine, task)`` or
    ``(machine, task, count)`` is accepted too.

    ``at`` (a time later than now) makes it a reservation: the instances leave
    the waiting set now and start at ``at``; the machine must be up and they
    must fit its free profile (`ClusterView.free_profile`) for their whole
    duration from then, or the decision is refused. None (or now) starts them now.

    ``devices``: for a task that asks for devices (``view.device_request``), the
    machine's devices its one instance takes (``count`` 1); each must have the
    task's milli-units free, and an exclusive task's must be completely free. None:
    the engine picks them (`cloudsim.engine.devices.default_devices`).
    """

    machine: int
    task: int
    count: int = 1
    at: float | None = None
    devices: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Suspend:
    """Suspend ``count`` of the running instance group ``group``'s instances (None: all of them; otherwise its
    last ``count``).

    ``group`` is a group id of `ClusterView.running_groups`. The instances stop now and free what they held on
    their machine (devices included); their remaining work waits again among their task's waiting instances,
    before its fresh ones, and resumes wherever a later decision starts it, running for that remaining work plus
    the simulation's ``resume_cost``. The results count each suspension (``instance_suspensions``) and show the
    group's part as ended with outcome "suspended".

    A suspension changes the view (the task waits again, its position may move): a broker answers suspensions
    alone, one or a list of them, and the round stays open; the next view shows the freed machines.
    """

    group: int
    count: int | None = None


@dataclass(frozen=True)
class RunningGroups:
    """The instance groups running at a view's instant, in start order: one entry per group in each array.

    ``group``: their ids (what `Suspend` names); ``machine``; ``task_index``: their tasks' global indices (as
    `ClusterView.task_index`, whose ready tasks they may not be among); ``job_index``: their jobs' rows (as
    `ClusterView.job_index`); ``instances``; ``start``: when they started; ``end``: when they finish if left
    to run; ``deadline``: their jobs' deadlines (NaN: none); ``latest_finish``: when they must end for their jobs
    to meet their deadlines (`ClusterView.latest_finish`).
    """

    group: np.ndarray
    machine: np.ndarray
    task_index: np.ndarray
    job_index: np.ndarray
    instances: np.ndarray
    start: np.ndarray
    end: np.ndarray
    deadline: np.ndarray
    latest_finish: np.ndarray

    def __len__(self) -> int:
        return len(self.group)


@runtime_checkable
class Broker(Protocol):
    """A scheduling policy. Return one `Decision` or a plan (a list of them) per call, or ``None`` to wait.

    ``decide`` is the whole protocol. A broker may also declare these optional
    attributes; whoever uses one looks it up by name and does without it when it
    is absent (so they are not members of the protocol, which ``isinstance``
    would then require):

    * ``name: str``: how reports and errors call the broker (`broker_name`;
      default: its class name);
    * ``wake_after: float | None``: in event-driven mode, ask the broker again at
      most this long after it waits, even if nothing happens; read each time it
      waits (`cloudsim.Simulation.run`; default: never);
    * ``empty_rounds: bool``: ``False`` means the broker is not asked while no
      task waits (`cloudsim.Simulation.run`; default ``True``);
    * ``check_cluster(cluster) -> None``: raise ``ValueError`` (saying what does
      not fit and what to do) for a cluster the broker cannot schedule, and
      warn (``warnings.warn``) for one it runs on with caveats; the run layer
      calls it before any episode (``cloudsim.run.check_broker`` and the
      commands' resolve step), never the engine;
    * ``compiled_round(resources) -> CompiledRound | None``: what the broker's round is, for the engine's
      compiled path (`CompiledRound`; built-in brokers only: it claims that the engine's compiled round makes
      the decisions ``decide`` would make).
    """

    def decide(self, view: "ClusterView") -> Decision | tuple | list | None: ...


@dataclass(frozen=True)
class CompiledRound:
    """A broker's round as the engine's compiled path (`cloudsim.engine.compiled`) runs it, in place of its ``decide``.

    A broker's ``compiled_round(resources)`` answers one (or None: its rounds are not compiled), given the
    cluster's resource names; `cloudsim.Simulation.run` takes the compiled path for it where that applies.

    Attributes:
        rule: ``"first-fit"``: `agents.heuristics.FirstFit`'s round. ``"dot"``: start one instance of the fit
            (machine, task) pair with the largest sum over ``columns`` of free x demand, the first machine, then
            the first task, on ties, again and again until no pair fits (Tetris). ``"shares"``: the same with
            the sum of free / capacity x demand / capacity, 0 for a resource the machine lacks (Packer).
            ``"fcfs"``, ``"sjf"``, ``"hrrn"``: the waiting tasks in arrival order (stopping at the first that
            fits no machine), by duration, or by response ratio (highest first), each started on the first
            machine that fits it with as many instances as fit there, again while it fits one; ``"best-fit"``
            and ``"least-load"``: the waiting tasks in arrival order, each on the fitting machine with the
            least sum over resources of (free - demand) / capacity, with as many instances as fit there, or
            with the least mean over resources of (capacity - free) / capacity, one instance at a time, the
            first machine on ties; ``"drf"``: one instance at a time of the waiting task whose job has the
            smallest dominant share, on the first machine that fits it (`agents.heuristics.QueuePolicy`'s
            rounds); ``"round-robin"``: the waiting tasks in arrival order, one instance at a time, each on the
            first machine that fits it counting on cyclically from the machine after the previous start's
            (``turn``: where it counts from at the start); ``"random"``: one instance of a fit pair drawn
            uniformly with ``rng``, again and again until no pair fits (`agents.heuristics.RandomFit`);
            ``"fitness"``: the pair score is ``network``'s output on the pair's six features (DeepJS's):
            the machine's free resources in the two ``columns`` (cpu, memory), the task's demand of both, its
            duration and its waiting instances, each as (x - mean) / std with ``feature_mean`` and
            ``feature_std``; a start changes the task's waiting count, so its score too; ``"tetris-star"``: the pair
            score is ``knob`` x a / A + (1 - knob) x h / H, a being the pair's ``"shares"`` score, h its task's
            1 / duration, A and H their maxima over every fit pair now (a value / an infinite maximum is 1 for an
            infinite value and 0 otherwise, and 0 when the maximum is 0), as `agents.heuristics.TetrisStar`;
            ``"easy"``: EASY backfilling (`agents.heuristics.EasyBackfilling`): the head of the
            queue on the first machine that fits it, else a reservation of its earliest start, and while that is
            pending one instance at a time of the first task that fits now without taking what it holds.
        columns: the resources the pair score reads, by position in ``resources`` (a pair score's only).
        network: ``"fitness"``'s network (`cloudsim.engine.arithmetic.Network` with tanh between layers, 6 inputs, 1
            output; a snapshot: the engine copies its weights when the run starts).
        feature_mean, feature_std: ``"fitness"``'s normaliser, 6 numbers each.
        turn: ``"round-robin"``'s next machine, the broker's own one-element int64 array: the engine reads it
            when the run starts and writes it back when the run ends or stops, so that the broker's next run
            goes on from there, as its own ``decide`` would.
        rng: ``"random"``'s generator, the broker's own: the round draws from it as the broker's ``decide``
            draws (``integers(pairs)`` over the fit (machine, task) pairs, machine-major, one instance a
            draw), so that the broker's stream goes on from where the run left it.
        knob: ``"tetris-star"``'s weight of packing against shortness, in [0, 1].
        seed: a GPU policy's seed (``"gpu-best-fit"``, ``"gpu-dot-product"``, ``"gpu-packing"``,
            ``"gpu-clustering"``, `agents.heuristics.gpu`'s placements, one instance of the first waiting task that fits
            some machine at a time, on the best-scoring machine that fits it, the cpu in ``columns``): its ties
            go to the first machine of the permutation ``numpy.random.default_rng(seed)`` draws first.
            ``"fgd"`` is such a policy too, FGD's (`agents.heuristics.gpu.FragmentationGradientDescent` with its scores
            whole numbers): a machine scores int(100 / (1 + exp(-D / 1000))), D the largest decrease of its
            fragmentation against ``target`` that a placement of the instance makes (D clipped to +-5e5), and a
            share takes the device that makes it (the first on ties). ``"gpu-random"``
            (`agents.heuristics.gpu.GpuRandom`)
            draws from that generator after the permutation: the machine, ``integers(n)`` over the n that fit
            (ascending), and for a task of devices its devices among those with room, as ``choice(room, count,
            replace=False)`` draws them (Floyd's sampling, then its shuffle's draws), taken in ascending order.
        target: ``"fgd"``'s target workload (`cloudsim.engine.fragmentation.TargetWorkload`), the shapes fragmentation
            is measured against.
    """

    rule: str
    columns: tuple[int, ...] = ()
    network: "arithmetic.Network | None" = field(default=None, compare=False)
    feature_mean: tuple[float, ...] = ()
    feature_std: tuple[float, ...] = ()
    turn: np.ndarray | None = field(default=None, compare=False)
    rng: np.random.Generator | None = field(default=None, compare=False)
    knob: float | None = None

    seed: int | None = None
    target: "TargetWorkload | None" = field(default=None, compare=False)

    RULES = ("first-fit", "dot", "shares", "fcfs", "sjf", "hrrn", "best-fit", "least-load", "drf", "fitness",
             "round-robin", "random", "tetris-star", "easy", "gpu-best-fit", "gpu-dot-product", "gpu-packing",
             "gpu-clustering", "fgd", "gpu-random")
    PAIR_SCORES = ("dot", "shares", "fitness", "tetris-star")
    GPU_POLICIES = ("gpu-best-fit", "gpu-dot-product", "gpu-packing", "gpu-clustering", "fgd", "gpu-random")
    WITH_DEVICES = ("first-fit", "fcfs", "sjf", "hrrn", "best-fit", "least-load", "drf", "round-robin", "random",
                    *GPU_POLICIES)
    """The rounds the compiled path runs on a cluster with devices or machine attributes (a run held in memory):
    a machine fits a task where it also has the task's devices with room and an accepted attribute value, and each
    instance takes its devices by the engine's default rule (`cloudsim.engine.devices`)."""

    def __post_init__(self) -> None:
        if self.rule not in self.RULES:
            raise ValueError(f"CompiledRound: rule must be one of {self.RULES}, got {self.rule!r}")
        if (self.rule in self.PAIR_SCORES + self.GPU_POLICIES) != bool(self.columns) or (
                self.rule in self.GPU_POLICIES and len(self.columns) != 1):
            raise ValueError(f"CompiledRound: a pair score ({', '.join(self.PAIR_SCORES)}) reads some columns, a GPU "
                             f"policy ({', '.join(self.GPU_POLICIES)}) one (its cpu), and the other rules none; got "
                             f"rule {self.rule!r} with columns {self.columns!r}")
        seed = self.seed
        if (self.rule in self.GPU_POLICIES) != (seed is not None) or seed is not None and not (
                is_whole(seed) and seed >= 0):
            raise ValueError(f"CompiledRound: a GPU policy's rule, and it alone, takes a seed (its ties' "
                             f"permutation): an int >= 0; got rule {self.rule!r} with seed {seed!r}")
        knob = self.knob
        if (self.rule == "tetris-star") != (knob is not None) or knob is not None and not (
                isinstance(knob, float) and 0.0 <= knob <= 1.0):
            raise ValueError(f"CompiledRound: rule 'tetris-star', and it alone, takes a knob: a float in [0, 1]; got "
                             f"rule {self.rule!r} with knob {knob!r}")
        if not all(isinstance(c, int) and c >= 0 for c in self.columns) or len(set(self.columns)) < len(
                self.columns):
            raise ValueError(f"CompiledRound: columns must be distinct resource positions, got {self.columns!r}")
        turn = self.turn
        if (self.rule == "round-robin") != (turn is not None) or turn is not None and not (
                isinstance(turn, np.ndarray) and turn.shape == (1,) and turn.dtype == np.int64):
            raise ValueError(f"CompiledRound: rule 'round-robin', and it alone, takes a turn: a one-element int64 "
                             f"array; got rule {self.rule!r} with turn {turn!r}")
        from cloudsim.engine.fragmentation import TargetWorkload
        if (self.rule == "fgd") != (self.target is not None) or self.target is not None and not isinstance(
                self.target, TargetWorkload):
            raise ValueError(f"CompiledRound: rule 'fgd', and it alone, takes a target: a "
                             f"cloudsim.engine.fragmentation.TargetWorkload; got rule {self.rule!r} with target "
                             f"{self.target!r}")
        if (self.rule == "random") != (self.rng is not None) or not (
                self.rng is None or isinstance(self.rng, np.random.Generator)):
            raise ValueError(f"CompiledRound: rule 'random', and it alone, takes an rng: a numpy Generator "
                             f"(np.random.default_rng); got rule {self.rule!r} with rng {self.rng!r}")
        if self.rule != "fitness":
            if self.network is not None or self.feature_mean or self.feature_std:
                raise ValueError(f"CompiledRound: only rule 'fitness' takes a network; got rule {self.rule!r}")
            return
        network = self.network
        if (len(self.columns) != 2 or network is None or not getattr(network, "tanh", False)
                or network.inputs != 6 or network.outputs != 1):
            raise ValueError("CompiledRound: rule 'fitness' reads two columns (cpu, memory) and takes a "
                             "cloudsim.engine.arithmetic.Network of 6 inputs, 1 output and tanh between layers; got "
                             f"columns {self.columns!r} and network {network!r}")
        if len(self.feature_mean) != 6 or len(self.feature_std) != 6:
            raise ValueError("CompiledRound: rule 'fitness' takes feature_mean and feature_std of 6 numbers each; "
                             f"got {self.feature_mean!r} and {self.feature_std!r}")


class InvalidDecisionError(ValueError):
    """A broker asked for something the cluster cannot do; the state is left untouched."""


def broker_name(broker: object) -> str:
    """The broker's ``name`` attribute, else its class name."""
    return str(getattr(broker, "name", type(broker).__name__))


def sequential_fit_count(free: np.ndarray, demand: np.ndarray, limit: int) -> int:
    """How many instances of ``demand`` fit into ``free`` one after another (at most ``limit``).

    The k-th start is allowed when the free vector left by the previous starts is
    ``>= demand`` in every dimension. Free resources are running float64 totals,
    so the check repeats the exact sequence of subtractions the simulation makes
    rather than dividing: ``1.0 - 0.05 - 0.05 ...`` fits 19 instances, not 20.
    """
    return sequential_fit(free, demand, limit)[0]


def sequential_fit(free: np.ndarray, demand: np.ndarray, limit: int) -> tuple[int, np.ndarray]:
    """`sequential_fit_count`, and the free vector those instances leave (the engine's running totals)."""
    left = free.tolist()
    need = demand.tolist()
    # The quotient bounds the count: the running totals round, but never by a whole instance (+2: slack).
    bound = limit
    for f, d in zip(left, need):
        if d > 0 and f / d + 2 < bound:  # (a quotient too large for a float bounds nothing)
            bound = int(f / d) + 2
    if bound <= _STEPWISE:  # a few starts: step by step on Python floats (the same IEEE doubles)
        count = 0
        while count < limit and all(map(operator.ge, left, need)):
            left = list(map(operator.sub, left, need))
            count += 1
        return count, np.array(left)
    steps = np.empty((bound + 1, free.shape[0]))
    steps[0] = free
    steps[1:] = demand
    remaining = np.subtract.accumulate(steps, axis=0)  # remaining[k]: free after k starts
    allowed = (remaining[:-1] >= demand).all(axis=1)  # allowed[k]: the (k+1)-th start fits
    count = bound if allowed.all() else int(np.argmin(allowed))
    return count, remaining[count]


_STEPWISE = 16


class ClusterView:
    """A read-only picture of one decision instant, built fresh for every decision.

    Machine arrays are indexed by machine (0..M-1). Task arrays are indexed by the
    position of a ready task with waiting instances, in arrival order: job
    arrival order, then the task's order in its job. Heavier attributes
    (``fits``, ``fit_pairs``) are computed on first use. A view is valid during
    the ``decide`` call it was given to: copy what you want to keep.

    ``view.window(n)`` is the same instant restricted to the first ``n`` waiting
    tasks (the visible-task window of DeepRM, DeepRM_Plus and Deepk8s); the rest
    form the backlog (``backlog``, ``backlog_demand``, ``backlog_duration``).
    Window positions are positions in the full view too, so a decision made on a
    window is a decision on the full view.
    """

    def __init__(self, time: float, state: "ClusterState", tasks: "TaskTable", window: int | None = None,
                 timeline: "Timeline | None" = None, carbon: "GridSignal | None" = None) -> None:
        self._state = state
        self._tasks = tasks
        self._window = window
        self._timeline = timeline
        self._fit_counts: dict[tuple[int, int], int] = {}
        self.time: float = time
        self.carbon = carbon
        """What the scheduler knows of the grid's carbon intensity (`cloudsim.engine.carbon.GridSignal`, in run
        time: ``carbon.intensity(view.time)`` now, ``carbon.mean(a, b)`` over an interval), a forecast with the
        error the run was given; None when the run has no grid signal."""
        self.resources: tuple[str, ...] = state.spec.resources
        self.capacity: np.ndarray = state.capacity_view
        """Capacity of each machine, shape (machines, resources)."""
        self.free: np.ndarray = state.free_view
        """Free resources of each machine now, shape (machines, resources)."""
        self.up: np.ndarray = state.up_view
        """Whether each machine is up (takes work)."""
        self.task_index: np.ndarray = tasks.ready_view if window is None else tasks.ready_view[:window]
        """Global index of each ready task (stable over the episode)."""
        demand = tasks.ready_demand()
        self.demand: np.ndarray = demand if window is None else demand[:window]
        """Per-instance demand of each ready task, shape (tasks, resources)."""

    def window(self, size: int) -> "ClusterView":
        """This instant with only the first ``size`` waiting tasks visible; the rest are the backlog."""
        if not (is_whole(size) and size >= 1):
            raise ValueError(f"a task window holds at least 1 task, got {size!r}")
        windows = self.__dict__.setdefault("_windows", {})  # one view per size: its cached arrays are shared
        if size not in windows:
            windows[size] = ClusterView(self.time, self._state, self._tasks, int(size), self._timeline, self.carbon)
        return windows[size]

    @property
    def num_machines(self) -> int:
        return self.capacity.shape[0]

    @property
    def num_tasks(self) -> int:
        return self.task_index.shape[0]

    @property
    def backlog(self) -> int:
        """Waiting tasks outside the window (0 for a view without a window)."""
        return len(self._tasks.ready) - self.num_tasks

    @cached_property
    def _rows(self) -> np.ndarray:
        """The ready tasks' rows in the task table's arrays."""
        return self._tasks.rows(self.task_index)

    @property
    def constrained(self) -> bool:
        """Whether the cluster has devices or machine attributes, which fits then also ask for."""
        return self._state.constrained

    def accepted_by(self, machine: int) -> np.ndarray:
        """Whether each ready task accepts ``machine``'s attributes, a bool array (tasks,) (on a cluster
        without devices or attributes: all True)."""
        if not self._state.constrained:
            return np.ones(self.num_tasks, dtype=bool)
        return self._state.accepted_by(machine)[: self.num_tasks]

    @property
    def device_free(self) -> np.ndarray:
        """Free milli-units of each machine's devices, shape (machines, most devices of a machine); -1 where a
        machine has fewer devices. A device is `cloudsim.engine.specs.DEVICE_MILLI` milli-units."""
        return self._state.device_free_view

    @property
    def device_users(self) -> np.ndarray:
        """Instances holding devices on each machine by kind, shape (machines, most devices + 1): column 0
        counts instances sharing a device, column k instances holding k whole devices."""
        return self._state.device_users_view

    @property
    def device_count(self) -> np.ndarray:
        """Devices of each machine, shape (machines,)."""
        return self._state.device_count

    def machine_attribute(self, name: str) -> tuple[str, ...]:
        """Each machine's value of attribute ``name`` (a GPU model, say); "" where it has none."""
        return self._state.spec.attribute(name)

    @cached_property
    def device_request(self) -> np.ndarray:
        """What one instance of each ready task asks of the devices: rows (count, milli), 0 0 for none;
        shape (tasks, 2). Milli below `cloudsim.engine.specs.DEVICE_MILLI` shares one device; equal to it takes
        ``count`` completely free devices."""
        request = self._tasks.ready_device_request()
        return request if self._window is None else request[: self._window]

    def accepts(self, task: int) -> np.ndarray:
        """The machines whose attributes the ready task ``task`` accepts (`cloudsim.engine.specs.TaskSpec.accepts`),
        a bool array (machines,); all True for a task without a constraint."""
        accepts = self._tasks.task_accepts[int(self._rows[task])]
        return self._state.accepting(accepts) if accepts else np.ones(self.num_machines, dtype=bool)

    def task_accepts(self, task: int) -> tuple:
        """The ready task ``task``'s attribute constraint, as `cloudsim.engine.specs.TaskSpec.accepts` holds it."""
        return self._tasks.task_accepts[int(self._rows[task])]

    @property
    def demand_by_resource(self) -> np.ndarray:
        """``demand`` transposed, shape (resources, tasks), C-contiguous rows: a fit test over many
        tasks runs fastest one resource (one contiguous row) at a time."""
        by_resource = self._tasks.ready_demand_by_resource()
        return by_resource if self._window is None else by_resource[:, : self._window]

    @cached_property
    def backlog_index(self) -> np.ndarray:
        """Global index of each backlog task, in arrival order."""
        return self._tasks.ready_view[self.num_tasks:]

    @cached_property
    def backlog_demand(self) -> np.ndarray:
        """Per-instance demand of each backlog task, shape (backlog, resources)."""
        return self._tasks.ready_demand()[self.num_tasks:]

    @cached_property
    def backlog_duration(self) -> np.ndarray:
        """Nominal duration of each backlog task."""
        return frozen(self._tasks.task_duration[self._tasks.rows(self.backlog_index)])

    @cached_property
    def duration(self) -> np.ndarray:
        """Nominal duration of each ready task (mean over instances when they differ)."""
        return frozen(self._tasks.task_duration[self._rows])

    @cached_property
    def estimate(self) -> np.ndarray:
        """What the user estimated each ready task's instances would run for (`TaskSpec.estimate`,
        an SWF log's requested time); NaN where the workload gives none."""
        return frozen(self._tasks.task_estimate[self._rows])

    @cached_property
    def waiting(self) -> np.ndarray:
        """Instances of each ready task neither started nor reserved."""
        t = self._tasks
        return frozen(t.waiting_counts(self.task_index))

    @cached_property
    def running(self) -> np.ndarray:
        """Instances of each ready task running now."""
        t = self._tasks
        r = self._rows
        return frozen(t.task_started[r] - t.task_finished[r] - t.task_failed[r])

    @cached_property
    def arrival_time(self) -> np.ndarray:
        """Arrival time of each ready task's job."""
        return frozen(self._tasks.job_arrival[self.job_index])

    @cached_property
    def deadline(self) -> np.ndarray:
        """Each ready task's job's deadline (`JobSpec.deadline`; NaN: none)."""
        return frozen(self._tasks.job_deadline[self.job_index])

    @cached_property
    def latest_finish(self) -> np.ndarray:
        """When each ready task must end for its job to meet its deadline: the deadline less the longest chain of
        the task's descendants' durations (`cloudsim.JobSpec.tails`); NaN where the job has no deadline."""
        return frozen(self.deadline - self._tasks.task_tail[self._rows])

    @cached_property
    def ready_time(self) -> np.ndarray:
        """When each ready task became ready (its job arrived, or its last parent finished)."""
        return frozen(self._tasks.task_ready_time[self._rows])

    @cached_property
    def job_index(self) -> np.ndarray:
        """Row of each ready task's job in ``job_length`` and ``job_usage``: the job's position in
        the episode's arrival order, except in a streamed simulation, where rows shift as finished
        jobs leave (compare rows within one view only)."""
        t = self._tasks
        return frozen(t.task_job[self._rows] - t.job_base)

    @cached_property
    def jobs_in_system(self) -> np.ndarray:
        """Rows (as in ``job_index``) of the jobs that have arrived and not finished."""
        return self._tasks.jobs_in_system()

    @property
    def job_usage(self) -> np.ndarray:
        """Resources held by each job's running instances, shape (jobs, resources), by job row (``job_index``)."""
        return self._tasks.usage_by_job()

    @property
    def job_length(self) -> np.ndarray:
        """Each job's critical-path duration (its time on an empty, unbounded cluster), by job row (``job_index``)."""
        return self._tasks.job_length()

    # ----------------------------------------------------------- the future
    @property
    def reservations(self) -> tuple["Reservation", ...]:
        """The reservations not yet started, by start time (see `cloudsim.engine.reservations`)."""
        return tuple(self._future().pending)

    def free_profile(self, machine: int) -> tuple[np.ndarray, np.ndarray]:
        """(times, free) of ``machine``: ``free[k]`` holds on ``[times[k], times[k+1])`` from now on,
        counting the ends of running instances and the reservations."""
        return self._future().free_profile(int(machine), self.time)

    def earliest_start(self, machine: int, task: int, count: int = 1) -> float:
        """The earliest time >= now at which ``count`` instances of ``task`` fit ``machine`` for
        their whole duration (``inf``: never, the machine is down or too small)."""
        demand, duration = self._stay(task, count)
        return self._future().earliest_start(int(machine), demand, duration, self.time)

    def fits_from(self, machine: int, task: int, count: int = 1, at: float | None = None) -> bool:
        """Whether ``count`` instances of ``task`` fit ``machine`` from ``at`` (None: now) for their
        whole duration without taking what a reservation holds: the test a start or reservation must pass."""
        demand, duration = self._stay(task, count)
        start = self.time if at is None else float(at)
        return self._future().fits(int(machine), demand, start, start + duration, self.time)

    @cached_property
    def running_groups(self) -> RunningGroups:
        """The instance groups running now, with when each would finish (`RunningGroups`): what `Suspend` may
        stop."""
        gid, machine, task, instances, start, end = self._future().running_groups()
        rows = self._tasks.rows(task)
        job = self._tasks.task_job[rows] - self._tasks.job_base
        deadline = self._tasks.job_deadline[job]
        return RunningGroups(*(frozen(a) for a in (gid, machine, task, job, instances, start, end, deadline,
                                                     deadline - self._tasks.task_tail[rows])))

    @cached_property
    def suspended(self) -> np.ndarray:
        """Instances of each ready task waiting to resume (suspended by `Suspend`, not started since)."""
        tasks = self._tasks
        return frozen(np.array([tasks.suspended_waiting(g) for g in self.task_index.tolist()], dtype=np.int64)
                      if tasks.has_suspended else np.zeros(self.num_tasks, dtype=np.int64))

    @cached_property
    def next_duration(self) -> np.ndarray:
        """How long the next instance of each ready task to start would run: a suspended one its remaining work
        plus the resume cost, else its own duration (``duration``, or its instance's own)."""
        tasks = self._tasks
        return frozen(np.array([tasks.next_durations(g, 1)[0] for g in self.task_index.tolist()]))

    def _stay(self, task: int, count: int) -> tuple[np.ndarray, float]:
        g = int(self.task_index[task])
        durations = self._tasks.next_durations(g, count)
        return self._tasks.demand(g) * count, max(durations, default=0.0)

    def _future(self) -> "Timeline":
        if self._timeline is None:
            raise RuntimeError("this view has no timeline: reservations and free profiles need a view from "
                               "Simulation.next_decision()")
        return self._timeline

    def task_key(self, task: int) -> tuple[Hashable, Hashable]:
        """(job id, task id) of the view's task ``task``, for messages and logs."""
        return self._tasks.task_key(int(self.task_index[task]))

    @property
    def fits(self) -> np.ndarray:
        """Boolean (machines, tasks): machine m is up and ``free[m] >= demand[t]`` in every dimension."""
        fits = self._state.fit_matrix()[0]
        return fits if self._window is None else fits[:, : self._window]

    @property
    def machine_fits_some(self) -> np.ndarray:
        """Boolean (machines,): the machine fits at least one ready task (``fits.any(axis=1)``, kept incrementally)."""
        if self._window is None:
            return self._state.fit_matrix()[1]
        return frozen(self.fits.any(axis=1))

    @cached_property
    def fit_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(machines, tasks) of every fit pair, machine-major: for m in machines, for t in tasks."""
        machines, tasks = np.nonzero(self.fits)
        return frozen(machines), frozen(tasks)

    @cached_property
    def machines_fitting_each(self) -> np.ndarray:
        """How many machines each task fits (``fits.sum(axis=0)``), shape (tasks,)."""
        return frozen(self.fits.sum(axis=0))

    def tasks_fitting_some(self) -> np.ndarray:
        """Boolean (tasks,): the task fits at least one machine (``fits.any(axis=0)``)."""
        return self.machines_fitting_each > 0

    def machines_fitting(self, task: int) -> np.ndarray:
        """Boolean (machines,): the machines ``task`` fits (a column of ``fits``)."""
        return self.fits[:, task]

    def fits_one(self, machine: int, task: int) -> bool:
        """Whether one instance of the view's ``task`` fits ``machine`` now (one entry of ``fits``, without the
        matrix)."""
        if self._state.constrained:  # devices and attributes too: the fit matrix has them
            return bool(self.fits[machine, task])
        # On Python floats: the same comparisons, without numpy's per-call cost (a check per decision).
        return bool(self.up[machine]) and all(map(operator.le, self.demand[task].tolist(),
                                                   self.free[machine].tolist()))

    # ------------------------------------------------------------ changes
    # A broker that keeps per-machine or per-task results between decisions (`agents.incremental`)
    # asks what changed since it last looked instead of recomputing everything.
    @property
    def episode(self) -> int:
        """A number no other episode of this process has: what a broker kept is stale when it changes."""
        return self._state.episode

    @property
    def machine_changes(self) -> int:
        """How many changes of machines' free resources or up state the episode has had so far."""
        return self._state.changes

    def machines_changed_since(self, changes: int) -> np.ndarray:
        """The machines (ascending) whose free resources or up state changed after the episode's
        first ``changes`` changes (``machine_changes`` read earlier)."""
        return np.flatnonzero(self._state.machine_change > changes)

    @property
    def waiting_changes(self) -> int:
        """How many changes of tasks' waiting counts the episode has had so far."""
        return self._tasks.waiting_changes

    def tasks_changed_since(self, changes: int) -> np.ndarray:
        """Positions in this view of the tasks whose waiting count changed after the episode's first
        ``changes`` such changes (``waiting_changes`` read earlier)."""
        return np.flatnonzero(self._tasks.task_waiting_change[self._rows] > changes)

    @property
    def tasks_version(self) -> int:
        """A number that changes whenever the set of waiting tasks does (a task arrives, becomes
        ready, or has no waiting instance left)."""
        return self._tasks.ready_version

    def waiting_instances(self, task: int) -> int:
        """Instances of the view's task ``task`` not yet started (one entry of ``waiting``, without the array)."""
        return self._tasks.waiting_instances(self.task_index[task])

    def fit_count(self, machine: int, task: int) -> int:
        """How many waiting instances of ``task`` fit machine ``machine`` if started one after another now."""
        key = (machine, task)
        if key not in self._fit_counts:
            waiting = self.waiting_instances(task)
            fit = sequential_fit_count(self.free[machine], self.demand[task], waiting) if self.up[machine] else 0
            if self._state.constrained and fit:
                count, milli = (int(v) for v in self.device_request[task])
                fit = min(fit, device_fit_count(self.device_free[machine], count, milli)) \
                    if self.accepted_by(machine)[task] else 0
            self._fit_counts[key] = fit
        return self._fit_counts[key]


class ArrayPlan(Sequence):
    """A plan given as arrays: ``count[k]`` instances of the view's task ``task[k]`` on ``machine[k]``, for
    k in order; the same decisions as ``Decision(machine[k], task[k], count[k])`` one by one, checked the
    same way, with the same messages. ``final``: as `Plan`'s.

    A compiled broker answers a round of thousands of starts with one (Tetris, Packer and DeepJS do): the
    engine checks and applies the arrays as they are, with no `Decision` object per start. It is a
    sequence of `Decision` objects too, made on demand, for code that reads a plan decision by decision.
    ``count`` defaults to one instance per decision.
    """

    def __init__(self, machine, task, count=None, final: bool = False) -> None:
        fields = {"machine": machine, "task": task, "count": np.ones(len(task), dtype=np.int64) if count is None
                  else count}
        arrays = {}
        for name, values in fields.items():
            array = np.asarray(values)
            if array.ndim != 1 or not (array.dtype.kind in "iu" or len(array) == 0):
                raise ValueError(f"ArrayPlan: {name} must be a 1-d array of integers, got {array.dtype} of shape "
                                 f"{array.shape}")
            arrays[name] = np.array(array, dtype=np.int64)  # the plan's own copy: the caller may reuse its arrays
        lengths = {len(a) for a in arrays.values()}
        if len(lengths) != 1:
            raise ValueError(f"ArrayPlan: machine, task and count must have one length, got "
                             f"{', '.join(f'{n} {len(a)}' for n, a in arrays.items())}")
        self.machine, self.task, self.count = arrays["machine"], arrays["task"], arrays["count"]
        self.final = final

    def __len__(self) -> int:
        return len(self.machine)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        return Decision(int(self.machine[k]), int(self.task[k]), int(self.count[k]))

    def __repr__(self) -> str:
        return f"ArrayPlan({len(self)} decisions, final={self.final})"


def is_index(value: object) -> bool:
    """Whether ``value`` can index machines or tasks: a Python or numpy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def as_plan(answer: object) -> "list | ArrayPlan":
    """A broker's answer as a plan: None or an empty sequence is no decision, a `Decision` or a
    ``(machine, task[, count])`` tuple is a plan of one, a list (or tuple) of them is a plan, and so is
    an `ArrayPlan`."""
    if answer is None:
        return []
    if isinstance(answer, ArrayPlan):
        return answer  # a sequence of decisions already (made on demand)
    if isinstance(answer, Decision) or (isinstance(answer, tuple) and answer
                                        and not isinstance(answer[0], (Decision, tuple))):
        return [answer]
    if isinstance(answer, (list, tuple)):
        return list(answer)
    return [answer]  # refused by the check, with what a decision may be


class Plan(list):
    """A plan (a list of decisions) that may say it is the whole round.

    ``final=True``: after these decisions the broker would answer None, so the engine ends the
    round without asking it again (a round trip saved per round). A plain list, or a plan that is
    not final, leaves the round open, and the broker is asked again.
    """

    def __init__(self, decisions=(), final: bool = False) -> None:
        super().__init__(decisions)
        self.final = final


def is_final(answer: object) -> bool:
    """Whether a broker's answer is a final `Plan`: the round ends after its decisions."""
    return isinstance(answer, (Plan, ArrayPlan)) and answer.final


def ends_round(answer: object) -> bool:
    """Whether a broker's answer ends the decision round: no decision (None, an empty plan), or a final `Plan`."""
    return not as_plan(answer) or is_final(answer)


_MOVED = {"CheckedDecision": "cloudsim.engine.plan_check", "PlanCheck": "cloudsim.engine.plan_check",
          "check_decision": "cloudsim.engine.plan_check"}
"""Names that lived here in cloudsim 0.1.0: they still import from here, with a warning, for one release."""


def __getattr__(name: str):
    if name in _MOVED:
        import importlib
        import warnings

        warnings.warn(f"cloudsim.engine.broker.{name} moved to {_MOVED[name]}.{name}; import it from there (the "
                      f"old path goes in the next release)", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module 'cloudsim.engine.broker' has no attribute {name!r}")
