"""`compare`: many brokers on the same workload (trace episodes, or a generator at several loads),
for several seeds, and the tables and plots that report it (DeepRM Figure 4, RLSK Figures 5-9).

One row per run (broker, load or episode, seed) with an `EpisodeResult` summary's
numbers; `summarise` turns the rows into mean and standard deviation per broker
(and load), `markdown_table` into Markdown, and the plots draw them (those live in
`cloudsim.run.comparison`, shared with DeepRM's own environment, and are exported here too).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence


from cloudsim.version import __version__
from cloudsim.run.comparison import (REPORTED, RLSK_REPORTED, CompareResult, markdown_table, plot_broker_bars,
                                     plot_metric_vs_load, plot_utilisation_curves, summarise)
from cloudsim.run.config import CompareConfig, DeepRMCompareConfig, FillCompareConfig
from cloudsim.run.episode import RunSpec, run_one
from cloudsim.run.output import ResultFolder, write_broker_sources
from cloudsim.run.replay import check_accounted
from cloudsim.run.resolve import resolve

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "REPORTED",
    "RLSK_REPORTED",
    "CompareResult",
    "compare",
    "markdown_table",
    "plot_broker_bars",
    "plot_metric_vs_load",
    "plot_utilisation_curves",
    "summarise",
]


def _write_runs(runs: pd.DataFrame, path: Path) -> None:
    # A chunk is an index or a job range ("0:200"): one string column keeps Parquet's types fixed.
    runs.assign(chunk=runs["chunk"].astype("string")).to_parquet(path, index=False)


def compare(config: CompareConfig, argv: Sequence[str] = (), on_row: Callable[[dict], None] | None = None
            ) -> CompareResult:
    """Run every broker on every episode (or load) for each seed; ``on_row`` sees each row when ready.

    Each experiment runs its own way: `DeepRMCompareConfig` in DeepRM's environment
    (`cloudsim.run.compare_deeprm`), `FillCompareConfig` as the fill experiment (`cloudsim.run.compare_fill`),
    `FederationCompareConfig` and `CompareConfig` on the simulator (the former dispatching to clusters).

    With ``config.report.out`` the folder gets runs.parquet, summary.md (with the
    command ``argv`` that made it), brokers.png, slowdown_vs_load.png (a load
    sweep) and utilisation.png; it appears only when complete.
    """
    import pandas as pd
    if isinstance(config, DeepRMCompareConfig):
        from cloudsim.run.compare_deeprm import compare_deeprm

        return compare_deeprm(config, argv, on_row)
    if isinstance(config, FillCompareConfig):
        from cloudsim.run.compare_fill import compare_fill

        return compare_fill(config, argv, on_row)
    brokers = config.chosen_brokers.brokers
    seeds = config.seed_list
    with ResultFolder.optional(config.report.out, config.report.overwrite) as folder:
        if config.workload.is_generator:
            loads = config.load_list
            reference = None if loads[0] is None else min(loads, key=lambda v: abs(v - 0.7))
            run = resolve(config, load=loads[0], seed=seeds[0])  # the cluster, and checks up front
            specs = [RunSpec(plan, seed, run.simulation, label=None, load=load, generate=config,
                             keep="curve" if load == reference and seed == seeds[0] else None)
                     for load in loads for seed in seeds for plan in run.brokers]
            what = config.workload.describe() if reference is None else (
                f"{config.workload.generator_name} at load {reference:g}")
            first_run = what
        else:
            run = resolve(config)
            specs = [RunSpec(plan, seed, run.simulation, label=episode.label, load=episode.offered_load,
                             jobs=episode.jobs, place=run.place,
                             events=episode.events, keep="curve" if k == 0 and seed == seeds[0] else None)
                     for k, episode in enumerate(run.episodes) for seed in seeds for plan in run.brokers]
            labels = [episode.label for episode in run.episodes]
            name = config.workload.describe()
            what = f"{name}, episode(s) {labels[0]}" + (f" to {labels[-1]}" if len(labels) > 1 else "")
            first_run = f"{name}, episode {labels[0]}"
        cluster = run.place.cluster
        rows, curves = [], {}
        try:
            with config.runner.runner(config.chosen_brokers.brokers) as runner:
                for spec, outcome in zip(specs, runner.map(run_one, specs, desc="runs", name=RunSpec.describe)):
                    row = {"broker": spec.broker.name, "load": spec.load, "chunk": spec.label, "seed": spec.seed,
                           **{k: v for k, v in outcome.summary.items() if k != "broker"}}
                    rows.append(row)
                    if outcome.curve is not None:
                        curves[spec.broker.name] = outcome.curve
                    if on_row is not None:
                        on_row(row)
        except BaseException:
            if folder is not None and rows:  # the finished runs are kept (in DIR.incomplete)
                _write_runs(pd.DataFrame(rows), folder.staging / "runs.parquet")
            raise
        check_accounted(rows)
        runs_frame = pd.DataFrame(rows)
        sweep = config.workload.is_generator and runs_frame["load"].nunique() > 1
        if config.federated:  # RLSK's Table 1 and section IV-A's metrics, over clusters
            columns = list(RLSK_REPORTED)
        else:
            columns = list(REPORTED) + [f"utilisation_{r}" for r in cluster.resources]
            columns += ["imbalance_resources", "imbalance_machines"]
        if config.simulation.mtbf is not None or (runs_frame["instance_restarts"].sum()
                                                 + runs_frame["instances_failed"].sum()) > 0:
            columns += ["instances_failed", "instance_restarts"]
        table = summarise(runs_frame, ["load", "broker"] if sweep else ["broker"], columns)
        total = {"summary": True, "brokers": list(brokers), "runs": len(runs_frame), "seeds": list(seeds),
                 "loads": sorted(runs_frame["load"].dropna().unique().tolist()),
                 "chunks": runs_frame["chunk"].dropna().unique().tolist(),
                 "table": table.reset_index().to_dict("records"),
                 "wall_s": round(float(runs_frame["wall_s"].sum()), 3)}
        if folder is not None:
            out = folder.staging
            write_broker_sources(out, config.chosen_brokers.brokers)
            _write_runs(runs_frame, out / "runs.parquet")
            (out / "summary.md").write_text(f"Made by `cloudsim {shlex.join(argv)}` (cloudsim {__version__}): "
                                            f"mean ± standard deviation over runs.\n\n{markdown_table(table)}")
            per_broker = len(runs_frame) // len(brokers) // (runs_frame["load"].nunique() if sweep else 1)
            bars = runs_frame[runs_frame["load"] == reference] if sweep else runs_frame
            plots = [plot_broker_bars(bars, out / "brokers.png",
                                      f"{what}: mean ± std over {per_broker} run(s) per broker")]
            if sweep:
                plots.append(plot_metric_vs_load(runs_frame, out / "slowdown_vs_load.png"))
            if curves:
                plots.append(plot_utilisation_curves(curves, cluster.resources, out / "utilisation.png",
                                                     f"{first_run}, seed {seeds[0]}"))
            final = folder.commit()
            total["out"] = str(final)
            total["plots"] = [str(final / p.name) for p in plots]
        return CompareResult(runs_frame, table, total, curves)
