"""``cloudsim plot``: the Gantt chart and utilisation of every run in a folder that a replay wrote."""

from __future__ import annotations

import argparse

from cloudsim.cli.options import add_section, parse_given
from cloudsim.run import PlotConfig, plot_run, run_folders
from cloudsim.run.plots import read_run

__all__ = ["add_parser", "run"]


def add_parser(commands, parents: list[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "plot", parents=parents, allow_abbrev=False, help="draw the runs of a replay's --out folder",
        description="Draw each run's Gantt chart (machines x time) and utilisation over time as gantt.png and "
                    "utilisation.png beside its tables, for every run folder under RUNS.")
    add_section(parser, "command", PlotConfig, "plot options")
    parser.set_defaults(run=run)


def run(namespace: argparse.Namespace) -> int:
    config = PlotConfig(**parse_given(namespace, "command", PlotConfig))
    folders = run_folders(config.folder)
    if not folders:
        raise ValueError(f"{config.folder}: holds no run (no groups.parquet below it); give the folder of a "
                         f"cloudsim replay --out")
    runs = [(folder, read_run(folder)) for folder in folders]  # every run read first: a damaged one draws nothing
    for folder, tables in runs:
        for path in plot_run(folder, config.max_machines, tables):
            print(path, flush=True)
    return 0
