"""`leaderboard`: every broker on every workload, one report.

A cell is one broker on one workload (and one seed, for a generated workload): a replay whose rows are
kept in ``DIR/cells/`` as soon as it ends, so an interrupted leaderboard picks up where it stopped and a
finished cell is never run again. A broker that refuses a workload (a learned broker trained for other
machines or resources, say) is a cell too, with the reason, shown as "not run" in the tables.

The report (``leaderboard.md``, ``leaderboard.html``, ``ranking.png``, a ``workload-NAME.png`` per workload,
``leaderboard.json``) is written from the cells at the end. Per workload: the mean and spread of makespan,
job completion, job slowdown and cpu utilisation over its episodes and seeds (for the GPU workloads,
unallocated GPU and fragmentation), each broker's rank on each measure, and each broker against first-fit
episode by episode (wins / ties / losses, the mean difference and its 95 % interval: `cloudsim.run.paired`).
Across workloads: the mean rank per measure, and where a broker is surely better or worse than first-fit.
The real-trace workloads replay chunks of the Alibaba traces at two offered loads on a few of their own
machines, so that queues form and the brokers can differ. The report names no path of the machine it ran on.

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

from agents import GPU_POLICIES, GPU_VARIANTS, builtin_source, plugins
from cloudsim.foreign import ClusterRefused
from cloudsim.version import __version__
from cloudsim.run.config import (BrokerConfig, ClusterConfig, ConfigError, LeaderboardConfig, RunConfig,
                                 RunnerConfig, SimulationConfig, WorkloadConfig)
from cloudsim.run.compare_fill import AT, FillSpec, run_fill
from cloudsim.run.fill import FILL_CURVES
from cloudsim.run.output import (mark_results, portable, pyplot, save_figure, strict_json, write_broker_sources,
                                 write_text_atomically)
from cloudsim.run.paired import TIE, Paired, paired
from cloudsim.run.replay import replay

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["LEADERBOARD_WORKLOADS", "LeaderboardResult", "leaderboard"]

METRICS = ("makespan", "avg_job_completion", "avg_job_slowdown", "utilisation_cpu")
GPU_FILL_METRICS = (f"unallocated_gpu_pct_at_{AT}", f"fragmentation_gpu_pct_at_{AT}", "failed_pods")
GPU_REPLAY_METRICS = ("gpu_fragmentation_pct_mean", "gpu_allocated_pct_mean", "avg_job_slowdown", "makespan")
HIGHER_IS_BETTER = frozenset({"utilisation_cpu", "gpu_allocated_pct_mean"})
"""The measures where a higher value is the better one; on every other measure lower is better."""
BASELINE = "first-fit"
"""The broker every other is compared with, episode by episode (`cloudsim.run.paired`)."""
GPU_DATA = "alibaba/gpu-v2023"
STATE = "leaderboard.json"
OK = "ok"
"""A cell's status when its runs finished: its rows are kept."""
NOT_RUN = "not run"
"""A cell's status when its broker refused the workload's machines (its ``check_cluster``,
`cloudsim.foreign.ClusterRefused`): a result too, kept and shown with the reason."""
FAILED = "failed"
"""A cell's status when its run failed (damaged or missing data, a broker that raised or exited, an internal
error): it is not kept as done, so the next run of the board runs it again, and the board exits non-zero
naming it."""
CELL_KEYS = ("workload", "broker", "seed", "status", "reason", "rows", "wall_s")


@dataclass(frozen=True)
class BoardWorkload:
    """One workload of the leaderboard: the files it needs under the data folder, and how to run a cell:
    a replay (``make(paths of those files, seed)``), or with ``fill`` a fill run of the pod list and node list
    in ``files`` (`cloudsim.run.fill`) at that factor. ``metrics`` are its table's columns, ``ranked_by``
    those brokers are ranked by (each on its own), and ``shown`` more columns that are not ranked."""

    description: str
    files: tuple[str, ...]
    make: Callable[[list[str], int], RunConfig] | None = None
    seeded: bool = False  # generated, or shuffled by the seed: one cell per seed
    metrics: tuple[str, ...] = METRICS
    ranked_by: tuple[str, ...] = METRICS
    shown: tuple[str, ...] = ()
    fill: float | None = None
    gpu: bool = False  # a GPU cluster: the GPU policies run here, and only here

    def brokers(self, brokers: tuple[str, ...]) -> tuple[str, ...]:
        """The brokers of ``brokers`` that run on this workload (the GPU policies on GPU workloads only)."""
        return brokers if self.gpu else tuple(b for b in brokers if b not in GPU_POLICIES and b not in GPU_VARIANTS)


