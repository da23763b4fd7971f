"""The option sections every run command shares, added to a parser and built back into its config."""

from __future__ import annotations

import argparse
from dataclasses import MISSING, fields
from typing import Any

from cloudsim.cli.options import add_section, build, parse_given

__all__ = ["add_run_sections", "build_run_config"]

SECTIONS = (
    ("workload", "workload"),
    ("cluster", "cluster"),
    ("simulation", "simulation"),
    ("brokers", "brokers"),
    ("runner", "where the runs run"),
    ("report", "output"),
)


def _section_defaults(cls: type) -> dict[str, Any]:
    """Each section of the command's config class as the class makes it by default."""
    return {f.name: f.default_factory() for f in fields(cls) if f.default_factory is not MISSING}


def add_run_sections(parser: argparse.ArgumentParser, cls: type) -> None:
    """Every section of config class ``cls``, then its own options (e.g. compare's --loads)."""
    defaults = _section_defaults(cls)
    for key, title in SECTIONS:
        add_section(parser, key, type(defaults[key]), title, defaults[key])
    add_section(parser, "command", cls, f"{parser.prog.split()[-1]} options")


def build_run_config(namespace: argparse.Namespace, cls: type) -> Any:
    """The command's config from the options given, each section on top of the class's default;
    the whole is checked once, when it is made."""
    defaults = _section_defaults(cls)
    sections = {key: build(namespace, key, defaults[key]) for key, _ in SECTIONS}
    return cls(**sections, **parse_given(namespace, "command", cls))
