"""The ``cloudsim`` command line: replay a workload under one or more brokers.

This module is the one place where the core, the brokers (``agents``) and the
workloads (``traces``) meet.

    cloudsim replay                                  # built-in Alibaba-like workload
    cloudsim replay jobs.csv --format cloudsimpy --chunk-size 10 --chunks 0:100 \\
        --machines 5 --capacity cpu=64,memory=1,disk=1 --broker first-fit --tick 1 --json
    cloudsim compare deeprm --brokers sjf,packer,tetris-star --loads 0.1:1.9:0.2 --seeds 10 --out report/
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Iterator, Sequence

from cloudsim.simulation import Simulation
from cloudsim.specs import ClusterSpec, JobSpec, parse_capacity

DEFAULT_CAPACITY = "cpu=64,memory=1,disk=1"
_REPORTED = ("makespan", "avg_completion", "avg_slowdown", "avg_job_completion", "avg_job_slowdown")


def _parse_range(text: str, what: str) -> tuple[int, int | None]:
    """``"A:B"`` -> (A, B); ``"A:"`` -> (A, None); ``"K"`` -> (K, K+1)."""
    start, sep, stop = text.partition(":")
    try:
        first = int(start) if start else 0
        last = (int(stop) if stop else None) if sep else first + 1
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad {what} {text!r}: write A:B (A included, B excluded) or K") from None
    if first < 0 or (last is not None and last <= first):
        raise argparse.ArgumentTypeError(f"bad {what} {text!r}: need 0 <= A < B")
    return first, last


FORMATS = ("cloudsimpy", "alibaba-v2017", "alibaba-v2018")


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _parse_window(text: str) -> tuple[float, float]:
    start, sep, end = text.partition(":")
    try:
        window = (float(start), float(end))
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad --window {text!r}: write START:END in seconds") from None
    if not sep or window[1] <= window[0]:
        raise argparse.ArgumentTypeError(f"bad --window {text!r}: need START < END")
    return window


def _workload(args: argparse.Namespace):
    """(Workload, cluster, machine events in trace time) for the options; bad options end the command."""
    from traces import TraceFormatError

    try:
        return _load_workload(args)
    except (ValueError, FileNotFoundError, TraceFormatError) as err:
        raise SystemExit(f"cloudsim: {err}") from None


def _load_workload(args: argparse.Namespace):
    from traces import Workload, generate, load_alibaba_v2017, load_alibaba_v2018, load_cloudsimpy
    from traces import machines_v2017, machines_v2018

    if args.machine_table is not None and (args.format == "cloudsimpy" or args.trace is None):
        raise ValueError("--machine-table needs a TRACE with --format alibaba-v2017 (server_event.csv) or "
                         "alibaba-v2018 (machine_meta.csv)")
    if args.trace is None:
        jobs, cluster = generate(args.generator, args.synthetic_jobs, args.seed, args.load)
        source = {"generator": args.generator, "seed": args.seed}
        if args.generator != "alibaba-like":
            source["load"] = args.load
        if args.machines is not None or args.capacity is not None:  # the options override the paper's cluster
            capacity = parse_capacity(args.capacity) if args.capacity else dict(zip(cluster.resources,
                                                                                    cluster.capacities[0]))
            cluster = ClusterSpec.uniform(args.machines or cluster.machines, capacity)
        return Workload(jobs, source=source), cluster, ()
    if args.format == "cloudsimpy":
        workload = Workload(load_cloudsimpy(args.trace), source={"jobs": args.trace})
    else:
        load = load_alibaba_v2017 if args.format == "alibaba-v2017" else load_alibaba_v2018
        workload = load(args.trace, args.instances, status_policy=args.status_policy, window=args.window,
                        cache=args.cache)
    if args.machine_table is None:
        return workload, ClusterSpec.uniform(args.machines or 5, parse_capacity(args.capacity or DEFAULT_CAPACITY)), ()
    if args.format == "alibaba-v2017":
        table = machines_v2017(args.machine_table, softerror_downtime=args.softerror_downtime)
    else:
        table = machines_v2018(args.machine_table)
    return workload, table.cluster, table.events if args.machine_events else ()


def _episodes(args: argparse.Namespace, jobs: list[JobSpec]) -> Iterator[tuple[object, list[JobSpec], float]]:
    """(label, jobs, origin) for each episode the options ask for; origin is the trace time of t=0."""
    from traces import chunk_count, iter_chunks, job_range

    ordered = sorted(jobs, key=lambda j: j.submit_time)
    if args.jobs is not None:
        start, stop = args.jobs
        stop = len(ordered) if stop is None else stop
        yield f"{start}:{stop}", job_range(ordered, start, stop), ordered[start].submit_time
    elif args.chunk_size is not None:
        count = chunk_count(ordered, args.chunk_size)
        first, last = args.chunks if args.chunks is not None else (0, count)
        last = count if last is None else last
        if last > count:
            raise SystemExit(
                f"cloudsim: --chunks {first}:{last} asks for more chunks than the {count} that "
                f"{len(ordered)} jobs make with --chunk-size {args.chunk_size}"
            )
        for index, chunk in iter_chunks(ordered, args.chunk_size, range(first, last)):
            yield index, chunk, ordered[index * args.chunk_size].submit_time
    else:
        yield "all", job_range(ordered, 0, len(ordered)) if ordered else [], ordered[0].submit_time if ordered else 0.0


def _faults(args: argparse.Namespace, seed: int):
    """The random fault model the options ask for (seeded like the run), or None."""
    from cloudsim.faults import RandomFaults

    return None if args.mtbf is None else RandomFaults(args.mtbf, args.mttr, seed=seed)


def _simulate(args: argparse.Namespace, cluster: ClusterSpec, jobs: list[JobSpec], broker_name: str, seed: int,
              events=(), broker_options: dict | None = None, progress: bool = False):
    """One run under the options' trigger mode, failure policy and faults: (EpisodeResult, wall seconds)."""
    from agents import make_broker

    started = time.perf_counter()
    broker = make_broker(broker_name, seed=seed, **(broker_options or {}))
    result = Simulation(cluster, jobs, broker, tick=args.tick, machine_events=events, faults=_faults(args, seed),
                        on_failure=args.on_failure, progress=progress).run()
    return result, round(time.perf_counter() - started, 4)