REAL_LOADS = (0.8, 1.1)
"""The offered loads of the real-trace workloads: 0.8, below saturation, where queues form in bursts of
arrivals, and 1.1, above it, where they grow until the arrivals end (`traces.load`)."""
REAL_CHUNKS = 6
"""Chunks (episodes) of each real-trace workload: chunks 0 to 5, compared with first-fit episode by episode."""
REAL_TRACES = {
    # name: (title, machine table, files, format, jobs per chunk, machines drawn from the table)
    "v2017": ("Alibaba v2017 batch_task.csv", "server_event.csv",
              ("alibaba/v2017/batch_task.csv", "alibaba/v2017/server_event.csv"), "alibaba-v2017", 10, 3),
    "v2018": ("Alibaba v2018 DAG sample", "machine_meta.csv",
              ("alibaba/v2018/selected_DAGs.csv", "alibaba/v2018/machine_meta.csv"), "alibaba-v2018", 10, 2),
}
"""The real traces the leaderboard replays at `REAL_LOADS`: chunks of 10 jobs, each on a few of the trace's
own machines. At a given load, fewer machines mean a longer arrival span; on more (5, as in DeepJS's
experiments) the chunks' longest jobs outlast it, and most brokers' makespans are one job's length (at 0.8,
4 distinct makespans among the 13 heuristics on either trace; on 3 and 2 machines, 8 and 9)."""


def _alibaba_at_load(trace_format: str, chunk_size: int, machines: int,
                     load: float) -> Callable[[list[str], int], RunConfig]:
    """Chunks of an Alibaba trace, each at offered ``load``, on machines drawn from its machine table
    (``paths``: trace, table)."""
    return lambda paths, seed: RunConfig(
        workload=WorkloadConfig(paths[0], format=trace_format, chunk_size=chunk_size, chunks=(0, REAL_CHUNKS),
                                machine_table=paths[1], load=load, seed=seed),
        cluster=ClusterConfig(machines=machines))


def _real_trace_workloads() -> dict[str, BoardWorkload]:
    return {f"{name}@{load:g}": BoardWorkload(
        f"{title}, chunks 0-{REAL_CHUNKS - 1} of {size} jobs, each chunk's submit times scaled to an offered "
        f"load of {load:g} on {machines} machines drawn from {table} (seed 0, keeping its mix of shapes)",
        files, _alibaba_at_load(trace_format, size, machines, load), shown=("offered_load",))
        for name, (title, table, files, trace_format, size, machines) in REAL_TRACES.items() for load in REAL_LOADS}


LEADERBOARD_WORKLOADS: dict[str, BoardWorkload] = {
    "cloudsimpy": BoardWorkload(
        "CloudSimPy's jobs.csv (Alibaba v2017), chunks 0-4 of 10 jobs, DeepJS's 5 machines, tick 1",
        ("cloudsimpy/jobs.csv",),
        lambda paths, seed: RunConfig(
            workload=WorkloadConfig(paths[0], format="cloudsimpy", chunk_size=10, chunks=(0, 5), seed=seed),
            cluster=ClusterConfig(5, {"cpu": 64.0, "memory": 1.0}),  # its disk demands are all 0
            simulation=SimulationConfig(tick=1.0))),
    **_real_trace_workloads(),
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
        seeded=True, metrics=GPU_FILL_METRICS, ranked_by=GPU_FILL_METRICS[:1], fill=1.3, gpu=True),
    "gpu-replay": BoardWorkload(
        "the same pod list replayed at its creation times, each pod for its lifetime in the trace, on the GPU "
        "nodes; ranked by fragmentation over time",
        (f"{GPU_DATA}/openb_pod_list_default.csv", f"{GPU_DATA}/openb_node_list_gpu_node.csv"),
        lambda paths, seed: RunConfig(workload=WorkloadConfig(paths[0], format="openb", machine_table=paths[1],
                                                              seed=seed)),
        metrics=GPU_REPLAY_METRICS, ranked_by=GPU_REPLAY_METRICS[:1], gpu=True),
}
"""What each of `cloudsim.run.config.LEADERBOARD_WORKLOADS` is (its names are the config's)."""


