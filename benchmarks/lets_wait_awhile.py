"""Wiesner et al., "Let's Wait Awhile" (Middleware 2021), through cloudsim: Scenario I, a 30-minute job a day at
01:00, shifted within +- w (0 to 8 h in half hours) to the half-hour of lowest forecast intensity; Scenario II,
3,387 ML jobs of 4-89.5 h run before their deadlines where the forecast is lowest: started once (non-interruptible),
or in the lowest half-hours, suspended in between (interruptible).

    python benchmarks/lets_wait_awhile.py [--scenario 1|2|both] [--workers 2] [--out benchmarks/results/carbon]

Each setting is one simulation of one machine (cpu 1, drawing 1 kW while a job runs, nothing otherwise) whose
broker is `agents.heuristics.carbon.CarbonShift` (a reservation at the chosen half-hour), metered on the true
signal by `cloudsim.engine.energy.meter`. The figure is the study's measure: the mean over the days' jobs of the
intensity of the energy each used, gCO2e/kWh. Two forecasts: perfect, and the study's error (Gaussian noise of
standard deviation 5 % of the signal's mean, seeds 0-9, averaged). Two signal starts: the study's (2020-01-01
00:00: 1 January's job is not run once its window opens before midnight, and the mean still divides by 365, as the
study's simulator does) and 2019-12-20 (the data's first row: every day's job runs). Writes
scenario_one.{csv,md,json,png} into --out.

Scenario II (`traces.carbon.ml_workload`): the jobs run at once on one machine with room for all (1 kW each
while it runs); the baseline starts each as it arrives, the shifted runs start each where the forecast mean over
its run is lowest before its deadline ("next workday" or "semi-weekly", `traces.carbon.DEADLINE_RULES`), or, as
interruptible jobs, run in the half-hours of lowest forecast before it that add up to the job
(`CarbonShift(interruptible=True)`, which suspends a job between them; resuming costs nothing, as in the study),
with forecast errors 0, 5 and 10 % (seeds 0-9 averaged). Writes scenario_two.{csv,md,json,png}.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from benchmark_common import RESULTS, code_version

WINDOWS_H = tuple(np.arange(0, 8.5, 0.5).tolist())
SEEDS = tuple(range(10))
ERROR = 0.05
STARTS = {"2020-01-01": dt.datetime(2020, 1, 1), "2019-12-20": dt.datetime(2019, 12, 20)}
DAYS = 365
JOB_KWH = 0.5  # 1 kW for 30 minutes


def setting(args: tuple[str, str, float]) -> dict:
    """One region, signal start and window: the figure with a perfect forecast and with each seed's error."""
    from agents.heuristics.carbon import CarbonShift
    from cloudsim import ClusterSpec, simulate
    from cloudsim.engine.energy import LinearPower, meter
    from traces.carbon import periodic_jobs, study_signal

    region, start, hours = args
    signal = study_signal(region, STARTS[start])
    window = hours * 3600.0
    jobs = periodic_jobs(signal, window)
    cluster = ClusterSpec(("cpu",), ((1.0,),))

    def figure(forecast) -> float:
        result = simulate(cluster, jobs, CarbonShift(window=2 * window), carbon_forecast=forecast)
        return meter(result, LinearPower(0, 1000), signal).carbon_kg * 1000 / (JOB_KWH * DAYS)

    noisy = [figure(signal.forecast(ERROR, seed)) for seed in SEEDS]
    return {"region": region, "signal_from": start, "window_h": hours, "jobs": len(jobs), "perfect": figure(signal),
            "error_5pct": float(np.mean(noisy)), "error_5pct_sd": float(np.std(noisy, ddof=1))}


ERRORS = (0.0, 0.05, 0.10)
RULES = ("next-workday", "semi-weekly")
STRATEGIES = ("non-interruptible", "interruptible")


def scenario_two_setting(args: tuple[str, str | None, str, float, int]) -> dict:
    """One region, deadline rule (None: the baseline), strategy, forecast error and seed: the run's emissions."""
    from agents.heuristics.carbon import CarbonShift
    from cloudsim import ClusterSpec, simulate
    from cloudsim.engine.energy import LinearPower, meter
    from traces.carbon import ml_workload, study_signal

    region, rule, strategy, error, seed = args
    signal = study_signal(region)
    jobs = ml_workload(signal, rule)
    cluster = ClusterSpec(("cpu",), ((float(len(jobs)),),))  # room for every job at once
    broker = CarbonShift(window=None, interruptible=strategy == "interruptible")
    result = simulate(cluster, jobs, broker, carbon_forecast=signal.forecast(error, seed))
    report = meter(result, LinearPower(0, 1000.0 * len(jobs)), signal)
    return {"region": region, "rule": rule or "baseline", "strategy": strategy, "error": error, "seed": seed,
            "carbon_kg": report.carbon_kg, "energy_kwh": report.energy_kwh,
            "deadline_misses": result.summary.get("deadline_misses", 0),
            "suspensions": result.summary.get("instance_suspensions", 0)}


