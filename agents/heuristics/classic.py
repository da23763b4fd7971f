"""The classic schedulers the five papers compare against, as brokers.

They come in two shapes, each written once:

* **pair scores** (`PairScore`): score every fit (machine, task) pair of the
  instant and start one instance of the best pair, the first in machine-major
  order on ties. Tetris, Packer and Tetris* differ only in the score.
* **queue policies** (`QueuePolicy`): take the ready task with the best
  priority among those that fit some machine (arrival order on ties), then a
  machine for it by a placement rule. FCFS, SJF, HRRN and DRF differ in the
  priority; best-fit, least-load and round-robin in the placement.

First-fit (DeepJS's, machine-major) and random stand on their own. Every rule
is vectorised over the view's arrays; none loops over machines x tasks in
Python. All of them are work-conserving: they wait (answer None) only when no
waiting task fits any up machine, except FCFS, which waits for the head of its
queue, and EASY backfilling, which reserves the head's earliest start and
starts later tasks now only where they do not delay it.
"""

from __future__ import annotations


from abc import ABC, abstractmethod
from typing import Sequence

import numpy as np

from agents.incremental import INCREMENTAL_FROM, BestPairs, best_decision, keeps_best_pairs
from agents.planning import PlannedView, plan_of
from cloudsim.engine.broker import ArrayPlan, ClusterView, CompiledRound, Decision, Plan, sequential_fit
from cloudsim.engine.checks import is_whole

__all__ = [
    "BestFit",
    "DominantResourceFairness",
    "EasyBackfilling",
    "FirstComeFirstServed",
    "FirstFit",
    "HighestResponseRatioNext",
    "LeastLoad",
    "Packer",
    "PairScore",
    "QueuePolicy",
    "RandomFit",
    "RoundRobin",
    "ShortestJobFirst",
    "Tetris",
    "TetrisStar",
    "Windowed",
    "share",
]


class FirstFit:
    """The first fit pair in machine-major order: the first machine that fits some
    waiting task, with the first such task (DeepJS's first-fit baseline).

    It answers with a count: while machine m still fits task t and t has waiting
    instances, no earlier machine and no earlier task can start to fit (free
    resources only shrink within an instant), so the next decisions would repeat
    (m, t). Starting them at once gives the same run as one at a time.
    """

    name = "first-fit"
    empty_rounds = False  # nothing waiting: no round needed (`cloudsim.Simulation.run`)

    def compiled_round(self, resources: Sequence[str]) -> CompiledRound:
        """The engine runs this round compiled where it can (`cloudsim.engine.compiled`)."""
        return CompiledRound("first-fit")

    def decide(self, view: ClusterView) -> Plan | None:
        """The round's decisions as one (final) plan: machine by machine in order, each task in order with
        the count that still fits. Free resources only shrink within a round, so a machine passed
        fits nothing later, and a task that did not fit a machine never will: the same decisions
        as one at a time."""
        if view.num_tasks == 0:
            return None
        fits_some = view.machine_fits_some
        machine = int(np.argmax(fits_some))  # the first machine that fits a waiting task (argmax stops there)
        if not fits_some[machine]:
            return None
        if view.constrained:  # devices and attributes: each decision on the view the earlier ones leave
            return plan_of(view, _first_fit_pair)
        fits, demand, by_resource = view.fits, view.demand, view.demand_by_resource
        # Every task of a view waits; only the few the plan starts need their counts (a long queue
        # would cost a pass over every task per round).
        left = np.ones(view.num_tasks, dtype=bool)  # tasks with instances the plan has not started
        waiting: dict[int, int] = {}
        exhausted = 0
        windowed = view.backlog > 0  # a task that runs out lets a backlog task in: only a new view shows it
        plan = []
        machines = len(fits_some)
        while machine < machines:
            free = view.free[machine]
            candidates = np.flatnonzero(fits[machine] & left)  # the tasks that fit what the machine has left
            while len(candidates):
                task = int(candidates[0])
                wanted = waiting[task] if task in waiting else view.waiting_instances(task)
                count, free = sequential_fit(free, demand[task], wanted)
                plan.append(Decision(machine, task, count))
                waiting[task] = wanted - count
                if count == wanted:
                    if windowed:
                        return Plan(plan)  # not final: a backlog task enters the window
                    left[task] = False
                    exhausted += 1
                # This task is done here (none waits, or the next does not fit); the machine has less left,
                # so later candidates may no longer fit: every task is tested at once, one resource (one
                # contiguous row) at a time, several times faster on a long queue than indexing the
                # candidates' rows. Earlier tasks do not fit what is left, or have run out.
                remaining = free.tolist()
                fit = by_resource[0] <= remaining[0]
                for r in range(1, len(remaining)):
                    fit &= by_resource[r] <= remaining[r]
                fit &= left
                fit[: task + 1] = False
                candidates = np.flatnonzero(fit)
            if exhausted == view.num_tasks:
                break
            later = fits_some[machine + 1:]  # the next machine that fits a waiting task, found the same way
            step = int(np.argmax(later)) if len(later) else 0
            if not len(later) or not later[step]:
                break
            machine += 1 + step
        return Plan(plan, final=True)  # no machine after the last fits anything, as none before did


