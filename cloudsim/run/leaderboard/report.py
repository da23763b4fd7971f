"""The leaderboard's report, written from its numbers: ``leaderboard.md``, ``leaderboard.html``, ``ranking.png``,
a ``workload-NAME.png`` per workload and ``leaderboard.json``, naming no path of the machine it ran on."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from agents import plugins
from cloudsim.run.leaderboard.cells import data_label
from cloudsim.run.leaderboard.workloads import BASELINE, HIGHER_IS_BETTER, LEADERBOARD_WORKLOADS
from cloudsim.run.output import portable, pyplot, save_figure, strict_json, write_broker_sources, write_text_atomically
from cloudsim.run.paired import TIE, Paired
from cloudsim.version import __version__

if TYPE_CHECKING:
    import pandas as pd

    from cloudsim.run.config import LeaderboardConfig

STATE = "leaderboard.json"


def _cell_text(table: pd.DataFrame, broker: str, metric: str) -> str:
    row = table.loc[broker]
    if row["not_run"] and row["runs"] == 0:
        return "not run"
    mean, sd = row[f"{metric}_mean"], row[f"{metric}_sd"]
    if not np.isnan(sd) and abs(sd) <= TIE * abs(mean):  # equal values but for rounding
        sd = 0.0
    return "n/a" if np.isnan(mean) else f"{mean:.3g} ± {sd:.2g}"


def _ranked_text(table: pd.DataFrame, ranks: pd.DataFrame, name: str, broker: str, metric: str) -> str:
    """A table cell with the broker's rank on that workload and measure, where it is ranked."""
    column = f"{name} {metric}"
    rank = ranks.loc[broker, column] if column in ranks else np.nan
    return _cell_text(table, broker, metric) + ("" if np.isnan(rank) else f" (#{rank:.0f})")


def _measure_columns(ranking: pd.DataFrame) -> list[str]:
    """The ranking summary's mean-rank-per-measure columns (the rest are totals and counts)."""
    return [c for c in ranking.columns if c not in ("mean_rank", "workloads_run", "surely_better", "surely_worse")]


def _paired_text(result: Paired) -> str:
    """``wins/ties/losses`` and the mean difference with its interval, as % of the baseline's mean."""
    if result.episodes == 0:
        return "-"
    counts = f"{result.wins}/{result.ties}/{result.losses}"
    if np.isnan(result.difference_pct):
        return counts
    if np.isnan(result.low_pct):
        return f"{counts} · {result.difference_pct:+.1f} %"
    return f"{counts} · {result.difference_pct:+.1f} % [{result.low_pct:+.1f}, {result.high_pct:+.1f}]"


SUMMARY_TEXT = ("Mean rank per measure over the workloads ranked by it (1 = best: the lowest value, or the highest "
                "utilisation; ties share the best rank; `gpu`: the GPU workloads' own measures), the mean over "
                "every workload and measure, and in how many workload measures the broker is surely better or "
                "worse than first-fit (the whole 95 % interval of the episode-by-episode difference on that side).")
AGAINST_TEXT = ("Against first-fit, episode by episode: wins / ties / losses, then the mean difference and its 95 % "
                "confidence interval (Student's t over the paired episodes) as % of first-fit's mean. "
                "Bold: the whole interval on the better side; italic: on the worse side.")


