"""RLSK's Gymnasium environment, ``cloudsim/RLSK-v0``: each arriving job sent to a cluster of the federation, or
postponed; its docstring is the specification."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from cloudsim.engine.envs.base import episode_jobs
from cloudsim.engine.envs.rlsk.federation import (DEFAULT_MAX_POSTPONES, DEFAULT_POSTPONE, Dispatch, Federation,
                                                  RLSKWeights, federation_cluster, reward_rate)
from cloudsim.engine.envs.rlsk.metrics import federation_metrics
from cloudsim.engine.simulation import Simulation, SimulationStalledError
from cloudsim.engine.specs import ClusterSpec, JobSpec

__all__ = ["RLSKEnv"]


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
