"""RLSK's federation of clusters (Huang, Xiao & Wu): each arriving job is sent to a cluster, or postponed.

RLSK decides which cluster's queue a job joins, not which machine a task
starts on, so its formulation needs a layer between the agent and the core:
the `Federation` groups the core's machines into M clusters (the paper's
resource pools; here each may hold several nodes), keeps one queue per
cluster, holds postponed jobs until they come back, and places each queued job
on a node of its cluster with the least-allocated score of kube-scheduler.
`RLSKEnv` (the Gymnasium environment) and the brokers of `agents.federation`
(RLSK's baselines and the trained agent, run by the core) drive the same
`Federation`, so an agent acts in evaluation exactly as it did in training.

The reward of eq. 4 is written once, `reward_rate`, and integrated over time
both step by step in the environment and over a finished run
(`federation_metrics`), so every broker's total reward is the same number.

A "job" here is a ready task with all its waiting instances (RLSK's jobs are
single tasks of one instance); it is dispatched as a whole and its instances
start on the nodes of that cluster one at a time.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from cloudsim.engine import arithmetic
from cloudsim.engine.broker import ClusterView, Decision
from cloudsim.engine.checks import check_number, is_finite_number, is_whole
from cloudsim.engine.envs.base import episode_jobs
from cloudsim.engine.simulation import Simulation, SimulationStalledError
from cloudsim.engine.specs import ClusterSpec, JobSpec

__all__ = [
    "DEFAULT_POSTPONE",
    "Dispatch",
    "Federation",
    "RLSKEnv",
    "RLSKWeights",
    "cluster_bounds",
    "federation_cluster",
    "federation_metrics",
    "postpone_range",
    "reward_rate",
]

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


# ------------------------------------------------------------------ a finished run
def federation_metrics(result: Any, clusters: int, weights: RLSKWeights = RLSKWeights()) -> dict[str, float]:
    """RLSK's numbers for a finished run (an `EpisodeResult`) on ``clusters`` clusters (as `cluster_bounds` splits
    the machines).

    * ``total_reward``: the integral of eq. 4 over [0, makespan] (what
      `RLSKEnv`'s rewards of the episode add up to);
    * ``imbalance_resources`` (eq. 7) and ``imbalance_machines`` (eq. 8, between
      clusters): time averages over [0, makespan] with each cluster's usage
      pooled over its nodes (with one node per cluster, the summary's own numbers);
    * ``mean_utilisation``: the clusters' mean U_m averaged over time;
    * ``utilisation_cluster_<m>``: each cluster's mean U_m over time;
    * ``diff_within_cluster``: section IV-A's (cpu/mean - 1)^2 + (memory/mean - 1)^2
      (summed over resources; 0 while a cluster is idle), averaged over time, then over clusters.
    """
    times, util = cluster_utilisation(result, clusters)
    makespan = float(result.makespan)
    span = np.diff(np.append(times, makespan)) if len(times) else np.zeros(0)
    rate = reward_rate(util, weights)
    # Eq. 7 and 8 alone: eq. 4 with one weight at 1 and the others 0, negated.
    within = -reward_rate(util, RLSKWeights(0.0, 1.0, 0.0))
    between = -reward_rate(util, RLSKWeights(0.0, 0.0, 1.0))
    average = (lambda x: arithmetic.dot(x, span) / makespan) if makespan > 0 else (lambda x: float("nan"))
    per_cluster = util.mean(axis=-1)
    means = [average(per_cluster[:, m]) for m in range(clusters)]
    with np.errstate(divide="ignore", invalid="ignore"):  # an idle cluster (mean 0) has no difference
        spread = np.where(per_cluster[..., None] > 0, (util / per_cluster[..., None] - 1.0) ** 2, 0.0).sum(axis=-1)
    return {"total_reward": float(np.dot(rate, span)),
            "imbalance_resources": average(within), "imbalance_machines": average(between),
            "mean_utilisation": float(np.mean(means)) if means else float("nan"),
            **{f"utilisation_cluster_{m}": means[m] for m in range(clusters)},
            "diff_within_cluster": float(np.mean([average(spread[:, m]) for m in range(clusters)]))}


def cluster_utilisation(result: Any, clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """(times[T], util[T, clusters, resources]): each cluster's utilisation from each change onward,
    its nodes' usage pooled, from a finished run's usage changes (`EpisodeResult.usage_changes`)."""
    resources = list(result.resources)
    capacity = result.capacity[resources].to_numpy(dtype=float)
    bounds = cluster_bounds(len(capacity), clusters)
    cluster_of = np.repeat(np.arange(clusters), np.diff(bounds))
    changes = result.usage_changes()
    times, instant = np.unique(changes["time"].to_numpy(dtype=float), return_inverse=True)
    change = np.zeros((len(times), clusters, len(resources)))
    np.add.at(change, (instant, cluster_of[changes["machine"].to_numpy()]), changes[resources].to_numpy(dtype=float))
    cluster_capacity = np.add.reduceat(capacity, bounds[:-1], axis=0)
    return times, np.clip(np.cumsum(change, axis=0) / cluster_capacity, 0.0, 1.0)


# ------------------------------------------------------------------ the Gymnasium environment
class RLSKEnv(gym.Env):
    """RLSK: send each arriving job to one of M clusters, or postpone it.

    ## Description
    Jobs (a task of one or more instances with a demand per resource and a
    duration) arrive over time at a federation of M clusters; each cluster is
    one or more nodes of the core simulator. When a job arrives, or comes back
    from a postponement, the agent sends it to a cluster's queue or postpones
    it. A queued job starts on a node of its cluster as soon as one holds it
    (the least-allocated node: kube-scheduler's default); until then it waits
    there, as a pod does, without blocking the jobs queued behind it. Huang,
    Xiao & Wu, "RLSK", sections III-A and III-C; the queues and nodes are
    `Federation`'s.

    ## Action space
    ``Discrete(M + 1)`` (eq. 3): 0 postpones the job by a random interval
    (``postpone``: by default 1-10 whole steps, uniform); ``m`` in 1..M sends it
    to cluster m - 1's queue, even if the cluster is full now. Every action is
    always possible (``action_masks()`` is all True, for the tools that ask).

    ## Observation space
    ``Box(0, 1, ((M + 1) * D,), float32)`` (eq. 2): each cluster's utilisation
    of each of the D resources, then the job's demand as fractions of one
    cluster's capacity.

    ## Rewards
    Eq. 4, ``r(t) = alpha Util(t) - beta DiffCluster(t) - gamma DiffRes(t)``
    (eq. 5-8, `reward_rate`), a step function of time; a step's reward is its
    integral from this decision to the next (Algorithm 2's r_k over
    [t_k, t_{k+1})). An episode's rewards add up to the integral over the whole
    run, `federation_metrics`' ``total_reward``, which the baselines get too.

    ## Starting state
    A workload drawn by seed (``workload(seed)``; seeds from
    ``cloudsim.engine.envs.TRAINING_SEEDS`` unless ``reset(options={"workload_seed":
    s})`` or ``{"jobs": [...]}`` replays a given one), the clusters empty, time
    at the first arrival.

    ## Episode end
    Terminated when every job has finished: ``info`` then holds ``summary``,
    ``jobs`` (per-job times), ``total_reward`` and RLSK's metrics
    (`federation_metrics`), ``postponements`` and ``forced`` (postponements
    refused: a job postponed ``max_postpones`` times goes to the least-loaded
    cluster instead, so every episode ends). Truncated, with
    ``info["truncated"]``, only if the simulation stalls.

    ## Arguments
    ``gymnasium.make("cloudsim/RLSK-v0", workload=None, load=0.7, jobs=1000,
    cluster=None, clusters=3, postpone=(1, 10), weights=RLSKWeights(),
    max_postpones=10)``: ``workload(seed) -> list[JobSpec]`` (default: RLSK's
    Bernoulli arrivals, `traces.rlsk_workload` at ``load`` with ``jobs`` jobs);
    ``cluster`` (default `federation_cluster(clusters)`: one node of 1 cpu and 1
    memory per cluster; `federation_cluster(3, nodes=4)` for clusters of 4 nodes).

    ## Version history
    * v0: first version.
    """

    metadata = {"render_modes": []}

    def __init__(self, workload: Callable[[int], Sequence[JobSpec]], cluster: ClusterSpec | None = None,
                 clusters: int = 3, postpone: tuple[int, int] | Callable = DEFAULT_POSTPONE,
                 weights: RLSKWeights = RLSKWeights(), max_postpones: int = DEFAULT_MAX_POSTPONES) -> None:
        if not callable(workload):
            raise TypeError(f"workload must be a function seed -> list of JobSpec, got {workload!r}")
        if not isinstance(weights, RLSKWeights):
            raise TypeError(f"weights must be an RLSKWeights(alpha, beta, gamma), got {weights!r}")
        self.cluster = cluster if cluster is not None else federation_cluster(clusters)
        self.clusters = clusters
        self.postpone = postpone
        federation = Federation(self.cluster, clusters, postpone, max_postpones=max_postpones)  # checks them
        self.workload = workload
        self.weights = weights
        self.max_postpones = max_postpones
        self.observation_space = spaces.Box(0.0, 1.0, (federation.observation_size,), dtype=np.float32)
        self.action_space = spaces.Discrete(clusters + 1)
        self.sim: Simulation | None = None
        self.federation: Federation | None = None
        self.workload_seed: int | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode: ``options={"jobs": [...]}`` replays those jobs, ``{"workload_seed": s}``
        the workload of seed ``s``; otherwise a workload seed is drawn from `TRAINING_SEEDS`."""
        super().reset(seed=seed)
        jobs, self.workload_seed = episode_jobs(options, self.workload, self.np_random)
        self.sim = Simulation(self.cluster, jobs, name="rlsk-env", max_idle_ticks=10_000)
        self.federation = Federation(self.cluster, self.clusters, self.postpone,
                                     seed=int(self.np_random.integers(2**31)), max_postpones=self.max_postpones)
        self.time, self.rate = 0.0, 0.0
        self.view, self.task = None, None
        _, terminated, truncated, info = self._advance()
        info["workload_seed"] = self.workload_seed
        return self._observation(), info

    def step(self, action):
        if self.sim is None or self.view is None:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is outside Discrete({self.action_space.n})")
        self.federation.dispatch(self.view, self.task, int(action))
        reward, terminated, truncated, info = self._advance()
        return self._observation(), reward, terminated, truncated, info

    def _advance(self) -> tuple[float, bool, bool, dict]:
        """Run the federation's own moves until a job asks for a decision; return (reward, terminated,
        truncated, info)."""
        sim, federation = self.sim, self.federation
        reward = 0.0
        try:
            while True:
                view = sim.next_decision()
                if view is None:
                    result = sim.result()
                    reward += self.rate * (result.makespan - self.time)
                    self.view = None
                    metrics = federation_metrics(result, self.clusters, self.weights)
                    return reward, True, False, {"summary": result.summary, "jobs": result.jobs, **metrics,
                                                 "makespan": result.makespan,
                                                 "postponements": federation.postponements,
                                                 "forced": federation.forced}
                reward += self.rate * (view.time - self.time)
                self.time = view.time
                self.rate = float(reward_rate(federation.utilisation(view), self.weights))
                move = federation.route(view)
                if isinstance(move, Dispatch):
                    self.view, self.task = view, move.task
                    return reward, False, False, {"action_mask": self.action_masks()}
                sim.apply(move, wake_after=None if move is not None else federation.wake_after(view.time))
        except SimulationStalledError as err:
            self.view = None
            return reward, False, True, {"truncated": str(err)}

    def action_masks(self) -> np.ndarray:
        """Every action is always possible (a full cluster queues the job): all True."""
        return np.ones(self.action_space.n, dtype=bool)

    def _observation(self) -> np.ndarray:
        if self.view is None:
            return np.zeros(self.observation_space.shape, dtype=np.float32)
        return self.federation.observe(self.view, self.task)