def _run_episode(args: argparse.Namespace, cluster: ClusterSpec, jobs: list[JobSpec], broker_name: str, events,
                 broker_options: dict, progress: bool, out):
    result, wall = _simulate(args, cluster, jobs, broker_name, args.seed, events, broker_options, progress)
    if out is not None:
        result.to_parquet(out)
    return {**result.summary, "wall_s": wall}


def _broker_list(text: str) -> list[str]:
    from agents import BROKERS

    brokers = [b.strip() for b in text.split(",") if b.strip()]
    unknown = [b for b in brokers if b not in BROKERS]
    if unknown or not brokers:
        raise SystemExit(f"cloudsim: unknown broker(s) {unknown or text!r}; choose from {', '.join(BROKERS)}")
    return brokers


def _run(args: argparse.Namespace, brokers: list[str], broker_options: dict) -> tuple[list[dict], dict]:
    """Run every broker on every episode the options ask for; print JSON lines as they come with --json."""
    from traces.alibaba import shift_events

    workload, cluster, events = _workload(args)
    episodes = list(_episodes(args, workload.jobs))
    runs = [(label, chunk, origin, broker) for label, chunk, origin in episodes for broker in brokers]
    single = len(runs) == 1 and not args.json
    out = Path(args.out) if getattr(args, "out", None) else None

    def episode(label, chunk, origin, broker, progress: bool) -> tuple:
        """`_run_episode`'s arguments for one run."""
        where = None if out is None else out / f"episode-{str(label).replace(':', '-')}" / broker
        return (args, cluster, chunk, broker, shift_events(events, origin) if events else (),
                broker_options.get(broker, {}), progress, where)

    if args.workers > 1 and len(runs) > 1:
        pool = ProcessPoolExecutor(max_workers=args.workers)
        futures = [pool.submit(_run_episode, *episode(*run, progress=False)) for run in runs]
        results = (f.result() for f in futures)
    else:
        pool = None
        results = (_run_episode(*episode(*run, progress=single)) for run in runs)
    rows = []
    bar = None
    if not args.json and not single:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(runs), unit="episode", file=sys.stderr)
    try:
        for (label, chunk, origin, broker), summary in zip(runs, results):
            key = "chunk" if args.chunk_size is not None and args.jobs is None else "jobs_range"
            row = {key: label, **summary}
            rows.append(row)
            if args.json:
                print(json.dumps(_jsonable(row)), flush=True)
            if bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()
        if pool is not None:
            pool.shutdown(cancel_futures=True)

    def per_broker(field: str) -> dict:
        return {b: sum(r[field] for r in rows if r["broker"] == b) for b in brokers}

    total = {
        "summary": True,
        "source": workload.source,
        "episodes": len(episodes),
        "brokers": brokers,
        "jobs": sum(len(c) for _, c, _ in episodes),
        "tasks": sum(len(j.tasks) for _, c, _ in episodes for j in c),
        "instances": sum(j.instances for _, c, _ in episodes for j in c),
        "skipped": workload.skipped,
        "notes": workload.notes,
        "finished": per_broker("instances_finished"),
        "failed": per_broker("instances_failed"),
        "restarts": per_broker("instance_restarts"),
        "mean_makespan": {b: _mean([r["makespan"] for r in rows if r["broker"] == b]) for b in brokers},
        "wall_s": round(sum(r["wall_s"] for r in rows), 3),
    }
    if out is not None:
        import pandas as pd

        pd.DataFrame(rows).to_csv(out / "episodes.csv", index=False)
    return rows, total


