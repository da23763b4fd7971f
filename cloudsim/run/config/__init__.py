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

The package holds one module per concern: `fields` (how an option is declared,
parsed and checked; `ConfigError`), `sections` (the sections of a run and
`RunConfig`, a replay's options), `compare` (`CompareConfig`, `BenchConfig`),
`training` (the checks every ``cloudsim train AGENT`` shares), `leaderboard` and
`tune`. Everything is importable from here. The configs declare and check
options only; `cloudsim.run.resolve` turns one into what the runner needs.
"""

from __future__ import annotations

from cloudsim.run.config.fields import (  # noqa: F401
    ConfigError, Option, checkpoint_list, flag_of, index_range, load_list, name_list, option, options_of, real,
    real_list, seed_span, span_text, time_window, whole,
)
from cloudsim.run.config.sections import (  # noqa: F401
    BYTES_PER_MACHINE, BrokerConfig, ClusterConfig, DEFAULT_CAPACITY, DEFAULT_GENERATOR, DEFAULT_LOAD,
    DEFAULT_MACHINES, FORMATS, GENERATOR_WINDOWS, HEURISTICS, MAX_SEEDS, PlotConfig, ReplayReportConfig,
    ReportConfig, RunConfig, RunnerConfig, SWF_SUFFIXES, SimulationConfig, TickedSimulationConfig,
    UNLOADED_GENERATORS, WorkloadConfig,
)
from cloudsim.run.config.compare import (  # noqa: F401
    BenchConfig, CompareConfig, DEEPRM_DEFAULT_BROKERS, ENVIRONMENTS, RLSK_DEFAULT_BROKERS,
)
from cloudsim.run.config.training import (  # noqa: F401
    TRAINING_RUN_FIELDS, check_agent_settings, check_resumed_settings, check_training_folder,
    check_training_numbers, saved_agent_config, training_agent_config,
)
from cloudsim.run.config.leaderboard import (  # noqa: F401
    LEADERBOARD_WORKLOADS, LeaderboardConfig,
)
from cloudsim.run.config.tune import (  # noqa: F401
    DEEPK8S_SPACE, TuneConfig,
)

__all__ = [
    "BYTES_PER_MACHINE",
    "BenchConfig",
    "BrokerConfig",
    "ClusterConfig",
    "CompareConfig",
    "ConfigError",
    "DEEPK8S_SPACE",
    "DEEPRM_DEFAULT_BROKERS",
    "DEFAULT_CAPACITY",
    "DEFAULT_GENERATOR",
    "DEFAULT_LOAD",
    "DEFAULT_MACHINES",
    "ENVIRONMENTS",
    "FORMATS",
    "GENERATOR_WINDOWS",
    "HEURISTICS",
    "LEADERBOARD_WORKLOADS",
    "LeaderboardConfig",
    "MAX_SEEDS",
    "Option",
    "PlotConfig",
    "RLSK_DEFAULT_BROKERS",
    "ReplayReportConfig",
    "ReportConfig",
    "RunConfig",
    "RunnerConfig",
    "SWF_SUFFIXES",
    "SimulationConfig",
    "TRAINING_RUN_FIELDS",
    "TickedSimulationConfig",
    "TuneConfig",
    "UNLOADED_GENERATORS",
    "WorkloadConfig",
    "check_agent_settings",
    "check_resumed_settings",
    "check_training_folder",
    "check_training_numbers",
    "checkpoint_list",
    "flag_of",
    "index_range",
    "load_list",
    "name_list",
    "option",
    "options_of",
    "real",
    "real_list",
    "saved_agent_config",
    "seed_span",
    "span_text",
    "time_window",
    "training_agent_config",
    "whole",
]
