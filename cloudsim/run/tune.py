"""`cloudsim tune deepk8s`: a hyper-parameter search (Optuna) whose trials are trainings scored on validation seeds.

A trial trains a Deepk8s PPO policy from a DAgger policy's actor with settings
Optuna's TPE sampler proposes (`DEEPK8S_SPACE`), then scores it: the mean
over validation sequences (seeds 100-199 by default) of each sequence's
average weighted turnaround, lower is better. Training draws its sequences from
`cloudsim.engine.envs.TRAINING_SEEDS` (1,000 up) and the held-out results use seeds 200-399
(`benchmarks/claims.py`) and 0-19 (docs/papers/deepk8s.md), so none meets a validation sequence.
A hundred sequences, not twenty: a PPO checkpoint 11.7 % below SJF on seeds 100-119 was 1.8 % below
on 100-199 (docs/papers/deepk8s.md).

Trials run through the runner, ``workers`` at a time (Optuna's ask and tell), in
local processes or on a Ray cluster. Each finished trial is written to
``DIR/trials/N.json`` beside its training folder ``DIR/trials/N/``; the same
command resumes a search (its finished trials are told to a new study, and the
sampler is seeded by the search's seed and their count), so an interrupted
search loses only the trials that were running. ``DIR/search.md``,
``DIR/trials.csv`` and ``DIR/best.json`` are rewritten after every batch; they name the best
policy relative to ``DIR`` and a shipped checkpoint relative to the installation.

    tune(TuneConfig(out="search", trials=20))
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path


from cloudsim.run.config import ConfigError, TuneConfig
from cloudsim.run.output import portable, strict_json, write_text_atomically
from cloudsim.engine.runner import Runner

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TuneResult", "tune"]


@dataclass
class TuneResult:
    """The finished trials (one row each, best first), the best one's settings and where the search is."""

    trials: pd.DataFrame
    best: dict
    ran: int
    out: Path


def _distributions(space: dict) -> dict:
    """Optuna's distributions of a space like `DEEPK8S_SPACE`."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    made = {}
    for name, (kind, *bounds) in space.items():
        if kind in ("log", "float"):
            made[name] = FloatDistribution(bounds[0], bounds[1], log=kind == "log")
        elif kind == "int":
            made[name] = IntDistribution(bounds[0], bounds[1], step=bounds[2])
        else:
            made[name] = CategoricalDistribution(list(bounds[0]))
    return made


def run_trial(item: dict) -> dict:
    """Train one trial's policy (in its own folder) and score it on the validation sequences."""
    from agents import make_broker
    from agents.deepk8s import load_policy
    from cloudsim import simulate
    from cloudsim.run.train import Deepk8sTrainConfig, train
    from cloudsim.engine.envs import deepk8s_cluster
    from traces import deepk8s_workload

    started = time.perf_counter()
    folder = Path(item["folder"])
    shutil.rmtree(folder, ignore_errors=True)  # what an interrupted run of this trial left
    # The network's shape (layers, window, wait) is the starting policy's: its actor is copied in.
    config = dataclasses.replace(load_policy(item["init"]).config, **item["base"], **item["params"], algo="ppo",
                                 init=item["init"], tasks=item["tasks"], seed=item["seed"])
    policy = train(Deepk8sTrainConfig.of(config, out=str(folder), progress=False, save_every=config.iterations,
                                         device=item["device"], threads=item["threads"]))["policy"]
    broker = make_broker("deepk8s", checkpoint=str(policy))
    scores = [simulate(deepk8s_cluster(), deepk8s_workload(seed, config.tasks), broker).summary["avg_job_slowdown"]
              for seed in range(*item["seeds"])]
    return {"number": item["number"], "params": item["params"], "value": float(sum(scores) / len(scores)),
            "seeds": list(item["seeds"]), "tasks": item["tasks"], **item["made_with"], "policy": str(policy),
            "wall_s": round(time.perf_counter() - started, 3)}


def _open_folder(config: TuneConfig) -> Path:
    """The search folder, made (afresh with --overwrite); what it holds was checked with the config
    (`TuneConfig.finished_trials`)."""
    out = Path(config.out)
    if out.exists() and config.overwrite:
        shutil.rmtree(out)
    (out / "trials").mkdir(parents=True, exist_ok=True)
    return out


