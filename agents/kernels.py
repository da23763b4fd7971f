"""Compiled loops of the brokers: a whole decision round of a pair score (Tetris, Packer, DeepJS's fitness)
in one call, FGD's fragmentation decrease of every placement on a few machines (`fgd_deltas`), and DeepRM's image of
a machine from its free profile (`units_in_use`).

A pair score's round is a greedy loop: each start changes one machine's free resources,
which decides the next best pair. numpy cannot express that loop without one Python step
per start, and at Alibaba scale a round holds thousands of starts (one instance each). The
kernel (`state_round`) runs the loop compiled (numba, ``cache=True``: compiled once per machine, then
loaded from ``__pycache__``) and returns the round's plan as arrays. (First-fit's round, a few
decisions each with a count, is no faster compiled than in `agents.heuristics.FirstFit`.)

A pair's score comes from its machine's state (free resources; with Packer's shares, capacity too) and
its task: machines in one state score every task alike. A large cluster's machines fall into a few such
states (every idle machine of a size is one), so the kernel keeps one row of scores per distinct state,
not per machine: a start moves its machine to another state (found by comparison, or made and scored),
and a score that reads the task's waiting count (DeepJS's) rescores the started task over the states
(tens), not over the machines (thousands).

It computes what the one-decision path computes, in the same floating-point order, so the
plans are the decisions that path makes one at a time (tests/test_incremental.py):

* free resources are running totals, one subtraction per instance, as the engine keeps them;
* a pair's score is a sum over resources in resource order, of the same products (Tetris, Packer), or
  the network's forward of the pair's features (`cloudsim.engine.kernels.mlp`, the same sums whatever the batch);
* ties go to the first machine, then the first task (machine-major order), as ``np.argmax``.
"""

from __future__ import annotations

import numba
import numpy as np

from cloudsim.engine.kernels import fgd_delta, mlp, pair_score

__all__ = ["DOT", "FITNESS", "SHARES", "drop_kept", "fgd_deltas", "insert_kept", "round_plan", "state_round",
           "units_in_use"]

KERNELS_CALLED = "ab56f80312bb4b42"
"""A digest of the compiled functions this module's kernels call from other modules (`cloudsim.engine.kernels`): numba
caches the kernels against this file alone, so a change there must change this file too, or they would stay
built on the old code (tests/test_kernel_cache.py holds the digest to the source and gives the new one)."""

DOT, SHARES, FITNESS = 0, 1, 2
"""The scores `state_round` computes: the sum over ``columns`` of free x demand (Tetris); of the shares of
capacity, free / capacity x demand / capacity, 0 where the capacity is 0 (Packer); DeepJS's fitness."""
_NO_FIT = -1


@numba.njit(cache=True)
def _same_key(states, s, keys, m):
    for r in range(keys.shape[1]):
        if states[s, r] != keys[m, r]:
            return False
    return True


@numba.njit(cache=True)
def _state_fits(states, demand, s, t):
    for r in range(demand.shape[1]):
        if demand[t, r] > states[s, r]:
            return False
    return True


@numba.njit(cache=True)
def _features(states, s, demand, duration, waiting, t, cpu, memory, mean, std, x, row):
    """Row ``row`` of ``x``: the pair (state ``s``, task ``t``)'s six DeepJS features, normalised as
    `agents.deepjs.NumpyFitness` normalises them ((raw - mean) / std)."""
    raw = (states[s, cpu], states[s, memory], demand[t, cpu], demand[t, memory], duration[t], float(waiting[t]))
    for k in range(6):
        x[row, k] = (raw[k] - mean[k]) / std[k]


@numba.njit(cache=True)
def _rescan(scores, fits, s, tasks):
    """State ``s``'s best task (the first on ties) and its score; -1 when none fits."""
    best, best_score = _NO_FIT, -np.inf
    for t in range(tasks):
        if fits[s, t] and (best == _NO_FIT or scores[s, t] > best_score):
            best, best_score = t, scores[s, t]
    return best, best_score


@numba.njit(cache=True)
def _score_state(states, s, kind, columns, demand, duration, waiting, cpu, memory, mean, std, weights, biases,
                 scores, fits, x, out):
    """Score every waiting task that fits state ``s`` (DeepJS: one compiled forward over them); whether a
    score is NaN."""
    tasks = demand.shape[0]
    n, nan = 0, False
    for t in range(tasks):
        fits[s, t] = waiting[t] > 0 and _state_fits(states, demand, s, t)
        if fits[s, t]:
            if kind == FITNESS:
                _features(states, s, demand, duration, waiting, t, cpu, memory, mean, std, x, n)
                n += 1
            else:
                scores[s, t] = pair_score(states, s, demand, t, columns, kind == SHARES)
                nan |= np.isnan(scores[s, t])
    if kind == FITNESS:
        mlp(x[:n], weights, biases, True, out[:n])
        n = 0
        for t in range(tasks):
            if fits[s, t]:
                scores[s, t] = out[n, 0]
                nan |= np.isnan(out[n, 0])
                n += 1
    return nan


