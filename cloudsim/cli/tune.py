"""``cloudsim tune AGENT``: a hyper-parameter search whose trials are trainings scored on validation seeds."""

from __future__ import annotations

import argparse

from cloudsim.cli.sections import add_runner_sections, build_runner_config
from cloudsim.run.config import TuneConfig

__all__ = ["add_parser", "run"]


def add_parser(commands, parents: list[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "tune", allow_abbrev=False, help="search a learned broker's hyper-parameters (Optuna)",
        description="Search a learned broker's training settings with Optuna: each trial trains a policy and scores "
                    "it on validation seeds. `cloudsim tune AGENT --help` lists each agent's options.")
    agents = parser.add_subparsers(dest="agent", metavar="AGENT", required=True)
    deepk8s = agents.add_parser(
        "deepk8s", parents=parents, allow_abbrev=False, help="Deepk8s PPO from a DAgger policy's actor",
        description="Search Deepk8s PPO's settings (learning rate, iterations, entropy, clip, epochs, GAE lambda, "
                    "rollout length), each trial starting from a DAgger policy's actor and scored by the mean "
                    "weighted turnaround on validation sequences. Trials run through the runner, --workers at a "
                    "time; finished ones are kept in DIR/trials: run the same command again to resume. Writes "
                    "DIR/search.md, DIR/trials.csv and DIR/best.json (needs pip install -e '.[tune]').")
    add_runner_sections(deepk8s, TuneConfig, "where the trials run", "search")
    deepk8s.set_defaults(run=run)


def run(namespace: argparse.Namespace) -> int:
    from cloudsim.run.tune import tune

    config = build_runner_config(namespace, TuneConfig)
    result = tune(config)
    best = result.best
    print(result.trials.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"\n{result.ran} trial(s) run now, {len(result.trials) - result.ran} kept from before; best: trial "
          f"{best['number']}, validation {best['value']:.4f}, policy {best['policy']}; report: "
          f"{result.out / 'search.md'}")
    return 0
