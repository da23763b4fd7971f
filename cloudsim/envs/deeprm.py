"""DeepRM's environment (Mao et al., HotNets 2016), exactly as its published code behaves, batched.

DeepRM schedules jobs on one pool of ``res_slot`` units per resource in discrete
time steps, over an image of the next ``horizon`` steps. Its published code
(Python 2, Theano) is the reference every later paper compares with, quirks
included; ``../shared/DEEPRM_ENV.md`` in the project's records states how it
behaves, and this module matches it job by job (start and finish of every job,
every step's reward, the step at which the episode ends).

Why a model of its own rather than the event-driven `Simulation`: DeepRM's time
is a step counter, a job may be placed at a future offset of a 20-step horizon,
and the code's list handling leaves some finished jobs in the machine for one
more step (charged in the reward, and delaying the end). Matching that exactly,
and running the 2,000 episodes of one training iteration in lockstep with one
batched forward per step, asks for numpy arrays over a batch of episodes; the
engine's per-decision SimPy rounds would be both inexact and 100x too slow here.

The model in brief (``B`` episodes at once, each on its own jobset):

* State: ``avbl[b, t, i]``, free units of resource ``i`` at offset ``t`` from now;
  the running jobs (in allocation order); ``slots`` visible job slots; a FIFO
  backlog of ``backlog`` jobs; the steps since a job last arrived (capped at 10).
* Action ``a < slots``: allocate the job of slot ``a`` at the earliest offset
  ``t < horizon - len`` at which it fits for its whole length; the slot is
  refilled from the backlog's head, time does not move and the reward is 0.
  Any other action (``a == slots``, the void action; an empty slot; a job that
  fits nowhere) moves time on by one step: the horizon shifts, finished jobs
  leave, the job of the next sequence index arrives (to the lowest empty slot,
  else the backlog, else it is dropped and counted) and the step's reward is
  paid: ``-sum 1/len`` over the jobs in the system (objective ``slowdown``),
  ``-(number of jobs)`` (``completion``) or ``-1`` while any job is in the system
  (``makespan``).
* ``mode="code"``: job sizes as the code draws them (0.5-1.0 and 0.1-0.2 of a
  resource), the job of sequence index 0 never arrives, and finished jobs leave
  the running list as the code's remove-while-iterating loop lets them (a
  finished job right after a removed one stays one more step).
  ``mode="paper"``: section 4.1's sizes (0.25r-0.5r dominant, 0.05r-0.1r other,
  on 20 units per resource so that 0.05r is one unit), index 0 arrives at time 0
  and finished jobs always leave; a step's reward is charged for the jobs in the
  system while it passes (so a job arriving at time 0 is charged too), which
  makes the rewards add up to minus the slowdowns exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import gymnasium as gym
import numpy as np

from cloudsim.envs.base import TRAINING_SEEDS

__all__ = ["DeepRMParams", "DeepRMBatch", "DeepRMEnv", "deeprm_jobsets", "poisson_jobsets", "rate_for_load",
           "load_for_rate", "poisson_rate_for_load", "POISSON_JOBS", "ARRIVALS", "arrival_rate", "jobsets_at_load", "sjf_actions", "packer_actions",
           "tetris_star_actions", "fcfs_actions", "hrrn_actions", "random_actions", "DEEPRM_HEURISTICS",
           "MODES", "OBJECTIVES", "ENDS"]

MODES = ("code", "paper")
OBJECTIVES = ("slowdown", "completion", "makespan")
ENDS = ("all_done", "no_new_job")
SMALL_JOB_CHANCE = 0.8  # the code's bi-modal job lengths: 80 % small


@dataclass(frozen=True)
class DeepRMParams:
    """The environment's parameters, with the published code's defaults.

    Attributes:
        slots: M, the visible job slots (the code's ``num_nw``; the paper uses 10).
        horizon: T, the time steps the image looks ahead.
        res_slot: units per resource; None: 10 in ``mode="code"``, 20 in ``"paper"``.
        max_job_len: the longest job, in time steps (must be shorter than the horizon).
        max_job_size: the largest demand, in units; the width of a slot's block in the image.
        backlog: jobs the backlog holds; a job arriving to a full backlog is dropped.
        resources: how many resources each job asks for.
        simu_len: the time steps of a jobset in which a job may arrive.
        new_job_rate: the chance that a job arrives in a time step (Bernoulli).
        max_track_since_new: the cap of the steps-since-last-arrival counter.
        end: ``"all_done"`` (the episode ends when every job is done, or when the time
            passes ``max_time``) or ``"no_new_job"`` (it ends at time ``simu_len``).
        max_time: the forced end of an ``"all_done"`` episode (the code's
            ``episode_max_length``); its reference runs use 20,000, so that every
            episode ends with all jobs done.
        mode: ``"code"`` or ``"paper"``, see the module's docstring.
        objective: the reward: ``"slowdown"``, ``"completion"`` or ``"makespan"``.
    """

    slots: int = 5
    horizon: int = 20
    res_slot: int | None = None
    max_job_len: int = 15
    max_job_size: int = 10
    backlog: int = 60
    resources: int = 2
    simu_len: int = 50
    new_job_rate: float = 0.7
    max_track_since_new: int = 10
    end: str = "all_done"
    max_time: int = 20_000
    mode: str = "code"
    objective: str = "slowdown"

    def __post_init__(self) -> None:
        for name in ("slots", "horizon", "max_job_len", "max_job_size", "backlog", "resources", "simu_len",
                     "max_track_since_new", "max_time"):
            value = getattr(self, name)
            if not (isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1):
                raise ValueError(f"DeepRMParams.{name} must be a whole number >= 1, got {value!r}")
        if self.mode not in MODES:
            raise ValueError(f"DeepRMParams.mode must be one of {MODES}, got {self.mode!r}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"DeepRMParams.objective must be one of {OBJECTIVES}, got {self.objective!r}")
        if self.end not in ENDS:
            raise ValueError(f"DeepRMParams.end must be one of {ENDS}, got {self.end!r}")
        if self.res_slot is None:
            object.__setattr__(self, "res_slot", 10 if self.mode == "code" else 20)
        if not (isinstance(self.res_slot, (int, np.integer)) and self.res_slot >= 1):
            raise ValueError(f"DeepRMParams.res_slot must be a whole number >= 1, got {self.res_slot!r}")
        if self.max_job_len >= self.horizon:
            raise ValueError(f"max_job_len ({self.max_job_len}) must be shorter than the horizon ({self.horizon}): "
                             "a job is placed only where it ends inside the horizon")
        if self.max_job_size > self.res_slot:
            raise ValueError(f"max_job_size ({self.max_job_size}) exceeds res_slot ({self.res_slot}): "
                             "such a job could never be placed")
        if not (0.0 <= float(self.new_job_rate) <= 1.0):
            raise ValueError(f"new_job_rate must be a chance in [0, 1] (one arrival per step at most), "
                             f"got {self.new_job_rate!r}")

    # the job distribution ------------------------------------------------
    def length_ranges(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """(small, big) inclusive ranges of job lengths: the code's 1..len/5 and 2len/3..len."""
        n = self.max_job_len
        return (1, n // 5), (n * 2 // 3, n)

    def size_ranges(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """(dominant, other) inclusive ranges of a job's demand in units."""
        if self.mode == "code":
            s = self.max_job_size
            return (s // 2, s), (1, s // 5)
        r = self.res_slot  # section 4.1: 0.25r-0.5r and 0.05r-0.1r
        return (math.ceil(0.25 * r), r // 2), (math.ceil(0.05 * r), r // 10)

    def load_per_rate(self) -> float:
        """Expected load per resource of one arrival per step: E[len] E[demand] / res_slot."""
        (s_lo, s_hi), (b_lo, b_hi) = self.length_ranges()
        mean_len = SMALL_JOB_CHANCE * (s_lo + s_hi) / 2 + (1 - SMALL_JOB_CHANCE) * (b_lo + b_hi) / 2
        (d_lo, d_hi), (o_lo, o_hi) = self.size_ranges()
        mean_size = ((d_lo + d_hi) / 2 + (self.resources - 1) * (o_lo + o_hi) / 2) / self.resources
        return mean_len * mean_size / self.res_slot

    # the image's layout ----------------------------------------------------
    @property
    def backlog_width(self) -> int:
        return math.ceil(self.backlog / self.horizon)

    @property
    def image_shape(self) -> tuple[int, int]:
        width = (self.res_slot + self.max_job_size * self.slots) * self.resources + self.backlog_width + 1
        return self.horizon, width

    @property
    def compact_size(self) -> int:
        return (self.resources + 1) * (self.horizon + self.slots) + 1


def rate_for_load(load: float, params: DeepRMParams) -> float:
    """The arrival rate giving ``load`` (1.0 = 100 % of a resource) under ``params``' job sizes.

    Raises ValueError when the load needs more than one arrival per step.
    """
    per_rate = params.load_per_rate()
    rate = float(load) / per_rate
    if not (0 < load and rate <= 1.0):
        raise ValueError(f"load {load!r} is out of reach in mode {params.mode!r}: one arrival per step gives at most "
                         f"{per_rate:.3f} ({100 * per_rate:.1f} %); pick a load in (0, {per_rate:.3f}]"
                         + (" or the code's job sizes (mode 'code'), which reach 184 %" if params.mode == "paper"
                            else ""))
    return rate


def load_for_rate(rate: float, params: DeepRMParams) -> float:
    """The expected load per resource of arrival rate ``rate``."""
    return float(rate) * params.load_per_rate()


def deeprm_jobsets(seed: int, count: int, params: DeepRMParams) -> tuple[np.ndarray, np.ndarray]:
    """``count`` jobsets of ``params.simu_len`` steps, bit for bit as the code draws them from ``seed``.

    The code seeds numpy's legacy global generator and, for each of the
    ``count x simu_len`` sequence indices in turn, draws ``rand() < rate``; for
    an arriving job it draws ``rand() < 0.8`` (small or big), the length, the
    dominant resource, then each resource's demand in resource order. The same
    calls on a `numpy.random.RandomState` give the same numbers.

    Returns:
        ``lengths`` (count, simu_len) int, 0 where no job arrives, and
        ``sizes`` (count, simu_len, resources) int.
    """
    if not (isinstance(count, (int, np.integer)) and count >= 1):
        raise ValueError(f"count must be a whole number >= 1, got {count!r}")
    (s_lo, s_hi), (b_lo, b_hi) = params.length_ranges()
    (d_lo, d_hi), (o_lo, o_hi) = params.size_ranges()
    if not (1 <= s_lo <= s_hi and 1 <= b_lo <= b_hi):
        raise ValueError(f"max_job_len {params.max_job_len} is too short to draw the code's job lengths "
                         "(1..len/5 and 2len/3..len); use at least 5")
    if not (1 <= d_lo <= d_hi and 1 <= o_lo <= o_hi):
        raise ValueError(f"{params.mode} job sizes cannot be drawn in whole units with max_job_size "
                         f"{params.max_job_size} and res_slot {params.res_slot}; the defaults can")
    rng = np.random.RandomState(int(seed))
    n, r = int(count) * params.simu_len, params.resources
    lengths = np.zeros(n, dtype=np.int64)
    sizes = np.zeros((n, r), dtype=np.int64)
    rate = params.new_job_rate
    for k in range(n):
        if rng.rand() < rate:
            if rng.rand() < SMALL_JOB_CHANCE:
                lengths[k] = rng.randint(s_lo, s_hi + 1)
            else:
                lengths[k] = rng.randint(b_lo, b_hi + 1)
            dominant = rng.randint(0, r)
            for i in range(r):
                sizes[k, i] = rng.randint(d_lo, d_hi + 1) if i == dominant else rng.randint(o_lo, o_hi + 1)
    return lengths.reshape(count, params.simu_len), sizes.reshape(count, params.simu_len, r)


ARRIVALS = ("bernoulli", "poisson")
"""How jobs arrive: ``bernoulli`` (DeepRM: a job or none in each of ``simu_len`` steps,
`deeprm_jobsets`) or ``poisson`` (DeepRM_Plus: 5-50 jobs, Poisson arrivals, `poisson_jobsets`)."""


def arrival_rate(arrivals: str, load: float, params: DeepRMParams) -> float:
    """The rate (jobs per step) at which ``arrivals`` offer ``load``; ValueError, with the reason,
    for a load out of reach."""
    if arrivals == "poisson":
        return poisson_rate_for_load(load, params)
    if arrivals == "bernoulli":
        return rate_for_load(load, params)
    raise ValueError(f"arrivals must be one of {ARRIVALS}, got {arrivals!r}")


def jobsets_at_load(arrivals: str, seed: int, count: int, params: DeepRMParams, load: float
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``count`` jobsets offering ``load`` under ``params``' sizes, drawn from ``seed``:
    (lengths, sizes, arrival times or None for the code's form), ready for `DeepRMBatch`."""
    rate = arrival_rate(arrivals, load, params)
    if arrivals == "poisson":
        return poisson_jobsets(seed, count, params, rate)
    return (*deeprm_jobsets(seed, count, replace(params, new_job_rate=rate)), None)


POISSON_JOBS = (5, 50)
"""DeepRM_Plus's jobsets (section V-B) hold between 5 and 50 jobs."""


def poisson_rate_for_load(load: float, params: DeepRMParams) -> float:
    """The Poisson arrival rate (jobs per step) giving ``load`` under ``params``' job sizes; any load > 0."""
    if not (isinstance(load, (int, float, np.number)) and math.isfinite(load) and load > 0):
        raise ValueError(f"load must be a number > 0 (1.0 = 100 % of a resource), got {load!r}")
    return float(load) / params.load_per_rate()


def poisson_jobsets(seed: int, count: int, params: DeepRMParams, rate: float,
                    jobs: tuple[int, int] = POISSON_JOBS) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DeepRM_Plus's workload (section V-B): ``count`` jobsets of ``jobs[0]``..``jobs[1]`` jobs
    arriving as a Poisson process of ``rate`` jobs per step.

    Each jobset draws its number of jobs uniformly, then exponential gaps of
    mean ``1 / rate`` between arrivals (the first from time 0), each arrival at
    the whole step it falls in; lengths and sizes are drawn as DeepRM's code
    draws them (80 % short jobs; a random dominant resource), which are the
    sizes section V-B gives (0.5r-1r and 0.1r-0.2r with the code's ``mode``).

    Returns:
        ``lengths`` (count, jobs[1]), ``sizes`` (count, jobs[1], resources) and
        ``arrivals`` (count, jobs[1]); a jobset with fewer jobs is padded with
        length 0 at its last arrival. Give them to `DeepRMBatch` as they are.
    """
    lo, hi = jobs
    if not (isinstance(count, (int, np.integer)) and count >= 1):
        raise ValueError(f"count must be a whole number >= 1, got {count!r}")
    if not (isinstance(lo, (int, np.integer)) and isinstance(hi, (int, np.integer)) and 1 <= lo <= hi):
        raise ValueError(f"jobs must be (fewest, most) whole numbers with 1 <= fewest <= most, got {jobs!r}")
    if not (isinstance(rate, (int, float, np.number)) and math.isfinite(rate) and rate > 0):
        raise ValueError(f"rate must be a number of jobs per step > 0, got {rate!r}")
    (s_lo, s_hi), (b_lo, b_hi) = params.length_ranges()
    (d_lo, d_hi), (o_lo, o_hi) = params.size_ranges()
    rng = np.random.default_rng(int(seed))
    r = params.resources
    n = rng.integers(lo, hi + 1, size=count)
    gaps = rng.exponential(1.0 / rate, size=(count, hi))
    arrivals = np.floor(np.cumsum(gaps, axis=1)).astype(np.int64)
    short = rng.random((count, hi)) < SMALL_JOB_CHANCE
    lengths = np.where(short, rng.integers(s_lo, s_hi + 1, (count, hi)), rng.integers(b_lo, b_hi + 1, (count, hi)))
    dominant = rng.integers(0, r, (count, hi))
    sizes = np.where(np.arange(r)[None, None, :] == dominant[:, :, None],
                     rng.integers(d_lo, d_hi + 1, (count, hi, r)), rng.integers(o_lo, o_hi + 1, (count, hi, r)))
    absent = np.arange(hi)[None, :] >= n[:, None]
    lengths[absent] = 0
    sizes[absent] = 0
    last = arrivals[np.arange(count), n - 1]
    arrivals = np.where(absent, last[:, None], arrivals)
    return lengths, sizes, arrivals


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


def render_image(snap: dict[str, np.ndarray], params: DeepRMParams) -> np.ndarray:
    """Draw DeepRM's image from a `DeepRMBatch.snapshot` (leading batch axis).

    Row r is offset r. Per resource: the cluster's ``res_slot`` columns, whose
    first ``used`` cells of a row are occupied, then ``slots`` blocks of
    ``max_job_size`` columns (rows below the job's length, columns below its
    demand); then the backlog block (``ceil(backlog / T)`` columns filled row by
    row) and one column holding the steps since the last arrival / 10. The code
    paints each job in the cluster in its own shade; here occupancy is 1 (the
    code's image > 0).
    """
    return render_bits(snap, params).astype(np.float32) / _column_scale(params)


def render_bits(snap: dict[str, np.ndarray], params: DeepRMParams) -> np.ndarray:
    """`render_image` as integers (B, T, width) uint8: cells 0/1, the last column the steps since an arrival."""
    p = params
    T, R, M, S, C = p.horizon, p.resources, p.slots, p.max_job_size, p.res_slot
    used, slot_len, slot_size = snap["used"], snap["slot_len"], snap["slot_size"]
    B = used.shape[0]
    out = np.empty((B,) + p.image_shape, dtype=np.uint8)
    rows, cols = np.arange(T), np.arange(max(C, S))
    tall = rows[None, :, None, None] < slot_len[:, None, :, None]  # (B, T, M, 1)
    width = C + M * S
    for i in range(R):
        out[:, :, i * width:i * width + C] = cols[None, None, :C] < used[:, :, i, None]
        blocks = out[:, :, i * width + C:(i + 1) * width].reshape(B, T, M, S)
        np.logical_and(tall, cols[None, None, None, :S] < slot_size[:, None, :, i, None], out=blocks.view(bool))
    bw = p.backlog_width
    cells = rows[:, None] * bw + np.arange(bw)[None, :]
    out[:, :, R * width:R * width + bw] = cells[None] < snap["backlog_n"][:, None, None]
    out[:, :, -1] = snap["since_new"][:, None]
    return out


def _column_scale(params: DeepRMParams) -> np.ndarray:
    """Divide `render_bits` by this to get `render_image`: 1 everywhere but the last column's cap."""
    scale = np.ones(params.image_shape[1], dtype=np.float32)
    scale[-1] = params.max_track_since_new
    return scale


# --------------------------------------------------------------- the heuristics
def _argmax_or_void(score: np.ndarray, ok: np.ndarray, void: int) -> np.ndarray:
    """The first slot with the highest score among ``ok`` slots (the code's strict > in slot order), else void."""
    score = np.where(ok, score, -np.inf)
    return np.where(ok.any(1), score.argmax(1), void)


def sjf_actions(batch: DeepRMBatch) -> np.ndarray:
    """Shortest job first over the visible slots, among jobs that fit now for their whole length."""
    return tetris_star_actions(batch, knob=0.0)


def packer_actions(batch: DeepRMBatch) -> np.ndarray:
    """Packer (labelled Tetris in DeepRM's plots): the largest dot product of free resources now and demand."""
    return tetris_star_actions(batch, knob=1.0)


def tetris_star_actions(batch: DeepRMBatch, knob: float) -> np.ndarray:
    """Tetris*: ``knob x alignment + (1 - knob) / length``; knob 0 is SJF, 1 is Packer."""
    ok = batch.fits_now()
    align = np.einsum("br,bmr->bm", batch.avbl[:, 0, :], batch.slot_sizes()).astype(np.float64)
    with np.errstate(divide="ignore"):
        sjf = 1.0 / batch.slot_lengths().astype(np.float64)
    if knob == 0.0:
        score = sjf
    elif knob == 1.0:
        score = align
    else:
        score = knob * align + (1 - knob) * sjf
    return _argmax_or_void(score, ok, batch.params.slots)


def fcfs_actions(batch: DeepRMBatch) -> np.ndarray:
    """First come, first served: the oldest job (always in a slot: the backlog is FIFO and
    fills only when the slots are full) if it fits now, else void; the jobs behind it wait."""
    enter = batch.slot_enter_times()
    held = batch.slot >= 0
    oldest = np.where(held, enter * (batch.S + 1) + batch.slot, np.iinfo(np.int64).max).argmin(1)
    ok = batch.fits_now()[np.arange(batch.B), oldest]
    return np.where(held.any(1) & ok, oldest, batch.params.slots)


def hrrn_actions(batch: DeepRMBatch) -> np.ndarray:
    """Highest response ratio next: among slot jobs that fit now, the highest
    ``(time waited + length) / length`` (the first slot on ties), else void."""
    length = batch.slot_lengths()
    waited = batch.time[:, None] - batch.slot_enter_times()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (waited + length) / length
    return _argmax_or_void(ratio, batch.fits_now(), batch.params.slots)


def random_actions(batch: DeepRMBatch, rng: np.random.Generator) -> np.ndarray:
    """Uniform over the slots and void; an empty slot or a job that fits nowhere acts as void."""
    return rng.integers(0, batch.params.slots + 1, size=batch.B)


DEEPRM_HEURISTICS = {"sjf": sjf_actions, "packer": packer_actions, "fcfs": fcfs_actions, "hrrn": hrrn_actions}


class DeepRMEnv(gym.Env):
    """DeepRM's environment (``cloudsim/DeepRM-v0``): one episode of `DeepRMBatch`.

    Args:
        observation: ``"image"`` (Box(0, 1, (T, width)); 20 x 124 for 5 slots,
            20 x 224 for 10) or ``"compact"`` (the code's vector, 76 or 91 long).
        load: the expected load per resource (1.0 = 100 %); sets ``new_job_rate``
            (give one or the other).
        **params: `DeepRMParams` fields (``slots``, ``mode``, ``objective``, ...).

    Actions: Discrete(slots + 1): a slot's index allocates its job at the
    earliest offset it fits; ``slots`` (void), an empty slot or a job that fits
    nowhere moves time on by one step. Reward: see `DeepRMParams.objective`; 0
    for an allocation. ``info["time"]`` is the time step after the step and
    ``info["dropped"]`` the jobs dropped so far, ``info["action_mask"]`` the
    slots whose job can be placed now (and void); when the episode ends
    (``terminated``, or ``truncated`` past ``max_time``) ``info["jobs"]`` lists every
    job in arrival order with ``enter_time``, ``start_time``, ``finish_time`` and
    ``length``, and ``info["summary"]`` the averages.

    ``reset(options={"jobset": {"lengths": L, "sizes": S}})`` replays a jobset in
    the code's form (index t arrives at time t, length 0 = no job), and with
    ``"arrivals": A`` one whose job i arrives at time A[i] (`poisson_jobsets`);
    ``{"jobset_seed": s}`` the jobset `deeprm_jobsets` draws from ``s``;
    otherwise a seed is drawn from `TRAINING_SEEDS`.
    """

    metadata = {"render_modes": []}

    def __init__(self, observation: str = "image", load: float | None = None, **params) -> None:
        if observation not in ("image", "compact"):
            raise ValueError(f"observation must be 'image' or 'compact', got {observation!r}")
        self.params = DeepRMParams(**params)
        if load is not None:
            if "new_job_rate" in params:
                raise ValueError("give load or new_job_rate, not both")
            self.params = replace(self.params, new_job_rate=rate_for_load(load, self.params))
        self.observation = observation
        p = self.params
        self.action_space = gym.spaces.Discrete(p.slots + 1)
        if observation == "image":
            self.observation_space = gym.spaces.Box(0.0, 1.0, p.image_shape, dtype=np.float32)
        else:
            high = float(max(2 * p.horizon * p.res_slot, p.backlog, p.max_job_len))
            self.observation_space = gym.spaces.Box(0.0, high, (p.compact_size,), dtype=np.float32)
        self.batch: DeepRMBatch | None = None
        self.jobset_seed: int | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"jobset", "jobset_seed"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; use 'jobset' or 'jobset_seed'")
        if "jobset" in options:
            jobset = options["jobset"]
            if not (isinstance(jobset, dict) and {"lengths", "sizes"} <= set(jobset) <= {"lengths", "sizes", "arrivals"}):
                raise ValueError("options['jobset'] must be a dict with 'lengths' and 'sizes' (and 'arrivals', "
                                 "optional)")
            lengths, sizes, arrivals = jobset["lengths"], jobset["sizes"], jobset.get("arrivals")
            self.jobset_seed = None
        else:
            self.jobset_seed = int(options.get("jobset_seed", self.np_random.integers(*TRAINING_SEEDS)))
            lengths, sizes = deeprm_jobsets(self.jobset_seed, 1, self.params)
            arrivals = None
        self.batch = DeepRMBatch(self.params, lengths, sizes, arrivals)
        if self.batch.B != 1:
            raise ValueError(f"options['jobset'] holds {self.batch.B} jobsets; give one")
        return self._obs(), {"time": 0, "dropped": 0, "jobset_seed": self.jobset_seed,
                             "action_mask": self.action_masks()}

    def step(self, action):
        if self.batch is None or self.batch.done[0]:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        rewards, done = self.batch.step(np.array([int(action)]))
        b = self.batch
        info: dict[str, Any] = {"time": int(b.time[0]), "dropped": int(b.dropped[0].sum()),
                                "action_mask": self.action_masks()}
        terminated = bool(done[0] and not b.truncated[0])
        truncated = bool(b.truncated[0])
        if done[0]:
            info["jobs"] = b.jobs(0)
            info["summary"] = b.summary(0)
        return self._obs(), float(rewards[0]), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Slots whose job can be allocated at some offset now, and void (always)."""
        mask = np.ones(self.params.slots + 1, dtype=bool)
        if self.batch is not None:
            mask[:-1] = self.batch.placeable()[0]
        return mask

    def _obs(self) -> np.ndarray:
        return self.batch.image()[0] if self.observation == "image" else self.batch.compact()[0]