@numba.njit(cache=True)
def state_round(keys, demand, duration, waiting, order, kind, columns, cpu, memory, mean, std, weights, biases,
                until_out):
    """A pair score's round: start one instance of the best fit pair, again and again, until none fits.

    ``keys`` (machines, k): each machine's free resources (the first ``demand.shape[1]`` columns, updated in
    place), then for `SHARES` its capacity; machines with equal rows and up form a state. ``order`` lists
    the up machines with equal rows next to each other (a lexicographic sort). ``kind``: `DOT` or `SHARES`
    over the resource ``columns``, or `FITNESS`: the network (``weights``, ``biases``; tanh between layers)
    of the pair's features (`agents.deepjs.config.PAPER_FEATURES`: the state's free ``cpu`` and ``memory``
    columns, the task's demand of both, its duration and its waiting count), normalised by ``mean`` and
    ``std``. ``waiting`` is updated in place. With ``until_out`` the round stops after the first decision
    that leaves its task without waiting instances.

    Returns the plan as (machine, task, count) arrays, one instance a decision, as the one-decision path
    decides (the best pair, the first machine, then the first task, on ties), whether it stopped at a task
    that ran out (``until_out``), and whether a score was NaN (the round stops there: the caller refuses it).
    """
    machines, tasks = keys.shape[0], demand.shape[0]
    resources, width = demand.shape[1], keys.shape[1]
    capacity = 16
    states = np.empty((capacity, width))
    scores = np.empty((capacity, tasks))
    fits = np.zeros((capacity, tasks), dtype=np.bool_)
    best = np.full(capacity, _NO_FIT, dtype=np.int64)
    best_score = np.full(capacity, -np.inf)
    members = np.zeros(capacity, dtype=np.int64)
    first = np.zeros(capacity, dtype=np.int64)  # each state's lowest machine
    spare = np.empty(capacity, dtype=np.int64)  # states left without machines, to reuse
    spares = 0
    live = 0  # states made so far (some may be spare)
    state_of = np.full(machines, -1, dtype=np.int64)
    rows = max(tasks, machines) if kind == FITNESS else 0
    x = np.empty((rows, 6))
    out = np.empty((rows, 1))
    for i in range(len(order)):
        m = order[i]
        if i == 0 or not _same_key(states, live - 1, keys, m):
            if live == capacity:
                capacity *= 2
                states, scores, fits, best, best_score, members, first, spare = _grown(
                    capacity, states, scores, fits, best, best_score, members, first, spare)
            for r in range(width):
                states[live, r] = keys[m, r]
            members[live], first[live] = 0, m
            live += 1
        s = live - 1
        state_of[m] = s
        members[s] += 1
        if m < first[s]:
            first[s] = m
    nan = False
    for s in range(live):
        nan |= _score_state(states, s, kind, columns, demand, duration, waiting, cpu, memory, mean, std, weights,
                            biases, scores, fits, x, out)
        best[s], best_score[s] = _rescan(scores, fits, s, tasks)
    total = 0
    for t in range(tasks):
        total += waiting[t]
    plan_machine = np.empty(total, dtype=np.int64)
    plan_task = np.empty(total, dtype=np.int64)
    k = 0
    cut = False
    while not nan:
        # The best pair: the state with the highest best score, its lowest machine on ties.
        chosen = -1
        for s in range(live):
            if members[s] == 0 or best[s] == _NO_FIT:
                continue
            if chosen == -1 or best_score[s] > best_score[chosen] or (
                    best_score[s] == best_score[chosen] and first[s] < first[chosen]):
                chosen = s
        if chosen == -1:
            break
        m, t = first[chosen], best[chosen]
        for r in range(resources):
            keys[m, r] -= demand[t, r]
        waiting[t] -= 1
        plan_machine[k], plan_task[k] = m, t
        k += 1
        if waiting[t] == 0 and until_out:
            cut = True
            break
        # The machine leaves its state...
        s = chosen
        members[s] -= 1
        if members[s] == 0:
            spare[spares] = s
            spares += 1
        else:
            n = m + 1
            while state_of[n] != s:
                n += 1
            first[s] = n
        # ... for the state of its new free vector: one that exists, or a new one.
        target = -1
        for u in range(live):
            if members[u] > 0 and _same_key(states, u, keys, m):
                target = u
                break
        if target == -1:
            if spares:
                spares -= 1
                target = spare[spares]
            else:
                if live == capacity:
                    capacity *= 2
                    states, scores, fits, best, best_score, members, first, spare = _grown(
                        capacity, states, scores, fits, best, best_score, members, first, spare)
                target = live
                live += 1
            for r in range(width):
                states[target, r] = keys[m, r]
            members[target], first[target] = 0, m
            nan |= _score_state(states, target, kind, columns, demand, duration, waiting, cpu, memory, mean, std,
                                weights, biases, scores, fits, x, out)
            best[target], best_score[target] = _rescan(scores, fits, target, tasks)
        state_of[m] = target
        members[target] += 1
        if m < first[target]:
            first[target] = m
        if kind != FITNESS:
            if waiting[t] == 0:  # the task ran out: the states that ranked it first look again
                for u in range(live):
                    if members[u] > 0:
                        fits[u, t] = False
                        if best[u] == t:
                            best[u], best_score[u] = _rescan(scores, fits, u, tasks)
            continue
        # DeepJS: the task's waiting count changed, and with it its score on every state it fits.
        n = 0
        for u in range(live):
            if members[u] > 0 and fits[u, t]:
                if waiting[t] == 0:
                    fits[u, t] = False
                else:
                    _features(states, u, demand, duration, waiting, t, cpu, memory, mean, std, x, n)
                    n += 1
        mlp(x[:n], weights, biases, True, out[:n])
        n = 0
        for u in range(live):
            if members[u] == 0:
                continue
            if waiting[t] > 0 and fits[u, t]:
                was = scores[u, t]
                scores[u, t] = out[n, 0]
                n += 1
                nan |= np.isnan(scores[u, t])
                if best[u] == t:
                    if not scores[u, t] >= was:  # it fell: another task may lead now
                        best[u], best_score[u] = _rescan(scores, fits, u, tasks)
                    else:
                        best_score[u] = scores[u, t]
                elif best[u] == _NO_FIT or scores[u, t] > best_score[u] or (
                        scores[u, t] == best_score[u] and t < best[u]):
                    best[u], best_score[u] = t, scores[u, t]
            elif best[u] == t:  # it ran out
                best[u], best_score[u] = _rescan(scores, fits, u, tasks)
    count = np.ones(k, dtype=np.int64)
    return plan_machine[:k], plan_task[:k], count, cut, nan


