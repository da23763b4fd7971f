"""`cloudsim tune`'s options and the search space of its trials."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agents.deepk8s_config import shipped_checkpoint
from cloudsim.run.output import parent_problem, place_problem
from traces.deepk8s import DEFAULT_TASKS
from cloudsim.run.config.fields import check_positive_whole, index_range, option, require, span_text, whole
from cloudsim.run.config.training import DEVICE_HELP, DEVICES, check_device
from cloudsim.run.config.sections import RunnerConfig

DEEPK8S_SPACE = {
    "learning_rate": ("log", 1e-5, 3e-4),
    "iterations": ("int", 20, 150, 10),
    "entropy": ("float", 0.0, 0.02),
    "clip": ("float", 0.05, 0.3),
    "epochs": ("int", 2, 8, 1),
    "gae_lambda": ("float", 0.8, 1.0),
    "steps_per_env": ("choice", (128, 256, 512)),
}
"""What a trial may set of `Deepk8sConfig` (PPO from a DAgger actor), each as (kind, bounds): ``log`` a
log-uniform real, ``float`` a uniform real, ``int`` a whole number from low to high by step, ``choice``
one of the values."""


@dataclass(frozen=True)
class TuneConfig:
    """`cloudsim tune deepk8s`: how many trials, scored on which seeds, written where."""

    out: str | None = option(None, "--out", "the search folder: made, or resumed where the same search stopped",
                             metavar="DIR")
    trials: int = option(20, "--trials", "trials in all (finished ones of a resumed search count)", parse=whole,
                         metavar="N")
    seeds: tuple[int, int | None] = option((100, 200), "--seeds", "validation sequences A:B (default 100:200: a "
                                           "hundred, since twenty choose by luck); keep them apart from the seeds "
                                           "you report", parse=index_range, metavar="A:B")
    tasks: int = option(DEFAULT_TASKS, "--tasks", "tasks per training and validation sequence",
                        parse=whole, metavar="N")
    init: str | None = option(None, "--init", "the DAgger policy.pt whose actor every trial starts from (default "
                              "the shipped deepk8s-dagger)", metavar="PATH")
    seed: int = option(0, "--seed", "seeds the sampler and every trial's training", parse=whole, metavar="N")
    overwrite: bool = option(False, "--overwrite", "start the search folder afresh instead of resuming it",
                             switch=True)
    device: str = option("auto", "--device", DEVICE_HELP, choices=DEVICES)
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    space: dict = field(default_factory=lambda: dict(DEEPK8S_SPACE))
    base: dict = field(default_factory=dict)  # fixed Deepk8sConfig settings of every trial (tests make them small)

    def __post_init__(self) -> None:
        cls = type(self)
        require(self.out is not None, cls, "out", None, "give the search folder: --out DIR")
        check_device(self.device)
        problem = place_problem(self.out, {"--init": self.init}) or parent_problem(self.out)
        require(problem is None, cls, "out", self.out, problem)
        require(not Path(self.out).is_file(), cls, "out", self.out, "is a file; give a folder for the search")
        check_positive_whole(cls, "trials", self.trials, "trials")
        check_positive_whole(cls, "tasks", self.tasks, "tasks per sequence")
        start, stop = self.seeds
        require(start >= 0 and stop is not None and stop > start, cls, "seeds", span_text(self.seeds),
                 "give A:B with 0 <= A < B")
        require(self.init is None or Path(self.init).is_file(), cls, "init", self.init,
                 ("is a folder; give the policy.pt file in it" if self.init is not None and Path(self.init).is_dir()
                  else "no such file; give a DAgger policy.pt from cloudsim train deepk8s --algo dagger"))

    @property
    def init_path(self) -> str:
        return self.init if self.init is not None else str(shipped_checkpoint("dagger"))
