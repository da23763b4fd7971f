"""`train_deepk8s`: `cloudsim train deepk8s`, the paper's agents trained on Alibaba task sequences.

The agent's hyper-parameters are `agents.deepk8s_config.Deepk8sConfig`'s;
`Deepk8sTrainConfig` holds the ones the command line sets, each defaulting to
the agent's own value, and where the run writes. The training sequences are
`traces.deepk8s_workload` of seeds drawn from `cloudsim.envs.TRAINING_SEEDS`,
so held-out evaluations (``cloudsim compare deepk8s --seeds 0:100``) never
meet a training sequence.
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import dataclass
from pathlib import Path

from agents.checks import is_whole
from agents.deepk8s_config import ALGORITHMS, EXPERTS, NETWORKS, OPTIMIZERS, Deepk8sConfig
from cloudsim.run.config import ConfigError
from cloudsim.run.config.fields import option, real, whole
from cloudsim.run.config.training import (
    check_agent_settings, check_resumed_settings, check_training_folder, check_training_numbers,
    saved_agent_config, training_agent_config
)
from cloudsim.run.config.training import DEVICE_HELP, DEVICES, check_device

__all__ = ["Deepk8sTrainConfig", "train_deepk8s"]

AGENT_DEFAULTS = Deepk8sConfig()


@dataclass(frozen=True)
class Deepk8sTrainConfig:
    """`cloudsim train deepk8s`: which algorithm, its main settings, and where it writes."""

    algo: str = option("ppo", "--algo", "ppo (clipped objective, masked), a2c (synchronous A3C) or dagger "
                       "(imitation of SJF)", choices=ALGORITHMS)
    out: str = option("deepk8s-run", "--out", "folder for policy.pt, the state to resume from, config.json and "
                      "the log (log.csv, log.jsonl)", metavar="DIR")
    network: str = option(AGENT_DEFAULTS.network, "--network", "pairs (every slot-machine pair scored by shared "
                          "weights: runs on any number of machines) or flat (the paper's MLP over the whole state: "
                          "only on the training cluster's machine count)", choices=NETWORKS)
    resume: bool = option(False, "--resume", "continue the training saved in --out", switch=True)
    iterations: int = option(AGENT_DEFAULTS.iterations, "--iterations", "training iterations (in all, counting "
                             "those a resumed run already did)", parse=whole, metavar="N")
    envs: int = option(AGENT_DEFAULTS.envs, "--envs", "parallel environments (PPO, A2C)", parse=whole, metavar="N")
    steps_per_env: int = option(AGENT_DEFAULTS.steps_per_env, "--steps-per-env", "rollout steps per environment "
                                "and iteration (PPO, A2C)", parse=whole, metavar="N")
    learning_rate: float = option(AGENT_DEFAULTS.learning_rate, "--learning-rate", "the optimiser's learning rate",
                                  parse=real, metavar="LR")
    optimizer: str = option(AGENT_DEFAULTS.optimizer, "--optimizer", "adam, or sgd (the paper's)",
                            choices=OPTIMIZERS)
    entropy: float = option(AGENT_DEFAULTS.entropy, "--entropy", "weight of the entropy bonus (beta)", parse=real,
                            metavar="BETA")
    tasks: int = option(AGENT_DEFAULTS.tasks, "--tasks", "tasks per training sequence", parse=whole, metavar="N")
    expert: str = option(AGENT_DEFAULTS.expert, "--expert", "DAgger's expert: sjf (the paper's) or oracle (the "
                         "rollout oracle, which knows the whole sequence: about 15-30 s of labelling a sequence of 250 "
                         "tasks, kept in DIR/oracle-labels)", choices=EXPERTS)
    dagger_episodes: int = option(AGENT_DEFAULTS.dagger_episodes, "--dagger-episodes", "episodes the learner plays "
                                  "per DAgger iteration", parse=whole, metavar="N")
    workers: int = option(1, "--workers", "processes labelling DAgger's episodes with --expert oracle (the labels, "
                          "and so the training, are the same for any number)", parse=whole, metavar="N")
    seed: int = option(AGENT_DEFAULTS.seed, "--seed", "seeds the networks, environments and sequence draws",
                       parse=whole, metavar="N")
    init: str | None = option(None, "--init", "a trained policy.pt whose actor starts a PPO or A2C training "
                              "(e.g. DAgger's: imitation, then reinforcement)", metavar="PATH")
    save_every: int = option(10, "--save-every", "iterations between checkpoints", parse=whole, metavar="N")
    device: str = option("auto", "--device", DEVICE_HELP, choices=DEVICES)
    tensorboard: bool = option(False, "--tensorboard", "also write the log as TensorBoard events in --out "
                               "(needs the tensorboard package)", switch=True)
    progress: bool = True
    given: frozenset[str] = frozenset()  # the agent settings the user chose, which a resume must match

    def __post_init__(self) -> None:
        check_training_numbers(self.save_every, self.seed)
        check_device(self.device)
        check_agent_settings(self)
        if self.algo != "dagger":
            for name, flag in (("expert", "--expert"), ("dagger_episodes", "--dagger-episodes")):
                if name in self.given:
                    raise ConfigError(flag, getattr(self, name), "applies to DAgger; add --algo dagger")
        if not (is_whole(self.workers) and self.workers >= 1):
            raise ConfigError("--workers", self.workers, "must be a whole number >= 1")
        if self.workers > 1 and self.agent.expert != "oracle":
            raise ConfigError("--workers", self.workers, "label DAgger's episodes with the oracle in parallel; add "
                              "--algo dagger --expert oracle, or leave --workers out")
        if self.init is not None:
            if self.algo == "dagger":
                raise ConfigError("--init", self.init, "starts a PPO or A2C training; DAgger starts from scratch")
            if not Path(self.init).is_file():
                raise ConfigError("--init", self.init, "no such file; give a policy.pt from cloudsim train deepk8s")
        check_training_folder(self.out, resume=self.resume, state=self.state_file, what=self.algo,
                              reads={"--init": self.init})
        if self.resume:
            check_resumed_settings(self.given, self.saved_agent, self)

    @property
    def state_file(self) -> Path:
        """The file a resumed training starts from; until it exists the folder holds nothing to resume."""
        return Path(self.out) / ("dagger.pt" if self.algo == "dagger" else "model.zip")

    @property
    def saved_agent(self) -> Deepk8sConfig:
        """The config of the training saved in ``out`` (its config.json)."""
        return saved_agent_config(self.out, Deepk8sConfig)

    @property
    def agent(self) -> Deepk8sConfig:
        """The agent's config: a new training's defaults with the settings given here, or, on --resume,
        the saved training's with the total number of iterations given here."""
        return training_agent_config(self, AGENT_DEFAULTS, "iterations")

def train_deepk8s(config: Deepk8sTrainConfig) -> dict:
    """Train, and return a summary: the algorithm, iterations, wall time, the last logged reward, the policy."""
    from agents.deepk8s import train  # torch and Stable-Baselines3 are imported only to train
    from traces import deepk8s_workload

    agent = config.agent
    started = time.perf_counter()
    policy = train(agent, functools.partial(deepk8s_workload, tasks=agent.tasks), config.out, resume=config.resume,
                   tensorboard=config.tensorboard, progress=config.progress, save_every=config.save_every,
                   device=config.device, workers=config.workers)
    log = Path(config.out) / "log.jsonl"
    last = json.loads(log.read_text().splitlines()[-1]) if log.is_file() and log.stat().st_size else {}
    return {"agent": "deepk8s", "algo": agent.algo, "iterations": agent.iterations, "policy": str(policy),
            "wall_s": round(time.perf_counter() - started, 3), "last_reward": last.get("reward")}
