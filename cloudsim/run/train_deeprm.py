"""`train_deeprm`: `cloudsim train deeprm|deeprm-plus`, DeepRM and DeepRM_Plus trained by REINFORCE
in DeepRM's own environment.

The agent's hyper-parameters are `agents.deeprm_config.DeepRMConfig`'s;
`DeepRMTrainConfig` holds the ones the command line sets, each defaulting to
the agent's own value, and where the run writes; `DeepRMPlusTrainConfig` is the
same with DeepRM_Plus's defaults (Table I's CNN, SJF cloned first, its Poisson
workload at 140 %). Training jobsets are drawn
from seed `TRAINING_JOBSET_SEED` (1000), held-out evaluations use single
jobsets of seeds below it (``cloudsim compare deeprm --env deeprm --seeds 0:100``).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from agents.deeprm_config import DeepRMConfig
from cloudsim.envs.deeprm import ARRIVALS, MODES, OBJECTIVES
from cloudsim.run.config import ConfigError
from cloudsim.run.config.fields import option, real, whole
from cloudsim.run.config.training import (
    check_resumed_settings, check_training_folder, check_training_numbers, saved_agent_config,
    training_agent_config
)
from cloudsim.run.config.training import DEVICE_HELP, DEVICES, check_device

__all__ = ["DeepRMTrainConfig", "DeepRMPlusTrainConfig", "train_deeprm", "PLUS_DEFAULTS"]

AGENT_DEFAULTS = DeepRMConfig()
PLUS_DEFAULTS = DeepRMConfig(network="cnn", workload="poisson", load=1.4, jobsets=25, episodes=5, iterations=300,
                             learning_rate=1e-4, clone_jobsets=200, clone_epochs=20)
"""DeepRM_Plus: section V-B's 25 jobsets at 140 %; 5 episodes per jobset and 300 iterations keep a training
within hours on two cores (the CNN's step costs 100 times the dense network's); rmsprop at 1e-4 moves the
cloned weights gently (the paper gives neither)."""
FLAGS = {"mode": "--sizes", "workload": "--arrivals"}  # the agent settings whose flag is not their name


@dataclass(frozen=True)
class DeepRMTrainConfig:
    """`cloudsim train deeprm`: the objective, load and sizes of training, and where it writes."""

    out: str = option("deeprm-run", "--out", "folder for policy.pt (also the state to resume from), config.json "
                      "and the log (log.csv, log.jsonl)", metavar="DIR")
    resume: bool = option(False, "--resume", "continue the training saved in --out", switch=True)
    objective: str = option(AGENT_DEFAULTS.objective, "--objective", "the reward: slowdown (-sum 1/len), "
                            "completion (-jobs in the system) or makespan (-1 while jobs remain)",
                            choices=OBJECTIVES)
    load: float = option(AGENT_DEFAULTS.load, "--load", "expected load per resource of the training jobsets "
                         "(0.7 = 70 %%)", parse=real, metavar="X")
    workload: str = option(AGENT_DEFAULTS.workload, "--arrivals", "bernoulli (DeepRM's jobsets: 50 steps, at most "
                           "one arrival per step) or poisson (DeepRM_Plus's: 5-50 jobs, Poisson arrivals)",
                           choices=ARRIVALS)
    mode: str = option(AGENT_DEFAULTS.mode, "--sizes", "job sizes: code (the published code's, loads up to 184 %%) "
                       "or paper (section 4.1's, loads up to 92 %%)", choices=MODES)
    slots: int = option(AGENT_DEFAULTS.slots, "--slots", "M, the visible job slots", parse=whole, metavar="M")
    jobsets: int = option(AGENT_DEFAULTS.jobsets, "--jobsets", "training jobsets", parse=whole, metavar="N")
    episodes: int = option(AGENT_DEFAULTS.episodes, "--episodes", "episodes per jobset and iteration (N)",
                           parse=whole, metavar="N")
    iterations: int = option(AGENT_DEFAULTS.iterations, "--iterations", "training iterations (in all, counting "
                             "those a resumed run already did)", parse=whole, metavar="N")
    learning_rate: float = option(AGENT_DEFAULTS.learning_rate, "--learning-rate", "rmsprop's learning rate",
                                  parse=real, metavar="LR")
    seed: int = option(AGENT_DEFAULTS.seed, "--seed", "seeds the network and the action sampler", parse=whole,
                       metavar="N")
    fresh_jobsets: bool = option(AGENT_DEFAULTS.fresh_jobsets, "--fresh-jobsets", "draw the --jobsets afresh every "
                                 "iteration (from seeds above the training seed) instead of training on one fixed set",
                                 switch=True)
    save_every: int = option(10, "--save-every", "iterations between checkpoints", parse=whole, metavar="N")
    device: str = option("auto", "--device", DEVICE_HELP, choices=DEVICES)
    keep_every: int = option(0, "--keep-every", "also keep every Nth iteration's checkpoint as policy-NNNNN.pt, to "
                             "choose one on validation jobsets afterwards (default 0: keep only the last)",
                             parse=whole, metavar="N")
    tensorboard: bool = option(False, "--tensorboard", "also write the log as TensorBoard events in --out "
                               "(needs the tensorboard package)", switch=True)
    progress: bool = True
    given: frozenset[str] = frozenset()  # the agent settings the user chose, which a resume must match

    def __post_init__(self) -> None:
        check_training_numbers(self.save_every, self.seed)
        check_device(self.device)
        if self.keep_every < 0:
            raise ConfigError("--keep-every", self.keep_every, "must be a whole number >= 0 (0 keeps only the last "
                              "checkpoint)")
        if not self.resume:
            try:
                self.agent
            except ValueError as err:
                text = str(err)
                name = text.split(" ", 1)[0].removeprefix("DeepRMConfig.")
                flag = FLAGS.get(name, f"--{name.replace('_', '-')}")
                if "load" in text and "out of reach" in text:
                    flag, name = "--load", "load"
                raise ConfigError(flag, getattr(self, name, None), text) from None
        check_training_folder(self.out, resume=self.resume, state=self.state_file, what="DeepRM")
        if self.resume:
            network = self.saved_agent.network
            if network != self.agent_defaults.network:  # deeprm's folder resumed as deeprm-plus, or the reverse
                held = "deeprm-plus" if network == "cnn" else "deeprm"
                raise ConfigError("--resume", self.out, f"holds a {held} training, not {self.agent_name}; resume it "
                                  f"with `cloudsim train {held} --out {self.out} --resume`, or give another folder")
            check_resumed_settings(self.given, self.saved_agent, self, FLAGS)

    agent_defaults = AGENT_DEFAULTS  # class attribute, not a field: the agent this command trains
    agent_name = "deeprm"

    @property
    def state_file(self) -> Path:
        """The file a resumed training starts from; until it exists the folder holds nothing to resume."""
        return Path(self.out) / "policy.pt"

    @property
    def saved_agent(self) -> DeepRMConfig:
        """The config of the training saved in ``out`` (its config.json)."""
        return saved_agent_config(self.out, DeepRMConfig)

    @property
    def agent(self) -> DeepRMConfig:
        """A new training's config (defaults with the settings given here) or, on --resume, the saved
        training's with the total number of iterations given here."""
        return training_agent_config(self, self.agent_defaults, "iterations")