def round_plan(view, kind: int, columns=(), fitness=None, until_out: bool = False):
    """`state_round` on a view: (machine, task, count) arrays of the round, whether it stopped at a task that ran
    out, whether a score was NaN. ``fitness``: DeepJS's `NumpyFitness` (``kind`` `FITNESS`)."""
    keys = view.free if kind != SHARES else np.concatenate([view.free, view.capacity], axis=1)
    keys = np.array(keys, dtype=np.float64)  # the kernel's copy: it takes each start's resources from it
    up = np.flatnonzero(view.up)
    order = up[np.lexsort(keys[up].T)]  # machines with equal rows side by side
    if fitness is not None:
        network = fitness.network
        weights, biases, mean, std = network.weights, network.biases, fitness.mean, fitness.std
        cpu, memory = view.resources.index("cpu"), view.resources.index("memory")
    else:
        weights, biases, mean, std, cpu, memory = (np.zeros((1, 1)),), (np.zeros(1),), np.zeros(6), np.ones(6), 0, 0
    return state_round(keys, view.demand, view.duration, view.waiting.copy(), order, kind,
                       np.asarray(columns, dtype=np.int64), cpu, memory, np.asarray(mean, dtype=np.float64),
                       np.asarray(std, dtype=np.float64), weights, biases, until_out)


@numba.njit(cache=True)
def _grown(capacity, states, scores, fits, best, best_score, members, first, spare):
    """The state arrays with room for ``capacity`` states, the existing ones copied."""
    n = states.shape[0]
    s2 = np.empty((capacity, states.shape[1]))
    s2[:n] = states
    sc2 = np.empty((capacity, scores.shape[1]))
    sc2[:n] = scores
    f2 = np.zeros((capacity, fits.shape[1]), dtype=np.bool_)
    f2[:n] = fits
    b2 = np.full(capacity, _NO_FIT, dtype=np.int64)
    b2[:n] = best
    bs2 = np.full(capacity, -np.inf)
    bs2[:n] = best_score
    m2 = np.zeros(capacity, dtype=np.int64)
    m2[:n] = members
    fi2 = np.zeros(capacity, dtype=np.int64)
    fi2[:n] = first
    sp2 = np.empty(capacity, dtype=np.int64)
    sp2[:n] = spare
    return s2, sc2, f2, b2, bs2, m2, fi2, sp2


