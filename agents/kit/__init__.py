"""The learning kit: what every learned scheduler in agents/ needs, written once.

docs/design.md ("Learned agents") asks that the algorithms a paper defines itself
(REINFORCE with its baseline, behaviour cloning, DAgger) be one readable file
each, sharing the same kit, so that each agent's file holds only its paper's
ideas. DeepJS (`agents.deepjs`) was written first; what any other learned
agent would otherwise copy from it lives here:

* the policy-gradient arithmetic: `returns_to_go` and the zero-padded
  per-decision baseline of DeepJS's Algorithm 2 (`baselines`);
* checkpoints: `save_checkpoint` writes the weights, the optimiser state, the
  config, the random states and anything else atomically; `read_checkpoint`
  checks a file before anything uses it and says what is wrong and what to do
  (`CheckpointError`, `CheckpointMismatchError`); `rng_state` / `restore_rng`
  capture and restore the random generators, so a resumed training continues
  exactly as an uninterrupted one would; `written_whole` writes the other files
  of a training's state (Stable-Baselines3's, a replay memory) whole or not at
  all, even when stopped by Ctrl-C (`write_config`: the config.json a resume
  reads back), and `remove_partial_files` clears what a save killed outright
  left behind;
* `TrainingLog`: one row per iteration in log.csv and log.jsonl (and
  optionally TensorBoard), readable even when the run is killed;
* `evaluate`: episodes of a policy on several workloads, through a
  `cloudsim.engine.runner.Runner` when given one;
* `training_device`: the torch device a training's ``--device auto|cpu|cuda`` stands for, and
  `training_threads`: the fixed CPU thread count (each agent's in `TRAINING_THREADS`) and deterministic
  algorithms that keep a training's numbers the same from run to run and on any machine.

The kit imports torch only inside the functions that need it (checkpoints and
random states): the arithmetic, the log and `evaluate` stay cheap to import,
as the command line needs (torch takes seconds to import).

The kit's modules: `returns`, `device`, `checkpoints` (with the file format and the random
states), `log` and `evaluation`. Everything is importable from ``agents.kit``.
"""

from agents.kit.returns import baselines, returns_to_go
from agents.kit.device import DEVICES, TRAINING_THREADS, training_device, training_threads
from agents.kit.checkpoints import (CHECKPOINT_KEYS, RNG_KEYS, SHIPPED_CHECKPOINTS, VERSION_KEY, CheckpointError,
                                    CheckpointMismatchError, CheckpointNotFoundError, changed_settings, partial_path,
                                    read_checkpoint, remove_partial_files, restore_rng, rng_state, save_checkpoint,
                                    unusable_checkpoint, write_config, written_whole)
from agents.kit.log import TrainingLog, last_logged, trim_log
from agents.kit.evaluation import evaluate

__all__ = [
    "CHECKPOINT_KEYS",
    "CheckpointError",
    "CheckpointMismatchError",
    "CheckpointNotFoundError",
    "DEVICES",
    "RNG_KEYS",
    "SHIPPED_CHECKPOINTS",
    "TRAINING_THREADS",
    "TrainingLog",
    "VERSION_KEY",
    "baselines",
    "changed_settings",
    "evaluate",
    "last_logged",
    "partial_path",
    "read_checkpoint",
    "remove_partial_files",
    "restore_rng",
    "returns_to_go",
    "rng_state",
    "save_checkpoint",
    "training_device",
    "training_threads",
    "trim_log",
    "unusable_checkpoint",
    "write_config",
    "written_whole",
]
