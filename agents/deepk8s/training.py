"""`train`: a Deepk8s agent trained with its config's algorithm (A2C, PPO or DAgger) into one folder."""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Callable

from agents.deepk8s.broker import AGENT, POLICY_FILE, load_policy
from agents.deepk8s.dagger import train_dagger
from agents.deepk8s.envs import Workload
from agents.deepk8s.sb3 import check_init, train_sb3
from agents.deepk8s.config import Deepk8sConfig
from agents.kit import (TRAINING_THREADS, TrainingLog, last_logged, read_checkpoint, training_device, training_threads,
                        trim_log, write_config)
from cloudsim import ClusterSpec
from cloudsim.engine.envs import deepk8s_cluster


def train(config: Deepk8sConfig, workload: Workload, out: str | Path, *, cluster: ClusterSpec | None = None,
          resume: bool = False, tensorboard: bool = False, progress: bool = True, save_every: int = 10,
          device: str = "auto", workers: int = 1, threads: int = TRAINING_THREADS[AGENT]) -> Path:
    """Train a Deepk8s agent with ``config.algo`` on sequences ``workload(seed)``; return the policy's checkpoint.

    ``out`` gets ``policy.pt`` (the broker's checkpoint), the algorithm's state
    to resume from (``model.zip`` or ``dagger.pt``), ``config.json`` and the log
    (``log.csv``, ``log.jsonl``, one row per iteration), every ``save_every``
    iterations and at the end. ``device`` (`agents.kit.DEVICES`) is where the
    updates run (Stable-Baselines3 keeps its whole policy there; DAgger acts with
    a CPU copy refreshed after each update). ``workers``: processes labelling DAgger's episodes with a look-ahead
    (``config.expert`` "oracle" or "online"). ``threads``: torch's CPU threads (`agents.kit.training_threads`).
    """
    training_threads(threads, training_device(device))
    out = Path(out)
    if config.init is not None and not resume:  # before anything is written
        check_init(load_policy(config.init), config)
    out.mkdir(parents=True, exist_ok=True)
    cluster = cluster if cluster is not None else deepk8s_cluster()
    write_config(out, config)
    if resume:  # the log goes on from the saved state, not from the last iteration logged
        saved = read_checkpoint(out / POLICY_FILE, agent=AGENT, keys=("iterations",))
        trim_log(out, int(saved["iterations"]))
    trainer = train_dagger if config.algo == "dagger" else train_sb3
    with TrainingLog(out, tensorboard=tensorboard) as log:
        try:
            parallel = {"workers": workers} if config.algo == "dagger" else {}
            return trainer(config, workload, out, cluster, resume=resume, log=log, progress=progress,
                           save_every=save_every, device=device, **parallel)
        except KeyboardInterrupt as interrupted:
            if (out / POLICY_FILE).is_file():
                done = read_checkpoint(out / POLICY_FILE, agent=AGENT, keys=("iterations",))["iterations"]
                interrupted.add_note(f"the training saved at iteration {done} is in {out}; add --resume to "
                                     f"continue it")
            raise


def run_training(config: Deepk8sConfig, out: str | Path, *, workload: Callable[..., object], **run) -> dict:
    """``cloudsim train deepk8s`` (its `agents.registry.TrainingSpec`): `train` on the task sequences ``workload``
    draws (`traces.deepk8s_workload`, ``config.tasks`` tasks each), then the summary the command prints: the
    algorithm, iterations, the policy, the wall time and the last logged reward."""
    started = time.perf_counter()
    policy = train(config, functools.partial(workload, tasks=config.tasks), out, **run)
    return {"agent": AGENT, "algo": config.algo, "iterations": config.iterations, "policy": str(policy),
            "wall_s": round(time.perf_counter() - started, 3), "last_reward": last_logged(out).get("reward")}
