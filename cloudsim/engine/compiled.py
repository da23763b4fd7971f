"""The engine's compiled path: one compiled call per SimPy event, on state kept incrementally.

`Simulation.run` spends most of its time in Python structure around the simulation: a view and its fit
matrix per round, the broker's plan as objects, the plan checked again, the waiting set rebuilt per
change. A built-in broker that declares a compiled round (``compiled_round(resources)`` answering a
`cloudsim.engine.broker.CompiledRound`, honoured only while the class that declares it defines ``decide`` or
inherits it) runs here instead. SimPy stays the clock
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

A pair score's round (Tetris's ``"dot"``, Packer's ``"shares"``) starts one instance of the best fit
(machine, task) pair at a time. A pair's score comes from its machine's free resources (and capacity) and
its task, so machines with equal rows score alike: as `agents.kernels.state_round` does within a round,
the machines are grouped into *states* (one per distinct row, found by a hash table), with one score per
state and waiting task and each state's best task, but here the states and their scores are kept from
round to round. A round moves the machines freed since the last one to their new states and scores the
tasks that became ready since over the states; each start moves one machine, and a task that runs out
leaves the states that ranked it first to look again. The best pair is the state with the highest best
score (its lowest machine on ties) with its best task (the earliest on ties): the pair `np.argmax` finds
in machine-major order, with the same sums in the same order, so the same plan as the kernel's. DeepJS's
``"fitness"`` is such a score too, the network's output on the pair's features (`_fitness`, the same
arithmetic as `cloudsim.engine.kernels.mlp`); as it reads the task's waiting count, a start scores its task
again on every state it fits. Tetris*'s score (``"tetris-star"``) scales Packer's alignment and the task's
shortness by their maxima over every fit pair: the states keep their alignments, each state its highest and
each task how many states it fits, so that the two maxima cost one pass over the states and one over the
tasks per start; each state's best is found again only when a maximum moves.

EASY backfilling's round (``"easy"``) is its plan of one decision at a time: the head of the queue on the
first machine that fits it (the max-free tree), else a reservation of one instance at its earliest start over
the machines; while that is pending, the first task in arrival order that fits a machine now, the reserved
machine only where it fits around the reservation. Earliest starts and that test read a machine's free
profile, built as `cloudsim.engine.reservations.Timeline` builds it, from the same changes in the same order (the
round's plan so far, then the running groups in the order they were made, then the pending reservation) and
summed by the same kernels (`cloudsim.engine.kernels.step_profile`, `earliest_fit`). The reservation (one at a time)
lives in the header; it starts in the round of its instant (with a tick, the tick nearest it), which a due
reservation asks for even when nothing waits, and `CompiledState.reservation_news` tells the simulation what
to record and when to wake.

A GPU policy's round (``"gpu-best-fit"``, ``"gpu-dot-product"``, ``"gpu-packing"``, ``"gpu-clustering"``,
``"fgd"``, ``"gpu-random"``, `agents.heuristics.gpu`)
is its plan of one decision at a time: the first waiting task that fits
some machine, one instance on the best-scoring machine that fits it, by the policy's formula (`_node_score`,
`_fgd_score`: the same operations in the same order), ties to the first machine of its seeded permutation; FGD's
share takes the device its score chose. gpu-random draws the machine and the devices from its seed's generator
past that permutation, as numpy's ``integers`` and ``Generator.choice`` draw them (`_drawn_devices`). A
machine's score reads nothing of the task but its shape (cpu, devices, milli), so it is kept
per shape and machine until the machine changes (`_kept_score`). A task found to fit no machine in a round fits
none for the rest of it, and in the next round none but the machines freed since (`_may_fit`; the queue
policies' rounds on a cluster with devices or attributes pass over such a task so too).

On a cluster with devices (GPUs) or machine attributes, first-fit's, the queue policies', random's and the GPU
policies' rounds (`cloudsim.engine.broker.CompiledRound.WITH_DEVICES`) ask of a machine that fits a task by its free
resources (the trees) also what the engine's fit matrix asks (`_admits`): an accepted attribute value and the
task's devices with room. Each instance takes its devices by the engine's default rule, and a log in the int
buffer keeps which (`_take_devices`), so that its group gives them back when it ends and the episode's record
names them.

A run held in memory hands the groups ended before the first one still running to the episode's
`GroupTable` when the group rows fill (`_grow`), so that its groups are not held twice.

A streamed run (``stream_to``) keeps the buffers to the jobs in flight. When the simulation reads a block of
jobs, the state hands over the groups ended before the first one still running (`CompiledState.hand_over`)
and the tasks' progress (`CompiledState.write_progress`) for the writer, and once the task table has dropped
the finished jobs and taken the new ones, the buffers are laid out again for its rows
(`CompiledState.restream`): what happened per task and per job moves up with its rows, the machines' regions
stay, the min-demand tree is rebuilt from its leaves, and task numbers held elsewhere (group rows, the new
tasks' list, a pair score's slots) are counted from the new first row. Group rows are kept from the round
of the first group still running, since end events to come name launched positions within it; launched
positions count from the episode's first group (``GROUP_BASE``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from cloudsim.engine.broker import CompiledRound
from cloudsim.engine.kernels import (draw_below, earliest_fit, exp1, fgd_delta, generator_state, pair_score,
                                     restore_generator, step_profile, tanh1)
from cloudsim.engine.record import GroupTable
from cloudsim.engine.reservations import FIT_TOLERANCE, TICKS_SLACK
from cloudsim.engine.specs import DEVICE_MILLI

__all__ = ["CompiledState"]

KERNELS_CALLED = "c3a1ca9eff0dd668"
"""A digest of the compiled functions this module's kernels call from other modules (`cloudsim.engine.kernels`): numba
caches the kernels against this file alone, so a change there must change this file too, or they would stay
built on the old code (tests/test_kernel_cache.py holds the digest to the source and gives the new one)."""

# ----------------------------------------------------------------------------------- the buffers' header
# Scalars of the int buffer
(MACHINES, RESOURCES, TASKS, JOBS, MACHINE_LEAVES, TASK_LEAVES, GROUPS, DIRTY, NEW, WAITING_TASKS, UNFINISHED_JOBS,
 RUNNING, SEGMENTS, VISIT, WAITING_INSTANCES, RULE, DECISIONS, ROUND_FIRST, ROUND_DECISIONS, IN_ROUND, ROUND_STAMP,
 NEED_GROUPS) = range(22)
# Offsets of the int regions
# (FIT_COUNT: per machine, how many waiting tasks fit it; random's. Devices and machine attributes: per task its
# device request (count, milli) and its row of ACCEPTING (-1: any machine), a row per attribute constraint (1 where
# a machine is accepted), per machine its devices' free milli-units (-1: no such device) and its instances holding
# devices by kind (`cloudsim.engine.cluster.ClusterState.device_users`), and the log of the devices each group's
# instances took (`_take_devices`), the last region: it grows with the buffer.)
(JOB_FIRST_TASK, TASK_JOB, INSTANCES, PENDING, CHILD_START, CHILDREN, JOB_LEFT, ON_MACHINE, WAITING, FINISHED,
 NEXT_FRESH, IS_DIRTY, DIRTY_LIST, NEW_LIST, HEAP, STACK, MARK, TOUCHED, STATE_OF, LAST_GROUP, LAST_ROUND,
 TASK_SLOT, JOB_RUNNING, FIT_COUNT, TASK_DEVICES, TASK_ACCEPT, ACCEPTING, DEVICE_FREE, DEVICE_USERS, NODE_RANK,
 TASK_SHAPE, KEPT_SEEN, KEPT_SCORE, KEPT_DEVICE, MACHINE_VERSION, TARGET_INTS, TARGET_ACCEPTED, CHOSEN_LIST,
 DEVICE_LOG) = range(22, 61)
# (NODE_RANK: per machine, its place in a GPU policy's seeded permutation, which breaks its ties. A GPU policy's
# kept scores (`_kept_score`): per task its shape (the cpu, devices and milli a machine's score reads), per shape
# and machine the score, the device a share takes (FGD's; -1: the default rule's) and the machine's version it
# was scored at, plus one (0: never), and per machine its version (`_machine_changed` counts it on). FGD's target
# workload: per shape its milli, then per shape its device count; per machine and shape whether it accepts it.
# CHOSEN_LIST: the devices gpu-random drew for an exclusive instance, one slot per device of a machine.)
# Offsets of the float regions (kept in the int buffer's header too; TARGET_FLOATS: per target shape its cpu, then
# per shape its probability)
(CAPACITY, FREE, DEMAND, DURATION, READY_TIME, START_TIME, FINISH_TIME, JOB_ARRIVAL, JOB_FINISH, MAX_FREE,
 MIN_DEMAND, LOAD, MIN_LOAD, MIN_FREE, MAX_CAPACITY, JOB_USAGE, TOTAL_CAPACITY, NETWORK, TARGET_FLOATS) = range(61, 80)
_INT_REGIONS, _FLOAT_REGIONS = range(JOB_FIRST_TASK, CAPACITY), range(CAPACITY, TARGET_FLOATS + 1)
SCORE_NAN = 80  # (a scalar: a fitness came out NaN)
TURN = 81  # (a scalar: round-robin's next machine)
GROUP_BASE = 82  # (a scalar: the launched position, and group id, of row 0 of the group rows: `hand_over`)
FITS = 83  # (a scalar: random's fit (machine, task) pairs, the sum of FIT_COUNT)
# EASY's pending reservation (one at a time): whether one is pending, its machine and task, what the latest
# round did with reservations (RESERVATION_* added up), and the first group row that may still run
RES_PENDING, RES_MACHINE, RES_TASK, RES_NEWS, RUNNING_FROM = range(84, 89)
RESERVATION_MADE, RESERVATION_STARTED, RESERVATION_CANCELLED = 1, 2, 4
# Devices and attributes: whether the machines have either (CONSTRAINED), device slots per machine, the device
# log's entries used, the entries the waiting instances may take (each its own chunk: 2 + its device count), and
# the entries a round asked room for; a GPU policy's cpu column (`_node_score`), its task shapes kept (0: none
# kept, `_kept_score`), FGD's target shapes, and the device the next share takes (-1: by the default rule)
(CONSTRAINED, DEVICE_SLOTS, LOG_USED, LOG_WAITING, NEED_LOG, CPU_COLUMN, SHAPES, TARGET_SHAPES,
 CHOSEN_DEVICE) = range(89, 98)
CHOSEN_LISTED = -2  # (CHOSEN_DEVICE: an exclusive instance takes the devices in CHOSEN_LIST, gpu-random's draw)
INT_HEADER = 100
# Scalars of the float buffer (RES_START, RES_END: EASY's pending reservation holds its instance between them;
# TICK: the scheduler's tick, 0 for none)
LATEST_FINISH, RES_START, RES_END, TICK = range(4)
FLOAT_HEADER = 4
# The rounds compiled (the header's RULE): `cloudsim.engine.broker.CompiledRound.RULES`, numbered in their order
RULES = {rule: number for number, rule in enumerate(CompiledRound.RULES)}
(FIRST_FIT, DOT, SHARES, FCFS, SJF, HRRN, BEST_FIT, LEAST_LOAD, DRF, FITNESS, ROUND_ROBIN, RANDOM, TETRIS_STAR,
 EASY, GPU_BEST_FIT, GPU_DOT_PRODUCT, GPU_PACKING, GPU_CLUSTERING, FGD, GPU_RANDOM) = (
    RULES[rule] for rule in ("first-fit", "dot", "shares", "fcfs", "sjf", "hrrn", "best-fit", "least-load", "drf",
                             "fitness", "round-robin", "random", "tetris-star", "easy", "gpu-best-fit",
                             "gpu-dot-product", "gpu-packing", "gpu-clustering", "fgd", "gpu-random"))
SCORED_NODE_RULES = (GPU_BEST_FIT, GPU_DOT_PRODUCT, GPU_PACKING, GPU_CLUSTERING, FGD)  # (their scores kept)
NODE_RULES = SCORED_NODE_RULES + (GPU_RANDOM,)
KEPT_CELLS = 1 << 22  # a GPU policy keeps its scores where shapes x machines is at most this (`_kept_score`)
CPU_SCALE, GPU_SCALE = 128_000, 8 * DEVICE_MILLI  # (the GPU policies' scales: `agents.heuristics.gpu`)
PAIR_RULES = (DOT, SHARES, FITNESS, TETRIS_STAR)
# Columns of the group rows: ints (task, machine, first instance, instances, the group launched k-th, where the
# s-th end time of the latest round begins among its launched rows, at row first + s)
G_TASK, G_MACHINE, G_FIRST, G_INSTANCES, G_LAUNCHED, G_END_TIME = range(6)
GROUP_INTS = 6
# (with devices: each group's first and last chunk in the device log, -1 for none)
G_DEVICES_FIRST, G_DEVICES_LAST = 6, 7
# floats (duration, start, end)
G_DURATION, G_START, G_END = range(3)
# A pair score's states and scores (`_pair_buffers`): the int buffer's scalars, then its region offsets and
# those of the float buffer (P_SCALED: the scores are Tetris*'s, scaled by maxima over every fit pair)
(P_STATES, P_SLOTS, P_WIDTH, P_HIGH, P_SPARES, P_SLOT_HIGH, P_FREE_SLOTS, P_HASH_SIZE, P_COLUMNS, P_SCALED) = range(10)
# (P_SLOT_FITS: per slot, how many states its task fits; P_BEST_ALIGNMENT: per state, the highest alignment of a
# task that fits it; P_SHORTNESS: per slot, its task's 1 / duration; the three Tetris*'s alone)
(P_MEMBERS, P_FIRST, P_BEST, P_SPARE, P_HASH, P_SLOT_TASK, P_FREE_SLOT, P_COLUMN_LIST, P_SLOT_FITS, P_KEYS,
 P_BEST_SCORE, P_BEST_ALIGNMENT, P_SHORTNESS, P_SCORES) = range(10, 24)
PAIR_HEADER = 24
# Scalars of a pair score's float buffer (Tetris*'s: its knob and the two maxima its best scores were scaled by)
P_KNOB, P_TOP_ALIGNMENT, P_TOP_SHORTNESS = range(3)
PAIR_FLOAT_HEADER = 4
# How a streamed run's `CompiledState.restream` carries each part over: the scalars of the run so far, the
# regions of what happened per task and per job (the rows kept move up), and those of the machines and the
# cluster (kept whole)
_RUN_SCALARS = (GROUPS, DIRTY, NEW, WAITING_TASKS, UNFINISHED_JOBS, RUNNING, SEGMENTS, VISIT, WAITING_INSTANCES, RULE,
                DECISIONS, ROUND_FIRST, ROUND_DECISIONS, IN_ROUND, ROUND_STAMP, NEED_GROUPS, SCORE_NAN, TURN,
                GROUP_BASE, FITS, RES_PENDING, RES_MACHINE, RES_TASK, RES_NEWS, RUNNING_FROM, LOG_USED, LOG_WAITING,
                NEED_LOG)
_PER_TASK_INTS = (PENDING, WAITING, FINISHED, NEXT_FRESH, MARK, TASK_SLOT)
_PER_JOB_INTS = (JOB_LEFT, JOB_RUNNING)
_PER_TASK_FLOATS = (READY_TIME, START_TIME, FINISH_TIME)
_PER_JOB_FLOATS = (JOB_ARRIVAL, JOB_FINISH, JOB_USAGE)  # (JOB_USAGE: a row of resources per job)
_MACHINE_INTS = (ON_MACHINE, IS_DIRTY, DIRTY_LIST, STACK, STATE_OF, LAST_GROUP, LAST_ROUND, FIT_COUNT, DEVICE_FREE,
                 DEVICE_USERS, NODE_RANK)
_MACHINE_FLOATS = (CAPACITY, FREE, MAX_FREE, LOAD, MIN_LOAD, MIN_FREE, MAX_CAPACITY, TOTAL_CAPACITY, NETWORK)
NO_FIT = -math.inf  # the score of a pair that does not fit (a pair that fits scores a finite number, or +inf)
STACK_SIZE = 3 * 140  # (node, left, width) per entry: two entries per level of a tree of up to 2**63 leaves
# What an event's call says of the round it was allowed to run (its decisions when it ran one)
NOTHING_WAITS = -1  # no round is needed
ROUND_DUE = -2  # tasks wait: a round is due at this instant, and the call was not to run it
NO_ROOM = -3  # the round needs more room first (`CompiledState` grows the buffers and asks it to go on)
SCORED_NAN = -4  # a fitness came out NaN: the round stopped (`CompiledState` refuses it, as the broker does)
ROUND_NOW = 0  # (`_happen`: a round is due, and may run now)
ORDER_FROM = 16  # a round of more groups than this sorts their end times (`_order_ends`)
# What an event is (one compiled call does every kind: `_first_fit_event`, `_pair_event`, `_queue_event`)
ARRIVAL, END, ROUND = range(3)


def _node_generator(seed: int, machines: int) -> tuple[np.random.Generator, np.ndarray]:
    """A GPU policy's generator and the permutation of its ties, which it draws first, as the policy's
    ``decide`` draws them at an episode's start (`agents.heuristics.gpu.NodeScorer`)."""
    rng = np.random.default_rng(seed)
    return rng, rng.permutation(machines)


def _leaves(n: int) -> int:
    """The leaves of a segment tree over ``n`` items: the power of two at or above ``n``."""
    return 1 << max(n - 1, 0).bit_length()


def _flat_network(rule) -> np.ndarray:
    """A "fitness" round's network in one row of numbers (`_fitness` reads it): the layers' count, where the
    scratch rows begin, their width, each layer's inputs and outputs, the features' mean and standard
    deviation, each layer's weights (inputs x outputs, row-major) and bias, then two scratch rows. Empty
    for the other rules."""
    if rule.network is None:
        return np.empty(0)
    weights, biases = rule.network.weights, rule.network.biases
    width = max([6, *(w.shape[1] for w in weights)])
    head = [len(weights), 0.0, width, *(n for w in weights for n in w.shape), *rule.feature_mean, *rule.feature_std]
    body = [np.asarray(head, dtype=np.float64)]
    for w, b in zip(weights, biases):
        body += [np.ascontiguousarray(w, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64)]
    flat = np.concatenate([*body, np.zeros(2 * width)])
    flat[1] = len(flat) - 2 * width
    return flat


def _region(header: np.ndarray, buffer: np.ndarray, slot: int, length: int) -> np.ndarray:
    """The region ``slot`` of ``buffer`` (its offset in the int buffer ``header``), ``length`` values long."""
    return buffer[int(header[slot]):int(header[slot]) + length]