DATA_LABEL = "$CLOUDSIM_DATA"
"""How the report names the data folder when it is the default one (``$CLOUDSIM_DATA``, else ../shared/data)."""


def data_label(config: LeaderboardConfig) -> str:
    """How messages, kept cells and the report name the data folder: ``--data`` as given, else `DATA_LABEL`."""
    return DATA_LABEL if config.data is None else str(config.data).rstrip("/") or "/"


@dataclass(frozen=True)
class Cell:
    workload: str
    broker: str
    seed: int
    data: str
    data_label: str = DATA_LABEL  # how messages and kept cells name the data folder (`data_label`)

    @property
    def key(self) -> str:
        """The cell's file name: the broker by its one name in a result folder (`agents.plugins.output_name`:
        a reference's ``/`` and ``:`` never reach it, and two references never share it)."""
        return f"{self.workload}--{plugins.output_name(self.broker)}--s{self.seed}"

    def describe(self) -> str:
        """The cell in words, for messages."""
        return f"the cell of broker {self.broker!r} on {self.workload} (seed {self.seed})"


@dataclass
class LeaderboardResult:
    """The per-workload tables; the ranking (mean ranks per measure, see `_ranking`); the ranks on each workload
    and measure (columns ``"workload measure"``); each broker against first-fit (workload -> broker -> measure
    -> `Paired`); the cells that ran now and those kept from before, and the cells that failed
    (``"workload broker seed N"`` -> reason; not kept, so the next run of the board runs them)."""

    tables: dict[str, pd.DataFrame]
    ranking: pd.DataFrame
    ranks: pd.DataFrame
    against: dict[str, dict[str, dict[str, Paired]]]
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
            status, reason = OK, ""
        except ClusterRefused as refusal:  # the broker's check_cluster says it cannot schedule these machines
            rows, status, reason = [], NOT_RUN, refusal.reason
        except Exception as error:  # damaged or missing data, a broker that fails, a bug: not a result
            rows, status, reason = [], FAILED, str(error).splitlines()[0] if str(error) else type(error).__name__
    folders = {cell.data_label: cell.data}  # a kept cell names no path of this machine
    return {"workload": cell.workload, "broker": cell.broker, "seed": cell.seed, "status": status,
            "reason": portable(reason, folders), "rows": rows,
            "warnings": sorted({portable(str(w.message), folders) for w in said}),
            "wall_s": round(time.perf_counter() - started, 3), "code": _code(cell.broker)}


def _code(broker: str) -> str | None:
    """What identifies the code of a user's broker (`agents.plugins.fingerprint`); None for a built-in."""
    return plugins.fingerprint(broker, builtin_source)


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
    cells = [Cell(name, broker, seed, str(data), data_label(config)) for name in workloads
             for broker in LEADERBOARD_WORKLOADS[name].brokers(config.brokers)
             for seed in (range(config.seeds) if LEADERBOARD_WORKLOADS[name].seeded else (0,))]
    done = {}
    for cell in cells:
        kept = _read_cell(out / "cells" / f"{cell.key}.json", cell)
        if kept is not None:
            done[cell.key] = kept
    todo = [cell for cell in cells if cell.key not in done]
    runner = config.runner
    try:
        with runner.runner(config.brokers) as pool:
            for cell, result in zip(todo, pool.map(run_cell, todo, desc="leaderboard", unit="cell",
                                                        name=Cell.describe)):
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
                           LEADERBOARD_WORKLOADS[name].brokers(config.brokers),
                           LEADERBOARD_WORKLOADS[name].metrics + LEADERBOARD_WORKLOADS[name].shown)
              for name in workloads}
    ranks = _ranks(tables)
    against = {name: _against([r for r in results if r["workload"] == name],
                              LEADERBOARD_WORKLOADS[name].brokers(config.brokers), LEADERBOARD_WORKLOADS[name].metrics)
               for name in workloads}
    ranking = _ranking(ranks, against)
    _write_report(out, config, tables, ranks, ranking, against, skipped, results)
    failed = {f"{r['workload']} {r['broker']} seed {r['seed']}": r["reason"] for r in results if r["status"] == FAILED}
    return LeaderboardResult(tables, ranking, ranks, against, len(todo), len(cells) - len(todo), skipped, out, failed)