def _markdown(config: LeaderboardConfig, tables, ranks, ranking, against, skipped, results: list[dict],
              portable: Callable[[str], str]) -> str:
    wall = sum(r["wall_s"] for r in results)
    lines = ["# Leaderboard", "", f"cloudsim {__version__}; {len(tables)} workload(s) x {len(config.brokers)} "
             f"broker(s); {config.seeds} seed(s) of the generated workloads; cells' run time {wall:.0f} s. "
             f"Values are mean ± standard deviation over each workload's episodes and seeds.", ""]
    keys = _measure_columns(ranking)
    lines += ["## Ranking", "", SUMMARY_TEXT, "",
              "| broker | " + " | ".join(k.replace("_", " ") for k in keys) + " | mean rank | workloads | surely "
              "better / worse than first-fit |", "|---" * (len(keys) + 4) + "|"]
    for broker, row in ranking.iterrows():
        cells = ["-" if np.isnan(row[k]) else f"{row[k]:.2f}" for k in keys + ["mean_rank"]]
        lines.append(f"| {broker} | " + " | ".join(cells) + f" | {int(row['workloads_run'])} | "
                     + (f"{int(row['surely_better'])} / {int(row['surely_worse'])}" if broker != BASELINE else "-")
                     + " |")
    lines += ["", "![ranks on each workload and measure](ranking.png)", ""]
    if not any(against.values()):
        lines += [f"(No comparison with {BASELINE}: add it to --brokers to see wins, ties and losses against it.)", ""]
    for name, table in tables.items():
        spec = LEADERBOARD_WORKLOADS[name]
        columns = spec.metrics + spec.shown
        lines += [f"## {name}", "", spec.description + ".", "",
                  "| broker | runs | " + " | ".join(columns) + " |", "|---" * (len(columns) + 2) + "|"]
        for broker in table.index:
            texts = [_ranked_text(table, ranks, name, broker, metric) for metric in columns]
            lines.append(f"| {broker} | {int(table.loc[broker, 'runs'])} | " + " | ".join(texts) + " |")
        if against.get(name):
            lines += ["", AGAINST_TEXT, "", "| broker | " + " | ".join(spec.metrics) + " |",
                      "|---" * (len(spec.metrics) + 1) + "|"]
            for broker, measures in against[name].items():
                marked = []
                for metric in spec.metrics:
                    text, verdict = _paired_text(measures[metric]), measures[metric].verdict
                    marked.append(f"**{text}**" if verdict == "better" else f"_{text}_" if verdict == "worse" else text)
                lines.append(f"| {broker} | " + " | ".join(marked) + " |")
        lines += ["", f"![{name}]({_plot_name(name)})"]
        refused = table[table.not_run != ""]
        if len(refused):
            lines += [""] + [f"- {broker} not run: {portable(reason)}" for broker, reason in refused.not_run.items()]
        said = {(r["broker"], portable(w)) for r in results if r["workload"] == name for w in r.get("warnings", ())}
        if said:
            lines += [""] + [f"- {broker}: {warning}" for broker, warning in sorted(said)]
        lines.append("")
    if skipped:
        lines += ["## Workloads not run", ""] + [f"- {name}: {portable(why)}" for name, why in skipped.items()] + [""]
    return "\n".join(lines)


def _plot_name(workload: str) -> str:
    return "workload-" + re.sub(r"[^A-Za-z0-9_.+-]", "_", workload) + ".png"


HTML_STYLE = ("body{font-family:sans-serif;max-width:80em;margin:auto;padding:0 1em}table{border-collapse:collapse;"
              "margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th:first-child,"
              "td:first-child{text-align:left}td.better{background:#d9f2d9}td.worse{background:#f8d7d7}"
              "img{max-width:100%}")


