"""Synthetic workloads: the papers' generators, and the Alibaba-like default workload.

Two families, each seeded so that the same arguments give the same jobs:

* **Bimodal jobs at a target load** (`deeprm_workload`, `poisson_workload`,
  `rlsk_workload`): single-task, single-instance jobs with a short/long
  duration mix and one dominant resource, as DeepRM (section 4.1) introduced
  and DeepRM_Plus (section V-B) and RLSK (section IV-A) reuse with other
  numbers (`BimodalJobs`). Time is in steps of 1; demands are in units of a
  resource pool of ``units`` per resource. Their loads are bounded (`load_range`):
  a step brings at most 2**53 arrivals (`MAX_RATE`), and the jobs arrive over
  at most about 2**27 steps (`MAX_STEPS`), each step being a draw of its own.
* **Alibaba-like jobs** (`alibaba_like`): the project's built-in workload, whose
  distributions are statistics of the real Alibaba samples, fitted by
  `fit_alibaba_like` and stored below as numbers so that no trace is needed:

  - from CloudSimPy's jobs.csv (v2017 batch jobs; 5,216 jobs, 31,756 tasks):
    job inter-arrival times exponential with the trace's mean gap, 11.47 s;
    tasks per job with the trace's frequencies of 1..11 tasks, and 12..40
    uniformly for the 8 % of jobs with 12 or more; instances per task
    log-normal (mean of log 1.708, sd 2.098), rounded, >= 1; duration (s)
    log-normal (mean of log 2.668, sd 1.519), >= 1; cpu (cores) 0.5 with
    probability 0.695, 1.0 with 0.292, else 0.4 .. 0.75, 2 or 3; memory
    (normalised) log-normal (mean of log -5.092, sd 0.399);
  - from the v2018 batch_task sample (selected_DAGs.csv; 55,874 tasks of
    2,120 DAG jobs; 2,108 load whole): the number of parents of a task, 0..18, with the
    sample's frequencies. A DAG job's tasks are in topological order and a
    task's parents are drawn uniformly among the tasks before it (the sample
    numbers its tasks in no topological order, so which earlier task is a
    parent is not fitted). The share of DAG jobs, ``dag_fraction``, is a
    choice, not a fit: the sample holds DAG jobs only.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from cloudsim.engine.checks import is_finite_number, is_whole
from cloudsim.engine.envs.deeprm.jobsets import MAX_SPAN, POISSON_JOBS
from cloudsim.engine.specs import EXACT_BOUND, ClusterSpec, JobBlock, JobSpec, TaskSpec

__all__ = [
    "BimodalJobs",
    "DEEPRM",
    "DEEPRM_PLUS",
    "LoadOutOfRange",
    "MAX_RATE",
    "MAX_STEPS",
    "RLSK",
    "alibaba_like",
    "bimodal_cluster",
    "deeprm_workload",
    "fit_alibaba_like",
    "load_problem",
    "load_range",
    "poisson_workload",
    "rlsk_workload",
]


# ------------------------------------------------------------------ bimodal jobs
@dataclass(frozen=True)
class BimodalJobs:
    """DeepRM's job distribution: a short/long duration mix and one dominant resource.

    Durations are whole time steps drawn uniformly from ``short`` (with
    probability ``short_fraction``) or ``long`` (both inclusive). Each job's
    dominant resource is picked uniformly; its demand is uniform in
    ``dominant`` and every other resource's in ``other``, both as fractions of
    one pool's capacity.
    """

    short_fraction: float
    short: tuple[int, int]
    long: tuple[int, int]
    dominant: tuple[float, float]
    other: tuple[float, float]
    resources: tuple[str, ...] = ("cpu", "memory")

    def mean_work(self) -> float:
        """Expected duration x expected demand of one resource, in pool-time units (steps x fraction)."""
        mean_duration = self.short_fraction * sum(self.short) / 2 + (1 - self.short_fraction) * sum(self.long) / 2
        share = 1 / len(self.resources)
        mean_demand = share * sum(self.dominant) / 2 + (1 - share) * sum(self.other) / 2
        return mean_duration * mean_demand

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(durations[n], demands[n, resources]) with demands as fractions of a pool."""
        short = rng.random(n) < self.short_fraction
        durations = np.where(short, rng.integers(self.short[0], self.short[1] + 1, n),
                             rng.integers(self.long[0], self.long[1] + 1, n))
        demands = rng.uniform(*self.other, (n, len(self.resources)))
        dominant = rng.integers(0, len(self.resources), n)
        demands[np.arange(n), dominant] = rng.uniform(*self.dominant, n)
        return durations.astype(float), demands


