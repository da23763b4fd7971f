"""From a `RunConfig` to episodes: load or generate the workload, build the cluster, slice episodes,
and refuse, before anything is simulated, a workload that cannot run on that cluster.

This is where the loaders (`traces`) and the engine meet; the checks here need the
workload itself (how many jobs it has, what its tasks demand, when they arrive), so
they run right after loading and before the first episode starts.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass, field
from typing import Callable

from cloudsim.run.config import (
    ConfigError, DEFAULT_CAPACITY, DEFAULT_MACHINES, RunConfig, UNLOADED_GENERATORS, WorkloadConfig
)
from cloudsim.run.config.fields import span_text
from cloudsim.engine.simulation import STREAM_BLOCK
from cloudsim.engine.specs import ClusterSpec, JobSpec, MachineEvent, UnschedulableTaskError, check_jobs_fit
from traces import (
    EmptyWorkloadError,
    JobStream,
    Workload,
    generate,
    iter_alibaba_like,
    generator_skips,
    read_in_blocks,
    rebase,
)
from traces.alibaba import shift_events
from traces.formats import TRACE_FORMATS
from traces.load import LoadOutOfRange, load_limits, load_that_works, time_scale
from traces.synthetic import ALIBABA_LIKE_JOBS

__all__ = ["Episode", "ResolvedWorkload", "STREAMED_NOTES", "TRACE_BLOCK", "check_episodes", "episodes",
           "cluster_option_of", "resolve_workload", "streams_jobs"]

TRACE_BLOCK = 10_000
"""Jobs a streamed replay loads from a trace at a time (`traces.read_in_blocks`)."""

STREAMED_NOTES = ("truncated_task_names", "instance_rows_unknown_job")
"""The loaders' notes that count the whole trace; the others count the jobs loaded, which a
streamed replay loads in its worker, block by block, so they are not reported for it."""

MAX_TICK_WAKES = 100_000_000
"""A tick that wakes the scheduler more often than this before the last arrival is refused:
at a few microseconds a wake, the run would take longer than anyone waits for."""

WARN_EXPECTED_TRIES = 10.0
MAX_EXPECTED_TRIES = 1e6
"""With re-queued failures, an instance of duration D needs exp(D / mtbf) tries on average; above
`WARN_EXPECTED_TRIES` the run is warned about (it may take long), above `MAX_EXPECTED_TRIES` it is
refused (it would not end in any useful time)."""


@dataclass
class ResolvedWorkload:
    """The workload of a run and the cluster it runs on.

    Attributes:
        workload: the jobs (only those of the requested range when the loader can
            select them), with the skip counts and notes of the loader.
        cluster: the machines.
        events: machine events in trace time (empty without --machine-events).
        first_job: the submit-order index of ``workload.jobs[0]`` in the whole workload.
        total_jobs: jobs in the whole workload (within --window), for range checks.
        machine_skipped, machine_notes: what the machine table's loader counted.
    """

    workload: Workload
    cluster: ClusterSpec
    events: list[MachineEvent] = field(default_factory=list)
    first_job: int = 0
    total_jobs: int = 0
    machine_skipped: dict[str, int] = field(default_factory=dict)
    machine_notes: dict[str, int] = field(default_factory=dict)


@dataclass
class Episode:
    """One episode's jobs, rebased so that its first job arrives at t=0.

    ``label`` is the chunk index, ``"A:B"`` for a job range or ``"all"``;
    ``origin`` is the trace time that became t=0 (machine events are shifted by it).
    ``offered_load``: with ``--load`` on a trace, the load its scaled submit times offer (`traces.load`).
    """

    label: int | str
    jobs: list[JobSpec]
    origin: float
    events: list[MachineEvent]
    offered_load: float | None = None


def _selected_range(config: WorkloadConfig) -> tuple[int, int | None] | None:
    """The submit-order job range the episodes need, or None for every job."""
    if config.jobs is not None:
        return config.jobs
    if config.chunk_size is not None and config.chunks is not None:
        first, last = config.chunks
        return first * config.chunk_size, None if last is None else last * config.chunk_size
    return None


def _cluster(config: RunConfig, generated: ClusterSpec | None) -> ClusterSpec:
    machines, capacity = config.cluster.machines, config.cluster.capacity
    if generated is not None and machines is None and capacity is None:
        return generated  # the generator's paper's cluster
    if generated is not None:
        default_capacity = dict(zip(generated.resources, generated.capacities[0]))
        return ClusterSpec.uniform(machines or generated.machines, capacity or default_capacity)
    return ClusterSpec.uniform(DEFAULT_MACHINES if machines is None else machines, capacity or DEFAULT_CAPACITY)


def streams_jobs(config: object) -> bool:
    """Whether a replay reads its jobs as it runs (`traces.JobStream`) instead of loading them first:
    with --stream, one episode (no --chunk-size), from a trace whose format streams (the Alibaba ones) or the
    alibaba-like generator (all of its jobs)."""
    source, report = config.workload, getattr(config, "report", None)  # training configs have no report
    if report is None or not report.stream or source.chunk_size is not None:
        return False
    if source.is_generator:  # the whole generated workload (a --jobs range of it is made in memory)
        return source.generator_name == "alibaba-like" and source.jobs is None
    return TRACE_FORMATS[source.trace_format].streams


def resolve_workload(config: RunConfig, *, load: float | None = None, seed: int | None = None) -> ResolvedWorkload:
    """Load (or generate) the workload and build its cluster.

    ``load`` and ``seed`` override the configuration's for one generated
    workload (compare runs a generator at several loads and seeds). When
    `streams_jobs`, the workload's ``jobs`` is a `traces.JobStream` of the
    selected jobs, read only when a run iterates it.
    """
    source = config.workload
    lazy = streams_jobs(config)
    if source.is_generator:
        seed = source.seed if seed is None else seed
        load = source.effective_load if load is None else load
        described = {"generator": source.generator_name, "seed": seed}
        if source.generator_name not in UNLOADED_GENERATORS:
            described["load"] = load
        if lazy:  # alibaba-like: the generator streams in the run; no job is made here
            count = source.synthetic_jobs if source.synthetic_jobs is not None else ALIBABA_LIKE_JOBS
            jobs = JobStream(count, functools.partial(iter_alibaba_like, count, seed, block=STREAM_BLOCK))
            generated = generate(source.generator_name, 0, seed, load)[1]  # its cluster only
        else:
            jobs, generated = generate(source.generator_name, source.synthetic_jobs, seed, load)
        workload = Workload(jobs, skipped=generator_skips(source.generator_name), source=described)
        return ResolvedWorkload(workload, _cluster(config, generated), total_jobs=len(jobs))

    selection = _selected_range(source)
    first_job = 0
    spec = TRACE_FORMATS[source.trace_format]
    options = spec.loader_options({"instances": source.instances, "status_policy": source.effective_status_policy,
                                   "window": source.window, "cache": source.cache})
    if lazy:
        workload, first_job = _streamed_trace(source, functools.partial(spec.load, source.source, **options))
        total = workload.total_jobs
    elif spec.selects_jobs:
        try:
            workload = spec.load(source.source, **options, jobs=selection)
        except EmptyWorkloadError as err:
            if selection is None:
                raise
            # The range starts past the last job: the option is what to change, not the file.
            option, value = ("--jobs", source.jobs) if source.jobs is not None else ("--chunks", source.chunks)
            raise ConfigError(option, span_text(value), str(err)) from None
        total = workload.total_jobs
        first_job = 0 if selection is None else selection[0]
    else:
        workload = spec.load(source.source, **options)
        total = len(workload.jobs)
    cluster = config.cluster
    logged = (spec.logged_cluster(source.source) if spec.logged_cluster is not None
              and (cluster.machines is None or cluster.capacity is None) else None)
    resolved = ResolvedWorkload(workload, _cluster(config, logged), first_job=first_job, total_jobs=total)
    if source.machine_table is not None:
        table = spec.machines(source.machine_table, **({"softerror_downtime": source.softerror_downtime}
                                                       if "softerror_downtime" in spec.takes else {}))
        if cluster.machines is not None:  # a smaller cluster of the table's own machine mix
            if cluster.machines > table.cluster.machines:
                raise ConfigError("--machines", cluster.machines,
                                  f"{source.machine_table} has {table.cluster.machines} machines; ask for at most that")
            table = table.sample(cluster.machines, source.seed)
        resolved.cluster = table.cluster
        resolved.events = list(table.events) if source.machine_events else []
        resolved.machine_skipped = dict(table.skipped)
        resolved.machine_notes = dict(table.notes)
    return resolved


def _streamed_trace(source: WorkloadConfig, load: Callable[..., Workload]) -> tuple[Workload, int]:
    """(the workload with a `JobStream` of the selected jobs, the first one's submit-order index):
    only the first job (and the first selected one) is loaded here, for the trace's counts and
    the stream's origin. ``load(jobs=, as_blocks=)``: the trace's loader with the run's options."""
    head = load(jobs=(0, 1))  # EmptyWorkloadError when the trace (or window) has no replayable job
    total = head.total_jobs
    start, stop = 0, total
    if source.jobs is not None:
        start, stop = _check_range("--jobs", source.jobs, total, "in submit order", "jobs")
        if start:
            head = load(jobs=(start, start + 1))
    # The stream reads its jobs as JobBlocks (columns, no object per job or task), but where per-instance
    # durations (--instances) need JobSpecs.
    blocks = functools.partial(load, as_blocks=source.instances is None)
    stream = JobStream(stop - start, functools.partial(read_in_blocks, blocks, start, stop, TRACE_BLOCK),
                       origin=head.jobs[0].submit_time)
    notes = {k: v for k, v in head.notes.items() if k in STREAMED_NOTES}
    return Workload(stream, head.skipped, head.source, notes, total_jobs=total), start


def _check_range(option: str, value: tuple[int, int | None], count: int, what: str, unit: str) -> tuple[int, int]:
    first, last = value
    last = count if last is None else last
    if first >= count or last > count:
        raise ConfigError(option, span_text(value), f"the workload has {count} {unit if count != 1 else unit[:-1]} "
                          f"({what}); ask for a range within 0:{count}" if count else f"the workload has no {unit}")
    return first, last


def episodes(config: RunConfig, resolved: ResolvedWorkload, tick: float | None = None) -> list[Episode]:
    """The episodes the options ask for: one job range, chunks, or the whole workload; with ``--load`` on a
    trace, each with its submit times scaled to that offered load (`traces.load`). ``tick``: the scheduler's
    tick the episodes run with (a load that puts every arrival in the first tick is refused, as is one whose
    factor leaves what float64 holds: `traces.load.LoadOutOfRange`, naming the loads that work)."""
    made = _episodes(config, resolved)
    if config.workload.is_generator or config.workload.load is None:
        return made
    target, cluster, scaled = config.workload.load, resolved.cluster, []
    for episode in made:
        try:
            scaled.append(_at_load(target, cluster, episode, tick))
        except LoadOutOfRange as error:  # named with a load that every episode takes
            works = load_that_works(_limits(made, cluster), target) if len(made) > 1 else None
            advice = str(error) if works is None else (f"{error.problem}; {works}, which each of the {len(made)} "
                                                       f"episodes takes ({error.limits.offers})")
            raise ConfigError("--load", target, f"episode {episode.label}: {advice}") from None
    return scaled


def _limits(made: list[Episode], cluster: ClusterSpec) -> list:
    """The `traces.load.Limits` of the episodes that have an offered load (the others are refused on their own)."""
    found = []
    for episode in made:
        try:
            found.append(load_limits(episode.jobs, cluster))
        except ValueError:
            pass
    return found


def _at_load(target: float, cluster: ClusterSpec, episode: Episode, tick: float | None) -> Episode:
    """The episode with its submit times (from its first, at 0) multiplied by the factor that makes its
    offered load ``target``; machine events keep their times. Raises `LoadOutOfRange` as `time_scale` does."""
    try:
        scaling = time_scale(episode.jobs, cluster, target)
    except LoadOutOfRange:
        raise
    except ValueError as error:
        raise ConfigError("--load", target, f"episode {episode.label}: {error}") from None
    factor = scaling.factor
    if tick is not None and scaling.span < tick:
        raise ConfigError("--load", target, f"episode {episode.label}: every job would arrive within the first tick "
                          f"({tick:g}): the scheduler would see them all at once; ask for a lower load, or a shorter "
                          "--tick (a replay also runs event-driven without --tick)")
    if isinstance(episode.jobs, JobStream):  # scaled as it is read
        jobs = JobStream(len(episode.jobs), episode.jobs.read, episode.jobs.origin, scale=factor)
    else:
        jobs = [job.arriving_at(job.submit_time * factor) for job in episode.jobs]
    return dataclasses.replace(episode, jobs=jobs, offered_load=target)


def _episodes(config: RunConfig, resolved: ResolvedWorkload) -> list[Episode]:
    source = config.workload
    if isinstance(resolved.workload.jobs, JobStream):  # one streamed episode (see streams_jobs)
        stream, total = resolved.workload.jobs, resolved.total_jobs
        label = "all"
        if source.jobs is not None:
            start, stop = _check_range("--jobs", source.jobs, total, "in submit order", "jobs")
            label = f"{start}:{stop}"
        events = shift_events(resolved.events, stream.origin) if resolved.events else []
        return [Episode(label, stream, stream.origin, events)]
    ordered = sorted(resolved.workload.jobs, key=lambda job: job.submit_time)  # stable: file order on ties
    offset = resolved.first_job  # jobs before it were not loaded

    def episode(label: int | str, start: int, stop: int) -> Episode:
        jobs = ordered[start - offset: stop - offset]
        origin = jobs[0].submit_time if jobs else 0.0
        events = shift_events(resolved.events, origin) if resolved.events else []
        return Episode(label, rebase(jobs), origin, events)

    total = resolved.total_jobs
    if source.jobs is not None:
        start, stop = _check_range("--jobs", source.jobs, total, "in submit order", "jobs")
        return [episode(f"{start}:{stop}", start, stop)]
    if source.chunk_size is not None:
        size = source.chunk_size
        count = math.ceil(total / size)
        first, last = _check_range("--chunks", source.chunks or (0, None), count,
                                   f"{total} jobs in chunks of {size}", "chunks")
        return [episode(k, k * size, min((k + 1) * size, total)) for k in range(first, last)]
    if total == 0:
        return [Episode("all", [], 0.0, [])]
    return [episode("all", 0, total)]


def cluster_option_of(config: RunConfig, cluster: ClusterSpec) -> tuple[str, str]:
    """(the option that set the machines, its value): where a task too large for them is fixed."""
    nodes = getattr(config, "nodes", None)
    if config.federated and nodes is not None and nodes > 1:  # RLSK's clusters split into --nodes
        return "--nodes", str(nodes)
    if config.workload.machine_table is not None:
        return "--machine-table", config.workload.machine_table
    return "--capacity", ",".join(f"{r}={c:g}" for r, c in zip(cluster.resources, cluster.capacities[0]))


def check_episodes(config: RunConfig, cluster: ClusterSpec, runs: list[Episode]) -> list[str]:
    """Refuse episodes that cannot run on ``cluster`` or would run for ever; return warnings.

    Raises `ConfigError` naming the option to change: a resource the cluster
    lacks or a task no machine can hold (--capacity, or --machine-table), a tick
    so small against the arrivals that the run would not end in any useful time
    (--tick), random failures so frequent that re-queued instances would never
    finish (--mtbf). Warns when they would restart long instances many times over.
    """
    # A streamed episode's jobs are read as it runs: the engine checks each block as it comes
    # (UnschedulableTaskError names the task), and the checks below that need every job are skipped.
    runs = [run for run in runs if not isinstance(run.jobs, JobStream)]
    cluster_option, shown = cluster_option_of(config, cluster)
    for run in runs:
        try:
            check_jobs_fit(cluster, run.jobs)
        except UnschedulableTaskError as err:
            raise ConfigError(cluster_option, shown, str(err)) from None
        except ValueError as err:  # a resource the cluster lacks
            raise ConfigError(cluster_option, shown, str(err)) from None
    warnings = []
    span = max((job.submit_time for run in runs for job in run.jobs), default=0.0)
    tick = config.simulation.tick
    if tick is not None and span / tick > MAX_TICK_WAKES:
        raise ConfigError("--tick", tick, f"the last job arrives at t={span:g}, so the scheduler would wake "
                          f"{span / tick:.3g} times before it; use a tick of at least {span / MAX_TICK_WAKES:.3g} "
                          f"(1 for CloudSimPy-compatible replays) or leave --tick out (event-driven)")
    mtbf = config.simulation.mtbf
    if mtbf is not None and config.simulation.on_failure == "requeue":
        longest = max((task.longest_duration for run in runs for job in run.jobs for task in job.tasks), default=0.0)
        tries = math.exp(min(longest / mtbf, 700.0))
        shown = f"about {tries:.3g}" if longest / mtbf < 700 else "more than 1e300"
        problem = (f"the longest instance lasts {longest:g}, so with --on-failure requeue it needs {shown} "
                   f"tries on average (exp({longest:g}/{mtbf:g}))")
        fix = "raise --mtbf well above the durations or use --on-failure fail"
        if tries > MAX_EXPECTED_TRIES:
            raise ConfigError("--mtbf", mtbf, f"{problem}: the run would not end; {fix}")
        if tries > WARN_EXPECTED_TRIES:
            warnings.append(f"--mtbf {mtbf:g}: {problem} and the run may take long; {fix}")
    return warnings

