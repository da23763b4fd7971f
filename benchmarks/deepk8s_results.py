"""Deepk8s's Table 1 and Figures 4, 5 and 6, measured here on held-out task sequences.

Every broker schedules the same held-out sequences (`traces.deepk8s_workload`
of seeds 0..N-1; training draws its seeds from `cloudsim.engine.envs.TRAINING_SEEDS`,
which starts at 1000): FCFS, Random, Tetris and SJF on the window of 10 tasks,
and the trained PPO, A2C and DAgger policies (the shipped checkpoints, or
``--checkpoint NAME=PATH``). Table 1 gives the mean over sequences of each
sequence's average weighted turnaround ((finish - submit) / duration), average
completion time (finish - submit) and makespan. Figure 5 splits the tasks into
short and long at the median duration of all the sequences' tasks (the paper
does not give its threshold). Figure 6 plots the reward per training iteration
from the training logs (a moving average of 50 iterations), with SJF's
mean return on 20 training sequences as a line. ``--oracle`` adds the look-ahead
bound of `agents.deepk8s.rollout` (SJF improved by playing out every candidate action to
the end of the sequence, knowing the arrivals to come): how far below SJF a
scheduler can get on these sequences at all.

    python benchmarks/deepk8s_results.py --seeds 20 --logs ppo=runs/ppo,a2c=runs/a2c,dagger=runs/dagger --oracle

Writes benchmarks/results/deepk8s/{table1.md,table1.json,figure4.png,figure5.png,figure6.png}.

It calls the engine directly, not `cloudsim.run`, because ``--oracle`` runs `RolloutOracle`, built from each
sequence's own jobs (no broker a run can name), ``--extra`` runs the PPO broker under several checkpoints at
once, and Figure 5 splits each run's jobs, which `compare`'s summary rows do not hold.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from agents import Windowed, make_broker
from agents.deepk8s.rollout import RolloutOracle
from agents.deepk8s.config import Deepk8sConfig
from cloudsim import simulate
from cloudsim.engine.envs import TRAINING_SEEDS, deepk8s_cluster
from cloudsim.run.output import pyplot, save_figure
from traces import deepk8s_workload

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "deepk8s"
BASELINES = ("fcfs", "random", "tetris", "sjf")
LEARNED = {"deepk8s": "PPO", "deepk8s-a2c": "A2C", "deepk8s-dagger": "DAgger"}
LABELS = {"fcfs": "FCFS", "random": "Random", "tetris": "Tetris", "sjf": "SJF", **LEARNED}
CURVE_LABELS = {"ppo": "PPO", "a2c": "A2C", "dagger": "DAgger", "ppo-from-dagger": "PPO from DAgger"}
ORACLE = "Rollout oracle (knows the arrivals)"
SMOOTHING = 50  # iterations: each iteration's episodes are different sequences, of very different difficulty
PAPER = {"FCFS": (1.531, 99.210, 680), "Random": (1.463, 94.726, 645), "Tetris": (1.470, 95.366, 639),
         "SJF": (1.433, 94.324, 646), "PPO": (1.325, 94.116, 643), "DAgger": (1.435, 94.331, 646)}


def broker(name: str, seed: int, checkpoints: dict[str, str]):
    if name in checkpoints:  # a learned policy (an extra one is run as the PPO broker with its checkpoint)
        return make_broker(name if name in LEARNED else "deepk8s", checkpoint=checkpoints[name])
    if name in LEARNED:
        return make_broker(name)
    return Windowed(make_broker(name, seed=seed), Deepk8sConfig().window)


def run_all(seeds: range, tasks: int, checkpoints: dict[str, str], extra: dict[str, str],
            oracle: bool = False) -> pd.DataFrame:
    """One row per (broker, sequence, job): its submit, finish and duration."""
    from tqdm.auto import tqdm

    cluster = deepk8s_cluster()
    config = Deepk8sConfig()
    frames = []
    for seed in tqdm(seeds, unit="sequence", desc="Deepk8s held-out"):
        jobs = deepk8s_workload(seed, tasks)
        brokers = {name: broker(name, seed, {**checkpoints, **extra}) for name in (*BASELINES, *LEARNED, *extra)}
        if oracle:
            brokers[ORACLE] = RolloutOracle(jobs, cluster, lambda: broker("sjf", seed, {}),
                                            window=config.window, max_wait=config.max_wait)
        for name, chosen in brokers.items():
            result = simulate(cluster, jobs, chosen)
            frame = result.jobs[["job_id", "submit_time", "finish_time", "duration"]].copy()
            frame["broker"], frame["seed"] = LABELS.get(name, name), seed
            frame["makespan"] = result.summary["makespan"]
            frames.append(frame)
    runs = pd.concat(frames, ignore_index=True)
    runs["completion"] = runs.finish_time - runs.submit_time
    runs["weighted_turnaround"] = runs.completion / runs.duration
    return runs


def table1(runs: pd.DataFrame, order: list[str]) -> pd.DataFrame:
    per_sequence = runs.groupby(["broker", "seed"]).agg(
        weighted_turnaround=("weighted_turnaround", "mean"), completion=("completion", "mean"),
        makespan=("makespan", "first"))
    table = per_sequence.groupby("broker").mean().reindex(order)
    best = table.loc[[LABELS[b] for b in BASELINES], "weighted_turnaround"].min()
    table["vs_best_heuristic_%"] = 100 * (table.weighted_turnaround / best - 1)
    return table


def bars(runs: pd.DataFrame, path: Path, median: float, order: list[str]) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    values = runs.groupby("broker").weighted_turnaround.mean().reindex(order)
    colours = ["0.6"] * len(BASELINES) + ["C0"] * (len(order) - len(BASELINES))
    ax.bar(order, values, color=colours)
    ax.set_ylim(min(values) * 0.95, max(values) * 1.02)
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_ylabel("average weighted turnaround")
    ax.set_title("Figure 4: weighted turnaround on held-out sequences")
    fig.tight_layout()
    save_figure(fig, path / "figure4.png")
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5))
    for ax, (title, part) in zip(axes, (("short tasks", runs[runs.duration <= median]),
                                        ("long tasks", runs[runs.duration > median]), ("all tasks", runs))):
        values = part.groupby("broker").completion.mean().reindex(order)
        ax.bar(order, values, color=colours)
        ax.set_ylim(min(values) * 0.95, max(values) * 1.02)
        ax.set_title(f"{title} (duration {'<=' if title.startswith('short') else '>'} {median:g})"
                     if title != "all tasks" else title)
        ax.tick_params(axis="x", labelrotation=45)
    axes[0].set_ylabel("average completion time")
    fig.suptitle("Figure 5: completion time of short and long tasks")
    fig.tight_layout()
    save_figure(fig, path / "figure5.png")


def sjf_return(tasks: int, sequences: int = 20) -> float:
    """SJF's mean return (minus the sum of weighted turnarounds) on training sequences."""
    seeds = np.random.default_rng(0).integers(*TRAINING_SEEDS, size=sequences)
    totals = []
    for seed in seeds:
        jobs = simulate(deepk8s_cluster(), deepk8s_workload(int(seed), tasks), broker("sjf", 0, {})).jobs
        totals.append(-(jobs.completion / jobs.duration).sum())
    return float(np.mean(totals))


