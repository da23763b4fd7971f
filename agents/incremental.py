"""The best fit pair of an instant, kept up to date between decisions instead of scored anew.

A pair-scoring broker (Tetris, Packer, Tetris*, DeepJS) starts the fit (machine,
task) pair with the highest score, the first in machine-major order on ties.
Scoring every fit pair costs O(machines x tasks) per decision; yet between two
decisions little changes: the machines whose free resources or state changed
(the one the last decision started on, those where instances ended), the tasks
that joined or left the waiting set and, for scores that read a task's waiting
count, the tasks whose count changed. The view says which
(`ClusterView.machines_changed_since`, `tasks_version`, `tasks_changed_since`).

`BestPairs` keeps, per machine, its best few tasks in order (score, then
arrival). At each decision it rescores the rows of changed machines, drops the
tasks that left or changed from every row, scores only the new or changed tasks
on the other machines and merges them in, and picks the best machine in
O(machines). A row is rescored whole only when its machine changed or its kept
tasks ran out: when the task every machine ranked first has no waiting instance
left, the next is already there. That is O(machines + tasks) per decision when
one machine changed. The choice is the one scoring every pair gives, ties
included, because it is the same maximum taken in two steps: within each
machine's row (the first task on ties, as tasks are in arrival order) and then
across rows (the first machine on ties). Exactness needs each pair's score to be
computed from that pair alone (its machine's row, its task's column), the same
floats whatever other pairs are scored with it. A score normalised by maxima
over every fit pair (Tetris*) declares them as ``terms``: `BestPairs` keeps each
row's maxima too and rescores every row when a maximum moves. Idle machines of one capacity
have the same state, so they score a task alike: it is scored once for all of them.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from cloudsim.engine.broker import ClusterView, Decision

__all__ = ["BestPairs", "INCREMENTAL_FROM", "KEPT", "PairScorer", "best_decision", "keeps_best_pairs"]

KEPT = 8
"""How many best tasks each machine's row keeps: when they have all left, the row is rescored."""

INCREMENTAL_FROM = 500
"""Brokers keep best pairs on clusters of at least this many machines; on smaller ones scoring
every pair at every decision was faster (50 machines: 38 s against 52 s; 1,000: 29.8 against 18.8)."""

# Rows are rescored in blocks of about this many (machine, task) cells: bounded memory at any size.
_BLOCK_CELLS = 1 << 20
_NO_TASK = np.iinfo(np.int64).max  # sorts after every task


class PairScorer(Protocol):
    """What `BestPairs` needs from a broker.

    Attributes:
        scaled: False: ``score(view, machines, tasks)`` gives each pair's score from that pair
            alone. True: ``terms(view, machines, tasks)`` gives per-pair terms, shape (pairs, k),
            each from that pair alone, and ``combine(terms, top)`` the scores, ``top`` being the
            maximum of each term over every fit pair of the instant.
        reads_waiting: the score reads the task's waiting count (``view.waiting``).
    """

    scaled: bool
    reads_waiting: bool

    def score(self, view: ClusterView, machines: np.ndarray, tasks: np.ndarray) -> np.ndarray: ...


def keeps_best_pairs(broker, view: ClusterView) -> bool:
    """Whether ``broker`` decides from the best pairs it keeps: it may (``incremental``), the cluster is large
    enough (``incremental_from`` machines), and fits are resources only (no devices or machine attributes,
    which the kept rows do not follow)."""
    return broker.incremental and view.num_machines >= broker.incremental_from and not view.constrained


def best_decision(broker, view: ClusterView) -> Decision | None:
    """The broker's best pair now, from the `BestPairs` it keeps in ``broker.best_pairs`` (made on first use)."""
    if broker.best_pairs is None:
        broker.best_pairs = BestPairs(broker)
    best = broker.best_pairs.best(view)
    return None if best is None else Decision(*best)


