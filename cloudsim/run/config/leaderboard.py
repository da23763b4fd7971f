"""`cloudsim leaderboard`'s options."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agents import BROKERS, plugins
from agents.registry import broker_names
from cloudsim.run.output import parent_problem, place_problem
from cloudsim.run.config.fields import check_positive_whole, name_list, option, require, whole
from cloudsim.run.config.sections import MAX_SEEDS, RunnerConfig, check_distinct_brokers, check_user_brokers
from traces.data import data_folder

LEADERBOARD_WORKLOADS = ("cloudsimpy", "v2017@0.8", "v2017@1.1", "v2018@0.8", "v2018@1.1", "swf", "synthetic",
                         "gpu-fill", "gpu-replay")
"""The workloads `cloudsim leaderboard` runs by default (`cloudsim.run.leaderboard` says what each is)."""


@dataclass(frozen=True)
class LeaderboardConfig:
    """`cloudsim leaderboard`: every broker on every workload, one report folder (resumable)."""

    out: str | None = option(None, "--out", "the report folder: made, or resumed where a run of the same "
                             "leaderboard stopped (finished cells are not run again)", metavar="DIR")
    brokers: tuple[str, ...] = option(
        broker_names(listed=True), "--brokers", "brokers, comma-separated (default: every "
        "heuristic, learned broker and GPU policy; the GPU policies run on the GPU workloads only)",
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
        require(self.out is not None, cls, "out", None, "give the report folder: --out DIR")
        if self.data is not None:
            data = Path(self.data)
            require(data.is_dir(), cls, "data", self.data, "is a file; give the folder that holds cloudsimpy/, "
                    "alibaba/ and swf/" if data.exists() else "no such folder; give the folder that holds "
                    "cloudsimpy/, alibaba/ and swf/")
        problem = place_problem(self.out, {"--data": str(self.data_folder),
                                           "--brokers": plugins.files(tuple(self.brokers))}) or parent_problem(self.out)
        require(problem is None, cls, "out", self.out, problem)
        require(not Path(self.out).exists() or Path(self.out).is_dir(), cls, "out", self.out,
                 "is a file; give a folder for the report")
        check_user_brokers(cls, "brokers", tuple(self.brokers), BROKERS,
                           f"choose from {', '.join(BROKERS)}, a broker an installed package declares or your own "
                           "as module:Class or path/to/file.py:Class")
        for name, known in (("brokers", tuple(BROKERS)), ("workloads", LEADERBOARD_WORKLOADS)):
            names = tuple(getattr(self, name))
            object.__setattr__(self, name, names)
            unknown = [n for n in names if n not in known] if name == "workloads" else []  # (brokers: checked above)
            require(len(names) > 0 and all(names) and not unknown, cls, name, names,
                     f"unknown {', '.join(unknown) or 'empty name'}; choose from {', '.join(known)}")
            require(len(set(names)) == len(names), cls, name, names, "names one twice; give each once")
        check_distinct_brokers(cls, "brokers", self.brokers)
        check_positive_whole(cls, "seeds", self.seeds, "seeds of the generated workloads")
        require(self.seeds <= MAX_SEEDS, cls, "seeds", self.seeds, f"at most {MAX_SEEDS}")

    @property
    def data_folder(self) -> Path:
        return Path(self.data) if self.data is not None else data_folder()
