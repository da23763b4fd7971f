"""``cloudsim leaderboard``: every broker on every workload, one report folder."""

from __future__ import annotations

import argparse
import sys

from cloudsim.cli.sections import add_runner_sections, build_runner_config
from cloudsim.run import LeaderboardConfig, leaderboard

__all__ = ["add_parser", "run"]


def add_parser(commands, parents: list[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "leaderboard", parents=parents, allow_abbrev=False, help="every broker on every workload, one report",
        description="Run each broker on each workload (CloudSimPy chunks, chunks of the v2017 and v2018 samples at "
                    "loads 0.8 and 1.1 on machines drawn from their tables, the SWF sample, a generated workload "
                    "over seeds, the GPU trace) through the runner, and write leaderboard.md, leaderboard.html, "
                    "ranking.png and a picture per workload into --out DIR: ranks per measure, and each broker "
                    "against first-fit episode by episode. Finished cells are kept in DIR/cells: run the same "
                    "command again to resume.")
    add_runner_sections(parser, LeaderboardConfig, "where the cells run", "leaderboard options")
    parser.set_defaults(run=run)


def run(namespace: argparse.Namespace) -> int:
    config = build_runner_config(namespace, LeaderboardConfig)
    result = leaderboard(config, lambda cell: print(
        f"{cell['workload']} {cell['broker']} seed {cell['seed']}: "
        + (f"{len(cell['rows'])} run(s), {cell['wall_s']:.1f} s" if cell["status"] == "ok"
           else f"{cell['status']}: {cell['reason']}"), flush=True))
    print()
    print(result.ranking.to_string(float_format=lambda v: f"{v:.2f}", na_rep="-"))
    for name, why in result.skipped_workloads.items():
        print(f"workload {name} not run: {why}")
    print(f"\n{result.ran} cell(s) run now, {result.kept} kept from before; report: {result.out / 'leaderboard.md'}")
    if result.failed:
        first, reason = next(iter(result.failed.items()))
        print(f"cloudsim: {len(result.failed)} cell(s) failed and are not kept ({', '.join(result.failed)}); "
              "the first: "
              f"{reason}. Fix the cause and run the same command again to run them", file=sys.stderr)
        return 1
    return 0
