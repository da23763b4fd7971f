"""How fast DeepRM's environment steps and its agent trains, on this machine.

Measures, each the median of ``--repeats`` runs:

* one `DeepRMEnv` (M = 10, image observations) driven by SJF: steps per second,
  the figure the original code reaches with one environment;
* a `DeepRMBatch` of ``--batch`` jobsets in lockstep driven by SJF: environment
  steps per second in all, with the image drawn at every step (as a policy on
  the image needs it) and without (the state only: what DeepRM's trainer stores);
* one training iteration at the paper's size (100 jobsets x 20 episodes, M = 10,
  50 steps of arrivals, 70 % load): seconds, split into rollout and update.

    python benchmarks/deeprm_speed.py --repeats 3

Writes benchmarks/results/deeprm/speed.{md,json}.

It drives DeepRM's environment and trainer directly, not `cloudsim.run`, because it measures environment steps
(one `DeepRMEnv`, and a `DeepRMBatch` with and without the image) and single training iterations, which no
replay, comparison or bench runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from cloudsim.engine.envs.deeprm import DeepRMBatch, DeepRMEnv, deeprm_jobsets, sjf_actions

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "deeprm"


def single_env(steps: int) -> float:
    env = DeepRMEnv(slots=10, load=1.3)
    env.reset(seed=0)
    start = time.perf_counter()
    for _ in range(steps):
        action = sjf_actions(env.batch)[0]
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def batched(size: int, image: bool) -> float:
    env = DeepRMEnv(slots=10, load=1.3)
    lengths, sizes = deeprm_jobsets(0, size, env.params)
    batch = DeepRMBatch(env.params, lengths, sizes)
    steps = 0
    start = time.perf_counter()
    while not batch.done.all():
        live = int((~batch.done).sum())
        if image:
            batch.image()
        else:
            batch.snapshot()
        batch.step(sjf_actions(batch))
        steps += live
    return steps / (time.perf_counter() - start)


def training_iteration(iterations: int) -> list[dict]:
    from agents.deeprm import train
    from agents.deeprm.config import DeepRMConfig

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        train(DeepRMConfig(iterations=iterations), folder, progress=False, save_every=iterations,
              on_iteration=rows.append)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20_000, help="steps of the single environment")
    parser.add_argument("--batch", type=int, default=2_000, help="jobsets of the batched run")
    args = parser.parse_args()
    med = statistics.median
    result = {
        "single_env_steps_per_s": med(single_env(args.steps) for _ in range(args.repeats)),
        "batched_image_steps_per_s": med(batched(args.batch, True) for _ in range(args.repeats)),
        "batched_state_steps_per_s": med(batched(args.batch, False) for _ in range(args.repeats)),
    }
    rows = training_iteration(args.repeats)
    result["training_iteration_s"] = med(r["seconds"] for r in rows)
    result["training_rollout_s"] = med(r["rollout_s"] for r in rows)
    result["training_steps_per_iteration"] = med(r["steps"] for r in rows)
    result["batch"] = args.batch
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "speed.json").write_text(json.dumps(result, indent=1) + "\n")
    lines = ["| measure | value |", "|---|---|",
             f"| one environment (M = 10, image, SJF) | {result['single_env_steps_per_s']:,.0f} steps/s |",
             f"| {args.batch:,} jobsets in lockstep, image drawn | "
             f"{result['batched_image_steps_per_s']:,.0f} steps/s |",
             f"| {args.batch:,} jobsets in lockstep, state only | {result['batched_state_steps_per_s']:,.0f} steps/s |",
             f"| training iteration, 100 jobsets x 20 episodes | {result['training_iteration_s']:.2f} s "
             f"(rollout {result['training_rollout_s']:.2f} s, {result['training_steps_per_iteration']:,.0f} steps) |"]
    (RESULTS / "speed.md").write_text(f"`python benchmarks/deeprm_speed.py --repeats {args.repeats}`, median of "
                                      f"{args.repeats}.\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
