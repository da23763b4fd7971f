"""What every `cloudsim train AGENT` configuration shares: the run's options and checks, the agent's settings.

A training command's config is `AgentTraining` (where and how the run writes: --out, --resume,
--save-every, --device, --threads, --tensorboard, and the checks of the folder and of a resume) with the agent's
own settings added by `with_agent_settings`: the fields of its config dataclass made with
`agents.kit.settings.setting`, their help and flags declared there once. The command line is generated from
the result (`cloudsim.cli.options.add_section`), and its ``agent`` property is the agent config the
training runs.

The checks of a folder and of a resume are written here once, for every agent (DeepJS's `TrainConfig` and
`cloudsim tune` call them too): `held_training` names what a folder holds (which agent's training, or a
search) as the command that continues it, and `check_training_folder` refuses a folder that holds something
else; `check_resumed_run` refuses a resume that asks for another run than the one that made the folder
(`check_resumed_settings`: the agent's settings), and `check_resumed_length` one that asks for fewer
iterations (timesteps, trials) than are done.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
import shlex
import typing
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping

# (agents.kit imports torch only inside the functions that need it)
from agents.kit import DEVICES, TRAINING_THREADS, changed_settings
from agents.kit.settings import SettingProblem
from agents.registry import TrainingSpec, entry_point, training_names, training_spec
from cloudsim.run.output import parent_problem, place_problem
from cloudsim.run.config.fields import (ConfigError, Option, check_number_option, flag_of, index_range, option,
                                        options_of, setting_option, show_value, span_text, time_window, whole,
                                        whole_pair)

def check_training_numbers(save_every: object, seed: object) -> None:
    """A training's --save-every (>= 1) and --seed (>= 0), as whole numbers."""
    for flag, value, low in (("--save-every", save_every, 1), ("--seed", seed, 0)):
        check_number_option(flag, value, whole=True, at_least=low)


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


def device_option() -> Any:
    """``--device``, as every command that trains declares it (`cloudsim train AGENT`, `cloudsim tune`)."""
    return option("auto", "--device", DEVICE_HELP, choices=DEVICES)


def threads_option() -> Any:
    """``--threads``, as every command that trains declares it (None: each agent's own count)."""
    return option(None, "--threads", THREADS_HELP, parse=whole, metavar="N")


def check_threads(threads: int | None) -> None:
    """--threads: a whole number >= 1, or not given (the agent's own count)."""
    if threads is not None:
        check_number_option("--threads", threads, whole=True, at_least=1)


def check_tensorboard(tensorboard: bool) -> None:
    """``--tensorboard`` needs the tensorboard package: one line saying so otherwise, before anything is written
    (not an internal error once the training has started)."""
    if tensorboard and importlib.util.find_spec("tensorboard") is None:
        raise ConfigError("--tensorboard", None, "needs the tensorboard package: pip install tensorboard (or "
                          "leave --tensorboard out: --out still gets log.csv and log.jsonl)")


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
    """The agent config a training runs must build (a new one's settings, a resumed one's length): the agent's
    own check ("NAME must be ...") becomes a `ConfigError` naming NAME's option (``--NAME`` where the command has
    no such option)."""
    try:
        command.agent
    except ConfigError:  # a resumed training's config.json that cannot be read says so itself
        raise
    except ValueError as err:
        name = str(err).split(" ", 1)[0]
        how = {field: how for field, how, _ in options_of(type(command))}.get(name)
        value = getattr(command, name, None)
        shown = f"{value[0]}:{value[1]}" if how is not None and how.parse is whole_pair else value
        raise ConfigError(how.flag if how else f"--{name.replace('_', '-')}", shown, str(err)) from None


SEARCH_FOLDER = "trials"
"""The folder every `cloudsim tune` search keeps its trials in: a folder holding it is a search's."""