def _check_init(config: TuneConfig) -> None:
    """The policy every trial starts from must be a Deepk8s checkpoint (refused naming --init)."""
    from agents.deepk8s import load_policy
    from agents.kit import CheckpointError

    try:
        load_policy(config.init_path, "dagger")
    except CheckpointError as error:
        raise ConfigError("--init", config.init_path, str(error)) from None


def tune(config: TuneConfig) -> TuneResult:
    """Run the trials not run yet (through the runner, ``workers`` at a time), then write the report."""
    try:
        import optuna  # an optional extra, imported only to tune
    except ImportError:
        raise RuntimeError("cloudsim tune needs Optuna: pip install -e '.[tune]'") from None

    _check_init(config)  # before the folder is made: a refused search leaves nothing
    done = config.finished_trials()  # checked when the config was made; read before --overwrite empties the folder
    out = _open_folder(config)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    space = _distributions(config.space)
    study = optuna.create_study(direction="minimize",
                                sampler=optuna.samplers.TPESampler(seed=config.seed + len(done)))
    for trial in done:  # a resumed search: the sampler learns from what was found
        study.add_trial(optuna.trial.create_trial(params=trial["params"], distributions=space, value=trial["value"]))
    runner, ran = config.runner, 0
    try:
        with Runner(runner.executor, runner.workers, runner.address) as pool:
            while len(done) < config.trials:
                batch = [study.ask(fixed_distributions=space)
                         for _ in range(min(pool.workers, config.trials - len(done)))]
                items = [{"number": len(done) + k, "params": trial.params, "base": config.base,
                          "init": config.init_path, "tasks": config.tasks, "seeds": config.seeds,
                          "seed": config.seed, "device": config.device, "threads": config.threads,
                          "made_with": {"init": config.init_text, "seed": config.seed},
                          "folder": str(out / "trials" / str(len(done) + k))}
                         for k, trial in enumerate(batch)]
                for trial, result in zip(batch, pool.map(run_trial, items, desc="trials", unit="trial")):
                    study.tell(trial, result["value"])
                    write_text_atomically(out / "trials" / f"{result['number']}.json", strict_json(result) + "\n")
                    done.append(result)
                    ran += 1
                _write_report(out, config, done)
    except KeyboardInterrupt as stop:
        stop.add_note(f"{len(done)} of {config.trials} trial(s) are kept in {out / 'trials'}; run the same command "
                      f"again to run the others")
        raise
    table = _write_report(out, config, done)
    return TuneResult(table, min(done, key=lambda t: t["value"]), ran, out)


def _write_report(out: Path, config: TuneConfig, done: list[dict]) -> pd.DataFrame:
    """trials.csv (one row per trial, best first), best.json (its full agent config) and search.md."""
    import pandas as pd
    table = pd.DataFrame([{"trial": t["number"], "validation": t["value"], **t["params"], "wall_s": t["wall_s"]}
                          for t in done]).sort_values(["validation", "trial"]).reset_index(drop=True)
    write_text_atomically(out / "trials.csv", table.to_csv(index=False))
    best = min(done, key=lambda t: t["value"])
    agent = json.loads((Path(best["policy"]).parent / "config.json").read_text())  # what the trial trained
    # The report names files as a reader elsewhere finds them: a trial's inside this folder, the shipped
    # checkpoints inside the installation, not by this machine's absolute paths.
    policy = Path(best["policy"]).resolve().relative_to(out.resolve()).as_posix()
    agent["init"] = portable(agent["init"], {}) if agent.get("init") else agent.get("init")
    write_text_atomically(out / "best.json", strict_json({"trial": best["number"], "validation": best["value"],
                                                          "policy": policy, "agent": agent}) + "\n")
    start, stop = config.seeds
    lines = ["# Deepk8s PPO search", "",
             f"{len(done)} trial(s) (--trials {config.trials}); each trains PPO from the actor of "
             f"{portable(config.init_path, {})} and is scored by the mean weighted turnaround over validation seeds "
             f"{start}-{stop - 1} ({config.tasks} tasks each; lower is better). Sampler: Optuna's TPE, seed "
             f"{config.seed}.", "",
             f"Best: trial {best['number']}, validation {best['value']:.4f}, policy {policy} (in this folder).", "",
             "| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in row) + " |"
              for row in table.itertuples(index=False)]
    write_text_atomically(out / "search.md", "\n".join(lines) + "\n")
    return table
