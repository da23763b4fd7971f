"""Carbon-aware shifting at cluster scale: Alibaba v2017 and v2018 chunks at offered load 0.8 on a sampled cluster,
carbon-shift against first-fit, paired chunk by chunk.

    python benchmarks/carbon_cluster.py [--chunks 0:30] [--machines 10] [--workers 2] [--out benchmarks/results/carbon]

Each trace's chunks (10 jobs each, arrivals scaled to offered load 0.8 on ``--machines`` machines sampled from its
machine table) run under first-fit, carbon-shift started once before each job's deadline (``window=None``, a
reservation) and carbon-shift interruptible (suspended outside the lowest half-hours before the deadline), each
job with a 24-hour slack (`JobSpec.with_slack`), every machine drawing the shipped power model
(`cloudsim.engine.energy.DEFAULT_POWER`), metered on each region's 2020 signal (the study's data) until the
latest deadline, so that the three brokers of a chunk are metered over the same time. Chunk k's run time 0 is
2020-01-01 plus 12 k days, so the chunks meet the grid across the year; the forecast is perfect. Every broker
runs through the run layer (`cloudsim.run.episode.run_one`), as `cloudsim compare` would run it with ``--power
default --carbon FILE --start DATE --slack 86400``.

The measures, each paired with first-fit's on the same chunk and region (`cloudsim.run.paired`: the mean
difference and its 95 % interval, and as a percentage of first-fit's mean): carbon_kg, energy_kwh,
deadline_misses and avg_job_slowdown. Writes carbon_cluster.{csv,md,json,png} into --out (the figure: one chunk's
power under each broker against the grid's intensity).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from benchmark_common import RESULTS, code_version

TRACES = {"v2017": ("alibaba/v2017/batch_task.csv", "alibaba-v2017", "alibaba/v2017/server_event.csv"),
          "v2018": ("alibaba/v2018/selected_DAGs.csv", "alibaba-v2018", "alibaba/v2018/machine_meta.csv")}
BROKERS = {"first-fit": ("first-fit", ()), "carbon-shift": ("carbon-shift", (("carbon-shift", "window", None),)),
           "carbon-shift interruptible": ("carbon-shift", (("carbon-shift", "window", None),
                                                           ("carbon-shift", "interruptible", True)))}
MEASURES = ("carbon_kg", "energy_kwh", "deadline_misses", "avg_job_slowdown")
PAIRED = (*MEASURES, "work_carbon_kg")
SLACK = 86400.0
LOAD = 0.8
DAYS_APART = 12


def configs(trace: str, region: str, chunks: tuple[int, int], machines: int) -> dict:
    """The compare config of each broker on ``trace``'s chunks in ``region``."""
    from cloudsim.run.config import CompareConfig
    from cloudsim.run.config.sections import BrokerConfig, ClusterConfig, SimulationConfig, WorkloadConfig
    from traces.carbon import REGIONS
    from traces.data import data_folder

    data = data_folder()
    path, fmt, table = TRACES[trace]
    workload = WorkloadConfig(source=str(data / path), format=fmt, machine_table=str(data / table), chunk_size=10,
                              chunks=chunks,
                              load=LOAD)
    simulation = SimulationConfig(power="default", carbon=str(data / "carbon" / REGIONS[region][1]),
                                  start="2020-01-01", slack=SLACK)
    return {label: CompareConfig(workload=workload, cluster=ClusterConfig(machines=machines), simulation=simulation,
                                 brokers=BrokerConfig((name,), options=options))
            for label, (name, options) in BROKERS.items()}


def specs(trace: str, region: str, chunks: tuple[int, int], machines: int) -> list[tuple[dict, object]]:
    """One run per chunk and broker: (its row's keys, its `RunSpec`), chunk k starting DAYS_APART x k days in."""
    from cloudsim.run.episode import RunSpec
    from cloudsim.run.resolve import resolve

    out = []
    for label, config in configs(trace, region, chunks, machines).items():
        run = resolve(config)
        (plan,) = run.brokers
        for episode in run.episodes:
            k = int(episode.label)  # (the chunk index)
            start = dt.datetime(2020, 1, 1) + dt.timedelta(days=DAYS_APART * (k - chunks[0]))
            simulation = dataclasses.replace(run.simulation, start=start.isoformat(sep=" "))
            spec = RunSpec(plan, config.workload.seed, simulation, label=episode.label, load=episode.offered_load,
                           jobs=episode.jobs, place=run.place, events=episode.events)
            out.append(({"trace": trace, "region": region, "chunk": k, "broker": label, "start": str(start.date())},
                        spec))
    return out


def idle_carbon_kg(spec) -> float:
    """What the chunk's machines emit idle over its metering (until its latest deadline): the same for every broker,
    so that carbon_kg less it is the carbon of the work, which shifting moves."""
    idle = float(spec.simulation.power_model.cpu.watts(np.zeros(1))[0])
    horizon = max(job.with_slack(SLACK).deadline for job in spec.jobs)  # (the makespans end before it here)
    return len(spec.place.cluster.capacities) * idle * spec.simulation.grid_signal().integral(0.0, horizon) / 3.6e9


