"""`train_deepjs`: DeepJS's Algorithm 2 on sliding chunks of a workload, a checkpoint after each chunk.

The agent's hyper-parameters are `agents.deepjs.config.DeepJSConfig`'s: its settings are options
of `DeepJSTraining` (`cloudsim.run.config.training.with_agent_settings`), beside where the run writes.
Everything that can refuse a training run (chunks past the end, options that contradict the
checkpoint being resumed, a folder that cannot be written) is checked before the first rollout. The
run writes into ``--out DIR``, as every `cloudsim train AGENT` does: ``DIR/policy.pt`` after each chunk
(the state a resume starts from), ``DIR/config.json`` (the agent's config and the workload that made the
chunks, `workload_record`, which a resume must give again: its chunks are numbered in that workload), and
each iteration as a row of ``DIR/log.csv`` and ``DIR/log.jsonl`` (the learning kit's `TrainingLog`;
``--tensorboard`` adds TensorBoard events there).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from agents.deepjs.config import CONFIG_FILE, POLICY_FILE, DeepJSConfig
from agents.registry import entry_point, training_spec
from traces.formats import TRACE_FORMATS
from cloudsim.run.config import ClusterConfig, ConfigError, RunnerConfig, UNLOADED_GENERATORS, WorkloadConfig
from cloudsim.run.config.fields import flag_of, option, options_of, span_text, whole
from cloudsim.run.config.sections import check_machine_table
from cloudsim.run.config.training import (TrainingRun, agent_setting_names, check_resumed_run,
                                          check_resumed_settings, check_training_folder, option_text,
                                          with_agent_settings)
from cloudsim.run.workload import episodes, resolve_workload
from cloudsim.engine.runner import Runner

__all__ = ["DeepJSTraining", "TrainConfig", "TrainWorkloadConfig", "train_deepjs", "workload_record"]

AGENT_DEFAULTS = DeepJSConfig()
DEFAULT_CHUNK_SIZE = 10  # DeepJS trains on chunks of 10 jobs


@dataclass(frozen=True)
class TrainWorkloadConfig(WorkloadConfig):
    """`WorkloadConfig` whose episodes are DeepJS's chunks of 10 jobs unless told otherwise."""

    chunk_size: int | None = option(
        DEFAULT_CHUNK_SIZE, "--chunk-size", "jobs per training chunk", parse=whole, metavar="N")

    def __post_init__(self) -> None:
        if self.jobs is not None:
            raise ConfigError("--jobs", span_text(self.jobs),
                              "training runs on chunks: use --chunk-size N and --chunks A:B")
        super().__post_init__()


@with_agent_settings(DeepJSConfig)
@dataclass(frozen=True)
class DeepJSTraining(TrainingRun):
    """Where a DeepJS training writes and where it starts from; `DeepJSConfig`'s settings are added as fields.
    Its ``given`` also names "cluster" and "seed" when the user chose them (a resumed checkpoint must match)."""

    out: str = option("deepjs-run", "--out", "folder for policy.pt (the checkpoint, written after each chunk; also "
                      "the state to resume from) and the log (log.csv, log.jsonl: one row per iteration, appended to "
                      "on --resume)", metavar="DIR")
    init: str | None = option(None, "--init", "start from the weights of this DeepJS checkpoint (e.g. the shipped "
                              "agents/checkpoints/deepjs_5x64.pt), keeping its features, hidden layers and feature "
                              "normaliser; the optimiser and the chunks start afresh (default: random weights)",
                              metavar="PATH")

    @property
    def checkpoint(self) -> Path:
        """The checkpoint this training writes after each chunk, and resumes from."""
        return Path(self.out) / POLICY_FILE

    def agent_settings(self) -> dict:
        """The agent's settings, as `DeepJSConfig` fields."""
        return {name: getattr(self, name) for name in agent_setting_names(type(self))}


def workload_record(workload: WorkloadConfig) -> dict[str, str | None]:
    """What of ``workload`` makes DeepJS's chunks, by option as the user types it (`option_text`; None: left
    out): the trace (its path resolved) or the generator with its seed and jobs, the format, the chunk size,
    --load and the trace's other options. A resume must give the same (its chunks are numbered in this
    workload, and a chunk done is skipped); --chunks may differ, as it says how far to train, and --cache."""
    generated = workload.is_generator

    def path(value: str | None) -> str | None:
        return None if value is None else str(Path(value).resolve())

    values = {"source": None if generated else path(workload.source),
              "format": None if generated else workload.trace_format,
              "instances": path(workload.instances),
              "status_policy": (workload.effective_status_policy
                                if not generated and "status_policy" in TRACE_FORMATS[workload.trace_format].takes
                                else None),
              "window": workload.window, "machine_table": path(workload.machine_table),
              "machine_events": workload.machine_events, "softerror_downtime": workload.softerror_downtime,
              "chunk_size": workload.chunk_size,
              "generator": workload.generator_name if generated else None,
              "load": (workload.effective_load if generated and workload.generator_name not in UNLOADED_GENERATORS
                       else workload.load),
              "synthetic_jobs": workload.synthetic_jobs if generated else None,
              "seed": workload.seed if generated else None}  # a trace's jobs do not depend on the seed
    how = {name: (option, default) for name, option, default in options_of(type(workload))}
    return {how[name][0].flag: option_text(how[name][0], value, how[name][1]) for name, value in values.items()}