DEEPRM = BimodalJobs(0.8, (1, 3), (10, 15), (0.25, 0.5), (0.05, 0.1))
"""DeepRM section 4.1: 80 % of jobs last 1-3 t, the rest 10-15 t; dominant demand 0.25-0.5 r, other 0.05-0.1 r."""
DEEPRM_PLUS = BimodalJobs(0.8, (1, 3), (10, 15), (0.5, 1.0), (0.1, 0.2))
"""DeepRM_Plus section V-B: DeepRM's durations; primary demand 0.5-1 r, auxiliary 0.1-0.2 r."""
RLSK = BimodalJobs(0.8, (1, 60), (200, 300), (0.025, 0.05), (0.005, 0.01))
"""RLSK section IV-A: 80 % of jobs last 1-60 t, the rest 200-300 t; dominant 0.025-0.05 r, other 0.005-0.01 r."""


def bimodal_cluster(pools: int = 1, units: float = 10, spec: BimodalJobs = DEEPRM) -> ClusterSpec:
    """``pools`` resource pools (machines or RLSK's clusters) of ``units`` per resource."""
    return ClusterSpec.uniform(pools, {r: float(units) for r in spec.resources})


def _bimodal_jobs(arrivals: np.ndarray, spec: BimodalJobs, units: float, rng: np.random.Generator) -> list[JobSpec]:
    """One single-instance task per arrival time; demands scaled to ``units`` per pool."""
    durations, demands = spec.sample(rng, len(arrivals))
    demands = demands * units
    return [
        JobSpec(j, float(arrivals[j]), (TaskSpec(0, 1, dict(zip(spec.resources, demands[j].tolist())), durations[j]),))
        for j in range(len(arrivals))
    ]


DEEPRM_JOBS = 50  # jobs deeprm_workload makes when not told
# POISSON_JOBS: poisson_workload draws its job count in fewest..most when not told (DeepRM_Plus's sets, as its
# environment's jobsets hold: `cloudsim.engine.envs.deeprm.POISSON_JOBS`)
RLSK_JOBS = 1000  # jobs rlsk_workload makes when not told
RLSK_CLUSTERS = 3  # RLSK's clusters, over which its load is spread

MAX_RATE = float(EXACT_BOUND)
"""The most arrivals a step may bring: 2**53, the largest count float64 holds exactly (and below numpy's largest
Poisson mean, about 9.2e18)."""
MAX_STEPS = MAX_SPAN
"""The most steps (2**27 = 134,217,728) the jobs may be expected to arrive over, as for DeepRM's environment's
Poisson jobsets (`cloudsim.engine.envs.deeprm.jobsets.MAX_SPAN`): the generators draw each step's arrivals in
turn (one draw a step), and 2**27 draws take a few seconds; their submit times stay far below 2**53, where
float64 stops holding every whole step."""


class LoadOutOfRange(ValueError):
    """A target load outside `load_range`: the message says why and names the range."""


def _problem(load: float, jobs: int, spec: BimodalJobs, pools: int) -> str | None:
    """Why ``jobs`` jobs at ``load`` are out of reach of the generators (see `load_range`); None when they are not."""
    if not (is_finite_number(load) and load > 0):
        return "a load must be a finite number > 0 (a fraction of capacity, 0.7 = 70 %)"
    rate = load * pools / spec.mean_work()  # as the generators compute it
    if not rate <= MAX_RATE:
        return (f"that is {rate:.3g} arrivals per step, past 2**53 ({EXACT_BOUND}), the most a step's count "
                "holds exactly")
    steps = jobs / rate if rate > 0 else math.inf
    if not steps <= MAX_STEPS:
        return (f"{jobs} job(s) would arrive over about {steps:.3g} steps, past 2**27 ({MAX_STEPS}), the most the "
                "generator draws (one draw a step)")
    return None


