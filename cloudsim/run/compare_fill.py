"""`compare --fill`: every broker fills a GPU cluster with an openb pod list, once per seed (`cloudsim.run.fill`).

One row per (broker, seed): the failed pods and the curves of `cloudsim.run.fill.FILL_CURVES`, each a mapping
from the arrived GPU request in whole percent of the cluster's GPUs to the mean in that bin. A pod no node could
hold even empty (nine GPUs on nodes of eight, a model no node has) is offered and fails like any pod that finds
no room; the summary counts them (``pods_no_node_holds``). Rows of the list that are no pod (`traces.openb`'s
skips: text where a number belongs, a negative request, a share of several GPUs) are never offered: the summary
counts them by reason (``skipped``), with the loader's ``notes``, as a replay's does. The runs go
through the runner (local processes or Ray); each worker reads the pod and node lists once. With --out:
``runs.parquet`` (one row per run, curves in long form in ``curves.parquet``), ``summary.md`` and two figures:
unallocated GPU against arrived workload (median over seeds with the 25-75 % band, one line per broker) and
bars of unallocated GPU and fragmentation at 100 % arrived.
"""

from __future__ import annotations

import functools
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from agents import make_broker
from agents.heuristics.gpu import target_options
from cloudsim.version import __version__
from cloudsim.run.comparison import CompareResult, markdown_table
from cloudsim.run.config import FillCompareConfig
from cloudsim.run.fill import FILL_CURVES, fill_run
from cloudsim.run.output import ResultFolder, pyplot, save_figure
from cloudsim.engine.specs import unholdable

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AT", "FillSpec", "compare_fill", "curves_frame", "plot_fill_bars", "plot_fill_curves", "run_fill"]

AT = "100"
"""The arrived workload (whole percent of the cluster's GPUs) at which the tables and bars compare brokers."""


@dataclass(frozen=True)
class FillSpec:
    """One fill run: picklable, it names the files and each worker reads them once."""

    pods: str
    nodes: str
    broker: str
    seed: int
    factor: float

    def describe(self) -> str:
        """The run in words, for messages."""
        return f"the fill run of broker {self.broker!r} (seed {self.seed})"


@functools.lru_cache(maxsize=4)
def _inputs(pods: str, nodes: str):
    from cloudsim.engine.fragmentation import TargetWorkload
    from traces.openb import load_openb, machines_openb

    workload = load_openb(pods)
    return machines_openb(nodes), workload, TargetWorkload.of(workload.jobs)


def run_fill(spec: FillSpec) -> dict:
    """A fill run's row (`cloudsim.run.fill.FillRun.row`)."""
    cluster, workload, target = _inputs(spec.pods, spec.nodes)
    return fill_run(cluster, workload.jobs, spec.broker, spec.seed, spec.factor, target).row()


def curves_frame(rows: Sequence[dict]) -> pd.DataFrame:
    """The rows' curves in long form: broker, seed, curve, arrived_pct, value."""
    import pandas as pd
    records = [(row["broker"], row["seed"], curve, int(x), value)
               for row in rows for curve in FILL_CURVES for x, value in row[curve].items()]
    return pd.DataFrame(records, columns=["broker", "seed", "curve", "arrived_pct", "value"])


def plot_fill_curves(curves: pd.DataFrame, path: str | Path, title: str, low: int = 0) -> Path:
    """Unallocated GPU against arrived workload: per broker the median over seeds and the 25-75 % band."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 5))
    part = curves[(curves["curve"] == "unallocated_gpu_pct") & (curves["arrived_pct"] >= low)]
    for broker, rows in part.groupby("broker", sort=False):
        stats = rows.groupby("arrived_pct")["value"].quantile([0.25, 0.5, 0.75]).unstack()
        ax.plot(stats.index, stats[0.5], label=broker)
        ax.fill_between(stats.index, stats[0.25], stats[0.75], alpha=0.2)
    ax.set_xlabel("arrived workload (% of the cluster's GPUs)")
    ax.set_ylabel("unallocated GPU (%)")
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(title)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_fill_bars(table: pd.DataFrame, path: str | Path, title: str) -> Path:
    """Bars per broker (table index): unallocated GPU and fragmentation at 100 % arrived, ± std over seeds."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, metric in zip(axes, ("unallocated_gpu_pct", "fragmentation_gpu_pct")):
        ax.bar(table.index, table[f"{metric}_at_{AT}_mean"], yerr=table[f"{metric}_at_{AT}_std"].fillna(0),
               capsize=4, color="tab:blue", alpha=0.8)
        ax.set_title(f"{metric.replace('_pct', ' (%)').replace('_', ' ')} at {AT} % arrived")
        ax.tick_params(axis="x", rotation=30, labelsize=8)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, path)


