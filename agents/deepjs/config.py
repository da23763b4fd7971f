"""DeepJS's configuration, features and rewards: everything that defines an agent except its network.

Kept apart from `agents.deepjs` so that the command line can show the defaults
and check a configuration without importing torch (which takes seconds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from agents.kit.checks import check_finite, check_learning_rate, check_whole
from agents.kit.settings import setting
from agents.registry import TrainingSpec
from cloudsim.engine.checks import is_finite_number, is_whole
from cloudsim import ClusterView

__all__ = [
    "CONFIG_FILE",
    "CompletionReward",
    "DEEPJS_TRAINING",
    "DeepJSConfig",
    "FEATURES",
    "FEATURE_RESOURCES",
    "MakespanReward",
    "PAPER_FEATURES",
    "POLICY_FILE",
    "REWARDS",
    "SlowdownReward",
    "needed_resources",
]


# ------------------------------------------------------------------ rewards
class MakespanReward:
    """-1 per decision instant (one time step in tick mode) until all jobs finish (DeepJS 3.2.3)."""

    def __call__(self, view: ClusterView) -> float:
        return -1.0


class SlowdownReward:
    """-sum over jobs in the system of 1 / T_j (DeepRM 3.4): its total is minus the sum of slowdowns."""

    def __call__(self, view: ClusterView) -> float:
        lengths = view.job_length[view.jobs_in_system]
        return -float(np.sum(1.0 / lengths[lengths > 0]))


class CompletionReward:
    """-(number of jobs in the system) (DeepRM 3.4): its total is minus the sum of completion times."""

    def __call__(self, view: ClusterView) -> float:
        return -float(len(view.jobs_in_system))


REWARDS = {"makespan": MakespanReward, "slowdown": SlowdownReward, "completion": CompletionReward}


# ------------------------------------------------------------------ features
def _machine_free(resource: str):
    return lambda view, m, t: view.free[m, view.resources.index(resource)]


def _task_demand(resource: str):
    return lambda view, m, t: view.demand[t, view.resources.index(resource)]


FEATURES: dict[str, Callable[[ClusterView, np.ndarray, np.ndarray], np.ndarray]] = {
    "machine_cpu": _machine_free("cpu"),
    "machine_memory": _machine_free("memory"),
    "task_cpu": _task_demand("cpu"),
    "task_memory": _task_demand("memory"),
    "task_duration": lambda view, m, t: view.duration[t],
    "task_waiting": lambda view, m, t: view.waiting[t],
    "task_running": lambda view, m, t: view.running[t],
    "task_age": lambda view, m, t: view.time - view.arrival_time[t],
}
"""Named pair features: f(view, machines, tasks) -> one value per pair."""


PAPER_FEATURES = ("machine_cpu", "machine_memory", "task_cpu", "task_memory", "task_duration", "task_waiting")
"""Section 4.1: machine free cpu and memory; task cpu, memory, duration and waiting instances."""

FEATURE_RESOURCES = {"machine_cpu": "cpu", "machine_memory": "memory", "task_cpu": "cpu", "task_memory": "memory"}
"""The resource dimension each resource feature reads (by name): a cluster without it cannot be scored."""


def needed_resources(features: Sequence[str]) -> list[str]:
    """Resources ``features`` read, in feature order, each once."""
    return list(dict.fromkeys(FEATURE_RESOURCES[f] for f in features if f in FEATURE_RESOURCES))


@dataclass(frozen=True)
class DeepJSConfig:
    """Everything that defines a DeepJS agent and its training; saved with every checkpoint.

    ``features`` name entries of `FEATURES`; ``feature_mean`` / ``feature_std``
    normalise them (``(x - mean) / std``; `DeepJSTrainer` fits them on the
    training workload when left empty). ``hidden`` are the hidden layer sizes
    of Table 1. ``reward``: "makespan", "slowdown" or "completion".
    ``normalize_advantage`` scales each iteration's advantages to zero mean and
    unit variance (the paper is silent on it). ``gamma`` discounts the
    returns-to-go (Algorithm 2: 1).
    """

    features: tuple[str, ...] = PAPER_FEATURES
    hidden: tuple[int, ...] = setting((3, 9, 6), "hidden layer sizes (Table 1)")
    feature_mean: tuple[float, ...] = ()
    feature_std: tuple[float, ...] = ()
    reward: str = setting("makespan", "the reward: makespan (-1 per tick), slowdown or completion",
                          choices=tuple(REWARDS))
    learning_rate: float = setting(0.001, "Adam's learning rate", metavar="RATE")
    iterations: int = setting(10, "iterations per chunk")
    trajectories: int = setting(12, "trajectories per iteration")
    gamma: float = 1.0
    normalize_advantage: bool = setting(True, "use the raw advantages q_t - b_t (default: scaled to unit variance "
                                        "per iteration)", flag="--no-advantage-normalisation")
    tick: float = setting(1.0, "scheduler tick", metavar="T")
    seed: int = 0

    def __post_init__(self) -> None:
        # Checked here, before any network is built or rollout started: a bad value would otherwise surface
        # as a shape error deep in torch, a NaN loss, or a training loop that silently does nothing.
        if not self.features:
            raise ValueError(f"DeepJSConfig.features is empty; name at least one of {sorted(FEATURES)} "
                             f"(the paper's: {', '.join(PAPER_FEATURES)})")
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise ValueError(f"unknown DeepJS features {unknown} in DeepJSConfig.features; choose from "
                             f"{sorted(FEATURES)}")
        if self.reward not in REWARDS:
            raise ValueError(f"unknown reward {self.reward!r} in DeepJSConfig.reward; choose from {sorted(REWARDS)} "
                             f"(--reward)")
        if not self.hidden:
            raise ValueError(f"DeepJSConfig.hidden={self.hidden!r} lists no hidden layer; give layer sizes such as "
                             f"(3, 9, 6), Table 1's (--hidden 3,9,6)")
        for i, size in enumerate(self.hidden):
            if not is_whole(size) or size < 1:
                raise ValueError(f"DeepJSConfig.hidden={self.hidden!r}: layer {i} has size {size!r}, but every layer "
                                 f"needs a whole number of units >= 1 (a zero-width layer cuts the network); "
                                 f"give sizes such as (3, 9, 6) (--hidden 3,9,6)")
        check_learning_rate(self, hint="the paper uses 0.001 (--learning-rate 0.001)")
        check_whole(self, ("iterations",), 1, hint="iterations per chunk; the paper uses 10 (--iterations 10)")
        check_whole(self, ("trajectories",), 1,
                    hint="trajectories per iteration; the paper uses 12 (--trajectories 12)")
        check_finite(self, ("gamma",), above=0, at_most=1, hint="1 (no discount) is Algorithm 2's")
        check_finite(self, ("tick",), above=0, hint="the time between scheduler wakes; DeepJS's reward of -1 per tick "
                                                    "uses 1 (--tick 1)")
        check_whole(self, ("seed",), 0)
        n = len(self.features)
        if self.feature_mean and (len(self.feature_mean) != n
                                  or not all(is_finite_number(v) for v in self.feature_mean)):
            raise ValueError(f"DeepJSConfig.feature_mean={self.feature_mean!r} needs one finite value per feature "
                             f"({n}: {', '.join(self.features)}); leave it empty to fit it on the training "
                             f"workload (DeepJSTrainer.fit_normaliser)")
        if self.feature_std and (len(self.feature_std) != n
                                 or not all(is_finite_number(v) and v > 0 for v in self.feature_std)):
            raise ValueError(f"DeepJSConfig.feature_std={self.feature_std!r} needs one finite value > 0 per feature "
                             f"({n}: {', '.join(self.features)}; features are divided by it); leave it empty to "
                             f"fit it on the training workload (DeepJSTrainer.fit_normaliser)")


POLICY_FILE = "policy.pt"
"""The checkpoint a training writes after each chunk, and resumes from."""
CONFIG_FILE = "config.json"
"""What a training writes beside its checkpoint: the agent's config and, from the run layer, the workload that made
the chunks (which a resume must give again: its chunks are numbered in that workload)."""

DEEPJS_TRAINING = TrainingSpec(
    "deepjs", "DeepJS", DeepJSConfig, "agents.deepjs.agent:run_training",
    summary="DeepJS (REINFORCE, Algorithm 2)",
    description="Train DeepJS by REINFORCE on sliding chunks (Algorithm 2), saving DIR/policy.pt after each chunk "
                "(use it with --checkpoint deepjs=DIR/policy.pt) and a log of every iteration; --resume continues a "
                "saved training exactly.",
    describe=lambda agent: "DeepJS",  # the command adds its workload and chunks
    writes="folder for policy.pt (the checkpoint, written after each chunk; also the state to resume from) and the "
           "log (log.csv, log.jsonl: one row per iteration, appended to on --resume)",
    threads=2, reads=("init",), trains_on="chunks")
"""``cloudsim train deepjs``: Algorithm 2 on sliding chunks of the workload the command is given (chunks of 10 jobs
unless told otherwise). Two threads: the committed trainings ran on two."""
