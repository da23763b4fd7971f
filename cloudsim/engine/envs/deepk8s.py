"""Deepk8s's formulation (Zhao & Sun, 2021): pick (visible task, machine) pairs, or wait.

The environment is event-driven on the core: decisions come at arrivals and
completions, several at one instant, and a wait lets time run to the next
event (at most 16 time units). Its reward makes the return minus the sum of
the tasks' weighted turnaround times.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from gymnasium import spaces

from cloudsim.engine.broker import ClusterView, Decision
from cloudsim.engine.envs.base import SchedulingEnv
from cloudsim.engine.specs import ClusterSpec, JobSpec

__all__ = ["DEEPK8S_WINDOW", "Deepk8sEnv", "Deepk8sEncoding", "deepk8s_cluster"]


def deepk8s_cluster(machines: int = 5, cpu: float = 10, memory: float = 64) -> ClusterSpec:
    """The paper's cluster: 5 identical machines of 10 CPU and 64 memory."""
    return ClusterSpec.uniform(machines, {"cpu": cpu, "memory": memory})


DEEPK8S_WINDOW = 10
"""The tasks the scheduler sees at once in Deepk8s's formulation (n = 10 in the paper): the encoding's, the
agent's and the deepk8s workload's window."""


class Deepk8sEncoding:
    """Observation, actions and reward of Deepk8s for a cluster and a window of ``window`` tasks.

    Written once and shared by the environment and the trained policy's broker,
    so both see exactly the same numbers. Resources are ``cluster.resources``
    (cpu and memory in the paper); demands and free resources are fractions of
    the largest machine's capacity; a duration d is ``d / (d + duration_scale)``
    and the backlog's length b is ``b / (b + backlog_scale)``, so every feature
    lies in [0, 1]. ``shown`` resources (default: all) are the first ones the
    observation holds; the others still decide what fits (the action mask).
    """

    def __init__(self, cluster: ClusterSpec | np.ndarray, window: int = DEEPK8S_WINDOW, duration_scale: float = 100.0,
                 backlog_scale: float = 50.0, shown: int | None = None) -> None:
        # A cluster, or its machines' capacities (machines x resources) as a broker's view has them.
        capacity = cluster.capacity_array() if isinstance(cluster, ClusterSpec) else np.asarray(cluster, float)
        capacity = capacity[:, :shown]
        self.machines, self.resources = capacity.shape
        self.window = window
        self.scale = capacity.max(axis=0)
        self.scale[self.scale == 0] = 1.0
        self.duration_scale = duration_scale
        self.backlog_scale = backlog_scale
        self.task_features = self.resources + 1
        self.size = self.machines * self.resources + (window + 1) * self.task_features + 1
        self.actions = self.machines * window + 1
        self.wait = self.actions - 1

    @staticmethod
    def split(obs, resources: int, window: int):
        """An observation (or a batch, numpy or torch) as its three parts: (..., machines, resources) free,
        (..., window, resources + 1) slots, (..., resources + 2) backlog. The machine count is read from the
        length, so a network that takes these parts needs no fixed number of machines."""
        tail = resources + 2
        slots = window * (resources + 1)
        machines = (obs.shape[-1] - slots - tail) // resources
        lead = tuple(obs.shape[:-1])
        free = obs[..., : machines * resources].reshape(*lead, machines, resources)
        visible = obs[..., machines * resources: machines * resources + slots].reshape(*lead, window, resources + 1)
        return free, visible, obs[..., -tail:]

    def observe(self, view: ClusterView) -> np.ndarray:
        """[free of each machine | (demand, duration) of each visible task, zeros for empty slots |
        backlog length | (demand, duration) of the backlog's first task], as float32."""
        visible = view.window(self.window)
        obs = np.zeros(self.size, dtype=np.float32)
        free, slots, tail = self.split(obs, self.resources, self.window)  # views: writing them fills obs
        free[:] = view.free[:, : self.resources] / self.scale
        n = visible.num_tasks
        slots[:n, :-1] = visible.demand[:, : self.resources] / self.scale
        slots[:n, -1] = visible.duration / (visible.duration + self.duration_scale)
        tail[0] = visible.backlog / (visible.backlog + self.backlog_scale)
        if visible.backlog:
            tail[1:-1] = visible.backlog_demand[0, : self.resources] / self.scale
            duration = visible.backlog_duration[0]
            tail[-1] = duration / (duration + self.duration_scale)
        return np.clip(obs, 0.0, 1.0, out=obs)  # float residue such as free = -1e-17

    def action_mask(self, view: ClusterView) -> np.ndarray:
        """True for each (machine, slot) pair that fits now, then True for wait."""
        visible = view.window(self.window)
        mask = np.zeros(self.actions, dtype=bool)
        pairs = mask[:-1].reshape(self.machines, self.window)
        pairs[:, : visible.num_tasks] = visible.fits
        mask[-1] = True
        return mask

    def decode(self, action: int, view: ClusterView) -> Decision | None:
        """Action ``machine * window + slot`` starts one instance of the slot's task on the machine;
        the last action, an empty slot or a pair that does not fit is a wait."""
        if not 0 <= action < self.wait:
            return None
        machine, slot = divmod(action, self.window)
        visible = view.window(self.window)
        if slot >= visible.num_tasks or not visible.fits[machine, slot]:
            return None
        return Decision(machine, slot)

    def encode(self, decision: Decision | tuple | None) -> int:
        """The action of a decision on the window (None is wait)."""
        if decision is None:
            return self.wait
        machine, slot = (decision.machine, decision.task) if isinstance(decision, Decision) else decision[:2]
        if slot >= self.window:
            raise ValueError(f"task {slot} is outside the window of {self.window}")
        return int(machine) * self.window + int(slot)

    @staticmethod
    def holding_cost(view: ClusterView) -> float:
        """Sum over jobs in the system (arrived, not finished) of 1 / the job's duration (eq. 1)."""
        inside = view.jobs_in_system
        return float(np.sum(1.0 / view.job_length[inside])) if len(inside) else 0.0