def _bounds(jobs: int, spec: BimodalJobs, pools: int) -> tuple[float, float]:
    """(least, most) load that works, each in three significant digits (inside the exact bounds)."""
    least = jobs * spec.mean_work() / (pools * MAX_STEPS)
    most = MAX_RATE * spec.mean_work() / pools

    def rounded(bound: float, up: bool) -> float:
        step = 10.0 ** (math.floor(math.log10(bound)) - 2)
        value = (math.ceil if up else math.floor)(bound / step) * step
        for _ in range(100):
            value = float(f"{value:.3g}")
            if _problem(value, jobs, spec, pools) is None:
                return value
            value = value + step if up else value - step
        return bound

    return rounded(least, True), rounded(most, False)


_GENERATORS = {"deeprm": (DEEPRM, 1, DEEPRM_JOBS), "poisson": (DEEPRM_PLUS, 1, POISSON_JOBS[1]),
               "rlsk": (RLSK, RLSK_CLUSTERS, RLSK_JOBS)}
"""The bimodal generators by `traces.generate`'s name: (job distribution, pools, jobs when not told; poisson's
most)."""


def load_range(generator: str, jobs: int | None = None) -> tuple[float, float]:
    """(least, most) ``--load`` of the bimodal ``generator`` (deeprm, poisson or rlsk, on the pools
    `traces.generate` gives it) with ``jobs`` jobs (None: its default; poisson's most, 50), in three
    significant digits.

    A load sets the arrival rate, ``rate = load x pools / spec.mean_work()`` jobs per step. The rate is at
    most `MAX_RATE` (2**53 arrivals in a step), and the jobs' expected arrival span, ``jobs / rate`` steps,
    at most `MAX_STEPS` (2**27): the least load grows with the jobs.
    """
    spec, pools, default = _GENERATORS[generator]
    return _bounds(default if jobs is None else jobs, spec, pools)


def load_problem(generator: str, load: float, jobs: int | None = None) -> str | None:
    """Why the bimodal ``generator`` cannot make ``jobs`` jobs (None: its default) at ``load``, naming the
    loads that work (`load_range`); None when it can, or for a generator without a load."""
    if generator not in _GENERATORS:
        return None
    spec, pools, default = _GENERATORS[generator]
    return _range_problem(load, default if jobs is None else jobs, spec, pools)


def _range_problem(load: float, jobs: int, spec: BimodalJobs, pools: int) -> str | None:
    problem = _problem(load, jobs, spec, pools)
    if problem is None:
        return None
    least, most = _bounds(jobs, spec, pools)
    if not least <= most:
        return f"{problem}; no load works with {jobs} jobs: ask for fewer jobs"
    many = "job" if jobs == 1 else "jobs"
    return f"{problem}; give a load in [{least:g}, {most:g}] (with {jobs} {many}; the least grows with the jobs)"


def _check_load(load: float, jobs: int, spec: BimodalJobs, pools: int) -> None:
    if not (is_finite_number(load) and load > 0):
        raise ValueError(f"load must be a positive fraction of capacity (0.7 = 70 %), got {load!r}")
    if not (is_whole(jobs) and jobs >= 1):
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    problem = _range_problem(load, jobs, spec, pools)
    if problem is not None:
        raise LoadOutOfRange(f"load {load:g}: {problem}")


_BLOCK = 1 << 20  # steps drawn at a time