# ------------------------------------------------------------------ kept best pairs (agents.incremental)
@numba.njit(cache=True)
def drop_kept(score, task, kept, gone):
    """Take the tasks ``gone`` (sorted global indices) out of every row of `agents.incremental.BestPairs`'
    kept entries, closing the gaps in order. Returns the rows that lost an entry."""
    lost = np.empty(score.shape[0], dtype=np.int64)
    n = 0
    for m in range(score.shape[0]):
        k, w = kept[m], 0
        for j in range(k):
            g = task[m, j]
            i = np.searchsorted(gone, g)
            if i < len(gone) and gone[i] == g:
                continue
            score[m, w], task[m, w] = score[m, j], g
            w += 1
        if w < k:
            for j in range(w, k):
                score[m, j], task[m, j] = -np.inf, np.iinfo(np.int64).max
            kept[m] = w
            lost[n] = m
            n += 1
    return lost[:n]


@numba.njit(cache=True)
def insert_kept(score, task, kept, complete, machines, scores, tasks):
    """Insert one pair per row (``machines`` distinct) into its kept entries, best first (higher score,
    then lower task). A pair that would go behind every kept entry of a row that does not keep all its
    fits is not kept (a task the row does not keep may rank above it); a row that loses a pair, kept or
    pushed off its end, no longer keeps all its fits."""
    width = score.shape[1]
    for i in range(len(machines)):
        m, s, g = machines[i], scores[i], tasks[i]
        k = kept[m]
        slot = 0
        while slot < k and (score[m, slot] > s or (score[m, slot] == s and task[m, slot] < g)):
            slot += 1
        if slot == width or (slot == k and not complete[m]):
            complete[m] = False
            continue
        if k == width:
            complete[m] = False  # the last entry falls off
        else:
            k += 1
        for j in range(k - 1, slot, -1):
            score[m, j], task[m, j] = score[m, j - 1], task[m, j - 1]
        score[m, slot], task[m, slot] = s, g
        kept[m] = k


@numba.njit(cache=True)
def fgd_deltas(free_cpu, device_free, accepted, cpu, count, milli, target_cpu, target_milli, target_count, target_p,
               best, device):
    """FGD on machines k (`cloudsim.engine.kernels.fgd_delta`): ``best[k]``, the largest decrease of the machine's
    fragmentation a placement of one instance (``cpu``, ``count`` devices of ``milli``) makes, and for a share
    ``device[k]``, the device that makes it."""
    after = np.empty(device_free.shape[1], dtype=device_free.dtype)
    for k in range(device_free.shape[0]):
        best[k], device[k] = fgd_delta(free_cpu[k], device_free[k], accepted[k], cpu, count, milli, target_cpu,
                                       target_milli, target_count, target_p, after)


@numba.njit(cache=True)
def units_in_use(times, free, now, steps, capacity, res_slot, rounding):
    """DeepRM's image of one machine (`agents.deeprm.broker.DeepRMBroker`): (steps, resources) units in use,
    for each step ``[now + t, now + t + 1)`` of the horizon and each resource of ``capacity``, from the most
    held during the step over the pieces of the step profile ``(times, free)`` that meet it (piece ``k`` holds
    on ``[times[k], times[k + 1])``, the last for ever): ``ceil((capacity - least free) / unit - rounding)``
    in units of ``capacity / res_slot`` (1 where the capacity is 0), between 0 and ``res_slot``."""
    resources = len(capacity)
    out = np.empty((steps, resources), dtype=np.int64)
    least = np.empty(resources)
    pieces = len(times)
    for t in range(steps):
        start = now + t
        least[:] = np.inf
        for k in range(pieces):
            until = times[k + 1] if k + 1 < pieces else np.inf
            if times[k] < start + 1 and until > start:
                for r in range(resources):
                    if free[k, r] < least[r]:
                        least[r] = free[k, r]
        for r in range(resources):
            unit = capacity[r] / res_slot if capacity[r] > 0 else 1.0
            used = np.ceil((capacity[r] - least[r]) / unit - rounding)
            out[t, r] = int(min(max(used, 0.0), float(res_slot)))
    return out