def replay(args: argparse.Namespace) -> int:
    rows, total = _run(args, _broker_list(args.broker), {})
    if args.json:
        print(json.dumps(_jsonable(total)), flush=True)
    else:
        _print_table(rows, total)
    return 0


def bench(args: argparse.Namespace) -> int:
    import pandas as pd

    from cloudsim.compare import makespan_table, plot_makespan_differences

    brokers = _broker_list(args.brokers)
    candidate = args.candidate or ("deepjs" if "deepjs" in brokers else brokers[-1])
    if candidate not in brokers or len(brokers) < 2:
        raise SystemExit(f"cloudsim: --candidate {candidate!r} must be one of two or more --brokers {brokers}")
    if args.chunk_size is None:
        raise SystemExit("cloudsim: bench compares chunks: give --chunk-size (and --chunks)")
    options = {"deepjs": {"checkpoint": args.checkpoint}} if args.checkpoint else {}
    rows, total = _run(args, brokers, options)
    frame = pd.DataFrame(rows)
    baselines = [b for b in brokers if b != candidate]
    total["candidate"] = candidate
    total["comparison"] = makespan_table(frame, candidate, baselines)
    if args.plots:
        total["plots"] = [str(p) for p in plot_makespan_differences(frame, candidate, baselines, args.plots)]
    if args.json:
        print(json.dumps(_jsonable(total)), flush=True)
        return 0
    _print_table(rows, total)
    print(f"\n{candidate}'s makespan against each baseline (difference = baseline - {candidate}):")
    table = pd.DataFrame(total["comparison"]).T[["chunks", "lower", "equal", "higher", "mean_difference",
                                                 "std_difference"]]
    print(table.to_string(float_format=lambda v: f"{v:.2f}"))
    for path in total.get("plots", []):
        print(f"plot: {path}")
    return 0


