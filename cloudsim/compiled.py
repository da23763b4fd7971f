"""The engine's compiled path: one compiled call per SimPy event, on state kept incrementally.

`Simulation.run` spends most of its time in Python structure around the simulation: a view and its fit
matrix per round, the broker's plan as objects, the plan checked again, the waiting set rebuilt per
change. A built-in broker that declares a compiled round (``compiled_round = "first-fit"``, honoured
only while the class that declares it also defines ``decide``) runs here instead. SimPy stays the clock
and makes exactly the events the Python path makes, in the same order: an arrival process (one timeout
per job), one end-of-instant round event per instant with changes, one timeout per distinct end time of
a round's groups. Each event's callback is one compiled call (numba, cached on disk) on the state below,
and the run ends with the same task, job and group tables, bit for bit (tests/test_compiled.py holds the
two paths to that, group for group).

The state lives in two packed buffers, ``ints`` and ``floats`` (passing a few arrays to a compiled call
costs less than passing many, or a jitclass), laid out by `_Layout`: a header of scalars and region
offsets, then one region per array. The group rows live in two growable arrays beside them.

First-fit's round is kept incremental. After a round no waiting task fits any machine (first-fit starts
whatever fits), so the next round needs to visit only the machines freed since (*dirty*) and, for each
task that became ready since (*new*), the first machine that fits it. A max-free segment tree over the
machines and a min-demand segment tree over the tasks (a task that waits for nothing holds +inf) find
"the first machine from m on that fits task t" and "the first task from t on that fits machine m" in
logarithmic time; a heap of (machine, task) keys visits the machines in order. Visiting a machine starts,
task by task in arrival order, every waiting instance that fits, with the engine's arithmetic (free
resources as running totals, one subtraction per instance): the plan `agents.heuristics.FirstFit` makes.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from cloudsim.record import by_end_time

__all__ = ["COMPILED_ROUNDS", "CompiledState"]

COMPILED_ROUNDS = ("first-fit",)  # the rounds this module compiles (a broker's ``compiled_round``)

# ----------------------------------------------------------------------------------- the buffers' header
# Scalars of the int buffer
MACHINES, RESOURCES, TASKS, JOBS, MACHINE_LEAVES, TASK_LEAVES = range(6)
GROUPS, DIRTY, NEW, WAITING_TASKS, UNFINISHED_JOBS, RUNNING, SEGMENTS, VISIT, WAITING_INSTANCES = range(6, 15)
# Offsets of the int regions
(JOB_FIRST_TASK, TASK_JOB, INSTANCES, PENDING, CHILD_START, CHILDREN, JOB_LEFT, ON_MACHINE, WAITING, FINISHED,
 NEXT_FRESH, IS_DIRTY, DIRTY_LIST, NEW_LIST, HEAP, STACK, MARK, TOUCHED) = range(15, 33)
# Offsets of the float regions (kept in the int buffer's header too)
(CAPACITY, FREE, DEMAND, DURATION, READY_TIME, START_TIME, FINISH_TIME, JOB_ARRIVAL, JOB_FINISH, MAX_FREE,
 MIN_DEMAND) = range(33, 44)
INT_HEADER = 48
# Scalars of the float buffer
LATEST_FINISH = 0
FLOAT_HEADER = 4
# Columns of the group rows: ints (task, machine, first instance, instances, the group launched k-th, where the
# s-th end time of the latest round begins among its launched rows, at row first + s)
G_TASK, G_MACHINE, G_FIRST, G_INSTANCES, G_LAUNCHED, G_END_TIME = range(6)
GROUP_INTS = 6
# floats (duration, start, end)
G_DURATION, G_START, G_END = range(3)
STACK_SIZE = 3 * 140  # (node, left, width) per entry: two entries per level of a tree of up to 2**63 leaves
# What an event's call says of the round it was allowed to run (its decisions when it ran one)
NOTHING_WAITS = -1  # no round is needed
ROUND_DUE = -2  # tasks wait: a round is due at this instant, and the call was not to run it
NO_ROOM = -3  # the round needs more group rows first (`CompiledState` grows them and runs it)
ORDER_HERE = -1  # the end times of a round of more than ORDER_FROM groups, which `CompiledState` orders
ORDER_FROM = 16
# What an event is (`_event`, the one compiled call of every event: one function to compile, not one per kind)
ARRIVAL, END, ROUND = range(3)


def _leaves(n: int) -> int:
    """The leaves of a segment tree over ``n`` items: the power of two at or above ``n``."""
    return 1 << max(n - 1, 0).bit_length()


class _Layout:
    """Lays out named regions one after another in one buffer, after a header, and records each
    region's offset in the int buffer's header."""

    def __init__(self, header: int, dtype) -> None:
        self.parts: list[tuple[int, np.ndarray]] = []
        self.size = header
        self.dtype = dtype

    def add(self, slot: int, values) -> None:
        values = np.asarray(values, dtype=self.dtype).ravel()
        self.parts.append((slot, values))
        self.size += len(values)

    def build(self, header_of: np.ndarray | None = None) -> np.ndarray:
        buffer = np.zeros(self.size, dtype=self.dtype)
        at = len(buffer) - sum(len(values) for _, values in self.parts)
        for slot, values in self.parts:
            (buffer if header_of is None else header_of)[slot] = at
            buffer[at:at + len(values)] = values
            at += len(values)
        return buffer


class CompiledState:
    """One episode's state in packed buffers, and the compiled calls of its SimPy events.

    Built from the episode's `TaskTable` and `ClusterState` before it starts (nothing arrived, nothing
    runs); `write_back` hands the state to them, and the groups to the `GroupTable`, when it is over.

    Args:
        capacity: each machine's capacity, shape (machines, resources).
        tasks: the episode's `TaskTable` (read: the jobs, tasks, demands, durations and the DAG).
    """

    ROUND_DUE = ROUND_DUE

    def __init__(self, capacity: np.ndarray, tasks) -> None:
        machines, resources = capacity.shape
        n_tasks, n_jobs = len(tasks.task_job), len(tasks.jobs)
        self.machines = machines
        machine_leaves, task_leaves = _leaves(machines), _leaves(n_tasks)
        child_start = np.zeros(n_tasks + 1, dtype=np.int64)
        child_start[1:] = np.cumsum([len(c) for c in tasks.children])
        children = np.fromiter((c for kids in tasks.children for c in kids), dtype=np.int64, count=child_start[-1])
        ints = _Layout(INT_HEADER, np.int64)
        for slot, values in ((JOB_FIRST_TASK, tasks.job_first_task), (TASK_JOB, tasks.task_job),
                             (INSTANCES, tasks.task_instances), (PENDING, tasks.task_pending_parents),
                             (CHILD_START, child_start), (CHILDREN, children),
                             (JOB_LEFT, tasks.job_unfinished_tasks), (ON_MACHINE, np.zeros(machines)),
                             (WAITING, tasks.task_instances), (FINISHED, np.zeros(n_tasks)),
                             (NEXT_FRESH, np.zeros(n_tasks)), (IS_DIRTY, np.zeros(machines)),
                             (DIRTY_LIST, np.zeros(machines)), (NEW_LIST, np.zeros(n_tasks)),
                             (HEAP, np.zeros(machines + n_tasks)), (STACK, np.zeros(STACK_SIZE)),
                             (MARK, np.zeros(n_tasks)), (TOUCHED, np.zeros(n_tasks))):
            ints.add(slot, values)
        self.ints = ints.build()
        self.ints[[MACHINES, RESOURCES, TASKS, JOBS, MACHINE_LEAVES, TASK_LEAVES, UNFINISHED_JOBS]] = (
            machines, resources, n_tasks, n_jobs, machine_leaves, task_leaves, tasks.unfinished_jobs)
        max_free = np.full((2 * machine_leaves, resources), -np.inf)
        max_free[machine_leaves:machine_leaves + machines] = capacity
        for node in range(machine_leaves - 1, 0, -1):
            max_free[node] = np.maximum(max_free[2 * node], max_free[2 * node + 1])
        floats = _Layout(FLOAT_HEADER, np.float64)
        for slot, values in ((CAPACITY, capacity), (FREE, capacity), (DEMAND, tasks.task_demand),
                             (DURATION, tasks.task_duration), (READY_TIME, np.full(n_tasks, np.nan)),
                             (START_TIME, np.full(n_tasks, np.nan)), (FINISH_TIME, np.full(n_tasks, np.nan)),
                             (JOB_ARRIVAL, np.full(n_jobs, np.nan)), (JOB_FINISH, np.full(n_jobs, np.nan)),
                             (MAX_FREE, max_free), (MIN_DEMAND, np.full((2 * task_leaves, resources), np.inf))):
            floats.add(slot, values)
        self.floats = floats.build(header_of=self.ints)
        self.group_ints = np.zeros((1024, GROUP_INTS), dtype=np.int64)
        self.group_floats = np.zeros((1024, 3))
        # Load the kernels now (from numba's cache on disk; compiled on an installation's first run), not at
        # the episode's first events, so that a run's simulation time is the simulation's.
        _event(self.ints, self.floats, self.group_ints, self.group_floats, ROUND, 0, 0, 0.0, True)  # (nothing waits)

    # ------------------------------------------------------------------ the counters
    @property
    def unfinished_jobs(self) -> int:
        return int(self.ints[UNFINISHED_JOBS])

    @property
    def running_instances(self) -> int:
        return int(self.ints[RUNNING])

    @property
    def waiting_tasks(self) -> int:
        """Ready tasks with waiting instances (the waiting set's size)."""
        return int(self.ints[WAITING_TASKS])

    # ------------------------------------------------------------------ the events
    # Each returns the round's outcome: (decisions or NOTHING_WAITS / ROUND_DUE, end times, then the first end
    # time's delay and the launched groups (a, b) it ends); the end times beyond the first are `end_times`.
    def arrive(self, job: int, now: float, may_round: bool) -> tuple:
        """Job ``job`` (its arrival position) arrives now; then, if ``may_round``, the round."""
        outcome = _event(self.ints, self.floats, self.group_ints, self.group_floats, ARRIVAL, job, 0, float(now),
                         may_round)
        return outcome[1:] if outcome[1] != NO_ROOM else self._round_with_room(now, outcome[2])

    def end(self, a: int, b: int, now: float, may_round: bool) -> tuple:
        """The groups launched ``a``-th to ``b``-th finish now; then, if ``may_round``, the round. Returns the
        jobs this finished, then the round's outcome."""
        outcome = _event(self.ints, self.floats, self.group_ints, self.group_floats, END, a, b, float(now), may_round)
        return outcome if outcome[1] != NO_ROOM else (outcome[0], *self._round_with_room(now, outcome[2]))

    def round(self, now: float) -> tuple:
        """A first-fit round now (NOTHING_WAITS where nothing waits)."""
        outcome = _event(self.ints, self.floats, self.group_ints, self.group_floats, ROUND, 0, 0, float(now), True)
        return outcome[1:] if outcome[1] != NO_ROOM else self._round_with_room(now, outcome[2])

    def _round_with_room(self, now: float, rows: int) -> tuple:
        """The round, after growing the group rows to hold ``rows`` more."""
        size = max(int(self.ints[GROUPS]) + rows, 2 * len(self.group_ints))
        self.group_ints = np.concatenate([self.group_ints, np.zeros((size - len(self.group_ints), GROUP_INTS),
                                                                    np.int64)])
        self.group_floats = np.concatenate([self.group_floats, np.zeros((size - len(self.group_floats), 3))])
        return _event(self.ints, self.floats, self.group_ints, self.group_floats, ROUND, 0, 0, float(now), True)[1:]

    def end_times(self, first: int, count: int) -> list[tuple[float, tuple[int, int]]]:
        """The latest round's groups by end time, given its first launched row and its ``count`` end times
        (ORDER_HERE: not ordered yet): ``(delay, (a, b))`` per distinct end time, in the order of its first
        group; `end` takes ``a, b``."""
        stop = int(self.ints[GROUPS])
        if count == ORDER_HERE:  # a long round: ordered here, by numpy, as the Python path orders its groups
            ends = by_end_time(float(self.group_floats[first, G_START]), self.group_floats[first:stop, G_DURATION])
            self.group_ints[first:stop, G_LAUNCHED] = first + np.concatenate(ends)
            lengths = np.array([len(members) for members in ends])
            self.group_ints[first:first + len(ends), G_END_TIME] = first + np.cumsum(lengths) - lengths
            count = len(ends)
        bounds = [*self.group_ints[first:first + count, G_END_TIME].tolist(), stop]
        launched, duration = self.group_ints[:, G_LAUNCHED], self.group_floats[:, G_DURATION]
        return [(float(duration[launched[a]]), (a, b)) for a, b in zip(bounds, bounds[1:])]

    # ------------------------------------------------------------------ the results
    def write_back(self, tasks, state, groups) -> int:
        """Hand the state to the episode's `TaskTable`, `ClusterState` and `GroupTable`; returns the decisions
        (groups) made."""
        ints, floats = self.ints, self.floats
        n_tasks, n_jobs, machines = int(ints[TASKS]), int(ints[JOBS]), self.machines
        resources = int(ints[RESOURCES])

        def region(buffer, slot, length):
            return buffer[int(ints[slot]):int(ints[slot]) + length]

        started = region(ints, NEXT_FRESH, n_tasks)
        tasks.set_progress(
            started=started, finished=region(ints, FINISHED, n_tasks),
            pending_parents=region(ints, PENDING, n_tasks), ready_time=region(floats, READY_TIME, n_tasks),
            start_time=region(floats, START_TIME, n_tasks), finish_time=region(floats, FINISH_TIME, n_tasks),
            job_arrival=region(floats, JOB_ARRIVAL, n_jobs), job_finish=region(floats, JOB_FINISH, n_jobs),
            job_unfinished_tasks=region(ints, JOB_LEFT, n_jobs), unfinished_jobs=self.unfinished_jobs,
            running_instances=self.running_instances, latest_finish=float(floats[LATEST_FINISH]))
        state.set_machines(region(floats, FREE, machines * resources).reshape(machines, resources),
                           region(ints, ON_MACHINE, machines))
        n = int(ints[GROUPS])
        gi, gf = self.group_ints[:n], self.group_floats[:n]
        groups.add_rows(gi[:, G_TASK], gi[:, G_MACHINE], gi[:, G_FIRST], gi[:, G_INSTANCES], gf[:, G_DURATION],
                        gf[:, G_START], gf[:, G_END])
        return n


# ------------------------------------------------------------------------------- compiled helpers
@numba.njit(cache=True, inline="always")
def _ints(ints, slot, length):
    at = ints[slot]
    return ints[at:at + length]


@numba.njit(cache=True, inline="always")
def _floats(ints, floats, slot, length):
    at = ints[slot]
    return floats[at:at + length]


@numba.njit(cache=True)
def _set_leaf(tree, leaves, i, values, use_max):
    """Leaf ``i`` of a segment tree (rows per node, one column per resource) takes ``values``; the nodes above
    it become the maximum (``use_max``) or minimum of their children again."""
    node = leaves + i
    tree[node, :] = values
    node //= 2
    while node >= 1:
        for r in range(tree.shape[1]):
            a, b = tree[2 * node, r], tree[2 * node + 1, r]
            tree[node, r] = (a if a >= b else b) if use_max else (a if a <= b else b)
        node //= 2


@numba.njit(cache=True)
def _first_leaf(tree, leaves, bound, lo, at_least, stack):
    """The first leaf from ``lo`` on whose row is at least ``bound`` in every column (``at_least``: a max tree,
    the first machine from ``lo`` on whose free resources hold demand ``bound``), or at most ``bound`` (a min
    tree, the first waiting task whose demand free resources ``bound`` hold); -1 if none. A node whose
    maximum (minimum) misses the bound in a column has no such leaf below it."""
    stack[0], stack[1], stack[2] = 1, 0, leaves
    top = 3
    while top:
        top -= 3
        node, left, width = stack[top], stack[top + 1], stack[top + 2]
        if left + width <= lo:
            continue
        holds = True
        for r in range(bound.shape[0]):
            if (tree[node, r] < bound[r]) if at_least else (tree[node, r] > bound[r]):
                holds = False
                break
        if not holds:
            continue
        if width == 1:
            return left
        half = width // 2
        stack[top], stack[top + 1], stack[top + 2] = 2 * node + 1, left + half, half
        stack[top + 3], stack[top + 4], stack[top + 5] = 2 * node, left, half
        top += 6
    return -1


@numba.njit(cache=True)
def _heap_push(heap, size, key):
    i = size
    heap[i] = key
    while i > 0:
        parent = (i - 1) // 2
        if heap[parent] <= heap[i]:
            break
        heap[parent], heap[i] = heap[i], heap[parent]
        i = parent
    return size + 1


@numba.njit(cache=True)
def _heap_pop(heap, size):
    """The smallest key, and the heap's new size."""
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        small, left = i, 2 * i + 1
        if left < size and heap[left] < heap[small]:
            small = left
        if left + 1 < size and heap[left + 1] < heap[small]:
            small = left + 1
        if small == i:
            break
        heap[small], heap[i] = heap[i], heap[small]
        i = small
    return top, size


@numba.njit(cache=True)
def _release(ints, floats, task, now):
    """Task ``task`` becomes ready now: it waits (it has not started) and is new to the next round."""
    n_tasks, resources = ints[TASKS], ints[RESOURCES]
    _floats(ints, floats, READY_TIME, n_tasks)[task] = now
    new = _ints(ints, NEW_LIST, n_tasks)
    new[ints[NEW]] = task
    ints[NEW] += 1
    ints[WAITING_TASKS] += 1
    ints[WAITING_INSTANCES] += _ints(ints, WAITING, n_tasks)[task]
    leaves = ints[TASK_LEAVES]
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    tree = _floats(ints, floats, MIN_DEMAND, 2 * leaves * resources).reshape(2 * leaves, resources)
    _set_leaf(tree, leaves, task, demand[task], False)


@numba.njit(cache=True)
def _arrive(ints, floats, job, now):
    n_tasks = ints[TASKS]
    first_task = _ints(ints, JOB_FIRST_TASK, ints[JOBS] + 1)
    pending = _ints(ints, PENDING, n_tasks)
    _floats(ints, floats, JOB_ARRIVAL, ints[JOBS])[job] = now
    for task in range(first_task[job], first_task[job + 1]):
        if pending[task] == 0:
            _release(ints, floats, task, now)


@numba.njit(cache=True)
def _end(ints, floats, group_ints, group_floats, a, b, now):
    """The groups launched ``a``-th to ``b``-th finish now; returns the jobs this finished.

    As the engine ends a group: the machine's free resources come back one instance at a time (exactly its
    capacity once nothing runs there), the task finishes with its last instance, its children whose last
    parent it was become ready, and its job finishes with its last task."""
    n_tasks, n_jobs, machines, resources = ints[TASKS], ints[JOBS], ints[MACHINES], ints[RESOURCES]
    on_machine = _ints(ints, ON_MACHINE, machines)
    finished = _ints(ints, FINISHED, n_tasks)
    instances = _ints(ints, INSTANCES, n_tasks)
    pending = _ints(ints, PENDING, n_tasks)
    child_start = _ints(ints, CHILD_START, n_tasks + 1)
    children = _ints(ints, CHILDREN, child_start[n_tasks])
    task_job = _ints(ints, TASK_JOB, n_tasks)
    job_left = _ints(ints, JOB_LEFT, n_jobs)
    is_dirty = _ints(ints, IS_DIRTY, machines)
    dirty = _ints(ints, DIRTY_LIST, machines)
    capacity = _floats(ints, floats, CAPACITY, machines * resources).reshape(machines, resources)
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    finish_time = _floats(ints, floats, FINISH_TIME, n_tasks)
    job_finish = _floats(ints, floats, JOB_FINISH, n_jobs)
    jobs = 0
    for k in range(a, b):
        gid = group_ints[k, G_LAUNCHED]
        task, machine, n = group_ints[gid, G_TASK], group_ints[gid, G_MACHINE], group_ints[gid, G_INSTANCES]
        group_floats[gid, G_END] = now
        on_machine[machine] -= n
        if on_machine[machine] == 0:
            free[machine, :] = capacity[machine, :]
        else:
            for _ in range(n):
                for r in range(resources):
                    free[machine, r] += demand[task, r]
        if not is_dirty[machine]:
            is_dirty[machine] = 1
            dirty[ints[DIRTY]] = machine
            ints[DIRTY] += 1
        ints[RUNNING] -= n
        finished[task] += n
        if finished[task] < instances[task]:
            continue
        finish_time[task] = now
        for c in range(child_start[task], child_start[task + 1]):
            child = children[c]
            pending[child] -= 1
            if pending[child] == 0:
                _release(ints, floats, child, now)
        job = task_job[task]
        job_left[job] -= 1
        if job_left[job] == 0:
            job_finish[job] = now
            if now > floats[LATEST_FINISH]:
                floats[LATEST_FINISH] = now
            ints[UNFINISHED_JOBS] -= 1
            jobs += 1
    return jobs


@numba.njit(cache=True)
def _event(ints, floats, group_ints, group_floats, kind, a, b, now, may_round):
    """One SimPy event: job ``a``'s ARRIVAL, the END of the groups launched ``a``-th to ``b``-th, or a ROUND; then,
    if ``may_round`` and something waits, the round. Returns (jobs finished, decisions, end times, the first
    end time's delay, its launched groups a, b), where the decisions are NOTHING_WAITS (and no round ran),
    ROUND_DUE (something waits and ``may_round`` is false), or NO_ROOM with the group rows needed in place
    of the end times (nothing ran: grow them and ask for the ROUND). A round starts at least one instance
    per decision and makes at most one decision per task on each machine."""
    jobs = 0
    if kind == ARRIVAL:
        _arrive(ints, floats, a, now)
    elif kind == END:
        jobs = _end(ints, floats, group_ints, group_floats, a, b, now)
    if ints[WAITING_TASKS] == 0:
        return jobs, NOTHING_WAITS, 0, 0.0, 0, 0
    if not may_round:
        return jobs, ROUND_DUE, 0, 0.0, 0, 0
    need = min(ints[WAITING_INSTANCES], ints[WAITING_TASKS] * ints[MACHINES])
    if group_ints.shape[0] - ints[GROUPS] < need:
        return jobs, NO_ROOM, need, 0.0, 0, 0
    made = _first_fit_round(ints, floats, group_ints, group_floats, now)
    segments = ints[SEGMENTS]
    first = ints[GROUPS] - made
    if segments <= 0:  # no groups, or ORDER_HERE
        return jobs, made, segments, 0.0, first, 0
    stop = group_ints[first + 1, G_END_TIME] if segments > 1 else ints[GROUPS]
    return jobs, made, segments, group_floats[group_ints[first, G_LAUNCHED], G_DURATION], first, stop


@numba.njit(cache=True)
def _first_fit_round(ints, floats, group_ints, group_floats, now):
    """First-fit's round now: machine by machine in order, every waiting task in arrival order that fits
    what the machine has left, with as many of its waiting instances as fit (`agents.heuristics.FirstFit`).
    Records the groups and orders them by end time (`_order_ends`); returns the decisions made."""
    n_tasks, machines, resources = ints[TASKS], ints[MACHINES], ints[RESOURCES]
    machine_leaves, task_leaves = ints[MACHINE_LEAVES], ints[TASK_LEAVES]
    waiting = _ints(ints, WAITING, n_tasks)
    next_fresh = _ints(ints, NEXT_FRESH, n_tasks)
    on_machine = _ints(ints, ON_MACHINE, machines)
    is_dirty = _ints(ints, IS_DIRTY, machines)
    dirty = _ints(ints, DIRTY_LIST, machines)
    new = _ints(ints, NEW_LIST, n_tasks)
    heap = _ints(ints, HEAP, machines + n_tasks)
    stack = _ints(ints, STACK, STACK_SIZE)
    mark = _ints(ints, MARK, n_tasks)
    touched = _ints(ints, TOUCHED, n_tasks)
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    duration = _floats(ints, floats, DURATION, n_tasks)
    start_time = _floats(ints, floats, START_TIME, n_tasks)
    max_free = _floats(ints, floats, MAX_FREE, 2 * machine_leaves * resources).reshape(2 * machine_leaves, resources)
    min_demand = _floats(ints, floats, MIN_DEMAND, 2 * task_leaves * resources).reshape(2 * task_leaves, resources)
    gone = np.full(resources, np.inf)  # the min-demand leaf of a task with nothing left waiting
    key_base = n_tasks + 1  # a heap key: machine * key_base + task + 1 (task -1: a machine freed since)
    size = 0
    # Machines freed since the last round may fit any waiting task; a task new since then may fit any machine.
    for i in range(ints[DIRTY]):
        machine = dirty[i]
        is_dirty[machine] = 0
        _set_leaf(max_free, machine_leaves, machine, free[machine], True)
        size = _heap_push(heap, size, machine * key_base)
    ints[DIRTY] = 0
    for i in range(ints[NEW]):
        task = new[i]
        machine = _first_leaf(max_free, machine_leaves, demand[task], 0, True, stack)
        if machine >= 0:
            size = _heap_push(heap, size, machine * key_base + task + 1)
    ints[NEW] = 0
    first_group = ints[GROUPS]
    while size:
        key, size = _heap_pop(heap, size)
        machine = key // key_base
        ints[VISIT] += 1
        visit = ints[VISIT]
        n_touched = 0
        while True:  # the tasks whose first fitting machine this was
            task = key % key_base - 1
            if task >= 0 and mark[task] != visit:
                mark[task] = visit
                touched[n_touched] = task
                n_touched += 1
            if size == 0 or heap[0] // key_base != machine:
                break
            key, size = _heap_pop(heap, size)
        left = free[machine]
        task = _first_leaf(min_demand, task_leaves, left, 0, False, stack)
        while task >= 0:
            count = 0
            need = demand[task]
            while count < waiting[task]:
                fits = True
                for r in range(resources):
                    if need[r] > left[r]:
                        fits = False
                        break
                if not fits:
                    break
                for r in range(resources):
                    left[r] -= need[r]
                count += 1
            gid = ints[GROUPS]
            ints[GROUPS] += 1
            group_ints[gid, G_TASK] = task
            group_ints[gid, G_MACHINE] = machine
            group_ints[gid, G_FIRST] = next_fresh[task]
            group_ints[gid, G_INSTANCES] = count
            group_floats[gid, G_DURATION] = duration[task]
            group_floats[gid, G_START] = now
            group_floats[gid, G_END] = math.nan
            if math.isnan(start_time[task]):
                start_time[task] = now
            next_fresh[task] += count
            waiting[task] -= count
            ints[WAITING_INSTANCES] -= count
            on_machine[machine] += count
            ints[RUNNING] += count
            if waiting[task] == 0:
                _set_leaf(min_demand, task_leaves, task, gone, False)
                ints[WAITING_TASKS] -= 1
            if mark[task] != visit:
                mark[task] = visit
                touched[n_touched] = task
                n_touched += 1
            task = _first_leaf(min_demand, task_leaves, left, task + 1, False, stack)
        _set_leaf(max_free, machine_leaves, machine, left, True)
        # Machines before the next one to visit fit none of these tasks, and keep their free resources until
        # they are visited: each task still waiting is next due at the first later machine that fits it.
        for i in range(n_touched):
            task = touched[i]
            if waiting[task] > 0:
                later = _first_leaf(max_free, machine_leaves, demand[task], machine + 1, True, stack)
                if later >= 0:
                    size = _heap_push(heap, size, later * key_base + task + 1)
    _order_ends(ints, floats, group_ints, group_floats, first_group, ints[GROUPS], now)
    return ints[GROUPS] - first_group


@numba.njit(cache=True)
def _order_ends(ints, floats, group_ints, group_floats, first, stop, now):
    """The round's groups ``first..stop-1`` by end time (now + duration), as `cloudsim.record.by_end_time`
    orders them: the groups of each distinct end time in launch order, the end times in the order of their
    first group; written to the launch column, the s-th end time beginning at launched row
    ``group_ints[first + s, G_END_TIME]``. A round of more than ORDER_FROM groups is left to
    `CompiledState.end_times` (SEGMENTS = ORDER_HERE): numpy sorts it there, where a search over the end
    times found so far, as here, would grow with their square."""
    n = stop - first
    if n > ORDER_FROM:
        ints[SEGMENTS] = ORDER_HERE
        return
    keys = np.empty(n)
    which = np.empty(n, dtype=np.int64)  # each group's end time, numbered in the order of first appearance
    sizes = np.zeros(n, dtype=np.int64)
    count = 0
    for k in range(n):
        key = now + group_floats[first + k, G_DURATION]
        e = 0
        while e < count and keys[e] != key:
            e += 1
        if e == count:
            keys[count] = key
            count += 1
        which[k] = e
        sizes[e] += 1
    at = first
    for e in range(count):
        group_ints[first + e, G_END_TIME] = at
        at += sizes[e]
    for e in range(count):  # (reused as each end time's next free row)
        sizes[e] = group_ints[first + e, G_END_TIME]
    for k in range(n):
        group_ints[sizes[which[k]], G_LAUNCHED] = first + k
        sizes[which[k]] += 1
    ints[SEGMENTS] = count
