"""``cloudsim brokers``: every broker this installation knows, and where each comes from."""

from __future__ import annotations

import argparse
import json

from cloudsim.cli.options import add_section, parse_given
from cloudsim.run.config import BrokersConfig

__all__ = ["add_parser", "run"]


def add_parser(commands, parents: list[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "brokers", parents=parents, allow_abbrev=False, help="list every broker: built-in, installed, by registry",
        description="List every broker this installation knows, one line each: its name, its registry (the core's "
                    "brokers run by replay, compare, bench and leaderboard; DeepRM's environment's policies and RLSK's "
                    "federation's dispatchers run only under compare --env), what it is, where it comes from, what "
                    "it needs and where it refuses to run. Your own broker needs no listing: give it to any "
                    "command as --brokers module:Class or --brokers path/to/file.py:Class.")
    add_section(parser, "command", BrokersConfig)
    parser.set_defaults(run=run)


def run(namespace: argparse.Namespace) -> int:
    from cloudsim.run.catalogue import catalogue

    config = BrokersConfig(**parse_given(namespace, "command", BrokersConfig))
    rows = catalogue()
    if config.json:
        for row in rows:
            print(json.dumps(row.as_dict()), flush=True)
        return 0
    registry = None
    for row in rows:
        if row.registry != registry:
            registry = row.registry
            print(f"\n{registry}:" if registry != "core" else "core (replay, compare, bench, leaderboard):")
        print(f"  {row.name:16} {row.summary}")
        details = [f"from {row.source}"]
        details += [f"needs {row.needs}"] if row.needs != "-" else []
        details += [f"refuses {row.refuses}"] if row.refuses != "-" else []
        print(f"  {'':16} {'; '.join(details)}")
    return 0
