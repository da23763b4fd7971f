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
`RunConfig`, a replay's options), `compare` (`CompareConfig` and each experiment's own:
`DeepRMCompareConfig`, `FederationCompareConfig`, `FillCompareConfig`; `BenchConfig`),
`training` (what every ``cloudsim train AGENT`` shares: the run's options and checks, `AgentTraining`, and the
agent's own settings added to them, `with_agent_settings`), `leaderboard` and
`tune`. The commands' configs, their constants and `ConfigError` are importable
from here; how an option is declared and parsed, and the training checks, from
their modules. The configs declare and check options only; `cloudsim.run.resolve`
turns one into what the runner needs.
"""

from __future__ import annotations

from cloudsim.run.config.brokers import BrokersConfig, CheckBrokerConfig
from cloudsim.run.config.fields import ConfigError
from cloudsim.run.config.sections import (
    BYTES_PER_MACHINE, BrokerConfig, ClusterConfig, DEFAULT_CAPACITY, DEFAULT_GENERATOR, DEFAULT_LOAD,
    DEFAULT_MACHINES, FORMATS, GENERATOR_WINDOWS, HEURISTICS, MAX_SEEDS, PlotConfig, ReplayReportConfig,
    ReportConfig, RunConfig, RunnerConfig, SWF_SUFFIXES, SimulationConfig, TickedSimulationConfig,
    UNLOADED_GENERATORS, WorkloadConfig,
)
from cloudsim.run.config.compare import (BenchConfig, CompareConfig, DEEPRM_DEFAULT_BROKERS, DeepRMCompareConfig,
                                         ENVIRONMENTS, FederationCompareConfig, FillCompareConfig,
                                         RLSK_DEFAULT_BROKERS, compare_config)
from cloudsim.run.config.leaderboard import LEADERBOARD_WORKLOADS, LeaderboardConfig
from cloudsim.run.config.tune import DEEPK8S_SPACE, TuneConfig

__all__ = [
    "BYTES_PER_MACHINE",
    "BenchConfig",
    "BrokerConfig",
    "ClusterConfig",
    "CompareConfig",
    "ConfigError",
    "DEEPK8S_SPACE",
    "DEEPRM_DEFAULT_BROKERS",
    "DeepRMCompareConfig",
    "DEFAULT_CAPACITY",
    "DEFAULT_GENERATOR",
    "DEFAULT_LOAD",
    "DEFAULT_MACHINES",
    "ENVIRONMENTS",
    "FORMATS",
    "FederationCompareConfig",
    "FillCompareConfig",
    "GENERATOR_WINDOWS",
    "HEURISTICS",
    "LEADERBOARD_WORKLOADS",
    "LeaderboardConfig",
    "MAX_SEEDS",
    "PlotConfig",
    "RLSK_DEFAULT_BROKERS",
    "ReplayReportConfig",
    "ReportConfig",
    "RunConfig",
    "RunnerConfig",
    "SWF_SUFFIXES",
    "SimulationConfig",
    "TickedSimulationConfig",
    "TuneConfig",
    "UNLOADED_GENERATORS",
    "WorkloadConfig",
    "compare_config",
    "BrokersConfig",
    "CheckBrokerConfig",
]

_MOVED = {
    **dict.fromkeys(("Option", "checkpoint_list", "flag_of", "index_range", "load_list", "name_list", "option",
                     "options_of", "real", "real_list", "seed_span", "span_text", "time_window", "whole"),
                    "cloudsim.run.config.fields"),
    **dict.fromkeys(("TRAINING_RUN_FIELDS", "check_agent_settings", "check_resumed_settings", "check_training_folder",
                     "check_training_numbers", "saved_agent_config", "training_agent_config"),
                    "cloudsim.run.config.training"),
}
"""Helpers this package exported in cloudsim 0.1.0: they still import from here, with a warning, for one release."""


def __getattr__(name: str):
    if name in _MOVED:
        import importlib
        import warnings

        warnings.warn(f"cloudsim.run.config.{name} is a helper of {_MOVED[name]}; import it from there (this "
                      f"package exports the commands' configs and ConfigError; the old path goes in the next "
                      f"release)", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module 'cloudsim.run.config' has no attribute {name!r}")
