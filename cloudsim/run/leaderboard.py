"""`leaderboard`: every broker on every workload, one report.

A cell is one broker on one workload (and one seed, for a generated workload): a replay whose rows are
kept in ``DIR/cells/`` as soon as it ends, so an interrupted leaderboard picks up where it stopped and a
finished cell is never run again. A broker that refuses a workload (a learned broker trained for other
machines or resources, say) is a cell too, with the reason, shown as "not run" in the tables. The
report (``leaderboard.md``, ``leaderboard.html``, ``ranking.png``, ``leaderboard.json``) is written
from the cells at the end: one table per workload (mean and spread of makespan, job completion, job
slowdown and cpu utilisation over its episodes and seeds; for the GPU workloads, unallocated GPU and
fragmentation) and the ranking across workloads.

    from cloudsim.run import LeaderboardConfig, leaderboard
    leaderboard(LeaderboardConfig(out="board", brokers=("first-fit", "tetris"), workloads=("synthetic",)))
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
import shutil
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from agents import GPU_POLICIES, GPU_VARIANTS
from cloudsim.version import __version__
from cloudsim.run.config import (BrokerConfig, ClusterConfig, ConfigError, LeaderboardConfig, RunConfig,
                                 RunnerConfig, SimulationConfig, WorkloadConfig)
from cloudsim.run.compare_fill import AT, FillSpec, run_fill
from cloudsim.run.fill import FILL_CURVES
from cloudsim.run.output import mark_results, pyplot, save_figure, strict_json, write_broker_sources, write_text_atomically
from cloudsim.run.replay import replay
from cloudsim.runner import Runner
from traces.rawcsv import TraceFormatError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LEADERBOARD_WORKLOADS", "LeaderboardResult", "leaderboard"]

RANKED_BY = "avg_job_slowdown"
METRICS = ("makespan", "avg_job_completion", "avg_job_slowdown", "utilisation_cpu")
GPU_FILL_METRICS = (f"unallocated_gpu_pct_at_{AT}", f"fragmentation_gpu_pct_at_{AT}", "failed_pods")
GPU_REPLAY_METRICS = ("gpu_fragmentation_pct_mean", "gpu_allocated_pct_mean", "avg_job_slowdown", "makespan")
GPU_DATA = "alibaba/gpu-v2023"
STATE = "leaderboard.json"
FAILED = "failed"
"""A cell's status when its run failed (damaged or missing data, an internal error): it is not kept as done,
so the next run of the board runs it again, and the board exits non-zero naming it."""
CELL_KEYS = ("workload", "broker", "seed", "status", "reason", "rows", "wall_s")


@dataclass(frozen=True)
class BoardWorkload:
    """One workload of the leaderboard: the files it needs under the data folder, and how to run a cell:
    a replay (``make(paths of those files, seed)``), or with ``fill`` a fill run of the pod list and node list
    in ``files`` (`cloudsim.run.fill`) at that factor. ``metrics`` are its table's columns and ``ranked_by``
    the one brokers are ranked by (lower is better)."""

    description: str
    files: tuple[str, ...]
    make: Callable[[list[str], int], RunConfig] | None = None
    seeded: bool = False  # generated, or shuffled by the seed: one cell per seed
    metrics: tuple[str, ...] = METRICS
    ranked_by: str = RANKED_BY
    fill: float | None = None
    gpu: bool = False  # a GPU cluster: the GPU policies run here, and only here

    def brokers(self, brokers: tuple[str, ...]) -> tuple[str, ...]:
        """The brokers of ``brokers`` that run on this workload (the GPU policies on GPU workloads only)."""
        return brokers if self.gpu else tuple(b for b in brokers if b not in GPU_POLICIES and b not in GPU_VARIANTS)


def _alibaba(trace_format: str, jobs: tuple[int, int]) -> Callable[[list[str], int], RunConfig]:
    """A job range of an Alibaba trace on the machines of its machine table (``paths``: trace, table)."""
    return lambda paths, seed: RunConfig(workload=WorkloadConfig(
        paths[0], format=trace_format, jobs=jobs, machine_table=paths[1], seed=seed))


LEADERBOARD_WORKLOADS: dict[str, BoardWorkload] = {
    "cloudsimpy": BoardWorkload(
        "CloudSimPy's jobs.csv (Alibaba v2017), chunks 0-4 of 10 jobs, DeepJS's 5 machines, tick 1",
        ("cloudsimpy/jobs.csv",),
        lambda paths, seed: RunConfig(
            workload=WorkloadConfig(paths[0], format="cloudsimpy", chunk_size=10, chunks=(0, 5), seed=seed),
            cluster=ClusterConfig(5, {"cpu": 64.0, "memory": 1.0}),  # its disk demands are all 0
            simulation=SimulationConfig(tick=1.0))),
    "v2017": BoardWorkload(
        "Alibaba v2017 batch_task.csv, jobs 0-99, on server_event.csv's machines",
        ("alibaba/v2017/batch_task.csv", "alibaba/v2017/server_event.csv"), _alibaba("alibaba-v2017", (0, 100))),
    "v2018": BoardWorkload(
        "Alibaba v2018 DAG sample, jobs 0-29, on machine_meta.csv's 4,034 machines",
        ("alibaba/v2018/selected_DAGs.csv", "alibaba/v2018/machine_meta.csv"), _alibaba("alibaba-v2018", (0, 30))),
    "swf": BoardWorkload(
        "Lublin's SWF model log, jobs 0-199, on its 256 nodes",
        ("swf/lublin_256.swf",),
        lambda paths, seed: RunConfig(workload=WorkloadConfig(paths[0], jobs=(0, 200), seed=seed))),
    "synthetic": BoardWorkload(
        "the built-in alibaba-like generator, 30 jobs on 3 machines of 64 cpu and 1 memory (work queues), one "
        "workload per seed",
        (),
        lambda paths, seed: RunConfig(workload=WorkloadConfig(synthetic_jobs=30, seed=seed),
                                      cluster=ClusterConfig(3, {"cpu": 64.0, "memory": 1.0})),
        seeded=True),
    "gpu-fill": BoardWorkload(
        "the Alibaba GPU trace of 2023, default pod list, filled to 1.3 x the 6,212 GPUs of the 1,213 GPU nodes "
        "(Weng et al.'s experiment), one shuffle per seed; ranked by unallocated GPU at 100 % arrived",
        (f"{GPU_DATA}/openb_pod_list_default.csv", f"{GPU_DATA}/openb_node_list_gpu_node.csv"),
        seeded=True, metrics=GPU_FILL_METRICS, ranked_by=GPU_FILL_METRICS[0], fill=1.3, gpu=True),
    "gpu-replay": BoardWorkload(
        "the same pod list replayed at its creation times, each pod for its lifetime in the trace, on the GPU "
        "nodes; ranked by fragmentation over time",
        (f"{GPU_DATA}/openb_pod_list_default.csv", f"{GPU_DATA}/openb_node_list_gpu_node.csv"),
        lambda paths, seed: RunConfig(workload=WorkloadConfig(paths[0], format="openb", machine_table=paths[1],
                                                              seed=seed)),
        metrics=GPU_REPLAY_METRICS, ranked_by=GPU_REPLAY_METRICS[0], gpu=True),
}
"""What each of `cloudsim.run.config.LEADERBOARD_WORKLOADS` is (its names are the config's)."""


@dataclass(frozen=True)
class Cell:
    workload: str
    broker: str
    seed: int
    data: str

    @property
    def key(self) -> str:
        """The cell's file name: a broker given by reference (``path/to/file.py:Class``) has its ``/`` and ``:``
        written as ``_``."""
        return re.sub(r"[^A-Za-z0-9_.+-]", "_", f"{self.workload}--{self.broker}--s{self.seed}")


@dataclass
class LeaderboardResult:
    """The per-workload tables, the ranking, the cells that ran now and those kept from before, and the cells
    that failed (``"workload broker seed N"`` -> reason; not kept, so the next run of the board runs them)."""

    tables: dict[str, pd.DataFrame]
    ranking: pd.DataFrame
    ran: int
    kept: int
    skipped_workloads: dict[str, str]
    out: Path
    failed: dict[str, str] = dataclasses.field(default_factory=dict)


def run_cell(cell: Cell) -> dict:
    """Replay one broker on one workload (and seed) in this process; a refusal is a result too."""
    started = time.perf_counter()
    workload = LEADERBOARD_WORKLOADS[cell.workload]
    paths = [str(Path(cell.data) / name) for name in workload.files]
    with warnings.catch_warnings(record=True) as said:  # kept with the cell, shown in the report
        warnings.simplefilter("always")
        try:
            if workload.fill is not None:
                run = run_fill(FillSpec(paths[0], paths[1], cell.broker, cell.seed, workload.fill))
                rows = [{**{f"{c}_at_{AT}": run[c].get(AT) for c in FILL_CURVES}, "failed_pods": run["failed_pods"]}]
            else:
                config = dataclasses.replace(workload.make(paths, cell.seed), brokers=BrokerConfig((cell.broker,)),
                                             runner=RunnerConfig(workers=1))
                rows = replay(config).rows
            status, reason = "ok", ""
        except (TraceFormatError, OSError, RuntimeError) as error:  # damaged or missing data: not a result
            rows, status, reason = [], FAILED, str(error).splitlines()[0]
        except ValueError as error:  # ConfigError, a checkpoint for other machines, ...: the broker refuses
            rows, status, reason = [], "not run", str(error).splitlines()[0]
    return {**dataclasses.asdict(cell), "status": status, "reason": reason, "rows": rows,
            "warnings": sorted({str(w.message) for w in said}), "wall_s": round(time.perf_counter() - started, 3)}


def _open_folder(config: LeaderboardConfig) -> Path:
    """The report folder: new, or a leaderboard's to resume; ``--overwrite`` starts it afresh."""
    out = Path(config.out)
    if out.exists() and config.overwrite:
        shutil.rmtree(out)
    elif out.exists() and any(out.iterdir()) and not (out / STATE).is_file() and not (out / "cells").is_dir():
        raise ConfigError("--out", config.out, "holds files that are not a leaderboard's; give a new folder, or "
                          "--overwrite to replace it")
    (out / "cells").mkdir(parents=True, exist_ok=True)
    mark_results(out)
    return out


def leaderboard(config: LeaderboardConfig, on_cell: Callable[[dict], None] | None = None) -> LeaderboardResult:
    """Run every cell not run before (through the runner), then write the report; see the module docstring."""
    data = config.data_folder
    skipped = {name: f"needs {', '.join(missing)} under {data} (--data DIR)"
               for name in config.workloads
               if (missing := [f for f in LEADERBOARD_WORKLOADS[name].files if not (data / f).is_file()])}
    workloads = [name for name in config.workloads if name not in skipped]
    if not workloads:
        raise ConfigError("--workloads", ",".join(config.workloads), "none of them can run: " +
                          "; ".join(f"{k} {v}" for k, v in skipped.items()))
    idle = [b for b in config.brokers if not any(b in LEADERBOARD_WORKLOADS[name].brokers((b,)) for name in workloads)]
    if idle:
        raise ConfigError("--brokers", ",".join(config.brokers), f"{', '.join(idle)} is a GPU policy, which runs on the "
                          f"GPU workloads only (gpu-fill, gpu-replay), and none of --workloads {','.join(workloads)} "
                          "has GPUs; add a GPU workload, or leave it out")
    out = _open_folder(config)
    cells = [Cell(name, broker, seed, str(data)) for name in workloads
             for broker in LEADERBOARD_WORKLOADS[name].brokers(config.brokers)
             for seed in (range(config.seeds) if LEADERBOARD_WORKLOADS[name].seeded else (0,))]
    done = {}
    for path in sorted((out / "cells").glob("*.json")):
        cell = _read_cell(path)
        if cell is not None and cell["status"] != FAILED:
            done[path.stem] = cell
    todo = [cell for cell in cells if cell.key not in done]
    runner = config.runner
    try:
        with Runner(runner.executor, runner.workers, runner.address) as pool:
            for cell, result in zip(todo, pool.map(run_cell, todo, desc="leaderboard", unit="cell")):
                if result["status"] != FAILED:  # a failed cell runs again next time
                    write_text_atomically(out / "cells" / f"{cell.key}.json", strict_json(result) + "\n")
                done[cell.key] = result
                if on_cell is not None:
                    on_cell(result)
    except KeyboardInterrupt as stop:  # Ctrl-C or SIGTERM: say what is kept and how to go on
        stop.add_note(f"{len(done)} of {len(cells)} cell(s) are kept in {out / 'cells'}; run the same command "
                      f"again to run the others and write the report")
        raise
    results = [done[cell.key] for cell in cells]
    tables = {name: _table([r for r in results if r["workload"] == name],
                           LEADERBOARD_WORKLOADS[name].brokers(config.brokers), LEADERBOARD_WORKLOADS[name].metrics)
              for name in workloads}
    ranking = _ranking(tables)
    _write_report(out, config, tables, ranking, skipped, results)
    failed = {f"{r['workload']} {r['broker']} seed {r['seed']}": r["reason"] for r in results if r["status"] == FAILED}
    return LeaderboardResult(tables, ranking, len(todo), len(cells) - len(todo), skipped, out, failed)


def _read_cell(path: Path) -> dict | None:
    """A kept cell, or None (after a note on stderr) when its file is damaged: the cell is run again."""
    try:
        cell = json.loads(path.read_text())
        if not isinstance(cell, dict):
            raise ValueError("it is not a JSON object")
        missing = [key for key in CELL_KEYS if key not in cell]
        if missing:
            raise ValueError(f"it lacks {', '.join(missing)}")
        return cell
    except (OSError, ValueError) as err:  # ValueError: JSON, UTF-8 and shape alike
        print(f"cloudsim: leaderboard cell {path} is damaged ({type(err).__name__}: {str(err).splitlines()[0][:120]}); "
              "running that cell again", file=sys.stderr, flush=True)
        path.unlink(missing_ok=True)
        return None


def _table(results: list[dict], brokers: tuple[str, ...], metrics: tuple[str, ...]) -> pd.DataFrame:
    """One row per broker: mean and standard deviation of each metric over its episodes and seeds."""
    import pandas as pd
    rows = []
    for broker in brokers:
        mine = [r for r in results if r["broker"] == broker]
        runs = [row for r in mine for row in r["rows"]]
        refused = next(((r["reason"] if r["status"] != FAILED else f"failed: {r['reason']}") for r in mine
                        if r["status"] != "ok"), "")
        row: dict = {"broker": broker, "runs": len(runs), "not_run": refused}
        for metric in metrics:
            values = np.array([np.nan if run.get(metric) is None else run[metric] for run in runs], dtype=float)
            known = values[~np.isnan(values)]  # a metric a run does not have (JSON null) is left out
            row[f"{metric}_mean"] = float(known.mean()) if len(known) else np.nan
            row[f"{metric}_sd"] = float(known.std()) if len(known) else np.nan
        rows.append(row)
    return pd.DataFrame(rows).set_index("broker")


def _ranking(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each broker's rank on each workload by the workload's measure (``ranked_by``: mean job slowdown, or for
    the GPU workloads unallocated GPU and fragmentation; 1 is the lowest, ties share the best rank), and its
    mean rank over the workloads it ran."""
    import pandas as pd
    ranks = pd.DataFrame({name: table[f"{LEADERBOARD_WORKLOADS[name].ranked_by}_mean"].rank(method="min")
                          for name, table in tables.items()})
    ranks["workloads_run"] = ranks.notna().sum(axis=1)
    ranks["mean_rank"] = ranks[list(tables)].mean(axis=1)
    return ranks.sort_values(["mean_rank", "workloads_run"], ascending=[True, False])


def _cell_text(table: pd.DataFrame, broker: str, metric: str) -> str:
    row = table.loc[broker]
    if row["not_run"] and row["runs"] == 0:
        return "not run"
    mean, sd = row[f"{metric}_mean"], row[f"{metric}_sd"]
    return "n/a" if np.isnan(mean) else f"{mean:.3g} ± {sd:.2g}"


def _markdown(config: LeaderboardConfig, tables, ranking, skipped, results: list[dict]) -> str:
    wall = sum(r["wall_s"] for r in results)
    lines = ["# Leaderboard", "", f"cloudsim {__version__}; {len(tables)} workload(s) x {len(config.brokers)} "
             f"broker(s); {config.seeds} seed(s) of the generated workloads; cells' run time {wall:.0f} s. "
             f"Values are mean ± standard deviation over each workload's episodes and seeds.", ""]
    measures = ", ".join(f"{name}: {LEADERBOARD_WORKLOADS[name].ranked_by.replace('_', ' ')}" for name in tables)
    lines += ["## Ranking", "", f"Rank on each workload by its measure, 1 = lowest ({measures}); mean rank over "
              "the workloads each broker ran.", "",
              "| broker | " + " | ".join(tables) + " | mean rank |", "|---" * (len(tables) + 2) + "|"]
    for broker, row in ranking.iterrows():
        ranks = [("-" if np.isnan(row[name]) else f"{row[name]:.0f}") for name in tables]
        mean = "-" if np.isnan(row["mean_rank"]) else f"{row['mean_rank']:.2f}"
        lines.append(f"| {broker} | " + " | ".join(ranks) + f" | {mean} |")
    lines += ["", "![ranks](ranking.png)", ""]
    for name, table in tables.items():
        metrics = LEADERBOARD_WORKLOADS[name].metrics
        lines += [f"## {name}", "", LEADERBOARD_WORKLOADS[name].description + ".", "",
                  "| broker | runs | " + " | ".join(metrics) + " |", "|---" * (len(metrics) + 2) + "|"]
        for broker in table.index:
            lines.append(f"| {broker} | {int(table.loc[broker, 'runs'])} | "
                         + " | ".join(_cell_text(table, broker, m) for m in metrics) + " |")
        refused = table[table.not_run != ""]
        if len(refused):
            lines += [""] + [f"- {broker} not run: {reason}" for broker, reason in refused.not_run.items()]
        said = {(r["broker"], w) for r in results if r["workload"] == name for w in r.get("warnings", ())}
        if said:
            lines += [""] + [f"- {broker}: {warning}" for broker, warning in sorted(said)]
        lines.append("")
    if skipped:
        lines += ["## Workloads not run", ""] + [f"- {name}: {why}" for name, why in skipped.items()] + [""]
    return "\n".join(lines)


def _html(tables, ranking) -> str:
    import pandas as pd
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>cloudsim leaderboard</title>",
             "<style>body{font-family:sans-serif;max-width:70em;margin:auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}</style></head><body>",
             "<h1>Leaderboard</h1><h2>Ranking</h2>", ranking.to_html(float_format=lambda v: f"{v:.2f}", na_rep="-"),
             "<p><img src='ranking.png' alt='ranks'></p>"]
    for name, table in tables.items():
        metrics = LEADERBOARD_WORKLOADS[name].metrics
        shown = pd.DataFrame({m: [_cell_text(table, b, m) for b in table.index] for m in metrics}, index=table.index)
        shown.insert(0, "runs", table.runs.astype(int))
        parts += [f"<h2>{html.escape(name)}</h2><p>{html.escape(LEADERBOARD_WORKLOADS[name].description)}</p>",
                  shown.to_html(escape=True)]
    parts.append("</body></html>")
    return "\n".join(parts)


def _plot_ranking(ranking: pd.DataFrame, names: list[str], path: Path) -> Path:
    plt = pyplot()
    ranks = ranking[names].to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(1.6 + 1.2 * len(names), 0.9 + 0.35 * len(ranking)))
    image = ax.imshow(np.ma.masked_invalid(ranks), cmap="viridis_r", aspect="auto")
    for (i, j), value in np.ndenumerate(ranks):
        ax.text(j, i, "-" if np.isnan(value) else f"{value:.0f}", ha="center", va="center", fontsize=8,
                color="black" if np.isnan(value) or value <= np.nanmax(ranks) / 2 else "white")
    ax.set_xticks(range(len(names)), names)
    ax.set_yticks(range(len(ranking)), ranking.index)
    ax.set_title("rank by each workload's measure (1 = best); rows by mean rank", fontsize=9)
    fig.colorbar(image, ax=ax, label="rank")
    fig.tight_layout()
    return save_figure(fig, path)


def _write_report(out: Path, config: LeaderboardConfig, tables, ranking, skipped, results) -> None:
    wall = sum(r["wall_s"] for r in results)
    text = _markdown(config, tables, ranking, skipped, results)
    write_text_atomically(out / "leaderboard.md", text)
    write_broker_sources(out, config.brokers)
    write_text_atomically(out / "leaderboard.html", _html(tables, ranking))
    _plot_ranking(ranking, list(tables), out / "ranking.png")
    write_text_atomically(out / STATE, strict_json({"version": __version__, "brokers": list(config.brokers), "workloads": list(tables),
                              "seeds": config.seeds, "skipped_workloads": skipped, "cells_wall_s": wall,
                              "ranking": json.loads(ranking.to_json(orient="index")),
                              "tables": {k: json.loads(v.to_json(orient="index")) for k, v in tables.items()}}) + "\n")
