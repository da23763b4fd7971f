"""Deepk8s's training episodes: the environment a config trains in, and SJF's action in it (the expert
DAgger imitates)."""

from __future__ import annotations

from typing import Callable, Sequence

from agents.deepk8s.config import Deepk8sConfig
from agents.heuristics.classic import Windowed
from cloudsim import ClusterSpec, JobSpec
from cloudsim.engine.broker import as_plan
from cloudsim.engine.envs import Deepk8sEnv

Workload = Callable[[int], Sequence[JobSpec]]
"""A training workload: the task sequence of a seed."""


def make_env(config: Deepk8sConfig, workload: Workload, cluster: ClusterSpec) -> Deepk8sEnv:
    return Deepk8sEnv(workload, cluster, window=config.window, max_wait=config.max_wait)


def expert_action(env: Deepk8sEnv, expert: Windowed) -> int:
    """What SJF on the same window does in the environment's current state, as an action: the first
    decision of its plan (the environment takes one decision per step)."""
    plan = as_plan(expert.decide(env.view))
    return env.encoding.encode(plan[0] if plan else None)
