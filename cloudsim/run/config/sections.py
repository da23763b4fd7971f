"""The sections of a run's options (workload, cluster, simulation, brokers, runner, report) and `RunConfig`,
which checks how they fit together: everything `cloudsim replay` reads."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import ClassVar, Mapping

from agents import BROKERS, DEEPRM_ENV_BROKERS, LEARNED, RLSK_DISPATCHERS, TRAINED_BY, builtin_source
from agents import plugins
from agents.registry import broker_names, broker_spec, reserved_option_problem
from cloudsim.engine.carbon import GridSignal, SignalError, parse_start
from cloudsim.engine.checks import is_finite_number
from cloudsim.engine.energy import POWER_FORMS, names_power_file, read_power
from cloudsim.run.output import folder_problem, place_problem
from cloudsim.run.plots import GANTT_MACHINES
from cloudsim.engine.runner import EXECUTORS, Runner
from cloudsim.engine.simulation import FAILURE_POLICIES
from traces import GENERATORS
from traces.generators import WORKLOAD_GENERATORS
from traces.formats import LOADER_OPTIONS, TRACE_FORMATS, format_of, formats_taking
from traces.synthetic import load_problem
from cloudsim.run.config.fields import (
    ConfigError, show_value, capacity, check_choices, check_file, check_positive_real, check_positive_whole,
    broker_option_list, check_number_option, check_range, checkpoint_list, flag_of, index_range, name_list, option,
    physical_memory, real, require, span_text, time_window, whole,
)

FORMATS = tuple(TRACE_FORMATS)
"""Every trace format's ``--format`` name (`traces.formats.TRACE_FORMATS`)."""
SWF_SUFFIXES = TRACE_FORMATS["swf"].suffixes
"""A trace named so is read as --format swf unless --format says otherwise."""
DEFAULT_CAPACITY = {"cpu": 64.0, "memory": 1.0, "disk": 1.0}
DEFAULT_MACHINES = 5
# What a machine costs in memory before any work arrives (its ClusterSpec row and ClusterState arrays, three
# resources: measured with tracemalloc on 200,000 machines): a cluster that cannot fit is refused up front.
BYTES_PER_MACHINE = 256
DEFAULT_GENERATOR = "alibaba-like"
DEFAULT_LOAD = 0.7
MAX_SEEDS = 1_000_000
HEURISTICS = broker_names(learned=False, devices="any", listed=True)
"""Every hand-written broker of CPU clusters (not the GPU policies, not an ablation variant): what compare runs
by default."""
GENERATOR_WINDOWS = {g.name: g.window for g in WORKLOAD_GENERATORS.values() if g.window is not None}
"""Generators whose paper shows the scheduler a window of waiting tasks: its heuristics see the same window."""
UNLOADED_GENERATORS = tuple(g.name for g in WORKLOAD_GENERATORS.values() if not g.loaded)
"""Generators whose load is their own (a trace's arrivals, or a fitted model), not a --load."""


def _either(items: list[str], last: str = " or ") -> str:
    """``a, b or c`` (``last`` joins the last two)."""
    return ", ".join(items[:-1]) + last + items[-1] if len(items) > 1 else "".join(items)


def _format_help() -> str:
    """--format's help, from `TRACE_FORMATS`: each format and what it is (formats alike named together), and
    which a file is read as by default."""
    groups: list[tuple[list[str], str]] = []
    for spec in TRACE_FORMATS.values():
        if groups and groups[-1][1] == spec.what:
            groups[-1][0].append(spec.name)
        else:
            groups.append(([spec.name], spec.what))
    defaults = [f"{spec.name} for a {_either(list(spec.suffixes))} file" for spec in TRACE_FORMATS.values()
                if spec.suffixes]
    return ("trace format: " + ", ".join(f"{_either(names)} ({what})" for names, what in groups)
            + f"; default {_either(defaults)}, else {format_of('')}")


