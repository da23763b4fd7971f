"""``cloudsim train AGENT``: train a learned broker, one subcommand per training the registry declares
(`agents.registry.register_training`)."""

from __future__ import annotations

import argparse
import dataclasses
import sys

from tqdm.auto import tqdm

from agents.registry import training_names, training_spec
from cloudsim.cli.options import add_section, build, given, parse_given
from cloudsim.run import strict_json
from cloudsim.run.config import ConfigError
from cloudsim.run.config.training import agent_setting_names
from cloudsim.run.train import DeepJSTraining, TrainConfig, train, training_command

__all__ = ["add_parser", "run"]

SECTIONS = (("workload", "workload"), ("cluster", "cluster"), ("runner", "where the rollouts run"))
"""The sections of a training on chunks of a workload (`cloudsim.run.train.TrainConfig`) before the agent's."""


def add_parser(commands, parents: list[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "train", allow_abbrev=False, help="train a learned broker",
        description="Train a learned broker: " + "; ".join(f"{name}, {training_spec(name).summary}"
                                                            for name in training_names())
                    + ". `cloudsim train AGENT --help` lists each agent's options.")
    agents = parser.add_subparsers(dest="agent", metavar="AGENT", required=True)
    for name in training_names():  # one subcommand per training the registry declares
        spec = training_spec(name)
        command = agents.add_parser(name, parents=parents, allow_abbrev=False, help=spec.summary,
                                    description=spec.description)
        if spec.trains_on == "chunks":
            defaults = _chunk_sections()
            for key, title in SECTIONS:
                add_section(command, key, type(defaults[key]), title, defaults[key])
            add_training_sections(command, "agent", DeepJSTraining, spec.title)
            command.add_argument("--checkpoint", "--log", dest="retired", help=argparse.SUPPRESS)  # before 0.2
            command.set_defaults(run=run)
        else:
            section = training_command(name)
            add_training_sections(command, name, section, spec.title)
            command.set_defaults(run=training_run(section, name, spec.describe))


def add_training_sections(parser: argparse.ArgumentParser, key: str, section: type, title: str) -> None:
    """A training command's options under ``key``, in two groups: the run's (where and how it writes), then
    the agent's settings (titled ``title``)."""
    settings = agent_setting_names(section)
    add_section(parser, key, section, "where and how it trains",
                only=[f.name for f in dataclasses.fields(section) if f.name not in settings])
    add_section(parser, key, section, title, only=settings)


def training_run(section: type, key: str, describe):
    """The command of one `cloudsim train AGENT` whose options are the config ``section`` (options under
    ``key``): it builds the config, says what it trains (``describe(agent config)``), trains it
    (`cloudsim.run.train.train`) and prints the summary as JSON."""

    def run(namespace: argparse.Namespace) -> int:
        chosen = frozenset(given(namespace, key)) & frozenset(agent_setting_names(section))
        # Made once, from what was given: a config of the defaults alone would check the default --out folder.
        config = section(**parse_given(namespace, key, section), given=chosen)
        print(f"training {describe(config.agent)} into {config.out}{' (resumed)' if config.resume else ''}",
              file=sys.stderr)
        print(strict_json(train(config)), flush=True)
        return 0

    return run


def _chunk_sections() -> dict:
    """Each section of `TrainConfig` with its defaults, made apart: a `TrainConfig` of the defaults alone would
    check the default --out folder (and refuse to start where it holds a training)."""
    return {f.name: f.default_factory() for f in dataclasses.fields(TrainConfig)}


def _given_agent_settings(namespace: argparse.Namespace) -> frozenset[str]:
    """The DeepJS settings the user chose (DeepJSConfig fields, and "cluster"), which a resumed checkpoint must
    match."""
    chosen = set(given(namespace, "agent")) & set(agent_setting_names(DeepJSTraining))
    if "seed" in given(namespace, "workload"):
        chosen.add("seed")
    if given(namespace, "cluster") or "machine_table" in given(namespace, "workload"):
        chosen.add("cluster")
    return frozenset(chosen)


def run(namespace: argparse.Namespace) -> int:
    if getattr(namespace, "retired", None) is not None:
        raise ConfigError("--checkpoint/--log", namespace.retired, "cloudsim train deepjs writes its checkpoint and "
                          "log into one folder, as every training does: give --out DIR (it writes DIR/policy.pt and "
                          "DIR/log.csv)")
    sections = {key: build(namespace, key, default) for key, default in _chunk_sections().items()}
    config = TrainConfig(**{**sections, "agent": dataclasses.replace(sections["agent"],
                                                                     given=_given_agent_settings(namespace))})
    what = training_spec(namespace.agent).describe(config.agent)
    print(f"training {what} on {config.workload.describe()}, chunks of {config.workload.chunk_size} jobs, into "
          f"{config.agent.out}{' (resumed)' if config.agent.resume else ''}", file=sys.stderr)
    with tqdm(unit="chunk", file=sys.stderr, disable=None) as bar:
        def on_chunk(entry: dict) -> None:
            bar.write(strict_json(entry))
            bar.update()

        summary = train(config, on_chunk)
    print(strict_json(summary), flush=True)
    return 0