def _compare_run(spec: dict) -> tuple[dict, object]:
    """One run of `cloudsim compare` (in a worker process): the row, and the machines'
    utilisation curves when ``spec["curve"]``. A generator's workload is made here."""
    args = spec["args"]
    if spec["jobs"] is None:
        args = argparse.Namespace(**{**vars(args), "load": spec["load"], "seed": spec["seed"]})
        workload, cluster, events = _load_workload(args)
        jobs = workload.jobs
    else:
        jobs, cluster, events = spec["jobs"], spec["cluster"], spec["events"]
    result, wall = _simulate(args, cluster, jobs, spec["broker"], spec["seed"], events)
    row = {"broker": spec["broker"], "load": spec["load"], "chunk": spec["chunk"], "seed": spec["seed"],
           **{k: v for k, v in result.summary.items() if k != "broker"}, "wall_s": wall}
    return row, (result.machine_utilisation() if spec["curve"] else None)


def _parse_loads(text: str) -> list[float]:
    """``"0.1,0.4,0.7"`` or ``"START:STOP:STEP"`` (STOP included) -> loads as fractions."""
    try:
        if ":" in text:
            start, stop, step = (float(v) for v in text.split(":"))
            count = int(math.floor((stop - start) / step + 1e-9)) + 1
            loads = [round(start + k * step, 10) for k in range(count)]
        else:
            loads = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        loads = []
    if not loads or not all(math.isfinite(v) and v > 0 for v in loads):
        raise argparse.ArgumentTypeError(
            f"bad --loads {text!r}: write fractions of capacity such as 0.1,0.4,0.7 or a range 0.1:1.9:0.2")
    return loads


