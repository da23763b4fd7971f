"""What an episode leaves behind: its instance groups and a public record the results are built from.

An instance group is the engine's unit of work: instances of one task started
on one machine at one instant with one duration, finishing together (one SimPy
event). A long replay has millions of them: `GroupTable` keeps them as columns. `EpisodeRecord` gathers what
`cloudsim.engine.metrics.EpisodeResult` needs, so results never reach into the simulation's internals.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from cloudsim.engine.cluster import ClusterState
from cloudsim.engine.specs import ClusterSpec, JobSpec
from cloudsim.engine.tasks import TaskTable

__all__ = ["EpisodeRecord", "GroupTable", "InstanceGroup", "OUTCOMES", "by_end_time"]

OUTCOMES = ("finished", "failed", "requeued", "suspended")


def by_end_time(now: float, durations: np.ndarray) -> list[np.ndarray]:
    """The positions of groups launched ``now`` with ``durations``, by end time (``now + duration``, as SimPy
    computes an event's time): one array per distinct end time, its groups in launch order, the end times in
    the order of their first group. The engine makes one SimPy event per end time, in this order, where the
    first group of each would have made its own: the groups end in the order one event each would give."""
    _, first, which = np.unique(now + durations, return_index=True, return_inverse=True)
    members = np.split(np.argsort(which, kind="stable"), np.cumsum(np.bincount(which))[:-1])
    return [members[k] for k in np.argsort(first, kind="stable").tolist()]


@dataclass(frozen=True, slots=True)
class InstanceGroup:
    """Instances ``first_instance .. first_instance + instances - 1`` of ``task`` on ``machine``:
    one row of a `GroupTable`, as read at one moment.

    ``task`` is the global task index. ``end`` is NaN and ``outcome`` empty while
    the group runs; a machine failure ends it early ("failed" or "requeued"), and so
    does a broker that suspends it ("suspended": its instances' remaining work waits to resume).
    """

    task: int
    machine: int
    first_instance: int
    instances: int
    duration: float
    start: float
    end: float = math.nan
    outcome: str = ""

    @property
    def running(self) -> bool:
        return not self.outcome


class GroupTable:
    """Every instance group of an episode, one compact column per field.

    An episode of millions of groups keeps them as machine numbers (about 60 bytes a
    group), not as Python objects (about 250); `columns` hands them to numpy without
    a copy. ``table[gid]`` and iteration give `InstanceGroup` rows. The engine adds
    groups (`add`), grows the latest group of a machine within a round (`grow`) and
    ends them (`end_group`); nothing else writes.

    A group's id is its number in start order. The columns hold groups ``base``
    onwards: ``base`` is 0 unless a streamed simulation has written the first groups
    out and dropped them (`retire`); the row of group ``gid`` is ``gid - base``.
    """

    _INTEGERS = ("task", "machine", "first_instance", "instances")
    _FLOATS = ("duration", "start", "end")

    def __init__(self) -> None:
        self.base = 0
        self.task, self.machine, self.first_instance, self.instances = (array("q") for _ in range(4))
        self.duration, self.start, self.end = (array("d") for _ in range(3))
        self.outcome = array("b")  # 0 while running, else 1 + the index in OUTCOMES

    def __len__(self) -> int:
        """How many groups the columns hold (all of them, unless some were retired)."""
        return len(self.task)

    def __getitem__(self, gid: int) -> InstanceGroup:
        r = gid - self.base
        code = self.outcome[r]
        return InstanceGroup(self.task[r], self.machine[r], self.first_instance[r], self.instances[r],
                             self.duration[r], self.start[r], self.end[r], OUTCOMES[code - 1] if code else "")

    def __iter__(self) -> Iterator[InstanceGroup]:
        return (self[gid] for gid in range(self.base, self.base + len(self)))

    def add(self, task: int, machine: int, first: int, count: int, duration: float, start: float) -> int:
        """A new running group; returns its id."""
        self.task.append(task)
        self.machine.append(machine)
        self.first_instance.append(first)
        self.instances.append(count)
        self.duration.append(duration)
        self.start.append(start)
        self.end.append(math.nan)
        self.outcome.append(0)
        return self.base + len(self.task) - 1

    def add_many(self, task: np.ndarray, machine: np.ndarray, first: np.ndarray, count: np.ndarray,
                 duration: np.ndarray, start: float) -> int:
        """New running groups, one per entry of the (equally long) arrays; returns the id of the first."""
        gid = self.base + len(self.task)
        for column, values in ((self.task, task), (self.machine, machine), (self.first_instance, first),
                               (self.instances, count)):
            column.frombytes(np.asarray(values, dtype=np.int64).tobytes())
        self.duration.frombytes(np.asarray(duration, dtype=np.float64).tobytes())
        self.start.frombytes(np.full(len(task), start).tobytes())
        self.end.frombytes(np.full(len(task), math.nan).tobytes())
        self.outcome.frombytes(bytes(len(task)))
        return gid

    def continues(self, gid: int, task: int, duration: float, first: int) -> bool:
        """Whether instances of ``task`` from ``first`` with ``duration`` directly follow group ``gid``'s."""
        r = gid - self.base
        return (self.task[r] == task and self.duration[r] == duration
                and self.first_instance[r] + self.instances[r] == first)

    def add_rows(self, task: np.ndarray, machine: np.ndarray, first: np.ndarray, count: np.ndarray,
                 duration: np.ndarray, start: np.ndarray, end: np.ndarray) -> None:
        """Groups made on the engine's compiled path (`cloudsim.engine.compiled`), in start order: running where
        ``end`` is NaN, else finished at ``end``."""
        self.add_many(task, machine, first, count, duration, 0.0)
        rows = slice(len(self.task) - len(task), len(self.task))
        for column, values in ((self.start, start), (self.end, end)):
            np.frombuffer(column, dtype=np.float64)[rows] = values
        codes = np.frombuffer(self.outcome, dtype=np.int8)
        codes[rows] = np.where(np.isnan(end), 0, OUTCOMES.index("finished") + 1)
        del codes

    def skip_to(self, gid: int) -> None:
        """The next group's id is ``gid``: the groups before it were written out without passing through this
        table (a streamed run on the engine's compiled path hands them over itself)."""
        if gid != self.base + len(self):
            if len(self):
                raise ValueError(f"skip_to({gid}): the table holds groups up to {self.base + len(self) - 1}")
            self.base = gid

    def split(self, gid: int, count: int) -> int:
        """The last ``count`` of group ``gid``'s instances become a group of their own (same task, machine,
        start and duration, a new id); ``gid`` keeps the others. Returns the new group's id."""
        r = gid - self.base
        kept = self.instances[r] - count
        if not 0 < kept:
            raise ValueError(f"split({gid}, {count}): the group has {self.instances[r]} instance(s)")
        self.instances[r] = kept
        return self.add(self.task[r], self.machine[r], self.first_instance[r] + kept, count, self.duration[r],
                        self.start[r])

    def grow(self, gid: int, count: int) -> None:
        """``count`` more instances join group ``gid`` (they follow its last one)."""
        self.instances[gid - self.base] += count

    def end_group(self, gid: int, time: float, outcome: str) -> None:
        """Group ``gid`` ends at ``time`` with ``outcome`` (one of OUTCOMES)."""
        r = gid - self.base
        self.end[r] = time
        self.outcome[r] = OUTCOMES.index(outcome) + 1

    def end_many(self, gids: list[int], time: float, outcome: str) -> None:
        """`end_group` of every group of ``gids`` (running ones)."""
        rows = np.array(gids, dtype=np.int64) - self.base
        end, codes = np.frombuffer(self.end, dtype=np.float64), np.frombuffer(self.outcome, dtype=np.int8)
        end[rows] = time
        codes[rows] = OUTCOMES.index(outcome) + 1
        del end, codes  # the columns can grow again

    def running(self, gid: int) -> bool:
        return self.outcome[gid - self.base] == 0

    def running_ids(self, since: int | None = None) -> np.ndarray:
        """The ids of the groups running now, in id order (from group ``since`` on, when given)."""
        codes = np.frombuffer(self.outcome, dtype=np.int8) if len(self) else np.empty(0, dtype=np.int8)
        skip = 0 if since is None else max(since - self.base, 0)
        return self.base + skip + np.flatnonzero(codes[skip:] == 0)

    def first_running(self) -> int:
        """The id of the earliest-started group still running (the next id when none runs)."""
        codes = np.frombuffer(self.outcome, dtype=np.int8) if len(self) else np.empty(0, dtype=np.int8)
        running = np.flatnonzero(codes == 0)
        return self.base + (int(running[0]) if len(running) else len(self))

    def retire(self, gid: int) -> dict[str, np.ndarray]:
        """Drop the groups before ``gid`` (all ended) and return their `columns`."""
        n = gid - self.base
        taken = {name: np.array(column, copy=True) for name, column in self.columns(stop=n).items()}
        for name in (*self._INTEGERS, *self._FLOATS, "outcome"):
            del getattr(self, name)[:n]
        self.base = gid
        return taken

    def holdings(self, gids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(task, instances, start, duration) of the groups ``gids``, as new arrays (the table can grow after)."""
        rows = np.asarray(gids, dtype=np.int64) - self.base
        if not len(rows):
            return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0), np.empty(0)
        n = len(self)
        return tuple(np.frombuffer(getattr(self, name), dtype=dtype, count=n)[rows]
                     for name, dtype in (("task", np.int64), ("instances", np.int64), ("start", np.float64),
                                         ("duration", np.float64)))

    def machines(self, gids: np.ndarray) -> np.ndarray:
        """The machine of each group of ``gids``, as a new array."""
        rows = np.asarray(gids, dtype=np.int64) - self.base
        return np.frombuffer(self.machine, dtype=np.int64, count=len(self))[rows] if len(rows) else \
            np.empty(0, np.int64)

    def columns(self, stop: int | None = None) -> dict[str, np.ndarray]:
        """Each field as a numpy array (rows up to ``stop``, default all), ``outcome`` as text. The
        numbers are read-only views of the columns, without a copy; while one is alive the table
        cannot grow (BufferError): read them once the episode is over."""
        stop = len(self) if stop is None else stop
        out: dict[str, np.ndarray] = {name: np.frombuffer(getattr(self, name), dtype=np.int64, count=stop)
                                      if stop else np.empty(0, dtype=np.int64) for name in self._INTEGERS}
        out.update({name: np.frombuffer(getattr(self, name), dtype=np.float64, count=stop)
                    if stop else np.empty(0) for name in self._FLOATS})
        codes = np.frombuffer(self.outcome, dtype=np.int8, count=stop) if stop else np.empty(0, dtype=np.int8)
        out["outcome"] = np.array(("",) + OUTCOMES, dtype=object)[codes]
        return out


@dataclass
class EpisodeRecord:
    """A finished (or stopped) episode, as the engine recorded it.

    Attributes:
        cluster: the machines.
        jobs: the jobs in arrival order (in a streamed simulation, those read and
            not yet written out: the job rows of ``tasks``).
        tasks: every task's and job's progress and times.
        state: the machines' final state (capacity, free, up).
        groups: every instance group, in start order (a `GroupTable`; in a streamed
            simulation, from the earliest one not yet written out).
        makespan: when the last job finished (event-driven), or the first
            scheduler tick at which every job had finished (fixed tick).
        broker: the broker's name.
        tick: the scheduler's period, or None for event-driven scheduling.
        decisions: how many decisions were applied (reservations included).
        cancelled_reservations: reservations whose machine could not hold them when
            due (it had failed); their instances waited again.
        reservations: every reservation made, as a row ``[made, machine, job id,
            task id, instances, start, outcome]``; the outcome is "" until it is due,
            then "started" or "cancelled".
        suspensions: instances suspended by the broker (`cloudsim.Suspend`), each time counted.
        group_devices: for each instance group of a task that asks for devices, the
            devices each of its instances took on its machine, in instance order
            (``{group id: [(device, ...), ...]}``); groups without devices are absent.
    """

    cluster: ClusterSpec
    jobs: list[JobSpec]
    tasks: TaskTable
    state: ClusterState
    groups: GroupTable = field(default_factory=GroupTable)
    makespan: float = 0.0
    broker: str = ""
    tick: float | None = None
    decisions: int = 0
    cancelled_reservations: int = 0
    reservations: list[list] = field(default_factory=list)
    suspensions: int = 0
    group_devices: dict[int, list[tuple[int, ...]]] = field(default_factory=dict)
