"""``cloudsim check-broker``: run a broker on small, hostile workloads and name each protocol rule it breaks."""

from __future__ import annotations

import argparse

from cloudsim.cli.options import add_section, parse_given
from cloudsim.run.config import CheckBrokerConfig

__all__ = ["add_parser", "run"]


def add_parser(commands, parents: list[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "check-broker", parents=parents, allow_abbrev=False, help="check a broker against the broker protocol",
        description="Run the broker on small, hostile workloads (one machine, a scheduler tick, a DAG, a machine "
                    "that fails with work on it, a queue longer than the cluster, a task that fits nowhere until a "
                    "machine comes up, 2,000 machines, GPUs with a model constraint), each twice, and name each "
                    "rule of the broker protocol it breaks with the smallest workload that shows it: it answers "
                    "with a decision, a plan or None; raises nothing; answers in time; finishes every job; makes "
                    "the same decisions with the same seed. Exit status 0 only when every rule holds.")
    add_section(parser, "command", CheckBrokerConfig)
    parser.set_defaults(run=run)


def run(namespace: argparse.Namespace) -> int:
    from cloudsim.run.check_broker import check_named_broker

    config = CheckBrokerConfig(**parse_given(namespace, "command", CheckBrokerConfig))
    name = config.broker
    report = check_named_broker(name, config.broker_options, config.seed, config.timeout,
                                lambda case, outcome: print(f"{case}: {outcome}", flush=True))
    print()
    if report.passed:
        print(f"{name}: every rule holds on {len(report.cases)} workloads")
        return 0
    for rule, (case, message) in report.failures.items():
        print(f"{name}: breaks '{rule}', first on '{case}': {message}")
    return 1