def _region_length(header: np.ndarray, buffer: np.ndarray, slot: int) -> int:
    """The length of the region ``slot`` of ``buffer``: up to the next region (`_Layout` lays them out in the
    order of their slots), or the buffer's end."""
    regions = _INT_REGIONS if slot in _INT_REGIONS else _FLOAT_REGIONS
    return (len(buffer) if slot == regions[-1] else int(header[slot + 1])) - int(header[slot])


def _fill_tree(tree: np.ndarray, leaves: int, reduce) -> None:
    """Each inner node of a segment tree (rows ``leaves`` on are its leaves, row 1 its root) as ``reduce``
    of its two children, level by level."""
    width = leaves // 2
    while width:
        tree[width:2 * width] = reduce(tree[2 * width:4 * width:2], tree[2 * width + 1:4 * width:2])
        width //= 2


class _Layout:
    """Lays out named regions one after another in one buffer, after a header, in the order of their slots
    (`_region_length` counts on it), and records each region's offset in the int buffer's header."""

    def __init__(self, header: int, dtype) -> None:
        self.parts: list[tuple[int, np.ndarray]] = []
        self.size = header
        self.dtype = dtype

    def add(self, slot: int, values) -> None:
        assert not self.parts or slot == self.parts[-1][0] + 1, "regions are laid out in the order of their slots"
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
        rule: the broker's round (`cloudsim.engine.broker.CompiledRound`).
        broker: the broker's name, for messages.
        tick: the scheduler's tick (None: event-driven), which EASY's reservations follow.
        machines_state: the episode's `cloudsim.engine.cluster.ClusterState`, on a cluster with devices or machine
            attributes (first-fit's and the queue policies' rounds take them): the devices' free milli-units and
            users, and the machines each task's attribute constraint accepts; `write_back` hands the devices back.
        group_devices: with ``machines_state``, the episode's record of the devices each group's instances took
            (`cloudsim.engine.record.EpisodeRecord.group_devices`), filled as the groups leave the buffers.
        groups: the episode's `GroupTable` in a run held in memory (None in a streamed run, whose simulation
            takes the ended groups with `hand_over`): when the group rows are full, the groups ended before
            the first one still running move there first, and the rows grow only if that leaves too little
            room, so that an episode's groups are not held twice.
    """

    ROUND_DUE = ROUND_DUE

    def __init__(self, capacity: np.ndarray, tasks, rule, broker: str = "", tick: float | None = None,
                 groups: GroupTable | None = None, machines_state=None,
                 group_devices: dict[int, list[tuple[int, ...]]] | None = None) -> None:
        machines, resources = capacity.shape
        self.broker = broker
        self.machines_state = machines_state  # (its devices and attributes, read when the buffers are laid out)
        self.group_devices = group_devices  # (the devices each group's instances took: `_add_groups` fills it)
        self.collected = groups  # (an in-memory run's `GroupTable`: the group rows hand ended groups to it, `_grow`)
        self.capacity, self.rule = capacity, rule
        self.turn = rule.turn  # (round-robin's, the broker's own: `keep_broker_state`)
        self.reserves = rule.rule == "easy"  # (its rounds make and start reservations: `reservation_news`)
        self.rng = rule.rng  # (random's, the broker's own generator: its draws move the broker's stream on)
        if rule.rule == "gpu-random":  # (its seed's generator, past the permutation of its ties: `_node_rank`)
            self.rng, _ = _node_generator(rule.seed, machines)
        # (the rounds draw from its state, handed back to it by `keep_broker_state`)
        self.draws = None if self.rng is None else generator_state(self.rng)
        self.machines = machines
        kind = RULES[rule.rule]
        # The table's first rows (a streamed run moves them on: `restream`), and the first group not yet handed
        # over to the episode's results (`hand_over`)
        self.task_base, self.job_base, self.handed = tasks.task_base, tasks.job_base, 0
        self.ints, self.floats = self._lay_out(tasks)
        # A pair score's first round puts every machine in its state, best-fit's and least-load's first round
        # every machine's free resources and load in their trees: every machine is freed since none.
        pairs = kind in PAIR_RULES
        every_machine_new = pairs or kind in (BEST_FIT, LEAST_LOAD)
        _region(self.ints, self.ints, IS_DIRTY, machines)[:] = int(every_machine_new)
        _region(self.ints, self.ints, DIRTY_LIST, machines)[:] = np.arange(machines)[::-1]
        self.ints[[MACHINES, RESOURCES, UNFINISHED_JOBS, RULE, DIRTY]] = (
            machines, resources, tasks.unfinished_jobs, kind, machines if every_machine_new else 0)
        # round-robin counts from the machine after its previous start, its previous run's included
        self.ints[TURN] = int(rule.turn[0]) if rule.turn is not None and 0 <= rule.turn[0] < machines else 0
        self.floats[TICK] = 0.0 if tick is None else tick
        self.group_ints = np.zeros((1024, GROUP_INTS + 2 * int(self.ints[CONSTRAINED])), dtype=np.int64)
        self.group_floats = np.zeros((1024, 3))
        # A pair score's states and scores, room for a few of each to begin with (grown as needed); a key is
        # a state's free resources, then for "shares" and Tetris*'s alignment its capacity.
        width = resources * (2 if kind in (SHARES, TETRIS_STAR) else 1)
        self.pair_ints, self.pair_floats = _pair_buffers(
            16, 64, width, np.array(rule.columns, dtype=np.int64), int(kind == TETRIS_STAR)) if pairs else (None, None)
        if pairs:  # (their growth's kernel too, loaded before the clock starts)
            if kind == TETRIS_STAR:
                self.pair_floats[P_KNOB] = rule.knob
            self.pair_ints, self.pair_floats = _grown_pairs(self.pair_ints, self.pair_floats, 16, 64)
        self._bind()
        self._machines_now = CompiledMachines(self.ints, self.floats, machines)  # (changes counted from the start)
        # Load the kernels now (from numba's cache on disk; compiled on an installation's first run), not at
        # the episode's first events, so that a run's simulation time is the simulation's.
        self._call(ROUND, 0, 0, 0.0, True)  # (nothing waits: nothing happens)

    def _lay_out(self, tasks) -> tuple[np.ndarray, np.ndarray]:
        """The buffers for the rows of the task table ``tasks`` (tasks and jobs numbered from its first rows), as
        before the episode: nothing arrived, nothing runs."""
        capacity, rule = self.capacity, self.rule
        machines, resources = capacity.shape
        n_tasks, n_jobs = len(tasks.task_job), len(tasks.job_ids)
        machine_leaves, task_leaves = _leaves(machines), _leaves(n_tasks)
        child_start = np.zeros(n_tasks + 1, dtype=np.int64)
        child_start[1:] = np.cumsum([len(c) for c in tasks.children])
        children = np.fromiter((c for kids in tasks.children for c in kids), dtype=np.int64, count=child_start[-1])
        ints = _Layout(INT_HEADER, np.int64)
        for slot, values in ((JOB_FIRST_TASK, tasks.job_first_task - tasks.task_base),
                             (TASK_JOB, tasks.task_job - tasks.job_base), (INSTANCES, tasks.task_instances),
                             (PENDING, tasks.task_pending_parents), (CHILD_START, child_start),
                             (CHILDREN, children - tasks.task_base), (JOB_LEFT, tasks.job_unfinished_tasks),
                             (ON_MACHINE, np.zeros(machines)), (WAITING, tasks.task_instances),
                             (FINISHED, np.zeros(n_tasks)), (NEXT_FRESH, np.zeros(n_tasks)),
                             (IS_DIRTY, np.zeros(machines)), (DIRTY_LIST, np.zeros(machines)),
                             (NEW_LIST, np.zeros(n_tasks)), (HEAP, np.zeros(machines + n_tasks)),
                             (STACK, np.zeros(STACK_SIZE)), (MARK, np.zeros(n_tasks)), (TOUCHED, np.zeros(n_tasks)),
                             (STATE_OF, np.full(machines, -1)), (LAST_GROUP, np.zeros(machines)),
                             (LAST_ROUND, np.full(machines, -1)), (TASK_SLOT, np.full(n_tasks, -1)),
                             (JOB_RUNNING, np.zeros(n_jobs)), (FIT_COUNT, np.zeros(machines)),
                             *self._device_regions(tasks), *self._kept_regions(tasks),
                             (CHOSEN_LIST,
                              np.zeros(self.machines_state.device_free.shape[1] if self._constrained else 0)),
                             (DEVICE_LOG, np.zeros(1024 if self._constrained else 0))):
            ints.add(slot, values)
        ints = ints.build()
        constrained = self._constrained
        target = rule.target
        ints[[MACHINES, RESOURCES, TASKS, JOBS, MACHINE_LEAVES, TASK_LEAVES, CONSTRAINED, DEVICE_SLOTS, CPU_COLUMN,
              SHAPES, TARGET_SHAPES, CHOSEN_DEVICE]] = (
            machines, resources, n_tasks, n_jobs, machine_leaves, task_leaves, int(constrained),
            self.machines_state.device_free.shape[1] if constrained else 0, rule.columns[0] if rule.columns else 0,
            self._shapes, 0 if target is None else len(target.p), -1)
        max_free = np.full((2 * machine_leaves, resources), -np.inf)
        max_free[machine_leaves:machine_leaves + machines] = capacity
        _fill_tree(max_free, machine_leaves, np.maximum)
        max_capacity = max_free.copy()  # (fixed: best-fit's bound)
        floats = _Layout(FLOAT_HEADER, np.float64)
        for slot, values in ((CAPACITY, capacity), (FREE, capacity), (DEMAND, tasks.task_demand),
                             (DURATION, tasks.task_duration), (READY_TIME, np.full(n_tasks, np.nan)),
                             (START_TIME, np.full(n_tasks, np.nan)), (FINISH_TIME, np.full(n_tasks, np.nan)),
                             (JOB_ARRIVAL, np.full(n_jobs, np.nan)), (JOB_FINISH, np.full(n_jobs, np.nan)),
                             (MAX_FREE, max_free), (MIN_DEMAND, np.full((2 * task_leaves, resources), np.inf)),
                             (LOAD, np.zeros(machines)), (MIN_LOAD, np.full(2 * machine_leaves, np.inf)),
                             (MIN_FREE, np.full((2 * machine_leaves, resources), np.inf)),
                             (MAX_CAPACITY, max_capacity), (JOB_USAGE, np.zeros((n_jobs, resources))),
                             # DRF's dominant shares are of the cluster's total, summed as its Python rule sums it
                             (TOTAL_CAPACITY, capacity.sum(axis=0)),
                             (NETWORK, _flat_network(rule)),
                             (TARGET_FLOATS, np.zeros(0) if rule.target is None else np.concatenate(
                                 (rule.target.cpu, rule.target.p)))):
            floats.add(slot, values)
        return ints, floats.build(header_of=ints)

    def _device_regions(self, tasks) -> tuple[tuple[int, np.ndarray], ...]:
        """The regions of devices and attributes, laid out for the task table ``tasks`` (empty on a cluster
        without either): each task's request and constraint row, the constraints' rows of accepted machines, the
        machines' devices, and a GPU policy's ties (`_node_rank`)."""
        state = self.machines_state
        if not self._constrained:
            return tuple((slot, np.zeros(0)) for slot in (TASK_DEVICES, TASK_ACCEPT, ACCEPTING, DEVICE_FREE,
                                                          DEVICE_USERS)) + ((NODE_RANK, self._node_rank()),)
        constraints: dict[tuple, int] = {}  # an attribute constraint -> its row (no constraint: -1, any machine)
        accept = np.array([constraints.setdefault(a, len(constraints)) if a else -1 for a in tasks.task_accepts],
                          dtype=np.int64)
        accepting = np.array([state.accepting(a) for a in constraints], dtype=np.int64).reshape(-1, self.machines)
        return ((TASK_DEVICES, np.stack([tasks.task_device_count, tasks.task_device_milli], axis=1)),
                (TASK_ACCEPT, accept), (ACCEPTING, accepting), (DEVICE_FREE, state.device_free),
                (DEVICE_USERS, state.device_users), (NODE_RANK, self._node_rank()))

    @property
    def _constrained(self) -> bool:
        return self.machines_state is not None and self.machines_state.constrained

    def _kept_regions(self, tasks) -> tuple[tuple[int, np.ndarray], ...]:
        """A GPU policy's kept scores (`_kept_score`), in a run held in memory where shapes x machines is at most
        KEPT_CELLS (else none are kept, ``_shapes`` 0): a task's shape is its cpu, device count and milli, what a
        machine's score reads of it (as the policies' own `scores` key them); and FGD's target workload (its
        shapes' milli and device counts, and whether each accepts each machine)."""
        self._shapes, shape = 0, np.zeros(0)
        if RULES[self.rule.rule] in SCORED_NODE_RULES and self.collected is not None and len(tasks.task_job):
            devices = (tasks.task_device_count, tasks.task_device_milli) if self._constrained else (
                np.zeros(len(tasks.task_job)),) * 2
            keys = np.column_stack((tasks.task_demand[:, self.rule.columns[0]], *devices))
            kinds, shape = np.unique(keys, axis=0, return_inverse=True)
            if len(kinds) * self.machines <= KEPT_CELLS:
                self._shapes = len(kinds)
            else:
                shape = np.zeros(0)
        cells = np.zeros(self._shapes * self.machines)
        target = self.rule.target
        accepted = np.zeros(0) if target is None else target.accepted_by(
            self.machines_state.spec.attribute(target.attribute))
        return ((TASK_SHAPE, shape.ravel()), (KEPT_SEEN, cells), (KEPT_SCORE, cells), (KEPT_DEVICE, cells),
                (MACHINE_VERSION, np.zeros(self.machines if self._shapes else 0)),
                (TARGET_INTS, np.zeros(0) if target is None else np.concatenate((target.milli, target.count))),
                (TARGET_ACCEPTED, accepted))

    def _node_rank(self) -> np.ndarray:
        """A GPU policy's ties: each machine's place in the permutation its seed draws first, as the policy's
        ``decide`` draws it at an episode's start (`agents.heuristics.gpu.NodeScorer`); empty for the other rounds."""
        if RULES[self.rule.rule] not in NODE_RULES:
            return np.zeros(0)
        rank = np.empty(self.machines, dtype=np.int64)
        rank[_node_generator(self.rule.seed, self.machines)[1]] = np.arange(self.machines)
        return rank

    # ------------------------------------------------------------------ a streamed run
    def restream(self, tasks) -> None:
        """Follow the episode's task table after a streamed run moved it on: its first job rows retired
        (finished and written out) and new ones added (`cloudsim.engine.tasks.TaskTable.retire`, ``extend``). The
        buffers are laid out again for the table's rows; what the run has done is kept, its tasks and jobs
        numbered from the table's new first rows."""
        old_ints, old_floats, resources = self.ints, self.floats, self.capacity.shape[1]
        dropped_tasks, dropped_jobs = tasks.task_base - self.task_base, tasks.job_base - self.job_base
        kept_tasks, kept_jobs = int(old_ints[TASKS]) - dropped_tasks, int(old_ints[JOBS]) - dropped_jobs
        ints, floats = self._lay_out(tasks)
        ints[list(_RUN_SCALARS)] = old_ints[list(_RUN_SCALARS)]
        ints[UNFINISHED_JOBS] += len(tasks.job_ids) - kept_jobs
        floats[:FLOAT_HEADER] = old_floats[:FLOAT_HEADER]
        for new, old, slots, drop, kept in ((ints, old_ints, _PER_TASK_INTS, dropped_tasks, kept_tasks),
                                            (ints, old_ints, _PER_JOB_INTS, dropped_jobs, kept_jobs),
                                            (floats, old_floats, _PER_TASK_FLOATS, dropped_tasks, kept_tasks),
                                            (floats, old_floats, _PER_JOB_FLOATS, dropped_jobs, kept_jobs)):
            for slot in slots:
                width = resources if slot == JOB_USAGE else 1  # (values per row)
                _region(ints, new, slot, kept * width)[:] = _region(old_ints, old, slot, (drop + kept) * width)[
                    drop * width:]
        for new, old, slots in ((ints, old_ints, _MACHINE_INTS), (floats, old_floats, _MACHINE_FLOATS)):
            for slot in slots:
                length = _region_length(old_ints, old, slot)
                _region(ints, new, slot, length)[:] = _region(old_ints, old, slot, length)
        count = int(old_ints[NEW])  # tasks new since the last round: none of them has finished
        _region(ints, ints, NEW_LIST, count)[:] = _region(old_ints, old_ints, NEW_LIST, count) - dropped_tasks
        old_leaves, leaves = int(old_ints[TASK_LEAVES]), int(ints[TASK_LEAVES])
        old_tree = _region(old_ints, old_floats, MIN_DEMAND, 2 * old_leaves * resources).reshape(-1, resources)
        tree = _region(ints, floats, MIN_DEMAND, 2 * leaves * resources).reshape(-1, resources)
        tree[leaves:leaves + kept_tasks] = old_tree[old_leaves + dropped_tasks:old_leaves + dropped_tasks + kept_tasks]
        _fill_tree(tree, leaves, np.minimum)
        # (rows handed over already may name a task dropped: they are not read again)
        self.group_ints[:int(ints[GROUPS]), G_TASK] -= dropped_tasks
        if self.pair_ints is not None:
            slot_task = _region(self.pair_ints, self.pair_ints, P_SLOT_TASK, int(self.pair_ints[P_SLOTS]))
            slot_task[slot_task >= 0] -= dropped_tasks
        if ints[RES_PENDING]:  # (EASY's reserved task is not finished: it is kept)
            ints[RES_TASK] -= dropped_tasks
        self.ints, self.floats = ints, floats
        self.task_base, self.job_base = tasks.task_base, tasks.job_base
        self._bind()

    def hand_over(self) -> tuple[dict[str, np.ndarray], int | None]:
        """The groups ended since the last hand-over, up to the first one still running in start order, as
        `cloudsim.engine.record.GroupTable.columns` gives them; and the earliest task (its global number) of a group
        still running, or None. The buffers keep the rows from the round of the first group still running on
        (the end events to come count launched positions within those rounds)."""
        ended = GroupTable()
        running_task = self._move_ended(ended)
        return ended.columns(), running_task

    def first_kept_start(self) -> float:
        """The start of the first group not handed over (inf when there is none): no group kept or to come starts
        before it."""
        row = self.handed - int(self.ints[GROUP_BASE])
        return float(self.group_floats[row, G_START]) if row < int(self.ints[GROUPS]) else float("inf")

    def _move_ended(self, groups: GroupTable) -> int | None:
        """`hand_over`'s groups added to ``groups``; returns the earliest task of a group still running, or None."""
        ints = self.ints
        base, n = int(ints[GROUP_BASE]), int(ints[GROUPS])
        start = self.handed - base
        running = np.flatnonzero(np.isnan(self.group_floats[start:n, G_END]))
        first_running = start + int(running[0]) if len(running) else n
        self._add_groups(groups, start, first_running)
        running_task = int(self.group_ints[first_running:n, G_TASK].min()) + self.task_base if len(running) else None
        self.handed = base + first_running
        starts = self.group_floats[:n, G_START]
        cut = first_running if first_running == n else int(np.searchsorted(starts, starts[first_running]))
        if cut:
            for rows in (self.group_ints, self.group_floats):
                rows[:n - cut] = rows[cut:n]
            self.group_ints[:n - cut, G_LAUNCHED] -= cut
            self.group_ints[:n - cut, G_END_TIME] -= cut
            ints[GROUPS] -= cut
            ints[GROUP_BASE] += cut
            ints[RUNNING_FROM] = max(0, int(ints[RUNNING_FROM]) - cut)
        return running_task

    def _add_groups(self, groups, start: int, stop: int) -> None:
        """Rows ``start`` to ``stop - 1`` added to the `GroupTable` ``groups`` (running where they have no end),
        and with devices the devices their instances took to ``group_devices``."""
        gi, gf = self.group_ints[start:stop], self.group_floats[start:stop]
        groups.add_rows(gi[:, G_TASK] + self.task_base, gi[:, G_MACHINE], gi[:, G_FIRST], gi[:, G_INSTANCES],
                        gf[:, G_DURATION], gf[:, G_START], gf[:, G_END])
        if self.ints[CONSTRAINED]:
            for row in (start + np.flatnonzero(gi[:, G_DEVICES_FIRST] >= 0)).tolist():
                self.group_devices[int(self.ints[GROUP_BASE]) + row] = self._devices_taken(row)

    def _devices_taken(self, row: int) -> list[tuple[int, ...]]:
        """The devices each instance of the group in ``row`` took, in instance order (its chunks of the log)."""
        ints = self.ints
        log = _region(ints, ints, DEVICE_LOG, int(ints[LOG_USED]))
        width = int(_region(ints, ints, TASK_DEVICES, 2 * int(ints[TASKS]))[2 * self.group_ints[row, G_TASK]])
        taken, chunk = [], int(self.group_ints[row, G_DEVICES_FIRST])
        while chunk >= 0:  # a chunk: the next chunk (-1: none), its instances, then each instance's devices
            first = chunk + 2
            taken += [tuple(log[at:at + width].tolist())
                      for at in range(first, first + width * int(log[chunk + 1]), width)]
            chunk = int(log[chunk])
        return taken

    # ------------------------------------------------------------------ the counters
    @property
    def unfinished_jobs(self) -> int:
        return int(self.ints[UNFINISHED_JOBS])

    @property
    def running_instances(self) -> int:
        return int(self.ints[RUNNING])

    @property
    def held(self) -> tuple[int, int, int]:
        """The task rows, job rows and group rows the buffers hold (a streamed run drops finished ones)."""
        return int(self.ints[TASKS]), int(self.ints[JOBS]), int(self.ints[GROUPS])

    @property
    def machines_now(self) -> "CompiledMachines":
        """The machines as a `Simulation`'s ``on_round`` reads them (`CompiledMachines`), their changes since the
        episode's start counted up to now."""
        return self._machines_now.count(self.ints, self.floats)

    @property
    def reservation_pending(self) -> bool:
        """Whether EASY's reservation is pending (its instance held for a later start)."""
        return bool(self.ints[RES_PENDING])

    def reservation_news(self) -> tuple[str | None, tuple[int, int, float] | None]:
        """What the latest round did with EASY's reservations: the outcome of the one due at its start
        ("started", "cancelled" or None), and the one it made, as (machine, task row, start), or None."""
        news = int(self.ints[RES_NEWS])
        outcome = "started" if news & RESERVATION_STARTED else "cancelled" if news & RESERVATION_CANCELLED else None
        made = (int(self.ints[RES_MACHINE]), int(self.ints[RES_TASK]), float(self.floats[RES_START])) \
            if news & RESERVATION_MADE else None
        return outcome, made

    @property
    def waiting_tasks(self) -> int:
        """Ready tasks with waiting instances (the waiting set's size)."""
        return int(self.ints[WAITING_TASKS])

    # ------------------------------------------------------------------ the events
    # Each returns the jobs the event finished and the round's outcome: (decisions or NOTHING_WAITS / ROUND_DUE,
    # end times, then the first end time's delay and the launched groups (a, b) it ends); the end times beyond
    # the first are `end_times`.
    def arrive(self, job: int, now: float, may_round: bool) -> tuple:
        """Job ``job`` (its arrival position) arrives now; then, if ``may_round``, the round."""
        return self._call(ARRIVAL, job, 0, float(now), may_round)[1:]

    def end(self, a: int, b: int, now: float, may_round: bool) -> tuple:
        """The groups launched ``a``-th to ``b``-th finish now; then, if ``may_round``, the round. Returns the
        jobs this finished, then the round's outcome."""
        outcome = self._entry(*self._buffers, END, a, b, float(now), may_round)  # (the hot path: `_call` inline)
        return outcome if outcome[1] >= ROUND_DUE else self._room_or_refusal(outcome, float(now))

    def round(self, now: float) -> tuple:
        """The broker's round now (NOTHING_WAITS where nothing waits)."""
        return self._call(ROUND, 0, 0, float(now), True)[1:]

    def _call(self, kind: int, a: int, b: int, now: float, may_round: bool) -> tuple:
        """The event's compiled call (`_room_or_refusal` after it where the round could not go on)."""
        outcome = self._entry(*self._buffers, kind, a, b, now, may_round)
        return outcome if outcome[1] >= ROUND_DUE else self._room_or_refusal(outcome, now)

    def _room_or_refusal(self, outcome: tuple, now: float) -> tuple:
        """After a call whose round stopped: the round again after growing the buffers, as long as it needs
        more room. A NaN fitness is a ValueError naming the broker, as its ``decide`` raises it."""
        while outcome[1] == NO_ROOM:
            self._grow()
            outcome = (outcome[0], *self._entry(*self._buffers, ROUND, 0, 0, now, True)[1:])
        if outcome[1] == SCORED_NAN:
            raise ValueError(f"broker {self.broker!r} at t={now}: a pair's score is NaN; scores must be numbers "
                             "(check the checkpoint's weights and feature normaliser)")
        return outcome

    def _bind(self) -> None:
        """The compiled entry of this broker's kind of round, and the buffers it is called with (again after
        they grow)."""
        if self.pair_ints is not None:
            self._entry = _pair_event
            self._buffers = (self.ints, self.floats, self.group_ints, self.group_floats, self.pair_ints,
                             self.pair_floats)
        elif self.ints[RULE] in (RANDOM, GPU_RANDOM):  # (with the generator's state: `draws`)
            self._entry = _random_event if self.ints[RULE] == RANDOM else _drawn_node_event
            self._buffers = (self.ints, self.floats, self.group_ints, self.group_floats, self.draws)
        else:
            self._entry = {FIRST_FIT: _first_fit_event, EASY: _easy_event,
                           **dict.fromkeys(NODE_RULES, _node_event)}.get(int(self.ints[RULE]), _queue_event)
            self._buffers = (self.ints, self.floats, self.group_ints, self.group_floats)

    def _grow(self) -> None:
        """Room for what the round needs next: group rows, the device log, a pair score's states or task slots."""
        ints, pairs = self.ints, self.pair_ints
        rows = int(ints[GROUPS] + ints[NEED_GROUPS])
        grow = rows > len(self.group_ints)
        if grow and self.collected is not None and not ints[IN_ROUND]:  # (a round that stopped names its rows)
            self._move_ended(self.collected)  # (the ended groups' rows are room again)
            rows = int(ints[GROUPS] + ints[NEED_GROUPS])
            grow = 2 * rows > len(self.group_ints)  # (under half the rows free: grown too, so that a pass is worth it)
        if grow:
            size = max(rows, 2 * len(self.group_ints))
            self.group_ints = _grown_rows(self.group_ints, size)
            self.group_floats = _grown_rows(self.group_floats, size)
        room = _region_length(ints, ints, DEVICE_LOG) - int(ints[LOG_USED])
        if ints[NEED_LOG] > room:  # (the device log is the int buffer's last region: it grows with the buffer)
            ints = self.ints = np.concatenate([ints, np.zeros(max(int(ints[NEED_LOG]) - room, len(ints)), np.int64)])
        ints[NEED_LOG] = 0
        if pairs is not None:
            states, slots = int(pairs[P_STATES]), int(pairs[P_SLOTS])
            if pairs[P_HIGH] == states and pairs[P_SPARES] == 0:
                states = min(2 * states, self.machines + 1)
            if slots < ints[WAITING_TASKS]:
                slots = max(2 * slots, int(ints[WAITING_TASKS]))
            if (states, slots) != (pairs[P_STATES], pairs[P_SLOTS]):
                self.pair_ints, self.pair_floats = _grown_pairs(pairs, self.pair_floats, states, slots)
        ints[NEED_GROUPS] = 0
        self._bind()

    def end_times(self, first: int, count: int) -> list[tuple[float, tuple[int, int]]]:
        """The latest round's groups by end time, given its first launched position and its ``count`` end
        times: ``(delay, (a, b))`` per distinct end time, in the order of its first group; `end` takes ``a, b``."""
        base, stop = int(self.ints[GROUP_BASE]), int(self.ints[GROUPS])
        row = first - base
        bounds = [*self.group_ints[row:row + count, G_END_TIME].tolist(), stop]
        launched, duration = self.group_ints[:, G_LAUNCHED], self.group_floats[:, G_DURATION]
        return [(float(duration[launched[a]]), (a + base, b + base)) for a, b in zip(bounds, bounds[1:])]

    # ------------------------------------------------------------------ the results
    def keep_broker_state(self) -> None:
        """Hand round-robin's turn back to its broker, as the broker's own ``place`` keeps it, and random's draws
        to its generator (their next run, or decide, goes on from there); at the end of a run, or where it
        stopped."""
        if self.turn is not None:
            self.turn[0] = self.ints[TURN]
        if self.draws is not None:
            restore_generator(self.rng, self.draws)

    def write_progress(self, tasks) -> None:
        """Hand the tasks' and jobs' progress to the episode's `TaskTable` (its rows are this state's)."""
        ints, floats = self.ints, self.floats
        n_tasks, n_jobs = int(ints[TASKS]), int(ints[JOBS])
        tasks.set_progress(
            started=_region(ints, ints, NEXT_FRESH, n_tasks), finished=_region(ints, ints, FINISHED, n_tasks),
            pending_parents=_region(ints, ints, PENDING, n_tasks),
            ready_time=_region(ints, floats, READY_TIME, n_tasks),
            start_time=_region(ints, floats, START_TIME, n_tasks),
            finish_time=_region(ints, floats, FINISH_TIME, n_tasks),
            job_arrival=_region(ints, floats, JOB_ARRIVAL, n_jobs),
            job_finish=_region(ints, floats, JOB_FINISH, n_jobs),
            job_unfinished_tasks=_region(ints, ints, JOB_LEFT, n_jobs), unfinished_jobs=self.unfinished_jobs,
            running_instances=self.running_instances, latest_finish=float(floats[LATEST_FINISH]))

    def write_back(self, tasks, state, groups) -> int:
        """Hand the state to the episode's `TaskTable`, `ClusterState` and `GroupTable` (the groups not handed
        over yet; `keep_broker_state`); returns the decisions made."""
        self.keep_broker_state()
        self.write_progress(tasks)
        ints, machines, resources = self.ints, self.machines, int(self.ints[RESOURCES])
        slots = int(ints[DEVICE_SLOTS])
        devices = (_region(ints, ints, DEVICE_FREE, machines * slots).reshape(machines, slots),
                   _region(ints, ints, DEVICE_USERS, machines * (slots + 1)).reshape(machines, slots + 1)) \
            if ints[CONSTRAINED] else (None, None)
        state.set_machines(_region(ints, self.floats, FREE, machines * resources).reshape(machines, resources),
                           _region(ints, ints, ON_MACHINE, machines), *devices)
        groups.skip_to(self.handed)
        self._add_groups(groups, self.handed - int(ints[GROUP_BASE]), int(ints[GROUPS]))
        return int(ints[DECISIONS])


