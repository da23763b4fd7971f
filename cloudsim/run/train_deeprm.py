"""`train_deeprm`: `cloudsim train deeprm|deeprm-plus`, DeepRM and DeepRM_Plus trained by REINFORCE
in DeepRM's own environment.

The agent's hyper-parameters are `agents.deeprm.config.DeepRMConfig`'s; `DeepRMTrainConfig` is
the run's options with those settings added (`with_agent_settings`), and `DeepRMPlusTrainConfig` the
same with DeepRM_Plus's defaults (Table I's CNN, SJF cloned first, its Poisson workload at 140 %).
Training jobsets are drawn from seed `TRAINING_JOBSET_SEED` (1000), held-out evaluations use single
jobsets of seeds below it (``cloudsim compare deeprm --env deeprm --seeds 0:100``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from agents.deeprm.config import DEEPRM_PLUS_DEFAULTS, DeepRMConfig
from cloudsim.run.config.fields import check_number_option, option, whole
from cloudsim.run.config.training import AgentTraining, with_agent_settings

__all__ = ["DeepRMTrainConfig", "DeepRMPlusTrainConfig", "train_deeprm", "PLUS_DEFAULTS"]

PLUS_DEFAULTS = DEEPRM_PLUS_DEFAULTS
"""DeepRM_Plus's defaults, the agent's own (`agents.deeprm.config.DEEPRM_PLUS_DEFAULTS`)."""
CLONING = ("clone_jobsets", "clone_accuracy", "clone_epochs")
"""DeepRM_Plus's settings of cloning SJF (Algorithm 2), which DeepRM's dense network does not take."""


@with_agent_settings(DeepRMConfig, leave_out=CLONING)
@dataclass(frozen=True)
class DeepRMTrainConfig(AgentTraining):
    """`cloudsim train deeprm`: the objective, load and sizes of training (`DeepRMConfig`'s settings), and where
    it writes."""

    out: str = option("deeprm-run", "--out", "folder for policy.pt (also the state to resume from), config.json "
                      "and the log (log.csv, log.jsonl)", metavar="DIR")
    keep_every: int = option(0, "--keep-every", "also keep every Nth iteration's checkpoint as policy-NNNNN.pt, to "
                             "choose one on validation jobsets afterwards (default 0: keep only the last)",
                             parse=whole, metavar="N")

    agent_name = "deeprm"
    checkpoint_agent = "deeprm"  # DeepRM_Plus's checkpoints too: one agent, two networks
    progress_key = "iteration"

    def check_options(self) -> None:
        check_number_option("--keep-every", self.keep_every, "0 keeps only the last checkpoint", whole=True, at_least=0)

    def describe_state(self) -> str:
        return "DeepRM"


@with_agent_settings(DeepRMConfig, defaults=PLUS_DEFAULTS)
@dataclass(frozen=True)
class DeepRMPlusTrainConfig(DeepRMTrainConfig):
    """`cloudsim train deeprm-plus`: DeepRM_Plus's defaults, and how SJF is cloned first."""

    out: str = option("deeprm-plus-run", "--out", "folder for policy.pt (also the state to resume from), "
                      "config.json, clone.json (the cloning's test accuracy) and the log", metavar="DIR")

    agent_name = "deeprm-plus"


def train_deeprm(config: DeepRMTrainConfig) -> dict:
    """Train, and return a summary: iterations, wall time, the last logged rewards and slowdown, the policy."""
    from agents.deeprm import train  # torch is imported only to train

    agent = config.agent
    started = time.perf_counter()
    policy = train(agent, config.out, resume=config.resume, tensorboard=config.tensorboard,
                   progress=config.progress, save_every=config.save_every, keep_every=config.keep_every,
                   device=config.device, **config.thread_count())
    log = Path(config.out) / "log.jsonl"
    last = json.loads(log.read_text().splitlines()[-1]) if log.is_file() and log.stat().st_size else {}
    clone = Path(config.out) / "clone.json"
    cloned = json.loads(clone.read_text()) if clone.is_file() else {}
    return {"agent": config.agent_name, "objective": agent.objective, "load": agent.load,
            "iterations": agent.iterations, "policy": str(policy), "wall_s": round(time.perf_counter() - started, 3),
            "mean_reward": last.get("mean_reward"), "max_reward": last.get("max_reward"),
            "mean_slowdown": last.get("mean_slowdown"),
            **({"clone_test_accuracy": cloned["test_accuracy"][-1]} if cloned.get("test_accuracy") else {})}
