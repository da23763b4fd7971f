"""What every `cloudsim train AGENT` configuration shares: the run's options and checks, the agent's settings.

A training command's config is `AgentTraining` (where and how the run writes: --out, --resume,
--save-every, --device, --threads, --tensorboard, and the checks of the folder and of a resume) with the agent's
own settings added by `with_agent_settings`: the fields of its config dataclass made with
`agents.settings.setting`, their help and flags declared there once. The command line is generated from
the result (`cloudsim.cli.options.add_section`), and its ``agent`` property is the agent config the
training runs.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping

# (agents.kit imports torch only inside the functions that need it)
from agents.kit import DEVICES, TRAINING_THREADS, changed_settings
from cloudsim.run.output import parent_problem, place_problem
from cloudsim.run.config.fields import ConfigError, is_whole, option, options_of, whole, whole_pair

def check_training_numbers(save_every: object, seed: object) -> None:
    """A training's --save-every (>= 1) and --seed (>= 0), as whole numbers."""
    for flag, value, low in (("--save-every", save_every, 1), ("--seed", seed, 0)):
        if not (is_whole(value) and value >= low):
            raise ConfigError(flag, value, f"must be a whole number >= {low}")


TRAINING_RUN_FIELDS = frozenset({"out", "resume", "tensorboard", "save_every", "keep_every", "device", "threads",
                                 "progress", "given", "workers"})
"""Fields of a `cloudsim train AGENT` config that say where and how the run writes, not what the agent is.
Kept for the import path `cloudsim.run.config.TRAINING_RUN_FIELDS` of cloudsim 0.1.0 only: the commands tell
the agent's settings from the run's options by `agent_setting_names`, which no list has to follow."""


LOG_FILES = ("log.csv", "log.jsonl")
"""The log every training writes into its folder (`agents.kit.TrainingLog`)."""

DEVICE_HELP = ("where the network's updates run: auto (a CUDA GPU when torch sees one, else the CPU), cpu or cuda; "
               "rollouts stay on the CPU, checkpoints load on either (default auto)")


THREADS_HELP = ("torch's CPU threads: the count changes a training's numbers, so it is fixed rather than the core "
                "count; more can be faster where there are cores, and give other numbers (default: the agent's own on "
                "every machine, " + ", ".join(f"{count} for {name}" for name, count in TRAINING_THREADS.items())
                + ")")


def check_threads(threads: int | None) -> None:
    """--threads: a whole number >= 1, or not given (the agent's own count)."""
    if threads is not None and not (is_whole(threads) and threads >= 1):
        raise ConfigError("--threads", threads, "must be a whole number >= 1")


def check_device(device: str) -> None:
    """``--device cuda`` needs a torch that sees a GPU: one line saying so otherwise, before anything is written
    (torch is imported only for that check)."""
    if device == "cuda":
        from agents.kit import training_device
        try:
            training_device(device)
        except ValueError as err:
            raise ConfigError("--device", device, str(err).split(": ", 1)[1]) from None


def saved_agent_config(out: str, agent_type: type) -> Any:
    """The agent config (an ``agent_type``) of the training saved in ``out``, from its config.json
    (lists read back as tuples); a `ConfigError` on --resume when the file is missing or damaged."""
    path = Path(out) / "config.json"
    try:
        saved = json.loads(path.read_text())
        return agent_type(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved.items()})
    except (OSError, ValueError, TypeError) as err:
        raise ConfigError("--resume", out, f"{path} is missing or damaged ({err}); start a new training "
                          "in another folder") from None


def training_agent_config(command: Any, defaults: Any, length: str) -> Any:
    """The agent config a `cloudsim train AGENT` config ``command`` asks for: ``defaults`` with the agent
    settings it holds, or, on --resume, the saved training's (``command.saved_agent``) with the
    training's length (its field ``length``: iterations or timesteps) given here; a resume that does not
    give it (on the command line, or as another value than the default) goes on to the saved length."""
    if command.resume:
        saved = command.saved_agent
        chosen = getattr(command, length)
        if length not in command.given and chosen == getattr(defaults, length):
            return saved
        return dataclasses.replace(saved, **{length: chosen})
    return dataclasses.replace(defaults, **{name: getattr(command, name)
                                            for name in agent_setting_names(type(command))})