class CompiledMachines:
    """The machines of a compiled run as a `Simulation`'s ``on_round`` reads them: each machine's ``free``
    resources and its devices' free milli-units (``device_free``, -1 where a machine has fewer devices), views
    of the buffers, and their changes counted as `cloudsim.engine.cluster.ClusterState` counts them (``changes``;
    ``machine_change``, each machine's count at its latest change), found by `count` comparing each machine
    with its row last counted. (It holds views of the buffers, not the `CompiledState`: no reference cycle
    keeps the state's buffers after the run drops them.)"""

    def __init__(self, ints: np.ndarray, floats: np.ndarray, machines: int) -> None:
        self.machines = machines
        self.free, self.device_free = self._views(ints, floats)
        self._seen_free, self._seen_devices = self.free.copy(), self.device_free.copy()
        self.machine_change = np.zeros(machines, dtype=np.int64)
        self.changes = 0

    def _views(self, ints: np.ndarray, floats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        machines = self.machines
        slots = int(ints[DEVICE_SLOTS]) if ints[CONSTRAINED] else 0
        return (_region(ints, floats, FREE, machines * int(ints[RESOURCES])).reshape(machines, -1),
                _region(ints, ints, DEVICE_FREE, machines * slots).reshape(machines, slots))

    def count(self, ints: np.ndarray, floats: np.ndarray) -> "CompiledMachines":
        """The views of the buffers ``ints`` and ``floats`` as they are now (they may have moved), and the
        machines changed since the last count counted (one count for them all)."""
        self.free, self.device_free = self._views(ints, floats)
        self.changes += _count_changes(self.free, self._seen_free, self.device_free, self._seen_devices,
                                       self.machine_change, self.changes + 1)
        return self


@numba.njit(cache=True)
def _count_changes(free, seen_free, devices, seen_devices, machine_change, count):
    """Stamp ``count`` on each machine whose row of ``free`` or ``devices`` differs from the one seen, which
    it becomes; returns 1 where one did, else 0."""
    found = 0
    for m in range(free.shape[0]):
        same = True
        for r in range(free.shape[1]):
            if free[m, r] != seen_free[m, r]:
                same = False
        for d in range(devices.shape[1]):
            if devices[m, d] != seen_devices[m, d]:
                same = False
        if not same:
            seen_free[m, :] = free[m, :]
            seen_devices[m, :] = devices[m, :]
            machine_change[m] = count
            found = 1
    return found


def _grown_rows(rows: np.ndarray, size: int) -> np.ndarray:
    """``rows`` with room for ``size`` rows, the new ones zero. The new array is made zero by the operating
    system, a page when first written: rows not used yet take no memory (a doubling leaves up to half)."""
    grown = np.zeros((size, *rows.shape[1:]), dtype=rows.dtype)
    grown[:len(rows)] = rows
    return grown


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
    if ints[CONSTRAINED]:  # (room its instances may take in the device log, one chunk each: `_take_devices`)
        need = ints[ints[TASK_DEVICES] + 2 * task]
        ints[LOG_WAITING] += _ints(ints, WAITING, n_tasks)[task] * (2 + need) if need else 0
    if ints[RULE] == DOT or ints[RULE] == SHARES:  # (a pair score gives the task a slot in its next round)
        return
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
    for k in range(a - ints[GROUP_BASE], b - ints[GROUP_BASE]):
        gid = group_ints[k, G_LAUNCHED]
        task, machine, n = group_ints[gid, G_TASK], group_ints[gid, G_MACHINE], group_ints[gid, G_INSTANCES]
        group_floats[gid, G_END] = now
        if ints[CONSTRAINED]:
            _give_devices(ints, group_ints, gid, task, machine)
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
        if ints[RULE] == DRF:
            _job_runs(ints, floats, task, -n)
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


# One compiled entry per kind of round, each doing every kind of event: numba compiles an installation's
# kernels on their first use, so a run compiles only the rounds its broker needs.
@numba.njit(cache=True)
def _happen(ints, floats, group_ints, group_floats, kind, a, b, now, may_round):
    """One SimPy event: job ``a``'s ARRIVAL, the END of the groups launched ``a``-th to ``b``-th, or a ROUND.
    Returns the jobs it finished and what comes next: NOTHING_WAITS, ROUND_DUE (something waits and
    ``may_round`` is false) or ROUND_NOW."""
    jobs = 0
    if kind == ARRIVAL:
        _arrive(ints, floats, a, now)
    elif kind == END:
        jobs = _end(ints, floats, group_ints, group_floats, a, b, now)
    if ints[WAITING_TASKS] == 0 and not _reservation_due(ints, floats, now):
        return jobs, NOTHING_WAITS
    return jobs, ROUND_NOW if may_round else ROUND_DUE


@numba.njit(cache=True)
def _reservation_due(ints, floats, now):
    """Whether EASY's pending reservation starts now (with a tick, at the tick nearest its start, as
    `cloudsim.engine.reservations.Timeline.pop_due` has it)."""
    return ints[RES_PENDING] and floats[RES_START] <= (now if floats[TICK] == 0.0 else now + floats[TICK] / 2)


@numba.njit(cache=True, inline="always")
def _released(start, end, tick):
    """When what is held from ``start`` to ``end`` can be used again (`cloudsim.engine.reservations.Timeline.released`):
    at ``end``, but with a tick (> 0) a stay of exactly one tick only at the tick after."""
    return end + tick if tick > 0.0 and end == start + tick else end


@numba.njit(cache=True)
def _outcome(ints, group_ints, group_floats, jobs, made):
    """An event's answer after its round (`CompiledState`): (jobs finished, decisions, end times, the first end
    time's delay, its launched groups a, b), or (jobs, NO_ROOM, ...) when the round needs more room (grow the
    buffers, `CompiledState._grow`, and ask for the ROUND, which goes on where it stopped). Launched positions
    count from the episode's first group (the rows from GROUP_BASE)."""
    if made == NO_ROOM or made == SCORED_NAN:
        return jobs, made, 0, 0.0, 0, 0
    segments = ints[SEGMENTS]
    first = ints[ROUND_FIRST]
    base = ints[GROUP_BASE]
    if segments == 0:
        return jobs, made, 0, 0.0, first + base, 0
    stop = group_ints[first + 1, G_END_TIME] if segments > 1 else ints[GROUPS]
    return jobs, made, segments, group_floats[group_ints[first, G_LAUNCHED], G_DURATION], first + base, stop + base


@numba.njit(cache=True)
def _first_fit_event(ints, floats, group_ints, group_floats, kind, a, b, now, may_round):
    """`_happen`, then, if due now, first-fit's round; `_outcome` (decisions NOTHING_WAITS or ROUND_DUE where
    no round ran)."""
    jobs, next_step = _happen(ints, floats, group_ints, group_floats, kind, a, b, now, may_round)
    if next_step != ROUND_NOW:
        return jobs, next_step, 0, 0.0, 0, 0
    return _outcome(ints, group_ints, group_floats, jobs, _first_fit_round(ints, floats, group_ints, group_floats,
                                                                          now))


@numba.njit(cache=True)
def _queue_event(ints, floats, group_ints, group_floats, kind, a, b, now, may_round):
    """`_first_fit_event` with a queue policy's round."""
    jobs, next_step = _happen(ints, floats, group_ints, group_floats, kind, a, b, now, may_round)
    if next_step != ROUND_NOW:
        return jobs, next_step, 0, 0.0, 0, 0
    return _outcome(ints, group_ints, group_floats, jobs, _queue_round(ints, floats, group_ints, group_floats, now))


@numba.njit(cache=True)
def _random_event(ints, floats, group_ints, group_floats, draws, kind, a, b, now, may_round):
    """`_first_fit_event` with random's round, drawing from the broker's generator's state ``draws``."""
    jobs, next_step = _happen(ints, floats, group_ints, group_floats, kind, a, b, now, may_round)
    if next_step != ROUND_NOW:
        return jobs, next_step, 0, 0.0, 0, 0
    return _outcome(ints, group_ints, group_floats, jobs,
                    _random_round(ints, floats, group_ints, group_floats, draws, now))


@numba.njit(cache=True)
def _pair_event(ints, floats, group_ints, group_floats, pair_ints, pair_floats, kind, a, b, now, may_round):
    """`_first_fit_event` with a pair score's round, on its states and scores."""
    jobs, next_step = _happen(ints, floats, group_ints, group_floats, kind, a, b, now, may_round)
    if next_step != ROUND_NOW:
        return jobs, next_step, 0, 0.0, 0, 0
    return _outcome(ints, group_ints, group_floats, jobs,
                    _pair_round(ints, floats, group_ints, group_floats, pair_ints, pair_floats, now))


@numba.njit(cache=True)
def _start_what_fits(ints, floats, group_ints, group_floats, task, machine, now):
    """Start now on the machine as many of the task's waiting instances as fit there one after another
    (`_start_count`). Returns the instances started (at least one: the machine fits the task)."""
    return _start_count(ints, floats, group_ints, group_floats, task, machine, 0, now, False)


@numba.njit(cache=True)
def _start_one(ints, floats, group_ints, group_floats, task, machine, now):
    """Start one waiting instance of the task on the machine now (`_start_count`), one decision."""
    _start_count(ints, floats, group_ints, group_floats, task, machine, 1, now, False)
    ints[DECISIONS] += 1
    if ints[RULE] == DRF:
        _job_runs(ints, floats, task, 1)


@numba.njit(cache=True)
def _start_count(ints, floats, group_ints, group_floats, task, machine, count, now, reserved):
    """Start ``count`` instances of the task on the machine now (``count`` 0: as many of its waiting instances
    as fit there one after another), with the engine's arithmetic (one subtraction per instance), recorded
    as the engine records them (`_record_start`); a task left with nothing waiting leaves the waiting set
    and the min-demand tree (`_wait_less`). ``reserved``: the instances were held by a reservation (they
    were waiting no more). Returns the instances started."""
    n_tasks, machines, resources = ints[TASKS], ints[MACHINES], ints[RESOURCES]
    left = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)[machine]
    need = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)[task]
    if count == 0:
        waiting = _ints(ints, WAITING, n_tasks)
        most = min(waiting[task], _device_fit_count(ints, task, machine))
        while count < most and _fits(left, need):
            for r in range(resources):
                left[r] -= need[r]
            count += 1
    else:
        for _ in range(count):
            for r in range(resources):
                left[r] -= need[r]
    gid = _record_start(ints, floats, group_ints, group_floats, task, machine, count, now)
    if ints[CONSTRAINED]:
        _take_devices(ints, group_ints, task, machine, count, gid)
    if not reserved:
        _wait_less(ints, floats, task, count)
    return count