@dataclass(frozen=True)
class HeldTraining:
    """What a folder holds, named as the command that made it: a training of ``agent`` (its ``kind``, where the
    agent trains by several algorithms), or a `cloudsim tune` search (``command`` "tune"); ``options``: what the
    command that continues it must say besides --out (DeepJS: its workload, `typed_options`)."""

    agent: str
    kind: str | None = None
    options: tuple[str, ...] = ()
    command: str = "train"

    def __str__(self) -> str:
        if self.command == "tune":
            return f"a cloudsim tune {self.agent} search"
        article = "an" if self.agent[0] in "aeior" else "a"  # "an rlsk training"
        return f"{article} {self.agent}{f' {self.kind}' if self.kind else ''} training"

    def continues(self, agent: str, kind: str | None = None) -> bool:
        """Whether ``cloudsim train AGENT`` (with ``--algo KIND`` when given) continues what is held here."""
        return self.command == "train" and self.agent == agent and (kind is None or self.kind in (None, kind))

    def resume_command(self, out: str) -> str:
        """The command that continues it from ``out``, as the user would type it."""
        words = ["cloudsim", self.command, self.agent, *(["--algo", self.kind] if self.kind else []), *self.options,
                 "--out", str(out)]
        return shlex.join(words + (["--resume"] if self.command == "train" else []))


def _trainings_by_config() -> list[TrainingSpec]:
    """The trainings whose config.json is their config dataclass as it is (`agents.kit.write_config`; DeepJS's
    holds its workload beside its config, `cloudsim.run.train_deepjs`), those told apart by saved settings
    (``marks``) first."""
    specs = [training_spec(name) for name in training_names() if name != "deepjs"]
    return sorted(specs, key=lambda spec: not spec.marks)


def _json_dict(path: Path) -> dict | None:
    """The dict a JSON file holds; None when it is missing, unreadable or holds something else."""
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return saved if isinstance(saved, dict) else None


def _held_by_config(saved: Mapping[str, Any], agent: str | None = None) -> HeldTraining | None:
    """The training whose config (config.json, or a checkpoint's ``config``) is ``saved``; ``agent``: the name the
    checkpoint carries, when known. None when it is no training's that this version knows."""
    if agent == "deepjs" or (agent is None and isinstance(saved.get("workload"), dict)):
        workload = saved.get("workload")
        return HeldTraining("deepjs", options=typed_options(workload) if isinstance(workload, dict)
                            else ("WORKLOAD",))
    for spec in _trainings_by_config():
        if agent not in (None, spec.checkpoint_agent or spec.name) or not saved:
            continue
        if not set(saved) <= {f.name for f in fields(spec.config)} or any(saved.get(name) != value
                                                                          for name, value in spec.marks.items()):
            continue
        kind = str(saved.get(spec.kind, getattr(spec.config(), spec.kind))) if spec.kind else None
        return HeldTraining(spec.name, kind=kind)
    return None


def _held_by_checkpoint(path: Path) -> HeldTraining | None:
    """The training whose policy.pt is ``path``, from the agent's name and config it holds (DeepJS's from before
    the learning kit carry no name: they hold its chunks); None when it cannot be read. Imports torch, so it is
    asked only of a folder whose config.json says nothing."""
    try:
        import torch

        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # torch raises many types for a file that is no checkpoint
        return None
    if not isinstance(saved, dict) or not isinstance(saved.get("config"), dict):
        return None
    agent = saved.get("agent") or ("deepjs" if "chunks_done" in saved else None)
    return _held_by_config(saved["config"], agent) if isinstance(agent, str) else None


def held_training(out: str | Path) -> HeldTraining | None:
    """What the folder ``out`` holds, as the command that made it: a `cloudsim tune` search (its `SEARCH_FOLDER`),
    or the training its config.json (else its policy.pt) describes; None when it holds neither (or does not
    exist). Every check of a training's or a search's folder asks it, so that a refusal names what is there and
    the command that continues it, rather than an option that would only be refused in turn."""
    folder = Path(out)
    if not folder.is_dir():
        return None
    if (folder / SEARCH_FOLDER).is_dir():
        return HeldTraining("deepk8s", command="tune")
    saved = _json_dict(folder / "config.json")
    held = _held_by_config(saved) if saved is not None else None
    if held is None and (folder / "policy.pt").is_file():
        held = _held_by_checkpoint(folder / "policy.pt")
    return held


def _holds_a_training(out: str | Path) -> bool:
    """Whether ``out`` holds a trained policy or a training log (what a new training must not mix with)."""
    folder = Path(out)
    return (folder / "policy.pt").exists() or any((folder / name).is_file() and (folder / name).stat().st_size
                                                   for name in LOG_FILES)