def compare(args: argparse.Namespace) -> int:
    import pandas as pd
    from tqdm.auto import tqdm

    from cloudsim.compare import REPORTED, markdown_table, plot_broker_bars, plot_metric_vs_load
    from cloudsim.compare import plot_utilisation_curves, summarise
    from traces.alibaba import shift_events

    brokers = _broker_list(args.brokers)
    if args.seeds < 1:
        raise SystemExit(f"cloudsim: --seeds must be >= 1, got {args.seeds}")
    seeds = range(args.seed, args.seed + args.seeds)
    if args.trace is None:
        if args.loads and args.generator == "alibaba-like":
            raise SystemExit("cloudsim: --loads applies to the deeprm, poisson and rlsk generators, not alibaba-like")
        loads = args.loads or ([args.load] if args.generator != "alibaba-like" else [None])
        reference = min(loads, key=lambda v: abs(v - 0.7)) if loads[0] is not None else None
        specs = [{"jobs": None, "load": load, "chunk": None, "seed": seed, "broker": broker,
                  "curve": load == reference and seed == seeds[0]}
                 for load in loads for seed in seeds for broker in brokers]
        what = f"{args.generator}" + (f" at load {reference:g}" if reference is not None else "")
        first_run = what
        _, cluster, _ = _workload(argparse.Namespace(**{**vars(args), "load": loads[0] or 0.7}))
    else:
        if args.loads:
            raise SystemExit("cloudsim: --loads applies to generators; a trace runs as it is (use --chunks)")
        workload, cluster, events = _workload(args)
        episodes = list(_episodes(args, workload.jobs))
        specs = [{"jobs": jobs, "cluster": cluster, "events": shift_events(events, origin) if events else (),
                  "load": None, "chunk": label, "seed": seed, "broker": broker,
                  "curve": k == 0 and seed == seeds[0]}
                 for k, (label, jobs, origin) in enumerate(episodes) for seed in seeds for broker in brokers]
        labels = [label for label, _, _ in episodes]
        what = f"{Path(args.trace).name}, episode(s) {labels[0]}" + (f" to {labels[-1]}" if len(labels) > 1 else "")
        first_run = f"{Path(args.trace).name}, episode {labels[0]}"
    for spec in specs:
        spec["args"] = args
    rows, curves = [], {}
    pool = ProcessPoolExecutor(max_workers=args.workers) if args.workers > 1 and len(specs) > 1 else None
    results = (pool.map(_compare_run, specs, chunksize=max(1, len(specs) // (8 * args.workers)))
               if pool is not None else map(_compare_run, specs))
    try:
        with tqdm(total=len(specs), unit="run", file=sys.stderr, disable=None) as bar:
            for spec, (row, curve) in zip(specs, results):
                rows.append(row)
                if curve is not None:
                    curves[spec["broker"]] = curve
                if args.json:
                    print(json.dumps(_jsonable(row)), flush=True)
                bar.update()
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    runs = pd.DataFrame(rows)
    sweep = args.trace is None and runs["load"].nunique() > 1
    columns = list(REPORTED) + [f"utilisation_{r}" for r in cluster.resources]
    columns += ["imbalance_resources", "imbalance_machines"]
    if args.mtbf is not None or (runs["instance_restarts"].sum() + runs["instances_failed"].sum()) > 0:
        columns += ["instances_failed", "instance_restarts"]
    table = summarise(runs, ["load", "broker"] if sweep else ["broker"], columns)
    lost = runs["instances"] - runs["instances_finished"] - runs["instances_failed"]
    if (lost != 0).any():  # the simulation guarantees this; a report must never hide a loss
        raise SystemExit(f"cloudsim: {int(lost.abs().sum())} instance(s) unaccounted for in the runs")
    total = {"summary": True, "brokers": brokers, "runs": len(runs), "seeds": list(seeds),
             "loads": sorted(runs["load"].dropna().unique().tolist()),
             "chunks": runs["chunk"].dropna().unique().tolist(), "table": table.reset_index().to_dict("records"),
             "wall_s": round(float(runs["wall_s"].sum()), 3)}
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        runs.assign(chunk=runs["chunk"].astype("string")).to_parquet(out / "runs.parquet", index=False)
        import shlex

        from cloudsim import __version__

        (out / "summary.md").write_text(f"Made by `cloudsim {shlex.join(args.argv)}` (cloudsim {__version__}): "
                                        f"mean ± standard deviation over runs.\n\n{markdown_table(table)}")
        per_broker = len(runs) // len(brokers) // (runs["load"].nunique() if sweep else 1)
        plots = [plot_broker_bars(runs[runs["load"] == reference] if sweep else runs, out / "brokers.png",
                                  f"{what}: mean ± std over {per_broker} run(s) per broker")]
        if sweep:
            plots.append(plot_metric_vs_load(runs, out / "slowdown_vs_load.png"))
        if curves:
            plots.append(plot_utilisation_curves(curves, cluster.resources, out / "utilisation.png",
                                                 f"{first_run}, seed {seeds[0]}"))
        total["out"] = str(out)
        total["plots"] = [str(p) for p in plots]
    if args.json:
        print(json.dumps(_jsonable(total)), flush=True)
        return 0
    with pd.option_context("display.max_rows", 500, "display.width", 200):
        shown = table[["runs"] + [c for c in table.columns if c.endswith("_mean")]]
        print(shown.rename(columns=lambda c: c.removesuffix("_mean")).to_string(float_format=lambda v: f"{v:.3f}"))
    print(f"\n{len(runs)} run(s): {len(brokers)} broker(s) x {len(seeds)} seed(s)"
          + (f" x {runs['load'].nunique()} load(s)" if sweep else "")
          + ("" if args.trace is None else f" x {runs['chunk'].nunique()} episode(s)")
          + f"; {total['wall_s']:.1f} s simulating; every instance finished or failed")
    for path in total.get("plots", []):
        print(f"plot: {path}")
    return 0


def train(args: argparse.Namespace) -> int:
    import dataclasses

    from tqdm.auto import tqdm

    from agents.deepjs import DeepJSConfig, DeepJSTrainer
    from traces import chunk_count, iter_chunks

    try:
        hidden = tuple(int(h) for h in args.hidden.split(","))
    except ValueError:
        raise SystemExit(f"cloudsim: bad --hidden {args.hidden!r}: write layer sizes such as 3,9,6") from None
    workload, cluster, _ = _workload(args)
    ordered = sorted(workload.jobs, key=lambda j: j.submit_time)
    count = chunk_count(ordered, args.chunk_size)
    first, last = args.chunks if args.chunks is not None else (0, count)
    last = count if last is None else min(last, count)
    checkpoint = Path(args.checkpoint)
    if args.resume:
        if not checkpoint.is_file():
            raise SystemExit(f"cloudsim: --resume: no checkpoint at {checkpoint}")
        trainer = DeepJSTrainer.resume(checkpoint, workers=args.workers)
    else:
        config = DeepJSConfig(hidden=hidden, reward=args.reward, learning_rate=args.learning_rate,
                              iterations=args.iterations, trajectories=args.trajectories, tick=args.tick or 1.0,
                              normalize_advantage=not args.no_advantage_normalisation, seed=args.seed)
        trainer = DeepJSTrainer(config, cluster, workers=args.workers)
        trainer.fit_normaliser(ordered[first * args.chunk_size: last * args.chunk_size])
    todo = [k for k in range(first, last) if k not in trainer.chunks_done]
    print(f"training DeepJS on chunks {first}:{last} ({len(todo)} to go) of {args.chunk_size} jobs, "
          f"{trainer.config.iterations} x {trainer.config.trajectories} trajectories each, "
          f"{trainer.workers} worker(s); checkpoint {checkpoint}", file=sys.stderr)
    started = time.perf_counter()
    try:
        with tqdm(total=len(todo), unit="chunk", file=sys.stderr) as bar:
            for index, chunk in iter_chunks(ordered, args.chunk_size, todo):
                chunk_started = time.perf_counter()
                entry = trainer.train_chunk(index, chunk)
                trainer.save(checkpoint)
                entry = {**entry, "wall_s": round(time.perf_counter() - chunk_started, 2)}
                bar.write(json.dumps(entry))
                bar.update()
    finally:
        trainer.close()
    print(json.dumps({"summary": True, "checkpoint": str(checkpoint), "chunks": len(trainer.chunks_done),
                      "wall_s": round(time.perf_counter() - started, 1),
                      "config": _jsonable(dataclasses.asdict(trainer.config))}))
    return 0


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _jsonable(row: dict) -> dict:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}


def _print_table(rows: list[dict], total: dict) -> None:
    import pandas as pd

    frame = pd.DataFrame(rows)
    key = frame.columns[0]
    columns = [key, "broker", *_REPORTED, "jobs", "tasks", "instances", "wall_s"]
    with pd.option_context("display.max_rows", 200, "display.width", 160):
        print(frame[columns].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        if len(frame) > len(total["brokers"]):
            print()
            print(frame.groupby("broker", sort=False)[list(_REPORTED)].mean().to_string(float_format=lambda v: f"{v:.3f}"))
    print(
        f"\n{total['episodes']} episode(s) x {len(total['brokers'])} broker(s): {total['jobs']} jobs, "
        f"{total['tasks']} tasks, {total['instances']} instances per broker; "
        f"finished {total['finished']}, failed {total['failed']}, restarts {total['restarts']}; "
        f"{total['wall_s']:.2f} s simulating"
    )
    if total["skipped"]:
        print(f"skipped while loading (tasks, by reason): {total['skipped']}")


def _workload_options(p: argparse.ArgumentParser, *, tick: float | None, workers: int = 1) -> None:
    """The options that say what to run on: a trace or a generator, its slicing, the cluster."""
    from traces import GENERATORS

    p.add_argument("trace", nargs="?", metavar="WORKLOAD",
                   help="trace file, or a generator name (deeprm, poisson, rlsk, alibaba-like); default alibaba-like")
    p.add_argument("--format", default="cloudsimpy", choices=FORMATS, help="trace format (default: cloudsimpy)")
    p.add_argument("--instances", metavar="FILE", help="alibaba formats: batch_instance.csv for per-instance durations")
    p.add_argument("--status-policy", choices=("drop", "keep"), default="drop",
                   help="alibaba formats: drop tasks that did not terminate (counted), or keep them (default drop)")
    p.add_argument("--window", type=_parse_window, metavar="START:END",
                   help="alibaba formats: only jobs submitted in [START, END) seconds of trace time")
    p.add_argument("--machine-table", metavar="FILE",
                   help="take the cluster from the trace: server_event.csv (v2017) or machine_meta.csv (v2018)")
    p.add_argument("--machine-events", action="store_true",
                   help="with --machine-table: replay the machines' errors and status changes")
    p.add_argument("--softerror-downtime", type=float, metavar="SECONDS",
                   help="v2017 machine table: a soft error takes a machine down this long (default: until a later add)")
    p.add_argument("--on-failure", choices=("requeue", "fail"), default="requeue",
                   help="instances on a machine that fails: re-queue them (default) or count them failed")
    p.add_argument("--mtbf", type=_positive, metavar="T",
                   help="random machine failures: mean up time between failures per machine (seeded by --seed)")
    p.add_argument("--mttr", type=_positive, metavar="T", help="with --mtbf: mean time to repair (default mtbf / 10)")
    p.add_argument("--cache", metavar="DIR", help="Parquet cache of converted traces (default $CLOUDSIM_CACHE or ~/.cache/cloudsim)")
    p.add_argument("--chunk-size", type=int, metavar="N", help="sliding chunks of N jobs")
    p.add_argument("--chunks", type=lambda s: _parse_range(s, "--chunks"), metavar="A:B",
                   help="chunk indices A..B-1 (or one chunk K); default all chunks")
    p.add_argument("--jobs", type=lambda s: _parse_range(s, "--jobs"), metavar="A:B",
                   help="jobs A..B-1 (submit order) as one episode instead of chunks")
    p.add_argument("--machines", type=int, help="number of identical machines (default 5, or the generator's)")
    p.add_argument("--capacity", help=f"capacity per machine (default {DEFAULT_CAPACITY}, or the generator's)")
    p.add_argument("--tick", type=float, default=tick,
                   help="fixed scheduler tick (1 for CloudSimPy-compatible replays); "
                        + ("default: event-driven" if tick is None else f"default {tick:g}"))
    p.add_argument("--seed", type=int, default=0, help="seed for random brokers and the generators (default 0)")
    p.add_argument("--generator", choices=GENERATORS, default="alibaba-like",
                   help="workload generator when no TRACE is given (default alibaba-like)")
    p.add_argument("--load", type=float, default=0.7,
                   help="target load of the deeprm, poisson and rlsk generators, a fraction of capacity (default 0.7)")
    p.add_argument("--synthetic-jobs", type=int, metavar="N",
                   help="jobs the generator makes (default: alibaba-like 100, deeprm 50, poisson 5..50, rlsk 200)")
    p.add_argument("--workers", type=int, default=workers, help=f"processes to run episodes in (default {workers})")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cloudsim", description="Datacenter job-scheduling simulator.")
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser(
        "replay",
        help="replay a workload under one or more brokers",
        description="Replay a trace (or, without TRACE, a generated workload) and print metrics.",
    )
    _workload_options(p, tick=None)
    p.add_argument("--broker", default="first-fit", help="broker name, or several separated by commas (default first-fit)")
    p.add_argument("--json", action="store_true", help="one JSON object per episode and broker, then a summary line")
    p.add_argument("--out", metavar="DIR", help="write each episode's results as Parquet under DIR")
    p.set_defaults(handler=replay)

    p = commands.add_parser(
        "bench",
        help="run several brokers on the same chunks and compare makespans (DeepJS Table 2)",
        description="Run every broker on every chunk and compare the candidate broker's makespans with the others'.",
    )
    _workload_options(p, tick=1.0)
    p.add_argument("--brokers", default="first-fit,tetris,deepjs",
                   help="brokers, comma-separated (default first-fit,tetris,deepjs)")
    p.add_argument("--candidate", help="the broker compared with the others (default: deepjs if listed, else the last)")
    p.add_argument("--checkpoint", metavar="PATH", help="DeepJS weights (default: the checkpoint shipped with cloudsim)")
    p.add_argument("--plots", metavar="DIR", help="write makespan-difference plots (PNG) into DIR")
    p.add_argument("--json", action="store_true", help="one JSON object per chunk and broker, then a summary line")
    p.set_defaults(handler=bench)

    p = commands.add_parser(
        "compare",
        help="run many brokers on the same workload (loads, chunks, seeds) and report tables and plots",
        description="Run every broker on the same workload: a trace (its chunks or a job range) or a generator "
                    "(deeprm, poisson, rlsk, alibaba-like) at one or more loads, for several seeds, in parallel "
                    "processes. Prints mean metrics per broker (and load); --out writes runs.parquet, "
                    "summary.md and PNG plots.",
    )
    _workload_options(p, tick=None, workers=os.cpu_count() or 1)
    p.add_argument("--brokers", default="first-fit,best-fit,tetris,random,fcfs,sjf,hrrn,drf,packer,tetris-star,"
                   "least-load,round-robin", help="brokers, comma-separated (default: every heuristic)")
    p.add_argument("--loads", type=_parse_loads, metavar="LOADS",
                   help="generator loads as fractions of capacity: 0.1,0.4,0.7 or START:STOP:STEP (default --load)")
    p.add_argument("--seeds", type=int, default=1,
                   help="seeds per load or chunk: --seed, --seed+1, ... (workloads, random brokers, faults; default 1)")
    p.add_argument("--json", action="store_true", help="one JSON object per run, then a summary line")
    p.add_argument("--out", metavar="DIR", help="write runs.parquet, summary.md and the plots into DIR")
    p.set_defaults(handler=compare)

    p = commands.add_parser(
        "train",
        help="train a learned broker",
        description="Train DeepJS by REINFORCE on sliding chunks (Algorithm 2), saving a checkpoint after each chunk.",
    )
    p.add_argument("agent", choices=["deepjs"], help="the agent to train")
    _workload_options(p, tick=1.0, workers=os.cpu_count() or 1)  # rollouts on every core
    p.add_argument("--checkpoint", metavar="PATH", default="deepjs.pt", help="where to save (default deepjs.pt)")
    p.add_argument("--resume", action="store_true", help="continue the training saved in --checkpoint")
    p.add_argument("--iterations", type=int, default=10, help="iterations per chunk (default 10)")
    p.add_argument("--trajectories", type=int, default=12, help="trajectories per iteration (default 12)")
    p.add_argument("--reward", choices=["makespan", "slowdown", "completion"], default="makespan",
                   help="reward (default makespan: -1 per tick)")
    p.add_argument("--hidden", default="3,9,6", help="hidden layer sizes (default 3,9,6, Table 1)")
    p.add_argument("--learning-rate", type=float, default=0.001, help="Adam learning rate (default 0.001)")
    p.add_argument("--no-advantage-normalisation", action="store_true",
                   help="use the raw advantages q_t - b_t (default: scaled to unit variance per iteration)")
    p.set_defaults(handler=train, chunk_size=10)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from traces import GENERATORS

    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for reports to say how they were made
    if args.chunks is not None and args.chunk_size is None:
        raise SystemExit("cloudsim: --chunks needs --chunk-size")
    if args.jobs is not None and args.chunk_size is not None:
        raise SystemExit("cloudsim: give either --jobs or --chunk-size, not both")
    if args.machine_events and args.machine_table is None:
        raise SystemExit("cloudsim: --machine-events needs --machine-table")
    if args.mttr is not None and args.mtbf is None:
        raise SystemExit("cloudsim: --mttr needs --mtbf")
    if args.mtbf is not None and args.mttr is None:
        args.mttr = args.mtbf / 10
    if args.trace in GENERATORS and not Path(args.trace).exists():  # `cloudsim compare deeprm`
        args.generator, args.trace = args.trace, None
    try:
        return args.handler(args)
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