@numba.njit(cache=True)
def _record_start(ints, floats, group_ints, group_floats, task, machine, count, now):
    """``count`` instances of the task, their resources taken, start on the machine now, as the engine records
    them: they join the machine's latest group of this round when that holds the task's instances just
    before them (as it groups a round's starts), else begin a group; the task's first start time, its next
    instance, and the machine's and the run's running counts follow. Returns the group's row."""
    n_tasks, machines = ints[TASKS], ints[MACHINES]
    next_fresh = _ints(ints, NEXT_FRESH, n_tasks)
    last_group = _ints(ints, LAST_GROUP, machines)
    last_round = _ints(ints, LAST_ROUND, machines)
    gid = last_group[machine]
    if last_round[machine] == ints[ROUND_STAMP] and group_ints[gid, G_TASK] == task and (
            group_ints[gid, G_FIRST] + group_ints[gid, G_INSTANCES] == next_fresh[task]):
        group_ints[gid, G_INSTANCES] += count
    else:
        gid = ints[GROUPS]
        ints[GROUPS] += 1
        group_ints[gid, G_TASK] = task
        group_ints[gid, G_MACHINE] = machine
        group_ints[gid, G_FIRST] = next_fresh[task]
        group_ints[gid, G_INSTANCES] = count
        group_floats[gid, G_DURATION] = _floats(ints, floats, DURATION, n_tasks)[task]
        group_floats[gid, G_START] = now
        group_floats[gid, G_END] = math.nan
        if ints[CONSTRAINED]:
            group_ints[gid, G_DEVICES_FIRST] = group_ints[gid, G_DEVICES_LAST] = -1
        last_group[machine], last_round[machine] = gid, ints[ROUND_STAMP]
    start_time = _floats(ints, floats, START_TIME, n_tasks)
    if math.isnan(start_time[task]):
        start_time[task] = now
    next_fresh[task] += count
    _ints(ints, ON_MACHINE, machines)[machine] += count
    ints[RUNNING] += count
    return gid


@numba.njit(cache=True)
def _admits(ints, task, machine):
    """Whether the machine takes an instance of the task beyond its resources (always, on a cluster without
    devices or machine attributes): the task's attribute constraint accepts the machine, and ``count`` of its
    devices have ``milli`` free (the task's device request), as the engine's fit matrix asks."""
    if not ints[CONSTRAINED]:
        return True
    row = ints[ints[TASK_ACCEPT] + task]
    if row >= 0 and ints[ints[ACCEPTING] + row * ints[MACHINES] + machine] == 0:
        return False
    count, milli = ints[ints[TASK_DEVICES] + 2 * task], ints[ints[TASK_DEVICES] + 2 * task + 1]
    slots = ints[DEVICE_SLOTS]
    free = ints[DEVICE_FREE] + machine * slots
    room = 0
    for d in range(slots):
        if ints[free + d] >= milli:
            room += 1
    return room >= count


@numba.njit(cache=True)
def _device_fit_count(ints, task, machine):
    """How many instances of the task the machine's devices hold one after another (`cloudsim.engine.devices.
    device_fit_count`); no bound for a task without devices."""
    count = ints[ints[TASK_DEVICES] + 2 * task] if ints[CONSTRAINED] else 0
    if count == 0:
        return 1 << 62
    milli, slots = ints[ints[TASK_DEVICES] + 2 * task + 1], ints[DEVICE_SLOTS]
    free = ints[DEVICE_FREE] + machine * slots
    held = 0
    for d in range(slots):
        if milli < DEVICE_MILLI:  # a share fits wherever milli is left on one device
            held += max(ints[free + d], 0) // milli
        elif ints[free + d] >= DEVICE_MILLI:
            held += 1
    return held if milli < DEVICE_MILLI else held // count


@numba.njit(cache=True)
def _take_devices(ints, group_ints, task, machine, count, gid):
    """``count`` instances of the task, starting on the machine in group row ``gid``, take devices one after
    another by the engine's default rule (`cloudsim.engine.devices.default_devices`): a share the tightest device that
    holds it (the first on ties; CHOSEN_DEVICE where that is set), an exclusive instance the first whole free
    devices (those in CHOSEN_LIST where CHOSEN_DEVICE is CHOSEN_LISTED). The device log keeps
    them: a chunk per start (the next chunk of its group, -1 for none; its instances; their devices), the
    group's last chunk extended where nothing was logged after it."""
    need, milli = ints[ints[TASK_DEVICES] + 2 * task], ints[ints[TASK_DEVICES] + 2 * task + 1]
    if need == 0:
        return
    slots, log = ints[DEVICE_SLOTS], ints[DEVICE_LOG]
    free, users = ints[DEVICE_FREE] + machine * slots, ints[DEVICE_USERS] + machine * (slots + 1)
    last = group_ints[gid, G_DEVICES_LAST]
    if last >= 0 and last + 2 + ints[log + last + 1] * need == ints[LOG_USED]:
        chunk = last
    else:
        chunk = ints[LOG_USED]
        ints[log + chunk], ints[log + chunk + 1] = -1, 0
        ints[LOG_USED] += 2
        if last >= 0:
            ints[log + last] = chunk
        else:
            group_ints[gid, G_DEVICES_FIRST] = chunk
        group_ints[gid, G_DEVICES_LAST] = chunk
    for _ in range(count):
        at = log + ints[LOG_USED]
        if milli < DEVICE_MILLI:
            best = ints[CHOSEN_DEVICE]  # (FGD's or gpu-random's choice, else the default rule's)
            for d in range(slots if best < 0 else 0):
                if ints[free + d] >= milli and (best < 0 or ints[free + d] < ints[free + best]):
                    best = d
            ints[at] = best
            ints[users] += 1  # (kind 0: a share)
        else:
            if ints[CHOSEN_DEVICE] == CHOSEN_LISTED:  # (gpu-random's draw)
                for j in range(need):
                    ints[at + j] = ints[ints[CHOSEN_LIST] + j]
            else:
                taken = 0
                for d in range(slots):
                    if taken < need and ints[free + d] >= DEVICE_MILLI:
                        ints[at + taken] = d
                        taken += 1
            ints[users + need] += 1  # (kind k: k whole devices)
        for j in range(need):
            ints[free + ints[at + j]] -= milli
        ints[LOG_USED] += need
        ints[log + chunk + 1] += 1
    ints[LOG_WAITING] -= count * (2 + need)


@numba.njit(cache=True)
def _give_devices(ints, group_ints, gid, task, machine):
    """The group's instances end: each gives back ``milli`` of each of its devices (from the device log)."""
    chunk = group_ints[gid, G_DEVICES_FIRST]
    need, milli = ints[ints[TASK_DEVICES] + 2 * task], ints[ints[TASK_DEVICES] + 2 * task + 1]
    slots, log = ints[DEVICE_SLOTS], ints[DEVICE_LOG]
    free, users = ints[DEVICE_FREE] + machine * slots, ints[DEVICE_USERS] + machine * (slots + 1)
    while chunk >= 0:
        for i in range(ints[log + chunk + 1]):
            at = log + chunk + 2 + i * need
            for j in range(need):
                ints[free + ints[at + j]] += milli
            ints[users + (0 if milli < DEVICE_MILLI else need)] -= 1
        chunk = ints[log + chunk]


@numba.njit(cache=True)
def _first_machine(ints, max_free, leaves, demand, task, lo, stack):
    """The first machine from ``lo`` on that fits an instance of the task (its demand ``demand``): its free
    resources hold it (the max-free tree) and it `_admits` it; -1 if none."""
    machine = _first_leaf(max_free, leaves, demand, lo, True, stack)
    while machine >= 0 and not _admits(ints, task, machine):
        machine = _first_leaf(max_free, leaves, demand, machine + 1, True, stack)
    return machine


@numba.njit(cache=True)
def _first_task(ints, min_demand, leaves, left, machine, lo, stack):
    """The first waiting task from ``lo`` on of which the machine fits an instance: free resources ``left`` hold
    its demand (the min-demand tree) and the machine `_admits` it; -1 if none."""
    task = _first_leaf(min_demand, leaves, left, lo, False, stack)
    while task >= 0 and not _admits(ints, task, machine):
        task = _first_leaf(min_demand, leaves, left, task + 1, False, stack)
    return task


@numba.njit(cache=True)
def _job_runs(ints, floats, task, count):
    """``count`` more (negative: fewer) instances of the task run: its job's usage follows, as the engine's
    task table keeps it (DRF reads it): ``count x demand`` added, exactly 0 once nothing of the job runs."""
    n_tasks, n_jobs, resources = ints[TASKS], ints[JOBS], ints[RESOURCES]
    job = _ints(ints, TASK_JOB, n_tasks)[task]
    running = _ints(ints, JOB_RUNNING, n_jobs)
    usage = _floats(ints, floats, JOB_USAGE, n_jobs * resources).reshape(n_jobs, resources)
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    running[job] += count
    for r in range(resources):
        usage[job, r] = 0.0 if running[job] == 0 else usage[job, r] + count * demand[task, r]


@numba.njit(cache=True)
def _machine_changed(ints, floats, machine):
    """The machine's free resources changed: its leaves of the trees the round reads follow (max-free; with
    least-load, its load, the mean over resources of (capacity - free) / capacity, summed in resource order;
    with best-fit, min-free)."""
    machines, resources, leaves, rule = ints[MACHINES], ints[RESOURCES], ints[MACHINE_LEAVES], ints[RULE]
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    _set_leaf(_floats(ints, floats, MAX_FREE, 2 * leaves * resources).reshape(2 * leaves, resources), leaves, machine,
              free[machine], True)
    if rule == LEAST_LOAD:
        capacity = _floats(ints, floats, CAPACITY, machines * resources).reshape(machines, resources)
        total = 0.0
        for r in range(resources):
            term = (capacity[machine, r] - free[machine, r]) / capacity[machine, r] if capacity[machine, r] > 0 else 0.0
            total = term if r == 0 else total + term
        load = _floats(ints, floats, LOAD, machines)
        load[machine] = total / resources
        _set_leaf(_floats(ints, floats, MIN_LOAD, 2 * leaves).reshape(2 * leaves, 1), leaves, machine,
                  load[machine:machine + 1], False)
    elif rule == BEST_FIT:
        _set_leaf(_floats(ints, floats, MIN_FREE, 2 * leaves * resources).reshape(2 * leaves, resources), leaves,
                  machine, free[machine], False)
    if ints[SHAPES]:  # (a GPU policy's kept scores of the machine are stale)
        ints[ints[MACHINE_VERSION] + machine] += 1


@numba.njit(cache=True)
def _placement(ints, floats, task, stack):
    """The machine a queue policy starts the task on: the first that fits it (round-robin: counting on from
    the machine after its previous start, cyclically), or among those that fit, the least loaded (least-load)
    or the one left with the least sum over resources of (free - demand) / capacity (best-fit), the first on
    ties; -1 if none fits.

    Least-load and best-fit search the machine trees in machine order, passing by a subtree where no machine
    fits (max-free) or none can beat the best so far: least-load's least load there, or best-fit's bound, the
    sum over resources of (min-free - demand) / max-capacity, which no machine there that fits goes below
    (float subtraction, division and addition are monotone; a fitting machine's term is at least 0)."""
    n_tasks, machines, resources, rule = ints[TASKS], ints[MACHINES], ints[RESOURCES], ints[RULE]
    leaves = ints[MACHINE_LEAVES]
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)[task]
    max_free = _floats(ints, floats, MAX_FREE, 2 * leaves * resources).reshape(2 * leaves, resources)
    if rule == ROUND_ROBIN:  # the first that fits from the turn on, else from the first machine on
        machine = _first_machine(ints, max_free, leaves, demand, task, ints[TURN], stack)
        return machine if machine >= 0 else _first_machine(ints, max_free, leaves, demand, task, 0, stack)
    if rule != LEAST_LOAD and rule != BEST_FIT:
        return _first_machine(ints, max_free, leaves, demand, task, 0, stack)
    min_load = _floats(ints, floats, MIN_LOAD, 2 * leaves)
    min_free = _floats(ints, floats, MIN_FREE, 2 * leaves * resources).reshape(2 * leaves, resources)
    max_capacity = _floats(ints, floats, MAX_CAPACITY, 2 * leaves * resources).reshape(2 * leaves, resources)
    capacity = _floats(ints, floats, CAPACITY, machines * resources).reshape(machines, resources)
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    best, best_value = -1, np.inf
    stack[0] = 1
    top = 1
    while top:
        top -= 1
        node = stack[top]
        fits = True
        for r in range(resources):
            if max_free[node, r] < demand[r]:
                fits = False
                break
        if not fits:
            continue
        if rule == LEAST_LOAD:
            bound = min_load[node]
        else:
            bound = 0.0
            for r in range(resources):
                term = (min_free[node, r] - demand[r]) / max_capacity[node, r] if max_capacity[node, r] > 0 else 0.0
                bound = term if r == 0 else bound + term
        if best >= 0 and bound >= best_value:
            continue  # none here beats the best so far (a tie goes to the earlier machine)
        if node >= leaves:
            machine = node - leaves
            if not _admits(ints, task, machine):
                continue
            if rule == LEAST_LOAD:
                value = bound
            else:
                value = 0.0
                for r in range(resources):
                    term = (free[machine, r] - demand[r]) / capacity[machine, r] if capacity[machine, r] > 0 else 0.0
                    value = term if r == 0 else value + term
            if best < 0 or value < best_value:
                best, best_value = machine, value
            continue
        stack[top], stack[top + 1] = 2 * node + 1, 2 * node  # the left child first
        top += 2
    return best