def _read_cell(path: Path, cell: Cell) -> dict | None:
    """The kept result of ``cell``, or None when there is none to keep: no file; a damaged one (after a
    note on stderr naming it and what is wrong; `_cell_problem`); or one whose user broker's code changed
    since it ran (a note too). A cell that is not kept is run again."""
    if not path.is_file():
        return None
    try:
        kept = json.loads(path.read_text())
        problem = _cell_problem(kept, cell)
    except (OSError, ValueError) as err:  # ValueError: JSON and UTF-8 alike
        problem = f"{type(err).__name__}: {str(err).splitlines()[0][:120]}"
    if problem is None and kept.get("code") != _code(cell.broker):
        print(f"cloudsim: leaderboard cell {path}: the code of broker {cell.broker} changed since it ran; running "
              "that cell again", file=sys.stderr, flush=True)
        return None
    if problem is not None:
        print(f"cloudsim: leaderboard cell {path} is damaged ({problem}); running that cell again", file=sys.stderr,
              flush=True)
        path.unlink(missing_ok=True)
        return None
    return kept


def _cell_problem(kept: object, cell: Cell) -> str | None:
    """What is wrong with ``kept``, read from ``cell``'s file, as a whole (None when nothing is): its keys
    and their types, that it is this cell's, its status (a failed cell is never kept), and that each run
    has every measure of the workload, each a number or null."""
    if not isinstance(kept, dict):
        return "it is not a JSON object"
    missing = [key for key in CELL_KEYS if key not in kept]
    if missing:
        return f"it lacks {', '.join(missing)}"
    if (kept["workload"], kept["broker"], kept["seed"]) != (cell.workload, cell.broker, cell.seed):
        return f"it holds workload {kept['workload']!r}, broker {kept['broker']!r}, seed {kept['seed']!r}, not this cell's"
    if kept["status"] not in (OK, NOT_RUN):
        return f"its status is {kept['status']!r}, not {OK!r} or {NOT_RUN!r}"
    if not isinstance(kept["reason"], str) or not _number(kept["wall_s"]):
        return "its reason is not text or its wall_s not a number"
    rows = kept["rows"]
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        return "its rows are not a list of JSON objects"
    if (kept["status"] == OK) != bool(rows):
        return f"a cell {kept['status']!r} with {len(rows)} run(s)"
    workload = LEADERBOARD_WORKLOADS[cell.workload]
    for k, row in enumerate(rows):
        lacking = [m for m in workload.metrics + workload.shown if m not in row]
        if lacking:
            return f"run {k} lacks {', '.join(lacking)}"
        odd = [m for m in workload.metrics + workload.shown if row[m] is not None and not _number(row[m])]
        if odd:
            return f"run {k} has {odd[0]} = {row[odd[0]]!r}, not a number"
    return None


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _table(results: list[dict], brokers: tuple[str, ...], metrics: tuple[str, ...]) -> pd.DataFrame:
    """One row per broker: mean and standard deviation of each metric over its episodes and seeds."""
    import pandas as pd
    rows = []
    for broker in brokers:
        mine = [r for r in results if r["broker"] == broker]
        runs = [row for r in mine for row in r["rows"]]
        refused = next(((r["reason"] if r["status"] != FAILED else f"failed: {r['reason']}") for r in mine
                        if r["status"] != OK), "")
        row: dict = {"broker": broker, "runs": len(runs), "not_run": refused}
        for metric in metrics:
            values = np.array([np.nan if run.get(metric) is None else run[metric] for run in runs], dtype=float)
            known = values[~np.isnan(values)]  # a metric a run does not have (JSON null) is left out
            row[f"{metric}_mean"] = float(known.mean()) if len(known) else np.nan
            row[f"{metric}_sd"] = float(known.std()) if len(known) else np.nan
        rows.append(row)
    return pd.DataFrame(rows).set_index("broker")


