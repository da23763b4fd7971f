"""One run of one broker on one episode: the unit of work every command hands to the `Runner`.

`RunSpec` is small and picklable, so it travels to worker processes and Ray
workers; a generated workload is made where it runs, from its options, load and
seed, instead of being shipped. A run reads only what `cloudsim.run.resolve`
made (the broker's plan, the workplace, the simulation settings).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from cloudsim.engine.carbon import SignalError
from cloudsim.engine.energy import StreamMeter, meter
from cloudsim.engine.envs.rlsk import federation_metrics
from cloudsim.engine.faults import RandomFaults
from cloudsim.engine.foreign import BrokerError
from cloudsim.engine.fragmentation import GpuSampler
from cloudsim.engine.metrics import EpisodeResult
from cloudsim.run.config import ConfigError, RunConfig, SimulationConfig
from cloudsim.run.resolve import BrokerPlan, Workplace, workplace
from cloudsim.run.workload import resolve_workload
from cloudsim.engine.simulation import Simulation
from cloudsim.engine.specs import JobSpec, MachineEvent, UnschedulableTaskError
from traces import JobStream

__all__ = ["RunOutcome", "RunSpec", "run_one"]


@dataclass(frozen=True)
class RunSpec:
    """One broker on one episode, as `cloudsim.run.resolve` made them.

    Either ``jobs`` and ``place`` are given, or the workload is generated in
    the worker from ``generate`` (the options of a generated workload) at
    ``load`` with ``seed`` (``jobs`` None), so that it is not shipped. With
    ``jobs``, ``load`` is the offered load a trace's episode was scaled to (`traces.load`).
    ``keep``: "result" returns the whole `EpisodeResult` (for --out), "curve"
    the machines' utilisation over time (for plots), None only the summary.
    ``stream_to``: a folder to stream the run's tables into (`cloudsim.engine.streaming`).
    """

    broker: BrokerPlan
    seed: int
    simulation: SimulationConfig
    label: Any = None
    load: float | None = None
    jobs: list[JobSpec] | None = None
    place: Workplace | None = None
    events: list[MachineEvent] = field(default_factory=list)
    generate: RunConfig | None = None
    keep: str | None = None
    progress: bool = False
    stream_to: str | None = None

    def describe(self) -> str:
        """The run in words, for messages: its broker, episode and seed."""
        return f"the run of broker {self.broker.name!r} on {self.label or 'the workload'} (seed {self.seed})"


@dataclass
class RunOutcome:
    """A run's summary numbers (`EpisodeResult.summary` and ``wall_s``), and what `RunSpec.keep` asked for."""

    summary: dict
    result: EpisodeResult | None = None
    curve: Any = None


def run_one(spec: RunSpec) -> RunOutcome:
    """Simulate one run under its trigger mode, failure policy and faults."""
    started = time.perf_counter()
    if spec.jobs is None:
        resolved = resolve_workload(spec.generate, load=spec.load, seed=spec.seed)
        jobs, place, events = (resolved.workload.jobs,
                               workplace(spec.generate, resolved.cluster, resolved.workload.jobs), resolved.events)
    else:
        jobs, place, events = spec.jobs, spec.place, spec.events
    simulation = spec.simulation
    if simulation.slack is not None:  # every job's deadline (`JobSpec.with_slack`)
        if isinstance(jobs, JobStream):
            raise ConfigError("--slack", simulation.slack, "gives each job a deadline, which a streamed workload's "
                              "jobs do not carry; leave out --slack, or give a range of jobs (--jobs A:B)")
        jobs = [job.with_slack(simulation.slack) for job in jobs]
    faults = None if simulation.mtbf is None else RandomFaults(simulation.mtbf, simulation.effective_mttr,
                                                               seed=spec.seed)
    power = simulation.power_model
    try:  # each machine's power, before the run: a power file that does not fit the cluster is refused now
        machines = None if power is None else power.for_cluster(place.cluster)
    except ValueError as error:  # a machine no row of the power file matches, or a column it does not have
        raise ConfigError("--power", simulation.power, str(error)) from None
    broker = spec.broker.build(spec.seed, place.clusters)
    signal = simulation.grid_signal()  # what the brokers see of it: a forecast with the run's seed
    forecast = None if signal is None else signal.forecast(simulation.forecast_error, seed=spec.seed)
    # a GPU cluster: its allocation and fragmentation over time
    sampler = None if place.target is None else GpuSampler(place.cluster, place.target)
    try:
        sim = Simulation(place.cluster, jobs, broker, tick=simulation.tick, machine_events=events, faults=faults,
                         on_failure=simulation.on_failure, progress=spec.progress, stream_to=spec.stream_to,
                         name=spec.broker.name, on_round=sampler, carbon_forecast=forecast,
                         resume_cost=simulation.resume_cost,
                         energy=None if machines is None or spec.stream_to is None else StreamMeter(
                             machines, place.cluster, signal))
        result = sim.run()
    except UnschedulableTaskError as err:  # a streamed run checks its jobs as it reads them
        if not isinstance(jobs, JobStream):
            raise
        raise ConfigError(*place.cluster_option, str(err)) from None
    except SignalError as error:  # a streamed run's carbon, metered as it runs: a run longer than the signal
        raise ConfigError("--carbon", None, str(error)) from None
    except BrokerError as error:  # a broker's own error: name the run too
        error.add_note(f"in {spec.describe()}")
        raise
    summary = dict(result.summary)
    summary["broker"] = spec.broker.name  # one name for a broker in every output of a run: the one it was asked by
    if spec.jobs is not None and spec.load is not None:  # a trace at --load: what it offered, beside what it achieved
        summary["offered_load"] = spec.load
    if sampler is not None:
        summary.update(sampler.summary(result.summary["makespan"]))
    if spec.broker.federated:  # RLSK's numbers, over clusters (each pooled over its nodes)
        federation = broker.federation
        summary.update(federation_metrics(result, place.clusters),
                       postponements=federation.postponements if federation else 0,
                       forced=federation.forced if federation else 0)
    if machines is not None and spec.stream_to is None:  # the energy (with a signal its carbon) of a run kept in memory
        # Jobs with deadlines (--slack): the machines are metered until the latest deadline, or the makespan if
        # later, so that every broker of the workload is metered over the same time.
        deadlines = [job.deadline for job in jobs if job.deadline is not None] if isinstance(jobs, list) else []
        horizon = max([result.makespan, *deadlines])
        try:
            report = meter(result, machines, signal, horizon=horizon)
        except SignalError as error:
            raise ConfigError("--carbon", None, str(error)) from None  # (it names the file and the spans)
        summary.update(report.summary())
        # Each job's, group's and machine's share (the jobs, groups and capacity tables of --out).
        result.jobs["energy_kwh"] = report.job_kwh
        result.groups["energy_kwh"] = report.group_kwh
        result.capacity["energy_kwh"] = report.machine_kwh
    summary["wall_s"] = round(time.perf_counter() - started, 4)
    return RunOutcome(summary, result if spec.keep == "result" else None,
                      result.machine_utilisation() if spec.keep == "curve" else None)
