"""``cloudsim compare``: many brokers on the same workload (loads, episodes, seeds), with tables and plots."""

from __future__ import annotations

import argparse
import dataclasses


from cloudsim.cli.options import add_section, given, parse_given
from cloudsim.cli.sections import add_run_command, build_sections, json_printer
from cloudsim.run import CompareConfig, FillCompareConfig, compare, strict_json
from cloudsim.run.config.compare import ENV_OPTION, EXPERIMENTS, compare_config

__all__ = ["add_parser", "run"]

EXPERIMENT = "experiment"  # the key of --env among the parsed options


def add_parser(commands, parents: list[argparse.ArgumentParser]) -> None:
    parser = add_run_command(
        commands, parents, "compare", CompareConfig, run,
        help="run many brokers on the same workload (loads, chunks, seeds) and report tables and plots",
        description="Run every broker on the same workload: a trace (its chunks or a job range) or a generator "
                    "(deeprm, poisson, rlsk, alibaba-like) at one or more loads, for several seeds. Prints the "
                    "mean metrics per broker (and load); --out writes runs.parquet, summary.md and PNG plots.")
    group = parser.add_argument_group("experiments (DeepRM's environment, RLSK's federation, the GPU fill)")
    group.add_argument(ENV_OPTION.flag, dest=f"{EXPERIMENT}.env", choices=ENV_OPTION.choices, help=ENV_OPTION.help,
                       default=argparse.SUPPRESS)
    added = {f.name for f in dataclasses.fields(CompareConfig)}
    for experiment in EXPERIMENTS[1:]:  # each experiment's own options
        own = {f.name for f in dataclasses.fields(experiment)} - added
        add_section(group, "command", experiment, only=own)
        added |= own


def run(namespace: argparse.Namespace) -> int:
    config = compare_config(build_sections(namespace, CompareConfig), parse_given(namespace, "command", EXPERIMENTS),
                            given(namespace, EXPERIMENT).get("env"))
    result = compare(config, namespace.argv, json_printer(config))
    if config.report.json:
        print(strict_json(result.total), flush=True)
        return 0
    if isinstance(config, FillCompareConfig):
        _print_fill(config, result)
    else:
        _print_runs(config, result)
    if result.total.get("out"):
        print(f"results: {result.total['out']}")
    for path in result.total.get("plots", []):
        print(f"plot: {path}")
    return 0


def _print_fill(config: CompareConfig, result) -> None:
    """The fill experiment's table at 100 % arrived and its summary line."""
    import pandas as pd
    runs, table = result.runs, result.table
    with pd.option_context("display.max_rows", 500, "display.width", 200):
        print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    print(f"\n{len(runs)} fill run(s): {runs['broker'].nunique()} broker(s) x {len(config.seed_list)} seed(s), "
          f"pods inflated to {config.fill:g} x the cluster's GPUs; {result.total['wall_s']:.1f} s in all")
    if result.total["pods_no_node_holds"]:
        print(f"{result.total['pods_no_node_holds']} of the list's {result.total['pods']} pods fit no node even "
              "empty (counted as failed wherever offered)")
    if result.total["skipped"]:
        print(f"rows of the pod list skipped while loading (not offered), by reason: {result.total['skipped']}")
    if result.total["notes"]:
        print(f"noted while loading: {result.total['notes']}")


def _print_runs(config: CompareConfig, result) -> None:
    """The mean metrics per broker (and load) and the summary line."""
    import pandas as pd
    runs, table = result.runs, result.table
    with pd.option_context("display.max_rows", 500, "display.width", 200):
        shown = table[["runs"] + [c for c in table.columns if c.endswith("_mean")]]
        print(shown.rename(columns=lambda c: c.removesuffix("_mean")).to_string(float_format=lambda v: f"{v:.3f}"))
    sweep = runs["load"].nunique() > 1
    if config.environment == "deeprm":
        print(f"\n{len(runs)} run(s) in DeepRM's environment ({result.total['sizes']} job sizes, "
              f"{result.total['arrivals']} arrivals, "
              f"{result.total['slots']} slots): {runs['broker'].nunique()} broker(s) x {len(config.seed_list)} "
              f"jobset(s)" + (f" x {runs['load'].nunique()} load(s)" if sweep else "")
              + (f"; {int(runs['truncated'].sum())} episode(s) cut at the time cap with jobs never allocated"
                 if runs["truncated"].any() else "; every job ran to its end")
              + f", {result.total['dropped']} dropped at a full backlog")
    else:
        where = " in RLSK's federation (each job sent to a cluster's queue or postponed)" if config.federated else ""
        print(f"\n{len(runs)} run(s){where}: {len(config.chosen_brokers.brokers)} broker(s) x "
              f"{len(config.seed_list)} seed(s)"
              + (f" x {runs['load'].nunique()} load(s)" if sweep else "")
              + ("" if config.workload.is_generator else f" x {runs['chunk'].nunique()} episode(s)")
              + f"; {result.total['wall_s']:.1f} s simulating; every instance finished or failed")