@dataclass(frozen=True)
class TrainConfig:
    """`cloudsim train deepjs`: the workload and its chunks, the cluster, the runner, the agent."""

    workload: WorkloadConfig = field(default_factory=TrainWorkloadConfig)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    agent: DeepJSTraining = field(default_factory=DeepJSTraining)

    @property
    def out(self) -> str:
        """The folder the training writes into (``--out``)."""
        return self.agent.out

    @property
    def resume(self) -> bool:
        return self.agent.resume

    @property
    def state_file(self) -> Path:
        """The file a resumed training starts from; until it exists the folder holds nothing to resume."""
        return self.agent.checkpoint

    @property
    def reads(self) -> dict[str, object]:
        """The files the training reads, by option (kept out of --out, `cloudsim.run.output.place_problem`)."""
        workload = self.workload
        return {"WORKLOAD": None if workload.is_generator else workload.source,
                "--machine-table": workload.machine_table, "--instances": workload.instances,
                "--cache": workload.cache, "--init": self.agent.init}

    def __post_init__(self) -> None:
        check_machine_table(self.workload, self.cluster)
        if self.workload.load is not None:
            self.workload.check_drawn_load(self.workload.load)
        self.agent.check_run_options()
        for name, value in self.agent.agent_settings().items():
            try:  # the agent checks its own settings, e.g. a zero-width layer or no iterations
                dataclasses.replace(AGENT_DEFAULTS, **{name: value})
            except ValueError as err:
                raise ConfigError(flag_of(DeepJSTraining, name), value, str(err)) from None
        if self.agent.init is not None:
            self._check_init()
        check_training_folder(self.agent.out, resume=self.agent.resume, state=self.agent.checkpoint, what="DeepJS",
                              reads=self.reads, agent="deepjs")
        if self.agent.resume:
            self._check_resumed_run()

    def _check_resumed_run(self) -> None:
        """On --resume, what made the folder's training (its config.json) and what this run asks must agree: the
        workload that made the chunks (`workload_record`), and the agent's settings given here. A folder trained
        before cloudsim recorded them (no config.json) is taken as it is (its checkpoint's settings and cluster
        are still compared when the training starts, `agents.deepjs.DeepJSTrainer.resume`), and records this
        run's; a damaged config.json is refused."""
        out, path = self.agent.out, Path(self.agent.out) / CONFIG_FILE
        if not path.exists():
            return
        try:
            saved = json.loads(path.read_text())
            if not isinstance(saved.get("workload"), dict):
                raise ValueError("it records no workload")
        except (OSError, ValueError, AttributeError) as err:
            raise ConfigError("--resume", out, f"{path} is damaged ({err}); start a new training in another "
                              "folder") from None
        check_resumed_run(out, saved["workload"], workload_record(self.workload))
        try:
            made = DeepJSConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved["agent"].items()})
        except (KeyError, AttributeError, TypeError, ValueError):
            return  # the checkpoint's config is compared when the training starts
        settings = frozenset(self.agent.given) & frozenset(agent_setting_names(DeepJSTraining))
        check_resumed_settings(settings, made, self.agent, length=None, out=out)

    def _check_init(self) -> None:
        """--init: a readable DeepJS checkpoint, for a new training whose network it fixes."""
        from agents.deepjs import read_checkpoint  # torch: imported only when --init is given
        from agents.kit import CheckpointError

        init = self.agent.init
        if self.agent.resume:
            raise ConfigError("--init", init, "starts a new training; a resumed one goes on from its own weights: "
                              "leave --init out")
        if "hidden" in self.agent.given:
            raise ConfigError("--hidden", ",".join(map(str, self.agent.hidden)), "the hidden layers are --init's "
                              "checkpoint's; leave --hidden out")
        try:
            read_checkpoint(init, fix="pass a DeepJS checkpoint with --init (the shipped one: "
                                      "agents/checkpoints/deepjs_5x64.pt), or leave --init out to train afresh")
        except (CheckpointError, FileNotFoundError, IsADirectoryError) as error:
            raise ConfigError("--init", init, str(error)) from None


def train_deepjs(config: TrainConfig, on_chunk: Callable[[dict], None] | None = None) -> dict:
    """Train (or resume) DeepJS on the configured chunks into ``config.agent.out`` by its spec's training
    (`agents.registry.TrainingSpec.train`); returns the run's summary. On --resume, the settings the user chose
    (``config.agent.given``) must agree with the checkpoint."""
    resolved = resolve_workload(config)
    settings = {**config.agent.agent_settings(), "seed": config.workload.seed}
    chunks = episodes(config, resolved, settings.get("tick", AGENT_DEFAULTS.tick))
    if not chunks or not any(chunk.jobs for chunk in chunks):
        raise ConfigError("--chunks", span_text(config.workload.chunks),
                          "selects no jobs to train on")
    runner = Runner(config.runner.executor, config.runner.workers, config.runner.address, progress=False)
    try:
        return entry_point(training_spec("deepjs").train)(
            dataclasses.replace(AGENT_DEFAULTS, **settings), config.agent.out,
            chunks=[(chunk.label, chunk.jobs) for chunk in chunks], cluster=resolved.cluster, runner=runner,
            record={"workload": workload_record(config.workload)}, resume=config.agent.resume,
            init=config.agent.init, given=config.agent.given, tensorboard=config.agent.tensorboard,
            device=config.agent.device, on_chunk=on_chunk, **config.agent.thread_count())
    finally:
        runner.close()