def check_training_folder(out: str, *, resume: bool, state: Path, what: str,
                          reads: Mapping[str, object] | None = None, agent: str | None = None,
                          kind: str | None = None) -> HeldTraining | None:
    """Refuse an --out that cannot hold a training of ``agent`` (``cloudsim train AGENT``; ``kind``: the algorithm
    asked for, where the agent has several, None when not asked), and return what it holds (`held_training`).

    Refused: the current folder or one above it, a place inside another command's results or around an input
    (``reads``: option -> path, `place_problem`), a bad parent or a file. With --resume: a folder that holds
    another agent's (or algorithm's) training or a search, named with the command that continues it; a folder
    without the ``state`` file of ``what`` training. Without it: a folder that already holds a trained policy, a
    training log or a search."""
    problem = place_problem(out, reads) or parent_problem(out)
    if problem:
        raise ConfigError("--out", out, problem)
    if Path(out).exists() and not Path(out).is_dir():
        raise ConfigError("--out", out, "is a file; give a folder")
    held = held_training(out) if agent is not None else None
    if resume:
        if held is not None and not held.continues(agent, kind):
            raise ConfigError("--resume", out, f"holds {held}, not {agent}{f' {kind}' if kind else ''}; resume it "
                              f"with `{held.resume_command(out)}`, or give another folder")
        if not state.is_file():
            if held is not None or _holds_a_training(out):  # "leave out --resume" would be refused in turn
                raise ConfigError("--resume", out, f"the {what} training in it cannot be resumed ({state.name} is "
                                  "missing); train into another folder")
            raise ConfigError("--resume", out, f"there is no {what} training to resume in it ({state.name} is "
                              "missing); leave out --resume to start one")
        return held
    if held is not None and held.command != "train":
        raise ConfigError("--out", out, f"holds {held}; give another folder (`{held.resume_command(out)}` "
                          "continues the search)")
    if (Path(out) / "policy.pt").exists():
        named = (f" ({held}); resume it with `{held.resume_command(out)}`" if held is not None
                 else "; add --resume to continue it")
        raise ConfigError("--out", out, f"already holds a trained policy{named}, or give another folder")
    if _holds_a_training(out):
        named = (f" ({held}); resume it with `{held.resume_command(out)}`" if held is not None
                 else "; add --resume to continue that training and its log")
        raise ConfigError("--out", out, f"already holds a training log{named}, or give another folder")
    return held


def option_text(how: Option, value: object, default: object = None) -> str | None:
    """How ``value`` of the option ``how`` is typed after its flag (None: the option is left out; "": a switch
    that is on, that is, whose value is not its ``default``): the form `check_resumed_run` compares and shows."""
    if how.switch:
        return "" if value != default else None
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        if how.parse in (whole_pair, time_window, index_range):
            return span_text(tuple(value))
        return ",".join(repr(v) if isinstance(v, float) else str(v) for v in value)
    if isinstance(value, Mapping):
        return show_value(value)
    return repr(value) if isinstance(value, float) else str(value)


def typed_options(texts: Mapping[str, str | None]) -> tuple[str, ...]:
    """The words that give options again on a command line, from their texts (`option_text`, by flag; a flag
    without a leading dash is a positional, given by its value alone)."""
    words: list[str] = []
    for flag, text in texts.items():
        if text is not None:
            words += [text] if not flag.startswith("-") else [flag, *([text] if text else [])]
    return tuple(words)


def _with(flag: str, text: str | None) -> str:
    if text is None:
        return f"without {flag}"
    return f"with {flag}{f' {text}' if text else ''}"