def _html(tables, ranks, ranking, against, skipped, results, portable: Callable[[str], str]) -> str:
    def row(cells, tag="td", classes=None):
        classes = classes or [""] * len(cells)
        return "<tr>" + "".join(f"<{tag}{f' class={c}' if c else ''}>{html.escape(str(x))}</{tag}>"
                                for x, c in zip(cells, classes)) + "</tr>"

    keys = _measure_columns(ranking)
    parts = ["<!doctype html><html lang='en'><head><meta charset='utf-8'><title>cloudsim leaderboard</title>",
             f"<style>{HTML_STYLE}</style></head><body>", "<h1>Leaderboard</h1>",
             f"<p>cloudsim {html.escape(__version__)}; {len(tables)} workload(s); values are mean ± standard deviation "
             "over each workload's episodes and seeds.</p>", "<h2>Ranking</h2>",
             f"<p>{html.escape(SUMMARY_TEXT.replace('`', ''))}</p>", "<table id='ranking'>",
             row(["broker"] + [k.replace("_", " ") for k in keys] + ["mean rank", "workloads",
                                                                      "surely better / worse than first-fit"], "th")]
    for broker, r in ranking.iterrows():
        parts.append(row([broker] + ["-" if np.isnan(r[k]) else f"{r[k]:.2f}" for k in keys + ["mean_rank"]]
                         + [int(r["workloads_run"]),
                            f"{int(r['surely_better'])} / {int(r['surely_worse'])}" if broker != BASELINE else "-"]))
    parts += ["</table>", "<p><img src='ranking.png' alt='ranks on each workload and measure'></p>"]
    for name, table in tables.items():
        spec = LEADERBOARD_WORKLOADS[name]
        columns = spec.metrics + spec.shown
        parts += [f"<h2 id='{html.escape(_plot_name(name)[9:-4])}'>{html.escape(name)}</h2>",
                  f"<p>{html.escape(spec.description)}.</p>", "<table class='values'>",
                  row(["broker", "runs"] + list(columns), "th")]
        for broker in table.index:
            texts = [_ranked_text(table, ranks, name, broker, metric) for metric in columns]
            parts.append(row([broker, int(table.loc[broker, "runs"])] + texts))
        parts.append("</table>")
        if against.get(name):
            parts += [f"<p>{html.escape(AGAINST_TEXT.replace('Bold', 'Green').replace('italic', 'red'))}</p>",
                      "<table class='against'>", row(["broker"] + list(spec.metrics), "th")]
            for broker, measures in against[name].items():
                parts.append(row([broker] + [_paired_text(measures[m]) for m in spec.metrics], classes=[""] + [
                    measures[m].verdict if measures[m].verdict != "unsure" else "" for m in spec.metrics]))
            parts.append("</table>")
        parts.append(f"<p><img src='{_plot_name(name)}' alt='{html.escape(name)}: each measure by broker'></p>")
        notes = [f"{broker} not run: {portable(reason)}" for broker, reason in table.not_run.items() if reason]
        notes += sorted({f"{r['broker']}: {portable(w)}" for r in results if r["workload"] == name
                         for w in r.get("warnings", ())})
        if notes:
            parts.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul>")
    if skipped:
        parts += ["<h2>Workloads not run</h2><ul>"] + [f"<li>{html.escape(n)}: {html.escape(portable(w))}</li>"
                                                        for n, w in skipped.items()] + ["</ul>"]
    parts.append("</body></html>")
    return "\n".join(parts)


def _plot_ranking(ranks: pd.DataFrame, order, path: Path) -> Path:
    plt = pyplot()
    ranks = ranks.loc[list(order)]
    values = ranks.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(2.0 + 0.55 * ranks.shape[1], 1.4 + 0.3 * len(ranks)))
    image = ax.imshow(np.ma.masked_invalid(values), cmap="viridis_r", aspect="auto")
    for (i, j), value in np.ndenumerate(values):
        ax.text(j, i, "-" if np.isnan(value) else f"{value:.0f}", ha="center", va="center", fontsize=7,
                color="black" if np.isnan(value) or value <= np.nanmax(values) / 2 else "white")
    ax.set_xticks(range(ranks.shape[1]), [c.replace(" ", "\n").replace("_", " ") for c in ranks.columns],
                  rotation=90, fontsize=7)
    ax.set_yticks(range(len(ranks)), ranks.index, fontsize=8)
    ax.set_title("rank on each workload and measure (1 = best); rows by mean rank", fontsize=9)
    fig.colorbar(image, ax=ax, label="rank", fraction=0.03)
    fig.tight_layout()
    return save_figure(fig, path)


