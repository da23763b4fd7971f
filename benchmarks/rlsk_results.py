"""RLSK's evaluation (section IV): Figure 4, Figures 5-9, section IV-A's metrics and Table 1, on held-out sequences.

* Table 1 and the metrics: every broker (RLSK and the four baselines, acting
  on clusters in the federation of `cloudsim.engine.envs.rlsk`) on held-out job
  sequences (seeds 0..N-1; training used seeds from 1,000) at each load:
  makespan, total reward (eq. 4 integrated over the run), imbalance between
  clusters (eq. 8) and within them (eq. 7) averaged over time, mean
  utilisation, section IV-A's (cpu/mean - 1)^2 + (memory/mean - 1)^2, job wait,
  postponements. The paper evaluates at about 70 %; the makespans differ only
  once clusters fill up, so higher loads are run too.
* Figures 5-9: each cluster's cpu and memory utilisation over time (top row)
  and the clusters' mean utilisation (bottom) for RLSK, Least Load, Round Robin,
  Random and First Fit on the first held-out sequence at the first load.
* Figure 4: the mean total reward of each training epoch (from the training
  log), with each baseline's mean total reward on the same training sequences.
* Speed: environment steps per second (random actions, one environment) and the
  training's wall time (from the log).
* Beyond the paper, with ``--nodes N``: the same brokers on clusters of N nodes
  each (least-allocated node choice inside a cluster), at the first load.
* ``--policy-at LOAD=PATH``: an RLSK agent trained at another load, evaluated at
  that load beside the main one (row "RLSK (trained at LOAD)").
* ``--bound-seeds N``: how far a dispatcher can get on eq. 8 at the first load,
  on N held-out sequences paired across brokers: Least Load, RLSK, and the
  `lookahead` oracle (`agents.rlsk.federation`) maximising eq. 4 with the training's
  weights and with eq. 8 alone; each one's eq. 8 against Least Load's, as the
  mean of the per-sequence differences with its standard error.

    python benchmarks/rlsk_results.py --policy agents/checkpoints/rlsk.pt \
        --log benchmarks/results/rlsk/training/log.csv [--seeds 20] [--loads 0.7,1.0] [--nodes 4] \
        [--policy-at 1.0=PATH] [--bound-seeds 60]

Writes benchmarks/results/rlsk/ (figure4.png, figure5.png .. figure9.png, results.md, results.json).

It calls the engine directly, not `cloudsim.run`, because Figures 5-9 draw each cluster's utilisation from the
run's whole result, the metrics use the reward weights of the trained policy (the run layer's use the defaults),
and ``--policy-at`` runs a second RLSK checkpoint beside the first.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from agents import make_federated_broker
from agents.rlsk import load_policy
from cloudsim import simulate
from cloudsim.engine.envs import TRAINING_SEEDS
from cloudsim.engine.envs.rlsk import RLSKWeights, cluster_utilisation, federation_cluster, federation_metrics
from cloudsim.run.environments import make_rlsk
from cloudsim.run.output import pyplot, save_figure
from traces import rlsk_workload

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "rlsk"
BROKERS = ("rlsk", "least-load", "round-robin", "random", "first-fit")  # the order of Figures 5-9
TITLES = {"rlsk": "RLSK", "least-load": "Least Load", "round-robin": "Round Robin", "random": "Random",
          "first-fit": "First Fit"}
COLUMNS = ("makespan", "total_reward", "imbalance_machines", "imbalance_resources", "mean_utilisation",
           "diff_within_cluster", "avg_job_wait", "postponements", "forced")


def run(name: str, policy_path: Path, jobs, nodes: int, seed: int, weights: RLSKWeights):
    options = {"checkpoint": str(policy_path)} if name.startswith("rlsk") else {}
    broker = make_federated_broker("rlsk" if name.startswith("rlsk") else name, clusters=3, seed=seed, **options)
    result = simulate(federation_cluster(3, nodes), jobs, broker)
    assert result.summary["instances_finished"] == len(jobs), f"{name}: not every job finished"
    row = {"broker": name, "seed": seed, "makespan": result.makespan,
           "avg_job_wait": result.summary["avg_job_wait"], **federation_metrics(result, 3, weights),
           "postponements": broker.federation.postponements, "forced": broker.federation.forced}
    return result, row


def bound(policy: Path, load: float, jobs: int, seeds: int, weights: RLSKWeights) -> pd.DataFrame:
    """Eq. 8 of Least Load, RLSK and the look-ahead oracle (two weightings) on sequences 0..seeds-1,
    with each one's per-sequence difference from Least Load's."""
    from tqdm.auto import tqdm

    oracles = {"lookahead": weights, "lookahead (eq. 8 alone)": RLSKWeights(alpha=0.0, beta=0.0, gamma=1.0)}
    rows = []
    for seed in tqdm(range(seeds), unit="sequence", desc="RLSK bound"):
        sequence = rlsk_workload(load, jobs, seed=seed)
        for name in ("least-load", "rlsk", *oracles):
            options = ({"checkpoint": str(policy)} if name == "rlsk"
                       else {"weights": oracles[name]} if name in oracles else {})
            broker = make_federated_broker(name.split(" ")[0], clusters=3, seed=seed, **options)
            result = simulate(federation_cluster(3, 1), sequence, broker)
            rows.append({"broker": name, "seed": seed, **federation_metrics(result, 3, weights)})
    frame = pd.DataFrame(rows).pivot(index="seed", columns="broker", values="imbalance_machines")
    difference = frame.sub(frame["least-load"], axis=0)
    return pd.DataFrame({"eq8": frame.mean(), "minus_least_load": difference.mean(),
                         "standard_error": difference.std(ddof=1) / np.sqrt(seeds),
                         "sequences_below_least_load": (difference < 0).sum()}).drop(index="least-load")


def title(name: str) -> str:
    return TITLES.get(name) or f"RLSK (trained at {float(name.split('@')[1]):.0%})"


def table(rows: pd.DataFrame) -> str:
    lines = ["| broker | " + " | ".join(COLUMNS) + " |", "|---|" + "---|" * len(COLUMNS)]
    for name in rows.broker.unique():
        part = rows[rows.broker == name]
        cells = [f"{part[c].mean():.4g} ± {part[c].std(ddof=0):.2g}" for c in COLUMNS]
        lines.append(f"| {title(name)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def targets(rows: pd.DataFrame, agent: str = "rlsk") -> dict:
    mean = rows.groupby("broker")[list(COLUMNS)].mean()
    baselines = mean.drop(index=[b for b in mean.index if b.startswith("rlsk")])
    best = float(baselines["makespan"].min())
    least = mean.loc["least-load"]
    return {"agent": agent,
            "reward_above_every_baseline": bool(mean.loc[agent, "total_reward"] > baselines["total_reward"].max()),
            "reward_rlsk": float(mean.loc[agent, "total_reward"]),
            "reward_best_baseline": float(baselines["total_reward"].max()),
            "imbalance_machines_rlsk": float(mean.loc[agent, "imbalance_machines"]),
            "imbalance_machines_least_load": float(least["imbalance_machines"]),
            "imbalance_resources_rlsk": float(mean.loc[agent, "imbalance_resources"]),
            "imbalance_resources_least_load": float(least["imbalance_resources"]),
            "makespan_rlsk": float(mean.loc[agent, "makespan"]), "makespan_best_baseline": best,
            "makespan_over_best_percent": round(100 * (float(mean.loc[agent, "makespan"]) / best - 1), 2)}


def utilisation_figure(name: str, result, path: Path, load: float) -> None:
    plt = pyplot()
    times, util = cluster_utilisation(result, 3)
    times = np.append(times, result.makespan)
    util = np.concatenate([util, util[-1:]])
    fig = plt.figure(figsize=(12, 6))
    grid = fig.add_gridspec(2, 3)
    for c in range(3):
        ax = fig.add_subplot(grid[0, c])
        for r, resource in enumerate(result.resources):
            ax.step(times, util[:, c, r], where="post", linewidth=0.7, label=resource)
        ax.set_title(f"cluster {c + 1}")
        ax.set_ylim(0, 1.05)
        ax.set_xlabel("time")
        ax.grid(alpha=0.3)
        if c == 0:
            ax.set_ylabel("utilisation")
            ax.legend(fontsize=8)
    ax = fig.add_subplot(grid[1, :])
    for c in range(3):
        ax.step(times, util[:, c].mean(axis=1), where="post", linewidth=0.8, label=f"cluster {c + 1}")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("time")
    ax.set_ylabel("mean utilisation (eq. 5)")
    ax.legend(fontsize=8, ncol=3)
    ax.grid(alpha=0.3)
    fig.suptitle(f"{TITLES[name]}: held-out sequence 0 at {load:.0%} load")
    fig.tight_layout()
    save_figure(fig, path, dpi=90)


def figure4(log: pd.DataFrame, levels: dict, path: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(log["epoch"], log["reward"], marker="o", markersize=3, color="black",
            label="RLSK (training, epsilon-greedy)")
    for (name, level), colour in zip(levels.items(), ("tab:blue", "tab:orange", "tab:green", "tab:red")):
        ax.axhline(level, linestyle="--", linewidth=1, color=colour, label=title(name))
    ax.set_xlabel("epoch (one episode per training sequence)")
    ax.set_ylabel("average total reward per episode")
    ax.set_title("Figure 4: average reward during training, with the baselines on the training sequences")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)


def env_speed(episodes: int = 3) -> float:
    env = make_rlsk(jobs=1000)
    rng = np.random.default_rng(0)
    steps, started = 0, time.perf_counter()
    for e in range(episodes):
        env.reset(seed=e)
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
            done = terminated or truncated
            steps += 1
    return steps / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", type=Path, required=True)
    parser.add_argument("--log", type=Path, required=True, help="the training's log.csv")
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--loads", default="0.7,1.0")
    parser.add_argument("--policy-at", action="append", default=[], metavar="LOAD=PATH",
                        help="an agent trained at LOAD, evaluated at LOAD too")
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--bound-seeds", type=int, default=0,
                        help="also run the eq. 8 bound on this many held-out sequences (0: not)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.bound_seeds < 0 or args.bound_seeds == 1:
        parser.error("--bound-seeds must be 0 (no bound) or at least 2 (a standard error needs two sequences)")
    args.out.mkdir(parents=True, exist_ok=True)
    policy = load_policy(args.policy)
    config = policy.config
    weights = RLSKWeights(config.alpha, config.beta, config.gamma)
    loads = [float(v) for v in args.loads.split(",")]
    flags = [(k, item) for k, v in vars(args).items() if k != "out" for item in (v if isinstance(v, list) else [v])]
    report = {"command": "python benchmarks/rlsk_results.py " + " ".join(
        f"--{k.replace('_', '-')} {item}" for k, item in flags),
        "policy_config": dataclasses.asdict(config), "loads": {}}
    md = [f"# RLSK: held-out sequences (seeds 0-{args.seeds - 1}, {args.jobs} jobs each)\n",
          f"Made by `{report['command']}`. Mean ± standard deviation over sequences; brokers act on 3 clusters "
          f"of 1 cpu and 1 memory (one node each unless stated). Reward weights alpha={weights.alpha:g}, "
          f"beta={weights.beta:g}, gamma={weights.gamma:g}.\n"]
    others = {float(k): Path(v) for k, v in (item.split("=", 1) for item in args.policy_at)}
    settings = [(load, 1) for load in loads] + ([(loads[0], args.nodes)] if args.nodes > 1 else [])
    for load, nodes in settings:
        rows = []
        extra = {f"rlsk@{load:g}": others[load]} if load in others and nodes == 1 else {}
        for seed in range(args.seeds):
            jobs = rlsk_workload(load, args.jobs, seed=seed)
            for name, path in [(b, args.policy) for b in BROKERS] + list(extra.items()):
                result, row = run(name, path, jobs, nodes, seed, weights)
                rows.append(row)
                if seed == 0 and load == loads[0] and nodes == 1:
                    figure = 5 + BROKERS.index(name)
                    utilisation_figure(name, result, args.out / f"figure{figure}.png", load)
        frame = pd.DataFrame(rows)
        key = f"load {load:g}" + (f", {nodes} nodes per cluster" if nodes > 1 else "")
        report["loads"][key] = {"table": frame.groupby("broker")[list(COLUMNS)].mean().to_dict("index")}
        checks = [targets(frame)] + [targets(frame, name) for name in extra]
        report["loads"][key]["targets"] = checks
        md += [f"\n## {key}\n", table(frame)] + [f"\nTargets: {json.dumps(c)}\n" for c in checks]
        print(key, json.dumps(checks), flush=True)
    if args.bound_seeds:
        limits = bound(args.policy, loads[0], args.jobs, args.bound_seeds, weights)
        report["bound"] = {"load": loads[0], "sequences": args.bound_seeds, **limits.to_dict("index")}
        least = limits["eq8"] - limits["minus_least_load"]
        md += [f"\n## How far eq. 8 can go (load {loads[0]:g}, sequences 0-{args.bound_seeds - 1})\n\n"
               f"Least Load's eq. 8: {least.iloc[0]:.4f}. Each broker's eq. 8 minus Least Load's on the same "
               "sequence, mean and standard error:\n\n| broker | eq. 8 | minus Least Load | standard error | "
               "sequences below Least Load |\n|---|---|---|---|---|\n"]
        md += [f"| {title(name) if name in TITLES else name} | {row.eq8:.4f} | {row.minus_least_load:+.4f} | "
               f"{row.standard_error:.4f} | {int(row.sequences_below_least_load)} |\n"
               for name, row in limits.iterrows()]
    # Figure 4: the baselines' levels on the training sequences.
    log = pd.read_csv(args.log)
    levels = {}
    for name in BROKERS[1:]:
        totals = [run(name, args.policy, rlsk_workload(config.load, config.jobs, seed=TRAINING_SEEDS[0] + s),
                      config.nodes, s, weights)[1]["total_reward"] for s in range(config.sequences)]
        levels[name] = float(np.mean(totals))
    figure4(log, levels, args.out / "figure4.png")
    report["figure4"] = {"baselines_on_training_sequences": levels, "epochs": int(log["epoch"].max()),
                         "last_epoch_reward": float(log["reward"].iloc[-1]),
                         "best_epoch_reward": float(log["reward"].max())}
    speed = env_speed()
    report["speed"] = {"env_steps_per_s": round(speed, 1), "training_wall_s": float(log["wall_s"].iloc[-1]),
                       "training_steps": int(log["timesteps"].iloc[-1])}
    md += ["\n## Figure 4 and speed\n",
           f"Baselines' mean total reward on the {config.sequences} training sequences: "
           + ", ".join(f"{TITLES[k]} {v:.1f}" for k, v in levels.items())
           + f". RLSK's last epoch (epsilon-greedy): {log['reward'].iloc[-1]:.1f}; best {log['reward'].max():.1f}.\n\n"
           f"Environment: {speed:.0f} steps per second (random actions, one environment, 1,000-job sequences). "
           f"Training: {report['speed']['training_steps']:,} steps in {report['speed']['training_wall_s'] / 60:.1f} "
           f"min.\n"]
    (args.out / "results.md").write_text("".join(md))
    (args.out / "results.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