def check_resumed_run(out: str, saved: Mapping[str, str | None], asked: Mapping[str, str | None], *,
                      what: str = "training", kept: bool = False) -> None:
    """Refuse a resume that asks for another run than the one saved in ``out``: every check that a resume
    compares what made the run with what it asks goes through here.

    ``saved`` and ``asked`` map each option that made the run (as the user writes it: "--chunk-size",
    "WORKLOAD") to its value as typed (`option_text`: None, left out). The first option of ``saved`` that
    ``asked`` also names with another value is refused, naming the saved value and the fix: with ``kept`` (a
    resume takes the saved value of an option left out, as the agents' settings) "leave it out", else "resume
    it with" the saved value, or give another folder. ``what``: "training", or "search" (`cloudsim tune`)."""
    for flag, made in saved.items():
        if flag not in asked or asked[flag] == made:
            continue
        fix = ("leave it out to keep the saved value" if kept
               else f"resume it {_with(flag, made)}, or give another folder")
        raise ConfigError(flag, asked[flag] or None, f"differs from the {what} being resumed in {out}, made "
                          f"{_with(flag, made)}; {fix}")


def check_resumed_settings(given: frozenset[str], saved: Any, current: Any, length: str | None = "iterations",
                           out: str | None = None) -> None:
    """Refuse a setting given on --resume (other than the training's length, ``length``: --iterations, or
    --timesteps) that differs from the saved training's (``saved``, the agent config in ``out``); the message
    names the setting's option in ``current``'s command (`check_resumed_run`)."""
    plain = (Option("", ""), None)  # a setting without an option of this command: shown as it is
    how = {name: (option, default) for name, option, default in options_of(type(current))}

    def texts(config: Any, names: list[str]) -> dict[str, str | None]:
        shown = {}
        for name in names:
            option, default = how.get(name, plain)
            shown[option.flag or f"--{name.replace('_', '-')}"] = option_text(option, getattr(config, name), default)
        return shown

    changed = changed_settings(saved, current, sorted(given - {length}))
    check_resumed_run(out or "its folder", texts(saved, changed), texts(current, changed), kept=True)


def check_resumed_length(out: str, flag: str, asked: int, done: int, unit: str, *, saved: int | None = None,
                         what: str = "training") -> None:
    """Refuse a resume that asks for fewer ``unit`` (``flag`` ``asked``) than the run in ``out`` has done: it would
    train nothing and rewrite the length the folder records. ``saved``: the run's own length, which is never
    refused (a Stable-Baselines3 training may pass it by a few steps)."""
    if asked < done and asked != saved:
        keep = f", or leave {flag} out (its length: {saved})" if saved is not None else ""
        raise ConfigError(flag, asked, f"the {what} in {out} has done {done} {unit} already; give more than {done} "
                          f"to go further{keep}")


@dataclass(frozen=True)
class TrainingRun:
    """The options of every `cloudsim train AGENT`: where it writes, whether it resumes, the device, TensorBoard;
    each agent's command declares its own ``out`` default and help."""

    out: str = option("run", "--out", "folder for policy.pt (also the state to resume from), config.json and the "
                      "log (log.csv, log.jsonl)", metavar="DIR")
    resume: bool = option(False, "--resume", "continue the training saved in --out", switch=True)
    device: str = device_option()
    threads: int | None = threads_option()
    tensorboard: bool = option(False, "--tensorboard", "also write the log as TensorBoard events in --out "
                               "(needs the tensorboard package)", switch=True)
    given: frozenset[str] = frozenset()  # the agent settings the user chose, which a resume must match

    def check_run_options(self) -> None:
        """--device, --threads and --tensorboard, before anything is written (every training's checks of them)."""
        check_device(self.device)
        check_threads(self.threads)
        check_tensorboard(self.tensorboard)

    def thread_count(self) -> dict:
        """``threads=`` for the agent's trainer where --threads was given; else nothing, so its own count holds."""
        return {} if self.threads is None else {"threads": self.threads}