def check_agent_settings(command: Any) -> None:
    """A new training's agent config must build: the agent's own check ("NAME must be ...") becomes a
    `ConfigError` naming NAME's option (``--NAME`` where the command has no such option)."""
    if command.resume:
        return
    try:
        command.agent
    except ValueError as err:
        name = str(err).split(" ", 1)[0]
        how = {field: how for field, how, _ in options_of(type(command))}.get(name)
        value = getattr(command, name, None)
        shown = f"{value[0]}:{value[1]}" if how is not None and how.parse is whole_pair else value
        raise ConfigError(how.flag if how else f"--{name.replace('_', '-')}", shown, str(err)) from None


def check_training_folder(out: str, *, resume: bool, state: Path, what: str,
                          reads: Mapping[str, object] | None = None) -> None:
    """Refuse an --out that cannot hold a training: the current folder or one above it, a place inside
    another command's results or around an input (``reads``: option -> path, `place_problem`), a bad
    parent or a file; with --resume, a folder without the ``state`` file of ``what`` training; without it,
    a folder that already holds a trained policy."""
    problem = place_problem(out, reads) or parent_problem(out)
    if problem:
        raise ConfigError("--out", out, problem)
    if Path(out).exists() and not Path(out).is_dir():
        raise ConfigError("--out", out, "is a file; give a folder")
    if resume and not state.is_file():
        raise ConfigError("--resume", out, f"there is no {what} training to resume in it ({state.name} is missing); "
                          "leave out --resume to start one")
    if not resume and (Path(out) / "policy.pt").exists():
        raise ConfigError("--out", out, "already holds a trained policy; add --resume to continue it, or give "
                          "another folder")
    if not resume and any((Path(out) / name).is_file() and (Path(out) / name).stat().st_size for name in LOG_FILES):
        raise ConfigError("--out", out, "already holds a training log; add --resume to continue that training and "
                          "its log, or give another folder")


def check_resumed_settings(given: frozenset[str], saved: Any, current: Any, length: str = "iterations") -> None:
    """Refuse a setting given on --resume (other than the training's length, ``length``: --iterations, or
    --timesteps) that differs from the saved training's; the message names the setting's option in
    ``current``'s command."""
    flags = {name: how.flag for name, how, _ in options_of(type(current))}
    for name in changed_settings(saved, current, sorted(given - {length}))[:1]:
        flag = flags.get(name, f"--{name.replace('_', '-')}")
        raise ConfigError(flag, getattr(current, name), f"differs from the training being resumed "
                          f"({getattr(saved, name)!r}); leave it out to keep the saved value")


@dataclass(frozen=True)
class TrainingRun:
    """The options of every `cloudsim train AGENT`: where it writes, whether it resumes, the device, TensorBoard;
    each agent's command declares its own ``out`` default and help."""

    out: str = option("run", "--out", "folder for policy.pt (also the state to resume from), config.json and the "
                      "log (log.csv, log.jsonl)", metavar="DIR")
    resume: bool = option(False, "--resume", "continue the training saved in --out", switch=True)
    device: str = option("auto", "--device", DEVICE_HELP, choices=DEVICES)
    threads: int | None = option(None, "--threads", THREADS_HELP, parse=whole, metavar="N")
    tensorboard: bool = option(False, "--tensorboard", "also write the log as TensorBoard events in --out "
                               "(needs the tensorboard package)", switch=True)
    given: frozenset[str] = frozenset()  # the agent settings the user chose, which a resume must match

    def check_run_options(self) -> None:
        """--device and --threads, before anything is written (every training's checks of them)."""
        check_device(self.device)
        check_threads(self.threads)

    def thread_count(self) -> dict:
        """``threads=`` for the agent's trainer where --threads was given; else nothing, so its own count holds."""
        return {} if self.threads is None else {"threads": self.threads}