class BestPairs:
    """Each machine's best fit tasks under a `PairScorer`, kept up to date between decisions.

    Call `best(view)` at each decision: it brings the rows up to date with what changed
    since the previous call (everything, for a new episode) and returns the best pair's
    (machine, task position in the view), or None when no pair fits. A NaN score raises
    `ValueError` (``np.argmax`` would pick the first NaN, an order this does not keep).
    """

    def __init__(self, scorer: PairScorer) -> None:
        from agents import kernels  # numba: loaded when a broker first keeps best pairs (500+ machines)

        self.kernels = kernels
        self.scorer = scorer
        self.episode: int | None = None

    # ------------------------------------------------------------------ the decision
    def best(self, view: ClusterView) -> tuple[int, int] | None:
        """The pair scoring every fit pair would pick: (machine, position of the task in ``view``)."""
        try:
            self._sync(view)
        except BaseException:
            self.episode = None  # half-updated (an error, Ctrl-C): start afresh next time
            raise
        # A row without kept tasks scores -inf: argmax finds the best row unless every score is -inf.
        machine = int(np.argmax(self.score[:, 0]))
        if self.kept[machine] == 0:
            candidates = np.flatnonzero(self.kept > 0)
            if len(candidates) == 0:
                return None
            machine = int(candidates[0])  # every fit pair scores -inf: the first, as argmax would pick
        return machine, int(np.searchsorted(view.task_index, self.task[machine, 0]))

    # ------------------------------------------------------------------ bringing rows up to date
    def _sync(self, view: ClusterView) -> None:
        if self.episode != view.episode:
            self._rebuild(view)
            return
        tasks = view.task_index
        stale = view.machines_changed_since(self.machine_changes)
        if view.tasks_version != self.tasks_version or len(tasks) != len(self.tasks):  # (a window may shrink)
            gone = self.tasks[~np.isin(self.tasks, tasks, assume_unique=True)]
            new = np.flatnonzero(~np.isin(tasks, self.tasks, assume_unique=True))
            self._remember_tasks(view)
        else:
            gone, new = self.tasks[:0], np.empty(0, dtype=np.int64)
        if self.scorer.reads_waiting:  # a changed task leaves every row and comes back with its new score
            changed = view.tasks_changed_since(self.waiting_changes)
            new = np.union1d(new, changed)
            gone = np.union1d(gone, tasks[changed])
        self._remember_counters(view)
        if len(gone):
            stale = np.union1d(stale, self._drop(gone))
        if len(stale):
            self._rescore(view, stale, None)
        if len(new):
            self._rescore(view, np.setdiff1d(np.arange(view.num_machines), stale, assume_unique=True), new)
        if self.scorer.scaled:
            top = self.term_top.max(axis=0, initial=-np.inf)
            if not np.array_equal(top, self.used_top):
                self.used_top = top  # every score moves with the maxima: rescore every row
                self._rescore(view, np.arange(view.num_machines), None)

    def _remember_tasks(self, view: ClusterView) -> None:
        self.tasks = np.array(view.task_index)
        self.tasks_version = view.tasks_version

    def _remember_counters(self, view: ClusterView) -> None:
        self.machine_changes = view.machine_changes
        self.waiting_changes = view.waiting_changes

    def _rebuild(self, view: ClusterView) -> None:
        machines = view.num_machines
        self.episode = view.episode
        self._remember_tasks(view)
        self._remember_counters(view)
        # Per row, its best tasks: score and global task index, best first; `kept` of them valid;
        # `complete`: they are all the row's fit tasks (when none is left, nothing fits).
        self.score = np.full((machines, KEPT), -np.inf)
        self.task = np.full((machines, KEPT), _NO_TASK, dtype=np.int64)
        self.kept = np.zeros(machines, dtype=np.int64)
        self.complete = np.ones(machines, dtype=bool)
        # Scaled scorers: per row, the maximum of each term and a task holding it.
        self.term_top = np.full((machines, 0), -np.inf)
        self.term_task = np.full((machines, 0), _NO_TASK, dtype=np.int64)
        self.used_top = None
        # Machines of one capacity that are idle score every task alike (a score comes from the
        # machine's state and the task alone): on a large, lightly loaded cluster most rows are.
        self.shape = np.unique(view.capacity, axis=0, return_inverse=True)[1].reshape(-1)
        self.shapes = int(self.shape.max(initial=-1)) + 1
        everyone = np.arange(machines)
        if self.scorer.scaled:  # the maxima come from the pairs: a first pass finds them
            self._rescore(view, everyone, None)
            self.used_top = self.term_top.max(axis=0, initial=-np.inf)
        self._rescore(view, everyone, None)

    def _drop(self, gone: np.ndarray) -> np.ndarray:
        """Take the tasks ``gone`` out of every row; return the rows to rescore whole: those left
        without a kept task that may not be all their fits, and (scaled) those that lost a maximum."""
        rows = self.kernels.drop_kept(self.score, self.task, self.kept, np.sort(gone).astype(np.int64))
        stale = rows[(self.kept[rows] == 0) & ~self.complete[rows]]
        if self.scorer.scaled:
            stale = np.union1d(stale, np.flatnonzero(np.isin(self.term_task, gone).any(axis=1)))
        return stale

    def _rescore(self, view: ClusterView, rows: np.ndarray, positions: np.ndarray | None) -> None:
        """Score the tasks at ``positions`` in the view (None: every task) on ``rows``: the rows'
        kept tasks anew (None), or merged with these tasks' (new or changed ones)."""
        merge = positions is not None
        if not merge:
            self.score[rows], self.task[rows], self.kept[rows], self.complete[rows] = -np.inf, _NO_TASK, 0, True
            if self.scorer.scaled:
                self.term_top[rows], self.term_task[rows] = -np.inf, _NO_TASK
            positions = np.arange(view.num_tasks)
        if len(rows) == 0 or len(positions) == 0:
            return
        step = max(1, _BLOCK_CELLS // len(positions))
        for start in range(0, len(rows), step):
            self._merge_block(view, rows[start:start + step], positions, merge)

    def _merge_block(self, view: ClusterView, rows: np.ndarray, positions: np.ndarray, merge: bool) -> None:
        demand = view.demand if len(positions) == view.num_tasks else view.demand[positions]
        fit = (demand[None, :, :] <= view.free[rows][:, None, :]).all(axis=2)
        fit &= view.up[rows, None]
        i, j = np.nonzero(fit)
        if len(i) == 0:
            return
        machines, tasks = rows[i], positions[j]
        scorer = self.scorer
        if scorer.scaled:
            terms = scorer.terms(view, machines, tasks)
            self._keep_term_maxima(view, machines, tasks, terms)
            if self.used_top is None or len(self.used_top) != terms.shape[1]:
                return  # no maxima yet (a rebuild's first pass, or no fit pair so far): _sync rescores
            scores = scorer.combine(terms, self.used_top)
        else:
            scores = self._score_alike_once(view, machines, tasks)
        if np.isnan(scores).any():
            raise ValueError(f"broker {getattr(scorer, 'name', type(scorer).__name__)!r} at t={view.time}: "
                             "a pair's score is NaN; scores must be numbers (or set incremental = False)")
        if merge and len(positions) == 1:  # one new or changed task merged in: an insertion per row, no sort
            self._insert(machines, scores, view.task_index[tasks])
        else:
            self._keep_best(rows, machines, scores, view.task_index[tasks])

    def _score_alike_once(self, view: ClusterView, machines: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        """``scorer.score`` of the pairs, each idle machine's pairs scored once per machine shape and task:
        the same floats, as a score comes from the pair alone (and gives it the same float in any batch)."""
        idle = (view.free[machines] == view.capacity[machines]).all(axis=1)
        if idle.sum() < 2 * self.shapes:  # hardly any pair to share
            return self.scorer.score(view, machines, tasks)
        key = tasks[idle] * self.shapes + self.shape[machines[idle]]
        _, first, which = np.unique(key, return_index=True, return_inverse=True)
        picked = np.flatnonzero(idle)[first]
        busy = np.flatnonzero(~idle)
        both = np.concatenate([picked, busy])
        scored = self.scorer.score(view, machines[both], tasks[both])
        scores = np.empty(len(machines))
        scores[idle] = scored[:len(picked)][which.reshape(-1)]
        scores[busy] = scored[len(picked):]
        return scores

    def _insert(self, machines: np.ndarray, scores: np.ndarray, tasks: np.ndarray) -> None:
        """Insert one pair per machine (``machines`` distinct) into its row's kept tasks, in order
        (a compiled loop over the rows: `agents.kernels.insert_kept`)."""
        self.kernels.insert_kept(self.score, self.task, self.kept, self.complete, machines.astype(np.int64),
                                 scores.astype(np.float64), tasks.astype(np.int64))

    def _keep_best(self, rows: np.ndarray, machines: np.ndarray, scores: np.ndarray, tasks: np.ndarray) -> None:
        """Merge the pairs (machines, scores, global tasks), machines among ``rows``, into the rows' kept tasks."""
        if len(rows) == 1 and self.kept[rows[0]] == 0:  # one row rescored: most decisions
            m = rows[0]
            self.complete[m] = len(scores) <= KEPT
            if len(scores) > KEPT:  # the KEPT best (and any tied with the last), in task order
                among = np.flatnonzero(scores >= np.partition(scores, -KEPT)[-KEPT])
                scores, tasks = scores[among], tasks[among]
            order = np.lexsort((tasks, -scores))[:KEPT]
            k = len(order)
            self.score[m, :k], self.task[m, :k], self.kept[m] = scores[order], tasks[order], k
            return
        had = self.kept[rows]
        old = np.arange(KEPT) < had[:, None]  # the rows' valid kept entries
        old_rows = np.broadcast_to(rows[:, None], old.shape)[old]
        machine = np.concatenate([old_rows, machines])
        score = np.concatenate([self.score[rows][old], scores])
        task = np.concatenate([self.task[rows][old], tasks])
        was_kept = np.arange(len(machine)) < len(old_rows)
        # Best first within each row: highest score, then earliest task (argmax's tie rule).
        order = np.lexsort((task, -score, machine))
        machine, score, task, was_kept = machine[order], score[order], task[order], was_kept[order]
        starts = _row_starts(machine)
        counts = np.diff(np.append(starts, len(machine)))
        rank = np.arange(len(machine)) - np.repeat(starts, counts)
        found = machine[starts]
        # A row that does not keep all its fits keeps nothing ranked behind its last kept task: a
        # task it does not keep may rank above that.
        last_kept = np.maximum.reduceat(np.where(was_kept, rank, -1), starts)
        known = np.repeat(np.where(self.complete[found], KEPT, last_kept + 1), counts)
        keep = rank < np.minimum(known, KEPT)
        self.score[machine[keep], rank[keep]] = score[keep]
        self.task[machine[keep], rank[keep]] = task[keep]
        self.kept[found] = np.add.reduceat(keep, starts)
        self.complete[found] &= counts <= KEPT

    def _keep_term_maxima(self, view: ClusterView, machines: np.ndarray, tasks: np.ndarray,
                          terms: np.ndarray) -> None:
        if self.term_top.shape[1] != terms.shape[1]:  # the first terms of the episode: now k is known
            self.term_top = np.full((view.num_machines, terms.shape[1]), -np.inf)
            self.term_task = np.full((view.num_machines, terms.shape[1]), _NO_TASK, dtype=np.int64)
        starts = _row_starts(machines)
        found = machines[starts]
        for k in range(terms.shape[1]):
            top = np.maximum.reduceat(terms[:, k], starts)
            holder = view.task_index[tasks[_first_index_of(terms[:, k], top, starts)]]
            better = top > self.term_top[found, k]
            self.term_top[found[better], k] = top[better]
            self.term_task[found[better], k] = holder[better]


def _row_starts(machines: np.ndarray) -> np.ndarray:
    """Where each machine's run of pairs starts, for pairs sorted by machine."""
    return np.flatnonzero(np.diff(machines, prepend=-1))


def _first_index_of(values: np.ndarray, top: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Within each segment (``starts``, sorted), the index of the first value equal to its ``top``."""
    counts = np.diff(np.append(starts, len(values)))
    hits = np.flatnonzero(values == np.repeat(top, counts))
    return hits[np.searchsorted(hits, starts)]
