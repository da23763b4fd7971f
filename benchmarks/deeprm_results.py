"""DeepRM's figures 4-7, measured in DeepRM's environment on held-out jobsets.

* Figure 4: average job slowdown against load (code job sizes, M = 10) for SJF,
  Packer, Tetris* (its best knob of ``KNOBS`` at each load) and DeepRM policies
  trained at 70 % and 130 % load; 100 held-out jobsets (seeds 0-99) per load.
* Figure 5: slowdown and completion time at 130 % load of the heuristics and of
  the policies trained for each objective (when a completion-time checkpoint is given).
* Figure 6: the learning curve of the 70 % training (mean slowdown, mean and
  maximum total reward per iteration), with the heuristics' slowdown on the
  training jobsets.
* Figure 7: at 110 % load, the lengths of the jobs DeepRM withholds (a job fits
  now and time moves on without it) and the slowdown by job length against Tetris*.

    python benchmarks/deeprm_results.py --policy70 RUN70/policy.pt --policy130 RUN130/policy.pt \
        --log70 RUN70/log.csv [--completion130 RUNC/policy.pt]

Writes benchmarks/results/deeprm/ (figures, results.md, results.json).

It drives DeepRM's batched environment directly, not `cloudsim.run`, because Figure 7 looks at every step (the
jobs that fit but are withheld), and Figures 4 and 5 run two DeepRM checkpoints side by side and pool every job
of a load's jobsets, where ``compare --env deeprm`` takes one checkpoint per broker and averages per jobset.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from agents.deeprm import load_policy
from agents.deeprm.config import TRAINING_JOBSET_SEED, DeepRMConfig
from cloudsim.engine.envs.deeprm import (DeepRMBatch, DeepRMParams, deeprm_jobsets, packer_actions, rate_for_load,
                                  sjf_actions, tetris_star_actions)

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "deeprm"
KNOBS = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5)
LOADS = tuple(round(0.1 * k, 1) for k in range(1, 19))  # 10 % .. 180 % (the code's sizes reach 184 %)


def params_at(load: float, objective: str = "slowdown") -> DeepRMParams:
    base = DeepRMParams(slots=10, mode="code", objective=objective)
    return replace(base, new_job_rate=rate_for_load(load, base))


def jobsets(params: DeepRMParams, seeds) -> tuple[np.ndarray, np.ndarray]:
    drawn = [deeprm_jobsets(s, 1, params) for s in seeds]
    return np.concatenate([d[0] for d in drawn]), np.concatenate([d[1] for d in drawn])


def run(policy, params, lengths, sizes, *, watch: bool = False) -> dict:
    """Episodes to their end; per-job slowdown and completion, and (watch) the withheld jobs' lengths."""
    batch = DeepRMBatch(params, lengths, sizes)
    held, steps, idle_steps = [], 0, 0
    while not batch.done.all():
        actions = policy(batch)
        if watch:
            live = ~batch.done
            fits = batch.fits_now()
            slot = np.minimum(actions, params.slots - 1)
            allocates = (actions < params.slots) & batch.placeable()[np.arange(batch.B), slot]
            moving = live & ~allocates
            steps += int(moving.sum())
            withholding = moving & fits.any(1)
            idle_steps += int(withholding.sum())
            held.extend(batch.slot_lengths()[withholding][fits[withholding]].tolist())
        batch.step(actions)
    ok = (batch.enter >= 0) & (batch.start >= 0)
    completion = (batch.finish - batch.enter)[ok]
    length = batch.lengths[ok]
    return {"slowdown": completion / length, "completion": completion, "length": length, "held": held,
            "time_steps": steps, "withholding_steps": idle_steps,
            "truncated": int(batch.truncated.sum()), "unallocated": int(((batch.enter >= 0) & (batch.start < 0)).sum())}


def heuristics(knobs=KNOBS):
    yield "SJF", None, sjf_actions
    yield "Packer", None, packer_actions
    for knob in knobs:
        yield "Tetris*", knob, (lambda k: lambda batch: tetris_star_actions(batch, k))(knob)