@dataclass(frozen=True)
class AgentTraining(TrainingRun):
    """A `cloudsim train AGENT` run of an agent that trains in its own environment, and the checks every such
    run makes before it starts; `with_agent_settings` adds the agent's own settings as fields.

    Each agent's command subclasses it, declaring its ``out`` default and help, the class attributes below
    and any options of its own (checked in `check_options`)."""

    save_every: int = option(10, "--save-every", "iterations between checkpoints", parse=whole, metavar="N")
    progress: bool = True

    agent_name: ClassVar[str]              # the command's AGENT
    agent_class: ClassVar[type]            # the agent's config dataclass (set by with_agent_settings)
    agent_defaults: ClassVar[Any]          # the defaults a new training starts from (set by with_agent_settings)
    length: ClassVar[str] = "iterations"   # the setting that says how long it trains: a resume may raise it
    state_name: ClassVar[str] = "policy.pt"  # the file a resumed training starts from
    reads: ClassVar[tuple[str, ...]] = ()  # settings that name a file the training reads (kept out of --out)

    def __post_init__(self) -> None:
        check_training_numbers(self.save_every, self.seed)
        self.check_run_options()
        check_agent_settings(self)
        self.check_options()
        check_training_folder(self.out, resume=self.resume, state=self.state_file, what=self.describe_state(),
                              reads={f"--{name}": getattr(self, name) for name in self.reads})
        if self.resume:
            self.check_saved()
            check_resumed_settings(self.given, self.saved_agent, self, length=self.length)

    def check_options(self) -> None:
        """The command's own checks of how its options fit together (none by default)."""

    def check_saved(self) -> None:
        """On --resume, before the settings are compared: the saved training is one this command resumes."""

    def describe_state(self) -> str:
        """What kind of training ``state_file`` holds, as the --resume message names it."""
        return self.agent_name

    @property
    def state_file(self) -> Path:
        """The file a resumed training starts from; until it exists the folder holds nothing to resume."""
        return Path(self.out) / self.state_name

    @property
    def saved_agent(self) -> Any:
        """The config of the training saved in ``out`` (its config.json)."""
        return saved_agent_config(self.out, self.agent_class)

    @property
    def agent(self) -> Any:
        """A new training's agent config (the defaults with the settings given here) or, on --resume, the
        saved training's with the length (``length``) given here."""
        return training_agent_config(self, self.agent_defaults, self.length)


def agent_setting_names(command: type) -> tuple[str, ...]:
    """The fields of a training command's config that are its agent's settings, in order."""
    return tuple(f.name for f in fields(command) if "setting" in f.metadata)


def with_agent_settings(agent: type, defaults: Any = None, leave_out: tuple[str, ...] = ()) -> Callable[[type], type]:
    """A class decorator: the training command's config it decorates (a `TrainingRun`), with every setting of the
    agent config dataclass ``agent`` (its fields made with `agents.settings.setting`, less ``leave_out``) as a
    field and so an option, defaulting to ``defaults``' values (an ``agent`` instance; default: ``agent()``)."""

    def decorate(command: type) -> type:
        start = agent() if defaults is None else defaults
        types = typing.get_type_hints(agent)
        added = [(f.name, types[f.name], dataclasses.field(default=getattr(start, f.name), metadata=f.metadata))
                 for f in fields(agent) if "setting" in f.metadata and f.name not in leave_out]
        made = dataclasses.make_dataclass(command.__name__, added, bases=(command,), frozen=True,
                                          namespace={"agent_class": agent, "agent_defaults": start})
        made.__module__, made.__qualname__, made.__doc__ = command.__module__, command.__qualname__, command.__doc__
        return made

    return decorate
