"""DeepRM's workloads: its Bernoulli jobsets (`deeprm_jobsets`), DeepRM_Plus's Poisson ones
(`poisson_jobsets`), and either at a load (`jobsets_at_load`)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from cloudsim.engine.checks import check_number, is_finite_number, is_whole
from cloudsim.engine.envs.deeprm.params import SMALL_JOB_CHANCE, DeepRMParams, rate_for_load


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
    check_number("count", count, whole=True, at_least=1)
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


MAX_SPAN = 2**27
"""The longest expected arrival span of a Poisson jobset, ``jobs / rate`` steps (as long as the cloudsim
generators draw too, `traces.synthetic.MAX_STEPS`): its arrival steps stay far inside what float64 and int64 hold."""


def poisson_rate_for_load(load: float, params: DeepRMParams, jobs: int = POISSON_JOBS[1]) -> float:
    """The Poisson arrival rate (jobs per step) giving ``load`` under ``params``' job sizes; ValueError for a
    load so low that ``jobs`` jobs would arrive over more than `MAX_SPAN` steps, naming the least load."""
    if not (is_finite_number(load) and load > 0):
        raise ValueError(f"load must be a number > 0 (1.0 = 100 % of a resource), got {load!r}")
    rate = float(load) / params.load_per_rate()
    if jobs / rate > MAX_SPAN:
        least = _least_load(jobs, params)
        raise ValueError(f"load {load:g} is too low for Poisson arrivals: a jobset of {jobs} jobs would arrive over "
                         f"about {jobs / rate:.3g} steps, past 2**27 ({MAX_SPAN}); pick a load of at least {least:g}")
    return rate


def _least_load(jobs: int, params: DeepRMParams) -> float:
    """The least load, in three significant digits, at which ``jobs`` jobs arrive within `MAX_SPAN` steps."""
    per_rate = params.load_per_rate()
    bound = jobs * per_rate / MAX_SPAN
    step = 10.0 ** (math.floor(math.log10(bound)) - 2)
    value = float(f"{math.ceil(bound / step) * step:.3g}")
    while jobs / (value / per_rate) > MAX_SPAN:  # float rounding can leave the shown digits a hair low
        value = float(f"{value + step:.3g}")
    return value


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
    check_number("count", count, whole=True, at_least=1)
    if not (is_whole(lo) and is_whole(hi) and 1 <= lo <= hi):
        raise ValueError(f"jobs must be (fewest, most) whole numbers with 1 <= fewest <= most, got {jobs!r}")
    if not (is_finite_number(rate) and rate > 0):
        raise ValueError(f"rate must be a number of jobs per step > 0, got {rate!r}")
    if hi / rate > MAX_SPAN:
        raise ValueError(f"rate {rate:g} is too low: {hi} jobs would arrive over about {hi / rate:.3g} steps, past "
                         f"2**27 ({MAX_SPAN}); give at least {hi / MAX_SPAN:g} jobs per step")
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
