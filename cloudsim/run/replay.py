"""`replay`: every broker on every episode of a workload, one summary row per (episode, broker).

    from cloudsim.run import RunConfig, WorkloadConfig, replay
    result = replay(RunConfig(workload=WorkloadConfig(synthetic_jobs=20)))
    result.rows, result.total
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable


from agents import plugins
from cloudsim.run.config import RunConfig
from cloudsim.run.episode import RunSpec, run_one
from cloudsim.run.output import ResultFolder, write_broker_sources
from cloudsim.run.plots import plot_run
from cloudsim.run.resolve import ResolvedRun, resolve
from traces import JobStream

__all__ = ["ReplayResult", "account", "check_accounted", "replay"]


@dataclass
class ReplayResult:
    """Rows (one per episode and broker, in that order), the run's summary, and where --out wrote."""

    rows: list[dict]
    total: dict
    out: Path | None = None


def check_accounted(rows: list[dict]) -> None:
    """Every instance of every run finished or failed: the engine guarantees it, and a report
    must never hide a loss."""
    lost = [r for r in rows if r["instances"] != r["instances_finished"] + r["instances_failed"]]
    if lost:
        raise RuntimeError(f"{len(lost)} run(s) lost instances (first: {lost[0]})")


def account(run: ResolvedRun, rows: list[dict]) -> dict:
    """What a run covered: jobs, tasks and instances, what loading skipped, and per broker how many
    instances finished, failed and were restarted. Raises if any instance is unaccounted for."""
    check_accounted(rows)
    resolved, runs, brokers = run.workload, run.episodes, tuple(plan.name for plan in run.brokers)

    # A streamed episode's jobs were read in its runs, not here: its first run's row counts them.
    covered = [{"jobs": row["jobs"], "tasks": row["tasks"], "instances": row["instances"]}
               if isinstance(episode.jobs, JobStream) else
               {"jobs": len(episode.jobs), "tasks": sum(len(job.tasks) for job in episode.jobs),
                "instances": sum(job.instances for job in episode.jobs)}
               for episode, row in zip(runs, rows[::len(brokers)] if brokers else [])]

    def per_broker(column: str) -> dict:
        return {b: sum(r.get(column, 0) for r in rows if r["broker"] == b) for b in brokers}

    suspended = per_broker("instance_suspensions")  # (a count only runs whose broker suspended report)

    return {
        "summary": True,
        "source": resolved.workload.source,
        "episodes": len(runs),
        "brokers": list(brokers),
        **{key: sum(counts[key] for counts in covered) for key in ("jobs", "tasks", "instances")},
        "skipped": resolved.workload.skipped,
        "notes": resolved.workload.notes,
        "machines_skipped": resolved.machine_skipped,
        "machine_notes": resolved.machine_notes,
        "finished": per_broker("instances_finished"),
        "failed": per_broker("instances_failed"),
        "restarts": per_broker("instance_restarts"),
        **({"suspensions": suspended} if any(suspended.values()) else {}),
        "mean_makespan": {b: _mean([r["makespan"] for r in rows if r["broker"] == b]) for b in brokers},
        "wall_s": round(sum(r["wall_s"] for r in rows), 3),
    }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _run_folder(label: object, broker: str) -> Path:
    """Where --out keeps one run's tables: the broker by its one name in a result folder (a reference's
    ``/``, ``:`` and ``..`` never reach a path, `agents.plugins.output_name`)."""
    return Path(f"episode-{str(label).replace(':', '-')}") / plugins.output_name(broker)


def replay(config: RunConfig, on_row: Callable[[dict], None] | None = None) -> ReplayResult:
    """Run every broker on every episode; ``on_row`` sees each row as soon as it is ready.

    With ``config.report.out`` each episode's tables are written as Parquet under
    ``episode-<label>/<broker>/`` and the rows as ``episodes.csv``; the folder
    appears only when every run finished (see `ResultFolder`). With
    ``config.report.stream`` each run writes its tables there as it runs, and
    with ``config.report.plots`` each run's pictures (`cloudsim.run.plots`) are
    drawn beside its tables before the folder appears.
    """
    import pandas as pd
    plots = getattr(config.report, "plots", False)  # a replay's report (`ReplayReportConfig`) has them
    with ResultFolder.optional(config.report.out, config.report.overwrite) as folder:
        run = resolve(config)
        key = "chunk" if config.workload.chunk_size is not None else "jobs_range"
        # One run shows the engine's own bar (jobs finished, simulated time) on a terminal.
        single = len(run.episodes) * len(run.brokers) == 1 and sys.stderr.isatty()
        stream = folder is not None and config.report.stream
        specs = [RunSpec(plan, config.workload.seed, run.simulation, label=episode.label, load=episode.offered_load,
                         jobs=episode.jobs,
                         place=run.place, events=episode.events,
                         keep="result" if folder is not None and not stream else None, progress=single,
                         stream_to=str(folder.staging / _run_folder(episode.label, plan.name)) if stream else None)
                 for episode in run.episodes for plan in run.brokers]
        rows = []
        with config.runner.runner(config.chosen_brokers.brokers) as runner:
            for spec, outcome in zip(specs, runner.map(run_one, specs, desc="episodes", unit="episode",
                                                       name=RunSpec.describe)):
                row = {key: spec.label, **outcome.summary}
                rows.append(row)
                if outcome.result is not None:  # a streamed run has written its own tables
                    folder.write_atomically(_run_folder(spec.label, spec.broker.name), outcome.result.to_parquet)
                if plots:
                    plot_run(folder.staging / _run_folder(spec.label, spec.broker.name))
                if on_row is not None:
                    on_row(row)
        total = account(run, rows)
        if folder is not None:
            pd.DataFrame(rows).to_csv(folder.staging / "episodes.csv", index=False)
            write_broker_sources(folder.staging, config.chosen_brokers.brokers)
            total["out"] = str(folder.commit())
        return ReplayResult(rows, total, None if folder is None else folder.path)