class Deepk8sEnv(SchedulingEnv):
    """Deepk8s: schedule tasks from a window of waiting tasks onto machines, event by event.

    ## Description
    Tasks (single-instance jobs with a cpu and memory demand and a duration)
    arrive over time. At each decision the agent places one of the first
    ``window`` waiting tasks on one machine, or waits. Several decisions can be
    made at one instant. Zhao & Sun, "Deepk8s", 2021, sections 3-4.

    ## Action space
    ``Discrete(machines * window + 1)``. Action ``a < machines * window`` places
    the task in slot ``a % window`` on machine ``a // window``; the last action
    waits. A pair that does not fit, or an empty slot, acts as wait (``info["invalid"]``).
    ``action_masks()`` (and ``info["action_mask"]``) marks the pairs that fit.

    ## Observation space
    ``Box(0, 1, (machines * resources + (window + 1) * (resources + 1) + 1,), float32)``:
    each machine's free resources, each visible task's demand and duration (zeros
    for empty slots), the backlog's length and its first task's demand and
    duration. Resources are fractions of a machine's capacity; a duration d is
    ``d / (d + 100)`` and a backlog of b tasks ``b / (b + 50)``.

    ## Rewards
    ``r = - sum over tasks in the system of t / d_j`` (eq. 1): ``t`` is the time
    since the previous decision, ``d_j`` the task's duration. The return of an
    episode is minus the sum of the tasks' weighted turnaround times
    ((finish - arrival) / duration).

    ## Starting state
    A workload drawn by seed (``workload(seed)``; seeds from
    ``cloudsim.engine.envs.TRAINING_SEEDS`` unless ``reset(options={"workload_seed": s})``
    or ``{"jobs": [...]}`` replays a given one), the cluster empty, time at the
    first decision in which a task fits.

    ## Episode end
    Terminated when every task has finished; ``info["summary"]`` and
    ``info["jobs"]`` (per-job submit, start, finish, completion, slowdown) give
    the results. Truncated (``info["stalled"]``) if tasks are left that nothing
    runs or can start while the agent keeps waiting.

    ## Arguments
    ``gymnasium.make("cloudsim/Deepk8s-v0", workload=None, cluster=None, window=10, max_wait=16)``:
    ``workload(seed) -> list[JobSpec]`` (default: task sequences of the Alibaba
    trace, `traces.deepk8s_workload`); ``cluster`` (default 5 machines of 10 cpu
    and 64 memory); ``window`` visible tasks; ``max_wait`` time units a wait lasts at most.

    ## Version history
    * v0: first version.
    """

    def __init__(self, workload: Callable[[int], Sequence[JobSpec]], cluster: ClusterSpec | None = None,
                 window: int = 10, max_wait: float = 16.0) -> None:
        cluster = cluster if cluster is not None else deepk8s_cluster()
        super().__init__(cluster, workload, window=window, max_wait=max_wait, name="deepk8s-env")
        self.encoding = Deepk8sEncoding(cluster, self.window)
        self.action_space = spaces.Discrete(self.encoding.actions)
        self.observation_space = spaces.Box(0.0, 1.0, (self.encoding.size,), dtype=np.float32)

    def observe(self, view: ClusterView) -> np.ndarray:
        return self.encoding.observe(view)

    def decode(self, action: int, view: ClusterView) -> Decision | None:
        return self.encoding.decode(action, view)

    def action_mask(self, view: ClusterView) -> np.ndarray:
        return self.encoding.action_mask(view)

    def holding_cost(self, view: ClusterView) -> float:
        return self.encoding.holding_cost(view)