def scenario_two(options) -> None:
    import pandas as pd

    from traces.carbon import REGIONS

    todo = [(region, None, STRATEGIES[0], 0.0, 0) for region in REGIONS]
    todo += [(region, rule, strategy, error, seed) for region in REGIONS for rule in RULES for strategy in STRATEGIES
             for error in ERRORS for seed in (SEEDS if error else (0,))]
    with ProcessPoolExecutor(options.workers) as pool:
        rows = list(tqdm(pool.map(scenario_two_setting, todo), total=len(todo), desc="Scenario II", unit="run"))
    runs = pd.DataFrame(rows)
    runs.to_csv(options.out / "scenario_two.csv", index=False)
    baseline = runs[runs.rule == "baseline"].set_index("region").carbon_kg
    shifted = runs[runs.rule != "baseline"].groupby(["region", "rule", "strategy", "error"], sort=False).agg(
        carbon_kg=("carbon_kg", "mean"), carbon_sd=("carbon_kg", "std"), misses=("deadline_misses", "max"),
        suspensions=("suspensions", "mean"))
    shifted["saved_pct"] = 100 * (1 - shifted.carbon_kg / baseline.reindex(shifted.index.get_level_values(0)).values)
    lines = ["# Let's Wait Awhile, Scenario II through cloudsim", "",
             f"`python benchmarks/lets_wait_awhile.py --scenario 2` ({code_version()}): 3,387 ML jobs of 2020 run "
             "before their deadlines where the forecast is lowest: started once where the forecast mean over the "
             "run is lowest (non-interruptible), or in the lowest half-hours, suspended in between "
             "(interruptible); emissions against the baseline (every job as it arrives). Forecast error: mean over "
             "seeds 0-9.", "",
             "| region | baseline (t CO2e) | rule | strategy | error | shifted (t CO2e) | saved | deadline misses | "
             "suspensions |", "|---|---|---|---|---|---|---|---|---|"]
    for (region, rule, strategy, error), row in shifted.iterrows():
        lines.append(f"| {REGIONS[region][0]} | {baseline[region] / 1000:.2f} | {rule} | {strategy} | {error:.0%} | "
                     f"{row.carbon_kg / 1000:.2f} | {row.saved_pct:.2f} % | {int(row.misses)} | "
                     f"{row.suspensions:,.0f} |")
    (options.out / "scenario_two.md").write_text("\n".join(lines) + "\n")
    (options.out / "scenario_two.json").write_text(json.dumps(
        {"code": code_version(), "rows": rows}, indent=1) + "\n")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(REGIONS), figsize=(12, 3.6), sharey=True)
    width = 0.2
    bars = [(rule, strategy) for rule in RULES for strategy in STRATEGIES]
    for ax, region in zip(axes, REGIONS):
        for k, (rule, strategy) in enumerate(bars):
            part = shifted.loc[(region, rule, strategy)]
            ax.bar(np.arange(len(ERRORS)) + (k - 1.5) * width, part.saved_pct, width, label=f"{rule}, {strategy}")
        ax.set_xticks(range(len(ERRORS)), [f"{e:.0%} error" for e in ERRORS])
        ax.set_title(REGIONS[region][0])
        ax.grid(axis="y", alpha=0.3)
    finish(figure, axes, "emissions saved against the baseline (%)",
           "Scenario II: ML jobs shifted before their deadlines", options.out / "scenario_two")
    power_week(options.out / "scenario_two_week.png")