@dataclass(frozen=True)
class WorkloadConfig:
    """What to run on: a trace file or a generator, and which of its jobs form the episodes."""

    source: str | None = option(
        None, "WORKLOAD", "trace file (.csv, .csv.gz, .swf or .swf.gz), or a generator name (alibaba-like, deeprm, "
        "poisson, rlsk); default: the built-in alibaba-like generator", positional=True)
    format: str | None = option(None, "--format", _format_help(), choices=FORMATS)
    instances: str | None = option(
        None, "--instances", "alibaba formats: batch_instance.csv, for each instance's own run time",
        metavar="FILE")
    status_policy: str | None = option(
        None, "--status-policy", "alibaba formats: drop tasks that did not terminate (counted) or keep them "
        "with their recorded times; default drop", choices=("drop", "keep"))
    window: tuple[float, float] | None = option(
        None, "--window", "alibaba formats: only jobs submitted in [START, END) seconds of trace time",
        parse=time_window, metavar="START:END")
    machine_table: str | None = option(
        None, "--machine-table", "take the cluster from the trace: " + _either(
            [spec.machine_table for spec in TRACE_FORMATS.values() if spec.machines is not None], ", or "),
        metavar="FILE")
    machine_events: bool = option(
        False, "--machine-events", "with --machine-table: replay the machines' errors and status changes",
        switch=True)
    softerror_downtime: float | None = option(
        None, "--softerror-downtime", "v2017 machine table: a soft error takes a machine out for this many "
        "seconds (default: until a later add)", parse=real, metavar="SECONDS")
    cache: str | None = option(
        None, "--cache", "folder of converted traces (Parquet); default $CLOUDSIM_CACHE or ~/.cache/cloudsim",
        metavar="DIR")
    chunk_size: int | None = option(
        None, "--chunk-size", "sliding chunks of N jobs (in submit order), each an episode", parse=whole,
        metavar="N")
    chunks: tuple[int, int | None] | None = option(
        None, "--chunks", "with --chunk-size: chunks A to B-1 (A: to the end, or one chunk K); default all",
        parse=index_range, metavar="A:B")
    jobs: tuple[int, int | None] | None = option(
        None, "--jobs", "jobs A to B-1 in submit order as one episode (A: to the end, or one job K)",
        parse=index_range, metavar="A:B")
    generator: str | None = option(
        None, "--generator", "the generator when no trace is given (same as naming it as WORKLOAD); "
        "default alibaba-like", choices=GENERATORS)
    load: float | None = option(
        None, "--load", f"deeprm, poisson and rlsk generators: target load as a fraction of capacity "
        f"(default {DEFAULT_LOAD:g}); a trace file: its submit times scaled by one factor per episode so that "
        "the offered load on the cluster is X (the most demanded resource's work over its capacity times the "
        "arrival span; traces.load), reported as offered_load beside the achieved utilisation", parse=real)
    synthetic_jobs: int | None = option(
        None, "--synthetic-jobs", "jobs the generator makes (default: alibaba-like 100, deeprm 50, "
        "poisson 5..50, rlsk 1000)", parse=whole, metavar="N")
    seed: int = option(
        0, "--seed", "seed of the generators, random brokers and random faults (default 0)", parse=whole)

    def __post_init__(self) -> None:
        cls = type(self)
        check_choices(self)
        trace_only = ("format", "instances", "status_policy", "window", "machine_table", "cache")
        if self.is_generator:
            if self.source is not None and self.generator is not None and self.source != self.generator:
                raise ConfigError("--generator", self.generator, f"disagrees with WORKLOAD {self.source!r}; "
                                  "name the generator once")
            for name in trace_only + ("softerror_downtime",):
                value = getattr(self, name)
                require(value is None, cls, name, span_text(value) if name == "window" else value,
                         f"applies to trace files only, not to the "
                         f"{self.generator_name} generator; leave it out")
            require(not self.machine_events, cls, "machine_events", True, "applies to trace files only")
            require(self.load is None or self.generator_name not in UNLOADED_GENERATORS, cls, "load", self.load,
                     f"the {self.generator_name} generator has no target load (it replays a trace's arrivals "
                     f"or statistics); use --generator deeprm, poisson or rlsk, or leave --load out")
        else:
            check_file(cls, "source", self.source,
                        f"a trace file (.csv, .csv.gz, .swf or .swf.gz), or name a generator: {', '.join(GENERATORS)}")
            require(self.generator is None, cls, "generator", self.generator,
                     "applies only when no trace file is given; leave it out")
            require(self.synthetic_jobs is None, cls, "synthetic_jobs", self.synthetic_jobs,
                    "applies to generators, not to a trace file")
            spec = TRACE_FORMATS[self.trace_format]
            for name in (*LOADER_OPTIONS, "machine_table",
                         *(("machine_events",) if self.machine_table is not None else ())):  # else: needs a table
                value = getattr(self, name)
                require(not value or name in spec.takes, cls, name, span_text(value) if name == "window" else value,
                        f"applies to --format {_either(list(formats_taking(name)))}, "
                        f"not to {self.trace_format}; leave it out or give the format")
            if spec.requires_machine_table:
                require(self.machine_table is not None, cls, "format", spec.name, spec.requires_machine_table)
        check_file(cls, "instances", self.instances, "batch_instance.csv")
        check_file(cls, "machine_table", self.machine_table,
                    "server_event.csv (v2017), machine_meta.csv (v2018) or an openb node list")
        require(not self.machine_events or self.machine_table is not None, cls, "machine_events", True,
                 "needs --machine-table FILE (the machines whose events to replay)")
        if self.softerror_downtime is not None:
            require("softerror_downtime" in TRACE_FORMATS[self.trace_format].takes and self.machine_table is not None,
                    cls,
                     "softerror_downtime", self.softerror_downtime,
                     "applies to a v2017 machine table: give --format alibaba-v2017 --machine-table server_event.csv")
            check_positive_real(cls, "softerror_downtime", self.softerror_downtime, "seconds")
        if self.window is not None:
            start, end = self.window
            require(is_finite_number(start) and is_finite_number(end) and start < end, cls, "window",
                    span_text(self.window),
                     "need finite START < END (seconds of trace time)")
        if self.cache is not None:
            require(str(self.cache).strip() != "", cls, "cache", self.cache,
                    "is empty; give a folder for the cache, or leave --cache out for the default")
            require(not Path(self.cache).exists() or Path(self.cache).is_dir(), cls, "cache", self.cache,
                     "is a file, not a folder; give a folder for the cache")
        if self.chunk_size is not None:
            check_positive_whole(cls, "chunk_size", self.chunk_size, "jobs per chunk")
        check_range(cls, "chunks", self.chunks, "chunks")
        check_range(cls, "jobs", self.jobs, "jobs")
        require(self.chunks is None or self.chunk_size is not None, cls, "chunks",
                 span_text(self.chunks),
                 "needs --chunk-size N (the jobs per chunk)")
        require(self.jobs is None or self.chunk_size is None, cls, "jobs", span_text(self.jobs),
                 "give either --jobs or --chunk-size, not both")
        if self.load is not None:
            check_positive_real(cls, "load", self.load, "a fraction of capacity such as 0.7")
        if self.synthetic_jobs is not None:
            check_positive_whole(cls, "synthetic_jobs", self.synthetic_jobs, "jobs to generate")
        check_number_option(flag_of(cls, "seed"), self.seed, whole=True, at_least=0)

    def check_drawn_load(self, load: float, owner: type | None = None, name: str = "load") -> None:
        """Refuse a ``load`` at which the generator cannot draw this workload's jobs, naming the loads it can
        (`traces.synthetic.load_range`: they depend on --synthetic-jobs) and the option ``name`` of ``owner``
        (default: this workload's --load) that gave it; a trace's load is not drawn. A command whose jobs the
        generator draws checks its loads with it (`RunConfig.DRAWS_JOBS`)."""
        problem = load_problem(self.generator_name, load, self.synthetic_jobs) if self.is_generator else None
        require(problem is None, owner or type(self), name, load, problem)

    @property
    def is_generator(self) -> bool:
        """True when the workload is generated: no WORKLOAD, or a generator name that is not a file."""
        return self.source is None or (self.source in GENERATORS and not Path(self.source).exists())

    @property
    def generator_name(self) -> str:
        return self.generator or (self.source if self.source in GENERATORS else DEFAULT_GENERATOR)

    @property
    def trace_format(self) -> str:
        if self.format is not None:
            return self.format
        return format_of(self.source)

    @property
    def effective_status_policy(self) -> str:
        return self.status_policy or "drop"

    @property
    def effective_load(self) -> float:
        return DEFAULT_LOAD if self.load is None else self.load

    def describe(self) -> str:
        """A short name of the workload for tables and plots."""
        if self.is_generator:
            load = "" if self.generator_name in UNLOADED_GENERATORS else f" at load {self.effective_load:g}"
            return f"{self.generator_name}{load}"
        return Path(self.source).name


