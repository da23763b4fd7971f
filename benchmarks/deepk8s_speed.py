"""How fast Deepk8s's environment steps and its agents train, on this machine.

Measures, each as the median of ``--repeats`` runs:

* environment steps per second: one `Deepk8sEnv` driven by random masked
  actions; a `gymnasium.vector.SyncVectorEnv` and an `AsyncVectorEnv` of
  ``--envs`` environments (steps of all environments counted);
* training steps per second of PPO (MaskablePPO) and A2C: a few iterations of
  ``envs x steps_per_env`` steps after one warm-up iteration;
* DAgger iterations per second.

    python benchmarks/deepk8s_speed.py --repeats 3

Writes benchmarks/results/deepk8s/speed.{md,json}.

It drives Deepk8s's environment and trainers directly, not `cloudsim.run`, because it measures environment steps
under random masked actions and training iterations from the trainer's own log, which no replay, comparison or
bench runs.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import tempfile
import time
from pathlib import Path

import gymnasium
import numpy as np

import cloudsim  # noqa: F401  (registers the environments)
from agents.deepk8s import train
from agents.deepk8s.config import Deepk8sConfig
from traces import deepk8s_workload

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "deepk8s"


def env_steps_per_second(make, steps: int) -> float:
    env = make()
    rng = np.random.default_rng(0)
    env.reset(seed=0)
    started, done = time.perf_counter(), 0
    while done < steps:
        _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.unwrapped.action_masks()))))
        done += 1
        if terminated or truncated:
            env.reset()
    return done / (time.perf_counter() - started)


def vector_steps_per_second(vector, steps: int) -> float:
    rng = np.random.default_rng(0)
    vector.reset(seed=0)
    started, done = time.perf_counter(), 0
    while done < steps:
        masks = np.stack(vector.call("action_masks"))
        actions = [int(rng.choice(np.flatnonzero(m))) for m in masks]
        vector.step(np.array(actions))
        done += len(actions)
    rate = done / (time.perf_counter() - started)
    vector.close()
    return rate


def training_steps_per_second(algo: str, iterations: int, workload) -> float:
    """Steps per second of ``iterations`` iterations, from the log's wall times (the first iteration excluded)."""
    import pandas as pd

    config = Deepk8sConfig(algo=algo, iterations=iterations + 1)
    with tempfile.TemporaryDirectory() as out:
        train(config, workload, out, progress=False, save_every=10**6)
        log = pd.read_csv(Path(out) / "log.csv")
    seconds = log.wall_s.iloc[-1] - log.wall_s.iloc[0]
    if algo == "dagger":
        return iterations / seconds
    return iterations * config.envs * config.steps_per_env / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5000, help="environment steps per measurement")
    parser.add_argument("--envs", type=int, default=4, help="environments in a vector")
    parser.add_argument("--iterations", type=int, default=5, help="training iterations per measurement")
    args = parser.parse_args()
    workload = functools.partial(deepk8s_workload, tasks=Deepk8sConfig().tasks)
    make = functools.partial(gymnasium.make, "cloudsim/Deepk8s-v0", workload=workload)
    cases = {
        "env steps/s, 1 environment": lambda: env_steps_per_second(make, args.steps),
        f"env steps/s, SyncVectorEnv x{args.envs}": lambda: vector_steps_per_second(
            gymnasium.vector.SyncVectorEnv([make] * args.envs), args.steps),
        f"env steps/s, AsyncVectorEnv x{args.envs}": lambda: vector_steps_per_second(
            gymnasium.vector.AsyncVectorEnv([make] * args.envs), args.steps),
        "PPO training steps/s": lambda: training_steps_per_second("ppo", args.iterations, workload),
        "A2C training steps/s": lambda: training_steps_per_second("a2c", args.iterations, workload),
        "DAgger iterations/s": lambda: training_steps_per_second("dagger", args.iterations, workload),
    }
    rows = []
    for name, measure in cases.items():
        values = [measure() for _ in range(args.repeats)]
        rows.append({"measure": name, "median": round(float(statistics.median(values)), 1),
                     "runs": [round(float(v), 1) for v in values]})
        print(rows[-1], flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "speed.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = ["| measure | median | runs |", "|---|---|---|"]
    lines += [f"| {r['measure']} | {r['median']} | {', '.join(map(str, r['runs']))} |" for r in rows]
    (RESULTS / "speed.md").write_text(f"Median of {args.repeats} runs on this machine.\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
