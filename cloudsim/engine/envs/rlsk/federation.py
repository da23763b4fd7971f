"""RLSK's federation of clusters: the clusters the core's machines split into, their queues and postponed jobs,
the placement of each queued job on its cluster's least-allocated node, and the reward of eq. 4 (`reward_rate`),
which the environment and the metrics both integrate.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import Callable

import numpy as np

from cloudsim.engine.broker import ClusterView, Decision
from cloudsim.engine.checks import check_number, is_finite_number, is_whole
from cloudsim.engine.specs import ClusterSpec

__all__ = ["DEFAULT_MAX_POSTPONES", "DEFAULT_POSTPONE", "POSTPONE", "Dispatch", "Federation", "RLSKWeights",
           "cluster_bounds", "federation_cluster", "postpone_range", "reward_rate"]

POSTPONE = 0
"""Action 0 of eq. 3: postpone the job by a random interval."""
DEFAULT_POSTPONE = (1, 10)
"""A postponed job comes back after a whole number of steps drawn uniformly from this range (the paper gives none)."""
DEFAULT_MAX_POSTPONES = 10
"""How many times one job may be postponed before a further postponement sends it to the least-loaded cluster."""


@dataclass(frozen=True)
class RLSKWeights:
    """The weights of eq. 4: ``r = alpha Util - beta DiffCluster - gamma DiffRes``.

    The paper gives no values. DiffRes (eq. 8, balance between clusters) weighs
    3 here: with equal weights a DQN trained on RLSK's workload traded balance
    between clusters for balance within them (eq. 8 16 % above Least Load's on
    held-out sequences, see docs/papers/rlsk.md).
    """

    alpha: float = 1.0
    beta: float = 1.0
    gamma: float = 3.0

    def __post_init__(self) -> None:
        for name in ("alpha", "beta", "gamma"):
            value = getattr(self, name)
            if not (is_finite_number(value) and value >= 0):
                raise ValueError(f"reward weight {name} must be a finite number >= 0, got {value!r}")


def cluster_bounds(machines: int, clusters: int) -> np.ndarray:
    """Where each of ``clusters`` clusters of consecutive machines starts, and the end: (clusters + 1,).
    The machines split as evenly as they go; the first ``machines % clusters`` clusters hold one more."""
    check_number("clusters", clusters, whole=True, at_least=1)
    if machines < clusters:
        raise ValueError(f"{machines} machine(s) cannot form {clusters} clusters: each cluster needs a machine; "
                         f"give at least {clusters} machines or fewer clusters")
    sizes = np.full(clusters, machines // clusters)
    sizes[: machines % clusters] += 1
    return np.r_[0, np.cumsum(sizes)]


def federation_cluster(clusters: int = 3, nodes: int = 1, capacity: dict[str, float] | None = None) -> ClusterSpec:
    """``clusters`` identical clusters of ``nodes`` identical nodes each, cluster by cluster.

    ``capacity`` is one cluster's (default RLSK's: 1 cpu and 1 memory), split
    evenly over its nodes; with ``nodes=1`` a cluster is one resource pool, as in the paper.
    """
    check_number("clusters", clusters, whole=True, at_least=1)
    if not (isinstance(nodes, int) and nodes >= 1):
        raise ValueError(f"nodes must be a whole number >= 1, got {nodes!r}")
    capacity = dict(capacity or {"cpu": 1.0, "memory": 1.0})
    return ClusterSpec.uniform(clusters * nodes, {r: v / nodes for r, v in capacity.items()})


def reward_rate(util: np.ndarray, weights: RLSKWeights) -> np.ndarray:
    """Eq. 4 for the utilisation ``util[..., M, D]`` of M clusters in D resources (any leading axes).

    Util (eq. 6) is the sum over clusters of U_m, the mean over resources (eq. 5);
    DiffCluster (eq. 7) the sum over clusters and resource pairs i < j of
    |U_m^i - U_m^j|; DiffRes (eq. 8) the sum over cluster pairs of |U_m - U_n|
    (the pairs i = j of eq. 7 and 8 add 0).
    """
    util = np.asarray(util, dtype=np.float64)
    mean = util.mean(axis=-1)
    i, j = np.triu_indices(util.shape[-1], k=1)
    diff_cluster = np.abs(util[..., i] - util[..., j]).sum(axis=(-1, -2))
    m, n = np.triu_indices(util.shape[-2], k=1)
    diff_res = np.abs(mean[..., m] - mean[..., n]).sum(axis=-1)
    return weights.alpha * mean.sum(axis=-1) - weights.beta * diff_cluster - weights.gamma * diff_res


# Where a task is in the federation (Federation._stage).
_UNSEEN, _HELD, _QUEUED, _LEFT = 0, 1, 2, 3  # held: waiting for a dispatch decision, postponed, or retried


@dataclass(frozen=True)
class Dispatch:
    """A job waits for a dispatch decision: ``task`` is its position in the view."""

    task: int


class Federation:
    """M clusters of the core's machines, a queue each, and the jobs postponed; one episode's state.

    Args:
        cluster: the machines, cluster after cluster (`federation_cluster` builds such a cluster).
        clusters: M; the machines split into M clusters of consecutive machines, as evenly as
            they go (`cluster_bounds`: the first ``machines % M`` clusters hold one machine more).
        postpone: how long a postponed job stays away: ``(low, high)``, whole
            steps drawn uniformly (both inclusive), or a function
            ``rng -> delay`` returning a positive number.
        seed: seeds the postponement draws.
        max_postpones: a job postponed this many times is not postponed again:
            a further 0 sends it to the least-loaded cluster that can hold it (counted
            in ``forced``), so that every episode ends whatever the policy does. A
            cluster none of whose nodes could ever hold the job (too small, too few
            devices, no machine of a GPU model it accepts) is never chosen: the choice
            counts as a postponement.

    Each call of `route` with a view of the simulation answers what happens next at that instant:

    1. a queued job that fits a node of its cluster starts there (a `Decision`);
       queues are served cluster by cluster, each in arrival order, and a job
       that does not fit yet does not block the jobs behind it (as a pod that
       does not fit waits in Kubernetes while others are scheduled);
    2. otherwise, a job that arrived (or came back from a postponement) and has
       no cluster yet asks for a dispatch decision (a `Dispatch`; `dispatch`
       takes the answer); several at one instant are asked in turn;
    3. otherwise None: nothing to do until the next event, or until
       `wake_after` time units, when the next postponed job comes back.
    """

    def __init__(self, cluster: ClusterSpec, clusters: int = 3,
                 postpone: tuple[int, int] | Callable[[np.random.Generator], float] = DEFAULT_POSTPONE,
                 seed: int | None = 0, max_postpones: int = DEFAULT_MAX_POSTPONES) -> None:
        self.bounds = cluster_bounds(cluster.machines, clusters)
        """Cluster m is machines ``bounds[m] .. bounds[m + 1] - 1``."""
        if callable(postpone):
            self._draw_delay = postpone
        else:
            low, high = postpone_range(postpone)
            self._draw_delay = lambda rng: float(rng.integers(low, high + 1))
        check_number("max_postpones", max_postpones, whole=True, at_least=0)
        self.max_postpones = int(max_postpones)
        self.clusters = int(clusters)
        self.resources = tuple(cluster.resources)
        self.capacity = np.add.reduceat(cluster.capacity_array(), self.bounds[:-1], axis=0)
        """Each cluster's capacity, shape (clusters, resources): its nodes' sum."""
        self.unit = self.capacity.max(axis=0)
        """A job's demand is shown as a fraction of this: the largest cluster's capacity (with equal
        clusters, any one's)."""
        if np.any(self.capacity <= 0):
            raise ValueError("every cluster needs some capacity in every resource (the state's ratios divide by it)")
        self.rng = np.random.default_rng(seed)
        self.queues: list[dict[int, None]] = [{} for _ in range(self.clusters)]  # ordered sets of task indices
        self.assigned: dict[int, int] = {}  # task index -> its cluster
        self._stage = np.zeros(0, dtype=np.int8)  # task index -> _UNSEEN, _HELD, _QUEUED or _LEFT
        self._undecided: deque[int] = deque()  # task indices waiting for a dispatch decision
        self._away: list[tuple[float, int, int]] = []  # heap of (back at, sequence, task index)
        self._retry: list[tuple[float, int]] = []  # (held at, task index): offered again at a later instant
        self._sequence = 0
        self._times_postponed: dict[int, int] = {}
        self.postponements = 0
        self.forced = 0
        self.dispatched = 0

    # ------------------------------------------------------------ what the agent sees
    def utilisation(self, view: ClusterView, free: np.ndarray | None = None) -> np.ndarray:
        """Each cluster's utilisation of each resource, shape (clusters, resources), in [0, 1]; with ``free``
        (..., machines, resources), e.g. the machines' free resources at later times, of that instead."""
        free = view.free if free is None else free
        used = np.add.reduceat(view.capacity - free, self.bounds[:-1], axis=-2)
        return np.clip(used / self.capacity, 0.0, 1.0)

    def demand(self, view: ClusterView, task: int) -> np.ndarray:
        """The job's demand (all its waiting instances) as a fraction of the largest cluster's capacity."""
        return view.demand[task] * max(view.waiting_instances(task), 1) / self.unit

    def observe(self, view: ClusterView, task: int) -> np.ndarray:
        """Eq. 2: [U_11 .. U_1D, .., U_MD, U_j1 .. U_jD], float32 in [0, 1]."""
        state = np.concatenate([self.utilisation(view).ravel(), self.demand(view, task)])
        return np.clip(state, 0.0, 1.0).astype(np.float32)

    @property
    def observation_size(self) -> int:
        return (self.clusters + 1) * len(self.resources)

    def fitting_clusters(self, view: ClusterView, task: int) -> np.ndarray:
        """Boolean (clusters,): some node of the cluster holds one instance of ``task`` now."""
        return np.logical_or.reduceat(view.fits[:, task], self.bounds[:-1])

    def holding_clusters(self, view: ClusterView, task: int) -> np.ndarray:
        """Boolean (clusters,): some node of the cluster could hold one instance of ``task`` once it is empty:
        its capacity, its devices and the machine attributes the task accepts
        (`cloudsim.engine.specs.TaskSpec.accepts`)."""
        holds = (view.capacity >= view.demand[task]).all(axis=1) & view.accepts(task)
        devices = int(view.device_request[task, 0])
        if devices:
            holds &= view.device_count >= devices
        return np.logical_or.reduceat(holds, self.bounds[:-1])

    # ------------------------------------------------------------ routing
    def route(self, view: ClusterView) -> Decision | Dispatch | None:
        """What happens next at this instant (see the class docstring)."""
        index = view.task_index
        self._track(index)
        back = index[self._stage[index] == _LEFT]  # instances re-queued by a machine failure
        for g in back.tolist():  # rejoin their cluster's queue, as Kubernetes reschedules a pod in its cluster
            self.queues[self.assigned[g]][g] = None
            self._stage[g] = _QUEUED
        start = self._placement(view)
        if start is not None:
            return start
        now = view.time
        while self._away and self._away[0][0] <= now:  # postponed jobs come back
            self._undecided.append(heapq.heappop(self._away)[2])
        if self._retry and self._retry[0][0] < now:
            self._undecided.extend(g for at, g in self._retry if at < now)
            self._retry = [(at, g) for at, g in self._retry if at >= now]
        new = index[self._stage[index] == _UNSEEN]
        if len(new):
            self._stage[new] = _HELD
            self._undecided.extend(new.tolist())
        if self._undecided:  # a job without a cluster has started nothing: it is in the view
            return Dispatch(int(_positions(index, np.array(self._undecided[0]))))
        return None

    def dispatch(self, view: ClusterView, task: int, action: int | None) -> None:
        """Act on the job of `route`'s `Dispatch`: 0 postpones it, ``m`` in 1..M queues it at cluster
        m - 1, None holds it until the next decision round at a later instant (a baseline that
        finds no cluster fitting)."""
        g = int(view.task_index[task])
        if not self._undecided or self._undecided[0] != g:
            raise ValueError(f"task {task} is not the job waiting for a dispatch decision; call route() first")
        self._undecided.popleft()
        if action is None:
            self._retry.append((view.time, g))
            return
        action = int(action)
        holding = self.holding_clusters(view, task)
        if 1 <= action <= self.clusters and not holding[action - 1]:
            action = POSTPONE  # a cluster none of whose nodes can ever hold the job (devices, a GPU model) is none
        if action == POSTPONE and self._times_postponed.get(g, 0) >= self.max_postpones:
            load = np.where(holding, self.utilisation(view).mean(axis=1), np.inf)
            action = int(np.argmin(load)) + 1
            self.forced += 1
        if action == POSTPONE:
            self._times_postponed[g] = self._times_postponed.get(g, 0) + 1
            delay = float(self._draw_delay(self.rng))
            if not (math.isfinite(delay) and delay > 0):
                raise ValueError(f"a postponement must last a positive time, the postpone function gave {delay!r}")
            heapq.heappush(self._away, (view.time + delay, self._sequence, g))
            self._sequence += 1
            self.postponements += 1
            return
        if not 1 <= action <= self.clusters:
            raise ValueError(f"action {action} is outside 0..{self.clusters} (0 postpones, m sends to cluster m)")
        self.assigned[g] = action - 1
        self.queues[action - 1][g] = None
        self._stage[g] = _QUEUED
        self.dispatched += 1

    def wake_after(self, now: float) -> float | None:
        """How long until the next postponed job comes back (None: none is away)."""
        return self._away[0][0] - now if self._away else None

    # ------------------------------------------------------------ inside
    def _track(self, index: np.ndarray) -> None:
        """Grow the stage array (by doubling) to cover every task index of the view."""
        size = int(index[-1]) + 1 if len(index) else 0  # the view's indices are sorted
        if size > len(self._stage):
            grown = np.zeros(max(size, 2 * len(self._stage)), dtype=np.int8)
            grown[: len(self._stage)] = self._stage
            self._stage = grown

    def _placement(self, view: ClusterView) -> Decision | None:
        """The first queued job (cluster by cluster, in arrival order) that fits a node of its cluster."""
        fits = view.fits
        for c, queue in enumerate(self.queues):
            if not queue:
                continue
            queued = np.fromiter(queue, dtype=np.int64, count=len(queue))
            tasks = _positions(view.task_index, queued)
            gone = queued[tasks < 0]  # all instances started
            for g in gone.tolist():
                del queue[g]
            self._stage[gone] = _LEFT
            tasks = tasks[tasks >= 0]
            if not len(tasks):
                continue
            nodes = slice(self.bounds[c], self.bounds[c + 1])
            fit = fits[nodes][:, tasks]
            holders = fit.any(axis=0)
            if not holders.any():
                continue
            task = int(tasks[np.argmax(holders)])
            candidates = np.flatnonzero(fit[:, np.argmax(holders)]) + self.bounds[c]
            return Decision(self._least_allocated(view, candidates, task), task)
        return None

    @staticmethod
    def _least_allocated(view: ClusterView, nodes: np.ndarray, task: int) -> int:
        """kube-scheduler's least-allocated score: the mean over resources of the share left free
        after the placement; the highest wins, the first node on ties."""
        capacity = view.capacity[nodes]
        left = (view.free[nodes] - view.demand[task]) / np.where(capacity > 0, capacity, 1.0)
        return int(nodes[np.argmax(left.mean(axis=1))])


def _positions(index: np.ndarray, tasks: np.ndarray) -> np.ndarray:
    """Positions of task indices ``tasks`` in a view's ``task_index`` (-1 where a task is not waiting).

    A view lists waiting tasks in arrival order, which is the order of their
    indices (jobs are indexed in submit order, tasks in job order), so a
    binary search finds them: O(log waiting) per task, not a table of every task.
    """
    if not len(index):
        return np.full(np.shape(tasks), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(index, tasks), len(index) - 1)
    return np.where(index[at] == tasks, at, -1)


def postpone_range(postpone: object) -> tuple[int, int]:
    """(low, high) of a postponement range of whole steps; ValueError unless 1 <= low <= high."""
    try:
        low, high = postpone  # type: ignore[misc]
    except (TypeError, ValueError):
        raise ValueError(f"postpone must be (low, high) whole steps or a function rng -> delay, got "
                         f"{postpone!r}") from None
    if not (is_whole(low) and is_whole(high) and 1 <= low <= high):
        raise ValueError(f"postpone must be whole steps LOW:HIGH with 1 <= LOW <= HIGH, got {postpone!r}")
    return int(low), int(high)