def _first_fit_pair(view: ClusterView | PlannedView) -> Decision | None:
    """The first fit pair in machine-major order, with every instance of the task that fits there."""
    machines, tasks = view.fit_pairs
    if len(machines) == 0:
        return None
    machine, task = int(machines[0]), int(tasks[0])
    return Decision(machine, task, view.fit_count(machine, task))


def _kernels():
    """`agents.kernels`, imported on first use: importing numba and loading a compiled kernel take
    about 0.5 s, which a run of the other brokers need not pay."""
    import agents.kernels

    return agents.kernels


def _plan(arrays: Sequence[np.ndarray], final: bool = True) -> ArrayPlan | None:
    """A kernel's (machine, task, count) arrays as a plan (``final``: the round's last decisions)."""
    machines, tasks, counts = arrays
    if len(machines) == 0:
        return None
    return ArrayPlan(machines, tasks, counts, final=final)


class RandomFit:
    """A fit pair drawn uniformly at random, one instance at a time; seeded
    (the Random baseline of DeepRM_Plus, Deepk8s and RLSK)."""

    name = "random"
    empty_rounds = False  # nothing waiting: no round needed (`cloudsim.Simulation.run`)

    def __init__(self, seed: int | None = 0) -> None:
        self.rng = np.random.default_rng(seed)

    def compiled_round(self, resources: Sequence[str]) -> CompiledRound:
        return CompiledRound("random", rng=self.rng)

    def decide(self, view: ClusterView) -> Decision | None:
        machines, tasks = view.fit_pairs
        if len(machines) == 0:
            return None
        pick = int(self.rng.integers(len(machines)))
        return Decision(int(machines[pick]), int(tasks[pick]))