@dataclass(frozen=True)
class AgentTraining(TrainingRun):
    """A `cloudsim train AGENT` run of an agent that trains in its own environment, and the checks every such
    run makes before it starts.

    Each command's config is made from its agent's `agents.registry.TrainingSpec` by `training_command`: its
    ``--out`` and ``--save-every``, the spec's own options, then the agent's settings (`with_agent_settings`);
    the class attributes below come from the spec."""

    save_every: int = option(10, "--save-every", "iterations between checkpoints", parse=whole, metavar="N")
    progress: bool = True
    agent_config: Any = None  # an agent config to train as it is (`of`), settings the command line lacks included

    spec: ClassVar[TrainingSpec]           # what the command trains
    agent_name: ClassVar[str]              # the command's AGENT
    agent_class: ClassVar[type]            # the agent's config dataclass (set by with_agent_settings)
    agent_defaults: ClassVar[Any]          # the defaults a new training starts from (set by with_agent_settings)
    length: ClassVar[str] = "iterations"   # the setting that says how long it trains: a resume may raise it
    progress_key: ClassVar[str] = "iterations"  # policy.pt's entry of how much of ``length`` is done
    checkpoint_agent: ClassVar[str | None] = None  # the agent's name in its checkpoints (None: agent_name)
    reads: ClassVar[tuple[str, ...]] = ()  # settings that name a file the training reads (kept out of --out)

    def __post_init__(self) -> None:
        check_training_numbers(self.save_every, self.seed)
        self.check_run_options()
        check_training_folder(self.out, resume=self.resume, state=self.state_file, what=self.describe_state(),
                              reads={f"--{name}": getattr(self, name) for name in self.reads},
                              agent=self.agent_name, kind=self.asked_kind)
        check_agent_settings(self)
        self.check_options()
        if self.resume:
            check_resumed_settings(self.given, self.saved_agent, self, length=self.length, out=self.out)
            self.check_resumed_length()

    def check_options(self) -> None:
        """The spec's checks of how the options fit together (`TrainingSpec.check`; a `SettingProblem` becomes
        the named option's error), and its settings' load against the range its workload generator can make
        (`TrainingSpec.load_of`)."""
        spec = self.spec
        if spec.check is not None:
            try:
                spec.check(self)
            except SettingProblem as problem:
                raise ConfigError(flag_of(type(self), problem.name), getattr(self, problem.name),
                                  problem.problem) from None
        if spec.load_of is not None:
            from traces.synthetic import load_problem  # the range of loads its generator draws sequences at

            problem = load_problem(spec.load_of, self.load, self.jobs)
            if problem is not None:
                raise ConfigError(flag_of(type(self), "load"), self.load, problem)

    def describe_state(self) -> str:
        """What kind of training ``state_file`` holds, as the --resume message names it: its algorithm, where
        the agent has several, else the agent's title."""
        return self.kind if self.spec.kind else self.spec.title

    @property
    def asked_kind(self) -> str | None:
        """The algorithm asked for, where the agent trains by several (`HeldTraining.kind`): its setting where it
        was given (on the command line, or as another value than the default); None otherwise."""
        name = self.spec.kind
        if name is None:
            return None
        value = getattr(self, name)
        return value if name in self.given or value != getattr(self.agent_defaults, name) else None

    @property
    def kind(self) -> str | None:
        """The algorithm this run trains, where the agent has several: the one asked for, or on --resume without
        one the folder's; None for an agent of one algorithm."""
        if self.spec.kind is None:
            return None
        held = self.held if self.resume and self.asked_kind is None else None
        if held is not None and held.continues(self.agent_name) and held.kind:
            return held.kind
        return getattr(self, self.spec.kind)

    @functools.cached_property
    def held(self) -> HeldTraining | None:
        """What --out holds (`held_training`), read once."""
        return held_training(self.out)

    def done(self) -> int:
        """How much of ``length`` the training saved in --out has done: its policy.pt's ``progress_key`` (torch is
        imported to read it; a damaged file is a `agents.kit.CheckpointError`, naming it)."""
        from agents.kit import read_checkpoint

        saved = read_checkpoint(Path(self.out) / "policy.pt", agent=self.checkpoint_agent or self.agent_name,
                                keys=(self.progress_key,),
                                fix=f"the training in {self.out} cannot be resumed; start it afresh in another folder")
        return int(saved[self.progress_key])

    def check_resumed_length(self) -> None:
        """On --resume, a length (``length``) other than the saved training's may not be below what it has done
        (`check_resumed_length`); its checkpoint is read only then."""
        asked, saved = getattr(self.agent, self.length), getattr(self.saved_agent, self.length)
        if asked != saved:
            how = {name: option for name, option, _ in options_of(type(self))}
            check_resumed_length(self.out, how[self.length].flag, asked, self.done(), self.length, saved=saved)

    @property
    def state_file(self) -> Path:
        """The file a resumed training starts from; until it exists the folder holds nothing to resume."""
        return Path(self.out) / self.spec.state_file_of(self.kind)

    @property
    def saved_agent(self) -> Any:
        """The config of the training saved in ``out`` (its config.json)."""
        return saved_agent_config(self.out, self.agent_class)

    @property
    def agent(self) -> Any:
        """A new training's agent config (the defaults with the settings given here, or ``agent_config``) or, on
        --resume, the saved training's with the length (``length``) given here."""
        if self.agent_config is not None and not self.resume:
            return self.agent_config
        return training_agent_config(self, self.agent_defaults, self.length)

    @classmethod
    def of(cls, agent: Any, **run: Any) -> "AgentTraining":
        """The command config that trains the agent config ``agent`` as it is, with the run's options ``run``
        (``out=...``): its settings become the command's, and the fields that are no option (a network's shape,
        PPO's clip) are kept too, as `cloudsim tune`'s trials set them."""
        if not isinstance(agent, cls.agent_class):
            raise TypeError(f"{cls.__name__}.of takes a {cls.agent_class.__name__}, got {type(agent).__name__}")
        return cls(**{name: getattr(agent, name) for name in agent_setting_names(cls)}, agent_config=agent, **run)

    def run_options(self) -> dict[str, Any]:
        """The spec's own options (`TrainingSpec.options`) by name, as its ``train`` takes them."""
        return {f.name: getattr(self, f.name) for f in fields(self.spec.options)} if self.spec.options else {}

    def train(self) -> dict:
        """Train (`TrainingSpec.train`) into ``out`` and return the summary it gives."""
        spec = self.spec
        workload = {}
        if spec.workload is not None:
            import traces

            workload = {"workload": getattr(traces, spec.workload)}
        return entry_point(spec.train)(self.agent, self.out, resume=self.resume, tensorboard=self.tensorboard,
                                       progress=self.progress, save_every=self.save_every, device=self.device,
                                       **self.thread_count(), **self.run_options(), **workload)


