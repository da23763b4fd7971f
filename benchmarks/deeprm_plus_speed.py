"""How fast DeepRM_Plus trains on this machine: REINFORCE iterations of its CNN, and cloning epochs.

Runs ``--iterations`` REINFORCE iterations of the shipped DeepRM_Plus training's
settings (25 Poisson jobsets at 140 % load, 5 episodes each, M = 10, the CNN of
Table I) from random weights, and ``--epochs`` epochs of cloning SJF on
``--clone-jobsets`` jobsets, with two torch threads; reports the median
iteration (rollout and update) and epoch, and the iterations per hour.

    python benchmarks/deeprm_plus_speed.py --iterations 5

Writes benchmarks/results/deeprm_plus/speed.json (one entry per ``--label``, so that
two commits can be measured into one file; ``--label`` defaults to the commit).

It calls DeepRM's trainer and `agents.deeprm.plus.clone` directly, not `cloudsim.run`, because it times each
cloning epoch on its own (through ``on_epoch``), which ``cloudsim train deeprm-plus`` does not log, and runs
REINFORCE with the shipped training's config.json as it is.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import torch

from agents.deeprm import train
from agents.deeprm.config import DeepRMConfig

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "deeprm_plus" / "speed.json"


def shipped_config(**changes) -> DeepRMConfig:
    """The settings of the shipped DeepRM_Plus training (benchmarks/results/deeprm_plus/training)."""
    config = json.loads((ROOT / "benchmarks/results/deeprm_plus/training/deeprm-plus-140/config.json").read_text())
    config.update(changes)
    return DeepRMConfig(**config)


def reinforce(iterations: int) -> list[dict]:
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as folder:
        train(shipped_config(iterations=iterations, clone_jobsets=0), folder, progress=False,
              save_every=iterations, on_iteration=rows.append)
    return rows


def cloning(jobsets: int, epochs: int) -> list[float]:
    from agents.deeprm import make_net
    from agents.deeprm.plus import clone, expert_pairs

    config = shipped_config(clone_jobsets=jobsets)
    states, actions = expert_pairs(config.env_params(), *config.draw_jobsets(config.jobset_seed + 1, jobsets))
    times, last = [], time.perf_counter()

    def on_epoch(epoch: int, loss: float, accuracy: float) -> None:
        nonlocal last
        now = time.perf_counter()
        times.append(now - last)
        last = now

    clone(make_net(config), states, actions, accuracy=1.0, max_epochs=epochs,
          learning_rate=config.clone_learning_rate, batch_size=config.clone_batch, on_epoch=on_epoch)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--clone-jobsets", type=int, default=50)
    parser.add_argument("--label", default=None, help="the entry's name (default: the commit)")
    args = parser.parse_args()
    if min(args.iterations, args.epochs, args.clone_jobsets) < 1:
        parser.error("--iterations, --epochs and --clone-jobsets must be at least 1")
    torch.set_num_threads(2)
    label = args.label or subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                                         text=True).stdout.strip()
    rows = reinforce(args.iterations)
    med = statistics.median
    entry = {"iteration_s": med(r["seconds"] for r in rows), "rollout_s": med(r["rollout_s"] for r in rows),
             "steps_per_iteration": med(r["steps"] for r in rows), "iterations": args.iterations,
             "clone_epoch_s": med(cloning(args.clone_jobsets, args.epochs)), "clone_jobsets": args.clone_jobsets}
    entry["update_s"] = entry["iteration_s"] - entry["rollout_s"]
    entry["iterations_per_hour"] = 3600 / entry["iteration_s"]
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    results[label] = entry
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(label, json.dumps(entry, indent=1))


if __name__ == "__main__":
    main()
