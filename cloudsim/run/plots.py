"""Pictures of a replay's run folder: what ran where and when (a Gantt chart), and how much of each
resource the cluster used over time.

Both are drawn from the tables a replay writes with ``--out`` (``groups``, ``tasks``, ``capacity``),
so any run folder can be drawn after the fact, streamed runs included (`cloudsim plot`), and
``cloudsim replay --out DIR --plots`` draws them before the folder appears.

    from cloudsim.run.plots import plot_run
    plot_run("results/episode-all/first-fit")   # gantt.png, utilisation.png
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cloudsim.run.output import pyplot, save_figure

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["GANTT_MACHINES", "RunTables", "lanes", "plot_gantt", "plot_power_and_intensity", "plot_run",
           "plot_utilisation", "read_run",
           "run_folders", "usage_steps"]

GANTT_MACHINES = 64
"""Up to this many machines, the Gantt chart draws every instance group; above it, machines are
gathered into rows and the chart shows how busy each row was over time."""
_HEAT_ROWS = 200
_HEAT_BINS = 400
_LANE_GROUPS = 200_000
_FAILURE_MARKS = 300  # more groups than this are drawn as the heat map whatever the machine count
FIGURES = ("gantt.png", "utilisation.png")
_TABLES = ("groups", "tasks", "capacity")


@dataclass
class RunTables:
    """One run's groups with what each holds, and its machines.

    ``usage`` is (groups, resources): what each group holds of each resource (demand x instances);
    ``capacity`` is (machines, resources).
    """

    groups: pd.DataFrame
    usage: np.ndarray
    capacity: np.ndarray
    resources: tuple[str, ...]
    reservations: pd.DataFrame | None = None  # reservations.parquet's rows; None for a folder without it

    @property
    def makespan(self) -> float:
        ends = self.groups.end.to_numpy()
        return float(np.nanmax(ends)) if len(ends) and not np.all(np.isnan(ends)) else 0.0

    @property
    def start(self) -> np.ndarray:
        return self.groups.start.to_numpy(dtype=float)

    @property
    def span(self) -> float:
        """The time the pictures cover: to the last end (or start), at least 1."""
        return max(self.makespan, float(self.start.max()) if len(self.start) else 0.0) or 1.0

    def ends(self, until: float) -> np.ndarray:
        """Each group's end; a group still running (no end) is taken to hold until ``until``."""
        end = self.groups.end.to_numpy(dtype=float)
        return np.where(np.isnan(end), until, end)


def run_folders(root: str | Path) -> list[Path]:
    """Every run folder under ``root`` (``root`` itself when it is one): folders that hold groups.parquet."""
    root = Path(root)
    if (root / "groups.parquet").is_file():
        return [root]
    return sorted(path.parent for path in root.rglob("groups.parquet"))


def read_run(folder: str | Path) -> RunTables:
    """The tables of run folder ``folder``; a missing or damaged table is a ValueError naming it."""
    import pandas as pd
    folder = Path(folder)
    frames = {}
    for name in _TABLES:
        path = folder / f"{name}.parquet"
        if not path.is_file():
            raise ValueError(f"{folder}: no {name}.parquet; give a run folder that cloudsim replay --out wrote")
        try:
            frames[name] = pd.read_parquet(path)
        except Exception as error:  # pyarrow's errors for a damaged file have no common base
            raise ValueError(f"{path}: cannot be read as Parquet ({type(error).__name__}: {error}); "
                             f"run the replay again") from None
    groups, tasks, capacity = frames["groups"], frames["tasks"], frames["capacity"]
    if groups.empty:
        raise ValueError(f"{folder / 'groups.parquet'}: holds no instance group (nothing ran in this run), so there "
                         f"is nothing to draw; run the replay again or leave this folder out")
    resources = tuple(c for c in capacity.columns if c != "machine_id")
    needed = {"groups": ["job_id", "task_id", "machine", "instances", "start", "end", "outcome"],
              "tasks": ["job_id", "task_id", *(f"demand_{r}" for r in resources)]}
    for name, columns in needed.items():
        missing = [c for c in columns if c not in frames[name].columns]
        if missing:
            raise ValueError(f"{folder / (name + '.parquet')}: lacks column(s) {', '.join(missing)}; "
                             f"it was not written by cloudsim replay --out")
    demand = tasks.set_index(["job_id", "task_id"])[[f"demand_{r}" for r in resources]]
    keys = pd.MultiIndex.from_frame(groups[["job_id", "task_id"]])
    rows = demand.index.get_indexer(keys)
    if (rows < 0).any():
        raise ValueError(f"{folder}: {int((rows < 0).sum())} group(s) name a task that tasks.parquet lacks; "
                         f"the folder mixes runs: run the replay again")
    usage = demand.to_numpy(dtype=np.float64)[rows] * groups.instances.to_numpy(dtype=np.float64)[:, None]
    reservations = None
    path = folder / "reservations.parquet"
    if path.is_file():  # folders written before reservations were recorded have none
        try:
            reservations = pd.read_parquet(path, columns=["made", "machine", "start", "outcome"])
        except Exception as error:
            raise ValueError(f"{path}: cannot be read as the reservations a replay writes ({type(error).__name__}: "
                             f"{error}); run the replay again") from None
    return RunTables(groups, usage, capacity[list(resources)].to_numpy(dtype=np.float64), resources, reservations)


