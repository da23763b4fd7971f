"""Command-line options generated from the run configuration's dataclasses, and back.

Each config section's fields declare their flag, help and parser (`cloudsim.run.config.option`);
`add_section` turns them into argparse arguments and `build` turns the parsed text back into the
section, so defaults, types, ranges and help live in one place. Options the user did not give
are left out of the parsed namespace (argparse's SUPPRESS), which lets a command tell a given
option from a default.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any, Collection

from cloudsim.run.config import ConfigError
from cloudsim.run.config.fields import Option, options_of

__all__ = ["add_section", "build", "given", "parse_given"]

_SEPARATOR = "."


def _dest(section: str, name: str) -> str:
    return f"{section}{_SEPARATOR}{name}"


def add_section(parser: argparse.ArgumentParser, section: str, cls: type, title: str | None = None,
                defaults: Any = None, only: Collection[str] | None = None) -> None:
    """Add every option of config class ``cls`` (or those named in ``only``) to ``parser`` under the key
    ``section``.

    ``defaults``: an instance whose values the help shows as defaults (when they
    differ from the class's own, e.g. a command's own broker list).
    """
    group = parser.add_argument_group(title) if title else parser
    for name, how, default in options_of(cls):
        if only is not None and name not in only:
            continue
        shown = getattr(defaults, name) if defaults is not None else default
        text = how.help + _default_note(how, shown, default)
        dest = _dest(section, name)
        if how.positional:
            group.add_argument(dest, nargs="?", metavar=how.flag, help=text, default=argparse.SUPPRESS)
        elif how.switch:  # a switch turns its setting on, or off where it is on by default
            group.add_argument(how.flag, *how.aliases, dest=dest, action="store_false" if default is True else
                               "store_true", help=text, default=argparse.SUPPRESS)
        else:
            group.add_argument(how.flag, *how.aliases, dest=dest, metavar=how.metavar, choices=how.choices,
                               help=text, default=argparse.SUPPRESS)


def _default_note(how: Option, shown: Any, default: Any) -> str:
    if how.switch or shown is None or shown == default and "default" in how.help:
        return ""
    if isinstance(shown, tuple):
        shown = ",".join(map(str, shown))
    return f" (default {shown})"


def given(namespace: argparse.Namespace, section: str) -> dict[str, str | bool]:
    """The options of ``section`` that the user gave, as text (switches as True)."""
    prefix = section + _SEPARATOR
    return {key[len(prefix):]: value for key, value in vars(namespace).items() if key.startswith(prefix)}


def parse_given(namespace: argparse.Namespace, section: str, cls: type | tuple[type, ...]) -> dict[str, Any]:
    """The options of ``section`` that the user gave, parsed by each field's parser (the fields of ``cls``, or
    of any of several classes); text that does not parse raises `ConfigError` naming the option."""
    values = {}
    how = {name: option for one in (cls if isinstance(cls, tuple) else (cls,)) for name, option, _ in options_of(one)}
    for name, text in given(namespace, section).items():
        option = how[name]
        if option.parse is None or not isinstance(text, str):
            values[name] = text
            continue
        try:
            values[name] = option.parse(text)
        except ValueError as err:
            raise ConfigError(option.flag, text, str(err)) from None
    return values


def build(namespace: argparse.Namespace, section: str, base: Any) -> Any:
    """``base`` (a config section) with the options the user gave for it; checked on creation."""
    return dataclasses.replace(base, **parse_given(namespace, section, type(base)))