def _arrivals(draw, rate: float, jobs: int, rng: np.random.Generator) -> np.ndarray:
    """The first ``jobs`` arrival steps when ``draw(n)`` gives the next ``n`` steps' arrival counts from ``rng``;
    ``rng`` is left as after drawing, one step after another, up to the step that brings the last of them."""
    steps, counts = [], []
    made = start = 0
    while made < jobs:
        rest = jobs - made
        block = int(min(_BLOCK, 64 + 2 * rest / rate))
        state = rng.bit_generator.state
        drawn = np.minimum(draw(block), rest)  # capped: only the first jobs count, and no sum overflows
        end = int(np.searchsorted(np.cumsum(drawn), rest))  # the step that brings the last job, or block
        if end < block:  # draw again up to that step only: the stream goes on from there
            rng.bit_generator.state = state
            drawn = np.minimum(draw(end + 1), rest)
        hit = np.flatnonzero(drawn)
        steps.append(start + hit)
        counts.append(drawn[hit])
        made += int(drawn.sum())
        start += len(drawn)
    return np.repeat(np.concatenate(steps), np.concatenate(counts))[:jobs]


def deeprm_workload(
    load: float, jobs: int = DEEPRM_JOBS, seed: int = 0, *, units: float = 10, pools: int = 1,
    spec: BimodalJobs = DEEPRM,
) -> list[JobSpec]:
    """DeepRM's workload: ``jobs`` jobs arriving by a Bernoulli process at ``load``.

    Load is the expected demand per resource per step over capacity,
    ``rate x spec.mean_work() / pools``, as a fraction (0.7 = 70 %); the
    arrival rate per step follows from it. A step gets one job with
    probability ``rate``; above one job per step (loads beyond
    ``spec.mean_work() / pools``, 0.92 for DeepRM's numbers) a step gets
    ``floor(rate)`` jobs plus one more with probability ``rate - floor(rate)``,
    the Bernoulli process with the same mean. Run the jobs on
    ``bimodal_cluster(pools, units, spec)``. A load outside the range the
    generator can draw (`load_range`) raises `LoadOutOfRange` before any draw.
    """
    _check_load(load, jobs, spec, pools)
    rate = load * pools / spec.mean_work()
    rng = np.random.default_rng(seed)
    whole = int(rate)
    chance = rate - whole
    arrivals = _arrivals(lambda n: whole + (rng.random(n) < chance), rate, jobs, rng)
    return _bimodal_jobs(arrivals, spec, units, rng)


def poisson_workload(
    load: float, jobs: int | None = None, seed: int = 0, *, units: float = 10, pools: int = 1,
    spec: BimodalJobs = DEEPRM_PLUS,
) -> list[JobSpec]:
    """DeepRM_Plus's workload: Poisson arrivals, mean ``rate`` jobs per step, at ``load``.

    ``rate = load x pools / spec.mean_work()`` (see `deeprm_workload`); the
    number of jobs arriving in each step is Poisson(rate). ``jobs=None`` draws
    the job count uniformly from 5..50, as DeepRM_Plus's job sets; the load's
    range (`load_range`) is then the one of 50 jobs, whatever the seed draws.
    """
    _check_load(load, POISSON_JOBS[1] if jobs is None else jobs, spec, pools)
    rng = np.random.default_rng(seed)
    jobs = int(rng.integers(POISSON_JOBS[0], POISSON_JOBS[1] + 1)) if jobs is None else jobs
    rate = load * pools / spec.mean_work()
    arrivals = _arrivals(lambda n: rng.poisson(rate, n), rate, jobs, rng)
    return _bimodal_jobs(arrivals, spec, units, rng)


def rlsk_workload(
    load: float = 0.7, jobs: int = RLSK_JOBS, seed: int = 0, *, clusters: int = RLSK_CLUSTERS, units: float = 1
) -> list[JobSpec]:
    """RLSK's workload: DeepRM's Bernoulli process with RLSK's job numbers, over ``clusters`` pools.

    Load is relative to all clusters together (RLSK evaluates at about 70 %);
    run the jobs on ``bimodal_cluster(clusters, units, RLSK)``.
    """
    return deeprm_workload(load, jobs, seed, units=units, pools=clusters, spec=RLSK)


# --------------------------------------------------------------- Alibaba-like
# fit_alibaba_like(load_cloudsimpy(jobs.csv), load_alibaba_v2018(selected_DAGs.csv, status_policy="keep").jobs)
_MEAN_INTERARRIVAL = 11.47
_TASKS_PER_JOB = np.array([0.1237, 0.1603, 0.0961, 0.1026, 0.1313, 0.0546, 0.0581, 0.0266, 0.0387, 0.0387, 0.0895,
                           0.0798])
