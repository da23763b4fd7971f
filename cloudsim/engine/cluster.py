"""The machines' state during an episode: free resources, up or down, and the fit cache.

`ClusterState` owns three numpy arrays, ``capacity[M, d]``, ``free[M, d]`` and
``up[M]``, and hands out read-only views of them. It also keeps the
(machines x waiting tasks) fit matrix up to date incrementally: a change of the
waiting set (`TaskTable.ready_version`) rebuilds it, vectorised over every
machine; a change of one machine's free vector or state recomputes only that
machine's row, the next time the matrix is read. On a cluster larger than its
queue the matrix is kept task-major in memory, where numpy's broadcasts run
along the long machine axis (about 10 times faster at 4,034 machines and a few
waiting tasks); brokers see the same (machines, tasks) array either way.

Machines may hold devices (GPUs): ``device_free[M, D]`` keeps each device's free
milli-units (-1 where a machine has fewer than D devices), and ``device_rank`` each
machine's free amounts sorted from the largest, so that "k devices with at least g
free" is one comparison, ``device_rank[m, k] >= g``, and the fit matrix stays a few
vectorised comparisons. On a cluster with devices or machine attributes the fit
matrix also asks for the devices and attribute values each task wants.

It also counts its changes (`changes`, and per machine `machine_change`, the
count at that machine's latest change), so a broker that keeps its own
per-machine state (`agents.incremental.BestPairs`) can ask which machines
changed since it last looked, in O(machines), instead of recomputing them all.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np

from cloudsim.engine.devices import device_rank
from cloudsim.engine.specs import DEVICE_MILLI, ClusterSpec

if TYPE_CHECKING:
    from cloudsim.engine.tasks import TaskTable

__all__ = ["ClusterState", "frozen", "instances_applied", "running_totals"]

_EPISODES = itertools.count()
_ROW_BY_ROW = 4  # this many changed machines or fewer: their fit rows are recomputed one by one, in place


def frozen(array: np.ndarray) -> np.ndarray:
    """A read-only view of ``array`` (the array itself stays writeable for its owner)."""
    view = array.view()
    view.flags.writeable = False
    return view


def running_totals(free: np.ndarray, demand: np.ndarray, count: int, op: np.ufunc) -> np.ndarray:
    """Row k: ``free`` after taking (np.subtract) or giving back (np.add) k instances of ``demand``,
    k = 0..count, shape (count + 1, resources).

    Free resources are running float64 totals, as in CloudSimPy: k instances change them by
    k separate roundings, not by one of ``k * demand``. The engine, and the checks of a plan's
    decisions, compute them here, so both see the same bits.
    """
    steps = np.empty((count + 1, demand.shape[0]))
    steps[0] = free
    steps[1:] = demand
    return op.accumulate(steps, axis=0)


def instances_applied(free: np.ndarray, demand: np.ndarray, count: int, op: np.ufunc) -> np.ndarray:
    """``free`` after ``count`` instances of ``demand``: the last row of `running_totals`."""
    return op(free, demand) if count == 1 else running_totals(free, demand, count, op)[-1]


class ClusterState:
    """Free resources and up/down state of every machine, and which waiting tasks fit where.

    Attributes (read-only views; the arrays change in place as the episode runs):
        spec: the `ClusterSpec`.
        capacity_view: capacity of each machine, shape (machines, resources).
        free_view: free resources of each machine now, shape (machines, resources).
        up_view: whether each machine is up (takes work), shape (machines,).
        episode: a number no other `ClusterState` of this process has: what a broker keeps
            per episode is stale when it changes.
        changes: how many changes of free resources or up state there have been.
        machine_change: per machine, the value of ``changes`` at its latest change (0: none).
        running: instances running on each machine.
    """

    def __init__(self, spec: ClusterSpec, tasks: "TaskTable") -> None:
        self.spec = spec
        self.tasks = tasks
        self.machines = spec.machines
        self.capacity = spec.capacity_array()
        self.free = self.capacity.copy()
        self.up = np.ones(spec.machines, dtype=bool)
        self.capacity_view = frozen(self.capacity)
        self.free_view = frozen(self.free)
        self.up_view = frozen(self.up)
        self.episode = next(_EPISODES)
        self.changes = 0
        self.machine_change = np.zeros(spec.machines, dtype=np.int64)
        self.running = np.zeros(spec.machines, dtype=np.int64)  # instances running on each machine
        # Devices: whether the fit matrix asks for devices and attributes at all (a cluster without either
        # never pays for them), each device's free milli-units (-1: no such device), and the ranks.
        self.constrained = bool(spec.devices or spec.attributes)
        self.device_count = spec.device_counts()
        slots = max(int(self.device_count.max()), 1)
        self.device_free = np.where(np.arange(slots) < self.device_count[:, None], DEVICE_MILLI, -1).astype(np.int64)
        self.device_rank = device_rank(self.device_free)
        self.device_free_view = frozen(self.device_free)
        # Instances holding devices on each machine, by kind: column 0 sharing, column k k whole devices.
        self.device_users = np.zeros((spec.machines, slots + 1), dtype=np.int64)
        self.device_users_view = frozen(self.device_users)
        self._accepting: dict[tuple, int] = {}  # attribute constraint -> its row of _accepting_rows
        self._accepting_rows = np.ones((0, spec.machines), dtype=bool)
        self._stale_rows: set[int] = set()
        self._fits_version = -1  # the waiting set the fit matrix was built for

    # ------------------------------------------------------------- changes
    def take(self, machine: int, demand: np.ndarray, count: int, free_after: np.ndarray | None = None) -> None:
        """``count`` instances of ``demand`` start on ``machine``: their resources leave its free vector.

        ``free_after``: the free vector they leave, when the caller has computed it already (the checks
        of a plan compute it as `instances_applied` does).
        """
        self.running[machine] += count
        self.free[machine] = instances_applied(self.free[machine], demand, count, np.subtract) \
            if free_after is None else free_after
        self._changed(machine)

    def take_many(self, machine: np.ndarray, count: np.ndarray, free_after: np.ndarray) -> None:
        """`take` of ``count[k]`` instances on ``machine[k]``, for every k in order, leaving the free
        vector ``free_after[k]`` (each computed as `take` would, after the starts before it)."""
        np.add.at(self.running, machine, count)
        self._changed_many(machine)
        # Each machine is left with the free vector of its last start (a repeated machine gets it repeatedly).
        self.free[machine] = free_after[self.machine_change[machine] - self.changes + len(machine) - 1]

    def give_back(self, machine: int, demand: np.ndarray, count: int) -> None:
        """``count`` instances of ``demand`` on ``machine`` end: their resources are free again.

        A machine left with nothing running is at its capacity exactly, whatever
        rounding its running totals gathered: the simulation never stalls on a task
        that needs a whole empty machine.
        """
        self.running[machine] -= count
        if self.running[machine] == 0:
            self.free[machine] = self.capacity[machine]
            self._changed(machine)
        else:
            self._change_free(machine, demand, count, np.add)

    def give_back_many(self, machine: np.ndarray, demand: np.ndarray, count: np.ndarray) -> None:
        """`give_back` of ``count[k]`` instances of ``demand[k]`` on ``machine[k]``, for every k in order."""
        np.subtract.at(self.running, machine, count)
        # One addition per instance, in order, as `give_back` makes them (ufunc.at adds repeated
        # machines one after another); a machine left with nothing running is at its capacity.
        np.add.at(self.free, np.repeat(machine, count), np.repeat(demand, count, axis=0))
        empty = machine[self.running[machine] == 0]
        self.free[empty] = self.capacity[empty]
        self._changed_many(machine)

    def _change_free(self, machine: int, demand: np.ndarray, count: int, op: np.ufunc) -> None:
        self.free[machine] = instances_applied(self.free[machine], demand, count, op)
        self._changed(machine)

    def set_machines(self, free: np.ndarray, running: np.ndarray, device_free: np.ndarray | None = None,
                     device_users: np.ndarray | None = None) -> None:
        """Take every machine's free resources and running instances, and on a cluster with devices its devices'
        free milli-units and users by kind, from an episode run on the engine's compiled path
        (`cloudsim.engine.compiled`); every machine counts as changed."""
        given = {"free": (free, self.free), "running": (running, self.running)}
        if device_free is not None:
            given.update(device_free=(device_free, self.device_free), device_users=(device_users, self.device_users))
        wrong = [f"{name} {new.shape} (not {old.shape})" for name, (new, old) in given.items()
                 if new.shape != old.shape]
        if wrong:
            raise ValueError(f"set_machines: {', '.join(wrong)}")
        for new, old in given.values():
            old[:] = new
        if device_free is not None:
            self.device_rank[:] = device_rank(self.device_free)
        self._changed_many(np.arange(self.machines))

    def take_devices(self, machine: int, instances: list[tuple[int, ...]], milli: int) -> None:
        """Instances starting on ``machine`` take ``milli`` of each of their devices (one tuple each)."""
        self._move_devices(machine, instances, milli, -1)

    def give_devices(self, machine: int, instances: list[tuple[int, ...]], milli: int) -> None:
        """Instances ending on ``machine`` give back ``milli`` of each of their devices."""
        self._move_devices(machine, instances, milli, 1)

    def _move_devices(self, machine: int, instances: list[tuple[int, ...]], milli: int, sign: int) -> None:
        free, users = self.device_free[machine], self.device_users[machine]
        for held in instances:  # a few devices: plain indexing beats numpy's ufunc.at here
            for d in held:
                free[d] += sign * milli
            users[0 if milli < DEVICE_MILLI else len(held)] -= sign  # kind 0: a share; k: k whole devices
        self._device_changed(machine)

    def _device_changed(self, machine: int) -> None:
        self.device_rank[machine, 1:] = -np.sort(-self.device_free[machine])  # `device_rank`, in place
        self._changed(machine)

    def accepted_by(self, machine: int) -> np.ndarray:
        """Whether each waiting task accepts ``machine``'s attributes, a bool array (waiting tasks,)."""
        self.fit_matrix()  # brings the waiting set's constraints up to date
        return self._allowed[:, machine]

    def accepting(self, accepts: tuple) -> np.ndarray:
        """The machines an attribute constraint (`cloudsim.engine.specs.TaskSpec.accepts`) accepts, (machines,)."""
        row = self._accepting_row(accepts)  # first: it may add the row
        return self._accepting_rows[row]

    def _accepting_row(self, accepts: tuple) -> int:
        row = self._accepting.get(accepts)
        if row is None:
            row = self._accepting[accepts] = len(self._accepting)
            self._accepting_rows = np.vstack([self._accepting_rows, self.spec.accepting(accepts)])
        return row

    def set_up(self, machine: int, up: bool) -> None:
        """The machine takes work (``up``) or not."""
        self.up[machine] = up
        self._changed(machine)

    def _changed_many(self, machines: np.ndarray) -> None:
        """`_changed` of each of ``machines``, in order: a machine keeps the number of its last change
        (the largest, as the numbers only grow)."""
        np.maximum.at(self.machine_change, machines, np.arange(self.changes + 1, self.changes + len(machines) + 1))
        self.changes += len(machines)
        self._stale_rows.update(machines.tolist())

    def _changed(self, machine: int) -> None:
        self._stale_rows.add(machine)
        self.changes += 1
        self.machine_change[machine] = self.changes

    # ----------------------------------------------------------- fit cache
    def fit_matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """The (machines, waiting tasks) fit matrix and, per machine, whether its row has a fit.

        Machine m fits task t when m is up and ``free[m] >= demand[t]`` in every
        resource, and, on a cluster with devices or attributes, m has the task's devices
        with room (``device_rank[m, count] >= milli``) and an accepted attribute value.
        Both arrays are read-only and kept up to date incrementally.
        """
        if self._fits_version != self.tasks.ready_version:
            demand = self.tasks.ready_demand()
            if self.constrained:
                tasks = self.tasks
                rows = tasks.ready - tasks.task_base
                request = tasks.ready_device_request()
                self._need_count, self._need_milli = request[:, 0], request[:, 1]
                which = [self._accepting_row(tasks.task_accepts[r]) for r in rows.tolist()]  # may add rows
                self._allowed = self._accepting_rows[which] if which else np.ones((0, self.machines), dtype=bool)
            # A resource no waiting task asks for cannot fail a fit test: skip it.
            self._fit_resources = np.flatnonzero(demand.any(axis=0)).tolist()
            self._demand_by_resource = self.tasks.ready_demand_by_resource()
            # numpy broadcasts fastest along a long last axis: with fewer waiting tasks than machines
            # (a large cluster), keep the matrix task-major in memory; `fits` is (machines, tasks) either way.
            tasks = demand.shape[0]
            self._task_major = tasks < self.machines
            self._fits = np.empty((tasks, self.machines), dtype=bool).T if self._task_major else \
                np.empty((self.machines, tasks), dtype=bool)
            self._machine_fits_some = np.empty(self.machines, dtype=bool)
            self._frozen_fits = frozen(self._fits), frozen(self._machine_fits_some)
            self._fits_version = self.tasks.ready_version
            self._refresh_fits(slice(None))  # every machine at once, vectorised
        elif len(self._stale_rows) <= _ROW_BY_ROW:
            for machine in self._stale_rows:
                self._refresh_row(machine)
        else:
            self._refresh_fits(np.fromiter(self._stale_rows, dtype=np.int64))  # all at once, vectorised
        self._stale_rows.clear()
        return self._frozen_fits

    def _refresh_row(self, machine: int) -> None:
        """Recompute machine ``machine``'s fit row in place, one resource at a time along the row."""
        row = self._fits[machine]
        if not self.up[machine] or not self._fit_resources:
            row[:] = self.up[machine]
        else:
            free = self.free[machine].tolist()
            first, *others = self._fit_resources
            np.less_equal(self._demand_by_resource[first], free[first], out=row)
            for r in others:
                row &= self._demand_by_resource[r] <= free[r]
        if self.constrained and self.up[machine]:
            row &= self.device_rank[machine, self._need_count] >= self._need_milli
            row &= self._allowed[:, machine]
        self._machine_fits_some[machine] = row.any()

    def _refresh_fits(self, machines: slice | np.ndarray) -> None:
        """Recompute the fit rows of ``machines`` (a slice, or an array of machine numbers): up, and
        ``demand <= free`` in every resource asked for."""
        if self._task_major:
            columns = self._fits.T[:, machines]  # (tasks, machines): a view for a slice, a copy for an array
            columns[:] = self.up[machines]
            for r in self._fit_resources:
                columns &= self._demand_by_resource[r, :, None] <= self.free[machines, r]
            if self.constrained:
                columns &= self.device_rank[machines][:, self._need_count].T >= self._need_milli[:, None]
                columns &= self._allowed[:, machines]
            self._machine_fits_some[machines] = columns.any(axis=0)
            if not isinstance(machines, slice):
                self._fits.T[:, machines] = columns
            return
        rows = self._fits[machines]
        rows[:] = self.up[machines, None]
        for r in self._fit_resources:
            rows &= self._demand_by_resource[r] <= self.free[machines, r, None]
        if self.constrained:
            rows &= self.device_rank[machines][:, self._need_count] >= self._need_milli
            rows &= self._allowed[:, machines].T
        self._machine_fits_some[machines] = rows.any(axis=1)
        if not isinstance(machines, slice):
            self._fits[machines] = rows