def compare_fill(config: FillCompareConfig, argv: Sequence[str] = (), on_row: Callable[[dict], None] | None = None
                 ) -> CompareResult:
    """Every broker's fill runs, one per seed; the table compares them at 100 % arrived workload."""
    import pandas as pd
    source = config.workload
    cluster, workload, target = _inputs(str(source.source), str(source.machine_table))  # a bad file: refused now
    jobs = workload.jobs
    for name in config.chosen_brokers.brokers:  # and a broker that cannot be built
        make_broker(name, seed=0, **target_options(name, target))
    never = len(unholdable(cluster, [job.tasks[0] for job in jobs]))
    specs = [FillSpec(str(source.source), str(source.machine_table), broker, seed, config.fill)
             for broker in config.chosen_brokers.brokers for seed in config.seed_list]
    rows = []
    with ResultFolder.optional(config.report.out, config.report.overwrite) as folder:
        try:
            with config.runner.runner(config.chosen_brokers.brokers) as runner:
                for row in runner.map(run_fill, specs, desc="fill runs", unit="run", name=FillSpec.describe):
                    rows.append(row)
                    if on_row is not None:
                        on_row(row)
        except BaseException:
            if folder is not None and rows:  # the finished runs are kept (in DIR.incomplete)
                curves_frame(rows).to_parquet(folder.staging / "curves.parquet", index=False)
            raise
        runs = pd.DataFrame([{"broker": r["broker"], "seed": r["seed"], "pods": r["pods"],
                              "failed_pods": r["failed_pods"], "wall_s": r["wall_s"],
                              **{f"{c}_at_{AT}": r[c].get(AT, np.nan) for c in FILL_CURVES}} for r in rows])
        columns = ["failed_pods"] + [f"{c}_at_{AT}" for c in FILL_CURVES]
        stats = runs.groupby("broker", sort=False)[columns].agg(["mean", "std"])
        table = pd.DataFrame({f"{c}_{s}": stats[(c, s)] for c in columns for s in ("mean", "std")})
        table.insert(0, "runs", runs.groupby("broker", sort=False).size())
        total = {"summary": True, "fill": config.fill, "brokers": list(config.chosen_brokers.brokers),
                 "runs": len(runs),
                 "pods": len(jobs), "pods_no_node_holds": never, "skipped": workload.skipped, "notes": workload.notes,
                 "seeds": list(config.seed_list), "table": table.reset_index().to_dict("records"),
                 "wall_s": round(float(runs["wall_s"].sum()), 3)}
        if folder is not None:
            out = folder.staging
            runs.to_parquet(out / "runs.parquet", index=False)
            curves = curves_frame(rows)
            curves.to_parquet(out / "curves.parquet", index=False)
            (out / "summary.md").write_text(
                f"Made by `cloudsim {shlex.join(argv)}` (cloudsim {__version__}): mean ± standard deviation over "
                f"seeds, at {AT} % of the cluster's GPUs arrived.\n\n{markdown_table(table)}"
                + (f"\n\nRows of the pod list skipped while loading (not offered), by reason: {workload.skipped}"
                   if workload.skipped else ""))
            name = Path(str(source.source)).name
            plots = [plot_fill_curves(curves, out / "unallocated.png", f"{name}: unallocated GPU (median, 25-75 % "
                                      f"over {len(config.seed_list)} seed(s))", low=50),
                     plot_fill_bars(table, out / "at_100.png", f"{name}: at {AT} % arrived")]
            final = folder.commit()
            total["out"] = str(final)
            total["plots"] = [str(final / p.name) for p in plots]
        return CompareResult(runs, table, total, {})