@dataclass(frozen=True)
class ClusterConfig:
    """The machines, when the workload does not bring its own."""

    machines: int | None = option(
        None, "--machines", f"number of identical machines (default {DEFAULT_MACHINES}, the generator's "
        "cluster, or an SWF log's machine); with --machine-table, N of the table's machines drawn with --seed, "
        "each shape keeping its share", parse=whole)
    capacity: Mapping[str, float] | None = option(
        None, "--capacity", "capacity of each machine, NAME=NUMBER,... with any resources (default "
        f"{show_value(DEFAULT_CAPACITY)}, the generator's, or an SWF log's)", parse=capacity, metavar="NAME=NUMBER,...")

    def __post_init__(self) -> None:
        cls = type(self)
        if self.machines is not None:
            check_positive_whole(cls, "machines", self.machines, "the number of identical machines")
            memory = physical_memory()
            require(memory is None or self.machines * BYTES_PER_MACHINE <= memory, cls, "machines", self.machines,
                     f"a cluster that large needs at least {self.machines * BYTES_PER_MACHINE / 2**30:.3g} GiB of "
                     f"memory ({BYTES_PER_MACHINE} bytes a machine before any work), more than this machine's "
                     f"{(memory or 0) / 2**30:.3g} GiB; give fewer machines")
        if self.capacity is not None:
            require(len(self.capacity) > 0, cls, "capacity", "", "write NAME=NUMBER pairs, e.g. cpu=64,memory=1")
            for name, value in self.capacity.items():
                require(is_finite_number(value) and value >= 0, cls, "capacity", self.capacity,
                         f"{name} must be a finite number >= 0")
            require(any(v > 0 for v in self.capacity.values()), cls, "capacity", self.capacity,
                     "every resource is 0: no task could ever run")
            object.__setattr__(self, "capacity", dict(self.capacity))