@dataclass(frozen=True)
class DeepRMPlusTrainConfig(DeepRMTrainConfig):
    """`cloudsim train deeprm-plus`: DeepRM_Plus's defaults, and how many jobsets SJF is cloned on."""

    agent_defaults = PLUS_DEFAULTS
    agent_name = "deeprm-plus"

    out: str = option("deeprm-plus-run", "--out", "folder for policy.pt (also the state to resume from), "
                      "config.json, clone.json (the cloning's test accuracy) and the log", metavar="DIR")
    load: float = option(PLUS_DEFAULTS.load, "--load", "expected load per resource (1.4 = the paper's 140 %%, "
                         "a Poisson rate of 0.76 jobs per step)", parse=real, metavar="X")
    workload: str = option(PLUS_DEFAULTS.workload, "--arrivals", "poisson (DeepRM_Plus's jobsets: 5-50 jobs) or "
                           "bernoulli (DeepRM's)", choices=ARRIVALS)
    jobsets: int = option(PLUS_DEFAULTS.jobsets, "--jobsets", "training jobsets", parse=whole, metavar="N")
    episodes: int = option(PLUS_DEFAULTS.episodes, "--episodes", "episodes per jobset and iteration",
                           parse=whole, metavar="N")
    iterations: int = option(PLUS_DEFAULTS.iterations, "--iterations", "REINFORCE iterations after cloning",
                             parse=whole, metavar="N")
    learning_rate: float = option(PLUS_DEFAULTS.learning_rate, "--learning-rate", "rmsprop's learning rate",
                                  parse=real, metavar="LR")
    clone_jobsets: int = option(PLUS_DEFAULTS.clone_jobsets, "--clone-jobsets", "jobsets on which SJF's "
                                "state-action pairs are collected (Algorithm 2); 0 skips cloning",
                                parse=whole, metavar="N")
    clone_accuracy: float = option(PLUS_DEFAULTS.clone_accuracy, "--clone-accuracy", "cloning stops once the "
                                   "test accuracy passes this", parse=real, metavar="X")
    clone_epochs: int = option(PLUS_DEFAULTS.clone_epochs, "--clone-epochs", "cloning stops after this many epochs",
                               parse=whole, metavar="N")


def train_deeprm(config: DeepRMTrainConfig) -> dict:
    """Train, and return a summary: iterations, wall time, the last logged rewards and slowdown, the policy."""
    from agents.deeprm import train  # torch is imported only to train

    agent = config.agent
    started = time.perf_counter()
    policy = train(agent, config.out, resume=config.resume, tensorboard=config.tensorboard,
                   progress=config.progress, save_every=config.save_every, keep_every=config.keep_every,
                   device=config.device)
    log = Path(config.out) / "log.jsonl"
    last = json.loads(log.read_text().splitlines()[-1]) if log.is_file() and log.stat().st_size else {}
    clone = Path(config.out) / "clone.json"
    cloned = json.loads(clone.read_text()) if clone.is_file() else {}
    return {"agent": config.agent_name, "objective": agent.objective, "load": agent.load, "iterations": agent.iterations,
            "policy": str(policy), "wall_s": round(time.perf_counter() - started, 3),
            "mean_reward": last.get("mean_reward"), "max_reward": last.get("max_reward"),
            "mean_slowdown": last.get("mean_slowdown"),
            **({"clone_test_accuracy": cloned["test_accuracy"][-1]} if cloned.get("test_accuracy") else {})}