# ------------------------------------------------------------------ pair scores
class PairScore(ABC):
    """Start one instance of the fit pair with the highest `score`; the first pair
    in machine-major order on ties. Subclasses define `score`.

    The best pair is kept up to date between decisions (`agents.incremental.BestPairs`):
    only the machines that changed are rescored, which gives the same decisions as
    scoring every pair when a pair's score comes from that pair alone: its machine's
    state (``view.free``, ``view.up``, ``view.capacity``) and its task's fixed
    attributes (``view.demand``, ``view.duration``). A score that also reads
    ``view.waiting`` sets ``reads_waiting``; one normalised over every pair sets
    ``scaled`` and defines `terms` and `combine` (as `TetrisStar`); one that reads
    anything else (the time, other pairs, the machine's number) sets ``incremental = False``
    and is scored anew at every decision. On clusters of fewer than ``incremental_from``
    machines every pair is scored anew too: there, that is cheaper than the bookkeeping.
    """

    name = "pair-score"
    empty_rounds = False  # nothing waiting: no round needed (`cloudsim.Simulation.run`)
    incremental = True
    incremental_from = INCREMENTAL_FROM
    best_pairs: BestPairs | None = None  # what it keeps between decisions, once it keeps anything
    scaled = False
    reads_waiting = False
    compiled_rounds = True  # False: one pair per call even where `compiled_round` could plan the round

    @abstractmethod
    def score(self, view: ClusterView, machines: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        """One number per fit pair (``machines[i]``, ``tasks[i]``); higher is better."""

    def decide(self, view: ClusterView) -> ArrayPlan | Decision | None:
        """The round as one plan when `compiled_round` says how to score it (`agents.kernels.state_round`);
        otherwise the best pair, one decision per call: from the kept best pairs on a cluster of
        ``incremental_from`` machines or more, every pair scored on a smaller one."""
        # The kernel and the kept best pairs know resources only: a cluster with devices is scored pair by pair.
        compiled = self.compiled_round(view.resources) if not view.constrained else None
        if compiled is not None and compiled.rule in ("dot", "shares"):  # (Tetris*'s rounds: the engine's alone)
            kernels = _kernels()
            # With a window, a task that runs out lets a backlog task in: the plan stops there (not final).
            *plan, cut, nan = kernels.round_plan(view, kernels.SHARES if compiled.rule == "shares" else kernels.DOT,
                                                 compiled.columns, until_out=view.backlog > 0)
            if nan:
                raise ValueError(f"broker {self.name!r} at t={view.time}: a pair's score is NaN; scores must be "
                                 "numbers (check the view's free resources and demands)")
            return _plan(plan, final=not cut)
        if keeps_best_pairs(self, view):
            return best_decision(self, view)
        return self.decide_one(view)

    def compiled_round(self, resources: Sequence[str]) -> CompiledRound | None:
        """How a round of `score` runs compiled, on the resources named ``resources`` (a `CompiledRound` the
        engine's compiled path and `agents.kernels.state_round` both run), or None when it cannot: the
        default, and always with ``compiled_rounds = False``. A subclass whose `score` is a sum over resources
        of free x demand says so here; one that changes such a ``score`` is scored by its own."""
        return None

    def decide_one(self, view: ClusterView | PlannedView) -> Decision | None:
        """The best fit pair of ``view``, every pair scored."""
        machines, tasks = view.fit_pairs
        if len(machines) == 0:
            return None
        best = int(np.argmax(self.score(view, machines, tasks)))
        return Decision(int(machines[best]), int(tasks[best]))


def resource_sum(values: np.ndarray) -> np.ndarray:
    """Per row of ``values`` (machines, resources), the sum over resources in resource order: one fixed order
    of float additions (numpy's ``sum(axis=1)`` may sum in blocks, by version and shape), which the engine's
    compiled rounds repeat."""
    total = values[:, 0].copy()
    for r in range(1, values.shape[1]):
        total += values[:, r]
    return total


def share(amount: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """``amount / capacity`` elementwise, 0 where the capacity is 0 (a resource a machine lacks)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(capacity > 0, amount / capacity, 0.0)


def alignment(view: ClusterView, machines: np.ndarray, tasks: np.ndarray) -> np.ndarray:
    """Per pair, the dot product of the machine's free resources and the task's demand,
    both as fractions of the machine's capacity (DeepRM's alignment score; with
    DeepRM's equal pools it orders pairs as the raw dot product does)."""
    capacity = view.capacity[machines]
    return (share(view.free[machines], capacity) * share(view.demand[tasks], capacity)).sum(axis=1)


class Tetris(PairScore):
    """Tetris as DeepJS uses it (Grandl et al.): the largest dot product of the
    machine's free resources and the task's demand, raw, over (cpu, memory).

    Args:
        resources: the dimensions scored. ``None`` means (cpu, memory), DeepJS's
            choice, when the cluster has both, else every resource.
    """

    name = "tetris"

    def __init__(self, resources: Sequence[str] | None = None) -> None:
        self.resources = tuple(resources) if resources is not None else None

    def _columns(self, resources: Sequence[str]) -> list[int]:
        names = self.resources
        if names is None:
            names = ("cpu", "memory") if {"cpu", "memory"} <= set(resources) else resources
        missing = [r for r in names if r not in resources]
        if missing:
            raise ValueError(f"Tetris scores resources {missing!r} that the cluster lacks ({tuple(resources)!r})")
        return [list(resources).index(r) for r in names]

    def score(self, view: ClusterView, machines: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        columns = self._columns(view.resources)
        return (view.free[machines][:, columns] * view.demand[tasks][:, columns]).sum(axis=1)

    def compiled_round(self, resources: Sequence[str]) -> CompiledRound | None:
        if not self.compiled_rounds or type(self).score is not Tetris.score:
            return None
        return CompiledRound("dot", tuple(self._columns(resources)))


class Packer(PairScore):
    """DeepRM's Packer: the pair with the highest `alignment` of free resources and
    demand over every resource, which packs the most fitting work first (the
    packing heuristic of Tetris, Grandl et al.)."""

    name = "packer"

    def score(self, view: ClusterView, machines: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        return alignment(view, machines, tasks)

    def compiled_round(self, resources: Sequence[str]) -> CompiledRound | None:
        if not self.compiled_rounds or type(self).score is not Packer.score:
            return None
        return CompiledRound("shares", tuple(range(len(resources))))


class TetrisStar(PairScore):
    """DeepRM's Tetris*: ``knob x alignment + (1 - knob) x 1/duration``, balancing
    packing (Packer) against short jobs first (SJF).

    DeepRM does not give the knob or the scale of the two terms; here each term is
    divided by its largest value over the instant's fit pairs, so that both lie in
    [0, 1] whatever the units, and the knob is 0.5 by default. ``knob=1`` is Packer
    and ``knob=0`` is SJF over fit pairs.
    """

    name = "tetris-star"

    def __init__(self, knob: float = 0.5) -> None:
        if not 0.0 <= knob <= 1.0:
            raise ValueError(f"Tetris* knob must be in [0, 1] (1 = Packer, 0 = shortest first), got {knob!r}")
        self.knob = float(knob)  # (a float64: the scores' arithmetic is the same whatever number type was given)

    scaled = True

    def terms(self, view: ClusterView, machines: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        """Per pair, its alignment and its task's shortness (1 / duration), shape (pairs, 2)."""
        with np.errstate(divide="ignore"):
            shortness = 1.0 / view.duration[tasks]  # a zero duration is infinitely short
        return np.column_stack([alignment(view, machines, tasks), shortness])

    def combine(self, terms: np.ndarray, top: np.ndarray) -> np.ndarray:
        """The scores, from the pairs' `terms` and each term's maximum ``top`` over every fit pair."""
        return self.knob * _scaled(terms[:, 0], top[0]) + (1.0 - self.knob) * _scaled(terms[:, 1], top[1])

    def score(self, view: ClusterView, machines: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        terms = self.terms(view, machines, tasks)
        return self.combine(terms, terms.max(axis=0))

    def compiled_round(self, resources: Sequence[str]) -> CompiledRound | None:
        """The engine's compiled round (rule ``"tetris-star"``), unless a subclass changes how pairs score."""
        mine = (TetrisStar.score, TetrisStar.terms, TetrisStar.combine, PairScore.decide_one)
        if not self.compiled_rounds or (type(self).score, type(self).terms, type(self).combine,
                                        type(self).decide_one) != mine:
            return None
        return CompiledRound("tetris-star", tuple(range(len(resources))), knob=float(self.knob))


def _scaled(values: np.ndarray, top: float) -> np.ndarray:
    """``values / top``, ``top`` being their maximum; infinite values as 1 and the rest 0 when it is infinite."""
    if np.isinf(top):
        return np.isinf(values).astype(float)
    return values / top if top > 0 else np.zeros_like(values)


# --------------------------------------------------------------- queue policies
class QueuePolicy:
    """Start the ready task with the lowest `priority` that fits some machine (the
    earliest-arrived on ties) on the machine `place` picks among those it fits.

    Subclasses set `priority` (None: arrival order), `place` (default: the first
    machine that fits), `strict` (only the head of the queue may start: the queue
    waits behind it) and `repeats`: whether, once (m, t) is chosen, the next
    decisions of the instant would choose (m, t) again while m fits t. Then the
    broker answers with the whole count that fits, which gives the same run as
    one instance at a time, in fewer decisions.
    """

    name = "queue"
    empty_rounds = False  # nothing waiting: no round needed (`cloudsim.Simulation.run`)
    strict = False
    repeats = True

    def priority(self, view: ClusterView) -> np.ndarray | None:
        """One number per ready task, lower first; None for arrival order."""
        return None

    def place(self, view: ClusterView, task: int, machines: np.ndarray) -> int:
        """The machine among ``machines`` (those that fit ``task``, ascending) to start it on."""
        return int(machines[0])

    def decide(self, view: ClusterView) -> list[Decision] | None:
        """The round's decisions as one plan, each chosen as one at a time (`agents.planning`)."""
        if view.num_tasks == 0:
            return None
        return plan_of(view, self.decide_one)

    def compiled_round(self, resources: Sequence[str]) -> CompiledRound | None:
        """The engine's compiled round of this policy (`cloudsim.engine.compiled`): that of the class that declares
        ``compiled_rule`` (FCFS, SJF, HRRN, DRF, best-fit, least-load, round-robin), while the policy's `priority`,
        `place`, `decide_one`, ``strict`` and ``repeats`` are that class's own; None otherwise."""
        owner = next((cls for cls in type(self).__mro__ if "compiled_rule" in vars(cls)), None)
        if owner is None or any(name in vars(self) for name in ("priority", "place", "decide_one", "strict",
                                                                "repeats")):
            return None
        if any(getattr(type(self), name) is not getattr(owner, name) for name in ("priority", "place", "decide_one")):
            return None
        if (self.strict, self.repeats) != (owner.strict, owner.repeats):
            return None
        # round-robin counts on from the turn it keeps (an attribute of that name elsewhere is the policy's own)
        return CompiledRound(owner.compiled_rule, turn=self.turn if owner.compiled_rule == "round-robin" else None)

    def decide_one(self, view: ClusterView | PlannedView) -> Decision | None:
        """The next decision on ``view``: the task, then its machine."""
        if view.num_tasks == 0:
            return None
        if self.strict:
            task = int(np.argmax(view.waiting > 0))  # the head of the queue, in arrival order
        else:
            placeable = np.flatnonzero(view.tasks_fitting_some())
            if len(placeable) == 0:
                return None
            key = self.priority(view)
            task = int(placeable[0] if key is None else placeable[np.argmin(key[placeable])])
        machines = np.flatnonzero(view.machines_fitting(task))
        if len(machines) == 0:  # only a strict queue's head can fit nowhere
            return None
        machine = self.place(view, task, machines)
        return Decision(machine, task, view.fit_count(machine, task) if self.repeats else 1)


class FirstComeFirstServed(QueuePolicy):
    """FCFS (DeepRM_Plus, Deepk8s): tasks start in arrival order, on the first
    machine that fits; when the oldest waiting task fits nowhere, everything
    behind it waits too (no backfilling). That head-of-line blocking is why
    Deepk8s finds FCFS the worst heuristic on weighted turnaround."""

    name = "fcfs"
    strict = True
    compiled_rule = "fcfs"  # (`QueuePolicy.compiled_round`)


class ShortestJobFirst(QueuePolicy):
    """SJF (DeepRM, DeepRM_Plus, Deepk8s): the waiting task with the shortest
    duration that fits, on the first machine that fits it."""

    name = "sjf"
    compiled_rule = "sjf"  # (`QueuePolicy.compiled_round`)

    def priority(self, view: ClusterView) -> np.ndarray:
        return view.duration


class HighestResponseRatioNext(QueuePolicy):
    """HRRN (DeepRM_Plus): the task with the highest response ratio
    ``(time waited + duration) / duration`` that fits, on the first machine
    that fits it; time waited counts from when the task became ready. Short
    tasks go first, and long ones rise as they wait. A task of duration 0 has
    an infinite ratio."""

    name = "hrrn"
    compiled_rule = "hrrn"  # (`QueuePolicy.compiled_round`)

    def priority(self, view: ClusterView) -> np.ndarray:
        duration = view.duration
        waited = view.time - view.ready_time
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(duration > 0, (waited + duration) / duration, np.inf)
        return -ratio


class EasyBackfilling:
    """EASY backfilling (Lifka, 1995), the baseline of HPC scheduling that RLScheduler and
    sched-rl-gym compare with.

    Tasks are served in arrival order. The head of the queue starts on the first
    machine that fits it now; if none does, one of its instances gets a
    reservation at its earliest start over all machines (the first machine on
    ties), computed from the ends of running instances (`ClusterView.earliest_start`).
    While that reservation is pending, any later task (and the head's other
    instances) starts now on the first machine where it fits for its whole
    duration without taking what the reservation holds (`ClusterView.fits_from`):
    it ends before the reserved start, or uses resources the head does not need.
    One reservation at a time, as EASY does; the next head reserves once it has started.
    A head that asks for devices (or machine attributes), which reservations do not model, and
    fits nowhere reserves nothing: the first later task that fits now starts.
    """

    name = "easy"
    empty_rounds = False  # nothing waiting: no round needed (`cloudsim.Simulation.run`)

    def decide(self, view: ClusterView) -> list[Decision] | None:
        """The round's decisions as one plan, each chosen as one at a time (`agents.planning`)."""
        if view.num_tasks == 0:
            return None
        return plan_of(view, self.decide_one)

    def compiled_round(self, resources: Sequence[str]) -> CompiledRound | None:
        """The engine's compiled round (rule ``"easy"``), unless a subclass changes how it decides."""
        return CompiledRound("easy") if type(self).decide_one is EasyBackfilling.decide_one else None

    def decide_one(self, view: ClusterView | PlannedView) -> Decision | None:
        """The next decision on ``view``: the head now, its reservation, or a task backfilled around it."""
        if view.num_tasks == 0 or not (view.waiting > 0).any():
            return None
        if not view.reservations:
            head = int(np.argmax(view.waiting > 0))  # the first task in arrival order with instances waiting
            machines = np.flatnonzero(view.machines_fitting(head))
            if machines.size:
                return Decision(int(machines[0]), head, view.fit_count(int(machines[0]), head))
            if view.constrained and (view.device_request[head, 0] > 0 or view.task_accepts(head)):
                # reservations do not model devices or attributes: backfill what fits now instead
                tasks, machines = np.nonzero(view.fits.T)
                return Decision(int(machines[0]), int(tasks[0]), 1) if len(tasks) else None
            starts = np.array([view.earliest_start(m, head) for m in range(view.num_machines)])
            machine = int(np.argmin(starts))
            if not np.isfinite(starts[machine]):
                return None  # no machine up can hold it: wait for a repair
            return Decision(machine, head, 1, at=float(starts[machine]))
        # backfilling: task-major (arrival order first, then machines), around the pending reservation
        tasks, machines = np.nonzero(view.fits.T)
        for task, machine in zip(tasks.tolist(), machines.tolist()):
            if view.fits_from(machine, task):
                return Decision(machine, task, 1)
        return None


class DominantResourceFairness(QueuePolicy):
    """DRF (Ghodsi et al., NSDI 2011) across jobs: a task of the job with the
    smallest dominant share, on the first machine that fits it. A job's dominant
    share is the largest, over resources, of what its running instances hold
    divided by the cluster's total capacity. One instance at a time, since each
    start raises its job's share."""

    name = "drf"
    repeats = False
    compiled_rule = "drf"  # (`QueuePolicy.compiled_round`)
    _total: tuple[int, np.ndarray] | None = None  # (episode, the cluster's total capacity): fixed in an episode

    def priority(self, view: ClusterView) -> np.ndarray:
        if self._total is None or self._total[0] != view.episode:
            self._total = (view.episode, view.capacity.sum(axis=0))
        return share(view.job_usage[view.job_index], self._total[1]).max(axis=1)


class BestFit(QueuePolicy):
    """Best-fit: tasks in arrival order (the earliest that fits somewhere), each on
    the machine it fits most tightly: the least free capacity left after the
    start, summed over resources as fractions of the machine's capacity."""

    name = "best-fit"
    compiled_rule = "best-fit"  # (`QueuePolicy.compiled_round`)

    def place(self, view: ClusterView, task: int, machines: np.ndarray) -> int:
        # Every machine at once, then the fitting ones picked: on a large cluster a gather of
        # (machines, resources) rows costs more than the arithmetic it saves.
        left = resource_sum(share(view.free - view.demand[task], view.capacity))
        return int(machines[np.argmin(left[machines])])


def machine_load(view: ClusterView) -> np.ndarray:
    """Each machine's utilisation averaged over resources (RLSK's eq. 5 for one cluster)."""
    return resource_sum(share(view.capacity - view.free, view.capacity)) / view.capacity.shape[1]


class LeastLoad(QueuePolicy):
    """RLSK's Least Load: tasks in arrival order, each on the least-loaded machine
    (or cluster) among those that fit it, the load being the mean utilisation
    over resources; the first on ties. One instance at a time, since each start
    changes the loads."""

    name = "least-load"
    repeats = False
    compiled_rule = "least-load"  # (`QueuePolicy.compiled_round`)

    def place(self, view: ClusterView, task: int, machines: np.ndarray) -> int:
        return int(machines[np.argmin(machine_load(view)[machines])])


class RoundRobin(QueuePolicy):
    """RLSK's Round Robin: tasks in arrival order, handed to machines (or
    clusters) in turn: each start goes to the first machine that fits, counting
    cyclically from the one after the previous start's."""

    name = "round-robin"
    repeats = False
    compiled_rule = "round-robin"  # (`QueuePolicy.compiled_round`, with the turn, which the run hands back)

    def __init__(self) -> None:
        self.turn = np.zeros(1, dtype=np.int64)  # the next machine, kept from run to run

    @property
    def next_machine(self) -> int:
        """The machine the next start counts from (the one after the previous start's)."""
        return int(self.turn[0])

    @next_machine.setter
    def next_machine(self, machine: int) -> None:
        self.turn[0] = machine

    def place(self, view: ClusterView, task: int, machines: np.ndarray) -> int:
        after = machines[machines >= self.next_machine]
        machine = int(after[0] if len(after) else machines[0])
        self.next_machine = (machine + 1) % view.num_machines
        return machine


class Windowed:
    """Any broker shown only the first ``size`` waiting tasks, the rest being a backlog it cannot
    pick from (the visible-task window of DeepRM, DeepRM_Plus and Deepk8s).

    The window is a prefix of the waiting tasks in arrival order, so the inner
    broker's decisions index the full view unchanged. Its name is the inner
    broker's; other attributes (``check_cluster``, ``wake_after``) pass through.
    """

    def __init__(self, broker: object, size: int) -> None:
        if not (is_whole(size) and size >= 1):
            raise ValueError(f"a task window holds at least 1 task, got {size!r}")
        self.broker = broker
        self.size = int(size)
        self.name = getattr(broker, "name", type(broker).__name__)

    def decide(self, view: ClusterView) -> Decision | None:
        return self.broker.decide(view.window(self.size))

    def __getattr__(self, attribute: str):
        if attribute == "broker":  # not set yet (unpickling): no recursion
            raise AttributeError(attribute)
        return getattr(self.broker, attribute)