@functools.lru_cache(maxsize=4)
def read_signal(path: str, start: str) -> GridSignal:
    """The grid signal in ``path`` with time 0 at ``start``, read once per process (every run of a command reads
    the same file)."""
    return GridSignal.read(path, start)


@dataclass(frozen=True)
class SimulationConfig:
    """How the engine runs an episode: trigger mode, machine failures."""

    tick: float | None = option(
        None, "--tick", "fixed scheduler tick (1 for CloudSimPy-compatible replays); default: event-driven",
        parse=real, metavar="T")
    on_failure: str = option(
        "requeue", "--on-failure", "instances on a machine that fails: requeue them or count them failed "
        "(default requeue)", choices=FAILURE_POLICIES)
    mtbf: float | None = option(
        None, "--mtbf", "random machine failures: mean up time between failures per machine (seeded by --seed)",
        parse=real, metavar="T")
    mttr: float | None = option(
        None, "--mttr", "with --mtbf: mean time to repair (default mtbf / 10)", parse=real, metavar="T")
    power: str | None = option(
        None, "--power", "the machines' power draw, for the run's energy (energy_kwh): " + POWER_FORMS +
        " (every machine; default: a SPECpower_ssj2008 result, cloudsim.engine.energy.DEFAULT_POWER), or a power "
        "file, a CSV of power by machine shape (cloudsim.engine.energy.read_power_file); default none: no energy is "
        "reported", metavar="MODEL")
    carbon: str | None = option(
        None, "--carbon", "the grid's carbon intensity, a CSV of Time,Carbon Intensity (gCO2e/kWh): brokers see "
        "it (view.carbon), and with --power the run's carbon is reported (carbon_kg)", metavar="FILE")
    start: str | None = option(
        None, "--start", "with --carbon: the date and time of the run's time 0, YYYY-MM-DD HH:MM:SS (times are "
        "seconds)", metavar="DATETIME")
    slack: float | None = option(
        None, "--slack", "every job may finish up to S seconds after it would on an empty cluster (its arrival plus "
        "its critical path): its deadline, which brokers see (view.deadline); runs report deadline_misses",
        parse=real, metavar="S")
    forecast_error: float = option(
        0.0, "--forecast-error", "with --carbon: brokers see the signal plus Gaussian noise of this fraction of its "
        "mean (0.05: five per cent; drawn by each run's seed); default 0, a perfect forecast", parse=real, metavar="X")
    resume_cost: float = option(
        0.0, "--resume-cost", "seconds added to an instance's remaining work each time it resumes after a broker "
        "suspended it (cloudsim.Suspend: carbon-shift.interruptible=True); default 0", parse=real, metavar="S")

    def __post_init__(self) -> None:
        cls = type(self)
        check_choices(self)
        self._check_energy()
        check_number_option("--resume-cost", self.resume_cost, "seconds a resume adds to the remaining work",
                            at_least=0)
        if self.tick is not None:
            check_positive_real(cls, "tick", self.tick, "time units between scheduler wakes; leave it out "
                                 "for event-driven scheduling")
        if self.mtbf is not None:
            check_positive_real(cls, "mtbf", self.mtbf, "mean time between failures")
        if self.mttr is not None:
            require(self.mtbf is not None, cls, "mttr", self.mttr, "needs --mtbf (the failures to repair)")
            check_positive_real(cls, "mttr", self.mttr, "mean time to repair")

    def _check_energy(self) -> None:
        """--power parses, --carbon reads (a damaged file is one line naming where) with its --start, and the
        options that need --carbon have it."""
        cls = type(self)
        if self.power is not None:
            try:
                read_power(self.power)
            except ValueError as error:
                raise ConfigError("--power", self.power, str(error)) from None
        if self.slack is not None:
            check_number_option("--slack", self.slack, "seconds a job may finish later than on an empty cluster",
                                at_least=0)
        require(self.start is None or self.carbon is not None, cls, "start", self.start,
                "applies with --carbon (the time 0 of the grid signal); add --carbon FILE or leave it out")
        check_number_option("--forecast-error", self.forecast_error, "a fraction of the signal's mean: 0.05 = 5 %",
                            at_least=0)
        require(self.forecast_error == 0.0 or self.carbon is not None, cls, "forecast_error", self.forecast_error,
                "applies with --carbon; add --carbon FILE or leave it out")
        if self.carbon is not None:
            require(self.start is not None, cls, "carbon", self.carbon,
                    "needs --start DATETIME, the date and time of the run's time 0")
            try:
                parse_start(self.start)
            except ValueError as error:
                raise ConfigError("--start", self.start, str(error)) from None
            self.grid_signal()  # a missing or damaged file, or a start outside it, is refused now

    @property
    def power_model(self):
        """The --power model (`cloudsim.engine.energy`): a `MachinePower` for every machine or a power file's
        `PowerByShape`; None without --power."""
        return None if self.power is None else read_power(self.power)

    @property
    def power_file(self) -> str | None:
        """The power file --power names, or None (a model's text, or no --power)."""
        return self.power if self.power is not None and names_power_file(self.power) else None

    def grid_signal(self):
        """The --carbon signal aligned by --start (`cloudsim.engine.carbon.GridSignal`, read once per process),
        or None."""
        if self.carbon is None:
            return None
        try:
            return read_signal(str(Path(self.carbon).resolve()), self.start)
        except SignalError as error:  # (the message names the file, or the span)
            raise ConfigError("--carbon", None, str(error)) from None

    @property
    def effective_mttr(self) -> float | None:
        if self.mtbf is None:
            return None
        return self.mtbf / 10 if self.mttr is None else self.mttr