def curves(logs: dict[str, Path], sjf: float, path: Path) -> dict:
    """Figure 6, in two panels (the whole range, and close to SJF), and when each run reached A2C's final reward."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    reached = {}
    frames = {algo: pd.read_csv(folder / "log.csv") for algo, folder in logs.items()}
    for algo, log in frames.items():
        smooth = log.reward.rolling(SMOOTHING, min_periods=1).mean()
        for ax in axes:
            ax.plot(log.iteration, smooth, label=CURVE_LABELS.get(algo, algo))
        reached[algo] = {"final_reward": float(log.reward.tail(max(len(log) // 10, 1)).mean()),
                         "iterations": int(log.iteration.iloc[-1]), "wall_s": float(log.wall_s.iloc[-1])}
    if "a2c" in frames:
        target = reached["a2c"]["final_reward"]
        for algo, log in frames.items():
            smooth = log.reward.rolling(SMOOTHING, min_periods=1).mean()
            hit = log.iteration[smooth >= target]
            reached[algo]["first_iteration_at_a2c_final"] = int(hit.iloc[0]) if len(hit) else None
    for ax in axes:
        ax.axhline(sjf, color="k", linestyle="--", label="SJF")
        ax.set_xlabel("training iteration")
    axes[1].set_ylim(sjf * 2.0, sjf * 0.8)
    axes[0].set_ylabel(f"return per episode (moving average of {SMOOTHING})")
    axes[0].set_title("Figure 6: training curves")
    axes[1].set_title("the same, close to SJF")
    axes[1].legend()
    fig.tight_layout()
    save_figure(fig, path / "figure6.png")
    return reached


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="held-out sequences: seeds 0..N-1 (default 20)")
    parser.add_argument("--tasks", type=int, default=Deepk8sConfig().tasks, help="tasks per sequence")
    parser.add_argument("--checkpoint", default="", help="NAME=PATH[,NAME=PATH] instead of the shipped ones")
    parser.add_argument("--logs", default="", help="ALGO=DIR[,ALGO=DIR]: training folders for Figure 6")
    parser.add_argument("--extra", default="", help="LABEL=PATH[,LABEL=PATH]: more PPO policies for the table")
    parser.add_argument("--oracle", action="store_true",
                        help="add the look-ahead bound (agents.deepk8s.rollout; about a minute per sequence)")
    args = parser.parse_args()
    if args.seeds < 1 or args.tasks < 1:
        parser.error("--seeds and --tasks must be at least 1")
    checkpoints = dict(item.split("=", 1) for item in args.checkpoint.split(",") if item)
    logs = {k: Path(v) for k, v in (item.split("=", 1) for item in args.logs.split(",") if item)}
    extra = dict(item.split("=", 1) for item in args.extra.split(",") if item)
    RESULTS.mkdir(parents=True, exist_ok=True)
    runs = run_all(range(args.seeds), args.tasks, checkpoints, extra, args.oracle)
    order = [LABELS[n] for n in (*BASELINES, *LEARNED)] + list(extra) + ([ORACLE] if args.oracle else [])
    table = table1(runs, order)
    median = float(runs[runs.broker == "SJF"].duration.median())
    bars(runs, RESULTS, median, order)
    lines = [f"Held-out sequences: seeds 0..{args.seeds - 1} of `traces.deepk8s_workload` ({args.tasks} tasks each), "
             "5 machines of 10 cpu and 64 memory, window 10. Mean over sequences.", "",
             "| method | avg weighted turnaround | avg completion time | makespan | vs best heuristic | paper |",
             "|---|---|---|---|---|---|"]
    for name, row in table.iterrows():
        paper = PAPER.get(name)
        lines.append(f"| {name} | {row.weighted_turnaround:.3f} | {row.completion:.2f} | {row.makespan:.1f} | "
                     f"{row['vs_best_heuristic_%']:+.1f}% | "
                     f"{'/'.join(f'{v:g}' for v in paper) if paper else '-'} |")
    report = {"seeds": args.seeds, "tasks": args.tasks, "short_long_threshold": median,
              "table1": table.reset_index().to_dict(orient="records")}
    if logs:
        report["training"] = curves(logs, sjf_return(args.tasks), RESULTS)
        lines += ["", f"Training (Figure 6): final reward = mean of the last 10% of iterations; first iteration at "
                  f"which the moving average of {SMOOTHING} reaches A2C's final reward.", "",
                  "| algorithm | iterations | wall s | final reward | first iteration at A2C's final |",
                  "|---|---|---|---|---|"]
        lines += [f"| {algo} | {r['iterations']} | {r['wall_s']:.0f} | {r['final_reward']:.2f} | "
                  f"{r.get('first_iteration_at_a2c_final')} |" for algo, r in report["training"].items()]
    (RESULTS / "table1.md").write_text("\n".join(lines) + "\n")
    (RESULTS / "table1.json").write_text(json.dumps(report, indent=2, default=float) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
