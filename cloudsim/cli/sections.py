"""The option sections every run command shares, added to a parser and built back into its config."""

from __future__ import annotations

import argparse
from dataclasses import MISSING, fields
from typing import Any, Callable

from cloudsim.cli.options import add_section, build, parse_given
from cloudsim.run import RunnerConfig, strict_json

__all__ = ["add_run_command", "add_run_sections", "add_runner_sections", "build_run_config", "build_runner_config",
           "build_sections", "json_printer"]

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
    shown = {**defaults, "brokers": defaults["brokers"].named(cls.DEFAULT_BROKERS)}  # the help names the default list
    for key, title in SECTIONS:
        add_section(parser, key, type(defaults[key]), title, shown[key])
    add_section(parser, "command", cls, f"{parser.prog.split()[-1]} options")


def build_sections(namespace: argparse.Namespace, cls: type) -> dict[str, Any]:
    """Each section of config class ``cls`` (workload, cluster, ...) from the options given, on top of the
    class's default."""
    defaults = _section_defaults(cls)
    return {key: build(namespace, key, defaults[key]) for key, _ in SECTIONS}


def build_run_config(namespace: argparse.Namespace, cls: type) -> Any:
    """The command's config from the options given, each section on top of the class's default;
    the whole is checked once, when it is made."""
    return cls(**build_sections(namespace, cls), **parse_given(namespace, "command", cls))


def add_runner_sections(parser: argparse.ArgumentParser, cls: type, runner_title: str, title: str) -> None:
    """A command that runs work through the runner without a workload of its own (leaderboard, tune):
    the runner's options, then those of config class ``cls``."""
    add_section(parser, "runner", RunnerConfig, runner_title)
    add_section(parser, "command", cls, title)


def build_runner_config(namespace: argparse.Namespace, cls: type) -> Any:
    """The config of a command made by `add_runner_sections`, from the options given."""
    return cls(runner=build(namespace, "runner", RunnerConfig()), **parse_given(namespace, "command", cls))


def add_run_command(commands, parents: list[argparse.ArgumentParser], name: str, cls: type, run: Callable,
                    help: str, description: str) -> argparse.ArgumentParser:
    """A subcommand whose options are the sections of config class ``cls``, handled by ``run``."""
    parser = commands.add_parser(name, parents=parents, allow_abbrev=False, help=help, description=description)
    add_run_sections(parser, cls)
    parser.set_defaults(run=run)
    return parser


def json_printer(config: Any) -> Callable[[dict], None] | None:
    """With --json, a function that prints each row as one strict JSON line as soon as it is ready."""
    if not config.report.json:
        return None
    return lambda row: print(strict_json(row), flush=True)