@dataclass(frozen=True)
class TickedSimulationConfig(SimulationConfig):
    """`SimulationConfig` with DeepJS's and CloudSimPy's tick of 1 as the default (bench)."""

    tick: float | None = option(
        1.0, "--tick", "fixed scheduler tick (default 1, as DeepJS and CloudSimPy)", parse=real, metavar="T")


@dataclass(frozen=True)
class RunnerConfig:
    """Where the episodes run: local processes or a Ray cluster."""

    executor: str = option(
        "local", "--executor", "local processes (default) or ray (a Ray cluster; pip install 'cloudsim[ray]')",
        choices=EXECUTORS)
    workers: int | None = option(
        None, "--workers", "processes (local) or CPUs of a new local Ray instance; default every core, "
        "never more than the runs", parse=whole, metavar="N")
    address: str | None = option(
        None, "--address", "with --executor ray: an existing cluster (auto, or ray://HOST:10001); "
        "default a new local Ray instance", metavar="ADDR")

    def __post_init__(self) -> None:
        cls = type(self)
        check_choices(self)
        if self.workers is not None:
            check_positive_whole(cls, "workers", self.workers, "worker processes")
        require(self.address is None or self.executor == "ray", cls, "address", self.address,
                 "applies to --executor ray only")
        if self.address is not None and self.address != "auto":
            host, sep, port = self.address.removeprefix("ray://").rpartition(":")
            require(bool(host) and bool(sep) and port.isdigit(), cls, "address", self.address,
                     "write HOST:PORT (e.g. 10.0.0.5:6379), ray://HOST:10001 or auto")

    def runner(self, brokers: tuple[str, ...] = ()) -> Runner:
        """The `Runner` these options ask for, to run ``brokers``: runs of a user's broker (whose code may
        end its process) go to worker processes even when one would do (`agents.plugins.foreign`)."""
        return Runner(self.executor, self.workers, self.address, isolate=plugins.foreign(brokers, builtin_source))


