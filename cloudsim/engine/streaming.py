"""Results written while a streamed simulation runs, so that memory follows the jobs in flight.

A replay of a whole trace holds millions of jobs, tasks and instance groups; kept
until the end, they need tens of gigabytes. A streamed `cloudsim.Simulation`
(``stream_to=folder``) reads its jobs lazily, in blocks, and every so often hands
the rows that can no longer change to a `ResultWriter`:

* the first groups, up to the earliest one still running, as a Parquet row group
  of ``groups.parquet``;
* the first jobs, up to the earliest one unfinished (and no further than the
  earliest task a kept group still refers to), as row groups of ``jobs.parquet``
  and, their tasks, of ``tasks.parquet``;

then drops them. The files hold exactly the rows, in the order and with the types,
that `EpisodeResult.to_parquet` writes for the same run kept in memory. They are
written into a hidden folder beside ``folder`` and moved into it only when the
episode is over: a run that fails or is interrupted leaves ``folder`` untouched.

The summary (``summary.json``, `StreamedResult.summary`) has the same keys. Its
job numbers (means and percentiles) are the same values: it reads those columns
of the jobs back from the file. The task numbers are running totals
(`cloudsim.engine.metrics.TaskTotals`): the counts exact, the two means and utilisation
equal to the in-memory figures up to rounding in the last bits. The imbalance
numbers (RLSK) need every machine's usage at every instant of the run; they are
left out (None) of a streamed summary, as is ``utilisation.parquet``. With a
`cloudsim.engine.energy.StreamMeter` the groups are metered as they are written,
and the summary holds the run's energy (and carbon).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from cloudsim.engine.metrics import (IMBALANCE_COLUMNS, TaskTotals, capacity_frame, group_frame, job_frame,
                              reservation_frame, stringify_ids, summarise, task_frame, used_resources, write_summary)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow.parquet as pq
    from cloudsim.engine.energy import StreamMeter
    from cloudsim.engine.record import EpisodeRecord
    from cloudsim.engine.tasks import TaskTable

__all__ = ["ResultWriter", "StreamedResult", "check_stream_folder"]

_TABLES = ("tasks", "jobs", "groups")
_GROUPS_PER_WRITE = 125_000
"""Groups written out at a time (one Parquet row group each): the frame, its ids as text and its Arrow
table are made for this many at most, whatever the number of groups that ended (a run's last write may
hand over millions)."""


def check_stream_folder(folder: str | Path) -> Path:
    """``folder`` as a Path, refused (ValueError) when it is empty, a file or inside a file."""
    if not str(folder).strip():
        raise ValueError("stream_to '': name the folder to write the results into")
    path = Path(folder)
    for part in (path, *path.parents):
        if part.exists() and not part.is_dir():
            raise ValueError(f"stream_to {str(folder)!r}: {str(part)!r} is a file, not a folder; "
                             "pass a folder to write the results into")
    return path


@dataclass
class StreamedResult:
    """What a streamed episode leaves: its summary, and its tables as Parquet files in ``folder``.

    The tables are read from disk on request (`tasks`, `jobs`, `groups`, `capacity`),
    as pandas DataFrames with the columns of `cloudsim.EpisodeResult`'s.
    """

    summary: dict
    folder: Path

    @property
    def makespan(self) -> float:
        return self.summary["makespan"]

    def _read(self, name: str) -> pd.DataFrame:
        import pandas as pd
        return pd.read_parquet(self.folder / f"{name}.parquet")

    def tasks(self) -> pd.DataFrame:
        return self._read("tasks")

    def jobs(self) -> pd.DataFrame:
        return self._read("jobs")

    def groups(self) -> pd.DataFrame:
        return self._read("groups")

    def capacity(self) -> pd.DataFrame:
        return self._read("capacity")


def _read_columns(path: Path, names: tuple[str, ...]) -> dict[str, "pd.Series"]:
    """Float columns of a Parquet file as Series, read one row group at a time into one array each."""
    import pandas as pd
    import pyarrow.parquet as pq
    file = pq.ParquetFile(path)
    columns = {name: np.empty(file.metadata.num_rows) for name in names}
    at = 0
    for group in range(file.num_row_groups):
        part = file.read_row_group(group, columns=list(names), use_threads=False)
        for name in names:
            columns[name][at:at + part.num_rows] = part.column(name).to_numpy()
        at += part.num_rows
    return {name: pd.Series(values, name=name, copy=False) for name, values in columns.items()}


class ResultWriter:
    """Writes a streamed episode's finished rows as Parquet row groups (see the module docstring)."""

    def __init__(self, folder: str | Path, record: "EpisodeRecord", energy: "StreamMeter | None" = None) -> None:
        self.folder = check_stream_folder(folder)
        self.record = record
        self.energy = energy
        self._partial = self.folder.parent / f".{self.folder.name}.partial-{os.getpid()}-{id(self)}"
        try:
            self._partial.mkdir(parents=True)
        except OSError as error:
            raise OSError(f"stream_to {str(folder)!r}: cannot make a folder there ({error.strerror}); "
                          "pass a folder you may write to") from None
        self._writers: dict[str, pq.ParquetWriter] = {}
        self.used = np.zeros(len(record.cluster.resources))
        self.task_totals = TaskTotals()

    def write_finished(self, now: float = np.inf) -> None:
        """Write out and drop the groups, jobs and tasks that can no longer change (``now``: the simulated time;
        no group starts before it)."""
        groups = self.record.groups
        ended = groups.retire(groups.first_running())
        first_kept = groups.start[0] if len(groups) else np.inf  # (groups are kept in the order they started)
        self.write(ended, int(np.frombuffer(groups.task, dtype=np.int64).min()) if len(groups) else None,
                   min(now, first_kept))

    def write(self, ended: dict[str, np.ndarray], kept_task: int | None, settled: float = np.inf) -> None:
        """Write out the groups ``ended`` (the `GroupTable.columns` of the groups ended before the first one
        still running), then write out and drop the jobs, and their tasks, that can no longer change: the
        finished ones before the first unfinished, and before the job of ``kept_task`` (the earliest task of
        a group kept, whose job and task ids must stay), if any. ``settled``: no group kept or to come starts
        before it (what the energy meter may meter up to)."""
        table = self.record.tasks
        for first in range(0, len(ended["task"]), _GROUPS_PER_WRITE):
            # (the columns are this writer's own: the frame takes slices of them as they are)
            part = group_frame({name: values[first:first + _GROUPS_PER_WRITE] for name, values in ended.items()},
                               table, copy=False)
            self.used = used_resources(part, table, self.used)
            if self.energy is not None:
                self._meter(part, table)
            self._append("groups", part)
        if self.energy is not None:
            self.energy.settle(settled)
        jobs = table.finished_jobs()
        if kept_task is not None:
            jobs = min(jobs, int(table.task_job[table.rows(kept_task)]) - table.job_base)
        if jobs > 0:
            self._append("jobs", job_frame(table, jobs))
            tasks = task_frame(table, self.record.cluster.resources, int(table.job_first_task[jobs]) - table.task_base)
            self.task_totals.add(tasks)
            self._append("tasks", tasks)
            table.retire(jobs)

    def _meter(self, part: pd.DataFrame, table: "TaskTable") -> None:
        """Hand the groups ``part`` to the energy meter: their machine, times, cpu and devices' milli-units."""
        rows = table.rows(part.task.to_numpy())
        instances = part.instances.to_numpy(dtype=float)
        cpu = table.task_demand[rows, self.record.cluster.resources.index("cpu")] * instances
        milli = (table.task_device_count * table.task_device_milli)[rows] * instances
        self.energy.add(part.machine.to_numpy(dtype=np.int64), part.start.to_numpy(dtype=float),
                        part.end.to_numpy(dtype=float), cpu, milli)

    def _append(self, name: str, frame: pd.DataFrame) -> None:
        import pyarrow.parquet as pq
        import pyarrow as pa
        if not len(frame):
            return
        data = pa.Table.from_pandas(stringify_ids(frame), preserve_index=False)
        if name not in self._writers:
            self._writers[name] = pq.ParquetWriter(self._partial / f"{name}.parquet", data.schema)
        self._writers[name].write_table(data)

    def finish(self, wall_s: float) -> StreamedResult:
        """Write what is left, the summary and the capacity, and move the files into the folder."""
        self.write_finished()
        for writer in self._writers.values():
            writer.close()
        record = self.record
        empty = {"tasks": lambda: task_frame(record.tasks, record.cluster.resources, 0),
                 "jobs": lambda: job_frame(record.tasks, 0),
                 "groups": lambda: group_frame(record.groups.columns(stop=0), record.tasks)}
        for name in _TABLES:
            if name not in self._writers:  # no rows at all: an empty file with the columns
                stringify_ids(empty[name]()).to_parquet(self._partial / f"{name}.parquet", index=False)
        # The job numbers need whole columns (percentiles): three of them, 24 bytes a job, read back a row
        # group at a time into arrays of their own (a frame of them, or reading them whole, would hold them
        # two or three times over).
        jobs = _read_columns(self._partial / "jobs.parquet", ("completion", "wait", "slowdown"))
        summary = summarise(record, self.task_totals.numbers(), jobs, self.used,
                            {column: float("nan") for column in IMBALANCE_COLUMNS}, wall_s)
        if self.energy is not None:
            summary.update(self.energy.finish(float(record.makespan)))
        stringify_ids(capacity_frame(record)).to_parquet(self._partial / "capacity.parquet", index=False)
        # Reservations are few (a broker's look-ahead), so they are kept in memory to the end.
        stringify_ids(reservation_frame(record.reservations)).to_parquet(self._partial / "reservations.parquet",
                                                                         index=False)
        write_summary(self._partial / "summary.json", summary)
        self.folder.mkdir(parents=True, exist_ok=True)
        for name in (*_TABLES, "capacity", "reservations"):
            os.replace(self._partial / f"{name}.parquet", self.folder / f"{name}.parquet")
        os.replace(self._partial / "summary.json", self.folder / "summary.json")
        # An earlier in-memory run's utilisation table would not belong with these files.
        (self.folder / "utilisation.parquet").unlink(missing_ok=True)
        self._partial.rmdir()
        return StreamedResult(summary, self.folder)

    def abort(self) -> None:
        """Drop what was written: the folder is left as it was."""
        for writer in self._writers.values():
            with contextlib.suppress(Exception):  # already broken: its file goes anyway
                writer.close()
        self._writers.clear()
        shutil.rmtree(self._partial, ignore_errors=True)
