"""A cell of the leaderboard, one broker on one workload and seed: run in a worker, kept as a JSON file as soon
as it ends, and read back (checked whole) when the board runs again, so that a finished cell never runs twice."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agents import builtin_source, plugins
from cloudsim.engine.foreign import ClusterRefused
from cloudsim.run.compare_fill import AT, FillSpec, run_fill
from cloudsim.run.config import BrokerConfig, RunnerConfig
from cloudsim.run.fill import FILL_CURVES
from cloudsim.run.leaderboard.workloads import LEADERBOARD_WORKLOADS
from cloudsim.run.output import portable
from cloudsim.run.replay import replay

if TYPE_CHECKING:
    from cloudsim.run.config import LeaderboardConfig

OK = "ok"
"""A cell's status when its runs finished: its rows are kept."""
NOT_RUN = "not run"
"""A cell's status when its broker refused the workload's machines (its ``check_cluster``,
`cloudsim.engine.foreign.ClusterRefused`): a result too, kept and shown with the reason."""
FAILED = "failed"
"""A cell's status when its run failed (damaged or missing data, a broker that raised or exited, an internal
error): it is not kept as done, so the next run of the board runs it again, and the board exits non-zero
naming it."""
CELL_KEYS = ("workload", "broker", "seed", "status", "reason", "rows", "wall_s")

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

def read_cell(path: Path, cell: Cell) -> dict | None:
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
        return (f"it holds workload {kept['workload']!r}, broker {kept['broker']!r}, seed {kept['seed']!r}, not this "
                "cell's")
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
