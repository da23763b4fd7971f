"""An agent's hyper-parameter, declared once with what the command line shows of it.

Each agent has one config dataclass (`agents/<agent>/config.py`). A field made with `setting` is
also an option of ``cloudsim train AGENT``: its metadata holds the help and, where the name alone
does not give it, the flag (``--NAME`` with dashes otherwise), the metavar and the choices. The run
layer derives the option's parser from the field's type (`cloudsim.run.config.fields.options_of`), so
the agents never import the command line, and no second list of options exists to drift from this one.
Fields made without `setting` are the agent's too, but not options (a network's feature normaliser,
say).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Setting", "SettingProblem", "setting"]


@dataclass(frozen=True)
class Setting:
    """How one agent setting appears as an option of ``cloudsim train AGENT``.

    ``flag`` defaults to ``--NAME`` with dashes; a bool setting is a switch, and one that defaults to True
    is turned off by its flag (such as ``--no-advantage-normalisation``). ``choices`` are the values a text
    setting takes."""

    help: str
    flag: str | None = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None


def setting(default: Any, help: str, **how: Any) -> Any:
    """A dataclass field that is also an option of ``cloudsim train AGENT`` (see `Setting` for ``how``)."""
    return field(default=default, metadata={"setting": Setting(help, **how)})


class SettingProblem(ValueError):
    """A setting or a training command's option (``name``, the field) whose value cannot work with the others:
    ``problem`` says why and how to fix it. The command line shows it as the option's own error, ``--NAME VALUE:
    PROBLEM`` (`cloudsim.run.config.training`), so a training's checks need not know the flags."""

    def __init__(self, name: str, problem: str) -> None:
        self.name = name
        self.problem = problem
        super().__init__(f"{name}: {problem}")