@dataclass(frozen=True)
class ReportConfig:
    """What the run prints and writes."""

    json: bool = option(False, "--json", "print one strict JSON object per run, then a summary line", switch=True)
    out: str | None = option(None, "--out", "write the results into DIR (created whole when the run completes)",
                             metavar="DIR")
    overwrite: bool = option(False, "--overwrite", "with --out: replace DIR if it already holds files", switch=True)
    stream: bool = option(
        False, "--stream", "with --out: write each run's tables while it runs and keep only the jobs in flight "
        "(cloudsim.engine.streaming; no utilisation table, no imbalance numbers); the workload itself is still loaded "
        "whole", switch=True)

    overwrite_needs_out = True  # bench's --overwrite also covers its --plots DIR (`BenchConfig` checks it)

    def __post_init__(self) -> None:
        cls = type(self)
        require(not self.overwrite or self.out is not None or not self.overwrite_needs_out, cls, "overwrite", True,
                "needs --out DIR")
        require(not self.stream or self.out is not None, cls, "stream", True,
                 "writes the tables under --out DIR as the run goes: add --out DIR")
        if self.out is not None:
            problem = folder_problem(self.out, self.overwrite)
            require(problem is None, cls, "out", self.out, problem)


@dataclass(frozen=True)
class ReplayReportConfig(ReportConfig):
    """What a replay prints and writes: the common outputs, and pictures of each run."""

    plots: bool = option(
        False, "--plots", "with --out: draw each run's Gantt chart and utilisation over time (gantt.png, "
        "utilisation.png beside its tables; `cloudsim plot DIR` draws them for an existing folder)", switch=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        require(not self.plots or self.out is not None, type(self), "plots", True,
                 "draws into each run's folder under --out DIR: add --out DIR")


@dataclass(frozen=True)
class PlotConfig:
    """`cloudsim plot`: the pictures of run folders a replay wrote with --out."""

    folder: str = option(None, "RUNS", "a folder cloudsim replay --out wrote, or one run's folder in it",
                         positional=True)
    max_machines: int = option(
        GANTT_MACHINES, "--max-machines", "up to N machines, the Gantt chart draws every instance group; above, "
        "machines share rows coloured by how busy they were", parse=whole, metavar="N")

    def __post_init__(self) -> None:
        cls = type(self)
        require(self.folder is not None, cls, "folder", None, "give the folder of a replay's --out")
        where = Path(self.folder)
        require(where.exists(), cls, "folder", self.folder, "no such folder; give the folder of a replay's --out")
        require(where.is_dir(), cls, "folder", self.folder, "is not a folder; give the folder of a replay's --out")
        check_positive_whole(cls, "max_machines", self.max_machines, "machines drawn one row each")



@dataclass(frozen=True)
class BrokerConfig:
    """Which brokers run."""

    brokers: tuple[str, ...] | None = option(
        None, "--brokers", "brokers, comma-separated (the table in docs/guide/brokers.md)",
        parse=name_list, metavar="NAMES", aliases=("--broker",))
    checkpoint: tuple[tuple[str, str], ...] = option(
        (), "--checkpoint", "weights for learned brokers, NAME=PATH[,NAME=PATH] (a bare PATH when one learned "
        "broker runs); default: the checkpoints shipped with cloudsim", parse=checkpoint_list, metavar="NAME=PATH")
    window: int | None = option(
        None, "--task-window", "show every heuristic only the first N waiting tasks, as the learned Deepk8s brokers "
        "see them (default: all; the deepk8s workload: 10)", parse=whole, metavar="N")
    options: tuple[tuple[str, str, object], ...] = option(
        (), "--broker-options", "options of the brokers in --brokers, NAME.KEY=VALUE[,NAME.KEY=VALUE] (VALUE a number, "
        "True/False/None or text), passed to each broker's class as keywords; `cloudsim brokers` lists them",
        parse=broker_option_list, metavar="NAME.KEY=VALUE")

    def __post_init__(self) -> None:
        """Checks what these options say alone; with ``brokers=None`` (the command's default list, not
        known yet) the checks that need the names wait for `named`."""
        cls = type(self)
        require(not isinstance(self.brokers, str), cls, "brokers", self.brokers,
                 "give the names as a tuple, e.g. BrokerConfig((\"first-fit\",))")
        object.__setattr__(self, "options", tuple(self.options))
        keys = [(name, key) for name, key, _ in self.options]
        twice = sorted({f"{n}.{k}" for n, k in keys if keys.count((n, k)) > 1})
        require(not twice, cls, "options", ", ".join(twice), "given twice; give each option once")
        for name, key, value in self.options:
            problem = reserved_option_problem(key) or ("give checkpoints with --checkpoint NAME=PATH"
                                                       if key == "checkpoint" else None)
            require(problem is None, cls, "options", f"{name}.{key}={value}", problem)
        if isinstance(self.checkpoint, str):  # a bare path from Python
            object.__setattr__(self, "checkpoint", (("", self.checkpoint),))
        if self.window is not None:
            check_positive_whole(cls, "window", self.window, "visible tasks")
        if self.brokers is not None:
            object.__setattr__(self, "brokers", tuple(self.brokers))
            self._check_names()

    def named(self, default: tuple[str, ...]) -> "BrokerConfig":
        """These options with the brokers they run: --brokers as given, else a command's ``default`` list
        (a new config, checked whole: a bare --checkpoint PATH is assigned to the one learned broker)."""
        return self if self.brokers is not None else dataclasses.replace(self, brokers=tuple(default))

    def _check_names(self) -> None:
        cls = type(self)
        choose = (f"choose from {', '.join(BROKERS)} (DeepRM's environment: {', '.join(DEEPRM_ENV_BROKERS)}; RLSK's "
                  f"federation: {', '.join(RLSK_DISPATCHERS)}), a broker an installed package declares (`cloudsim "
                  "brokers` lists them) or your own as module:Class or path/to/file.py:Class")
        require(len(self.brokers) > 0 and all(self.brokers), cls, "brokers", self.brokers,
                 f"give one or more broker names separated by commas; {choose}")
        known = (*BROKERS, *DEEPRM_ENV_BROKERS, *RLSK_DISPATCHERS)
        check_user_brokers(cls, "brokers", self.brokers, known, choose)
        for name, key, _ in self.options:
            require(name in self.brokers, cls, "options", f"{name}.{key}",
                    f"{name} is not in --brokers ({', '.join(self.brokers)}); name a broker that runs")
        check_distinct_brokers(cls, "brokers", self.brokers)
        learned = [b for b in self.brokers if b in LEARNED]
        require(not self.checkpoint or learned, cls, "checkpoint", ",".join(p for _, p in self.checkpoint),
                 f"applies to learned brokers ({', '.join(LEARNED)}) and --brokers names none; add one or leave "
                 f"the checkpoint out")
        pairs = []
        for name, path in self.checkpoint:
            if not name:
                require(len(learned) == 1, cls, "checkpoint", path,
                         f"name the broker it is for: NAME=PATH with NAME among the learned brokers in --brokers "
                         f"({', '.join(learned) or 'none'})")
                name = learned[0]
            require(name in learned, cls, "checkpoint", f"{name}={path}",
                     f"{name} is not a learned broker in --brokers ({', '.join(learned) or 'none'}); add it to "
                     f"--brokers or leave this checkpoint out")
            check_file(cls, "checkpoint", path, f"a {name} checkpoint (cloudsim train {TRAINED_BY[name]})")
            pairs.append((name, path))
        names = [name for name, _ in pairs]
        require(len(set(names)) == len(names), cls, "checkpoint", ",".join(f"{n}={p}" if n else p
                                                                            for n, p in self.checkpoint),
                 "names a broker twice; give one checkpoint per broker")
        object.__setattr__(self, "checkpoint", tuple(pairs))


def check_machine_table(workload: WorkloadConfig, cluster: ClusterConfig) -> None:
    """With --machine-table the capacities are the table's; --machines draws that many of its machines
    (not from an openb node list, which is replayed whole)."""
    if workload.machine_table is None:
        return
    require(cluster.capacity is None, ClusterConfig, "capacity", cluster.capacity,
            "the machines' capacities come from --machine-table; leave it out or drop --machine-table")
    require(cluster.machines is None or TRACE_FORMATS[workload.trace_format].samples_machines, ClusterConfig,
            "machines", cluster.machines,
            f"an {workload.trace_format} node list is replayed whole; leave --machines out")


def check_distinct_brokers(section: type, name: str, brokers: tuple[str, ...]) -> None:
    """Each broker of ``brokers`` is named once: no name twice, and no two references to the same code
    (``b.py:X`` and ``./b.py:X`` share one name in a result folder, `agents.plugins.output_name`)."""
    seen: dict[str, str] = {}
    for broker in brokers:
        other = seen.get(plugins.output_name(broker))
        require(other is None, section, name, ",".join(brokers),
                f"{broker} named twice; name each once" if other == broker else
                f"{other} and {broker} name the same broker; name it once")
        seen[plugins.output_name(broker)] = broker


def check_user_brokers(section: type, name: str, brokers: tuple[str, ...], known, choose: str) -> None:
    """Every name of ``brokers`` outside ``known`` is a user's broker (a reference, or installed) that loads:
    imported now, so that a mistake is one line before any run (`agents.plugins`)."""
    for broker in brokers:
        if broker in known:
            continue
        require(plugins.is_reference(broker) or broker in plugins.installed(), section, name, brokers,
                f"unknown broker {broker}; {choose}")
        try:
            plugins.factory(broker, builtin_source)
        except plugins.BrokerReferenceError as error:
            require(False, section, name, broker, str(error))


@dataclass(frozen=True)
class RunConfig:
    """Everything a replay needs; `compare` and `bench` add their own options."""

    DEFAULT_BROKERS: ClassVar[tuple[str, ...]] = ("first-fit",)
    """The brokers the command runs when --brokers is not given (what its help shows)."""
    DRAWS_JOBS: ClassVar[bool] = True
    """Whether a generated workload's jobs are drawn by its generator (`traces.generate`), whose range of loads
    --load is checked against (False: DeepRM's environment draws its own jobsets, checking its own loads)."""

    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    simulation: SimulationConfig = field(default_factory=SimulationConfig)
    brokers: BrokerConfig = field(default_factory=BrokerConfig)
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    report: ReportConfig = field(default_factory=ReplayReportConfig)

    @property
    def federated(self) -> bool:
        """Whether brokers act as RLSK's cluster-level dispatchers (`compare --env rlsk`)."""
        return False

    @cached_property
    def chosen_brokers(self) -> BrokerConfig:
        """The broker options with the brokers that run: --brokers as given, else the class's `DEFAULT_BROKERS`."""
        return self.brokers.named(self.DEFAULT_BROKERS)

    @property
    def writes_tables(self) -> bool:
        """Whether --out holds each run's tables (replay), which --stream writes as the run goes."""
        return True

    @property
    def reads(self) -> dict[str, object]:
        """What the command reads, by option: the trace and its tables, the cache, the checkpoints (an output
        folder is kept apart from them, `cloudsim.run.output.place_problem`)."""
        workload = self.workload
        return {"WORKLOAD": None if workload.is_generator else workload.source,
                "--machine-table": workload.machine_table, "--instances": workload.instances,
                "--cache": workload.cache, "--checkpoint": [path for _, path in self.brokers.checkpoint],
                "--brokers": plugins.files(self.chosen_brokers.brokers), "--power": self.simulation.power_file,
                "--carbon": self.simulation.carbon}

    def __post_init__(self) -> None:
        require(not self.report.stream or self.writes_tables, ReportConfig, "stream", True,
                 "applies to replay, whose --out holds each run's tables; leave it out")
        if self.report.out is not None:
            problem = place_problem(self.report.out, self.reads)
            require(problem is None, ReportConfig, "out", self.report.out, problem)
        check_machine_table(self.workload, self.cluster)
        if self.DRAWS_JOBS and self.workload.load is not None:
            self.workload.check_drawn_load(self.workload.load)
        self.chosen_brokers  # checked now: a mistake is refused when the config is made
        self._check_core_brokers()
        if self.simulation.carbon is None:
            planners = [name for name in self.chosen_brokers.brokers
                        if (spec := broker_spec(name)) is not None and spec.grid]
            require(not planners, BrokerConfig, "brokers", self.chosen_brokers.brokers,
                    f"{', '.join(planners)} plans by the grid's carbon intensity: add --carbon FILE --start DATETIME")

    def _check_core_brokers(self) -> None:
        """Refuse the names that only dispatch jobs in RLSK's federation (an oracle, say) on the core."""
        if self.federated:
            return
        names = self.chosen_brokers.brokers
        federation_only = [b for b in names if b in RLSK_DISPATCHERS and b not in BROKERS]
        require(not federation_only, BrokerConfig, "brokers", names,
                 f"{', '.join(federation_only)} dispatches jobs to RLSK's clusters only; run it with `cloudsim compare "
                 f"rlsk --brokers {','.join(federation_only)}`")