def _ranks(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each broker's rank on each workload and measure it is ranked by (a column ``"workload measure"``):
    1 is the best mean (the lowest, or the highest of a measure in `HIGHER_IS_BETTER`); ties share the best
    rank; a broker that did not run is NaN."""
    import pandas as pd
    return pd.DataFrame({f"{name} {measure}": table[f"{measure}_mean"].rank(
        method="min", ascending=measure not in HIGHER_IS_BETTER)
        for name, table in tables.items() for measure in LEADERBOARD_WORKLOADS[name].ranked_by})


def _ranking(ranks: pd.DataFrame, against: dict[str, dict[str, dict[str, Paired]]]) -> pd.DataFrame:
    """The summary: each broker's mean rank per measure over the workloads ranked by it (the GPU workloads'
    own measures as ``gpu``), its mean rank over every column of ``ranks``, the workloads it ran, and the
    workload measures where it is surely better or worse than the baseline (the 95 % interval of the
    paired difference on one side of 0), sorted by mean rank."""
    import pandas as pd
    gpu = [c for c in ranks if LEADERBOARD_WORKLOADS[c.split(" ")[0]].gpu]
    groups = {measure: [c for c in ranks if c not in gpu and c.split(" ")[1] == measure] for measure in METRICS}
    groups["gpu"] = gpu
    summary = pd.DataFrame({key: ranks[columns].mean(axis=1) for key, columns in groups.items() if columns})
    verdicts = [(broker, result.verdict) for by_broker in against.values() for broker, measures in by_broker.items()
                for result in measures.values()]
    summary["mean_rank"] = ranks.mean(axis=1)
    summary["workloads_run"] = ranks.T.groupby(lambda c: c.split(" ")[0]).max().notna().sum(axis=0)
    for verdict in ("better", "worse"):
        summary[f"surely_{verdict}"] = [sum(1 for b, v in verdicts if b == broker and v == verdict)
                                        for broker in summary.index]
    return summary.sort_values(["mean_rank", "workloads_run"], ascending=[True, False])


def _episodes(results: list[dict], broker: str, metric: str) -> dict[tuple[int, int], float]:
    """A broker's value of ``metric`` on each episode of a workload, keyed by (seed, episode)."""
    return {(r["seed"], i): (np.nan if row.get(metric) is None else float(row[metric]))
            for r in results if r["broker"] == broker for i, row in enumerate(r["rows"])}


def _against(results: list[dict], brokers: tuple[str, ...], metrics: tuple[str, ...]) -> dict[str, dict[str, Paired]]:
    """Every broker but the baseline against the baseline on each metric, on the episodes both ran
    (empty when the baseline is not among ``brokers``)."""
    if BASELINE not in brokers:
        return {}
    comparisons = {}
    for broker in brokers:
        if broker == BASELINE:
            continue
        comparisons[broker] = {}
        for metric in metrics:
            mine, base = _episodes(results, broker, metric), _episodes(results, BASELINE, metric)
            both = sorted(set(mine) & set(base))
            comparisons[broker][metric] = paired([mine[k] for k in both], [base[k] for k in both],
                                                 lower_is_better=metric not in HIGHER_IS_BETTER)
    return comparisons


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


def _measure_name(column: str) -> str:
    name, measure = column.split(" ")
    return f"{name} {measure.replace('_', ' ')}"


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


def _write_report(out: Path, config: LeaderboardConfig, tables, ranks, ranking, against, skipped, results) -> None:
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