def _plot_workload(name: str, table: pd.DataFrame, path: Path) -> Path:
    """One panel per measure of the workload: each broker's mean with its standard deviation."""
    plt = pyplot()
    metrics = LEADERBOARD_WORKLOADS[name].metrics
    ran = table[table.runs > 0]
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.2 * len(metrics), 1.0 + 0.22 * max(len(ran), 1)),
                             sharey=True, squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        means, sds = ran[f"{metric}_mean"].to_numpy(float), ran[f"{metric}_sd"].to_numpy(float)
        colours = ["tab:orange" if b == BASELINE else "tab:blue" for b in ran.index]
        ax.barh(range(len(ran)), np.nan_to_num(means), xerr=np.nan_to_num(sds), color=colours, ecolor="grey")
        ax.set_title(f"{metric.replace('_', ' ')} ({'higher' if metric in HIGHER_IS_BETTER else 'lower'} is better)",
                     fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0][0].set_yticks(range(len(ran)), ran.index)
    axes[0][0].invert_yaxis()
    fig.suptitle(f"{name}: mean ± standard deviation over episodes", fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)


def _shown_brokers(brokers: tuple[str, ...]) -> dict[str, str]:
    """How the report names each broker given by a file's absolute path, so that it names no path of this
    machine: the path from the current folder when the file is below it, else the file's name and class
    (with `agents.plugins.output_name`'s hash where two would read alike). Other brokers are named as typed."""
    absolute = [b for b in plugins.files(brokers) if Path(b).is_absolute()]
    shown = {}
    for broker in brokers:
        module_part, _, attribute = broker.rpartition(":")
        if module_part not in absolute:
            continue
        path = Path(module_part)
        try:
            shown[broker] = f"{path.relative_to(Path.cwd())}:{attribute}"
        except ValueError:
            shown[broker] = f"{path.name}:{attribute}"
    alike = [b for b in shown if list(shown.values()).count(shown[b]) > 1 or shown[b] in brokers]
    for broker in alike:
        shown[broker] = f"{shown[broker]} ({plugins.output_name(broker)})"
    return dict(sorted(shown.items(), key=lambda item: -len(item[0])))


def write_report(out: Path, config: LeaderboardConfig, tables, ranks, ranking, against, skipped, results) -> None:
    wall = sum(r["wall_s"] for r in results)
    folders = {data_label(config): config.data_folder, "": out.resolve()}
    shown = _shown_brokers(config.brokers)

    def portable_text(text: str) -> str:
        text = portable(text, folders)
        for typed, name in shown.items():
            text = text.replace(typed, name)
        return text
    write_text_atomically(out / "leaderboard.md",
                          portable_text(_markdown(config, tables, ranks, ranking, against, skipped, results,
                                                  portable_text)))
    write_broker_sources(out, config.brokers)
    write_text_atomically(out / "leaderboard.html",
                          portable_text(_html(tables, ranks, ranking, against, skipped, results, portable_text)))
    _plot_ranking(ranks.rename(index=shown), [shown.get(b, b) for b in ranking.index], out / "ranking.png")
    for name, table in tables.items():
        _plot_workload(name, table.rename(index=shown), out / _plot_name(name))
    state = {"version": __version__, "brokers": list(config.brokers), "workloads": list(tables), "seeds": config.seeds,
             "skipped_workloads": {k: portable_text(v) for k, v in skipped.items()}, "cells_wall_s": wall,
             "ranking": json.loads(ranking.to_json(orient="index")), "ranks": json.loads(ranks.to_json(orient="index")),
             "against_first_fit": {name: {broker: {m: result._asdict() for m, result in measures.items()}
                                          for broker, measures in by_broker.items()}
                                   for name, by_broker in against.items()},
             "tables": {k: json.loads(v.to_json(orient="index")) for k, v in tables.items()}}
    write_text_atomically(out / STATE, portable_text(strict_json(state)) + "\n")
