"""`train_deepjs`: DeepJS's Algorithm 2 on sliding chunks of a workload, a checkpoint after each chunk.

The agent's hyper-parameters are `agents.deepjs.DeepJSConfig`'s; `DeepJSOptions`
holds the ones the command line sets, each defaulting to the agent's own value.
Everything that can refuse a training run (chunks past the end, options that
contradict the checkpoint being resumed, a checkpoint path that cannot be written)
is checked before the first rollout. With ``--log DIR`` every iteration is also a
row of ``DIR/log.csv`` and ``DIR/log.jsonl`` (the learning kit's `TrainingLog`;
``--tensorboard`` adds TensorBoard events there).
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
from cloudsim.run.config.fields import flag_of, name_list, option, real, span_text, whole
from cloudsim.run.config.sections import check_machine_table
from cloudsim.run.config.training import DEVICE_HELP, DEVICES, check_device
from cloudsim.run.output import parent_problem
from cloudsim.run.workload import episodes, resolve_workload
from cloudsim.runner import Runner

__all__ = ["AGENT_FIELD", "RUN_OPTIONS", "DeepJSOptions", "TrainConfig", "TrainWorkloadConfig", "train_deepjs"]

AGENT_DEFAULTS = DeepJSConfig()
AGENT_FIELD = {"no_advantage_normalisation": "normalize_advantage"}
"""`DeepJSOptions` fields whose `DeepJSConfig` field has another name (the others share theirs)."""
RUN_OPTIONS = frozenset({"checkpoint", "resume", "log", "tensorboard", "init"})
"""`DeepJSOptions` fields about where the run writes, not the agent: a resume never holds them against the
checkpoint."""
LOG_FILES = ("log.csv", "log.jsonl")
DEFAULT_CHUNK_SIZE = 10  # DeepJS trains on chunks of 10 jobs


def hidden_sizes(text: str) -> tuple[int, ...]:
    return tuple(whole(size) for size in name_list(text))


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


@dataclass(frozen=True)
class DeepJSOptions:
    """The DeepJS settings a training run takes from the command line; None keeps the agent's default."""

    checkpoint: str = option("deepjs.pt", "--checkpoint", "where the checkpoint is written after each chunk",
                             metavar="PATH")
    resume: bool = option(False, "--resume", "continue the training saved in --checkpoint", switch=True)
    init: str | None = option(None, "--init", "start from the weights of this DeepJS checkpoint (e.g. the shipped "
                              "agents/checkpoints/deepjs_5x64.pt), keeping its features, hidden layers and feature "
                              "normaliser; the optimiser and the chunks start afresh (default: random weights)",
                              metavar="PATH")
    log: str | None = option(None, "--log", "folder for log.csv and log.jsonl, one row per iteration, written after "
                             "each chunk's checkpoint (appended to on --resume)", metavar="DIR")
    tensorboard: bool = option(False, "--tensorboard", "also write the --log rows as TensorBoard events in that "
                               "folder (needs the tensorboard package)", switch=True)
    iterations: int | None = option(None, "--iterations", f"iterations per chunk (default {AGENT_DEFAULTS.iterations})",
                                    parse=whole, metavar="N")
    trajectories: int | None = option(None, "--trajectories", "trajectories per iteration (default "
                                      f"{AGENT_DEFAULTS.trajectories})", parse=whole, metavar="N")
    reward: str | None = option(None, "--reward", f"reward (default {AGENT_DEFAULTS.reward}: -1 per tick)",
                                choices=("makespan", "slowdown", "completion"))
    hidden: tuple[int, ...] | None = option(None, "--hidden", "hidden layer sizes (default "
                                            f"{','.join(map(str, AGENT_DEFAULTS.hidden))}, Table 1)",
                                            parse=hidden_sizes, metavar="SIZES")
    learning_rate: float | None = option(None, "--learning-rate", "Adam's learning rate (default "
                                         f"{AGENT_DEFAULTS.learning_rate:g})", parse=real, metavar="RATE")
    no_advantage_normalisation: bool = option(
        False, "--no-advantage-normalisation", "use the raw advantages q_t - b_t (default: scaled to unit "
        "variance per iteration)", switch=True)
    tick: float | None = option(None, "--tick", f"scheduler tick (default {AGENT_DEFAULTS.tick:g})", parse=real,
                                metavar="T")
    device: str = option("auto", "--device", DEVICE_HELP, choices=DEVICES)

    def agent_settings(self) -> dict:
        """The given settings as `DeepJSConfig` fields."""
        settings = {name: getattr(self, name) for name in ("iterations", "trajectories", "reward", "hidden",
                                                           "learning_rate", "tick") if getattr(self, name) is not None}
        if self.no_advantage_normalisation:
            settings[AGENT_FIELD["no_advantage_normalisation"]] = False
        return settings


