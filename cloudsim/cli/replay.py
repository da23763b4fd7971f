"""``cloudsim replay``: replay a workload under one or more brokers and print the metrics."""

from __future__ import annotations

import argparse


from cloudsim.cli.sections import add_run_command, build_run_config, json_printer
from cloudsim.engine.metrics import shown_in
from cloudsim.run import RunConfig, replay, strict_json

__all__ = ["add_parser", "print_table", "run"]

REPORTED = shown_in("replay")


def add_parser(commands, parents: list[argparse.ArgumentParser]) -> None:
    add_run_command(
        commands, parents, "replay", RunConfig, run,
        help="replay a workload under one or more brokers",
        description="Replay a trace (or, without one, a generated workload) under each broker and print "
                    "metrics per episode: a table, or with --json one JSON object per run and a summary line.")


def run(namespace: argparse.Namespace) -> int:
    config = build_run_config(namespace, RunConfig)
    result = replay(config, json_printer(config))
    if config.report.json:
        print(strict_json(result.total), flush=True)
    else:
        print_table(result.rows, result.total)
    return 0


def print_table(rows: list[dict], total: dict) -> None:
    """The rows as a table, the mean per broker when there are several episodes, and the accounting."""
    import pandas as pd
    frame = pd.DataFrame(rows)
    if len(frame):
        key = frame.columns[0]
        reported = [measure for measure in REPORTED if measure in frame]  # energy only where a run has a model
        columns = [key, "broker", *reported, "jobs", "tasks", "instances", "wall_s"]
        with pd.option_context("display.max_rows", 200, "display.width", 160):
            print(frame[columns].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
            if len(frame) > len(total["brokers"]):
                print()
                means = frame.groupby("broker", sort=False)[reported].mean()
                print(means.to_string(float_format=lambda v: f"{v:.3f}"))
    print(f"\n{total['episodes']} episode(s) x {len(total['brokers'])} broker(s): {total['jobs']} jobs, "
          f"{total['tasks']} tasks, {total['instances']} instances per broker; finished {total['finished']}, "
          f"failed {total['failed']}, restarts {total['restarts']}"
          + (f", suspensions {total['suspensions']}" if "suspensions" in total else "")
          + f"; {total['wall_s']:.2f} s simulating")
    for key, what in (("skipped", "skipped while loading (tasks, by reason)"),
                      ("notes", "noted while loading"),
                      ("machines_skipped", "machine table rows skipped"),
                      ("machine_notes", "noted in the machine table")):
        if total.get(key):
            print(f"{what}: {total[key]}")
    if total.get("out"):
        print(f"results: {total['out']}")
