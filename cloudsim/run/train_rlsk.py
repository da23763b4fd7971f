"""`train_rlsk`: `cloudsim train rlsk`, RLSK's DQN trained on a fixed set of RLSK job sequences.

The agent's hyper-parameters are `agents.rlsk_config.RLSKConfig`'s;
`RLSKTrainConfig` holds the ones the command line sets, each defaulting to the
agent's own value, and where the run writes. The training sequences are
`traces.rlsk_workload` of seeds 1,000 .. 1,000 + sequences - 1 (from
`cloudsim.envs.TRAINING_SEEDS`' range), so held-out evaluations
(``cloudsim compare rlsk --seeds 0:20``) never meet a training sequence.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from agents.rlsk_config import RLSKConfig
from cloudsim.envs import TRAINING_SEEDS
from cloudsim.run.config import ConfigError
from cloudsim.run.config.fields import option, real, whole
from cloudsim.run.config.training import (
    check_agent_settings, check_resumed_settings, check_training_folder, check_training_numbers,
    saved_agent_config, training_agent_config
)
from cloudsim.run.config.training import DEVICE_HELP, DEVICES, check_device

__all__ = ["RLSKTrainConfig", "train_rlsk", "training_sequences"]

AGENT_DEFAULTS = RLSKConfig()


def _steps(text: str) -> tuple[int, int]:
    """``LOW:HIGH`` (or ``LOW,HIGH``, as the help shows defaults) whole steps; ``5`` alone is 5:5."""
    low, _, high = text.replace(",", ":").partition(":")
    return whole(low), whole(high or low)


@dataclass(frozen=True)
class RLSKTrainConfig:
    """`cloudsim train rlsk`: the DQN's main settings, the federation, the sequences, and where it writes."""

    out: str = option("rlsk-run", "--out", "folder for policy.pt, the state to resume from (model.zip, "
                      "replay.pkl), config.json and the log (log.csv, log.jsonl)", metavar="DIR")
    resume: bool = option(False, "--resume", "continue the training saved in --out", switch=True)
    timesteps: int = option(AGENT_DEFAULTS.timesteps, "--timesteps", "dispatch decisions in all (counting those a "
                            "resumed run already made)", parse=whole, metavar="N")
    envs: int = option(AGENT_DEFAULTS.envs, "--envs", "environments stepped together", parse=whole, metavar="N")
    learning_rate: float = option(AGENT_DEFAULTS.learning_rate, "--learning-rate", "Adam's step size", parse=real,
                                  metavar="LR")
    discount: float = option(AGENT_DEFAULTS.discount, "--discount", "gamma of the Q-learning target, per decision",
                             parse=real, metavar="G")
    target_update: int = option(AGENT_DEFAULTS.target_update, "--target-update", "C: steps between copies of Q "
                                "into the target network", parse=whole, metavar="C")
    buffer_size: int = option(AGENT_DEFAULTS.buffer_size, "--buffer-size", "N: the replay memory's capacity",
                              parse=whole, metavar="N")
    exploration_fraction: float = option(AGENT_DEFAULTS.exploration_fraction, "--exploration-fraction",
                                         "share of the steps over which epsilon falls to its final value",
                                         parse=real, metavar="F")
    load: float = option(AGENT_DEFAULTS.load, "--load", "the training sequences' load (0.7 = 70 %% of the "
                         "clusters' capacity)", parse=real, metavar="LOAD")
    jobs: int = option(AGENT_DEFAULTS.jobs, "--jobs", "jobs per training sequence", parse=whole, metavar="N")
    sequences: int = option(AGENT_DEFAULTS.sequences, "--sequences", "training sequences; an epoch is one "
                            "episode per sequence", parse=whole, metavar="N")
    clusters: int = option(AGENT_DEFAULTS.clusters, "--clusters", "M, the clusters", parse=whole, metavar="M")
    nodes: int = option(AGENT_DEFAULTS.nodes, "--nodes", "nodes per cluster (1: a cluster is one resource pool)",
                        parse=whole, metavar="N")
    postpone: tuple[int, int] = option(AGENT_DEFAULTS.postpone, "--postpone", "LOW:HIGH, whole steps a postponed "
                                       "job stays away (uniform)", parse=_steps, metavar="LOW:HIGH")
    alpha: float = option(AGENT_DEFAULTS.alpha, "--alpha", "eq. 4's weight of Util", parse=real, metavar="A")
    beta: float = option(AGENT_DEFAULTS.beta, "--beta", "eq. 4's weight of DiffCluster (eq. 7)", parse=real,
                         metavar="B")
    gamma: float = option(AGENT_DEFAULTS.gamma, "--gamma", "eq. 4's weight of DiffRes (eq. 8)", parse=real,
                          metavar="C")
    seed: int = option(AGENT_DEFAULTS.seed, "--seed", "seeds the network, exploration and the environments",
                       parse=whole, metavar="N")
    save_every: int = option(5, "--save-every", "epochs between checkpoints", parse=whole, metavar="N")
    device: str = option("auto", "--device", DEVICE_HELP, choices=DEVICES)
    tensorboard: bool = option(False, "--tensorboard", "also write the log as TensorBoard events in --out "
                               "(needs the tensorboard package)", switch=True)
    progress: bool = True
    given: frozenset[str] = frozenset()  # the agent settings the user chose, which a resume must match

    def __post_init__(self) -> None:
        check_training_numbers(self.save_every, self.seed)
        check_device(self.device)
        low, high = self.postpone
        if not 1 <= low <= high:
            raise ConfigError("--postpone", f"{low}:{high}", "write LOW:HIGH, whole steps with 1 <= LOW <= HIGH")
        check_agent_settings(self)
        check_training_folder(self.out, resume=self.resume, state=self.state_file, what="RLSK")
        if self.resume:
            check_resumed_settings(self.given, self.saved_agent, self, length="timesteps")

    @property
    def state_file(self) -> Path:
        """The file a resumed training starts from; until it exists the folder holds nothing to resume."""
        return Path(self.out) / "model.zip"

    @property
    def saved_agent(self) -> RLSKConfig:
        """The config of the training saved in ``out`` (its config.json)."""
        return saved_agent_config(self.out, RLSKConfig)

    @property
    def agent(self) -> RLSKConfig:
        """The agent's config: a new training's defaults with the settings given here, or, on --resume,
        the saved training's with the total number of steps given here."""
        return training_agent_config(self, AGENT_DEFAULTS, "timesteps")

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
                   device=config.device)
    log = Path(config.out) / "log.jsonl"
    last = json.loads(log.read_text().splitlines()[-1]) if log.is_file() and log.stat().st_size else {}
    return {"agent": "rlsk", "timesteps": agent.timesteps, "epochs": last.get("epoch", 0), "policy": str(policy),
            "wall_s": round(time.perf_counter() - started, 3), "last_reward": last.get("reward")}