@functools.lru_cache(maxsize=None)
def training_command(name: str) -> type:
    """The config of ``cloudsim train NAME`` (an `AgentTraining`), made once from its `TrainingSpec`: ``--out``
    (default ``NAME-run``, its help the spec's ``writes``), ``--save-every`` (in the spec's unit and default), the
    spec's own options, then the agent's settings; named as the agent's title says (``DeepRMPlusTrainConfig``)."""
    spec = training_spec(name)
    added: list[tuple[str, Any, Any]] = [
        ("out", str, option(f"{name}-run", "--out", spec.writes, metavar="DIR")),
        ("save_every", int, option(spec.save_every, "--save-every", f"{spec.unit} between checkpoints", parse=whole,
                                   metavar="N"))]
    if spec.options is not None:
        hints = typing.get_type_hints(spec.options)
        added += [(f.name, hints[f.name], dataclasses.field(default=f.default, metadata={
            "option": setting_option(spec.options, f.name)})) for f in fields(spec.options)]
    title = spec.title.replace("_", "")
    base = dataclasses.make_dataclass(f"{title}TrainConfig", added, bases=(AgentTraining,), frozen=True, namespace={
        "spec": spec, "agent_name": name, "length": spec.length, "progress_key": spec.progress_key,
        "checkpoint_agent": spec.checkpoint_agent, "reads": spec.reads,
        "__doc__": f"`cloudsim train {name}`: {spec.summary}; where and how it trains, and the agent's settings."})
    base.__module__ = __name__
    return with_agent_settings(spec.config, defaults=spec.defaults, leave_out=spec.leave_out)(base)


def agent_setting_names(command: type) -> tuple[str, ...]:
    """The fields of a training command's config that are its agent's settings, in order."""
    return tuple(f.name for f in fields(command) if "setting" in f.metadata)


def with_agent_settings(agent: type, defaults: Any = None, leave_out: tuple[str, ...] = ()) -> Callable[[type], type]:
    """A class decorator: the training command's config it decorates (a `TrainingRun`), with every setting of the
    agent config dataclass ``agent`` (its fields made with `agents.kit.settings.setting`, less ``leave_out``) as a
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
