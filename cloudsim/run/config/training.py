"""The checks every `cloudsim train AGENT` configuration shares: numbers, the training folder, --resume."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import fields
from pathlib import Path
from typing import Any, Mapping

from agents.kit import DEVICES, changed_settings  # (agents.kit imports torch only inside the functions that need it)
from cloudsim.run.output import parent_problem, place_problem
from cloudsim.run.config.fields import ConfigError, is_whole

def check_training_numbers(save_every: object, seed: object) -> None:
    """A training's --save-every (>= 1) and --seed (>= 0), as whole numbers."""
    for flag, value, low in (("--save-every", save_every, 1), ("--seed", seed, 0)):
        if not (is_whole(value) and value >= low):
            raise ConfigError(flag, value, f"must be a whole number >= {low}")


TRAINING_RUN_FIELDS = frozenset({"out", "resume", "tensorboard", "save_every", "keep_every", "device", "progress",
                                 "given", "workers"})
"""Fields of a `cloudsim train AGENT` config that say where and how the run writes, not what the agent is."""


DEVICE_HELP = ("where the network's updates run: auto (a CUDA GPU when torch sees one, else the CPU), cpu or cuda; "
               "rollouts stay on the CPU, checkpoints load on either (default auto)")


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
    names = {f.name for f in fields(defaults)} - TRAINING_RUN_FIELDS
    return dataclasses.replace(defaults, **{f.name: getattr(command, f.name) for f in fields(command)
                                            if f.name in names})


def check_agent_settings(command: Any) -> None:
    """A new training's agent config must build: the agent's own check ("NAME must be ...") becomes a
    `ConfigError` naming the option ``--NAME``."""
    if command.resume:
        return
    try:
        command.agent
    except ValueError as err:
        name = str(err).split(" ", 1)[0]
        raise ConfigError(f"--{name.replace('_', '-')}", getattr(command, name, None), str(err)) from None


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


def check_resumed_settings(given: frozenset[str], saved: Any, current: Any,
                           flags: Mapping[str, str] | None = None, length: str = "iterations") -> None:
    """Refuse a setting given on --resume (other than the training's length, ``length``: --iterations, or
    --timesteps) that differs from the saved training's."""
    for name in changed_settings(saved, current, sorted(given - {length}))[:1]:
        flag = (flags or {}).get(name, f"--{name.replace('_', '-')}")
        raise ConfigError(flag, getattr(current, name), f"differs from the training being resumed "
                          f"({getattr(saved, name)!r}); leave it out to keep the saved value")