def run(item: tuple[dict, object]) -> dict:
    from cloudsim.run.episode import run_one

    keys, spec = item
    summary = run_one(spec).summary
    return {**keys, **{m: summary.get(m, 0) for m in MEASURES}, "work_carbon_kg": summary["carbon_kg"]
            - idle_carbon_kg(spec), "makespan": summary["makespan"],
            "suspensions": summary.get("instance_suspensions", 0), "instances": summary["instances"],
            "instances_finished": summary["instances_finished"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", default="0:30", help="chunks A:B of each trace (default 0:30)")
    parser.add_argument("--machines", type=int, default=10, help="machines sampled from each machine table")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--out", type=Path, default=RESULTS / "carbon", help="folder for the results")
    options = parser.parse_args()
    first, last = (int(v) for v in options.chunks.split(":"))
    import pandas as pd

    from cloudsim.run.paired import paired
    from traces.carbon import REGIONS

    todo = [item for trace in TRACES for region in REGIONS
            for item in specs(trace, region, (first, last), options.machines)]
    with ProcessPoolExecutor(options.workers) as pool:
        rows = list(tqdm(pool.map(run, todo, chunksize=4), total=len(todo), desc="runs", unit="run"))
    runs = pd.DataFrame(rows)
    unfinished = runs[runs.instances_finished != runs.instances]
    if len(unfinished):
        raise SystemExit(f"runs left instances unfinished:\n{unfinished}")
    options.out.mkdir(parents=True, exist_ok=True)
    runs.to_csv(options.out / "carbon_cluster.csv", index=False)
    table = []
    for (trace, region), part in runs.groupby(["trace", "region"], sort=False):
        wide = part.pivot(index="chunk", columns="broker")
        for label in list(BROKERS)[1:]:
            row = {"trace": trace, "region": region, "broker": label, "chunks": len(wide)}
            for measure in PAIRED:
                p = paired(wide[measure][label], wide[measure]["first-fit"])
                row.update({f"{measure}_first_fit": float(wide[measure]["first-fit"].mean()),
                            f"{measure}_diff": p.difference, f"{measure}_low": p.low, f"{measure}_high": p.high,
                            f"{measure}_pct": p.difference_pct, f"{measure}_low_pct": p.low_pct,
                            f"{measure}_high_pct": p.high_pct, f"{measure}_wins": p.wins})
            row["suspensions"] = float(wide["suspensions"][label].mean())
            table.append(row)
    paired_rows = pd.DataFrame(table)
    lines = ["# Carbon-aware shifting at cluster scale", "",
             f"`python benchmarks/carbon_cluster.py --chunks {options.chunks} --machines {options.machines}` "
             f"({code_version()}): Alibaba chunks of 10 jobs at offered load {LOAD} on {options.machines} sampled "
             f"machines, a 24-hour slack per job, the shipped power model, each region's 2020 signal (chunk k from "
             f"2020-01-01 + {DAYS_APART} k days), metered until the latest deadline. Paired with first-fit on the "
             "same chunks: the mean difference, its 95 % interval, and the chunks where the broker is better.", "",
             "| trace | region | broker | carbon (first-fit, kg) | carbon change | the work's carbon (first-fit, kg) "
             "| its change | energy change | deadline misses (per chunk) | job slowdown | better on carbon |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for _, row in paired_rows.iterrows():
        lines.append(
            f"| {row.trace} | {REGIONS[row.region][0]} | {row.broker} | {row.carbon_kg_first_fit:.3f} | "
            f"{row.carbon_kg_pct:+.1f} % [{row.carbon_kg_low_pct:+.1f}, {row.carbon_kg_high_pct:+.1f}] | "
            f"{row.work_carbon_kg_first_fit:.3f} | {row.work_carbon_kg_pct:+.1f} % [{row.work_carbon_kg_low_pct:+.1f}, "
            f"{row.work_carbon_kg_high_pct:+.1f}] | "
            f"{row.energy_kwh_pct:+.2f} % [{row.energy_kwh_low_pct:+.2f}, {row.energy_kwh_high_pct:+.2f}] | "
            f"{row.deadline_misses_diff:+.2f} [{row.deadline_misses_low:+.2f}, {row.deadline_misses_high:+.2f}] | "
            f"{row.avg_job_slowdown_diff:+.1f} [{row.avg_job_slowdown_low:+.1f}, {row.avg_job_slowdown_high:+.1f}] | "
            f"{row.carbon_kg_wins}/{row.chunks} |")
    (options.out / "carbon_cluster.md").write_text("\n".join(lines) + "\n")
    (options.out / "carbon_cluster.json").write_text(json.dumps(
        {"code": code_version(), "paired": table}, indent=1, default=float) + "\n")
    print("\n".join(lines))
    power_day(options.out / "carbon_cluster.png", options.machines)


def power_day(path: Path, machines: int) -> None:
    """v2017's first chunk in Germany: the cluster's power under each broker against the grid's intensity."""
    from cloudsim.engine.energy import meter
    from cloudsim.run.episode import run_one
    from cloudsim.run.plots import plot_power_and_intensity

    power, signal = {}, None
    for keys, spec in specs("v2017", "de", (0, 1), machines):
        spec = dataclasses.replace(spec, keep="result")
        result = run_one(spec).result
        simulation = spec.simulation
        signal = simulation.grid_signal()
        horizon = max([result.makespan, *(job.with_slack(SLACK).deadline for job in spec.jobs)])
        power[keys["broker"]] = meter(result, simulation.power_model, signal, horizon=horizon).power
    plot_power_and_intensity(power, signal, path, 0.0, 2 * 86400.0,
                             "v2017 chunk 0, Germany, from 2020-01-01: the cluster's power and the grid")


if __name__ == "__main__":
    main()
