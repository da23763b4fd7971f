"""`DeepRMBatch`: DeepRM's discrete-time model over a batch of episodes in lockstep (the package's
docstring states the model)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cloudsim.engine.envs.deeprm.params import DeepRMParams
from cloudsim.engine.envs.deeprm.render import render_image


def _check_jobsets(lengths, sizes, params: DeepRMParams) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.asarray(lengths)
    sizes = np.asarray(sizes)
    if lengths.ndim == 1:
        lengths, sizes = lengths[None], sizes[None]
    if lengths.ndim != 2 or sizes.shape != lengths.shape + (params.resources,):
        raise ValueError(f"a jobset is lengths (steps,) and sizes (steps, {params.resources}); got shapes "
                         f"{lengths.shape} and {sizes.shape}")
    if not (np.issubdtype(lengths.dtype, np.number) and np.issubdtype(sizes.dtype, np.number)):
        raise ValueError("a jobset's lengths and sizes must be numbers")
    if np.any(lengths != np.round(lengths)) or np.any(sizes != np.round(sizes)):
        raise ValueError("a jobset's lengths and sizes must be whole numbers (time steps and units)")
    lengths, sizes = lengths.astype(np.int64), sizes.astype(np.int64)
    if lengths.min() < 0 or lengths.max() > params.max_job_len:
        raise ValueError(f"job lengths must be in [0, {params.max_job_len}] (0 = no job), got "
                         f"{lengths.min()}..{lengths.max()}")
    jobs = lengths > 0
    if jobs.any() and (sizes[jobs].min() < 0 or sizes[jobs].max() > params.max_job_size):
        raise ValueError(f"job sizes must be in [0, {params.max_job_size}] units, got "
                         f"{sizes[jobs].min()}..{sizes[jobs].max()}")
    return lengths, sizes


def _check_arrivals(arrivals, shape: tuple[int, int]) -> np.ndarray:
    if arrivals is None:
        return np.broadcast_to(np.arange(shape[1], dtype=np.int64), shape)
    arrivals = np.asarray(arrivals)
    if arrivals.ndim == 1:
        arrivals = arrivals[None]
    if arrivals.shape != shape:
        raise ValueError(f"arrivals must have the lengths' shape {shape}, got {arrivals.shape}")
    if not np.issubdtype(arrivals.dtype, np.number) or np.any(arrivals != np.round(arrivals)) \
            or (arrivals.size and arrivals.min() < 0):
        raise ValueError("arrivals must be whole time steps >= 0")
    arrivals = arrivals.astype(np.int64)
    if np.any(np.diff(arrivals, axis=1) < 0):
        raise ValueError("arrivals must not decrease along a jobset: list its jobs in arrival order")
    return arrivals


class DeepRMBatch:
    """``B`` DeepRM episodes stepped in lockstep, one jobset each.

    Args:
        params: the environment's parameters.
        lengths, sizes: the jobsets, (B, jobs) and (B, jobs, resources); length 0 = no job.
        arrivals: None for the code's form (index t is the job arriving at time t;
            in ``mode="code"`` index 0 never arrives), or (B, jobs) whole arrival
            times, non-decreasing along each row, for workloads where several jobs
            may arrive in one step (DeepRM_Plus's Poisson arrivals). Jobs arriving
            in the same step join in index order.

    ``step(actions)`` advances every episode not yet done by one action each and
    returns ``(rewards, done)``; episodes already done ignore their action.
    Public arrays (read them, do not write): ``time``, ``avbl``, ``slot``
    (sequence index of each slot's job, -1 when empty), ``backlog_n``,
    ``since_new``, ``done``, ``truncated``, ``dropped``, ``enter``, ``start``, ``finish``.
    """

    def __init__(self, params: DeepRMParams, lengths, sizes, arrivals=None) -> None:
        self.params = p = params
        self.lengths, self.sizes = _check_jobsets(lengths, sizes, p)
        self.B, self.S = self.lengths.shape
        self.arrivals = _check_arrivals(arrivals, self.lengths.shape)
        # job tables with one all-zero column at the end, so that job id -1 (no job) reads as zeros
        self._len = np.concatenate([self.lengths, np.zeros((self.B, 1), dtype=np.int64)], axis=1)
        self._size = np.concatenate([self.sizes, np.zeros((self.B, 1, p.resources), dtype=np.int64)], axis=1)
        with np.errstate(divide="ignore"):
            self._neg_inv_len = np.where(self._len > 0, -1.0 / self._len, 0.0)
        B, T, R = self.B, p.horizon, p.resources
        self.time = np.zeros(B, dtype=np.int64)
        self.next_job = np.zeros(B, dtype=np.int64)  # the first job that has not arrived yet
        self.avbl = np.full((B, T, R), p.res_slot, dtype=np.int64)
        self.slot = np.full((B, p.slots), -1, dtype=np.int64)
        self.backlog = np.full((B, p.backlog), -1, dtype=np.int64)
        self.backlog_n = np.zeros(B, dtype=np.int64)
        self.running = np.full((B, 8), -1, dtype=np.int64)  # sequence indices, in allocation order; grows
        self.running_n = np.zeros(B, dtype=np.int64)
        self.since_new = np.zeros(B, dtype=np.int64)
        self.done = np.zeros(B, dtype=bool)
        self.truncated = np.zeros(B, dtype=bool)
        self.dropped = np.zeros((B, self.S), dtype=bool)
        self.enter = np.full((B, self.S), -1, dtype=np.int64)
        self.start = np.full((B, self.S), -1, dtype=np.int64)
        self.finish = np.full((B, self.S), -1, dtype=np.int64)
        self._rows = np.arange(B)
        if p.mode == "code" and arrivals is None:  # the code's index 0 never arrives
            self.next_job[:] = 1
        else:
            self._admit_due(self._rows)

    # ------------------------------------------------------------------ queries
    def slot_lengths(self) -> np.ndarray:
        """(B, slots) length of each slot's job, 0 when empty."""
        return self._len[self._rows[:, None], self.slot]

    def slot_sizes(self) -> np.ndarray:
        """(B, slots, resources) demand of each slot's job, 0 when empty."""
        return self._size[self._rows[:, None], self.slot]

    def slot_enter_times(self) -> np.ndarray:
        """(B, slots) the time each slot's job arrived, -1 when empty."""
        return np.where(self.slot >= 0, self.enter[self._rows[:, None], np.maximum(self.slot, 0)], -1)

    def fits_now(self) -> np.ndarray:
        """(B, slots): the slot holds a job that fits from now for its whole length."""
        lengths, sizes = self.slot_lengths(), self.slot_sizes()
        ok_rows = np.all(self.avbl[:, None, :, :] >= sizes[:, :, None, :], axis=3)  # (B, M, T)
        # fits for its whole length <=> no bad row before offset len
        first_bad = np.where(ok_rows.all(2), self.params.horizon, (~ok_rows).argmax(2))
        return (self.slot >= 0) & (first_bad >= lengths)

    def placeable(self) -> np.ndarray:
        """(B, slots): the slot holds a job that fits at some offset of the horizon (allocating it succeeds)."""
        rows = np.repeat(self._rows, self.params.slots)
        job = self.slot.reshape(-1)
        ok = np.zeros(job.size, dtype=bool)
        held = np.flatnonzero(job >= 0)
        ok[held] = self._earliest_offset(rows[held], job[held]) >= 0
        return ok.reshape(self.B, self.params.slots)

    def jobs_in_system(self) -> np.ndarray:
        """(B,) jobs in the running list (stale ones included), the slots and the backlog."""
        return self.running_n + (self.slot >= 0).sum(1) + self.backlog_n

    # -------------------------------------------------------------------- step
    def step(self, actions) -> tuple[np.ndarray, np.ndarray]:
        """One action per episode; returns (reward per episode, done per episode)."""
        p = self.params
        actions = np.asarray(actions, dtype=np.int64).reshape(self.B)
        if np.any((actions < 0) | (actions > p.slots)):
            raise ValueError(f"actions must be in 0..{p.slots} (slot, or {p.slots} for void), got {actions}")
        rewards = np.zeros(self.B)
        live = ~self.done
        chosen = np.where(live & (actions < p.slots), np.minimum(actions, p.slots - 1), 0)
        job = np.where(live & (actions < p.slots), self.slot[self._rows, chosen], -1)
        rows = np.flatnonzero(job >= 0)
        offset = self._earliest_offset(rows, job[rows])
        placed = rows[offset >= 0]
        self._allocate(placed, chosen[placed], job[placed], offset[offset >= 0])
        move = live.copy()
        move[placed] = False
        rows = np.flatnonzero(move)
        if rows.size:
            rewards[rows] = self._move_on(rows)
        return rewards, self.done.copy()

    def _earliest_offset(self, rows: np.ndarray, job: np.ndarray) -> np.ndarray:
        """The earliest offset t in [0, T - len) where each job fits for its whole length; -1 if none."""
        if rows.size == 0:
            return np.zeros(0, dtype=np.int64)
        T = self.params.horizon
        length = self.lengths[rows, job]
        size = self.sizes[rows, job]
        bad = ~np.all(self.avbl[rows] >= size[:, None, :], axis=2)  # (n, T)
        bad_cum = np.concatenate([np.zeros((rows.size, 1), dtype=np.int64), np.cumsum(bad, axis=1)], axis=1)
        t = np.arange(T)
        end = np.minimum(t[None, :] + length[:, None], T)
        window_bad = bad_cum[np.arange(rows.size)[:, None], end] - bad_cum[:, :T]
        ok = (window_bad == 0) & (t[None, :] < (T - length)[:, None])
        return np.where(ok.any(1), ok.argmax(1), -1)

    def _allocate(self, rows, slot_idx, job, offset) -> None:
        if rows.size == 0:
            return
        T = self.params.horizon
        length = self.lengths[rows, job]
        t = np.arange(T)
        covered = (t[None, :] >= offset[:, None]) & (t[None, :] < (offset + length)[:, None])
        self.avbl[rows] -= covered[:, :, None] * self.sizes[rows, job][:, None, :]
        self.start[rows, job] = self.time[rows] + offset
        self.finish[rows, job] = self.start[rows, job] + length
        if self.running_n[rows].max() >= self.running.shape[1]:
            grown = np.full((self.B, 2 * self.running.shape[1]), -1, dtype=np.int64)
            grown[:, :self.running.shape[1]] = self.running
            self.running = grown
        self.running[rows, self.running_n[rows]] = job
        self.running_n[rows] += 1
        # the slot is refilled from the backlog's head
        has = self.backlog_n[rows] > 0
        self.slot[rows, slot_idx] = np.where(has, self.backlog[rows, 0], -1)
        pop = rows[has]
        if pop.size:
            self.backlog[pop, :-1] = self.backlog[pop, 1:]
            self.backlog[pop, -1] = -1
            self.backlog_n[pop] -= 1

    def _move_on(self, rows: np.ndarray) -> np.ndarray:
        """Time advances by one step for ``rows``; returns their rewards."""
        p = self.params
        if p.mode == "paper":  # the step that passes is charged for the jobs in the system during it
            reward = self._reward(rows)
        self.time[rows] += 1
        self.avbl[rows, :-1] = self.avbl[rows, 1:]
        self.avbl[rows, -1] = p.res_slot
        self._remove_finished(rows)
        self.since_new[rows] = np.minimum(self.since_new[rows] + 1, p.max_track_since_new)
        past = self.next_job[rows] >= self.S
        if p.end == "no_new_job":
            ending = past
        else:
            empty = (self.running_n[rows] == 0) & np.all(self.slot[rows] < 0, axis=1) & (self.backlog_n[rows] == 0)
            ending = past & empty
            forced = ~ending & (self.time[rows] > p.max_time)
            self.truncated[rows[forced]] = True
            ending = ending | forced
        self.done[rows[ending]] = True
        self._admit_due(rows[~ending & ~past])
        # the code charges the state after the step's arrivals and removals (its first
        # step, at time 0, holds no job: index 0 never arrives)
        return reward if p.mode == "paper" else self._reward(rows)

    def _admit_due(self, rows: np.ndarray) -> None:
        """Every job of ``rows`` whose arrival time has come arrives, in index order."""
        while True:
            rows = rows[self.next_job[rows] < self.S]
            job = self.next_job[rows]
            due = self.arrivals[rows, job] <= self.time[rows]
            rows, job = rows[due], job[due]
            if rows.size == 0:
                return
            self.next_job[rows] += 1
            real = self.lengths[rows, job] > 0
            self._admit(rows[real], job[real])

    def _admit(self, rows: np.ndarray, job: np.ndarray) -> None:
        """Job ``job[i]`` of row ``rows[i]`` arrives: to the first empty slot, else the backlog, else dropped."""
        if rows.size == 0:
            return
        empty = self.slot[rows] < 0
        to_slot = empty.any(1)
        r = rows[to_slot]
        self.slot[r, empty[to_slot].argmax(1)] = job[to_slot]
        to_backlog = ~to_slot & (self.backlog_n[rows] < self.params.backlog)
        r = rows[to_backlog]
        self.backlog[r, self.backlog_n[r]] = job[to_backlog]
        self.backlog_n[r] += 1
        lost = ~to_slot & ~to_backlog
        self.dropped[rows[lost], job[lost]] = True
        kept = ~lost
        self.enter[rows[kept], job[kept]] = self.time[rows[kept]]
        self.since_new[rows] = 0

    def _remove_finished(self, rows: np.ndarray) -> None:
        run = self.running[rows]
        valid = run >= 0
        fin = valid & (self.finish[rows[:, None], np.maximum(run, 0)] <= self.time[rows][:, None])
        if not fin.any():
            return
        if self.params.mode == "code":
            # The code removes from the list while iterating over it, so the job right
            # after a removed one is not looked at in this step (it stays one more step).
            removed = np.zeros_like(fin)
            prev = np.zeros(rows.size, dtype=bool)
            for k in range(int(self.running_n[rows].max())):
                prev = fin[:, k] & ~prev
                removed[:, k] = prev
        else:
            removed = fin
        keep = valid & ~removed
        order = np.argsort(~keep, axis=1, kind="stable")
        at = np.arange(rows.size)[:, None]
        self.running[rows] = np.where(keep[at, order], run[at, order], -1)
        self.running_n[rows] = keep.sum(1)

    def _reward(self, rows: np.ndarray) -> np.ndarray:
        objective = self.params.objective
        if objective == "makespan":
            return -(self.jobs_in_system()[rows] > 0).astype(float)
        if objective == "completion":
            return -self.jobs_in_system()[rows].astype(float)
        # -1/len per job, added one by one in the code's order (running list, slots,
        # backlog) so that every reward is the code's to the last bit
        ids = np.concatenate([self.running[rows], self.slot[rows], self.backlog[rows]], axis=1)
        return np.cumsum(self._neg_inv_len[rows[:, None], ids], axis=1)[:, -1]

    # ------------------------------------------------------------- observations
    def snapshot(self) -> dict[str, np.ndarray]:
        """The small arrays the image is drawn from (what a trainer stores per step)."""
        return {"used": (self.params.res_slot - self.avbl).astype(np.int16),
                "slot_len": self.slot_lengths().astype(np.int16),
                "slot_size": self.slot_sizes().astype(np.int16),
                "backlog_n": self.backlog_n.astype(np.int16),
                "since_new": self.since_new.astype(np.int16)}

    def image(self) -> np.ndarray:
        """(B, T, width) float32 image observation (occupancy drawn as 1, see `render_image`)."""
        return render_image(self.snapshot(), self.params)

    def compact(self) -> np.ndarray:
        """(B, compact_size) float32, the code's compact observation."""
        p = self.params
        T = p.horizon
        run = self.running
        valid = run >= 0
        idx = self.finish[self._rows[:, None], np.maximum(run, 0)] - self.time[:, None]
        # the code decrements entries idx.. (python slicing: a negative idx counts from the end)
        first = np.where(idx >= 0, idx, np.maximum(T + idx, 0))
        t = np.arange(T)
        dec = (valid[:, :, None] & (t[None, None, :] >= first[:, :, None])).sum(1)
        running = self.running_n[:, None] - dec
        slots = np.concatenate([self.slot_lengths()[..., None], self.slot_sizes()], axis=2).reshape(self.B, -1)
        parts = [running, self.avbl.transpose(0, 2, 1).reshape(self.B, -1), slots, self.backlog_n[:, None]]
        return np.concatenate(parts, axis=1).astype(np.float32)

    def jobs(self, b: int) -> list[dict]:
        """Every job that arrived in episode ``b``, in arrival order (dropped ones excluded, see ``dropped``)."""
        arrived = np.flatnonzero(self.enter[b] >= 0)
        return [{"id": i, "index": int(k), "enter_time": int(self.enter[b, k]), "start_time": int(self.start[b, k]),
                 "finish_time": int(self.finish[b, k]), "length": int(self.lengths[b, k]),
                 "sizes": [int(x) for x in self.sizes[b, k]]} for i, k in enumerate(arrived)]

    def summary(self, b: int) -> dict[str, Any]:
        """Job counts and the averages over allocated jobs (the code counts a job done once allocated)."""
        arrived = self.enter[b] >= 0
        allocated = arrived & (self.start[b] >= 0)
        length = self.lengths[b][allocated]
        completion = (self.finish[b] - self.enter[b])[allocated]
        return {"jobs": int(arrived.sum()), "dropped": int(self.dropped[b].sum()),
                "allocated": int(allocated.sum()), "not_allocated": int((arrived & ~allocated).sum()),
                "avg_job_slowdown": float(np.mean(completion / length)) if length.size else float("nan"),
                "avg_job_completion": float(np.mean(completion)) if length.size else float("nan"),
                "end_time": int(self.time[b]), "truncated": bool(self.truncated[b])}
