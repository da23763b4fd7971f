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
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from cloudsim.run.config import ConfigError, LeaderboardConfig
from cloudsim.run.leaderboard.cells import FAILED, Cell, data_label, read_cell, run_cell
from cloudsim.run.leaderboard.ranking import against_baseline, broker_table, rank_table, ranking_of
from cloudsim.run.leaderboard.report import STATE, write_report
from cloudsim.run.leaderboard.workloads import GPU_DATA, LEADERBOARD_WORKLOADS
from cloudsim.run.output import mark_results, strict_json, write_text_atomically
from cloudsim.run.paired import Paired

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["GPU_DATA", "LEADERBOARD_WORKLOADS", "LeaderboardResult", "leaderboard", "run_cell"]


@dataclass
class LeaderboardResult:
    """The per-workload tables; the ranking (mean ranks per measure, see `ranking_of`); the ranks on each workload
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
    # (A GPU policy without a GPU workload is refused first: that does not depend on which data is at hand.)
    idle = [b for b in config.brokers if not any(b in LEADERBOARD_WORKLOADS[name].brokers((b,))
            for name in config.workloads)]
    if idle:
        raise ConfigError("--brokers", ",".join(config.brokers), f"{', '.join(idle)} is a GPU policy, which runs "
                          f"on the GPU workloads only (gpu-fill, gpu-replay), and none of --workloads "
                          f"{','.join(config.workloads)} has GPUs; add a GPU workload, or leave it out")
    data = config.data_folder
    skipped = {name: f"needs {', '.join(missing)} under {data} (--data DIR)"
               for name in config.workloads
               if (missing := [f for f in LEADERBOARD_WORKLOADS[name].files if not (data / f).is_file()])}
    workloads = [name for name in config.workloads if name not in skipped]
    if not workloads:
        raise ConfigError("--workloads", ",".join(config.workloads), "none of them can run: " +
                          "; ".join(f"{k} {v}" for k, v in skipped.items()))
    out = _open_folder(config)
    cells = [Cell(name, broker, seed, str(data), data_label(config)) for name in workloads
             for broker in LEADERBOARD_WORKLOADS[name].brokers(config.brokers)
             for seed in (range(config.seeds) if LEADERBOARD_WORKLOADS[name].seeded else (0,))]
    done = {}
    for cell in cells:
        kept = read_cell(out / "cells" / f"{cell.key}.json", cell)
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
    tables = {name: broker_table([r for r in results if r["workload"] == name],
                           LEADERBOARD_WORKLOADS[name].brokers(config.brokers),
                           LEADERBOARD_WORKLOADS[name].metrics + LEADERBOARD_WORKLOADS[name].shown)
              for name in workloads}
    ranks = rank_table(tables)
    against = {name: against_baseline([r for r in results if r["workload"] == name],
                              LEADERBOARD_WORKLOADS[name].brokers(config.brokers), LEADERBOARD_WORKLOADS[name].metrics)
               for name in workloads}
    ranking = ranking_of(ranks, against)
    write_report(out, config, tables, ranks, ranking, against, skipped, results)
    failed = {f"{r['workload']} {r['broker']} seed {r['seed']}": r["reason"] for r in results if r["status"] == FAILED}
    return LeaderboardResult(tables, ranking, ranks, against, len(todo), len(cells) - len(todo), skipped, out, failed)
