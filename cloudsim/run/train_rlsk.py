"""`train_rlsk`: `cloudsim train rlsk`, RLSK's DQN trained on a fixed set of RLSK job sequences.

The agent's hyper-parameters are `agents.rlsk.config.RLSKConfig`'s; `RLSKTrainConfig` is the
run's options with those settings added (`with_agent_settings`), and `train_rlsk` runs it
(through `cloudsim.run.train.train`, as every `cloudsim train AGENT`). The training sequences are
`traces.rlsk_workload` of seeds 1,000 .. 1,000 + sequences - 1 (from
`cloudsim.engine.envs.TRAINING_SEEDS`' range), so held-out evaluations
(``cloudsim compare rlsk --seeds 0:20``) never meet a training sequence.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from agents.rlsk.config import RLSKConfig
from cloudsim.engine.envs import TRAINING_SEEDS
from cloudsim.run.config.fields import option, require, whole
from cloudsim.run.config.training import AgentTraining, with_agent_settings

__all__ = ["RLSKTrainConfig", "train_rlsk", "training_sequences"]


@with_agent_settings(RLSKConfig)
@dataclass(frozen=True)
class RLSKTrainConfig(AgentTraining):
    """`cloudsim train rlsk`: the DQN's settings (`RLSKConfig`'s), the federation, the sequences, and where it
    writes."""

    out: str = option("rlsk-run", "--out", "folder for policy.pt, the state to resume from (model.zip, "
                      "replay.pkl), config.json and the log (log.csv, log.jsonl)", metavar="DIR")
    save_every: int = option(5, "--save-every", "epochs between checkpoints", parse=whole, metavar="N")

    agent_name = "rlsk"
    length = "timesteps"
    progress_key = "timesteps"
    state_name = "model.zip"

    def check_options(self) -> None:
        from traces.synthetic import load_problem  # the range of loads the rlsk generator draws its sequences at

        problem = load_problem("rlsk", self.load, self.jobs)
        require(problem is None, type(self), "load", self.load, problem)

    def describe_state(self) -> str:
        return "RLSK"


def training_sequences(agent: RLSKConfig):
    """``workload(s)``: the training sequence ``s mod sequences`` (seed 1,000 + that), as RLSK's environment draws."""
    from traces import rlsk_workload

    first = TRAINING_SEEDS[0]

    def workload(seed: int):
        return rlsk_workload(agent.load, agent.jobs, seed=first + seed % agent.sequences, clusters=agent.clusters)

    return workload


def train_rlsk(config: RLSKTrainConfig) -> dict:
    """Train, and return a summary: steps, epochs, wall time, the last epoch's mean total reward, the policy."""
    from agents.rlsk import train  # torch and Stable-Baselines3 are imported only to train

    agent = config.agent
    started = time.perf_counter()
    policy = train(agent, training_sequences(agent), config.out, resume=config.resume,
                   tensorboard=config.tensorboard, progress=config.progress, save_every=config.save_every,
                   device=config.device, **config.thread_count())
    log = Path(config.out) / "log.jsonl"
    last = json.loads(log.read_text().splitlines()[-1]) if log.is_file() and log.stat().st_size else {}
    return {"agent": "rlsk", "timesteps": agent.timesteps, "epochs": last.get("epoch", 0), "policy": str(policy),
            "wall_s": round(time.perf_counter() - started, 3), "last_reward": last.get("reward")}
