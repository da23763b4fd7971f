"""The run layer: typed configuration, workload resolution and episodes, the runner, and reports.

A command's data flows one way: options (`cloudsim.run.config`) -> `resolve`
(workload, episodes, cluster, broker plans) -> one `RunSpec` per run, executed by
the `cloudsim.engine.runner.Runner` (`run_one`) -> rows -> the command's report.
It composes the engine (`cloudsim`), the brokers (`agents`) and the workloads
(`traces`); the command line (`cloudsim.cli`), the benchmarks and the tests call
it, and Python users can too::

    from cloudsim.run import RunConfig, WorkloadConfig, BrokerConfig, replay
    result = replay(RunConfig(workload=WorkloadConfig("deeprm", load=0.9),
                              brokers=BrokerConfig(("sjf", "packer"))))
    result.rows, result.total
"""

from cloudsim.engine.installation import shadowing_problem

if (_problem := shadowing_problem()) is not None:  # a user's agents.py or traces/ taken for cloudsim's
    raise ImportError(_problem)

from cloudsim.run.bench import BenchResult, bench, makespan_table, plot_makespan_differences  # noqa: E402
from cloudsim.run.compare import CompareResult, compare, markdown_table, summarise
from cloudsim.run.config import (
    BenchConfig,
    BrokerConfig,
    ClusterConfig,
    CompareConfig,
    ConfigError,
    DeepRMCompareConfig,
    FederationCompareConfig,
    FillCompareConfig,
    LeaderboardConfig,
    PlotConfig,
    ReplayReportConfig,
    ReportConfig,
    RunConfig,
    RunnerConfig,
    SimulationConfig,
    WorkloadConfig,
)
from cloudsim.run.episode import RunOutcome, RunSpec, run_one
from cloudsim.run.output import ResultFolder, strict_json
from cloudsim.run.leaderboard import LeaderboardResult, leaderboard
from cloudsim.run.plots import plot_run, run_folders
from cloudsim.run.replay import ReplayResult, replay
from cloudsim.run.resolve import BrokerPlan, ResolvedRun, RunWarning, Workplace, resolve
from cloudsim.run.workload import Episode, ResolvedWorkload, check_episodes, episodes, resolve_workload

__all__ = [
    "BenchConfig",
    "BenchResult",
    "BrokerConfig",
    "BrokerPlan",
    "ClusterConfig",
    "CompareConfig",
    "CompareResult",
    "ConfigError",
    "DeepRMCompareConfig",
    "Episode",
    "FederationCompareConfig",
    "FillCompareConfig",
    "LeaderboardConfig",
    "LeaderboardResult",
    "PlotConfig",
    "ReplayReportConfig",
    "ReplayResult",
    "ReportConfig",
    "ResolvedRun",
    "ResolvedWorkload",
    "ResultFolder",
    "RunConfig",
    "RunOutcome",
    "RunSpec",
    "RunWarning",
    "RunnerConfig",
    "SimulationConfig",
    "WorkloadConfig",
    "Workplace",
    "bench",
    "check_episodes",
    "compare",
    "episodes",
    "leaderboard",
    "makespan_table",
    "markdown_table",
    "plot_makespan_differences",
    "plot_run",
    "replay",
    "resolve",
    "resolve_workload",
    "run_folders",
    "run_one",
    "strict_json",
    "summarise",
]
