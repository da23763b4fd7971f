"""`cloudsim compare` and `cloudsim bench`: a replay's options and theirs; each experiment of compare
(the simulator, RLSK's federation, DeepRM's environment, the GPU fill) has its own config."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import ClassVar

from agents import DEEPRM_ENV_BROKERS, DEEPRM_TETRIS_STAR_KNOB, GPU_POLICIES, LEARNED, RLSK_DISPATCHERS
from cloudsim.engine.checks import is_finite_number, is_whole
from cloudsim.run.output import folder_problem
from cloudsim.run.config.fields import (
    ConfigError, Option, check_positive_whole, load_list, option, real, real_list, require,
    seed_span, whole,
)
from cloudsim.run.config.sections import (
    BrokerConfig, HEURISTICS, MAX_SEEDS, ReportConfig, RunConfig, SimulationConfig, TickedSimulationConfig,
    UNLOADED_GENERATORS, WorkloadConfig,
)

ENVIRONMENTS = ("cloudsim", "deeprm", "rlsk")
"""Where `cloudsim compare` runs: the event-driven simulator, DeepRM's own environment, or RLSK's
federation (the simulator with each job dispatched to a cluster's queue)."""
MAX_NODES = 10_000
"""The most nodes a cluster of RLSK's federation may be split into (--nodes)."""
MAX_FILL = 10.0
"""The largest --fill factor: a fill run offers pods up to this many times the cluster's GPUs."""
RLSK_DEFAULT_BROKERS = ("first-fit", "random", "round-robin", "least-load", "rlsk")
"""`cloudsim compare rlsk`'s brokers (in RLSK's federation) unless --brokers names others: RLSK's Table 1."""
DEEPRM_DEFAULT_BROKERS = ("sjf", "packer", "tetris-star", "random", "deeprm")


@dataclass(frozen=True)
class CompareConfig(RunConfig):
    """`cloudsim compare` on the simulator: every broker on the same episodes, at several loads and seeds.

    DeepRM's environment, RLSK's federation and the GPU fill are experiments of their own, each with
    its own config (`DeepRMCompareConfig`, `FederationCompareConfig`, `FillCompareConfig`) and command
    path; `compare_config` picks one from the command line's options.
    """

    ENVIRONMENT: ClassVar[str] = "cloudsim"
    """Where the comparison runs: one of `ENVIRONMENTS` (``--env``)."""
    NOT_HERE: ClassVar[str] = ""
    """What a command line that gives one of this experiment's own options to another experiment is told."""
    writes_tables = False  # its --out holds a comparison, not each run's tables
    DEFAULT_BROKERS = HEURISTICS

    report: ReportConfig = field(default_factory=ReportConfig)

    loads: tuple[float, ...] | None = option(
        None, "--loads", "generator loads: 0.1,0.4,0.7 or START:STOP:STEP with STOP included (default --load; "
        "a trace file takes one --load)",
        parse=load_list, metavar="LOADS")
    seeds: int | tuple[int, int] = option(
        1, "--seeds", "seeds per load or episode: N runs --seed, --seed+1, ..., A:B runs seeds A..B-1 (held-out "
        "seeds for learned brokers) (default 1)", parse=seed_span, metavar="N|A:B")

    @property
    def environment(self) -> str:
        return self.ENVIRONMENT

    def __post_init__(self) -> None:
        super().__post_init__()
        cls = type(self)
        if isinstance(self.seeds, tuple):
            first, stop = self.seeds
            require(is_whole(first) and is_whole(stop) and 0 <= first < stop, cls, "seeds", f"{first}:{stop}",
                     "write A:B with 0 <= A < B (seeds A..B-1)")
            count = stop - first
        else:
            check_positive_whole(cls, "seeds", self.seeds, "seeds per load or episode")
            count = self.seeds
        require(count <= MAX_SEEDS, cls, "seeds", self.seeds, f"at most {MAX_SEEDS:,} seeds per load or "
                 "episode (each is a run); run several compares for more")
        if self.loads is not None:
            require(len(self.loads) > 0 and all(is_finite_number(v) and v > 0 for v in self.loads), cls, "loads",
                     self.loads, "every load must be a finite fraction of capacity > 0")
            require(self.workload.is_generator, cls, "loads", self.loads,
                     "sweeps the load of generators (deeprm, poisson, rlsk); on a trace file give one --load X "
                     "(its submit times scaled to offered load X) and run compare once per load")
            require(self.workload.generator_name not in UNLOADED_GENERATORS, cls, "loads", self.loads,
                     f"applies to the deeprm, poisson and rlsk generators, not {self.workload.generator_name}")
            require(self.workload.load is None, cls, "loads", self.loads, "give either --load or --loads")
            require(len(set(self.loads)) == len(self.loads), cls, "loads", self.loads,
                     "names a load twice; name each once")
            for load in self.loads if self.DRAWS_JOBS else ():
                self.workload.check_drawn_load(load, cls, "loads")

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
class FederationCompareConfig(CompareConfig):
    """`cloudsim compare rlsk`: RLSK's federation, each job sent to a cluster's queue or postponed by a
    dispatcher (RLSK's Table 1 unless --brokers names others)."""

    ENVIRONMENT = "rlsk"
    DEFAULT_BROKERS = RLSK_DEFAULT_BROKERS
    NOT_HERE = "applies to RLSK's federation; add --env rlsk (with the rlsk workload)"

    nodes: int | None = option(
        None, "--nodes", "--env rlsk: nodes per cluster, the cluster's capacity split evenly; a queued job starts "
        "on the least-allocated node that holds it (default 1: a cluster is one resource pool)", parse=whole,
        metavar="N")

    @property
    def federated(self) -> bool:
        return True

    def __post_init__(self) -> None:
        super().__post_init__()
        cls = type(self)
        if not (self.workload.is_generator and self.workload.generator_name == "rlsk"):
            raise ConfigError(ENV_OPTION.flag, "rlsk", "runs RLSK's federation on the rlsk workload; write "
                              "`cloudsim compare rlsk ...`")
        other = [b for b in self.chosen_brokers.brokers if b not in RLSK_DISPATCHERS]
        require(not other, BrokerConfig, "brokers", self.chosen_brokers.brokers,
                 f"{', '.join(other)} cannot dispatch jobs to clusters; in RLSK's federation choose from "
                 f"{', '.join(RLSK_DISPATCHERS)}, or add --env cloudsim to run machine-level brokers on the "
                 f"rlsk workload")
        require(self.chosen_brokers.window is None, BrokerConfig, "window", self.chosen_brokers.window,
                 "applies to brokers that pick among waiting tasks; RLSK's federation dispatches each job as it "
                 "arrives")
        if self.nodes is not None:
            check_positive_whole(cls, "nodes", self.nodes, "nodes per cluster")
            require(self.nodes <= MAX_NODES, cls, "nodes", self.nodes, f"at most {MAX_NODES:,} nodes per cluster "
                    "(each gets 1/N of its cluster's capacity, so RLSK's jobs fit none long before)")


@dataclass(frozen=True)
class DeepRMCompareConfig(CompareConfig):
    """`cloudsim compare deeprm --env deeprm`: DeepRM's own environment, exactly as its code behaves (the
    deeprm workload's jobsets, one per seed), with DeepRM's brokers."""

    ENVIRONMENT = "deeprm"
    DEFAULT_BROKERS = DEEPRM_DEFAULT_BROKERS
    DRAWS_JOBS = False  # DeepRM's environment draws its jobsets (`cloudsim.engine.envs.deeprm.jobsets_at_load`)
    NOT_HERE = "applies to DeepRM's environment; add --env deeprm"

    sizes: str | None = option(
        None, "--sizes", "--env deeprm: job sizes, paper (section 4.1: loads up to 92 %%) or code (the published "
        "code's: loads up to 184 %%) (default paper; code with --arrivals poisson or when deeprm or deeprm-plus runs, "
        "as they were trained on it)", choices=("paper", "code"))
    slots: int | None = option(None, "--slots", "--env deeprm: M, the visible job slots (default 10)", parse=whole,
                               metavar="M")
    knobs: tuple[float, ...] | None = option(
        None, "--knobs", f"--env deeprm: Tetris* knobs, one tetris-star row each (default {DEEPRM_TETRIS_STAR_KNOB:g})",
        parse=real_list, metavar="K,K")
    arrivals: str | None = option(
        None, "--arrivals", "--env deeprm: bernoulli (DeepRM's jobsets: 50 steps, at most one arrival each) or "
        "poisson (DeepRM_Plus's: 5-50 jobs, Poisson arrivals, the code's sizes unless --sizes) (default bernoulli)",
        choices=("bernoulli", "poisson"))

    def __post_init__(self) -> None:
        super().__post_init__()
        cls = type(self)
        if not (self.workload.is_generator and self.workload.generator_name == "deeprm"):
            raise ConfigError(ENV_OPTION.flag, "deeprm", "runs the deeprm workload's jobsets; write `cloudsim "
                              "compare deeprm --env deeprm ...`")
        other = [b for b in self.chosen_brokers.brokers if b not in DEEPRM_ENV_BROKERS]
        require(not other, BrokerConfig, "brokers", self.chosen_brokers.brokers,
                f"{', '.join(other)} cannot act in DeepRM's environment; choose from {', '.join(DEEPRM_ENV_BROKERS)}")
        if self.slots is not None:
            check_positive_whole(cls, "slots", self.slots, "job slots")
        if self.knobs is not None:
            require(len(self.knobs) > 0 and all(is_finite_number(k) and 0 <= k <= 1 for k in self.knobs), cls,
                    "knobs", self.knobs, "every knob must be in [0, 1] (0 = SJF, 1 = Packer)")
            require("tetris-star" in self.chosen_brokers.brokers, cls, "knobs", self.knobs,
                    "add tetris-star to --brokers")
            require(len(set(self.knobs)) == len(self.knobs), cls, "knobs", self.knobs,
                    "names a knob twice (a doubled sample); give each once")
        from cloudsim.engine.envs.deeprm import arrival_rate

        params = self.deeprm_params()
        for load in self.load_list:
            try:
                arrival_rate(self.deeprm_arrivals, load, params)
            except ValueError as err:
                raise ConfigError("--loads" if self.loads else "--load", load, str(err)) from None

    @property
    def deeprm_arrivals(self) -> str:
        """How jobs arrive (`cloudsim.engine.envs.deeprm.ARRIVALS`)."""
        return self.arrivals or "bernoulli"

    def deeprm_params(self):
        """DeepRM's environment (`cloudsim.engine.envs.deeprm.DeepRMParams`) of this comparison; the load
        sets only the jobsets (`cloudsim.engine.envs.deeprm.jobsets_at_load`)."""
        from cloudsim.engine.envs.deeprm import DeepRMParams

        return DeepRMParams(slots=self.slots or 10, mode=self.sizes or self.default_sizes)

    @property
    def default_sizes(self) -> str:
        """--sizes when not given: the code's for Poisson arrivals and whenever a learned DeepRM policy runs
        (`cloudsim train deeprm` trains on them, and so were the shipped checkpoints), else the paper's."""
        learned = any(b in ("deeprm", "deeprm-plus") for b in self.chosen_brokers.brokers)
        return "code" if self.deeprm_arrivals == "poisson" or learned else "paper"


@dataclass(frozen=True)
class FillCompareConfig(CompareConfig):
    """`cloudsim compare PODS --format openb --fill F`: the fill experiment of Weng et al. (ATC 2023) on a GPU
    cluster, with the GPU policies unless --brokers names others."""

    DEFAULT_BROKERS = tuple(GPU_POLICIES)

    fill: float | None = option(
        None, "--fill", "--format openb: the fill experiment of Weng et al. (ATC 2023): each seed shuffles the pods, "
        "inflates them to FACTOR x the cluster's GPUs, offers them one at a time (a pod that fits nowhere fails; "
        "nothing departs) and reports unallocated GPU and fragmentation against arrived workload (default brokers: "
        "the six GPU policies)", parse=real, metavar="FACTOR")

    def __post_init__(self) -> None:
        super().__post_init__()
        cls = type(self)
        require(is_finite_number(self.fill) and 0 < self.fill <= MAX_FILL, cls, "fill", self.fill,
                 f"must be a factor of the cluster's GPUs in (0, {MAX_FILL:g}], such as 1.3 (the paper's)")
        require(not self.workload.is_generator and self.workload.trace_format == "openb", cls, "fill", self.fill,
                 "fills a GPU cluster with the pods of an openb pod list: give the pod list as WORKLOAD with "
                 "--format openb --machine-table NODES")
        for name, value in (("chunk_size", self.workload.chunk_size), ("jobs", self.workload.jobs)):
            require(value is None, WorkloadConfig, name, value, "a fill run offers every pod of the list (inflated "
                    "to --fill); leave it out")
        require(self.simulation.mtbf is None, SimulationConfig, "mtbf", self.simulation.mtbf,
                 "a fill run has no time to fail in (one pod an instant, nothing departs); leave it out")
        require(self.workload.load is None, WorkloadConfig, "load", self.workload.load,
                "a fill run offers its pods one an instant, whatever their times; --fill sets how many: leave "
                "--load out")
        learned = [b for b in self.chosen_brokers.brokers if b in LEARNED]
        require(not learned, BrokerConfig, "brokers", self.chosen_brokers.brokers,
                f"{', '.join(learned)} was trained on CPU clusters; a fill run takes heuristics and the GPU policies "
                f"({', '.join(GPU_POLICIES)})")


EXPERIMENTS = (CompareConfig, FederationCompareConfig, DeepRMCompareConfig, FillCompareConfig)
"""Every `cloudsim compare` experiment's config; each option belongs to the first that declares it."""

ENV_OPTION = Option(
    "--env", "cloudsim (the event-driven simulator), deeprm (DeepRM's own environment, exactly as its code behaves: "
    "the deeprm workload's jobsets, one per seed; brokers sjf, packer, tetris-star, random, deeprm, which are also "
    "the default) or rlsk (RLSK's federation: each job sent to a cluster's queue or postponed; brokers first-fit, "
    "random, round-robin, least-load over clusters and rlsk, which are also the default) (default: rlsk for the "
    "rlsk workload, else cloudsim)", choices=ENVIRONMENTS)
"""`cloudsim compare --env`: which experiment's config the options make (`compare_config`)."""


def compare_config(sections: dict, options: dict, env: str | None = None) -> CompareConfig:
    """The config of the comparison a command line asks for: `FillCompareConfig` with ``fill``, else by
    ``env`` (default: rlsk for the rlsk workload, else cloudsim). ``sections`` are the run's sections
    (workload, cluster, ...), ``options`` the comparison options given; an option of another experiment is
    refused, naming it and the fix."""
    workload = sections.get("workload", WorkloadConfig())
    if "fill" in options:
        require(env in (None, "cloudsim"), FillCompareConfig, "fill", options["fill"],
                "runs on the simulator: leave --env out")
        chosen = FillCompareConfig
    else:
        if env is None:
            env = "rlsk" if workload.is_generator and workload.generator_name == "rlsk" else "cloudsim"
        chosen = next(cls for cls in EXPERIMENTS if cls.ENVIRONMENT == env)
    own = {f.name for f in fields(chosen)}
    for name, value in options.items():
        if name not in own:
            owner = next(cls for cls in EXPERIMENTS if name in {f.name for f in fields(cls)})
            require(False, owner, name, value, owner.NOT_HERE)
    return chosen(**sections, **options)


@dataclass(frozen=True)
class BenchReportConfig(ReportConfig):
    """bench's outputs: --overwrite replaces a non-empty --out DIR or --plots DIR."""

    overwrite_needs_out = False


@dataclass(frozen=True)
class BenchConfig(RunConfig):
    """`cloudsim bench`: a candidate broker's makespan against baselines, chunk by chunk (DeepJS Table 2)."""

    writes_tables = False  # its --out holds a comparison, not each run's tables

    DEFAULT_BROKERS = ("first-fit", "tetris", "deepjs")

    simulation: SimulationConfig = field(default_factory=TickedSimulationConfig)
    report: ReportConfig = field(default_factory=BenchReportConfig)
    candidate: str | None = option(
        None, "--candidate", "the broker compared with the others (default: deepjs if listed, else the last)")
    plots: str | None = option(None, "--plots", "write the makespan-difference plots (PNG) into DIR (a folder "
                               "that already holds files needs --overwrite)", metavar="DIR")

    def __post_init__(self) -> None:
        super().__post_init__()
        cls = type(self)
        names = self.chosen_brokers.brokers
        require(len(names) >= 2, BrokerConfig, "brokers", names,
                 "bench compares a candidate with baselines: give two or more brokers")
        require(self.candidate is None or self.candidate in names, cls, "candidate", self.candidate,
                 f"must be one of --brokers {','.join(names)}")
        require(self.workload.chunk_size is not None, WorkloadConfig, "chunk_size", None,
                 "bench compares chunks: give --chunk-size N (and --chunks A:B)")
        require(not self.report.overwrite or self.report.out is not None or self.plots is not None, ReportConfig,
                "overwrite", True, "needs --out DIR or --plots DIR")
        if self.plots is not None:
            problem = folder_problem(self.plots, self.report.overwrite, self.reads)
            require(problem is None, cls, "plots", self.plots, problem)

    @property
    def candidate_name(self) -> str:
        names = self.chosen_brokers.brokers
        return self.candidate or ("deepjs" if "deepjs" in names else names[-1])