def figure4(policies: dict, seeds, out: Path) -> pd.DataFrame:
    rows = []
    for load in LOADS:
        params = params_at(load)
        lengths, sizes = jobsets(params, seeds)
        for name, knob, policy in heuristics():
            r = run(policy, params, lengths, sizes)
            rows.append({"load": load, "policy": name, "knob": knob, "slowdown": r["slowdown"].mean(),
                         "completion": r["completion"].mean()})
        for name, policy in policies.items():
            r = run(policy, params, lengths, sizes)
            rows.append({"load": load, "policy": name, "knob": None, "slowdown": r["slowdown"].mean(),
                         "completion": r["completion"].mean(), "truncated": r["truncated"]})
        print(f"figure 4: load {load:g} done", flush=True)
    frame = pd.DataFrame(rows)
    best = (frame[frame["policy"] == "Tetris*"].sort_values("slowdown").groupby("load").head(1)
            .assign(policy="Tetris* (best knob)"))
    shown = pd.concat([frame[frame["policy"] != "Tetris*"], best]).sort_values(["load", "policy"])
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, group in shown.groupby("policy", sort=False):
        ax.plot(group["load"] * 100, group["slowdown"], marker="o", markersize=3, label=name)
    ax.set_xlabel("load (% of a resource)")
    ax.set_ylabel("average job slowdown")
    ax.set_title(f"DeepRM Figure 4: {len(seeds)} held-out jobsets per load, M = 10, code job sizes")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "figure4.png", dpi=120)
    plt.close(fig)
    return frame


def figure6(log: Path, training_levels: dict, out: Path) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frame = pd.read_csv(log)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    a.plot(frame["iteration"], frame["mean_slowdown"], label="DeepRM (sampled policy)", lw=1)
    for name, value in training_levels.items():
        a.axhline(value, ls="--", lw=1, label=name, color={"SJF": "tab:orange", "Packer": "tab:green"}.get(
            name, "tab:red"))
    a.set_xlabel("iteration")
    a.set_ylabel("average job slowdown")
    a.set_title("(a) slowdown on the training jobsets, 70 % load")
    a.legend()
    b.plot(frame["iteration"], frame["mean_reward"], label="mean total reward", lw=1)
    b.plot(frame["iteration"], frame["max_reward"], label="maximum total reward", lw=1)
    b.set_xlabel("iteration")
    b.set_title("(b) total reward")
    b.legend()
    fig.tight_layout()
    fig.savefig(out / "figure6.png", dpi=120)
    plt.close(fig)
    return {"iterations": int(frame["iteration"].max()), "first_slowdown": float(frame["mean_slowdown"].iloc[0]),
            "last_slowdown": float(frame["mean_slowdown"].iloc[-1]),
            "last_mean_reward": float(frame["mean_reward"].iloc[-1]),
            "last_max_reward": float(frame["max_reward"].iloc[-1]),
            "median_iteration_s": float(frame["seconds"].median())}


def figure7(policy, knob: float, seeds, out: Path) -> dict:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    params = params_at(1.1)
    lengths, sizes = jobsets(params, seeds)
    deeprm = run(policy, params, lengths, sizes, watch=True)
    tetris = run(lambda batch: tetris_star_actions(batch, knob), params, lengths, sizes)
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    a.hist(deeprm["held"], bins=np.arange(0.5, 16.5, 1), density=True)
    a.set_xlabel("job length")
    a.set_ylabel("fraction of withheld jobs")
    a.set_title("(a) length of withheld jobs, 110 % load")
    small = {"small (1-3)": lambda length: length <= 3, "large (10-15)": lambda length: length >= 10}
    x = np.arange(len(small))
    for k, (name, r) in enumerate((("DeepRM", deeprm), (f"Tetris* ({knob:g})", tetris))):
        values = [r["slowdown"][pick(r["length"])].mean() for pick in small.values()]
        b.bar(x + 0.4 * k - 0.2, values, width=0.4, label=name)
    b.set_xticks(x, list(small))
    b.set_ylabel("average job slowdown")
    b.set_title("(b) slowdown by job length")
    b.legend()
    fig.tight_layout()
    fig.savefig(out / "figure7.png", dpi=120)
    plt.close(fig)
    held = np.array(deeprm["held"])
    return {"withholding_share_of_time_steps": deeprm["withholding_steps"] / max(deeprm["time_steps"], 1),
            "withheld_jobs": int(held.size), "withheld_large_share": float((held >= 10).mean()) if held.size else None,
            "deeprm_slowdown_small": float(deeprm["slowdown"][deeprm["length"] <= 3].mean()),
            "deeprm_slowdown_large": float(deeprm["slowdown"][deeprm["length"] >= 10].mean()),
            "tetris_slowdown_small": float(tetris["slowdown"][tetris["length"] <= 3].mean()),
            "tetris_slowdown_large": float(tetris["slowdown"][tetris["length"] >= 10].mean()), "knob": knob}


