"""`compare_deeprm`: `cloudsim compare deeprm --env deeprm`, every broker in DeepRM's own environment.

Each seed is one jobset (`jobsets_at_load(arrivals, seed, 1, ...)`: seeds below
1000 are never trained on), each load sets the arrival rate, and every broker runs
every (load, seed) jobset to its end (all jobs done), the seeds of one
(broker, load) in one lockstep batch. Tetris* runs once per ``--knobs`` value.
"""

from __future__ import annotations

import shlex
import time
import warnings
from typing import Callable, Sequence

import numpy as np

from cloudsim.version import __version__
from cloudsim.engine.envs.deeprm import DeepRMBatch, jobsets_at_load
from cloudsim.run.comparison import CompareResult, markdown_table, plot_broker_bars, plot_metric_vs_load, summarise
from cloudsim.run.config import ConfigError, DeepRMCompareConfig
from cloudsim.run.output import ResultFolder
from cloudsim.run.resolve import RunWarning, broker_plans

__all__ = ["compare_deeprm", "DEEPRM_REPORTED"]

DEEPRM_REPORTED = ("avg_job_slowdown", "avg_job_completion", "total_reward", "end_time", "jobs", "dropped",
                   "not_allocated")


def _policies(config: DeepRMCompareConfig) -> list[tuple[str, float | None, Callable[[], Callable]]]:
    """(broker name, knob, factory) per row kind; tetris-star once per knob."""
    from agents import DEEPRM_TETRIS_STAR_KNOB, make_deeprm_broker

    rows = []
    for plan in broker_plans(config):
        name = plan.name
        if name == "tetris-star":
            for knob in config.knobs or (DEEPRM_TETRIS_STAR_KNOB,):
                rows.append((name, knob, lambda knob=knob: make_deeprm_broker("tetris-star", knob=knob)))
        else:
            rows.append((name, None, lambda plan=plan: make_deeprm_broker(plan.name, seed=config.workload.seed,
                                                                           **dict(plan.options))))
    return rows


def run_jobsets(policy: Callable, params, lengths: np.ndarray, sizes: np.ndarray,
                arrivals: np.ndarray | None = None) -> tuple[DeepRMBatch, np.ndarray]:
    """Run one episode per jobset with ``policy`` to its end; return the finished batch and each total reward."""
    batch = DeepRMBatch(params, lengths, sizes, arrivals)
    total = np.zeros(batch.B)
    while not batch.done.all():
        reward, _ = batch.step(policy(batch))
        total += reward
    return batch, total


def compare_deeprm(config: DeepRMCompareConfig, argv: Sequence[str] = (), on_row: Callable[[dict], None] | None = None
                   ) -> CompareResult:
    """Every broker on every (load, seed) jobset of DeepRM's environment; one row per (broker, knob, load, seed)."""
    import pandas as pd
    policies = [(name, knob, factory()) for name, knob, factory in _policies(config)]  # checkpoints checked first
    checkpoints = dict(config.chosen_brokers.checkpoint)
    for name, _, policy in policies:  # a learned policy refuses another environment before any run
        check = getattr(policy, "check_params", None)
        if check is not None:
            try:
                check(config.deeprm_params())
            except ValueError as err:
                from agents.deeprm import shipped_checkpoint

                source = checkpoints.get(name) or shipped_checkpoint(agent=name)
                raise ConfigError("--sizes" if config.sizes else "--slots" if config.slots else "--env", (
                    config.sizes or config.slots or "deeprm"), f"{source}: {err} (--sizes code or paper and "
                    f"--slots M set the environment's images; or give a checkpoint trained for these with "
                    f"--checkpoint {name}=PATH)") from None
    seeds = list(config.seed_list)
    rows = []
    with ResultFolder.optional(config.report.out, config.report.overwrite) as folder:
        params = config.deeprm_params()
        for load in config.load_list:
            drawn = [jobsets_at_load(config.deeprm_arrivals, seed, 1, params, load) for seed in seeds]
            jobsets = [None if part[0] is None else np.concatenate(part) for part in zip(*drawn)]
            for name, knob, policy in policies:
                started = time.perf_counter()
                batch, totals = run_jobsets(policy, params, *jobsets)
                wall = (time.perf_counter() - started) / len(seeds)
                for b, seed in enumerate(seeds):
                    summary = batch.summary(b)
                    row = {"broker": name if knob is None else f"tetris-star({knob:g})", "load": load, "seed": seed,
                           "knob": knob, "arrivals": config.deeprm_arrivals, "sizes": params.mode,
                           "slots": params.slots,
                           "avg_job_slowdown": summary["avg_job_slowdown"],
                           "avg_job_completion": summary["avg_job_completion"],
                           "total_reward": float(totals[b]), "end_time": summary["end_time"],
                           "jobs": summary["jobs"], "dropped": summary["dropped"],
                           "not_allocated": summary["not_allocated"], "truncated": summary["truncated"],
                           "wall_s": round(wall, 4)}
                    rows.append(row)
                    if on_row is not None:
                        on_row(row)
        runs = pd.DataFrame(rows)
        if runs["truncated"].any():  # a policy that keeps choosing void in an unchanging state
            stuck = runs[runs["truncated"]].groupby("broker")["seed"].count()
            warnings.warn(f"episodes reached the time cap ({config.deeprm_params().max_time} steps) with jobs never "
                          f"allocated, which the averages leave out: {stuck.to_dict()}; see the not_allocated column",
                          RunWarning, stacklevel=2)
        sweep = runs["load"].nunique() > 1
        table = summarise(runs, ["load", "broker"] if sweep else ["broker"], DEEPRM_REPORTED)
        total = {"summary": True, "env": "deeprm", "brokers": list(dict.fromkeys(runs["broker"])),
                 "runs": len(runs), "seeds": seeds, "loads": sorted(runs["load"].unique().tolist()),
                 "arrivals": config.deeprm_arrivals, "sizes": runs["sizes"].iloc[0],
                 "slots": int(runs["slots"].iloc[0]),
                 "dropped": int(runs["dropped"].sum()), "table": table.reset_index().to_dict("records"),
                 "wall_s": round(float((runs["wall_s"]).sum()), 3)}
        if folder is not None:
            out = folder.staging
            runs.to_parquet(out / "runs.parquet", index=False)
            (out / "summary.md").write_text(f"Made by `cloudsim {shlex.join(argv)}` (cloudsim {__version__}): "
                                            f"mean ± standard deviation over jobsets.\n\n{markdown_table(table)}")
            plots = [plot_broker_bars(runs, out / "brokers.png", f"DeepRM's environment: mean ± std over "
                                      f"{len(seeds)} jobset(s) per broker and load",
                                      metrics=("avg_job_slowdown", "avg_job_completion", "total_reward"))]
            if sweep:
                plots.append(plot_metric_vs_load(runs, out / "slowdown_vs_load.png"))
            final = folder.commit()
            total["out"] = str(final)
            total["plots"] = [str(final / p.name) for p in plots]
    return CompareResult(runs, table, total, {})