def power_week(path: Path) -> None:
    """Germany's power with every job as it arrives, shifted to the semi-weekly deadlines and interrupted before
    them, over a week of March 2020, with the grid's intensity: where the shifted work went."""
    from agents.heuristics.carbon import CarbonShift
    from cloudsim import ClusterSpec, simulate
    from cloudsim.engine.energy import LinearPower, meter
    from cloudsim.run.plots import plot_power_and_intensity
    from traces.carbon import ml_workload, study_signal

    signal = study_signal("de")
    power = {}
    for label, rule, interruptible in (("as they arrive", None, False),
                                       ("shifted (semi-weekly deadlines)", "semi-weekly", False),
                                       ("interrupted (semi-weekly deadlines)", "semi-weekly", True)):
        jobs = ml_workload(signal, rule)
        result = simulate(ClusterSpec(("cpu",), ((float(len(jobs)),),)), jobs,
                          CarbonShift(window=None, interruptible=interruptible), carbon_forecast=signal)
        power[label] = meter(result, LinearPower(0, 1000.0 * len(jobs)), signal).power
    first = (dt.datetime(2020, 3, 2) - signal.origin).total_seconds()  # Monday 2 March 2020
    plot_power_and_intensity(power, signal, path, first, first + 7 * 86400.0,
                             "Scenario II, Germany, the week of 2 March 2020: power of the ML jobs and the grid")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", choices=("1", "2", "both"), default="both", help="which scenario (default both)")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--out", type=Path, default=RESULTS / "carbon", help="folder for the results")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    if options.scenario in ("1", "both"):
        scenario_one(options)
    if options.scenario in ("2", "both"):
        scenario_two(options)


def scenario_one(options) -> None:
    import pandas as pd

    from traces.carbon import REGIONS

    todo = [(region, start, hours) for region in REGIONS for start in STARTS for hours in WINDOWS_H]
    with ProcessPoolExecutor(options.workers) as pool:
        rows = list(pool.map(setting, todo))
    table = pd.DataFrame(rows)
    options.out.mkdir(parents=True, exist_ok=True)
    table.to_csv(options.out / "scenario_one.csv", index=False)
    study = table[table.signal_from == "2020-01-01"]
    wide = study.pivot(index="window_h", columns="region", values=["perfect", "error_5pct"])
    everyday = table[table.signal_from == "2019-12-20"].pivot(index="window_h", columns="region", values="perfect")
    lines = ["# Let's Wait Awhile, Scenario I through cloudsim", "",
             f"`python benchmarks/lets_wait_awhile.py` ({code_version()}): the mean carbon intensity (gCO2e/kWh) "
             "of a 30-minute job a day at 01:00 shifted within +- w; perfect forecast, and the mean over seeds 0-9 "
             "of a 5 % forecast error. Signal from 2020-01-01 00:00 (the study's convention).", "",
             "| w (h) | " + " | ".join(f"{REGIONS[r][0]} perfect | {REGIONS[r][0]} 5 %" for r in REGIONS) + " |",
             "|---|" + "---|---|" * len(REGIONS)]
    for hours, row in wide.iterrows():
        lines.append(f"| {hours:g} | " + " | ".join(f"{row[('perfect', r)]:.2f} | {row[('error_5pct', r)]:.2f}"
                                                     for r in REGIONS) + " |")
    lines += ["", "With the signal from 2019-12-20, where every day's job runs (perfect forecast):", "",
              "| w (h) | " + " | ".join(REGIONS[r][0] for r in REGIONS) + " |", "|---|" + "---|" * len(REGIONS)]
    for hours, row in everyday.iterrows():
        lines.append(f"| {hours:g} | " + " | ".join(f"{row[r]:.2f}" for r in REGIONS) + " |")
    (options.out / "scenario_one.md").write_text("\n".join(lines) + "\n")
    (options.out / "scenario_one.json").write_text(json.dumps(
        {"code": code_version(), "rows": rows}, indent=1) + "\n")

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, len(REGIONS), figsize=(12, 3.6), sharex=True)
    for ax, region in zip(axes, REGIONS):
        part = study[study.region == region]
        ax.plot(part.window_h, part.perfect, marker="o", markersize=3, label="perfect forecast")
        ax.errorbar(part.window_h, part.error_5pct, yerr=part.error_5pct_sd, marker="s", markersize=3, capsize=2,
                    label="5 % error (10 seeds)")
        ax.set_title(REGIONS[region][0])
        ax.set_xlabel("shifting window +- w (hours)")
        ax.grid(alpha=0.3)
    finish(figure, axes, "mean intensity (gCO2e/kWh)",
           "Scenario I: a 30-minute job a day at 01:00, shifted within +- w", options.out / "scenario_one")


def finish(figure, axes, ylabel: str, title: str, stem: Path) -> None:
    """Label, title and save a scenario's figure as STEM.png, and print its table (STEM.md)."""
    axes[0].set_ylabel(ylabel)
    axes[0].legend(fontsize=8)
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(stem.with_suffix(".png"), dpi=120)
    print(stem.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