def figure5(policies: dict, seeds, out: Path) -> pd.DataFrame:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    params = params_at(1.3)
    lengths, sizes = jobsets(params, seeds)
    rows = []
    for name, knob, policy in heuristics():
        r = run(policy, params, lengths, sizes)
        rows.append({"policy": name if knob is None else f"Tetris* ({knob:g})", "slowdown": r["slowdown"].mean(),
                     "completion": r["completion"].mean()})
    for name, policy in policies.items():
        r = run(policy, params, lengths, sizes)
        rows.append({"policy": name, "slowdown": r["slowdown"].mean(), "completion": r["completion"].mean()})
    frame = pd.DataFrame(rows)
    best = frame[frame["policy"].str.startswith("Tetris*")].sort_values("slowdown").head(1)
    shown = pd.concat([frame[~frame["policy"].str.startswith("Tetris*")], best])
    fig, ax = plt.subplots(figsize=(8, 4))
    x = np.arange(len(shown))
    ax.bar(x - 0.2, shown["slowdown"], width=0.4, label="average slowdown")
    ax.bar(x + 0.2, shown["completion"], width=0.4, label="average completion time")
    ax.set_xticks(x, shown["policy"], rotation=20)
    ax.set_title("DeepRM Figure 5: 130 % load, held-out jobsets")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "figure5.png", dpi=120)
    plt.close(fig)
    return frame


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy70", required=True)
    parser.add_argument("--policy130", required=True)
    parser.add_argument("--log70", required=True)
    parser.add_argument("--completion130", help="a policy trained for completion time at 130 %% load")
    parser.add_argument("--seeds", type=int, default=100, help="held-out jobsets per load (seeds 0..N-1)")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)  # forwards of a few jobsets: more threads only add synchronisation
    RESULTS.mkdir(parents=True, exist_ok=True)
    seeds = range(args.seeds)
    policies = {"DeepRM (trained at 70 %)": load_policy(args.policy70),
                "DeepRM (trained at 130 %)": load_policy(args.policy130)}
    fig4 = figure4(policies, seeds, RESULTS)
    train_params = DeepRMConfig().env_params()
    L, S = deeprm_jobsets(TRAINING_JOBSET_SEED, 100, train_params)
    levels = {name: float(run(policy, replace(train_params, max_time=20_000), L, S)["slowdown"].mean())
              for name, knob, policy in heuristics(knobs=()) }
    fig6 = figure6(Path(args.log70), levels, RESULTS)
    tetris = fig4[fig4["policy"] == "Tetris*"]
    best_knob = float(tetris[tetris["load"] == 1.1].sort_values("slowdown")["knob"].iloc[0])
    fig7 = figure7(policies["DeepRM (trained at 130 %)"], best_knob, seeds, RESULTS)
    results = {"figure4": fig4.to_dict("records"), "figure6": {**fig6, "training_levels": levels}, "figure7": fig7}
    if args.completion130:
        fig5 = figure5({"DeepRM (slowdown)": policies["DeepRM (trained at 130 %)"],
                        "DeepRM (completion)": load_policy(args.completion130)}, seeds, RESULTS)
        results["figure5"] = fig5.to_dict("records")
    (RESULTS / "results.json").write_text(json.dumps(results, indent=1, default=float) + "\n")
    table = fig4.pivot_table(index="load", columns="policy", values="slowdown", aggfunc="min")
    lines = ["| load | " + " | ".join(table.columns) + " |", "|---" * (len(table.columns) + 1) + "|"]
    lines += [f"| {load:g} | " + " | ".join(f"{v:.3f}" for v in row) + " |" for load, row in table.iterrows()]
    (RESULTS / "figure4.md").write_text(f"Average job slowdown, held-out jobsets (seeds 0-{args.seeds - 1}), M = 10, "
                                        f"code job sizes; Tetris*: its best knob of {KNOBS} at each load.\n\n"
                                        + "\n".join(lines) + "\n")
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    print(json.dumps({"figure6": fig6, "figure7": fig7}, indent=1))


if __name__ == "__main__":
    main()
