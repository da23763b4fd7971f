"""RLSK's cluster-level policies as brokers of the core: a dispatcher picks each job's cluster, and
`FederatedBroker` runs it on `cloudsim.engine.envs.rlsk.Federation` (queues per cluster, postponements,
least-allocated nodes), the very layer RLSK's environment is built on.

A dispatcher is a callable ``dispatcher(federation, view, task) -> action``:
0 postpones the job, ``m`` in 1..M sends it to cluster m - 1's queue, None
holds it until the next event. The baselines are section IV-A's, acting on
clusters:

* first-fit: the first cluster that holds the job now; none: it waits for the next event;
* random: a cluster drawn uniformly, full or not;
* round-robin: clusters in turn, full or not;
* least-load: the cluster with the lowest mean utilisation U_m (eq. 5), full or not;
* lookahead: an oracle, not a baseline: the cluster that maximises eq. 4's reward over the job's
  whole stay, knowing its duration and when every running job ends (which RLSK's state, eq. 2,
  does not show). It tells how far a dispatcher can get on these workloads.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from agents.registry import RLSK_FEDERATION, make
from cloudsim.engine.broker import ClusterView, Decision
from cloudsim.engine.envs.rlsk import DEFAULT_POSTPONE, Dispatch, Federation, RLSKWeights, reward_rate
from cloudsim.engine.specs import ClusterSpec

__all__ = ["FederatedBroker", "first_fit", "least_load", "lookahead", "make_dispatcher", "random_cluster",
           "rlsk_dispatcher", "round_robin"]

Dispatcher = Callable[[Federation, ClusterView, int], "int | None"]


def first_fit() -> Dispatcher:
    """The first cluster that holds the job now; none: the job waits for the next event (RLSK's First Fit)."""

    def dispatch(federation: Federation, view: ClusterView, task: int) -> int | None:
        fitting = federation.fitting_clusters(view, task)
        return int(np.argmax(fitting)) + 1 if fitting.any() else None

    return dispatch


def random_cluster(seed: int | None = 0) -> Dispatcher:
    """A cluster drawn uniformly at random for each job; seeded (RLSK's Random)."""
    rng = np.random.default_rng(seed)
    return lambda federation, view, task: int(rng.integers(federation.clusters)) + 1


def round_robin() -> Dispatcher:
    """The clusters in turn, one job each (RLSK's Round Robin)."""
    turn = [0]

    def dispatch(federation: Federation, view: ClusterView, task: int) -> int:
        cluster = turn[0] % federation.clusters
        turn[0] += 1
        return cluster + 1

    return dispatch


def least_load() -> Dispatcher:
    """The cluster of the lowest mean utilisation over resources, the first on ties (RLSK's Least Load)."""
    return lambda federation, view, task: int(np.argmin(federation.utilisation(view).mean(axis=1))) + 1


def lookahead(weights: RLSKWeights = RLSKWeights()) -> Dispatcher:
    """The cluster whose choice gives the most eq. 4 reward, integrated from now to the job's end, with every
    running job ending when it will (the machines' free profiles) and nothing else arriving."""

    def dispatch(federation: Federation, view: ClusterView, task: int) -> int:
        from cloudsim.engine import arithmetic  # numba: loaded when the dispatcher first chooses

        now, stay = view.time, float(view.duration[task])
        machines = len(view.capacity)
        profiles = [view.free_profile(machine) for machine in range(machines)]
        grid = np.unique(np.concatenate([times for times, _ in profiles] + [[now]]))
        grid = grid[grid < now + stay] if stay > 0 else grid[:1]
        lengths = np.diff(np.append(grid, now + stay)) if stay > 0 else np.ones(1)
        free = np.stack([steps[np.searchsorted(times, grid, side="right") - 1] for times, steps in profiles], axis=1)
        util = federation.utilisation(view, free)  # (T, clusters, R)
        held = view.demand[task] * max(view.waiting_instances(task), 1) / federation.capacity  # (clusters, R)
        choices = np.repeat(util[None], federation.clusters, axis=0)  # (choice, T, clusters, R)
        choices[np.arange(federation.clusters), :, np.arange(federation.clusters)] += held[:, None, :]
        reward = arithmetic.dense(reward_rate(np.clip(choices, 0.0, 1.0), weights), lengths[:, None])[:, 0]
        return int(np.argmax(reward)) + 1

    return dispatch


def rlsk_dispatcher(checkpoint: str | None = None) -> Dispatcher:
    """The trained RLSK agent (None: the checkpoint shipped with the package), greedy on its Q-values."""
    from agents.rlsk.agent import load_policy  # torch only when asked for

    return load_policy(checkpoint)


def make_dispatcher(name: str, *, seed: int | None = None, **options) -> Dispatcher:
    """Build the dispatcher of RLSK's federation declared as ``name`` (`agents.registry`); ``seed`` goes to
    those that draw random numbers."""
    return make(name, RLSK_FEDERATION, seed, options)


class FederatedBroker:
    """A dispatcher as a broker of the core: one episode of RLSK's federation.

    At each decision the federation first starts the queued jobs that fit their
    cluster, then asks the dispatcher about every job that arrived or came back
    from a postponement; it asks to be woken when the next postponed job is due.
    Build one per episode (the queues are the episode's).

    Args:
        dispatcher: ``dispatcher(federation, view, task) -> action`` (see the module docstring).
        clusters: M; the machines split into M clusters of consecutive machines.
        postpone: how long a postponed job stays away (see `Federation`); None: as the
            dispatcher was trained with (its ``config.postpone``), else `DEFAULT_POSTPONE`.
        seed: seeds the postponement draws.
        name: the broker's name in results.
    """

    def __init__(self, dispatcher: Dispatcher, clusters: int = 3, postpone=None, seed: int | None = 0,
                 name: str = "federated") -> None:
        if postpone is None:  # a trained agent postpones as it did in training
            trained = getattr(dispatcher, "config", None)
            postpone = trained.postpone if trained is not None else DEFAULT_POSTPONE
        self.dispatcher = dispatcher
        self.clusters = clusters
        self.postpone = postpone
        self.seed = seed
        self.name = name
        self.federation: Federation | None = None
        self._now = 0.0

    def check_cluster(self, cluster: ClusterSpec) -> list[str]:
        """Refuse machines that do not split into the clusters; a trained agent also checks its own shape."""
        Federation(cluster, self.clusters, self.postpone)
        check = getattr(self.dispatcher, "check_cluster", None)
        return list(check(cluster, self.clusters)) if check is not None else []

    def decide(self, view: ClusterView) -> Decision | None:
        if self.federation is None:
            spec = ClusterSpec(view.resources, tuple(map(tuple, view.capacity.tolist())))
            self.federation = Federation(spec, self.clusters, self.postpone, self.seed)
        federation = self.federation
        self._now = view.time
        while isinstance(move := federation.route(view), Dispatch):
            federation.dispatch(view, move.task, self.dispatcher(federation, view, move.task))
        return move

    @property
    def wake_after(self) -> float | None:
        """How long after a wait the broker must be asked again: when the next postponed job is due."""
        return None if self.federation is None else self.federation.wake_after(self._now)
