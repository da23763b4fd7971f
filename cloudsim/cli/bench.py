"""``cloudsim bench``: a candidate broker's makespan against baselines on every chunk (DeepJS Table 2)."""

from __future__ import annotations

import argparse


from cloudsim.cli.replay import print_table
from cloudsim.cli.sections import add_run_command, build_run_config, json_printer
from cloudsim.run import BenchConfig, bench, strict_json

__all__ = ["add_parser", "run"]


def add_parser(commands, parents: list[argparse.ArgumentParser]) -> None:
    add_run_command(
        commands, parents, "bench", BenchConfig, run,
        help="run several brokers on the same chunks and compare makespans (DeepJS Table 2)",
        description="Run every broker on every chunk (tick 1 by default, as DeepJS) and count the chunks on "
                    "which the candidate's makespan is lower, equal or higher than each baseline's.")


def run(namespace: argparse.Namespace) -> int:
    import pandas as pd
    config = build_run_config(namespace, BenchConfig)
    result = bench(config, json_printer(config))
    if config.report.json:
        print(strict_json(result.total), flush=True)
        return 0
    print_table(result.rows, result.total)
    candidate = result.total["candidate"]
    print(f"\n{candidate}'s makespan against each baseline (difference = baseline - {candidate}):")
    table = pd.DataFrame(result.comparison).T[["chunks", "lower", "equal", "higher", "mean_difference",
                                               "std_difference"]]
    print(table.to_string(float_format=lambda v: f"{v:.2f}"))
    for path in result.plots:
        print(f"plot: {path}")
    return 0
