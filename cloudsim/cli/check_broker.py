"""``cloudsim check-broker``: run a broker on small, hostile workloads and name each protocol rule it breaks."""

from __future__ import annotations

import argparse

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
    parser.add_argument("broker", metavar="BROKER",
                        help="a broker name (cloudsim brokers), module:Class or path/to/file.py:Class")
    parser.add_argument("--broker-options", default=None, metavar="KEY=VALUE[,KEY=VALUE]",
                        help="keyword options for the broker's class (values: numbers, True/False/None, text)")
    parser.add_argument("--seed", type=int, default=0, help="the seed each run gives the broker (default 0)")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds one decide() call may take before it counts as hung (default 60)")
    parser.set_defaults(run=run)


def run(namespace: argparse.Namespace) -> int:
    from cloudsim.run.check_broker import check_named_broker

    name = namespace.broker
    report = check_named_broker(name, namespace.broker_options, namespace.seed, namespace.timeout,
                                lambda case, outcome: print(f"{case}: {outcome}", flush=True))
    print()
    if report.passed:
        print(f"{name}: every rule holds on {len(report.cases)} workloads")
        return 0
    for rule, (case, message) in report.failures.items():
        print(f"{name}: breaks '{rule}', first on '{case}': {message}")
    return 1