def usage_steps(start: np.ndarray, end: np.ndarray, usage: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(instants, what is in use from each instant on): the step function of groups holding ``usage``
    (groups x resources) over [start, end). Ends at an instant are applied before its starts."""
    times = np.concatenate([end, start])
    change = np.concatenate([-usage, usage])
    order = np.argsort(times, kind="stable")  # ends first at equal times: they come first in `times`
    times, level = times[order], np.cumsum(change[order], axis=0)
    last = np.r_[times[1:] != times[:-1], True]  # one step per instant: its level after every change
    return times[last], level[last]


def lanes(machine: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Each group's lane within its machine's row: the first lane free at its start (groups that overlap
    in time get different lanes), so that a row shows every group without drawing one over another."""
    lane = np.zeros(len(machine), dtype=np.int64)
    order = np.lexsort((start, machine))
    free_at: list[tuple[float, int]] = []  # (when the lane frees, lane) of the machine in hand
    used = 0
    current = None
    for g in order:
        if machine[g] != current:
            current, free_at, used = machine[g], [], 0
        if free_at and free_at[0][0] <= start[g]:
            _, k = heapq.heappop(free_at)
        else:
            k, used = used, used + 1
        lane[g] = k
        heapq.heappush(free_at, (end[g], k))
    return lane


def _binned(rows: np.ndarray, start: np.ndarray, end: np.ndarray, weight: np.ndarray, n_rows: int,
            edges: np.ndarray) -> np.ndarray:
    """(rows, bins): the time integral of ``weight`` held over [start, end) in each row and time bin,
    divided by the bin's width: the mean held during the bin."""
    bins = len(edges) - 1
    first = np.clip(np.searchsorted(edges, start, side="right") - 1, 0, bins - 1)
    last = np.maximum(np.clip(np.searchsorted(edges, end, side="left") - 1, 0, bins - 1), first)
    out = np.zeros((n_rows, bins + 1))
    width = edges[1] - edges[0]
    same = first == last
    np.add.at(out, (rows[same], first[same]), weight[same] * (end[same] - start[same]))
    split = ~same
    r, f, t, w = rows[split], first[split], last[split], weight[split]
    np.add.at(out, (r, f), w * (edges[f + 1] - start[split]))
    np.add.at(out, (r, t), w * (end[split] - edges[t]))
    middle = np.zeros((n_rows, bins + 1))  # whole bins f+1 .. t-1, as a difference along time
    np.add.at(middle, (r, f + 1), w * width)
    np.add.at(middle, (r, t), -w * width)
    out += np.cumsum(middle, axis=1)
    return out[:, :bins] / width


def _mark_failures(ax, end: np.ndarray, row: np.ndarray, failed: np.ndarray) -> None:
    """A red x where a machine failure ended a group; beyond `_FAILURE_MARKS`, an even sample of them,
    so that the marks do not hide the chart (the legend says how many are shown)."""
    where = np.flatnonzero(failed)
    if not len(where):
        return
    shown = where[np.linspace(0, len(where) - 1, _FAILURE_MARKS).astype(np.int64)] \
        if len(where) > _FAILURE_MARKS else where
    label = "ended by a machine failure" + (f" ({len(shown)} of {len(where)} shown)" if len(shown) < len(where) else "")
    ax.plot(end[shown], row[shown], "x", color="red", markersize=4, alpha=0.7, label=label)


def _mark_reservations(ax, reservations: pd.DataFrame | None, row_of: np.ndarray) -> None:
    """Each reservation as a thin line on its machine's row from when it was made to when it was to
    start, ending in a triangle (started) or a hollow circle (cancelled: its machine could not hold it);
    beyond `_FAILURE_MARKS`, an even sample."""
    if reservations is None or not len(reservations):
        return
    shown = reservations.iloc[np.linspace(0, len(reservations) - 1, _FAILURE_MARKS).astype(np.int64)] \
        if len(reservations) > _FAILURE_MARKS else reservations
    row = row_of[shown.machine.to_numpy(dtype=np.int64)]
    made, start = shown.made.to_numpy(dtype=float), shown.start.to_numpy(dtype=float)
    ax.hlines(row, made, start, colors="black", linewidth=0.6, alpha=0.6)
    sample = f", {len(shown)} of {len(reservations)} shown" if len(shown) < len(reservations) else ""
    started = (shown.outcome == "started").to_numpy()
    ax.plot(start[started], row[started], ">", color="black", markersize=4,
            label=f"reserved: made, then started{sample}")
    if (~started).any():
        ax.plot(start[~started], row[~started], "o", markerfacecolor="none", color="black", markersize=4,
                label="reservation not started (machine failed, or the run ended)")


def plot_gantt(run: RunTables, path: str | Path, max_machines: int = GANTT_MACHINES,
               title: str = "") -> Path:
    """Machines x time. Up to ``max_machines`` machines (and `_LANE_GROUPS` groups), every instance
    group is a bar in its machine's row, coloured by job, groups that overlap in time on separate
    lanes; above, consecutive machines share a row and the colour is the mean share of the first
    resource in use. A group a machine failure ended is marked with a red x at its end; a reservation
    is a line from when it was made to its start."""
    import pandas as pd
    plt = pyplot()
    g = run.groups
    machines = len(run.capacity)
    start, span = run.start, run.span
    end = run.ends(span)
    machine = g.machine.to_numpy(dtype=np.int64)
    failed = g.outcome.isin(["failed", "requeued"]).to_numpy()
    fig, ax = plt.subplots(figsize=(12, 6))
    if machines <= max_machines and len(g) <= _LANE_GROUPS:
        from matplotlib.collections import PolyCollection

        lane = lanes(machine, start, end)
        depth = np.zeros(machines, dtype=np.int64)
        np.maximum.at(depth, machine, lane + 1)
        height = 0.9 / np.maximum(depth[machine], 1)
        bottom = machine - 0.45 + lane * height
        boxes = np.stack([np.c_[start, bottom], np.c_[end, bottom], np.c_[end, bottom + height],
                          np.c_[start, bottom + height]], axis=1)
        jobs = pd.factorize(g.job_id)[0]
        colours = plt.get_cmap("tab20")(jobs % 20)
        ax.add_collection(PolyCollection(boxes, facecolors=colours, edgecolors="none"))
        from matplotlib.ticker import MaxNLocator

        ax.set_ylim(-0.6, machines - 0.4)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("machine")
        what = (f"{len(g)} instance groups on {machines} machines, coloured by job "
                f"({jobs.max() + 1 if len(g) else 0} jobs)")
        _mark_failures(ax, end, machine, failed)
        _mark_reservations(ax, run.reservations, np.arange(machines))
    else:
        rows = min(machines, _HEAT_ROWS)
        per_row = int(np.ceil(machines / rows))
        rows = int(np.ceil(machines / per_row))
        row = machine // per_row
        capacity = np.bincount(np.arange(machines) // per_row, weights=run.capacity[:, 0], minlength=rows)
        edges = np.linspace(0.0, span, _HEAT_BINS + 1)
        held = _binned(row, start, end, run.usage[:, 0], rows, edges)
        share = np.divide(held, capacity[:, None], out=np.zeros_like(held), where=capacity[:, None] > 0)
        image = ax.imshow(share, aspect="auto", origin="lower", interpolation="nearest", cmap="viridis",
                          extent=(0.0, span, -0.5, rows - 0.5), vmin=0.0, vmax=float(share.max()) or 1.0)
        fig.colorbar(image, ax=ax, label=f"share of {run.resources[0]} in use")
        ax.set_ylabel(f"machines, {per_row} a row" if per_row > 1 else "machine")
        what = (f"{machines} machines in {rows} rows of {per_row}" if per_row > 1 else f"{machines} machines") + \
            f", {len(g)} instance groups"
        _mark_failures(ax, end, row, failed)
        _mark_reservations(ax, run.reservations, np.arange(machines) // per_row)
    ax.set_xlim(0.0, span)
    ax.set_xlabel("time")
    ax.set_title(f"{title}: {what}" if title else what, fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_utilisation(run: RunTables, path: str | Path, title: str = "") -> Path:
    """The share of the cluster's capacity of each resource held over time (a step line per resource),
    with its time-weighted mean up to the last end in the legend."""
    plt = pyplot()
    span = run.makespan
    times, level = usage_steps(run.start, run.ends(span), run.usage)
    total = run.capacity.sum(axis=0)
    fig, ax = plt.subplots(figsize=(12, 4))
    for k, resource in enumerate(run.resources):
        if total[k] <= 0:
            continue  # no machine has any: a share of nothing
        share = np.r_[0.0, level[:, k] / total[k]]
        at = np.r_[0.0, times]
        held = np.diff(np.r_[at, span]) if span > 0 else np.zeros(len(at))
        mean = float((share * held).sum() / span) if span > 0 else 0.0
        ax.step(at, share, where="post", label=f"{resource} (mean {mean:.1%})")
    ax.set_xlim(0.0, span or 1.0)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("time")
    ax.set_ylabel("share of the cluster in use")
    ax.set_title(title or "utilisation", fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_power_and_intensity(power: dict, signal, path: str | Path, first: float, last: float,
                             title: str = "") -> Path:
    """Power over run times ``first`` to ``last`` of each run of ``power`` (label -> ``(times, watts)``, a step
    function, as `cloudsim.engine.energy.EnergyReport.power` gives it; shown in kW), with the grid's intensity
    (``signal``, a `cloudsim.engine.carbon.GridSignal`) on a second axis: where shifted work went, against when the
    grid was clean. The time axis is in hours from ``first``."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(12, 4))
    hours = 3600.0
    for label, (times, watts) in power.items():
        times, watts = np.asarray(times, dtype=float), np.asarray(watts, dtype=float)
        shown = (times >= first) & (times <= last)
        before = np.searchsorted(times, first, side="right") - 1
        at = np.r_[first, times[shown], last]
        level = np.r_[watts[before] if before >= 0 else 0.0, watts[shown], watts[shown][-1] if shown.any() else (
            watts[before] if before >= 0 else 0.0)] / 1000.0
        ax.step((at - first) / hours, level, where="post", label=label)
    ax.set_xlabel("hours")
    ax.set_ylabel("power (kW)")
    ax.set_xlim(0.0, (last - first) / hours)
    grid = ax.twinx()
    kept = (signal.times >= first) & (signal.times <= last)
    grid.step((np.r_[first, signal.times[kept]] - first) / hours,
              np.r_[signal.intensity(first), signal.values[kept]], where="post", color="0.45", alpha=0.6, linestyle=":",
              label="carbon intensity")
    grid.set_ylabel("carbon intensity (gCO2e/kWh)", color="0.35")
    lines = ax.get_legend_handles_labels()[0] + grid.get_legend_handles_labels()[0]
    ax.legend(lines, [line.get_label() for line in lines], loc="upper right", fontsize=8)
    ax.set_title(title or "power and carbon intensity", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, path)


def plot_run(folder: str | Path, max_machines: int = GANTT_MACHINES, run: RunTables | None = None) -> list[Path]:
    """Draw ``folder``'s Gantt chart and utilisation (`FIGURES`) into it (from ``run``, its tables, when they
    were read already); returns their paths."""
    folder = Path(folder)
    run = read_run(folder) if run is None else run
    title = "/".join(folder.parts[-2:])
    return [plot_gantt(run, folder / FIGURES[0], max_machines, title),
            plot_utilisation(run, folder / FIGURES[1], title)]
