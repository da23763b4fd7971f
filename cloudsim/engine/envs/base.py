"""The Gymnasium environment for a paper's formulation on the core engine.

`SchedulingEnv` drives a `cloudsim.Simulation` through its stepping API;
Deepk8s-v0 is built on it. DeepRM-v0 and RLSK-v0 are not: each models its own
paper's simulator (DeepRM's discrete-time image of slots, RLSK's federation of
clusters), which the engine's machines and decision rounds do not express, so
they subclass ``gym.Env`` directly (`cloudsim.engine.envs.deeprm`, `cloudsim.engine.envs.rlsk`).
A formulation on the engine is four things, and a subclass writes only those:

* ``observe(view) -> obs``: the observation of a decision instant;
* ``decode(action, view) -> Decision | None``: the action as a decision, None
  for "wait" (and for an action that is not possible now, if the paper says so);
* ``action_mask(view) -> bool array``: which actions are possible now
  (``action_masks()`` is what sb3-contrib's MaskablePPO calls);
* ``holding_cost(view) -> float``: the reward lost per time unit while the
  state lasts (Deepk8s: sum over tasks in the system of 1 / duration), so
  that a step's reward is minus the cost summed over the time it covers.

The base class handles the rest: sampling a workload by seed or replaying a
given one (``reset(options={"jobs": ...})``), rounds in which only waiting is
possible (the mask's last action is "wait"; such rounds are skipped: time moves
on to the next event, with their cost charged to the next reward),
waiting (the round ends, and one opens again at the next event or after
``max_wait`` time units), the end of the episode (``terminated``, with the
per-job results in ``info``) and a broker that stalls (``truncated``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable, Sequence

import gymnasium as gym
import numpy as np

from cloudsim.engine.broker import ClusterView, Decision
from cloudsim.engine.checks import check_number
from cloudsim.engine.simulation import Simulation, SimulationStalledError
from cloudsim.engine.specs import ClusterSpec, JobSpec

__all__ = ["SchedulingEnv", "TRAINING_SEEDS", "episode_jobs"]

# Workload seeds a training environment draws from; evaluation uses seeds below
# the range (for example `cloudsim compare deepk8s --seeds 0:100`), which training never sees.
TRAINING_SEEDS = (1_000, 2**31 - 1)


def episode_jobs(options: dict[str, Any] | None, workload: Callable[[int], Sequence[JobSpec]],
                 rng: np.random.Generator) -> tuple[list[JobSpec], int | None]:
    """(jobs, workload seed) of an environment's reset: ``options={"jobs": [...]}`` replays those jobs
    (seed None), ``{"workload_seed": s}`` is ``workload(s)``; otherwise the seed is drawn from
    `TRAINING_SEEDS` with ``rng`` (the environment's ``np_random``)."""
    options = dict(options or {})
    unknown = set(options) - {"jobs", "workload_seed"}
    if unknown:
        raise ValueError(f"unknown reset options {sorted(unknown)}; use 'jobs' or 'workload_seed'")
    if "jobs" in options:
        return list(options["jobs"]), None
    seed = int(options.get("workload_seed", rng.integers(*TRAINING_SEEDS)))
    return list(workload(seed)), seed


class SchedulingEnv(gym.Env, ABC):
    """A scheduling episode as a Gymnasium environment; subclasses give the formulation.

    Args:
        cluster: the machines.
        workload: ``workload(seed) -> list[JobSpec]``, a workload for an integer
            seed; at each reset the environment draws the seed from
            `TRAINING_SEEDS` with its own random generator.
        window: how many waiting tasks the observation shows (the rest are the backlog).
        max_wait: after a wait, a new decision comes at the next event or after
            this many time units, whichever is first.
        name: the broker name the episode's results carry.
    """

    metadata = {"render_modes": []}

    def __init__(self, cluster: ClusterSpec, workload: Callable[[int], Sequence[JobSpec]], *, window: int,
                 max_wait: float, name: str) -> None:
        if not callable(workload):
            raise TypeError(f"workload must be a function seed -> list of JobSpec, got {workload!r}")
        check_number("window", window, whole=True, at_least=1)
        if not (np.isfinite(max_wait) and max_wait > 0):
            raise ValueError(f"max_wait must be a positive number of time units, got {max_wait!r}")
        self.cluster = cluster
        self.workload = workload
        self.window = int(window)
        self.max_wait = float(max_wait)
        self.name = name
        self.sim: Simulation | None = None
        self.view: ClusterView | None = None
        self.workload_seed: int | None = None

    # -------------------------------------------------------- the formulation
    @abstractmethod
    def observe(self, view: ClusterView) -> np.ndarray:
        """The observation of a decision instant."""

    @abstractmethod
    def decode(self, action: int, view: ClusterView) -> Decision | None:
        """The decision an action stands for, or None for waiting."""

    @abstractmethod
    def action_mask(self, view: ClusterView) -> np.ndarray:
        """Which actions are possible now; the last one, waiting, always is."""

    @abstractmethod
    def holding_cost(self, view: ClusterView) -> float:
        """The reward lost per time unit while the state of ``view`` lasts."""

    # ------------------------------------------------------------ Gymnasium
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode: ``options={"jobs": [...]}`` replays those jobs, ``{"workload_seed": s}``
        the workload of seed ``s``; otherwise a workload seed is drawn from `TRAINING_SEEDS`."""
        super().reset(seed=seed)
        jobs, self.workload_seed = episode_jobs(options, self.workload, self.np_random)
        self.sim = Simulation(self.cluster, jobs, name=self.name, max_idle_ticks=10_000)
        self.time = 0.0
        self.cost_rate = 0.0
        reward, terminated, truncated, info = self._advance()
        info["workload_seed"] = self.workload_seed
        return self._observation(), info

    def step(self, action):
        if self.sim is None or self.view is None:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        decision = self.decode(int(action), self.view)
        self.sim.apply(decision, wake_after=None if decision is not None else self.max_wait)
        reward, terminated, truncated, info = self._advance()
        info["invalid"] = decision is None and int(action) != self.action_space.n - 1
        return self._observation(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Which actions are possible now (the last is always "wait")."""
        if self.view is None:
            mask = np.zeros(self.action_space.n, dtype=bool)
            mask[-1] = True
            return mask
        return self.mask

    # ---------------------------------------------------------------- inside
    def _charge(self, until: float) -> float:
        """Minus the holding cost from the last decision to ``until``."""
        cost = (until - self.time) * self.cost_rate
        self.time = until
        return -cost

    def _advance(self) -> tuple[float, bool, bool, dict]:
        """Move to the next decision in which something can be done; return (reward, terminated, truncated, info)."""
        reward = 0.0
        try:
            while True:
                view = self.sim.next_decision()
                if view is None:
                    result = self.sim.result()
                    reward += self._charge(result.makespan)
                    self.view = None
                    return reward, True, False, {"summary": result.summary, "jobs": result.jobs}
                reward += self._charge(view.time)
                self.cost_rate = self.holding_cost(view)
                mask = self.action_mask(view)
                if mask[:-1].any():  # something can start: a decision for the agent
                    self.view, self.mask = view, mask
                    return reward, False, False, {"action_mask": mask}
                self.sim.apply(None)  # nothing can start: wait for an arrival or a completion
        except SimulationStalledError as err:
            self.view = None
            return reward, False, True, {"stalled": str(err)}

    def _observation(self) -> np.ndarray:
        if self.view is None:
            return np.zeros(self.observation_space.shape, dtype=self.observation_space.dtype)
        return self.observe(self.view)