_LOG_INSTANCES = (1.708, 2.098)
_LOG_DURATION = (2.668, 1.519)
_LOG_MEMORY = (-5.092, 0.399)
_CPU_VALUES = np.array([0.5, 1.0, 0.4, 0.75, 0.55, 0.65, 0.7, 0.6, 2.0, 3.0])
_CPU_WEIGHTS = np.array([0.695, 0.2924, 0.0048, 0.0032, 0.0015, 0.0012, 0.0009, 0.0007, 0.0001, 0.0001])
# Tasks with 0, 1, ..., 18 parents among the v2018 sample's loaded DAG jobs.
_PARENTS_PER_TASK = np.array([14496, 32058, 4268, 2419, 403, 510, 209, 99, 102, 73, 37, 28, 20, 12, 5, 148, 83, 58, 56])


def _dag_parents(rng: np.random.Generator, n: int, ids: Sequence[int]) -> list[tuple[int, ...]]:
    """Parents for tasks in topological order: a fitted count, drawn among the earlier tasks (for task ``i``,
    ``min(count, i)`` of tasks ``0..i-1``, sorted), as ``rng.choice(i, size=k, replace=False)`` draws them.

    That draw is Floyd's algorithm (k bounded integers, 0..j for j = i - k .. i - 1, a value drawn twice
    taken as j) then a Fisher-Yates shuffle of the k (bounded integers 0..m for m = k - 1 .. 1); every
    bound is known before any draw, so one `Generator.integers` call draws them all for the whole job,
    the same numbers from the same stream (tests/test_synthetic.py holds it to ``choice``), 3x faster."""
    counts = _choice(rng, _PARENTS_CDF, n)
    ks = [min(int(counts[i]), i) for i in range(n)]
    bounds = [b for i, k in enumerate(ks) if k for b in (*range(i - k, i), *range(k - 1, 0, -1))]
    drawn = rng.integers(0, np.array(bounds, dtype=np.int64), endpoint=True).tolist() if bounds else []
    parents, at = [], 0
    for i, k in enumerate(ks):
        chosen, seen = [], set()
        for j in range(i - k, i):
            value = drawn[at] if drawn[at] not in seen else j
            at += 1
            seen.add(value)
            chosen.append(value)
        for m in range(k - 1, 0, -1):
            swap = drawn[at]
            at += 1
            chosen[swap], chosen[m] = chosen[m], chosen[swap]
        parents.append(tuple(ids[p] for p in sorted(chosen)))
    return parents


def _choice(rng: np.random.Generator, cdf: np.ndarray, size: int | None = None):
    """``rng.choice(len(p), size, p=p)`` given ``cdf`` (p's cumulative sum over its last value, `_cdf`): the
    first index whose cumulative probability is above a uniform draw, as numpy draws it, without its
    checks of ``p`` (8 us a call)."""
    return cdf.searchsorted(rng.random(size), side="right")


def _cdf(weights: np.ndarray) -> np.ndarray:
    """The cumulative distribution `_choice` reads, from weights (as ``choice`` normalises ``p``)."""
    cdf = (weights / weights.sum()).cumsum()
    cdf /= cdf[-1]
    return cdf


_PARENTS_CDF = _cdf(_PARENTS_PER_TASK)
_TASKS_CDF = _cdf(_TASKS_PER_JOB)
_CPU_CDF = _cdf(_CPU_WEIGHTS)


ALIBABA_LIKE_JOBS = 100  # jobs the alibaba-like generator makes when not told


def alibaba_like(
    jobs: int = ALIBABA_LIKE_JOBS, seed: int = 0, max_instances: int = 2000, dag_fraction: float = 0.5
) -> list[JobSpec]:
    """``jobs`` jobs drawn from Alibaba-like distributions; the same seed gives the same jobs.

    ``max_instances`` caps instances per task (the trace's tail reaches 36,326),
    which keeps small demo runs quick. A job of two or more tasks is a DAG job
    with probability ``dag_fraction`` (see the module docstring); with
    ``dag_fraction=0`` every task of a job is independent, as in v2017.
    `iter_alibaba_like` gives the same jobs one at a time.
    """
    return list(iter_alibaba_like(jobs, seed, max_instances, dag_fraction))


