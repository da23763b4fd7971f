"""Typed run configuration: the single source of every option's default, type, range and help.

Each section is a frozen dataclass whose fields carry their command-line spelling
and help text (`option`); the command line is generated from them (`cloudsim.cli`),
and Python users build the same objects directly. Every section checks itself in
``__post_init__``, and `RunConfig` checks how the sections fit together, so a bad
value or a combination that does not apply is refused before any work starts, with
a `ConfigError` that names the option, the value and the fix.

Options whose default depends on the workload (``format``, ``status_policy``,
``load``, the cluster) default to ``None`` and are resolved by the properties that
read them; that is how the checks tell an option the user gave from one left
alone. ``0`` is never a stand-in for "default": where 0 is not a valid value it is
refused.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping

from agents import BROKERS, DEEPRM_ENV_BROKERS, DEEPRM_TETRIS_STAR_KNOB, LEARNED, RLSK_DISPATCHERS, TRAINED_BY
from cloudsim.run.output import folder_problem, parent_problem
from cloudsim.run.plots import GANTT_MACHINES
from cloudsim.runner import EXECUTORS
from cloudsim.simulation import FAILURE_POLICIES
from cloudsim.specs import parse_capacity
from traces import GENERATORS
from traces.deepk8s import DEFAULT_TASKS
from agents.deepk8s_config import shipped_checkpoint

__all__ = [
    "BenchConfig",
    "BrokerConfig",
    "ClusterConfig",
    "CompareConfig",
    "ConfigError",
    "PlotConfig",
    "ReplayReportConfig",
    "FORMATS",
    "LEADERBOARD_WORKLOADS",
    "LeaderboardConfig",
    "DEEPK8S_SPACE",
    "TuneConfig",
    "Option",
    "ReportConfig",
    "RunConfig",
    "RunnerConfig",
    "SimulationConfig",
    "WorkloadConfig",
    "option",
    "options_of",
]

FORMATS = ("cloudsimpy", "alibaba-v2017", "alibaba-v2018", "swf")
SWF_SUFFIXES = (".swf", ".swf.gz")
"""A trace named so is read as --format swf unless --format says otherwise."""
DEFAULT_CAPACITY = {"cpu": 64.0, "memory": 1.0, "disk": 1.0}
DEFAULT_MACHINES = 5
# What a machine costs in memory before any work arrives (its ClusterSpec row and ClusterState arrays, three
# resources: measured with tracemalloc on 200,000 machines): a cluster that cannot fit is refused up front.
BYTES_PER_MACHINE = 256
DEFAULT_GENERATOR = "alibaba-like"
DEFAULT_LOAD = 0.7
MAX_SEEDS = 1_000_000
HEURISTICS = tuple(name for name in BROKERS if name not in LEARNED)
GENERATOR_WINDOWS = {"deepk8s": 10}
UNLOADED_GENERATORS = ("alibaba-like", "deepk8s")
ENVIRONMENTS = ("cloudsim", "deeprm", "rlsk")
"""Where `cloudsim compare` runs: the event-driven simulator, DeepRM's own environment, or RLSK's
federation (the simulator with each job dispatched to a cluster's queue)."""
RLSK_DEFAULT_BROKERS = ("first-fit", "random", "round-robin", "least-load", "rlsk")
"""`cloudsim compare rlsk`'s brokers (in RLSK's federation) unless --brokers names others: RLSK's Table 1."""
DEEPRM_DEFAULT_BROKERS = ("sjf", "packer", "tetris-star", "random", "deeprm")
"""`cloudsim compare deeprm --env deeprm`'s brokers unless --brokers names others."""
"""Generators whose load is their own (a trace's arrivals, or a fitted model), not a --load."""
"""Generators whose paper shows the scheduler a window of waiting tasks: its heuristics see the same window."""
"""Every hand-written broker: what compare runs by default."""


class ConfigError(ValueError):
    """An option's value, or a combination of options, cannot work; says which and how to fix it."""

    def __init__(self, option: str, value: object, problem: str) -> None:
        self.option = option
        self.value = value
        shown = "" if value is None or value is True else f" {_show(value)}"
        super().__init__(f"{option}{shown}: {problem}")


def _show(value: object) -> str:
    if isinstance(value, (tuple, list)):
        return ",".join(_number(v) for v in value)
    if isinstance(value, Mapping):
        return ",".join(f"{k}={_number(v)}" for k, v in value.items())
    return _number(value)


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# ---------------------------------------------------------------- option metadata
@dataclass(frozen=True)
class Option:
    """How one config field appears on the command line."""

    flag: str                                 # "--machines", or a positional's metavar ("WORKLOAD")
    help: str
    parse: Callable[[str], Any] | None = None  # text -> value; raises ValueError with the problem
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    switch: bool = False                      # a flag without a value (store_true)
    positional: bool = False
    aliases: tuple[str, ...] = ()

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_").lower()


def option(default: Any, flag: str, help: str, **how: Any) -> Any:
    """A dataclass field with its command-line `Option`."""
    return field(default=default, metadata={"option": Option(flag, help, **how)})


def options_of(section: type) -> list[tuple[str, Option, Any]]:
    """(field name, Option, default) of every option of a config section, in field order."""
    return [(f.name, f.metadata["option"], f.default) for f in fields(section) if "option" in f.metadata]


def flag_of(section: type, name: str) -> str:
    return next(o.flag for n, o, _ in options_of(section) if n == name)


# ---------------------------------------------------------------- parsers (text -> value)
def whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError("is not a whole number") from None


def real(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError("is not a number") from None


def index_range(text: str) -> tuple[int, int | None]:
    """``"A:B"`` -> (A, B); ``"A:"`` -> (A, None) (to the end); ``"K"`` -> (K, K+1)."""
    start, sep, stop = text.partition(":")
    try:
        first = int(start) if start.strip() else 0
        last = (int(stop) if stop.strip() else None) if sep else first + 1
    except ValueError:
        raise ValueError("write A:B (A included, B excluded), A: (to the end) or one index K") from None
    return first, last


def time_window(text: str) -> tuple[float, float]:
    start, sep, end = text.partition(":")
    if not sep:
        raise ValueError("write START:END in seconds of trace time, e.g. 86400:172800")
    try:
        return float(start), float(end)
    except ValueError:
        raise ValueError("write START:END in seconds of trace time, e.g. 86400:172800") from None


def load_list(text: str) -> tuple[float, ...]:
    """``"0.1,0.4,0.7"`` or ``"START:STOP:STEP"`` (STOP included)."""
    problem = "write fractions of capacity such as 0.1,0.4,0.7 or a range START:STOP:STEP such as 0.1:1.9:0.2"
    try:
        if ":" in text:
            start, stop, step = (float(v) for v in text.split(":"))
        else:
            return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise ValueError(problem) from None
    if not all(math.isfinite(v) for v in (start, stop, step)) or step <= 0:
        raise ValueError(f"the step must be a positive number; {problem}")
    if stop < start:
        raise ValueError(f"STOP is below START; {problem}")
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > 10_000:
        raise ValueError(f"makes {count} loads; use a larger step")
    return tuple(round(start + k * step, 10) for k in range(count))


def check_training_numbers(save_every: object, seed: object) -> None:
    """A training's --save-every (>= 1) and --seed (>= 0), as whole numbers."""
    for flag, value, low in (("--save-every", save_every, 1), ("--seed", seed, 0)):
        if not (isinstance(value, int) and not isinstance(value, bool) and value >= low):
            raise ConfigError(flag, value, f"must be a whole number >= {low}")


TRAINING_RUN_FIELDS = frozenset({"out", "resume", "tensorboard", "save_every", "progress", "given"})
"""Fields of a `cloudsim train AGENT` config that say where and how the run writes, not what the agent is."""


def saved_agent_config(out: str, agent_type: type) -> Any:
    """The agent config (an ``agent_type``) of the training saved in ``out``, from its config.json
    (lists read back as tuples); a `ConfigError` on --resume when the file is missing or damaged."""
    path = Path(out) / "config.json"
    try:
        saved = json.loads(path.read_text())
        return agent_type(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved.items()})
    except (OSError, ValueError, TypeError) as err:
        raise ConfigError("--resume", out, f"{path} is missing or damaged ({err}); start a new training "
                          "in another folder") from None


def training_agent_config(command: Any, defaults: Any, length: str) -> Any:
    """The agent config a `cloudsim train AGENT` config ``command`` asks for: ``defaults`` with the agent
    settings it holds, or, on --resume, the saved training's (``command.saved_agent``) with the
    training's length (its field ``length``: iterations or timesteps) given here."""
    if command.resume:
        return dataclasses.replace(command.saved_agent, **{length: getattr(command, length)})
    names = {f.name for f in fields(defaults)} - TRAINING_RUN_FIELDS
    return dataclasses.replace(defaults, **{f.name: getattr(command, f.name) for f in fields(command)
                                            if f.name in names})


def check_agent_settings(command: Any) -> None:
    """A new training's agent config must build: the agent's own check ("NAME must be ...") becomes a
    `ConfigError` naming the option ``--NAME``."""
    if command.resume:
        return
    try:
        command.agent
    except ValueError as err:
        name = str(err).split(" ", 1)[0]
        raise ConfigError(f"--{name.replace('_', '-')}", getattr(command, name, None), str(err)) from None


def check_training_folder(out: str, *, resume: bool, state: Path, what: str) -> None:
    """Refuse an --out that cannot hold a training: a bad parent or a file; with --resume, a folder without
    the ``state`` file of ``what`` training; without it, a folder that already holds a trained policy."""
    problem = parent_problem(out)
    if problem:
        raise ConfigError("--out", out, problem)
    if Path(out).exists() and not Path(out).is_dir():
        raise ConfigError("--out", out, "is a file; give a folder")
    if resume and not state.is_file():
        raise ConfigError("--resume", out, f"there is no {what} training to resume in it ({state.name} is missing); "
                          "leave out --resume to start one")
    if not resume and (Path(out) / "policy.pt").exists():
        raise ConfigError("--out", out, "already holds a trained policy; add --resume to continue it, or give "
                          "another folder")


def check_resumed_settings(given: frozenset[str], saved: Any, current: Any,
                           flags: Mapping[str, str] | None = None, length: str = "iterations") -> None:
    """Refuse a setting given on --resume (other than the training's length, ``length``: --iterations, or
    --timesteps) that differs from the saved training's."""
    for name in sorted(given - {length}):
        if getattr(saved, name) != getattr(current, name):
            flag = (flags or {}).get(name, f"--{name.replace('_', '-')}")
            raise ConfigError(flag, getattr(current, name), f"differs from the training being resumed "
                              f"({getattr(saved, name)!r}); leave it out to keep the saved value")


def real_list(text: str) -> tuple[float, ...]:
    """``"0.01,0.3"`` -> (0.01, 0.3)."""
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise ValueError("write numbers separated by commas, such as 0.01,0.3") from None


def seed_span(text: str) -> int | tuple[int, int]:
    """``"N"`` -> N (a count); ``"A:B"`` -> (A, B), seeds A..B-1."""
    first, sep, stop = text.partition(":")
    try:
        return (int(first), int(stop)) if sep else int(text)
    except ValueError:
        raise ValueError("write N (a number of seeds) or A:B (seeds A..B-1)") from None


def checkpoint_list(text: str) -> tuple[tuple[str, str], ...]:
    """``"NAME=PATH,NAME=PATH"`` -> ((NAME, PATH), ...); a bare ``"PATH"`` -> (("", PATH),)."""
    pairs = []
    for item in text.split(","):
        name, sep, path = item.partition("=")
        pairs.append((name.strip(), path.strip()) if sep else ("", item.strip()))
    if not all(path for _, path in pairs):
        raise ValueError("write NAME=PATH[,NAME=PATH], e.g. deepk8s=run/policy.pt")
    return tuple(pairs)


def name_list(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(","))


def capacity(text: str) -> dict[str, float]:
    return parse_capacity(text)


# ---------------------------------------------------------------- checks
def _require(ok: bool, section: type, name: str, value: object, problem: str) -> None:
    if not ok:
        raise ConfigError(flag_of(section, name), value, problem)


def _is_whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _check_choices(section: object) -> None:
    """Every option with a fixed set of values holds one of them (argparse checks the command line; this
    checks configs built in Python too)."""
    for name, how, _ in options_of(type(section)):
        value = getattr(section, name)
        if how.choices is not None and value is not None and value not in how.choices:
            raise ConfigError(how.flag, value, f"is not one of {', '.join(how.choices)}")


def _check_positive_whole(section: type, name: str, value: object, meaning: str) -> None:
    _require(_is_whole(value) and value >= 1, section, name, value, f"must be a whole number >= 1 ({meaning})")


def _physical_memory() -> int | None:
    """This machine's memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _check_positive_real(section: type, name: str, value: object, meaning: str) -> None:
    _require(_is_real(value) and value > 0, section, name, value, f"must be a finite number > 0 ({meaning})")


def span_text(value: tuple | None) -> str:
    """A range or window as written on the command line: ``A:B`` (``A:`` when open-ended)."""
    if value is None:
        return ""
    first, last = value
    return f"{_number(first)}:{'' if last is None else _number(last)}"


def _check_range(section: type, name: str, value: tuple | None, what: str) -> None:
    if value is None:
        return
    first, last = value
    ok = _is_whole(first) and first >= 0 and (last is None or (_is_whole(last) and last > first))
    _require(ok, section, name, span_text(value), f"need 0 <= A < B ({what} A to B-1)")


def _check_file(section: type, name: str, path: str | None, what: str) -> None:
    if path is None:
        return
    where = Path(path)
    _require(where.exists(), section, name, path, f"no such file; give the path of {what}")
    _require(where.is_file(), section, name, path, f"is not a file; give the path of {what}")
    _require(os.access(where, os.R_OK), section, name, path, "cannot be read (permission denied)")


# ---------------------------------------------------------------- sections
@dataclass(frozen=True)
class WorkloadConfig:
    """What to run on: a trace file or a generator, and which of its jobs form the episodes."""

    source: str | None = option(
        None, "WORKLOAD", "trace file (.csv, .csv.gz, .swf or .swf.gz), or a generator name (alibaba-like, deeprm, poisson, "
        "rlsk); default: the built-in alibaba-like generator", positional=True)
    format: str | None = option(
        None, "--format", "trace format: cloudsimpy (CloudSimPy's jobs.csv), alibaba-v2017 or alibaba-v2018 "
        "(the raw batch_task table), swf (the Standard Workload Format of the Parallel Workloads Archive; "
        "its header's MaxNodes and MaxProcs give the default cluster); default swf for a .swf or .swf.gz "
        "file, else cloudsimpy", choices=FORMATS)
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
        None, "--machine-table", "alibaba formats: take the cluster from the trace: server_event.csv (v2017) "
        "or machine_meta.csv (v2018)", metavar="FILE")
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
        f"(default {DEFAULT_LOAD:g})", parse=real)
    synthetic_jobs: int | None = option(
        None, "--synthetic-jobs", "jobs the generator makes (default: alibaba-like 100, deeprm 50, "
        "poisson 5..50, rlsk 1000)", parse=whole, metavar="N")
    seed: int = option(
        0, "--seed", "seed of the generators, random brokers and random faults (default 0)", parse=whole)

    def __post_init__(self) -> None:
        cls = type(self)
        _check_choices(self)
        trace_only = ("format", "instances", "status_policy", "window", "machine_table", "cache")
        if self.is_generator:
            if self.source is not None and self.generator is not None and self.source != self.generator:
                raise ConfigError("--generator", self.generator, f"disagrees with WORKLOAD {self.source!r}; "
                                  "name the generator once")
            for name in trace_only + ("softerror_downtime",):
                value = getattr(self, name)
                _require(value is None, cls, name, span_text(value) if name == "window" else value,
                         f"applies to trace files only, not to the "
                         f"{self.generator_name} generator; leave it out")
            _require(not self.machine_events, cls, "machine_events", True, "applies to trace files only")
            _require(self.load is None or self.generator_name not in UNLOADED_GENERATORS, cls, "load", self.load,
                     f"the {self.generator_name} generator has no target load (it replays a trace's arrivals "
                     f"or statistics); use --generator deeprm, poisson or rlsk, or leave --load out")
        else:
            _check_file(cls, "source", self.source,
                        f"a trace file (.csv, .csv.gz, .swf or .swf.gz), or name a generator: {', '.join(GENERATORS)}")
            _require(self.generator is None, cls, "generator", self.generator,
                     "applies only when no trace file is given; leave it out")
            for name in ("load", "synthetic_jobs"):
                value = getattr(self, name)
                _require(value is None, cls, name, value, "applies to generators, not to a trace file")
            if self.trace_format in ("cloudsimpy", "swf"):
                for name in ("instances", "status_policy", "window", "machine_table"):
                    value = getattr(self, name)
                    _require(value is None, cls, name, span_text(value) if name == "window" else value,
                             f"applies to --format alibaba-v2017 or alibaba-v2018, "
                             f"not to {self.trace_format}; leave it out or give the format")
        _check_file(cls, "instances", self.instances, "batch_instance.csv")
        _check_file(cls, "machine_table", self.machine_table,
                    "server_event.csv (v2017) or machine_meta.csv (v2018)")
        _require(not self.machine_events or self.machine_table is not None, cls, "machine_events", True,
                 "needs --machine-table FILE (the machines whose events to replay)")
        if self.softerror_downtime is not None:
            _require(self.trace_format == "alibaba-v2017" and self.machine_table is not None, cls,
                     "softerror_downtime", self.softerror_downtime,
                     "applies to a v2017 machine table: give --format alibaba-v2017 --machine-table server_event.csv")
            _check_positive_real(cls, "softerror_downtime", self.softerror_downtime, "seconds")
        if self.window is not None:
            start, end = self.window
            _require(_is_real(start) and _is_real(end) and start < end, cls, "window", span_text(self.window),
                     "need finite START < END (seconds of trace time)")
        if self.cache is not None:
            _require(not Path(self.cache).exists() or Path(self.cache).is_dir(), cls, "cache", self.cache,
                     "is a file, not a folder; give a folder for the cache")
        if self.chunk_size is not None:
            _check_positive_whole(cls, "chunk_size", self.chunk_size, "jobs per chunk")
        _check_range(cls, "chunks", self.chunks, "chunks")
        _check_range(cls, "jobs", self.jobs, "jobs")
        _require(self.chunks is None or self.chunk_size is not None, cls, "chunks",
                 span_text(self.chunks),
                 "needs --chunk-size N (the jobs per chunk)")
        _require(self.jobs is None or self.chunk_size is None, cls, "jobs", span_text(self.jobs),
                 "give either --jobs or --chunk-size, not both")
        if self.load is not None:
            _check_positive_real(cls, "load", self.load, "a fraction of capacity such as 0.7")
        if self.synthetic_jobs is not None:
            _check_positive_whole(cls, "synthetic_jobs", self.synthetic_jobs, "jobs to generate")
        _require(_is_whole(self.seed) and self.seed >= 0, cls, "seed", self.seed, "must be a whole number >= 0")

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
        return "swf" if str(self.source).lower().endswith(SWF_SUFFIXES) else "cloudsimpy"

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
        "cluster, or an SWF log's machine)", parse=whole)
    capacity: Mapping[str, float] | None = option(
        None, "--capacity", "capacity of each machine, NAME=NUMBER,... with any resources (default "
        f"{_show(DEFAULT_CAPACITY)}, the generator's, or an SWF log's)", parse=capacity, metavar="NAME=NUMBER,...")

    def __post_init__(self) -> None:
        cls = type(self)
        if self.machines is not None:
            _check_positive_whole(cls, "machines", self.machines, "the number of identical machines")
            memory = _physical_memory()
            _require(memory is None or self.machines * BYTES_PER_MACHINE <= memory, cls, "machines", self.machines,
                     f"a cluster that large needs at least {self.machines * BYTES_PER_MACHINE / 2**30:.3g} GiB of "
                     f"memory ({BYTES_PER_MACHINE} bytes a machine before any work), more than this machine's "
                     f"{(memory or 0) / 2**30:.3g} GiB; give fewer machines")
        if self.capacity is not None:
            _require(len(self.capacity) > 0, cls, "capacity", "", "write NAME=NUMBER pairs, e.g. cpu=64,memory=1")
            for name, value in self.capacity.items():
                _require(_is_real(value) and value >= 0, cls, "capacity", self.capacity,
                         f"{name} must be a finite number >= 0")
            _require(any(v > 0 for v in self.capacity.values()), cls, "capacity", self.capacity,
                     "every resource is 0: no task could ever run")
            object.__setattr__(self, "capacity", dict(self.capacity))


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

    def __post_init__(self) -> None:
        cls = type(self)
        _check_choices(self)
        if self.tick is not None:
            _check_positive_real(cls, "tick", self.tick, "time units between scheduler wakes; leave it out "
                                 "for event-driven scheduling")
        if self.mtbf is not None:
            _check_positive_real(cls, "mtbf", self.mtbf, "mean time between failures")
        if self.mttr is not None:
            _require(self.mtbf is not None, cls, "mttr", self.mttr, "needs --mtbf (the failures to repair)")
            _check_positive_real(cls, "mttr", self.mttr, "mean time to repair")

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
        _check_choices(self)
        if self.workers is not None:
            _check_positive_whole(cls, "workers", self.workers, "worker processes")
        _require(self.address is None or self.executor == "ray", cls, "address", self.address,
                 "applies to --executor ray only")
        if self.address is not None and self.address != "auto":
            host, sep, port = self.address.removeprefix("ray://").rpartition(":")
            _require(bool(host) and bool(sep) and port.isdigit(), cls, "address", self.address,
                     "write HOST:PORT (e.g. 10.0.0.5:6379), ray://HOST:10001 or auto")


@dataclass(frozen=True)
class ReportConfig:
    """What the run prints and writes."""

    json: bool = option(False, "--json", "print one strict JSON object per run, then a summary line", switch=True)
    out: str | None = option(None, "--out", "write the results into DIR (created whole when the run completes)",
                             metavar="DIR")
    overwrite: bool = option(False, "--overwrite", "with --out: replace DIR if it already holds files", switch=True)
    stream: bool = option(
        False, "--stream", "with --out: write each run's tables while it runs and keep only the jobs in flight "
        "(cloudsim.streaming; no utilisation table, no imbalance numbers); the workload itself is still loaded "
        "whole", switch=True)

    def __post_init__(self) -> None:
        cls = type(self)
        _require(not self.overwrite or self.out is not None, cls, "overwrite", True, "needs --out DIR")
        _require(not self.stream or self.out is not None, cls, "stream", True,
                 "writes the tables under --out DIR as the run goes: add --out DIR")
        if self.out is not None:
            problem = folder_problem(self.out, self.overwrite)
            _require(problem is None, cls, "out", self.out, problem)


@dataclass(frozen=True)
class ReplayReportConfig(ReportConfig):
    """What a replay prints and writes: the common outputs, and pictures of each run."""

    plots: bool = option(
        False, "--plots", "with --out: draw each run's Gantt chart and utilisation over time (gantt.png, "
        "utilisation.png beside its tables; `cloudsim plot DIR` draws them for an existing folder)", switch=True)

    def __post_init__(self) -> None:
        super().__post_init__()
        _require(not self.plots or self.out is not None, type(self), "plots", True,
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
        _require(self.folder is not None, cls, "folder", None, "give the folder of a replay's --out")
        where = Path(self.folder)
        _require(where.exists(), cls, "folder", self.folder, "no such folder; give the folder of a replay's --out")
        _require(where.is_dir(), cls, "folder", self.folder, "is not a folder; give the folder of a replay's --out")
        _check_positive_whole(cls, "max_machines", self.max_machines, "machines drawn one row each")


LEADERBOARD_WORKLOADS = ("cloudsimpy", "v2017", "v2018", "swf", "synthetic")
"""The workloads `cloudsim leaderboard` runs by default (`cloudsim.run.leaderboard` says what each is)."""


def _default_data() -> Path:
    """Where the real workload samples are: $CLOUDSIM_DATA, else shared/data beside this checkout."""
    return Path(os.environ.get("CLOUDSIM_DATA") or Path(__file__).resolve().parents[3] / "shared" / "data")


@dataclass(frozen=True)
class LeaderboardConfig:
    """`cloudsim leaderboard`: every broker on every workload, one report folder (resumable)."""

    out: str | None = option(None, "--out", "the report folder: made, or resumed where a run of the same "
                             "leaderboard stopped (finished cells are not run again)", metavar="DIR")
    brokers: tuple[str, ...] = option(
        tuple(BROKERS), "--brokers", "brokers, comma-separated (default: every heuristic and learned broker)",
        parse=name_list, metavar="NAMES", aliases=("--broker",))
    workloads: tuple[str, ...] = option(
        LEADERBOARD_WORKLOADS, "--workloads", f"workloads, comma-separated, of {', '.join(LEADERBOARD_WORKLOADS)} "
        "(default all; those whose files are missing are skipped and named)", parse=name_list, metavar="NAMES")
    seeds: int = option(3, "--seeds", "seeds 0..N-1 of the generated workloads (default 3)", parse=whole,
                        metavar="N")
    data: str | None = option(None, "--data", "the folder of the real workload samples (default $CLOUDSIM_DATA, "
                              "else shared/data beside the cloudsim checkout)", metavar="DIR")
    overwrite: bool = option(False, "--overwrite", "start the report folder afresh instead of resuming it",
                             switch=True)
    runner: RunnerConfig = field(default_factory=RunnerConfig)

    def __post_init__(self) -> None:
        cls = type(self)
        _require(self.out is not None, cls, "out", None, "give the report folder: --out DIR")
        problem = parent_problem(self.out)
        _require(problem is None, cls, "out", self.out, problem)
        _require(not Path(self.out).exists() or Path(self.out).is_dir(), cls, "out", self.out,
                 "is a file; give a folder for the report")
        for name, known in (("brokers", tuple(BROKERS)), ("workloads", LEADERBOARD_WORKLOADS)):
            names = tuple(getattr(self, name))
            object.__setattr__(self, name, names)
            unknown = [n for n in names if n not in known]
            _require(len(names) > 0 and all(names) and not unknown, cls, name, names,
                     f"unknown {', '.join(unknown) or 'empty name'}; choose from {', '.join(known)}")
            _require(len(set(names)) == len(names), cls, name, names, "names one twice; give each once")
        _check_positive_whole(cls, "seeds", self.seeds, "seeds of the generated workloads")
        _require(self.seeds <= MAX_SEEDS, cls, "seeds", self.seeds, f"at most {MAX_SEEDS}")
        if self.data is not None:
            _require(Path(self.data).is_dir(), cls, "data", self.data, "no such folder; give the folder that holds "
                     "cloudsimpy/, alibaba/ and swf/")

    @property
    def data_folder(self) -> Path:
        return Path(self.data) if self.data is not None else _default_data()


@dataclass(frozen=True)
class BrokerConfig:
    """Which brokers run."""

    brokers: tuple[str, ...] = option(
        ("first-fit",), "--brokers", "brokers, comma-separated (the table in docs/guide/brokers.md)",
        parse=name_list, metavar="NAMES", aliases=("--broker",))
    checkpoint: tuple[tuple[str, str], ...] = option(
        (), "--checkpoint", "weights for learned brokers, NAME=PATH[,NAME=PATH] (a bare PATH when one learned "
        "broker runs); default: the checkpoints shipped with cloudsim", parse=checkpoint_list, metavar="NAME=PATH")
    window: int | None = option(
        None, "--task-window", "show every heuristic only the first N waiting tasks, as the learned Deepk8s brokers see "
        "them (default: all; the deepk8s workload: 10)", parse=whole, metavar="N")

    def __post_init__(self) -> None:
        cls = type(self)
        _require(not isinstance(self.brokers, str), cls, "brokers", self.brokers,
                 "give the names as a tuple, e.g. BrokerConfig((\"first-fit\",))")
        object.__setattr__(self, "brokers", tuple(self.brokers))
        choose = (f"choose from {', '.join(BROKERS)} (DeepRM's environment: {', '.join(DEEPRM_ENV_BROKERS)}; RLSK's "
                  f"federation: {', '.join(RLSK_DISPATCHERS)})")
        _require(len(self.brokers) > 0 and all(self.brokers), cls, "brokers", self.brokers,
                 f"give one or more broker names separated by commas; {choose}")
        unknown = [b for b in self.brokers if b not in BROKERS and b not in DEEPRM_ENV_BROKERS
                   and b not in RLSK_DISPATCHERS]
        _require(not unknown, cls, "brokers", self.brokers, f"unknown broker(s) {', '.join(unknown)}; {choose}")
        repeated = sorted({b for b in self.brokers if self.brokers.count(b) > 1})
        _require(not repeated, cls, "brokers", self.brokers, f"{', '.join(repeated)} named twice; name each once")
        if isinstance(self.checkpoint, str):  # a bare path from Python
            object.__setattr__(self, "checkpoint", (("", self.checkpoint),))
        learned = [b for b in self.brokers if b in LEARNED]
        _require(not self.checkpoint or learned, cls, "checkpoint", ",".join(p for _, p in self.checkpoint),
                 f"applies to learned brokers ({', '.join(LEARNED)}) and --brokers names none; add one or leave "
                 f"the checkpoint out")
        pairs = []
        for name, path in self.checkpoint:
            if not name:
                _require(len(learned) == 1, cls, "checkpoint", path,
                         f"name the broker it is for: NAME=PATH with NAME among the learned brokers in --brokers "
                         f"({', '.join(learned) or 'none'})")
                name = learned[0]
            _require(name in learned, cls, "checkpoint", f"{name}={path}",
                     f"{name} is not a learned broker in --brokers ({', '.join(learned) or 'none'}); add it to "
                     f"--brokers or leave this checkpoint out")
            _check_file(cls, "checkpoint", path, f"a {name} checkpoint (cloudsim train {TRAINED_BY[name]})")
            pairs.append((name, path))
        names = [name for name, _ in pairs]
        _require(len(set(names)) == len(names), cls, "checkpoint", self.checkpoint,
                 "names a broker twice; give one checkpoint per broker")
        object.__setattr__(self, "checkpoint", tuple(pairs))
        if self.window is not None:
            _check_positive_whole(cls, "window", self.window, "visible tasks")

    def options(self, broker: str) -> dict:
        """Keyword options for `agents.make_broker` of ``broker``."""
        path = dict(self.checkpoint).get(broker)
        return {"checkpoint": path} if path else {}


@dataclass(frozen=True)
class RunConfig:
    """Everything a replay needs; `compare` and `bench` add their own options."""

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

    @property
    def writes_tables(self) -> bool:
        """Whether --out holds each run's tables (replay), which --stream writes as the run goes."""
        return True

    @property
    def window(self) -> int | None:
        """The task window heuristics see: --window, else the workload's own (`GENERATOR_WINDOWS`)."""
        if self.brokers.window is not None:
            return self.brokers.window
        return GENERATOR_WINDOWS.get(self.workload.generator_name) if self.workload.is_generator else None

    def __post_init__(self) -> None:
        _require(not self.report.stream or self.writes_tables, ReportConfig, "stream", True,
                 "applies to replay, whose --out holds each run's tables; leave it out")
        if self.workload.machine_table is not None:
            for name in ("machines", "capacity"):
                value = getattr(self.cluster, name)
                _require(value is None, ClusterConfig, name, value,
                         "the cluster comes from --machine-table; leave it out or drop --machine-table")
        self._check_core_brokers()

    def _check_core_brokers(self) -> None:
        """Refuse the names that only dispatch jobs in RLSK's federation (an oracle, say) on the core."""
        if self.federated:
            return
        federation_only = [b for b in self.brokers.brokers if b in RLSK_DISPATCHERS and b not in BROKERS]
        _require(not federation_only, BrokerConfig, "brokers", self.brokers.brokers,
                 f"{', '.join(federation_only)} dispatches jobs to RLSK's clusters only; run it with `cloudsim compare "
                 f"rlsk --brokers {','.join(federation_only)}`")


@dataclass(frozen=True)
class CompareConfig(RunConfig):
    """`cloudsim compare`: every broker on the same episodes, at several loads and seeds."""

    writes_tables = False  # its --out holds a comparison, not each run's tables

    brokers: BrokerConfig = field(default_factory=lambda: BrokerConfig(HEURISTICS))
    report: ReportConfig = field(default_factory=ReportConfig)

    loads: tuple[float, ...] | None = option(
        None, "--loads", "generator loads: 0.1,0.4,0.7 or START:STOP:STEP with STOP included (default --load)",
        parse=load_list, metavar="LOADS")
    seeds: int | tuple[int, int] = option(
        1, "--seeds", "seeds per load or episode: N runs --seed, --seed+1, ..., A:B runs seeds A..B-1 (held-out "
        "seeds for learned brokers) (default 1)", parse=seed_span, metavar="N|A:B")
    env: str | None = option(
        None, "--env", "cloudsim (the event-driven simulator), deeprm (DeepRM's own environment, exactly as "
        "its code behaves: the deeprm workload's jobsets, one per seed; brokers sjf, packer, tetris-star, random, "
        "deeprm, which are also the default) or rlsk (RLSK's federation: each job sent to a cluster's queue or "
        "postponed; brokers first-fit, random, round-robin, least-load over clusters and rlsk, which are also the "
        "default) (default: rlsk for the rlsk workload, else cloudsim)", choices=ENVIRONMENTS)
    nodes: int | None = option(
        None, "--nodes", "--env rlsk: nodes per cluster, the cluster's capacity split evenly; a queued job starts "
        "on the least-allocated node that holds it (default 1: a cluster is one resource pool)", parse=whole,
        metavar="N")
    sizes: str | None = option(
        None, "--sizes", "--env deeprm: job sizes, paper (section 4.1: loads up to 92 %%) or code (the published "
        "code's: loads up to 184 %%) (default paper)", choices=("paper", "code"))
    slots: int | None = option(None, "--slots", "--env deeprm: M, the visible job slots (default 10)", parse=whole,
                               metavar="M")
    knobs: tuple[float, ...] | None = option(
        None, "--knobs", f"--env deeprm: Tetris* knobs, one tetris-star row each (default {DEEPRM_TETRIS_STAR_KNOB:g})", parse=real_list,
        metavar="K,K")
    arrivals: str | None = option(
        None, "--arrivals", "--env deeprm: bernoulli (DeepRM's jobsets: 50 steps, at most one arrival each) or "
        "poisson (DeepRM_Plus's: 5-50 jobs, Poisson arrivals, the code's sizes unless --sizes) (default bernoulli)",
        choices=("bernoulli", "poisson"))

    def __post_init__(self) -> None:
        if self.env is None:  # first: the checks of RunConfig ask whether the brokers are RLSK's dispatchers
            rlsk = self.workload.is_generator and self.workload.generator_name == "rlsk"
            object.__setattr__(self, "env", "rlsk" if rlsk else "cloudsim")
        super().__post_init__()
        cls = type(self)
        _require(self.nodes is None or self.env == "rlsk", cls, "nodes", self.nodes,
                 "applies to RLSK's federation; add --env rlsk (with the rlsk workload)")
        if self.env == "rlsk":
            self._check_rlsk_env()
        if self.env == "deeprm":
            self._check_deeprm_env()
        else:
            for name in ("sizes", "slots", "knobs", "arrivals"):
                _require(getattr(self, name) is None, cls, name, getattr(self, name),
                         "applies to DeepRM's environment; add --env deeprm")
        if isinstance(self.seeds, tuple):
            first, stop = self.seeds
            _require(_is_whole(first) and _is_whole(stop) and 0 <= first < stop, cls, "seeds", f"{first}:{stop}",
                     "write A:B with 0 <= A < B (seeds A..B-1)")
            count = stop - first
        else:
            _check_positive_whole(cls, "seeds", self.seeds, "seeds per load or episode")
            count = self.seeds
        _require(count <= MAX_SEEDS, cls, "seeds", self.seeds, f"at most {MAX_SEEDS:,} seeds per load or "
                 "episode (each is a run); run several compares for more")
        if self.loads is not None:
            _require(len(self.loads) > 0 and all(_is_real(v) and v > 0 for v in self.loads), cls, "loads",
                     self.loads, "every load must be a finite fraction of capacity > 0")
            _require(self.workload.is_generator, cls, "loads", self.loads,
                     "applies to generators; a trace runs as it is (use --chunks)")
            _require(self.workload.generator_name not in UNLOADED_GENERATORS, cls, "loads", self.loads,
                     f"applies to the deeprm, poisson and rlsk generators, not {self.workload.generator_name}")
            _require(self.workload.load is None, cls, "loads", self.loads, "give either --load or --loads")
            _require(len(set(self.loads)) == len(self.loads), cls, "loads", self.loads,
                     "names a load twice; name each once")

    def _check_deeprm_env(self) -> None:
        cls = type(self)
        if self.brokers.brokers == HEURISTICS:  # compare's default list: DeepRM's own brokers instead
            object.__setattr__(self, "brokers", BrokerConfig(DEEPRM_DEFAULT_BROKERS, self.brokers.checkpoint,
                                                             self.brokers.window))
        _require(self.workload.is_generator and self.workload.generator_name == "deeprm", cls, "env", self.env,
                 "runs the deeprm workload's jobsets; write `cloudsim compare deeprm --env deeprm ...`")
        other = [b for b in self.brokers.brokers if b not in DEEPRM_ENV_BROKERS]
        _require(not other, BrokerConfig, "brokers", self.brokers.brokers, f"{', '.join(other)} cannot act in DeepRM's "
                 f"environment; choose from {', '.join(DEEPRM_ENV_BROKERS)}")
        if self.slots is not None:
            _check_positive_whole(cls, "slots", self.slots, "job slots")
        if self.knobs is not None:
            _require(len(self.knobs) > 0 and all(_is_real(k) and 0 <= k <= 1 for k in self.knobs), cls, "knobs",
                     self.knobs, "every knob must be in [0, 1] (0 = SJF, 1 = Packer)")
            _require("tetris-star" in self.brokers.brokers, cls, "knobs", self.knobs, "add tetris-star to --brokers")
        from cloudsim.envs.deeprm import arrival_rate

        params = self.deeprm_params()
        for load in self.load_list:
            try:
                arrival_rate(self.deeprm_arrivals, load, params)
            except ValueError as err:
                raise ConfigError("--loads" if self.loads else "--load", load, str(err)) from None

    def _check_rlsk_env(self) -> None:
        cls = type(self)
        if self.brokers.brokers == HEURISTICS:  # compare's default list: RLSK's Table 1 instead
            object.__setattr__(self, "brokers", BrokerConfig(RLSK_DEFAULT_BROKERS, self.brokers.checkpoint,
                                                             self.brokers.window))
        _require(self.workload.is_generator and self.workload.generator_name == "rlsk", cls, "env", self.env,
                 "runs RLSK's federation on the rlsk workload; write `cloudsim compare rlsk ...`")
        other = [b for b in self.brokers.brokers if b not in RLSK_DISPATCHERS]
        _require(not other, BrokerConfig, "brokers", self.brokers.brokers,
                 f"{', '.join(other)} cannot dispatch jobs to clusters; in RLSK's federation choose from "
                 f"{', '.join(RLSK_DISPATCHERS)}, or add --env cloudsim to run machine-level brokers on the "
                 f"rlsk workload")
        _require(self.brokers.window is None, BrokerConfig, "window", self.brokers.window,
                 "applies to brokers that pick among waiting tasks; RLSK's federation dispatches each job as it "
                 "arrives")
        if self.nodes is not None:
            _check_positive_whole(cls, "nodes", self.nodes, "nodes per cluster")

    @property
    def federated(self) -> bool:
        return self.env == "rlsk"

    def federation_cluster(self, cluster):
        """--env rlsk: the workload's clusters (one machine each), each split into --nodes equal nodes."""
        from cloudsim.envs.rlsk import federation_cluster

        nodes = self.nodes or 1
        if nodes == 1:
            return cluster
        return federation_cluster(cluster.machines, nodes, dict(zip(cluster.resources, cluster.capacities[0])))

    @property
    def deeprm_arrivals(self) -> str:
        """--env deeprm: how jobs arrive (`cloudsim.envs.deeprm.ARRIVALS`)."""
        return self.arrivals or "bernoulli"

    def deeprm_params(self):
        """DeepRM's environment (`cloudsim.envs.deeprm.DeepRMParams`) of this comparison; the load
        sets only the jobsets (`cloudsim.envs.deeprm.jobsets_at_load`)."""
        from cloudsim.envs.deeprm import DeepRMParams

        default_sizes = "code" if self.deeprm_arrivals == "poisson" else "paper"
        return DeepRMParams(slots=self.slots or 10, mode=self.sizes or default_sizes)

    @property
    def seed_list(self) -> range:
        """The seeds each load or episode runs with."""
        if isinstance(self.seeds, tuple):
            return range(*self.seeds)
        return range(self.workload.seed, self.workload.seed + self.seeds)

    @property
    def load_list(self) -> tuple[float | None, ...]:
        if not self.workload.is_generator or self.workload.generator_name in UNLOADED_GENERATORS:
            return (None,)
        return self.loads or (self.workload.effective_load,)


@dataclass(frozen=True)
class BenchConfig(RunConfig):
    """`cloudsim bench`: a candidate broker's makespan against baselines, chunk by chunk (DeepJS Table 2)."""

    writes_tables = False  # its --out holds a comparison, not each run's tables

    simulation: SimulationConfig = field(default_factory=TickedSimulationConfig)
    brokers: BrokerConfig = field(default_factory=lambda: BrokerConfig(("first-fit", "tetris", "deepjs")))
    report: ReportConfig = field(default_factory=ReportConfig)
    candidate: str | None = option(
        None, "--candidate", "the broker compared with the others (default: deepjs if listed, else the last)")
    plots: str | None = option(None, "--plots", "write the makespan-difference plots (PNG) into DIR",
                               metavar="DIR")

    def __post_init__(self) -> None:
        super().__post_init__()
        cls = type(self)
        names = self.brokers.brokers
        _require(len(names) >= 2, BrokerConfig, "brokers", names,
                 "bench compares a candidate with baselines: give two or more brokers")
        _require(self.candidate is None or self.candidate in names, cls, "candidate", self.candidate,
                 f"must be one of --brokers {','.join(names)}")
        _require(self.workload.chunk_size is not None, WorkloadConfig, "chunk_size", None,
                 "bench compares chunks: give --chunk-size N (and --chunks A:B)")
        if self.plots is not None:
            problem = folder_problem(self.plots, overwrite=True)
            _require(problem is None, cls, "plots", self.plots, problem)

    @property
    def candidate_name(self) -> str:
        names = self.brokers.brokers
        return self.candidate or ("deepjs" if "deepjs" in names else names[-1])


DEEPK8S_SPACE = {
    "learning_rate": ("log", 1e-5, 3e-4),
    "iterations": ("int", 20, 150, 10),
    "entropy": ("float", 0.0, 0.02),
    "clip": ("float", 0.05, 0.3),
    "epochs": ("int", 2, 8, 1),
    "gae_lambda": ("float", 0.8, 1.0),
    "steps_per_env": ("choice", (128, 256, 512)),
}
"""What a trial may set of `Deepk8sConfig` (PPO from a DAgger actor), each as (kind, bounds): ``log`` a
log-uniform real, ``float`` a uniform real, ``int`` a whole number from low to high by step, ``choice``
one of the values."""


@dataclass(frozen=True)
class TuneConfig:
    """`cloudsim tune deepk8s`: how many trials, scored on which seeds, written where."""

    out: str | None = option(None, "--out", "the search folder: made, or resumed where the same search stopped",
                             metavar="DIR")
    trials: int = option(20, "--trials", "trials in all (finished ones of a resumed search count)", parse=whole,
                         metavar="N")
    seeds: tuple[int, int | None] = option((100, 120), "--seeds", "validation sequences A:B (default 100:120); "
                                           "keep them apart from the seeds you report", parse=index_range,
                                           metavar="A:B")
    tasks: int = option(DEFAULT_TASKS, "--tasks", "tasks per training and validation sequence",
                        parse=whole, metavar="N")
    init: str | None = option(None, "--init", "the DAgger policy.pt whose actor every trial starts from (default "
                              "the shipped deepk8s-dagger)", metavar="PATH")
    seed: int = option(0, "--seed", "seeds the sampler and every trial's training", parse=whole, metavar="N")
    overwrite: bool = option(False, "--overwrite", "start the search folder afresh instead of resuming it",
                             switch=True)
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    space: dict = field(default_factory=lambda: dict(DEEPK8S_SPACE))
    base: dict = field(default_factory=dict)  # fixed Deepk8sConfig settings of every trial (tests make them small)

    def __post_init__(self) -> None:
        cls = type(self)
        _require(self.out is not None, cls, "out", None, "give the search folder: --out DIR")
        problem = parent_problem(self.out)
        _require(problem is None, cls, "out", self.out, problem)
        _require(not Path(self.out).is_file(), cls, "out", self.out, "is a file; give a folder for the search")
        _check_positive_whole(cls, "trials", self.trials, "trials")
        _check_positive_whole(cls, "tasks", self.tasks, "tasks per sequence")
        start, stop = self.seeds
        _require(start >= 0 and stop is not None and stop > start, cls, "seeds", span_text(self.seeds),
                 "give A:B with 0 <= A < B")
        _require(self.init is None or Path(self.init).is_file(), cls, "init", self.init,
                 "no such file; give a DAgger policy.pt from cloudsim train deepk8s --algo dagger")

    @property
    def init_path(self) -> str:
        return self.init if self.init is not None else str(shipped_checkpoint("dagger"))
