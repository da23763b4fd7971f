"""`cloudsim tune`'s options and the search space of its trials, and the checks of a search resumed in its
folder (`TuneConfig.finished_trials`): made before anything runs, as a training's are."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from agents.deepk8s.config import Deepk8sConfig, shipped_checkpoint
from cloudsim.run.output import parent_problem, place_problem
from traces.deepk8s import DEFAULT_TASKS
from cloudsim.run.config.fields import (ConfigError, check_positive_whole, index_range, option, require, span_text,
                                        whole)
from cloudsim.run.config.training import (SEARCH_FOLDER, check_device, check_resumed_length, check_resumed_run,
                                          check_threads, device_option, held_training, threads_option)
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
    device: str = device_option()
    threads: int | None = threads_option()
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    space: dict = field(default_factory=lambda: dict(DEEPK8S_SPACE))
    base: dict = field(default_factory=dict)  # fixed Deepk8sConfig settings of every trial (tests make them small)

    def __post_init__(self) -> None:
        cls = type(self)
        require(self.out is not None, cls, "out", None, "give the search folder: --out DIR")
        settings = [f.name for f in dataclasses.fields(Deepk8sConfig)]
        unknown = [name for name in {**self.space, **self.base} if name not in settings]
        if unknown:  # a space names its settings as text: a misspelt one would fail only once a trial ran
            raise ValueError(f"TuneConfig: {', '.join(map(repr, unknown))} is no setting of Deepk8sConfig; a search's "
                             f"space and base set its settings: {', '.join(settings)}")
        check_device(self.device)
        check_threads(self.threads)
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
        if not self.overwrite:
            self.finished_trials()  # a resumed search: checked now, before anything runs

    @property
    def init_path(self) -> str:
        return self.init if self.init is not None else str(shipped_checkpoint("dagger"))

    @property
    def init_text(self) -> str | None:
        """--init as a trial records it: None for the shipped DAgger policy (the default), else the file's
        resolved path, so that a resumed search started from the same file, named from anywhere, compares equal."""
        path = Path(self.init_path).resolve()
        return None if path == shipped_checkpoint("dagger").resolve() else str(path)

    def made_with(self) -> dict[str, str | None]:
        """What a trial records of the options that make it, beside its settings, seeds and tasks (by option, as
        typed: `cloudsim.run.config.training.check_resumed_run`)."""
        return {"--init": self.init_text, "--seed": str(self.seed)}

    def finished_trials(self) -> list[dict]:
        """The trials finished in --out (none when it is new, or with --overwrite), checked: a folder of other
        files (a training among them, named) is no search; a damaged trial, one of another search space, of other
        validation sequences or made with another --init or --seed is refused, as are fewer --trials than are
        finished. Each is a dict of ``trials/N.json``, in the order of N."""
        out = Path(self.out)
        if self.overwrite or not out.is_dir():
            return []
        if any(out.iterdir()) and not (out / SEARCH_FOLDER).is_dir():
            held = held_training(out)
            if held is not None:
                raise ConfigError("--out", self.out, f"holds {held}, not a search; give a new folder (`"
                                  f"{held.resume_command(self.out)}` continues it)")
            raise ConfigError("--out", self.out, "holds files that are not a search's; give a new folder, or "
                              "--overwrite to replace it")
        done = []
        for path in sorted((p for p in (out / SEARCH_FOLDER).glob("*.json") if p.stem.isdigit()),
                           key=lambda p: int(p.stem)):
            try:
                trial = json.loads(path.read_text())
                trial["params"], trial["value"], trial["policy"], trial["wall_s"]
            except (ValueError, KeyError, TypeError) as error:
                raise ConfigError("--out", self.out, f"{path} is damaged ({type(error).__name__}: {error}); delete "
                                  f"it to run that trial again") from None
            if set(trial["params"]) != set(self.space):
                raise ConfigError("--out", self.out, f"{path} is a trial of another search (settings "
                                  f"{', '.join(trial['params'])}); give a new folder, or --overwrite")
            # A trial's value means its mean over the validation sequences it was scored on: one search, one set.
            if "seeds" not in trial or "tasks" not in trial:
                raise ConfigError("--out", self.out, f"{path} does not say which validation sequences scored it "
                                  f"(an earlier cloudsim wrote it); give a new folder, or --overwrite")
            seeds = tuple(trial["seeds"])  # a JSON list
            if (seeds, trial["tasks"]) != (tuple(self.seeds), self.tasks):
                raise ConfigError("--seeds", span_text(self.seeds), f"the search in {self.out} scored its trials on "
                                  f"seeds {span_text(seeds)} of {trial['tasks']} tasks; resume it with --seeds "
                                  f"{span_text(seeds)} --tasks {trial['tasks']}, or give a new folder")
            # ...and the --init its training started from and its --seed (a trial from before cloudsim recorded
            # them is taken as it is).
            made = {flag: trial[key] for flag, key in (("--init", "init"), ("--seed", "seed")) if key in trial}
            check_resumed_run(self.out, {flag: None if value is None else str(value) for flag, value in made.items()},
                              self.made_with(), what="search")
            done.append(trial)
        check_resumed_length(self.out, "--trials", self.trials, len(done), "trials", what="search")
        return done
