"""``cloudsim train deepjs``: train DeepJS by REINFORCE on sliding chunks, a checkpoint after each chunk."""

from __future__ import annotations

import argparse
import sys

from tqdm.auto import tqdm

from cloudsim.cli.options import add_section, build, given
from cloudsim.run import strict_json
from cloudsim.run.train import AGENT_FIELD, RUN_OPTIONS, TrainConfig, train_deepjs

__all__ = ["add_parser", "run"]

SECTIONS = (("workload", "workload"), ("cluster", "cluster"), ("runner", "where the rollouts run"),
            ("agent", "DeepJS"))


def add_parser(commands, parents: list[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "train", parents=parents, allow_abbrev=False, help="train a learned broker",
        description="Train DeepJS by REINFORCE on sliding chunks (Algorithm 2), saving a checkpoint after "
                    "each chunk; --resume continues a saved training exactly.")
    parser.add_argument("agent", choices=["deepjs"], help="the agent to train")
    defaults = TrainConfig()
    for key, title in SECTIONS:
        add_section(parser, key, type(getattr(defaults, key)), title, getattr(defaults, key))
    parser.set_defaults(run=run)


def _given_agent_settings(namespace: argparse.Namespace) -> frozenset[str]:
    """The agent settings the user chose (as DeepJSConfig fields), which a resumed checkpoint must match."""
    chosen = {AGENT_FIELD.get(name, name) for name in given(namespace, "agent")} - RUN_OPTIONS
    if "seed" in given(namespace, "workload"):
        chosen.add("seed")
    if given(namespace, "cluster") or "machine_table" in given(namespace, "workload"):
        chosen.add("cluster")
    return frozenset(chosen)


def run(namespace: argparse.Namespace) -> int:
    defaults = TrainConfig()
    config = TrainConfig(**{key: build(namespace, key, getattr(defaults, key)) for key, _ in SECTIONS})
    print(f"training DeepJS on {config.workload.describe()}, chunks of {config.workload.chunk_size} jobs; "
          f"checkpoint {config.agent.checkpoint}", file=sys.stderr)
    with tqdm(unit="chunk", file=sys.stderr, disable=None) as bar:
        def on_chunk(entry: dict) -> None:
            bar.write(strict_json(entry))
            bar.update()

        summary = train_deepjs(config, on_chunk, _given_agent_settings(namespace))
    print(strict_json(summary), flush=True)
    return 0
