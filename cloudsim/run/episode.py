"""One run of one broker on one episode: the unit of work every command hands to the `Runner`.

`RunSpec` is small and picklable, so it travels to worker processes and Ray
workers; a generated workload is made where it runs, from its config, load and
seed, instead of being shipped.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

from agents import LEARNED, Windowed, make_broker, make_federated_broker
from cloudsim.envs.rlsk import federation_metrics
from cloudsim.faults import RandomFaults
from cloudsim.metrics import EpisodeResult
from cloudsim.run.config import ConfigError, RunConfig
from cloudsim.run.workload import cluster_option_of, resolve_workload
from cloudsim.simulation import Simulation
from cloudsim.specs import MachineEvent, UnschedulableTaskError
from cloudsim.specs import ClusterSpec, JobSpec
from traces import JobStream

__all__ = ["RunOutcome", "RunSpec", "RunWarning", "build_brokers", "run_one"]


class RunWarning(UserWarning):
    """Something about a run that works but may not be what was meant (printed, never fatal)."""


@dataclass(frozen=True)
class RunSpec:
    """One broker on one episode.

    Either ``jobs`` and ``cluster`` are given, or the workload is generated in
    the worker from ``config`` at ``load`` with ``seed`` (``jobs`` None).
    ``keep``: "result" returns the whole `EpisodeResult` (for --out), "curve"
    the machines' utilisation over time (for plots), None only the summary.
    ``stream_to``: a folder to stream the run's tables into (`cloudsim.streaming`).
    """

    broker: str
    seed: int
    config: RunConfig
    label: Any = None
    load: float | None = None
    jobs: list[JobSpec] | None = None
    cluster: ClusterSpec | None = None
    events: list[MachineEvent] = field(default_factory=list)
    keep: str | None = None
    progress: bool = False
    stream_to: str | None = None


@dataclass
class RunOutcome:
    """A run's summary numbers (`EpisodeResult.summary` and ``wall_s``), and what `RunSpec.keep` asked for."""

    summary: dict
    result: EpisodeResult | None = None
    curve: Any = None


def run_one(spec: RunSpec) -> RunOutcome:
    """Simulate one run under the configuration's trigger mode, failure policy and faults."""
    started = time.perf_counter()
    if spec.jobs is None:
        resolved = resolve_workload(spec.config, load=spec.load, seed=spec.seed)
        jobs, cluster, events = resolved.workload.jobs, resolved.cluster, resolved.events
    else:
        jobs, cluster, events = spec.jobs, spec.cluster, spec.events
    simulation = spec.config.simulation
    faults = None if simulation.mtbf is None else RandomFaults(simulation.mtbf, simulation.effective_mttr,
                                                               seed=spec.seed)
    clusters = cluster.machines  # --env rlsk: the workload's machines are the federation's clusters
    if spec.config.federated:
        cluster = spec.config.federation_cluster(cluster)
    broker = make_run_broker(spec.config, spec.broker, spec.seed, clusters)
    try:
        result = Simulation(cluster, jobs, broker, tick=simulation.tick, machine_events=events, faults=faults,
                            on_failure=simulation.on_failure, progress=spec.progress, stream_to=spec.stream_to).run()
    except UnschedulableTaskError as err:  # a streamed run checks its jobs as it reads them
        if not isinstance(jobs, JobStream):
            raise
        raise ConfigError(*cluster_option_of(spec.config, cluster), str(err)) from None
    summary = dict(result.summary)
    if spec.config.federated:  # RLSK's numbers, over clusters (each pooled over its nodes)
        federation = broker.federation
        summary.update(federation_metrics(result, clusters),
                       postponements=federation.postponements if federation else 0,
                       forced=federation.forced if federation else 0)
    summary["wall_s"] = round(time.perf_counter() - started, 4)
    return RunOutcome(summary, result if spec.keep == "result" else None,
                      result.machine_utilisation() if spec.keep == "curve" else None)


def make_run_broker(config: RunConfig, name: str, seed: int, clusters: int) -> object:
    """The broker ``name`` as the run configures it: its checkpoint, and the task window for heuristics;
    with --env rlsk, the dispatcher ``name`` over ``clusters`` clusters."""
    if config.federated:
        return make_federated_broker(name, clusters=clusters, seed=seed, **config.brokers.options(name))
    broker = make_broker(name, seed=seed, **config.brokers.options(name))
    window = config.window
    return Windowed(broker, window) if window is not None and name not in LEARNED else broker


def build_brokers(config: RunConfig, cluster: ClusterSpec) -> None:
    """Build each broker once before any run, so that a bad checkpoint or a checkpoint trained for
    another cluster is refused up front; what a broker says about the cluster is a `RunWarning`."""
    clusters = cluster.machines
    if config.federated:
        cluster = config.federation_cluster(cluster)
    for name in config.brokers.brokers:
        broker = make_run_broker(config, name, config.workload.seed, clusters)
        check = getattr(broker, "check_cluster", None)  # learned brokers know the cluster they were trained on
        for message in (check(cluster) if check is not None else ()):
            warnings.warn(message, RunWarning, stacklevel=2)
