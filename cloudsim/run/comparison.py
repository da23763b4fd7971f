"""What every comparison of brokers reports: the runs' summary table, its Markdown, the plots, the result.

Shared by `cloudsim.run.compare` (brokers of the core) and `cloudsim.run.compare_deeprm` (DeepRM's
own environment), which both import it and not each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence


from cloudsim.engine.metrics import shown_in
from cloudsim.run.output import pyplot, save_figure

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["REPORTED", "RLSK_REPORTED", "CompareResult", "markdown_table", "plot_broker_bars", "plot_metric_vs_load",
           "plot_utilisation_curves", "summarise"]


# ------------------------------------------------------------ many brokers, many runs
# One row per run (broker, load or chunk, seed) with an EpisodeResult summary's numbers.

REPORTED = shown_in("compare")
"""Summary numbers the comparison table shows (mean and standard deviation over runs).

Job completion is DeepRM_Plus's cycling time and job slowdown its weighted
turnaround (DeepRM's slowdown). The task-level ``avg_completion`` and
``avg_slowdown`` (CloudSimPy's, which leave out the wait before a task's first
start) stay in the runs but not in the table.
"""


RLSK_REPORTED = (
    "makespan",
    "total_reward",
    "imbalance_machines",
    "imbalance_resources",
    "mean_utilisation",
    "diff_within_cluster",
    "avg_job_completion",
    "postponements",
    "forced",
)
"""What `compare --env rlsk` tables (`cloudsim.engine.envs.rlsk.federation_metrics`): imbalance_machines is
eq. 8 between clusters, imbalance_resources eq. 7 within them, both averaged over time."""


def summarise(runs: pd.DataFrame, by: Sequence[str], columns: Sequence[str] = REPORTED) -> pd.DataFrame:
    """Mean and standard deviation (ddof 0) of ``columns`` for each group of ``by``, and
    the number of runs; columns are ``<name>_mean`` and ``<name>_std``, in first-seen group order."""
    present = [c for c in columns if c in runs]
    grouped = runs.groupby(list(by), sort=False)[present]
    table = grouped.mean().add_suffix("_mean").join(grouped.std(ddof=0).add_suffix("_std"))
    table = table[[f"{c}_{s}" for c in present for s in ("mean", "std")]]
    table.insert(0, "runs", runs.groupby(list(by), sort=False).size())
    return table


def markdown_table(table: pd.DataFrame, digits: int = 3) -> str:
    """``table`` (from `summarise`) as Markdown, each number as ``mean ± std``."""
    names = [c[: -len("_mean")] for c in table.columns if c.endswith("_mean")]
    index = list(table.index.names)
    header = [*index, "runs", *names]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key, row in table.iterrows():
        keys = key if isinstance(key, tuple) else (key,)
        cells = [str(k) for k in keys] + [str(int(row["runs"]))]
        cells += [f"{row[f'{n}_mean']:.{digits}f} ± {row[f'{n}_std']:.{digits}f}" for n in names]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot_metric_vs_load(runs: pd.DataFrame, path: str | Path, metric: str = "avg_job_slowdown") -> Path:
    """``metric`` against load, one line per broker, mean over seeds with a band of one
    standard deviation (as DeepRM's Figure 4 plots slowdown against load)."""
    plt = pyplot()
    stats = runs.groupby(["broker", "load"], sort=False)[metric].agg(["mean", "std"]).reset_index()
    fig, ax = plt.subplots(figsize=(8, 5))
    for broker, rows in stats.groupby("broker", sort=False):
        rows = rows.sort_values("load")
        x = rows["load"].to_numpy(dtype=float) * 100
        mean, std = rows["mean"].to_numpy(dtype=float), rows["std"].to_numpy(dtype=float)
        (line,) = ax.plot(x, mean, marker="o", markersize=3, label=broker)
        ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.12)
    ax.set_xlabel("load (% of capacity)")
    ax.set_ylabel(metric.replace("_", " "))
    seeds = runs["seed"].nunique()
    ax.set_title(f"{metric.replace('_', ' ')} against load (mean of {seeds} seed(s), band: ± 1 std)")
    ax.grid(alpha=0.3)
    ax.legend(ncol=2, fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    return Path(path)


def plot_broker_bars(runs: pd.DataFrame, path: str | Path, title: str,
                     metrics: Sequence[str] = ("avg_job_slowdown", "avg_job_completion", "makespan",
                                               "job_slowdown_p95")) -> Path:
    """One panel per metric: a bar per broker at its mean over ``runs``, error bar ± 1 std."""
    plt = pyplot()
    metrics = [m for m in metrics if m in runs]
    stats = runs.groupby("broker", sort=False)[list(metrics)].agg(["mean", "std"])
    columns = 2
    rows = (len(metrics) + 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(12, 3.6 * rows), squeeze=False)
    for ax, metric in zip(axes.flat, metrics):
        mean, std = stats[(metric, "mean")], stats[(metric, "std")].fillna(0)
        ax.bar(stats.index, mean, yerr=std, capsize=4, color="tab:blue", alpha=0.8)
        ax.set_title(metric.replace("_", " "))
        ax.tick_params(axis="x", rotation=45, labelsize=8)
        ax.grid(axis="y", alpha=0.3)
    for ax in list(axes.flat)[len(metrics):]:
        ax.set_visible(False)
    fig.suptitle(title)
    fig.tight_layout()
    save_figure(fig, path, dpi=120)
    return Path(path)


def plot_utilisation_curves(curves: dict[str, pd.DataFrame], resources: Sequence[str], path: str | Path,
                            title: str, max_machines: int = 8) -> Path:
    """Utilisation over time for one run per broker, as RLSK's Figures 5-9: per row, a
    broker; left, each machine's utilisation per resource (up to ``max_machines``
    machines); right, each machine's mean over resources (RLSK's eq. 5).

    ``curves`` maps a broker to its run's `EpisodeResult.machine_utilisation()`.
    """
    plt = pyplot()
    fig, axes = plt.subplots(len(curves), 2, figsize=(12, 1.9 * len(curves)), squeeze=False, sharex=True)
    styles = ["-", "--", ":", "-."]
    for (broker, frame), (left, right) in zip(curves.items(), axes):
        machines = sorted(frame["machine"].unique())[:max_machines]
        colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for k, machine in enumerate(machines):
            rows = frame[frame["machine"] == machine]
            colour = colours[k % len(colours)]
            for r, resource in enumerate(resources):
                left.step(rows["time"], rows[resource], where="post", color=colour,
                          linestyle=styles[r % len(styles)], linewidth=0.8,
                          label=f"m{machine} {resource}" if len(machines) * len(resources) <= 12 else None)
            right.step(rows["time"], rows[list(resources)].mean(axis=1), where="post", color=colour, linewidth=0.8,
                       label=f"machine {machine}")
        left.set_ylabel(broker)
        left.set_ylim(0, 1.05)
        right.set_ylim(0, 1.05)
        if broker == next(iter(curves)):
            left.set_title("utilisation per machine and resource")
            right.set_title("mean utilisation per machine")
            if left.get_legend_handles_labels()[0]:
                left.legend(fontsize=6, ncol=3, loc="upper right")
            right.legend(fontsize=6, ncol=4, loc="upper right")
    for ax in axes[-1]:
        ax.set_xlabel("time")
    fig.suptitle(title)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.4 / fig.get_figheight()))  # room for the title
    save_figure(fig, path, dpi=80)
    return Path(path)


@dataclass
class CompareResult:
    """Every run's row, the summary table (mean and std per broker, and load), the summary
    object printed by --json, and the utilisation curves of one run per broker."""

    runs: pd.DataFrame
    table: pd.DataFrame
    total: dict
    curves: dict