@numba.njit(cache=True)
def _drf_starts(ints, floats, group_ints, group_floats, now, stack, mark, freed, stamp):
    """DRF's starts of a round (`agents.heuristics.DominantResourceFairness`): one instance at a time of the
    waiting task whose job has the smallest dominant share (the largest over resources of its usage over the
    cluster's total capacity, 0 for a resource of total 0), the earliest on ties, among those that fit a
    machine, on the first machine that fits it. A task that fits no machine drops out for the round (free
    resources only shrink; on a cluster with devices or attributes it is marked, as `_queue_round` marks it).

    The waiting tasks wait in a heap by (share, task). A job's share only grows within a round, so a task whose
    job started since it was filed comes out early: it is filed again by its share now."""
    n_tasks, resources = ints[TASKS], ints[RESOURCES]
    task_leaves, machine_leaves = ints[TASK_LEAVES], ints[MACHINE_LEAVES]
    waiting = _ints(ints, WAITING, n_tasks)
    task_job = _ints(ints, TASK_JOB, n_tasks)
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    free = _floats(ints, floats, FREE, ints[MACHINES] * resources).reshape(ints[MACHINES], resources)
    usage = _floats(ints, floats, JOB_USAGE, ints[JOBS] * resources).reshape(ints[JOBS], resources)
    total = _floats(ints, floats, TOTAL_CAPACITY, resources)
    min_demand = _floats(ints, floats, MIN_DEMAND, 2 * task_leaves * resources).reshape(2 * task_leaves, resources)
    max_free = _floats(ints, floats, MAX_FREE, 2 * machine_leaves * resources).reshape(2 * machine_leaves, resources)
    any_demand = np.full(resources, np.finfo(np.float64).max)
    shares, tasks = np.empty(ints[WAITING_TASKS]), np.empty(ints[WAITING_TASKS], dtype=np.int64)
    size = 0
    task = _first_leaf(min_demand, task_leaves, any_demand, 0, False, stack)
    while task >= 0:
        size = _share_push(shares, tasks, size, _dominant_share(usage, total, task_job[task]), task)
        task = _first_leaf(min_demand, task_leaves, any_demand, task + 1, False, stack)
    while size > 0:
        share, task = shares[0], tasks[0]
        size = _share_pop(shares, tasks, size)
        now_share = _dominant_share(usage, total, task_job[task])
        if now_share != share:  # its job started since it was filed
            size = _share_push(shares, tasks, size, now_share, task)
            continue
        if ints[CONSTRAINED] and not _may_fit(ints, free, demand, mark, freed, task, stamp):
            continue
        machine = _first_machine(ints, max_free, machine_leaves, demand[task], task, 0, stack)
        if machine < 0:
            mark[task] = stamp
            continue  # it fits no machine: out for the round
        _start_one(ints, floats, group_ints, group_floats, task, machine, now)
        _machine_changed(ints, floats, machine)
        if waiting[task] > 0:
            size = _share_push(shares, tasks, size, _dominant_share(usage, total, task_job[task]), task)


@numba.njit(cache=True)
def _dominant_share(usage, total, job):
    """The job's dominant share: the largest over resources of its usage over the total capacity (0 where that
    is 0)."""
    share = 0.0
    for r in range(usage.shape[1]):
        part = usage[job, r] / total[r] if total[r] > 0 else 0.0
        if r == 0 or part > share:
            share = part
    return share


@numba.njit(cache=True, inline="always")
def _share_before(share, task, other_share, other_task):
    return share < other_share or (share == other_share and task < other_task)


