"""`train_deepk8s`: `cloudsim train deepk8s`, the paper's agents trained on Alibaba task sequences.

The agent's hyper-parameters are `agents.deepk8s.config.Deepk8sConfig`'s; `Deepk8sTrainConfig` is the
run's options with those settings added (`with_agent_settings`), and `train_deepk8s` runs it
(through `cloudsim.run.train.train`, as every `cloudsim train AGENT`). The training sequences are
`traces.deepk8s_workload` of seeds drawn from `cloudsim.engine.envs.TRAINING_SEEDS`,
so held-out evaluations (``cloudsim compare deepk8s --seeds 0:100``) never
meet a training sequence.
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import dataclass
from pathlib import Path

from agents.deepk8s.config import LOOK_AHEADS, Deepk8sConfig
from cloudsim.run.config import ConfigError
from cloudsim.run.config.fields import check_number_option, option, whole
from cloudsim.run.config.training import AgentTraining, with_agent_settings

__all__ = ["Deepk8sTrainConfig", "train_deepk8s"]


@with_agent_settings(Deepk8sConfig)
@dataclass(frozen=True)
class Deepk8sTrainConfig(AgentTraining):
    """`cloudsim train deepk8s`: which algorithm and its settings (`Deepk8sConfig`'s), and where it writes."""

    out: str = option("deepk8s-run", "--out", "folder for policy.pt, the state to resume from, config.json and "
                      "the log (log.csv, log.jsonl)", metavar="DIR")
    workers: int = option(1, "--workers", "processes labelling DAgger's episodes with --expert oracle or online (the "
                          "labels, and so the training, are the same for any number)", parse=whole, metavar="N")

    agent_name = "deepk8s"
    reads = ("init",)

    def check_options(self) -> None:
        if self.trained_algo != "dagger":
            for name, flag in (("expert", "--expert"), ("dagger_episodes", "--dagger-episodes"),
                               ("dagger_updates", "--dagger-updates")):
                if name in self.given:
                    raise ConfigError(flag, getattr(self, name), "applies to DAgger; add --algo dagger")
        check_number_option("--workers", self.workers, whole=True, at_least=1)
        if self.workers > 1 and self.agent.expert not in LOOK_AHEADS:
            raise ConfigError("--workers", self.workers, "label DAgger's episodes with a look-ahead in parallel; add "
                              "--algo dagger --expert oracle (or online), or leave --workers out")
        if self.init is not None:
            if self.trained_algo == "dagger":
                raise ConfigError("--init", self.init, "starts a PPO or A2C training; DAgger starts from scratch")
            if not Path(self.init).is_file():
                raise ConfigError("--init", self.init, "no such file; give a policy.pt from cloudsim train deepk8s")

    @property
    def asked_kind(self) -> str | None:
        """--algo, where it was given (on the command line, or as another value than the default)."""
        return self.algo if "algo" in self.given or self.algo != self.agent_defaults.algo else None

    @property
    def trained_algo(self) -> str:
        """The algorithm this run trains: --algo, or on --resume without it the folder's."""
        held = self.held if self.resume and self.asked_kind is None else None
        return held.kind if held is not None and held.continues(self.agent_name) and held.kind else self.algo

    def describe_state(self) -> str:
        return self.trained_algo

    @property
    def state_file(self) -> Path:
        return Path(self.out) / ("dagger.pt" if self.trained_algo == "dagger" else "model.zip")


def train_deepk8s(config: Deepk8sTrainConfig) -> dict:
    """Train, and return a summary: the algorithm, iterations, wall time, the last logged reward, the policy."""
    from agents.deepk8s import train  # torch and Stable-Baselines3 are imported only to train
    from traces import deepk8s_workload

    agent = config.agent
    started = time.perf_counter()
    policy = train(agent, functools.partial(deepk8s_workload, tasks=agent.tasks), config.out, resume=config.resume,
                   tensorboard=config.tensorboard, progress=config.progress, save_every=config.save_every,
                   device=config.device, workers=config.workers, **config.thread_count())
    log = Path(config.out) / "log.jsonl"
    last = json.loads(log.read_text().splitlines()[-1]) if log.is_file() and log.stat().st_size else {}
    return {"agent": "deepk8s", "algo": agent.algo, "iterations": agent.iterations, "policy": str(policy),
            "wall_s": round(time.perf_counter() - started, 3), "last_reward": last.get("reward")}
