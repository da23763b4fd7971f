"""`train_deepjs`: DeepJS's Algorithm 2 on sliding chunks of a workload, a checkpoint after each chunk.

The agent's hyper-parameters are `agents.deepjs_config.DeepJSConfig`'s: its settings are options
of `DeepJSTraining` (`cloudsim.run.config.training.with_agent_settings`), beside where the run writes.
Everything that can refuse a training run (chunks past the end, options that contradict the
checkpoint being resumed, a folder that cannot be written) is checked before the first rollout. The
run writes into ``--out DIR``, as every `cloudsim train AGENT` does: ``DIR/policy.pt`` after each chunk
(the state a resume starts from), and each iteration as a row of ``DIR/log.csv`` and ``DIR/log.jsonl``
(the learning kit's `TrainingLog`; ``--tensorboard`` adds TensorBoard events there).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from agents.deepjs_config import DeepJSConfig
from cloudsim.run.config import ClusterConfig, ConfigError, RunnerConfig, WorkloadConfig
from cloudsim.run.config.fields import flag_of, option, span_text, whole
from cloudsim.run.config.sections import check_machine_table
from cloudsim.run.config.training import (TrainingRun, agent_setting_names, check_training_folder,
                                          with_agent_settings)
from cloudsim.run.workload import episodes, resolve_workload
from cloudsim.runner import Runner

__all__ = ["DeepJSTraining", "TrainConfig", "TrainWorkloadConfig", "train_deepjs"]

AGENT_DEFAULTS = DeepJSConfig()
DEFAULT_CHUNK_SIZE = 10  # DeepJS trains on chunks of 10 jobs
POLICY_FILE = "policy.pt"


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

    def __post_init__(self) -> None:
        check_machine_table(self.workload, self.cluster)
        self.agent.check_run_options()
        for name, value in self.agent.agent_settings().items():
            try:  # the agent checks its own settings, e.g. a zero-width layer or no iterations
                dataclasses.replace(AGENT_DEFAULTS, **{name: value})
            except ValueError as err:
                raise ConfigError(flag_of(DeepJSTraining, name), value, str(err)) from None
        if self.agent.init is not None:
            self._check_init()
        check_training_folder(self.agent.out, resume=self.agent.resume, state=self.agent.checkpoint, what="DeepJS",
                              reads={"--init": self.agent.init})
        if self.agent.tensorboard and importlib.util.find_spec("tensorboard") is None:
            raise ConfigError("--tensorboard", None, "needs the tensorboard package: pip install tensorboard (or "
                              "leave --tensorboard out: --out still gets log.csv and log.jsonl)")

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
    """Train (or resume) DeepJS on the configured chunks into ``config.agent.out``; returns the run's summary.
    On --resume, the settings the user chose (``config.agent.given``) must agree with the checkpoint."""
    # torch takes seconds to import and only training needs it: the command line starts without it.
    from agents.deepjs import DeepJSTrainer
    from agents.kit import TrainingLog

    resolved = resolve_workload(config)
    settings = {**config.agent.agent_settings(), "seed": config.workload.seed}
    chunks = episodes(config, resolved, settings.get("tick", AGENT_DEFAULTS.tick))
    if not chunks or not any(chunk.jobs for chunk in chunks):
        raise ConfigError("--chunks", span_text(config.workload.chunks),
                          "selects no jobs to train on")
    checkpoint = config.agent.checkpoint
    runner = Runner(config.runner.executor, config.runner.workers, config.runner.address, progress=False)
    if config.agent.resume:
        trainer = DeepJSTrainer.resume(checkpoint, config=dataclasses.replace(AGENT_DEFAULTS, **settings),
                                       cluster=resolved.cluster, given=config.agent.given, runner=runner,
                                       device=config.agent.device, **config.agent.thread_count())
    elif config.agent.init is not None:  # fine-tuning: the network and its normaliser are the init's
        trainer = DeepJSTrainer.from_weights(config.agent.init, dataclasses.replace(AGENT_DEFAULTS, **settings),
                                             resolved.cluster, runner=runner, device=config.agent.device,
                                             **config.agent.thread_count())
    else:
        trainer = DeepJSTrainer(dataclasses.replace(AGENT_DEFAULTS, **settings), resolved.cluster, runner=runner,
                                device=config.agent.device, **config.agent.thread_count())
        trainer.fit_normaliser([job for chunk in chunks for job in chunk.jobs])
    todo = [chunk for chunk in chunks if chunk.label not in trainer.chunks_done]
    started = time.perf_counter()
    trained = 0
    log = None
    try:
        log = TrainingLog(config.agent.out, tensorboard=config.agent.tensorboard)
        for chunk in todo:
            chunk_started = time.perf_counter()
            rows: list[dict] = []
            entry = trainer.train_chunk(chunk.label, chunk.jobs, on_iteration=rows.append)
            trainer.save(checkpoint)
            trained += 1
            for row in rows:  # after the save: the log never holds an iteration that the checkpoint lacks
                log.write(row)
            if on_chunk is not None:
                on_chunk({**entry, "wall_s": round(time.perf_counter() - chunk_started, 2)})
    finally:
        runner.close()
        if log is not None:
            log.close()
    summary = {"summary": True, "chunks_trained": trained, "chunks": len(trainer.chunks_done),
               "chunks_skipped_as_done": len(chunks) - len(todo),
               "wall_s": round(time.perf_counter() - started, 1),
               "config": dataclasses.asdict(trainer.config)}
    if checkpoint.is_file():  # never name a checkpoint that was not written
        summary["checkpoint"] = str(checkpoint)
    if log is not None:
        summary["log"] = str(log.folder)
    return summary