@dataclass(frozen=True)
class TrainConfig:
    """`cloudsim train deepjs`: the workload and its chunks, the cluster, the runner, the agent."""

    workload: WorkloadConfig = field(default_factory=TrainWorkloadConfig)
    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    runner: RunnerConfig = field(default_factory=RunnerConfig)
    agent: DeepJSOptions = field(default_factory=DeepJSOptions)

    def __post_init__(self) -> None:
        check_machine_table(self.workload, self.cluster)
        check_device(self.agent.device)
        checkpoint = Path(self.agent.checkpoint)
        if checkpoint.is_dir():
            raise ConfigError("--checkpoint", self.agent.checkpoint, "is a folder; give a file path such as "
                              "runs/deepjs.pt")
        if self.agent.resume and not checkpoint.is_file():
            raise ConfigError("--checkpoint", self.agent.checkpoint, "no checkpoint there to --resume; "
                              "leave --resume out to start a new training")
        if not self.agent.resume and checkpoint.exists():
            raise ConfigError("--checkpoint", self.agent.checkpoint, "already exists; add --resume to continue "
                              "that training, or choose another path")
        problem = parent_problem(checkpoint)
        if problem is not None:
            raise ConfigError("--checkpoint", self.agent.checkpoint, problem)
        if self.agent.init is not None:
            self._check_init()
        self._check_log()
        option_of = {field: option for option, field in AGENT_FIELD.items()}
        for name, value in self.agent.agent_settings().items():
            try:  # the agent checks its own settings, e.g. a zero-width layer or no iterations
                dataclasses.replace(AGENT_DEFAULTS, **{name: value})
            except ValueError as err:
                raise ConfigError(flag_of(DeepJSOptions, option_of.get(name, name)), value, str(err)) from None

    def _check_init(self) -> None:
        """--init: a readable DeepJS checkpoint, for a new training whose network it fixes."""
        from agents.deepjs import read_checkpoint  # torch: imported only when --init is given
        from agents.kit import CheckpointError

        init = self.agent.init
        if self.agent.resume:
            raise ConfigError("--init", init, "starts a new training; a resumed one goes on from its own weights: "
                              "leave --init out")
        if self.agent.hidden is not None:
            raise ConfigError("--hidden", ",".join(map(str, self.agent.hidden)), "the hidden layers are --init's "
                              "checkpoint's; leave --hidden out")
        if Path(init).resolve() == Path(self.agent.checkpoint).resolve():
            raise ConfigError("--init", init, "is the --checkpoint this training writes; give another --checkpoint")
        try:
            read_checkpoint(init)
        except (CheckpointError, FileNotFoundError) as error:
            raise ConfigError("--init", init, str(error)) from None

    def _check_log(self) -> None:
        """--log and --tensorboard: refused up front when the log could not be written or would mix two runs."""
        if self.agent.tensorboard and self.agent.log is None:
            raise ConfigError("--tensorboard", None, "writes into the --log folder; add --log DIR")
        if self.agent.log is None:
            return
        folder = Path(self.agent.log)
        if folder.exists() and not folder.is_dir():
            raise ConfigError("--log", self.agent.log, "is a file; give a folder for log.csv and log.jsonl")
        if not self.agent.resume and any((folder / name).is_file() and (folder / name).stat().st_size
                                         for name in LOG_FILES):
            raise ConfigError("--log", self.agent.log, "already holds a training log; add --resume to continue "
                              "that training and its log, or choose another folder")
        problem = parent_problem(folder / LOG_FILES[0])
        if problem is not None:
            raise ConfigError("--log", self.agent.log, problem)
        if self.agent.tensorboard and importlib.util.find_spec("tensorboard") is None:
            raise ConfigError("--tensorboard", None, "needs the tensorboard package: pip install tensorboard (or "
                              "leave --tensorboard out: --log still writes log.csv and log.jsonl)")


def train_deepjs(config: TrainConfig, on_chunk: Callable[[dict], None] | None = None,
                 given: frozenset[str] = frozenset()) -> dict:
    """Train (or resume) DeepJS on the configured chunks; returns the run's summary.

    ``given`` names the agent settings the user chose explicitly (DeepJSConfig
    fields, and "cluster"): when resuming, those must agree with the checkpoint.
    """
    # torch takes seconds to import and only training needs it: the command line starts without it.
    from agents.deepjs import DeepJSTrainer
    from agents.kit import TrainingLog

    resolved = resolve_workload(config)
    settings = {**config.agent.agent_settings(), "seed": config.workload.seed}
    chunks = episodes(config, resolved, settings.get("tick", AGENT_DEFAULTS.tick))
    if not chunks or not any(chunk.jobs for chunk in chunks):
        raise ConfigError("--chunks", span_text(config.workload.chunks),
                          "selects no jobs to train on")
    checkpoint = Path(config.agent.checkpoint)
    runner = Runner(config.runner.executor, config.runner.workers, config.runner.address, progress=False)
    if config.agent.resume:
        trainer = DeepJSTrainer.resume(checkpoint, config=dataclasses.replace(AGENT_DEFAULTS, **settings),
                                       cluster=resolved.cluster, given=given, runner=runner,
                                       device=config.agent.device)
    elif config.agent.init is not None:  # fine-tuning: the network and its normaliser are the init's
        trainer = DeepJSTrainer.from_weights(config.agent.init, dataclasses.replace(AGENT_DEFAULTS, **settings),
                                             resolved.cluster, runner=runner, device=config.agent.device)
    else:
        trainer = DeepJSTrainer(dataclasses.replace(AGENT_DEFAULTS, **settings), resolved.cluster, runner=runner,
                                device=config.agent.device)
        trainer.fit_normaliser([job for chunk in chunks for job in chunk.jobs])
    todo = [chunk for chunk in chunks if chunk.label not in trainer.chunks_done]
    started = time.perf_counter()
    trained = 0
    log = None
    try:
        if config.agent.log is not None:
            log = TrainingLog(config.agent.log, tensorboard=config.agent.tensorboard)
        for chunk in todo:
            chunk_started = time.perf_counter()
            rows: list[dict] = []
            entry = trainer.train_chunk(chunk.label, chunk.jobs, on_iteration=rows.append)
            trainer.save(checkpoint)
            trained += 1
            if log is not None:  # after the save: the log never holds an iteration that the checkpoint lacks
                for row in rows:
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
