"""`bench`: a candidate broker against baselines on the same chunks, and the report DeepJS gives
(Table 2: on how many chunks the candidate's makespan is lower, equal or higher; Figures 4, 6 and 7:
the difference per chunk and its spread).

The difference on a chunk is ``baseline makespan - candidate makespan``, so a
positive difference means the candidate finished the chunk sooner.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence


from cloudsim.run.config import BenchConfig
from cloudsim.run.output import pyplot, save_figure
from cloudsim.run.replay import replay

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BenchResult", "bench", "makespan_table", "plot_makespan_differences"]


def _differences(rows: pd.DataFrame, candidate: str, baseline: str) -> pd.Series:
    wide = rows.pivot_table(index="chunk", columns="broker", values="makespan", aggfunc="first")
    return (wide[baseline] - wide[candidate]).dropna()


def makespan_table(rows: pd.DataFrame, candidate: str, baselines: Sequence[str]) -> dict:
    """Per baseline: on how many chunks the candidate's makespan is lower / equal / higher,
    and the mean and standard deviation of (baseline - candidate)."""
    table = {}
    for baseline in baselines:
        diff = _differences(rows, candidate, baseline)
        table[baseline] = {
            "chunks": int(len(diff)),
            "lower": int((diff > 0).sum()),
            "equal": int((diff == 0).sum()),
            "higher": int((diff < 0).sum()),
            "mean_difference": float(diff.mean()) if len(diff) else float("nan"),
            "std_difference": float(diff.std(ddof=0)) if len(diff) else float("nan"),
        }
    return table


def plot_makespan_differences(rows: pd.DataFrame, candidate: str, baselines: Sequence[str],
                              directory: str | Path) -> list[Path]:
    """Write makespan_difference.png (per chunk, as DeepJS Figures 4 and 6) and
    makespan_difference_stats.png (mean +- std and box plot, Figure 7); return the paths."""
    plt = pyplot()
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    diffs = {b: _differences(rows, candidate, b) for b in baselines}

    fig, ax = plt.subplots(figsize=(11, 4))
    for baseline, diff in diffs.items():
        ax.plot(diff.index, diff.to_numpy(), marker=".", linewidth=0.8, label=f"{baseline} - {candidate}")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("chunk")
    ax.set_ylabel("makespan difference (above 0: candidate sooner)")
    ax.set_title(f"Makespan of {', '.join(baselines)} minus {candidate}, per chunk")
    ax.legend()
    ax.grid(alpha=0.3)
    per_chunk = out / "makespan_difference.png"
    fig.tight_layout()
    save_figure(fig, per_chunk, dpi=120)

    fig, (bars, box) = plt.subplots(1, 2, figsize=(10, 4))
    names = list(diffs)
    means = [d.mean() for d in diffs.values()]
    stds = [d.std(ddof=0) for d in diffs.values()]
    bars.bar(names, means, yerr=stds, capsize=6, color="tab:blue", alpha=0.8)
    bars.axhline(0, color="black", linewidth=0.8)
    bars.set_title("mean and standard deviation")
    bars.set_ylabel(f"baseline - {candidate} makespan")
    box.boxplot([d.to_numpy() for d in diffs.values()], tick_labels=names, whis=(0, 100))
    box.axhline(0, color="black", linewidth=0.8)
    box.set_title("min, quartiles, median, max")
    fig.suptitle(f"Makespan difference against {candidate} over "
                 f"{max((len(d) for d in diffs.values()), default=0)} chunks")
    stats = out / "makespan_difference_stats.png"
    fig.tight_layout()
    save_figure(fig, stats, dpi=120)
    return [per_chunk, stats]


@dataclass
class BenchResult:
    """The runs' rows and summary (as `replay` gives them) with the comparison table and plots."""

    rows: list[dict]
    total: dict
    comparison: dict
    plots: list[Path]


def bench(config: BenchConfig, on_row: Callable[[dict], None] | None = None) -> BenchResult:
    """Every broker on every chunk, then the candidate's makespan against each baseline's."""
    import pandas as pd
    result = replay(config, on_row)
    frame = pd.DataFrame(result.rows)
    candidate = config.candidate_name
    baselines = [b for b in config.chosen_brokers.brokers if b != candidate]
    comparison = makespan_table(frame, candidate, baselines)
    plots = plot_makespan_differences(frame, candidate, baselines, config.plots) if config.plots else []
    total = {**result.total, "candidate": candidate, "comparison": comparison}
    if plots:
        total["plots"] = [str(p) for p in plots]
    return BenchResult(result.rows, total, comparison, plots)