_SUBMIT_BLOCK = 65536  # inter-arrival times drawn at a time when streaming


def iter_alibaba_like(
    jobs: int = ALIBABA_LIKE_JOBS, seed: int = 0, max_instances: int = 2000, dag_fraction: float = 0.5,
    block: int | None = None,
):
    """The jobs of `alibaba_like`, the same ones, made one at a time: memory stays flat at any ``jobs``.

    The in-memory generator draws every inter-arrival time first, then each job's
    shape from the same random stream. Here the inter-arrival times come in blocks from
    a copy of that stream, and the job stream first skips past them, block by block.

    ``block``: yield `cloudsim.JobBlock` objects of that many jobs each (the last may hold
    fewer) instead of one `JobSpec` per job: the same jobs, as columns, which a streamed
    simulation reads without an object per job or task.
    """
    if jobs < 0:
        raise ValueError(f"jobs must be >= 0, got {jobs}")
    if not 0 <= dag_fraction <= 1:
        raise ValueError(f"dag_fraction must be in [0, 1], got {dag_fraction!r}")
    if block is not None and not (is_whole(block) and block >= 1):
        raise ValueError(f"block must be None (one JobSpec at a time) or a whole number of jobs >= 1, got {block!r}")
    rng = np.random.default_rng(seed)
    arrivals = np.random.default_rng(seed)  # the same stream: its first draws are the inter-arrival times
    for start in range(0, jobs, _SUBMIT_BLOCK):
        rng.exponential(_MEAN_INTERARRIVAL, min(_SUBMIT_BLOCK, jobs - start))
    dag_rng = np.random.default_rng([seed, 1])  # DAG shapes do not disturb the other draws
    draw = functools.partial(_alibaba_draws, rng, dag_rng, max_instances, dag_fraction)
    made = _AlibabaBlock() if block else None
    total, first = 0.0, None
    for start in range(0, jobs, _SUBMIT_BLOCK):
        # A running sum carried over blocks adds in the same order as one cumsum over all.
        steps = np.cumsum(np.concatenate(([total], arrivals.exponential(_MEAN_INTERARRIVAL,
                                                                       min(_SUBMIT_BLOCK, jobs - start)))))[1:]
        total = steps[-1]
        submit = np.floor(steps)
        if first is None:
            first = submit[0]
        submit -= first
        for offset in range(len(submit)):
            job_id, drawn = start + offset + 1, draw()
            if made is None:
                yield _alibaba_job(job_id, float(submit[offset]), *drawn)
                continue
            made.add(job_id, float(submit[offset]), *drawn)
            if len(made.ids) == block:
                yield made.block()
                made = _AlibabaBlock()
    if made is not None and made.ids:
        yield made.block()


def _alibaba_draws(rng: np.random.Generator, dag_rng: np.random.Generator, max_instances: int,
                   dag_fraction: float) -> tuple:
    """One job's tasks as drawn: instances, durations, cpu and memory per task, and each task's parents (the
    positions of earlier tasks), or None for a job without a DAG."""
    n = int(_choice(rng, _TASKS_CDF)) + 1
    if n == len(_TASKS_PER_JOB):
        n = int(rng.integers(12, 41))
    instances = np.clip(np.rint(rng.lognormal(*_LOG_INSTANCES, n)), 1, max_instances).astype(np.int64)
    duration = np.maximum(1.0, np.round(rng.lognormal(*_LOG_DURATION, n), 3))
    cpu = _CPU_VALUES[_choice(rng, _CPU_CDF, n)]
    memory = np.round(rng.lognormal(*_LOG_MEMORY, n), 6)
    dag = n > 1 and dag_rng.random() < dag_fraction
    return instances, duration, cpu, memory, _dag_parents(dag_rng, n, range(n)) if dag else None