@numba.njit(cache=True)
def _share_push(shares, tasks, size, share, task):
    """Files (share, task) in the heap of ``size`` pairs; returns its new size."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if not _share_before(share, task, shares[parent], tasks[parent]):
            break
        shares[i], tasks[i] = shares[parent], tasks[parent]
        i = parent
    shares[i], tasks[i] = share, task
    return size + 1


@numba.njit(cache=True)
def _share_pop(shares, tasks, size):
    """Takes the first pair (``shares[0]``, ``tasks[0]``) out of the heap; returns its new size."""
    size -= 1
    share, task = shares[size], tasks[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _share_before(shares[child + 1], tasks[child + 1], shares[child], tasks[child]):
            child += 1
        if not _share_before(shares[child], tasks[child], share, task):
            break
        shares[i], tasks[i] = shares[child], tasks[child]
        i = child
    shares[i], tasks[i] = share, task
    return size


@numba.njit(cache=True)
def _no_room(ints, group_ints, groups):
    """Whether a round that may make ``groups`` groups lacks room for them in the group rows, or for the devices
    the waiting instances may take in the device log: then it asks for the room (NEED_GROUPS, NEED_LOG)."""
    if group_ints.shape[0] - ints[GROUPS] < groups:
        ints[NEED_GROUPS] = groups
    if ints[CONSTRAINED] and ints.shape[0] - ints[DEVICE_LOG] - ints[LOG_USED] < ints[LOG_WAITING]:
        ints[NEED_LOG] = ints[LOG_WAITING]
    return ints[NEED_GROUPS] > 0 or ints[NEED_LOG] > 0


@numba.njit(cache=True)
def _begin_round(ints, floats):
    """A queue policy's, a GPU policy's or EASY's round begins: the machines freed since the last one take their
    places in the machine trees (`_machine_changed`), the tasks new since lose their marks (every machine may fit
    them: `_may_fit`), and the round gets a stamp of its own (`_record_start`). Returns the machines freed since
    the last round and the stamp."""
    machines, n_tasks = ints[MACHINES], ints[TASKS]
    is_dirty = _ints(ints, IS_DIRTY, machines)
    dirty = _ints(ints, DIRTY_LIST, machines)
    freed = dirty[:ints[DIRTY]].copy()
    for i in range(ints[DIRTY]):
        is_dirty[dirty[i]] = 0
        _machine_changed(ints, floats, dirty[i])
    ints[DIRTY] = 0
    mark, new = _ints(ints, MARK, n_tasks), _ints(ints, NEW_LIST, n_tasks)
    for i in range(ints[NEW]):
        mark[new[i]] = -1
    ints[NEW] = 0
    ints[ROUND_STAMP] += 1
    return freed, ints[ROUND_STAMP]


@numba.njit(cache=True)
def _queue_round(ints, floats, group_ints, group_floats, now):
    """A queue policy's round now (`agents.heuristics.QueuePolicy`): the waiting tasks in arrival order
    (FCFS, which stops at the first that fits no machine: the queue waits behind it; best-fit; least-load;
    round-robin),
    by duration (SJF) or by response ratio, highest first (HRRN), the earliest on ties, each started while it
    fits a machine, on the machine `_placement` picks, with as many instances as fit there (least-load and
    round-robin: one).
    Free resources only shrink within a round, so a task that fits no machine at its turn fits none later:
    the order in which one decision at a time would pick them. Returns the decisions made, or NO_ROOM as
    `_first_fit_round` does."""
    rule = ints[RULE]
    # at most one group per instance started, and but for single starts one per task and machine
    one_at_a_time = rule == LEAST_LOAD or rule == DRF or rule == ROUND_ROBIN
    if _no_room(ints, group_ints, ints[WAITING_INSTANCES] if one_at_a_time else min(
            ints[WAITING_INSTANCES], ints[WAITING_TASKS] * ints[MACHINES])):
        return NO_ROOM
    n_tasks, machines, resources = ints[TASKS], ints[MACHINES], ints[RESOURCES]
    task_leaves = ints[TASK_LEAVES]
    waiting = _ints(ints, WAITING, n_tasks)
    stack = _ints(ints, STACK, STACK_SIZE)
    duration = _floats(ints, floats, DURATION, n_tasks)
    ready_time = _floats(ints, floats, READY_TIME, n_tasks)
    min_demand = _floats(ints, floats, MIN_DEMAND, 2 * task_leaves * resources).reshape(2 * task_leaves, resources)
    any_demand = np.full(resources, np.finfo(np.float64).max)  # every waiting task's demand is at most this
    # On a cluster with devices or attributes the machine trees cannot tell that a task fits nowhere: a task
    # that fitted none is marked (MARK) and passed over as `_may_fit` says
    constrained = ints[CONSTRAINED]
    mark = _ints(ints, MARK, n_tasks)
    freed, stamp = _begin_round(ints, floats)
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    first_group, first_decision = ints[GROUPS], ints[DECISIONS]
    in_order = rule == SJF or rule == HRRN
    order = np.empty(ints[WAITING_TASKS] if in_order else 0, dtype=np.int64)
    if in_order:  # the waiting tasks by their priority
        key = np.empty(len(order))
        count = 0
        task = _first_leaf(min_demand, task_leaves, any_demand, 0, False, stack)
        while task >= 0:
            order[count] = task
            if rule == SJF:
                key[count] = duration[task]
            else:  # HRRN: the highest ratio first, a task of duration 0 before any other
                ratio = (now - ready_time[task] + duration[task]) / duration[task] if duration[task] > 0 else np.inf
                key[count] = -ratio
            count += 1
            task = _first_leaf(min_demand, task_leaves, any_demand, task + 1, False, stack)
        order = order[np.argsort(key, kind="mergesort")]  # (stable: arrival order on ties)
    if rule == DRF:
        _drf_starts(ints, floats, group_ints, group_floats, now, stack, mark, freed, stamp)
        task = -1  # (done)
    k = 0
    if rule != DRF:
        task = order[0] if in_order else _first_leaf(min_demand, task_leaves, any_demand, 0, False, stack)
    while task >= 0:
        while waiting[task] > 0 and (not constrained or _may_fit(ints, free, demand, mark, freed, task, stamp)):
            machine = _placement(ints, floats, task, stack)
            if machine < 0:
                mark[task] = stamp  # (it fits none for the rest of the round)
                break
            if one_at_a_time:
                _start_one(ints, floats, group_ints, group_floats, task, machine, now)
                if rule == ROUND_ROBIN:
                    ints[TURN] = (machine + 1) % machines
            else:
                _start_what_fits(ints, floats, group_ints, group_floats, task, machine, now)
                ints[DECISIONS] += 1
            _machine_changed(ints, floats, machine)
        if rule == FCFS and waiting[task] > 0:
            break
        k += 1
        if in_order:
            task = order[k] if k < len(order) else -1
        else:
            task = _first_leaf(min_demand, task_leaves, any_demand, task + 1, False, stack)
    _order_ends(ints, floats, group_ints, group_floats, first_group, ints[GROUPS], now)
    ints[ROUND_FIRST] = first_group
    return ints[DECISIONS] - first_decision


@numba.njit(cache=True)
def _fits(free, demand):
    for r in range(len(free)):
        if demand[r] > free[r]:
            return False
    return True


@numba.njit(cache=True)
def _count_fits(ints, floats, machine, stack):
    """How many waiting tasks fit the machine now: its FIT_COUNT, and FITS, counted anew."""
    machines, resources, leaves = ints[MACHINES], ints[RESOURCES], ints[TASK_LEAVES]
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)[machine]
    min_demand = _floats(ints, floats, MIN_DEMAND, 2 * leaves * resources).reshape(2 * leaves, resources)
    fit_count = _ints(ints, FIT_COUNT, machines)
    count = 0
    task = _first_task(ints, min_demand, leaves, free, machine, 0, stack)
    while task >= 0:
        count += 1
        task = _first_task(ints, min_demand, leaves, free, machine, task + 1, stack)
    ints[FITS] += count - fit_count[machine]
    fit_count[machine] = count


@numba.njit(cache=True)
def _random_round(ints, floats, group_ints, group_floats, draws, now):
    """Random's round (`agents.heuristics.RandomFit`): again and again, one instance of a fit (machine, task)
    pair drawn uniformly among them all, machine-major, tasks in arrival order, with the broker's generator
    as its ``decide`` draws (``integers(pairs)``, by `draw_below` on the generator's state ``draws``);
    until no pair fits. How many waiting tasks fit each machine is kept from round to round: a task new
    since the last round is counted on every machine it fits, then a machine freed since is counted anew;
    a start counts its machine anew and, where it leaves its task nothing waiting, uncounts the task on
    every other machine it fits. Returns the decisions made, or NO_ROOM as `_first_fit_round` does."""
    if _no_room(ints, group_ints, ints[WAITING_INSTANCES]):  # (at most one group per instance)
        return NO_ROOM
    n_tasks, machines, resources, task_leaves = ints[TASKS], ints[MACHINES], ints[RESOURCES], ints[TASK_LEAVES]
    waiting = _ints(ints, WAITING, n_tasks)
    is_dirty = _ints(ints, IS_DIRTY, machines)
    dirty = _ints(ints, DIRTY_LIST, machines)
    new = _ints(ints, NEW_LIST, n_tasks)
    stack = _ints(ints, STACK, STACK_SIZE)
    fit_count = _ints(ints, FIT_COUNT, machines)
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    min_demand = _floats(ints, floats, MIN_DEMAND, 2 * task_leaves * resources).reshape(2 * task_leaves, resources)
    for i in range(ints[NEW]):
        task = new[i]
        for machine in range(machines):
            if _fits(free[machine], demand[task]) and _admits(ints, task, machine):
                fit_count[machine] += 1
                ints[FITS] += 1
    ints[NEW] = 0
    for i in range(ints[DIRTY]):
        machine = dirty[i]
        is_dirty[machine] = 0
        _machine_changed(ints, floats, machine)
        _count_fits(ints, floats, machine, stack)
    ints[DIRTY] = 0
    ints[ROUND_STAMP] += 1
    first_group, first_decision = ints[GROUPS], ints[DECISIONS]
    while ints[FITS] > 0:
        k = draw_below(draws, ints[FITS])
        machine = 0
        while k >= fit_count[machine]:
            k -= fit_count[machine]
            machine += 1
        task = _first_task(ints, min_demand, task_leaves, free[machine], machine, 0, stack)
        for _ in range(k):
            task = _first_task(ints, min_demand, task_leaves, free[machine], machine, task + 1, stack)
        _start_one(ints, floats, group_ints, group_floats, task, machine, now)
        if waiting[task] == 0:
            for other in range(machines):
                if other != machine and _fits(free[other], demand[task]) and _admits(ints, task, other):
                    fit_count[other] -= 1
                    ints[FITS] -= 1
        _count_fits(ints, floats, machine, stack)
        _machine_changed(ints, floats, machine)
    _order_ends(ints, floats, group_ints, group_floats, first_group, ints[GROUPS], now)
    ints[ROUND_FIRST] = first_group
    return ints[DECISIONS] - first_decision


# ----------------------------------------------------------------------------------- the GPU policies
@numba.njit(cache=True)
def _node_event(ints, floats, group_ints, group_floats, kind, a, b, now, may_round):
    """`_first_fit_event` with a GPU policy's round: `_drawn_node_event` without a generator's state (numba
    compiles their round without the draws)."""
    return _drawn_node_event(ints, floats, group_ints, group_floats, None, kind, a, b, now, may_round)


@numba.njit(cache=True)
def _drawn_node_event(ints, floats, group_ints, group_floats, draws, kind, a, b, now, may_round):
    """`_first_fit_event` with a GPU policy's round, gpu-random's drawing from its generator's state ``draws``."""
    jobs, next_step = _happen(ints, floats, group_ints, group_floats, kind, a, b, now, may_round)
    if next_step != ROUND_NOW:
        return jobs, next_step, 0, 0.0, 0, 0
    return _outcome(ints, group_ints, group_floats, jobs, _node_round(ints, floats, group_ints, group_floats, draws,
                                                                      now))


@numba.njit(cache=True)
def _node_round(ints, floats, group_ints, group_floats, draws, now):
    """A GPU policy's round (`agents.heuristics.gpu.NodeScorer`): one decision at a time, the first waiting task
    in arrival order that fits some machine, one instance on the machine of the highest score among those that fit it
    (`_kept_score`), the lowest in the policy's permutation (NODE_RANK) on ties, its devices by the engine's
    default rule (FGD's share: on the device its score chose); gpu-random's on a machine and devices drawn from
    its generator's state ``draws`` (`_drawn_start`; None for the others, whose rounds numba compiles without
    that branch); until no waiting task fits. Returns the decisions made, or NO_ROOM as `_first_fit_round` does.

    A round ends when no waiting task fits any machine, and within a round machines only fill: a task found to
    fit none (MARK: the round's stamp) fits none for the rest of the round, and in the next round none but the
    machines freed since (`_fits_some`)."""
    if _no_room(ints, group_ints, ints[WAITING_INSTANCES]):  # (at most one group per instance)
        return NO_ROOM
    n_tasks, machines, resources = ints[TASKS], ints[MACHINES], ints[RESOURCES]
    task_leaves = ints[TASK_LEAVES]
    stack = _ints(ints, STACK, STACK_SIZE)
    rank = _ints(ints, NODE_RANK, machines)
    mark = _ints(ints, MARK, n_tasks)
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    min_demand = _floats(ints, floats, MIN_DEMAND, 2 * task_leaves * resources).reshape(2 * task_leaves, resources)
    any_demand = np.full(resources, np.finfo(np.float64).max)
    freed, stamp = _begin_round(ints, floats)
    fitting, scores = np.empty(machines, dtype=np.int64), np.empty(machines, dtype=np.int64)
    devices = np.empty(machines, dtype=np.int64)
    scratch = np.empty(max(ints[DEVICE_SLOTS], 1), dtype=np.int64)  # (gpu-packing's devices in order; FGD's after)
    first_group, first_decision = ints[GROUPS], ints[DECISIONS]
    while True:
        task = _first_leaf(min_demand, task_leaves, any_demand, 0, False, stack)
        while task >= 0 and not _fits_some(ints, free, demand, mark, freed, task, stamp):
            task = _first_leaf(min_demand, task_leaves, any_demand, task + 1, False, stack)
        if task < 0:
            break
        if draws is not None:  # gpu-random: a machine drawn among those that fit the task, and its devices
            _drawn_start(ints, floats, group_ints, group_floats, draws, task, fitting, scratch, now)
            continue
        n = 0
        for machine in range(machines):  # every machine that fits the task, scored
            if _fits(free[machine], demand[task]) and _admits(ints, task, machine):
                fitting[n] = machine
                scores[n], devices[n] = _kept_score(ints, floats, task, machine, scratch)
                n += 1
        if ints[RULE] == GPU_BEST_FIT:  # min-max scaled over the machines that fit
            low, high = scores[:n].min(), scores[:n].max()
            for i in range(n):
                scores[i] = (scores[i] - low) * 100 // (high - low) if high > low else 0
        best = 0
        for i in range(1, n):
            if scores[i] > scores[best] or scores[i] == scores[best] and rank[fitting[i]] < rank[fitting[best]]:
                best = i
        ints[CHOSEN_DEVICE] = devices[best]
        _start_one(ints, floats, group_ints, group_floats, task, fitting[best], now)
        ints[CHOSEN_DEVICE] = -1
        _machine_changed(ints, floats, fitting[best])
    _order_ends(ints, floats, group_ints, group_floats, first_group, ints[GROUPS], now)
    ints[ROUND_FIRST] = first_group
    return ints[DECISIONS] - first_decision


@numba.njit(cache=True)
def _drawn_start(ints, floats, group_ints, group_floats, draws, task, fitting, scratch, now):
    """gpu-random's decision on the task (`agents.heuristics.gpu.GpuRandom`): one instance on a machine drawn
    among those that fit it (``integers(n)``, in machine order), on the devices `_drawn_devices` draws there."""
    machines, resources = ints[MACHINES], ints[RESOURCES]
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    need = _floats(ints, floats, DEMAND, ints[TASKS] * resources).reshape(-1, resources)[task]
    n = 0
    for machine in range(machines):
        if _fits(free[machine], need) and _admits(ints, task, machine):
            fitting[n] = machine
            n += 1
    machine = fitting[draw_below(draws, n)]
    ints[CHOSEN_DEVICE] = _drawn_devices(ints, task, machine, draws, scratch)
    _start_one(ints, floats, group_ints, group_floats, task, machine, now)
    ints[CHOSEN_DEVICE] = -1
    _machine_changed(ints, floats, machine)


@numba.njit(cache=True)
def _drawn_devices(ints, task, machine, draws, room):
    """gpu-random's devices for one instance of the task on the machine (`agents.heuristics.gpu.GpuRandom`):
    ``count`` of those with the task's milli free, drawn as numpy's ``choice(room, count, replace=False)`` draws
    them (Floyd's sampling over their positions, a set kept by open addressing, then its shuffle's draws, which move the
    stream on) and taken in ascending order. Returns a share's device, CHOSEN_LISTED with an exclusive
    instance's devices in CHOSEN_LIST, or -1 for a task of no devices (the default rule)."""
    count = ints[ints[TASK_DEVICES] + 2 * task] if ints[CONSTRAINED] else 0
    if count == 0:
        return -1
    milli, slots = ints[ints[TASK_DEVICES] + 2 * task + 1], ints[DEVICE_SLOTS]
    on = ints[DEVICE_FREE] + machine * slots
    size = 0
    for d in range(slots):
        if ints[on + d] >= milli:
            room[size] = d
            size += 1
    mask = np.int64(1.2 * count)  # (the set: the smallest power of two above 1.2 x count)
    for shift in (1, 2, 4, 8, 16, 32):
        mask |= mask >> shift
    hashed = np.full(mask + 1, -1, dtype=np.int64)
    picked = np.empty(count, dtype=np.int64)
    for j in range(size - count, size):
        value = draw_below(draws, j + 1)
        at = value & mask
        while hashed[at] != -1 and hashed[at] != value:
            at = (at + 1) & mask
        if hashed[at] == -1:
            hashed[at] = value
        else:  # (taken: j instead)
            value, at = j, j & mask
            while hashed[at] != -1:
                at = (at + 1) & mask
            hashed[at] = j
        picked[j - size + count] = value
    for i in range(count - 1, 0, -1):  # the shuffle: its draws only (the devices are taken in order)
        k = draw_below(draws, i + 1)
        picked[i], picked[k] = picked[k], picked[i]
    picked.sort()
    if milli < DEVICE_MILLI:
        return room[picked[0]]
    for i in range(count):
        ints[ints[CHOSEN_LIST] + i] = room[picked[i]]
    return CHOSEN_LISTED


@numba.njit(cache=True)
def _may_fit(ints, free, demand, mark, freed, task, stamp):
    """False where the task surely fits no machine now, in round ``stamp``: it fitted none earlier in this round
    (MARK holds the stamp), or none at the last round's end and none of the machines ``freed`` since holds it
    (then it is marked with the stamp: machines only fill in between)."""
    if mark[task] == stamp:
        return False
    if mark[task] == stamp - 1:
        for machine in freed:
            if _fits(free[machine], demand[task]) and _admits(ints, task, machine):
                return True
        mark[task] = stamp
        return False
    return True


@numba.njit(cache=True)
def _fits_some(ints, free, demand, mark, freed, task, stamp):
    """Whether some machine fits an instance of the task now, in round ``stamp``: none if it fitted none earlier
    in this round; none but the machines ``freed`` since the last round if it fitted none at that round's end
    (machines only fill in between); else any. A task that fits none is marked with the stamp."""
    if not _may_fit(ints, free, demand, mark, freed, task, stamp):
        return False
    if mark[task] == stamp - 1:  # (one of the machines freed holds it)
        return True
    for machine in range(free.shape[0]):
        if _fits(free[machine], demand[task]) and _admits(ints, task, machine):
            return True
    mark[task] = stamp
    return False


@numba.njit(cache=True)
def _kept_score(ints, floats, task, machine, scratch):
    """The GPU policy's score of the machine for the task (`_fgd_score`, `_node_score`) and the device a share
    takes there (FGD's; else -1), kept per task shape and machine until the machine changes (`_machine_changed`),
    as the policies' own `scores` keep them: a score reads nothing of the task but its shape."""
    cell, version = -1, 0
    if ints[SHAPES]:
        cell = ints[ints[TASK_SHAPE] + task] * ints[MACHINES] + machine
        version = ints[ints[MACHINE_VERSION] + machine] + 1
        if ints[ints[KEPT_SEEN] + cell] == version:
            return ints[ints[KEPT_SCORE] + cell], ints[ints[KEPT_DEVICE] + cell]
    if ints[RULE] == FGD:
        score, device = _fgd_score(ints, floats, task, machine, scratch)
    else:
        score, device = _node_score(ints, floats, task, machine, scratch), np.int64(-1)
    if cell >= 0:
        ints[ints[KEPT_SEEN] + cell] = version
        ints[ints[KEPT_SCORE] + cell], ints[ints[KEPT_DEVICE] + cell] = score, device
    return score, device


@numba.njit(cache=True)
def _fgd_score(ints, floats, task, machine, scratch):
    """FGD's whole-number score of the machine for the task and, for a share, the device that makes it (else -1):
    D the largest decrease of the machine's fragmentation against the target workload that one instance makes
    (`cloudsim.engine.kernels.fgd_delta`, as the Python path computes it), int(100 / (1 + exp(-D / 1000))) with D
    clipped to +-5e5, the operations of `agents.heuristics.gpu.FragmentationGradientDescent` in the same order."""
    resources, slots, column, shapes = ints[RESOURCES], ints[DEVICE_SLOTS], ints[CPU_COLUMN], ints[TARGET_SHAPES]
    cpu = floats[ints[DEMAND] + task * resources + column]
    free_cpu = floats[ints[FREE] + machine * resources + column]
    count = ints[ints[TASK_DEVICES] + 2 * task] if ints[CONSTRAINED] else 0
    milli = ints[ints[TASK_DEVICES] + 2 * task + 1] if ints[CONSTRAINED] else 0
    target_ints = _ints(ints, TARGET_INTS, 2 * shapes)
    target_floats = _floats(ints, floats, TARGET_FLOATS, 2 * shapes)
    target_milli, target_count = target_ints[:shapes], target_ints[shapes:]
    target_cpu, target_p = target_floats[:shapes], target_floats[shapes:]
    accepted = _ints(ints, TARGET_ACCEPTED, ints[MACHINES] * shapes)[machine * shapes:(machine + 1) * shapes]
    on = ints[DEVICE_FREE] + machine * slots
    best, device = fgd_delta(free_cpu, ints[on:on + slots], accepted, cpu, count, milli, target_cpu, target_milli,
                             target_count, target_p, scratch[:slots])
    clipped = min(max(best, -5e5), 5e5)
    return np.int64(100 / (1 + exp1(-clipped / DEVICE_MILLI))), device


@numba.njit(cache=True)
def _node_score(ints, floats, task, machine, scratch):
    """The GPU policy's whole-number score of the machine for the task (`agents.heuristics.gpu`'s formulas, the same
    operations in the same order; gpu-best-fit's before its min-max scaling): with cpu_left the machine's free
    cpu, idle its free milli-GPU, held its GPUs, and the task's cpu, GPUs and milli per GPU. A CPU-only task
    scores 0 under gpu-packing and gpu-clustering."""
    resources, rule, cpu_column = ints[RESOURCES], ints[RULE], ints[CPU_COLUMN]
    cpu = floats[ints[DEMAND] + task * resources + cpu_column]
    cpu_left = floats[ints[FREE] + machine * resources + cpu_column]
    count, milli, slots, idle, held = 0, 0, ints[DEVICE_SLOTS], 0, 0
    if ints[CONSTRAINED]:
        count, milli = ints[ints[TASK_DEVICES] + 2 * task], ints[ints[TASK_DEVICES] + 2 * task + 1]
        for d in range(slots):
            free = ints[ints[DEVICE_FREE] + machine * slots + d]
            if free >= 0:
                idle += free
                held += 1
    if rule == GPU_BEST_FIT:
        s = 0.5 * (cpu_left - cpu) / CPU_SCALE + 0.5 * (idle - count * milli) / GPU_SCALE
        return np.int64(100 * (1 - s))
    if rule == GPU_DOT_PRODUCT:
        dot = (cpu_left / CPU_SCALE) * (cpu / CPU_SCALE) + (idle / GPU_SCALE) * (count * milli / GPU_SCALE)
        return np.int64(100 * (1 - dot / 2))
    if count == 0:
        return 0
    if rule == GPU_PACKING:  # partly used devices first, then machines with some used, then empty ones
        ordered = scratch[:slots]
        ordered[:] = ints[ints[DEVICE_FREE] + machine * slots:ints[DEVICE_FREE] + (machine + 1) * slots]
        for d in range(1, slots):  # (from the least free up: a few devices, an insertion sort)
            value, at = ordered[d], d
            while at > 0 and ordered[at - 1] > value:
                ordered[at] = ordered[at - 1]
                at -= 1
            ordered[at] = value
        empty, room, whole, percent = True, 0, 0, 0
        for d in range(slots):
            if ordered[d] != DEVICE_MILLI and ordered[d] >= 0:
                empty = False
            if ordered[d] >= milli:
                room += 1
                if room <= count:  # a device the task would use, scanning from the least free up
                    if ordered[d] == DEVICE_MILLI:
                        whole += 1
                    percent += max(ordered[d], 0) * 100 // DEVICE_MILLI
        if empty:
            return max(33 - held, held)
        return max(50 - whole, 33) if whole > 0 else max(100 - percent // 10, 50)
    # gpu-clustering: machines running GPU tasks of the task's kind only, then of its kind among others, then none
    users = ints[DEVICE_USERS] + machine * (slots + 1)
    kind = 0 if milli < DEVICE_MILLI else count
    total = 0
    for k in range(slots + 1):
        total += ints[users + k]
    mine, others = ints[users + kind] > 0, total - ints[users + kind] > 0
    bonus = 75 if mine and not others else 50 if mine else 25 if not others else 0
    return 25 * (GPU_SCALE - idle) // GPU_SCALE + bonus


# ----------------------------------------------------------------------------------- EASY backfilling
@numba.njit(cache=True)
def _wait_less(ints, floats, task, count):
    """``count`` fewer instances of the task wait (negative: more); a task with none left leaves the waiting
    set and the min-demand tree, one with some again rejoins them."""
    n_tasks, resources, leaves = ints[TASKS], ints[RESOURCES], ints[TASK_LEAVES]
    waiting = _ints(ints, WAITING, n_tasks)
    was = waiting[task]
    waiting[task] -= count
    ints[WAITING_INSTANCES] -= count
    tree = _floats(ints, floats, MIN_DEMAND, 2 * leaves * resources).reshape(2 * leaves, resources)
    if was > 0 and waiting[task] == 0:
        ints[WAITING_TASKS] -= 1
        _set_leaf(tree, leaves, task, np.full(resources, np.inf), False)
    elif was == 0 and waiting[task] > 0:
        ints[WAITING_TASKS] += 1
        _set_leaf(tree, leaves, task, _floats(ints, floats, DEMAND, n_tasks * resources).reshape(
            n_tasks, resources)[task], False)


@numba.njit(cache=True)
def _free_profile(ints, floats, group_ints, group_floats, machine, now, plan, plan_at, planned, rows, row_count,
                  kept_row, kept_instances, booked):
    """The machine's free resources as a step function of time from now (`cloudsim.engine.kernels.step_profile`), from
    the changes `cloudsim.engine.reservations.Timeline` lists in its order: the round's plan so far on the machine
    (``plan`` rows (machine, task, count) and ``plan_at``, ``planned`` of them: a start now gives its
    instances back at its end, a reservation holds them from its start to its end), the machine's running
    groups in the order they were made (their rows, ``rows``; group ``kept_row`` as it was when the plan
    began, ``kept_instances``), and the pending reservation (``booked``: when the plan did not make it)."""
    n_tasks, machines, resources, tick = ints[TASKS], ints[MACHINES], ints[RESOURCES], floats[TICK]
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    duration = _floats(ints, floats, DURATION, n_tasks)
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    changes = row_count + 2 * int(booked)
    for i in range(planned):
        if plan[i, 0] == machine:
            changes += 2 if plan_at[i] > now else 1
    when = np.empty(changes)
    delta = np.empty((changes, resources))
    k = 0
    for i in range(planned):
        if plan[i, 0] != machine:
            continue
        task, count, start = plan[i, 1], plan[i, 2], plan_at[i]
        if start > now:
            when[k] = start
            for r in range(resources):
                delta[k, r] = -(demand[task, r] * count)
            k += 1
        when[k] = _released(start, start + duration[task], tick)
        for r in range(resources):
            delta[k, r] = demand[task, r] * count
        k += 1
    for i in range(row_count):
        row = rows[i]
        task = group_ints[row, G_TASK]
        instances = kept_instances if row == kept_row else group_ints[row, G_INSTANCES]
        when[k] = _released(group_floats[row, G_START], group_floats[row, G_START] + group_floats[row, G_DURATION],
                            tick)
        for r in range(resources):
            delta[k, r] = demand[task, r] * instances
        k += 1
    if booked:
        task = ints[RES_TASK]
        when[k], when[k + 1] = floats[RES_START], _released(floats[RES_START], floats[RES_END], tick)
        for r in range(resources):
            delta[k, r] = -(demand[task, r] * 1)
            delta[k + 1, r] = demand[task, r] * 1
    return step_profile(now, free[machine].copy(), when, delta)


@numba.njit(cache=True)
def _first_running_row(ints, group_floats, stop):
    """The first group row, before row ``stop``, that may still run (kept in RUNNING_FROM: rows before it have
    all ended)."""
    start = ints[RUNNING_FROM]
    while start < stop and not math.isnan(group_floats[start, G_END]):
        start += 1
    ints[RUNNING_FROM] = start
    return start


@numba.njit(cache=True)
def _running_rows(ints, group_ints, group_floats, stop):
    """The running groups' rows before row ``stop``, bucketed by machine in the order they were made: (rows,
    each machine's first position in them, with one past the last machine's end)."""
    machines = ints[MACHINES]
    start = _first_running_row(ints, group_floats, stop)
    first = np.zeros(machines + 1, dtype=np.int64)
    for row in range(start, stop):
        if math.isnan(group_floats[row, G_END]):
            first[group_ints[row, G_MACHINE] + 1] += 1
    for m in range(machines):
        first[m + 1] += first[m]
    at = first[:machines].copy()
    rows = np.empty(first[machines], dtype=np.int64)
    for row in range(start, stop):
        if math.isnan(group_floats[row, G_END]):
            m = group_ints[row, G_MACHINE]
            rows[at[m]] = row
            at[m] += 1
    return rows, first


@numba.njit(cache=True)
def _easy_round(ints, floats, group_ints, group_floats, now):
    """EASY backfilling's round (`agents.heuristics.EasyBackfilling`), as its plan of one decision at a time
    and the engine applying it: a reservation due now starts first (when its machine still holds it, with
    `cloudsim.engine.reservations.FIT_TOLERANCE`'s slack; else it is cancelled and its instance waits again). Then,
    while no reservation is pending, the first waiting task in arrival order (the head) starts on the first
    machine that fits it, as many instances as fit there; where none fits, one of its instances reserves its
    earliest start over the machines (the first machine on ties), from each machine's free profile
    (`_free_profile`; `cloudsim.engine.kernels.earliest_fit`). While one is pending, one instance at a time of the
    first waiting task, in arrival order, that fits some machine now starts on the first such machine, the
    reserved machine only where it fits its free profile for its whole duration. Records the groups and
    orders them by end time; returns the decisions made, or NO_ROOM as `_first_fit_round` does. The
    reservation made or started is left in the header for `CompiledState.reservation_news`."""
    if group_ints.shape[0] - ints[GROUPS] < ints[WAITING_INSTANCES] + 1:  # (one group per instance at most)
        ints[NEED_GROUPS] = ints[WAITING_INSTANCES] + 1
        return NO_ROOM
    n_tasks, machines, resources = ints[TASKS], ints[MACHINES], ints[RESOURCES]
    task_leaves, machine_leaves = ints[TASK_LEAVES], ints[MACHINE_LEAVES]
    stack = _ints(ints, STACK, STACK_SIZE)
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    capacity = _floats(ints, floats, CAPACITY, machines * resources).reshape(machines, resources)
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    duration = _floats(ints, floats, DURATION, n_tasks)
    min_demand = _floats(ints, floats, MIN_DEMAND, 2 * task_leaves * resources).reshape(2 * task_leaves, resources)
    max_free = _floats(ints, floats, MAX_FREE, 2 * machine_leaves * resources).reshape(2 * machine_leaves,
                                                                                         resources)
    any_demand = np.full(resources, np.finfo(np.float64).max)  # every waiting task's demand is at most this
    _begin_round(ints, floats)
    first_group, first_decision = ints[GROUPS], ints[DECISIONS]
    ints[RES_NEWS] = 0
    kept_row, kept_instances = -1, 0
    if _reservation_due(ints, floats, now):
        ints[RES_PENDING] = 0
        machine, task = ints[RES_MACHINE], ints[RES_TASK]
        holds = True
        for r in range(resources):
            if not free[machine, r] + FIT_TOLERANCE * capacity[machine, r] >= demand[task, r] * 1:
                holds = False
        if holds:
            _start_count(ints, floats, group_ints, group_floats, task, machine, 1, now, True)
            kept_row = _ints(ints, LAST_GROUP, machines)[machine]
            kept_instances = group_ints[kept_row, G_INSTANCES]
            _machine_changed(ints, floats, machine)
            ints[RES_NEWS] = RESERVATION_STARTED
        else:
            _wait_less(ints, floats, task, -1)
            ints[RES_NEWS] = RESERVATION_CANCELLED
    plan_first = ints[GROUPS]
    plan = np.empty((ints[WAITING_INSTANCES] + 1, 3), dtype=np.int64)  # (machine, task, count) per decision
    plan_at = np.empty(len(plan))
    planned = 0
    reserved_in_plan = False
    profile_made, times, profile = False, np.empty(0), np.empty((0, resources))  # (the reserved machine's)
    while ints[WAITING_INSTANCES] > 0:
        if not ints[RES_PENDING]:  # the head now, or its reservation
            head = _first_leaf(min_demand, task_leaves, any_demand, 0, False, stack)
            machine = _first_leaf(max_free, machine_leaves, demand[head], 0, True, stack)
            if machine >= 0:
                count = _start_count(ints, floats, group_ints, group_floats, head, machine, 0, now, False)
                plan[planned, 0], plan[planned, 1], plan[planned, 2], plan_at[planned] = machine, head, count, now
                planned += 1
                ints[DECISIONS] += 1
                _machine_changed(ints, floats, machine)
                continue
            rows, first = _running_rows(ints, group_ints, group_floats, plan_first)
            best, best_at = -1, math.inf
            for m in range(machines):
                times, profile = _free_profile(ints, floats, group_ints, group_floats, m, now, plan, plan_at, planned,
                                               rows[first[m]:first[m + 1]], first[m + 1] - first[m], kept_row,
                                               kept_instances, False)
                at = earliest_fit(times, profile, demand[head] * 1, duration[head], now, floats[TICK], TICKS_SLACK)
                if at < best_at:
                    best, best_at = m, at
            if best < 0:
                break  # no machine can ever hold it
            ints[RES_PENDING], ints[RES_MACHINE], ints[RES_TASK] = 1, best, head
            floats[RES_START], floats[RES_END] = best_at, best_at + duration[head]
            _wait_less(ints, floats, head, 1)
            plan[planned, 0], plan[planned, 1], plan[planned, 2], plan_at[planned] = best, head, 1, best_at
            planned += 1
            ints[DECISIONS] += 1
            ints[RES_NEWS] += RESERVATION_MADE
            reserved_in_plan = True
            continue
        # backfilling: the first waiting task, in arrival order, that fits some machine now, on the first
        # machine it fits: any but the reserved one, and that one where it fits around the reservation (its
        # profile is the same for every task: made once, and again after a start there)
        reserved = ints[RES_MACHINE]
        chosen_task, chosen_machine = -1, -1
        most = max_free[1]  # (the most free of each resource on any machine: a task needing more fits none)
        task = _first_leaf(min_demand, task_leaves, most, 0, False, stack)
        while task >= 0 and chosen_task < 0:
            machine = _first_leaf(max_free, machine_leaves, demand[task], 0, True, stack)
            while machine >= 0:
                if machine == reserved and not profile_made:
                    rows = _machine_rows(ints, group_ints, group_floats, reserved, plan_first)
                    times, profile = _free_profile(ints, floats, group_ints, group_floats, reserved, now, plan,
                                                   plan_at, planned, rows, len(rows), kept_row, kept_instances,
                                                   not reserved_in_plan)
                    profile_made = True
                if machine != reserved or _fits_profile(times, profile, demand[task], now,
                                                        _released(now, now + duration[task], floats[TICK])):
                    chosen_task, chosen_machine = task, machine
                    break
                machine = _first_leaf(max_free, machine_leaves, demand[task], machine + 1, True, stack)
            task = _first_leaf(min_demand, task_leaves, most, task + 1, False, stack)
        if chosen_task < 0:
            break
        if chosen_machine == reserved:
            profile_made = False
        _start_count(ints, floats, group_ints, group_floats, chosen_task, chosen_machine, 1, now, False)
        plan[planned, 0], plan[planned, 1], plan[planned, 2] = chosen_machine, chosen_task, 1
        plan_at[planned] = now
        planned += 1
        ints[DECISIONS] += 1
        _machine_changed(ints, floats, chosen_machine)
    _order_ends(ints, floats, group_ints, group_floats, first_group, ints[GROUPS], now)
    ints[ROUND_FIRST] = first_group
    return ints[DECISIONS] - first_decision


@numba.njit(cache=True)
def _fits_profile(times, profile, need, now, end):
    """Whether ``need`` (one instance's demand), held from now until ``end`` (when it is released), fits the
    free profile ``(times, profile)``: every step that meets [now, end) holds it (the step holding now, for
    an instance released at once), as `cloudsim.engine.reservations.Timeline.fits` tests it."""
    for k in range(len(times)):
        after = times[k + 1] if k + 1 < len(times) else math.inf
        if after > now and (times[k] < end if end > now else times[k] <= now):
            for r in range(len(need)):
                if not profile[k, r] >= need[r] * 1:
                    return False
    return True


@numba.njit(cache=True)
def _machine_rows(ints, group_ints, group_floats, machine, stop):
    """The rows of the machine's running groups before row ``stop``, in the order they were made."""
    start = _first_running_row(ints, group_floats, stop)
    count = 0
    for row in range(start, stop):
        if group_ints[row, G_MACHINE] == machine and math.isnan(group_floats[row, G_END]):
            count += 1
    rows = np.empty(count, dtype=np.int64)
    count = 0
    for row in range(start, stop):
        if group_ints[row, G_MACHINE] == machine and math.isnan(group_floats[row, G_END]):
            rows[count] = row
            count += 1
    return rows


@numba.njit(cache=True)
def _easy_event(ints, floats, group_ints, group_floats, kind, a, b, now, may_round):
    """`_first_fit_event` with EASY backfilling's round."""
    jobs, next_step = _happen(ints, floats, group_ints, group_floats, kind, a, b, now, may_round)
    if next_step != ROUND_NOW:
        return jobs, next_step, 0, 0.0, 0, 0
    return _outcome(ints, group_ints, group_floats, jobs, _easy_round(ints, floats, group_ints, group_floats, now))


@numba.njit(cache=True)
def _first_fit_round(ints, floats, group_ints, group_floats, now):
    """First-fit's round now: machine by machine in order, every waiting task in arrival order that fits
    what the machine has left, with as many of its waiting instances as fit (`agents.heuristics.FirstFit`).
    Records the groups (one per decision) and orders them by end time (`_order_ends`); returns the decisions
    made, or NO_ROOM (nothing done) when the group rows could not hold one per possible decision (at most one
    per waiting instance, and per waiting task and machine)."""
    if _no_room(ints, group_ints, min(ints[WAITING_INSTANCES], ints[WAITING_TASKS] * ints[MACHINES])):
        return NO_ROOM
    n_tasks, machines, resources = ints[TASKS], ints[MACHINES], ints[RESOURCES]
    machine_leaves, task_leaves = ints[MACHINE_LEAVES], ints[TASK_LEAVES]
    waiting = _ints(ints, WAITING, n_tasks)
    is_dirty = _ints(ints, IS_DIRTY, machines)
    dirty = _ints(ints, DIRTY_LIST, machines)
    new = _ints(ints, NEW_LIST, n_tasks)
    heap = _ints(ints, HEAP, machines + n_tasks)
    stack = _ints(ints, STACK, STACK_SIZE)
    mark = _ints(ints, MARK, n_tasks)
    touched = _ints(ints, TOUCHED, n_tasks)
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    max_free = _floats(ints, floats, MAX_FREE, 2 * machine_leaves * resources).reshape(2 * machine_leaves, resources)
    min_demand = _floats(ints, floats, MIN_DEMAND, 2 * task_leaves * resources).reshape(2 * task_leaves, resources)
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
        machine = _first_machine(ints, max_free, machine_leaves, demand[task], task, 0, stack)
        if machine >= 0:
            size = _heap_push(heap, size, machine * key_base + task + 1)
    ints[NEW] = 0
    ints[ROUND_STAMP] += 1
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
        task = _first_task(ints, min_demand, task_leaves, left, machine, 0, stack)
        while task >= 0:
            _start_what_fits(ints, floats, group_ints, group_floats, task, machine, now)
            if mark[task] != visit:
                mark[task] = visit
                touched[n_touched] = task
                n_touched += 1
            task = _first_task(ints, min_demand, task_leaves, left, machine, task + 1, stack)
        _set_leaf(max_free, machine_leaves, machine, left, True)
        # Machines before the next one to visit fit none of these tasks, and keep their free resources until
        # they are visited: each task still waiting is next due at the first later machine that fits it.
        for i in range(n_touched):
            task = touched[i]
            if waiting[task] > 0:
                later = _first_machine(ints, max_free, machine_leaves, demand[task], task, machine + 1, stack)
                if later >= 0:
                    size = _heap_push(heap, size, later * key_base + task + 1)
    _order_ends(ints, floats, group_ints, group_floats, first_group, ints[GROUPS], now)
    ints[ROUND_FIRST] = first_group
    ints[DECISIONS] += ints[GROUPS] - first_group
    return ints[GROUPS] - first_group


@numba.njit(cache=True)
def _order_ends(ints, floats, group_ints, group_floats, first, stop, now):
    """The round's groups ``first..stop-1`` by end time (now + duration), as `cloudsim.engine.record.by_end_time`
    orders them: the groups of each distinct end time in launch order, the end times in the order of their
    first group; written to the launch column, the s-th end time beginning at launched row
    ``group_ints[first + s, G_END_TIME]``. A round of up to ORDER_FROM groups looks each end time up among
    those found so far; a longer one sorts them (stably: each end time's groups stay in launch order)."""
    n = stop - first
    keys = np.empty(n)
    for k in range(n):
        keys[k] = now + group_floats[first + k, G_DURATION]
    which = np.empty(n, dtype=np.int64)  # each group's end time, numbered in the order of first appearance
    sizes = np.zeros(n, dtype=np.int64)
    count = 0
    if n <= ORDER_FROM:
        found = np.empty(n)
        for k in range(n):
            e = 0
            while e < count and found[e] != keys[k]:
                e += 1
            if e == count:
                found[count] = keys[k]
                count += 1
            which[k] = e
            sizes[e] += 1
    else:
        by_time = np.argsort(keys, kind="mergesort")
        first_of = np.empty(n, dtype=np.int64)  # per end time in time order, its first group
        time_rank = np.empty(n, dtype=np.int64)  # per group, its end time's rank in time order
        for i in range(n):
            k = by_time[i]
            if i == 0 or keys[k] != keys[by_time[i - 1]]:
                first_of[count] = k
                count += 1
            time_rank[k] = count - 1
        appearance = np.empty(count, dtype=np.int64)  # per end time in time order, its rank by first group
        appearance[np.argsort(first_of[:count])] = np.arange(count)
        for k in range(n):
            which[k] = appearance[time_rank[k]]
            sizes[which[k]] += 1
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


# ------------------------------------------------------------------------------- a pair score's round
@numba.njit(cache=True)
def _pair_buffers(states, slots, width, columns, scaled):
    """A pair score's buffers with room for ``states`` states and ``slots`` waiting tasks, none in use: the
    int buffer (the header, then each state's members, lowest machine, best task slot and the spare states,
    the hash table of the states, each slot's task, the free slots, the scored ``columns`` and how many states
    each slot's task fits) and the float buffer (its scalars, then each state's key of ``width`` numbers, its
    best score and its best alignment, each slot's shortness, each state's score per slot). ``scaled``: the
    scores are Tetris*'s (its knob is set by the caller)."""
    table = 1
    while table < 2 * states:
        table *= 2
    sizes = np.array([states, states, states, states, table, slots, slots, len(columns), slots])
    pair_ints = np.zeros(PAIR_HEADER + sizes.sum(), dtype=np.int64)
    at = PAIR_HEADER
    for k in range(len(sizes)):
        pair_ints[P_MEMBERS + k] = at
        at += sizes[k]
    pair_ints[P_STATES], pair_ints[P_SLOTS], pair_ints[P_WIDTH] = states, slots, width
    pair_ints[P_HASH_SIZE], pair_ints[P_COLUMNS], pair_ints[P_SCALED] = table, len(columns), scaled
    pair_ints[pair_ints[P_BEST]:pair_ints[P_BEST] + states] = -1
    pair_ints[pair_ints[P_HASH]:pair_ints[P_HASH] + table] = -1
    pair_ints[pair_ints[P_SLOT_TASK]:pair_ints[P_SLOT_TASK] + slots] = -1
    pair_ints[pair_ints[P_COLUMN_LIST]:pair_ints[P_COLUMN_LIST] + len(columns)] = columns
    at = PAIR_FLOAT_HEADER
    for region, size in ((P_KEYS, states * width), (P_BEST_SCORE, states), (P_BEST_ALIGNMENT, states),
                         (P_SHORTNESS, slots), (P_SCORES, states * slots)):
        pair_ints[region] = at
        at += size
    pair_floats = np.full(at, NO_FIT)
    # (no maxima yet: the first round scales every state's scores)
    pair_floats[P_KNOB], pair_floats[P_TOP_ALIGNMENT], pair_floats[P_TOP_SHORTNESS] = 0.0, np.nan, np.nan
    return pair_ints, pair_floats


@numba.njit(cache=True)
def _grown_pairs(pair_ints, pair_floats, states, slots):
    """The pair score's buffers with room for ``states`` states and ``slots`` slots, holding what they held."""
    old_states, old_slots, width = pair_ints[P_STATES], pair_ints[P_SLOTS], pair_ints[P_WIDTH]
    columns = _ints(pair_ints, P_COLUMN_LIST, pair_ints[P_COLUMNS])
    new_ints, new_floats = _pair_buffers(states, slots, width, columns, pair_ints[P_SCALED])
    for slot in (P_HIGH, P_SPARES, P_SLOT_HIGH, P_FREE_SLOTS):
        new_ints[slot] = pair_ints[slot]
    new_floats[:PAIR_FLOAT_HEADER] = pair_floats[:PAIR_FLOAT_HEADER]
    for region in (P_MEMBERS, P_FIRST, P_BEST, P_SPARE):
        _ints(new_ints, region, old_states)[:] = _ints(pair_ints, region, old_states)
    for region in (P_SLOT_TASK, P_FREE_SLOT, P_SLOT_FITS):
        _ints(new_ints, region, old_slots)[:] = _ints(pair_ints, region, old_slots)
    _floats(new_ints, new_floats, P_KEYS, old_states * width)[:] = _floats(pair_ints, pair_floats, P_KEYS,
                                                                           old_states * width)
    for region, size in ((P_BEST_SCORE, old_states), (P_BEST_ALIGNMENT, old_states), (P_SHORTNESS, old_slots)):
        _floats(new_ints, new_floats, region, size)[:] = _floats(pair_ints, pair_floats, region, size)
    old = _floats(pair_ints, pair_floats, P_SCORES, old_states * old_slots).reshape(old_states, old_slots)
    new = _floats(new_ints, new_floats, P_SCORES, states * slots).reshape(states, slots)
    new[:old_states, :old_slots] = old
    members = _ints(new_ints, P_MEMBERS, states)
    keys = _floats(new_ints, new_floats, P_KEYS, states * width).reshape(states, width)
    for s in range(new_ints[P_HIGH]):
        if members[s] > 0:
            _hash_insert(new_ints, keys, s)
    return new_ints, new_floats


@numba.njit(cache=True)
def _row_hash(row):
    h = 17
    for x in row:
        h = h * 1000003 + hash(x)  # (int64 arithmetic wraps)
    return h


@numba.njit(cache=True)
def _machine_key(free, capacity, machine, key):
    """``key`` becomes the machine's key: its free resources, then (a key twice as wide) its capacity."""
    resources = free.shape[1]
    for r in range(resources):
        key[r] = free[machine, r]
    if key.shape[0] > resources:
        for r in range(resources):
            key[resources + r] = capacity[machine, r]


@numba.njit(cache=True)
def _hash_insert(pair_ints, keys, s):
    table = _ints(pair_ints, P_HASH, pair_ints[P_HASH_SIZE])
    mask = len(table) - 1
    i = _row_hash(keys[s]) & mask
    while table[i] != -1:
        i = (i + 1) & mask
    table[i] = s


@numba.njit(cache=True)
def _hash_remove(pair_ints, keys, s):
    """State ``s`` leaves the hash table (linear probing; the entries after it shift back to stay reachable)."""
    table = _ints(pair_ints, P_HASH, pair_ints[P_HASH_SIZE])
    mask = len(table) - 1
    i = _row_hash(keys[s]) & mask
    while table[i] != s:
        i = (i + 1) & mask
    j = i
    while True:
        j = (j + 1) & mask
        if table[j] == -1:
            break
        home = _row_hash(keys[table[j]]) & mask
        if (i < j and i < home <= j) or (i > j and (home > i or home <= j)):
            continue  # its home lies after the hole: it stays
        table[i] = table[j]
        i = j
    table[i] = -1


@numba.njit(cache=True)
def _find_state(pair_ints, keys, key):
    """The state whose key is ``key`` (compared with ==), or -1."""
    table = _ints(pair_ints, P_HASH, pair_ints[P_HASH_SIZE])
    mask = len(table) - 1
    i = _row_hash(key) & mask
    while table[i] != -1:
        s = table[i]
        same = True
        for c in range(len(key)):
            if keys[s, c] != key[c]:
                same = False
                break
        if same:
            return s
        i = (i + 1) & mask
    return -1


@numba.njit(cache=True)
def _fitness(ints, floats, keys, s, t, columns):
    """The network's output on the pair (state ``s``, task ``t``)'s features: the state's free resources in
    the two ``columns`` (cpu, memory), the task's demand of both, its duration and its waiting instances,
    each as (x - mean) / std; the layers as `cloudsim.engine.kernels.mlp` computes them (the same sums in the same
    order, tanh between layers), so the same bits as `agents.deepjs.NumpyFitness`."""
    n_tasks, resources = ints[TASKS], ints[RESOURCES]
    net = floats[ints[NETWORK]:]
    layers, scratch, width = int(net[0]), int(net[1]), int(net[2])
    h, g = net[scratch:scratch + width], net[scratch + width:scratch + 2 * width]
    at = 3 + 2 * layers
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    raw = (keys[s, columns[0]], keys[s, columns[1]], demand[t, columns[0]], demand[t, columns[1]],
           _floats(ints, floats, DURATION, n_tasks)[t], float(_ints(ints, WAITING, n_tasks)[t]))
    for k in range(6):
        h[k] = (raw[k] - net[at + k]) / net[at + 6 + k]
    at += 12
    n = 6
    for layer in range(layers):
        m = int(net[4 + 2 * layer])
        bias = at + n * m
        for j in range(m):  # output j's sum in input order, from 0.0, then its bias (as mlp's)
            total = 0.0
            for k in range(n):
                total += h[k] * net[at + k * m + j]
            v = total + net[bias + j]
            g[j] = tanh1(v) if layer < layers - 1 else v
        at = bias + m
        n = m
        h, g = g, h
    if h[0] != h[0]:
        ints[SCORE_NAN] = 1
    return h[0]


@numba.njit(cache=True)
def _pair_score(ints, floats, keys, s, t, columns):
    """The score of (state ``s``, task ``t``), NO_FIT where the task's demand exceeds the state's free
    resources: Tetris's sum over ``columns`` of free x demand, Packer's of the shares of capacity (0 for a
    resource the machine lacks; Tetris*'s alignment, before it is scaled: `_ranked`), summed as
    `agents.kernels.state_round` sums them, or DeepJS's `_fitness`."""
    n_tasks, resources = ints[TASKS], ints[RESOURCES]
    demand = _floats(ints, floats, DEMAND, n_tasks * resources).reshape(n_tasks, resources)
    for r in range(resources):
        if demand[t, r] > keys[s, r]:
            return NO_FIT
    if ints[RULE] == FITNESS:
        return _fitness(ints, floats, keys, s, t, columns)
    return pair_score(keys, s, demand, t, columns, ints[RULE] == SHARES or ints[RULE] == TETRIS_STAR)


@numba.njit(cache=True, inline="always")
def _better(score, task, best_score, best_task):
    """Whether a pair of ``score`` for ``task`` ranks before the best so far (the earliest task on ties)."""
    return best_task < 0 or score > best_score or (score == best_score and task < best_task)


@numba.njit(cache=True, inline="always")
def _scaled(value, top):
    """``value / top``, ``top`` being the maximum of such values; an infinite value as 1 and the rest as 0 when
    it is infinite, 0 when it is not above 0 (`agents.heuristics.classic._scaled`, for one value)."""
    if math.isinf(top):
        return 1.0 if math.isinf(value) else 0.0
    return value / top if top > 0 else 0.0


@numba.njit(cache=True, inline="always")
def _ranked(pair_floats, score, shortness):
    """Tetris*'s score of a pair, from its alignment ``score`` and its task's ``shortness``: knob x scaled
    alignment + (1 - knob) x scaled shortness, each scaled by its maximum over every fit pair (those the
    float header holds), as `agents.heuristics.TetrisStar.combine` computes it (the same operations in the
    same order)."""
    knob = pair_floats[P_KNOB]
    return knob * _scaled(score, pair_floats[P_TOP_ALIGNMENT]) + (1.0 - knob) * _scaled(
        shortness, pair_floats[P_TOP_SHORTNESS])


@numba.njit(cache=True)
def _rescan(pair_ints, pair_floats, s):
    """State ``s``'s best slot and score, from its scores (Tetris*'s: scaled, and its best alignment too)."""
    slots, scaled = pair_ints[P_SLOTS], pair_ints[P_SCALED]
    slot_task = _ints(pair_ints, P_SLOT_TASK, slots)
    shortness = _floats(pair_ints, pair_floats, P_SHORTNESS, slots)
    scores = _floats(pair_ints, pair_floats, P_SCORES, pair_ints[P_STATES] * slots)[s * slots:(s + 1) * slots]
    best, best_score, best_task, top = -1, NO_FIT, -1, NO_FIT
    for slot in range(pair_ints[P_SLOT_HIGH]):
        score = scores[slot]
        if score == NO_FIT:
            continue
        if scaled:
            top = max(top, score)
            score = _ranked(pair_floats, score, shortness[slot])
        if _better(score, slot_task[slot], best_score, best_task):
            best, best_score, best_task = slot, score, slot_task[slot]
    _ints(pair_ints, P_BEST, pair_ints[P_STATES])[s] = best
    _floats(pair_ints, pair_floats, P_BEST_SCORE, pair_ints[P_STATES])[s] = best_score
    _floats(pair_ints, pair_floats, P_BEST_ALIGNMENT, pair_ints[P_STATES])[s] = top


@numba.njit(cache=True)
def _take(pair_ints, count, free_list, high):
    """A state or task slot to use: the last given back (``count`` of them in region ``free_list``), else the
    next never used (header slot ``high``)."""
    if pair_ints[count]:
        pair_ints[count] -= 1
        return pair_ints[pair_ints[free_list] + pair_ints[count]]
    pair_ints[high] += 1
    return pair_ints[high] - 1


@numba.njit(cache=True)
def _enter(ints, floats, pair_ints, pair_floats, machine, key):
    """The machine joins the state of its key (made, and scored over the waiting tasks, if none has it)."""
    states, slots, width = pair_ints[P_STATES], pair_ints[P_SLOTS], pair_ints[P_WIDTH]
    keys = _floats(pair_ints, pair_floats, P_KEYS, states * width).reshape(states, width)
    members = _ints(pair_ints, P_MEMBERS, states)
    first = _ints(pair_ints, P_FIRST, states)
    s = _find_state(pair_ints, keys, key)
    if s < 0:
        s = _take(pair_ints, P_SPARES, P_SPARE, P_HIGH)
        keys[s, :] = key
        _hash_insert(pair_ints, keys, s)
        members[s], first[s] = 0, machine
        columns = _ints(pair_ints, P_COLUMN_LIST, pair_ints[P_COLUMNS])
        slot_task = _ints(pair_ints, P_SLOT_TASK, slots)
        scores = _floats(pair_ints, pair_floats, P_SCORES, states * slots)[s * slots:(s + 1) * slots]
        slot_fits = _ints(pair_ints, P_SLOT_FITS, slots)
        for slot in range(pair_ints[P_SLOT_HIGH]):
            t = slot_task[slot]
            scores[slot] = _pair_score(ints, floats, keys, s, t, columns) if t >= 0 else NO_FIT
            if scores[slot] != NO_FIT and pair_ints[P_SCALED]:
                slot_fits[slot] += 1
        _rescan(pair_ints, pair_floats, s)
    _ints(ints, STATE_OF, ints[MACHINES])[machine] = s
    members[s] += 1
    if machine < first[s]:
        first[s] = machine


@numba.njit(cache=True)
def _leave(ints, pair_ints, pair_floats, machine):
    """The machine leaves its state; a state left without machines is spare (out of the hash table)."""
    state_of = _ints(ints, STATE_OF, ints[MACHINES])
    s = state_of[machine]
    if s < 0:
        return
    states, width = pair_ints[P_STATES], pair_ints[P_WIDTH]
    members = _ints(pair_ints, P_MEMBERS, states)
    first = _ints(pair_ints, P_FIRST, states)
    members[s] -= 1
    if members[s] == 0:
        keys = _floats(pair_ints, pair_floats, P_KEYS, states * width).reshape(states, width)
        _hash_remove(pair_ints, keys, s)
        if pair_ints[P_SCALED]:  # (the tasks that fit it fit one state fewer)
            slots = pair_ints[P_SLOTS]
            scores = _floats(pair_ints, pair_floats, P_SCORES, states * slots)[s * slots:(s + 1) * slots]
            slot_fits = _ints(pair_ints, P_SLOT_FITS, slots)
            for slot in range(pair_ints[P_SLOT_HIGH]):
                if scores[slot] != NO_FIT:
                    slot_fits[slot] -= 1
        _ints(pair_ints, P_SPARE, states)[pair_ints[P_SPARES]] = s
        pair_ints[P_SPARES] += 1
    elif first[s] == machine:
        n = machine + 1
        while state_of[n] != s:
            n += 1
        first[s] = n
    state_of[machine] = -1


@numba.njit(cache=True)
def _state_views(pair_ints, pair_floats):
    """The pair buffers' views of the states and slots: each state's key (states x width), machines, best slot
    and best score, each slot's task, the scores (states x slots), and the scored columns."""
    states, slots, width = pair_ints[P_STATES], pair_ints[P_SLOTS], pair_ints[P_WIDTH]
    return (_floats(pair_ints, pair_floats, P_KEYS, states * width).reshape(states, width),
            _ints(pair_ints, P_MEMBERS, states), _ints(pair_ints, P_BEST, states),
            _floats(pair_ints, pair_floats, P_BEST_SCORE, states), _ints(pair_ints, P_SLOT_TASK, slots),
            _floats(pair_ints, pair_floats, P_SCORES, states * slots).reshape(states, slots),
            _ints(pair_ints, P_COLUMN_LIST, pair_ints[P_COLUMNS]))


@numba.njit(cache=True)
def _add_task(ints, floats, pair_ints, pair_floats, task):
    """A task that became ready takes a slot and is scored over the states."""
    n_tasks = ints[TASKS]
    slot = _take(pair_ints, P_FREE_SLOTS, P_FREE_SLOT, P_SLOT_HIGH)
    _ints(pair_ints, P_SLOT_TASK, pair_ints[P_SLOTS])[slot] = task
    _ints(ints, TASK_SLOT, n_tasks)[task] = slot
    keys, members, best, best_score, slot_task, scores, columns = _state_views(pair_ints, pair_floats)
    scaled, fits = pair_ints[P_SCALED], 0
    best_alignment = _floats(pair_ints, pair_floats, P_BEST_ALIGNMENT, pair_ints[P_STATES])
    # Tetris*'s shortness (a zero duration is infinitely short, as the broker's numpy division makes it)
    duration = _floats(ints, floats, DURATION, n_tasks)[task]
    shortness = 1.0 / duration if duration != 0 else math.copysign(math.inf, duration)
    _floats(pair_ints, pair_floats, P_SHORTNESS, pair_ints[P_SLOTS])[slot] = shortness
    for s in range(pair_ints[P_HIGH]):
        if members[s] == 0:
            continue
        score = _pair_score(ints, floats, keys, s, task, columns)
        scores[s, slot] = score
        if score == NO_FIT:
            continue
        if scaled:
            fits += 1
            best_alignment[s] = max(best_alignment[s], score)
            score = _ranked(pair_floats, score, shortness)
        if _better(score, task, best_score[s], slot_task[best[s]] if best[s] >= 0 else -1):
            best[s], best_score[s] = slot, score
    _ints(pair_ints, P_SLOT_FITS, pair_ints[P_SLOTS])[slot] = fits


@numba.njit(cache=True)
def _drop_task(ints, pair_ints, pair_floats, task):
    """A task with no instance left waiting gives its slot back; the states that ranked it first look again."""
    states, slots = pair_ints[P_STATES], pair_ints[P_SLOTS]
    task_slot = _ints(ints, TASK_SLOT, ints[TASKS])
    slot = task_slot[task]
    members = _ints(pair_ints, P_MEMBERS, states)
    best = _ints(pair_ints, P_BEST, states)
    scores = _floats(pair_ints, pair_floats, P_SCORES, states * slots).reshape(states, slots)
    best_alignment = _floats(pair_ints, pair_floats, P_BEST_ALIGNMENT, states)
    scaled = pair_ints[P_SCALED]
    _ints(pair_ints, P_SLOT_TASK, slots)[slot] = -1
    _ints(pair_ints, P_SLOT_FITS, slots)[slot] = 0
    for s in range(pair_ints[P_HIGH]):
        if members[s] == 0 or scores[s, slot] == NO_FIT:
            continue
        was = scores[s, slot]
        scores[s, slot] = NO_FIT
        if best[s] == slot or scaled and was == best_alignment[s]:
            _rescan(pair_ints, pair_floats, s)
    task_slot[task] = -1
    _ints(pair_ints, P_FREE_SLOT, slots)[pair_ints[P_FREE_SLOTS]] = slot
    pair_ints[P_FREE_SLOTS] += 1


@numba.njit(cache=True)
def _rescore(ints, floats, pair_ints, pair_floats, task):
    """DeepJS's score reads the task's waiting count, which a start changed: the task is scored again on every
    state it fits, and each state's best follows (a state whose best it was and whose score fell looks
    again)."""
    slot = _ints(ints, TASK_SLOT, ints[TASKS])[task]
    keys, members, best, best_score, slot_task, scores, columns = _state_views(pair_ints, pair_floats)
    for s in range(pair_ints[P_HIGH]):
        if members[s] == 0 or scores[s, slot] == NO_FIT:
            continue
        was = scores[s, slot]
        score = _fitness(ints, floats, keys, s, task, columns)
        scores[s, slot] = score
        if best[s] == slot:
            if score >= was:
                best_score[s] = score
            else:  # it fell (or is NaN): another task may lead now
                _rescan(pair_ints, pair_floats, s)
        elif _better(score, task, best_score[s], slot_task[best[s]] if best[s] >= 0 else -1):
            best[s], best_score[s] = slot, score


@numba.njit(cache=True)
def _scale(pair_ints, pair_floats):
    """Tetris*'s maxima over every fit pair now: the highest alignment (of the states' best) and the highest
    shortness of a task that fits some state. Where either moved, every state's best is found again."""
    states, slots = pair_ints[P_STATES], pair_ints[P_SLOTS]
    members = _ints(pair_ints, P_MEMBERS, states)
    best_alignment = _floats(pair_ints, pair_floats, P_BEST_ALIGNMENT, states)
    slot_fits = _ints(pair_ints, P_SLOT_FITS, slots)
    shortness = _floats(pair_ints, pair_floats, P_SHORTNESS, slots)
    top_alignment, top_shortness = NO_FIT, NO_FIT
    for s in range(pair_ints[P_HIGH]):
        if members[s] > 0:
            top_alignment = max(top_alignment, best_alignment[s])
    for slot in range(pair_ints[P_SLOT_HIGH]):
        if slot_fits[slot] > 0:
            top_shortness = max(top_shortness, shortness[slot])
    if top_alignment == pair_floats[P_TOP_ALIGNMENT] and top_shortness == pair_floats[P_TOP_SHORTNESS]:
        return
    pair_floats[P_TOP_ALIGNMENT], pair_floats[P_TOP_SHORTNESS] = top_alignment, top_shortness
    for s in range(pair_ints[P_HIGH]):
        if members[s] > 0:
            _rescan(pair_ints, pair_floats, s)


@numba.njit(cache=True)
def _room_for_a_state(pair_ints):
    return pair_ints[P_HIGH] < pair_ints[P_STATES] or pair_ints[P_SPARES] > 0


@numba.njit(cache=True)
def _pair_round(ints, floats, group_ints, group_floats, pair_ints, pair_floats, now):
    """A pair score's round now: one instance of the best fit pair at a time, until none fits. Records the
    groups (a start joins its machine's latest group of the round when that holds the task's instances just
    before it, as the engine groups a plan's starts) and orders them by end time (`_order_ends`); returns the
    decisions made, or NO_ROOM when it needs room for a task slot, a state or a group row first (it goes on
    from there when called again)."""
    n_tasks, machines, resources = ints[TASKS], ints[MACHINES], ints[RESOURCES]
    if not ints[IN_ROUND]:
        if pair_ints[P_SLOTS] < ints[WAITING_TASKS]:
            return NO_ROOM
        ints[IN_ROUND] = 1
        ints[ROUND_FIRST], ints[ROUND_DECISIONS] = ints[GROUPS], ints[DECISIONS]
        ints[ROUND_STAMP] += 1
        new = _ints(ints, NEW_LIST, n_tasks)
        for i in range(ints[NEW]):
            _add_task(ints, floats, pair_ints, pair_floats, new[i])
        ints[NEW] = 0
    free = _floats(ints, floats, FREE, machines * resources).reshape(machines, resources)
    capacity = _floats(ints, floats, CAPACITY, machines * resources).reshape(machines, resources)
    key = np.empty(pair_ints[P_WIDTH])
    is_dirty = _ints(ints, IS_DIRTY, machines)
    dirty = _ints(ints, DIRTY_LIST, machines)
    while ints[DIRTY]:  # the machines freed since the last round move to the states of their free resources
        if not _room_for_a_state(pair_ints):
            return NO_ROOM
        machine = dirty[ints[DIRTY] - 1]
        ints[DIRTY] -= 1
        is_dirty[machine] = 0
        _machine_key(free, capacity, machine, key)
        s = _ints(ints, STATE_OF, machines)[machine]
        if s >= 0:
            width = pair_ints[P_WIDTH]
            keys = _floats(pair_ints, pair_floats, P_KEYS, pair_ints[P_STATES] * width).reshape(-1, width)
            same = True
            for c in range(width):
                if keys[s, c] != key[c]:
                    same = False
                    break
            if same:
                continue
        _leave(ints, pair_ints, pair_floats, machine)
        _enter(ints, floats, pair_ints, pair_floats, machine, key)
    waiting = _ints(ints, WAITING, n_tasks)
    while True:
        if ints[SCORE_NAN]:
            ints[IN_ROUND] = 0
            return SCORED_NAN
        if pair_ints[P_SCALED]:
            _scale(pair_ints, pair_floats)
        states, slots = pair_ints[P_STATES], pair_ints[P_SLOTS]
        members = _ints(pair_ints, P_MEMBERS, states)
        first = _ints(pair_ints, P_FIRST, states)
        best = _ints(pair_ints, P_BEST, states)
        best_score = _floats(pair_ints, pair_floats, P_BEST_SCORE, states)
        chosen = -1
        for s in range(pair_ints[P_HIGH]):
            if members[s] == 0 or best[s] < 0:
                continue
            if chosen < 0 or best_score[s] > best_score[chosen] or (
                    best_score[s] == best_score[chosen] and first[s] < first[chosen]):
                chosen = s
        if chosen < 0:
            break
        if ints[GROUPS] == group_ints.shape[0]:
            ints[NEED_GROUPS] = 1
            return NO_ROOM
        if not _room_for_a_state(pair_ints):
            return NO_ROOM
        machine = first[chosen]
        task = _ints(pair_ints, P_SLOT_TASK, slots)[best[chosen]]
        _start_one(ints, floats, group_ints, group_floats, task, machine, now)
        _machine_key(free, capacity, machine, key)
        _leave(ints, pair_ints, pair_floats, machine)
        _enter(ints, floats, pair_ints, pair_floats, machine, key)
        if waiting[task] == 0:
            _drop_task(ints, pair_ints, pair_floats, task)
        elif ints[RULE] == FITNESS:
            _rescore(ints, floats, pair_ints, pair_floats, task)
    ints[IN_ROUND] = 0
    _order_ends(ints, floats, group_ints, group_floats, ints[ROUND_FIRST], ints[GROUPS], now)
    return ints[DECISIONS] - ints[ROUND_DECISIONS]