def _alibaba_job(job_id: int, submit: float, instances: np.ndarray, duration: np.ndarray, cpu: np.ndarray,
                 memory: np.ndarray, parents: list[tuple[int, ...]] | None) -> JobSpec:
    """A drawn job (`_alibaba_draws`) as a JobSpec: task ids 1, 2, ..."""
    return JobSpec(job_id, submit, tuple(
        TaskSpec(id=t + 1, instances=int(instances[t]), demand={"cpu": float(cpu[t]), "memory": float(memory[t])},
                 duration=float(duration[t]), parents=() if parents is None else tuple(p + 1 for p in parents[t]))
        for t in range(len(instances))))


class _AlibabaBlock:
    """Drawn jobs (`_alibaba_draws`) gathered into a `cloudsim.JobBlock`: the jobs `_alibaba_job` makes."""

    def __init__(self) -> None:
        self.ids: list[int] = []
        self.submit: list[float] = []
        self.rows = 0  # the tasks gathered so far
        self.sizes: list[int] = []
        self.columns: list[tuple] = []
        self.parent_counts: list[int] = []
        self.parents: list[int] = []

    def add(self, job_id, submit, instances, duration, cpu, memory, parents) -> None:
        first = self.rows
        self.rows += len(instances)
        self.ids.append(job_id)
        self.submit.append(submit)
        self.sizes.append(len(instances))
        self.columns.append((instances, duration, cpu, memory))
        for t in range(len(instances)):
            mine = () if parents is None else parents[t]
            self.parent_counts.append(len(mine))
            self.parents.extend(first + p for p in mine)

    def block(self) -> JobBlock:
        instances, duration, cpu, memory = (np.concatenate(column) for column in zip(*self.columns))
        return JobBlock(tuple(self.ids), np.array(self.submit), np.concatenate(([0], np.cumsum(self.sizes))),
                        tuple(t + 1 for size in self.sizes for t in range(size)), instances, ("cpu", "memory"),
                        np.column_stack([cpu, memory]), duration,
                        np.concatenate(([0], np.cumsum(self.parent_counts))).astype(np.int64),
                        np.array(self.parents, dtype=np.int64))


def fit_alibaba_like(jobs: Sequence[JobSpec], dag_jobs: Sequence[JobSpec] = ()) -> dict:
    """The statistics `alibaba_like` is built on, measured on loaded jobs.

    ``jobs``: independent-task jobs (CloudSimPy's jobs.csv); ``dag_jobs``: DAG
    jobs (the v2018 sample). Returns the mean inter-arrival time, the
    frequencies of 1..11 and of 12+ tasks per job, (mean, sd) of the logs of
    instances, durations and memory, the cpu values with their frequencies, and
    the counts of tasks with 0, 1, 2, ... parents.
    """
    ordered = sorted(jobs, key=lambda j: j.submit_time)
    tasks = [t for j in ordered for t in j.tasks]
    if len(ordered) < 2 or not tasks:
        raise ValueError("fitting needs at least two jobs")
    sizes = np.array([len(j.tasks) for j in ordered])
    per_job = [float(np.mean(sizes == k)) for k in range(1, 12)] + [float(np.mean(sizes >= 12))]

    def log_stats(values) -> tuple[float, float]:
        logs = np.log(np.asarray(values, dtype=float))
        return float(logs.mean()), float(logs.std())

    cpu_values, cpu_counts = np.unique([t.demand.get("cpu", 0.0) for t in tasks], return_counts=True)
    order = np.argsort(-cpu_counts, kind="stable")
    parents = np.bincount([len(t.parents) for j in dag_jobs for t in j.tasks], minlength=1)
    return {
        "mean_interarrival": (ordered[-1].submit_time - ordered[0].submit_time) / (len(ordered) - 1),
        "tasks_per_job": per_job,
        "log_instances": log_stats([t.instances for t in tasks]),
        "log_duration": log_stats([t.nominal_duration for t in tasks]),
        "log_memory": log_stats([t.demand.get("memory", 0.0) for t in tasks]),
        "cpu_values": cpu_values[order].tolist(),
        "cpu_weights": (cpu_counts[order] / len(tasks)).tolist(),
        "parents_per_task": parents.tolist(),
    }
