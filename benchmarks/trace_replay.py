"""Replays of the real Alibaba v2017 and v2018 samples on their real clusters, with first-fit and Tetris.

The unit tests check the loaders on small fixtures; this benchmark shows what a user
gets from the real data end to end: the v2017 batch_task sample on the 1,313 machines
of server_event.csv, and the v2018 selected_DAGs.csv sample (DAG jobs) on the 4,034
machines (96 cpu, memory 1) of machine_meta.csv. For each trace and broker it replays a
slice of jobs in submit order (rebased so the first arrives at t=0, `traces.job_range`),
event-driven (tick=None), and reports the episode's summary numbers, wall time and peak
memory, the loader's skipped rows by reason, and a utilisation plot. The slice is replayed
once more with the trace's machine events (shifted to the slice's origin) to show what
they change (instances finished / failed / restarted).

Each replay runs in a fresh Python process (peak RSS is that process's VmHWM); all of
them share one private Parquet cache, filled once (also in a child process) before the runs.

    python benchmarks/trace_replay.py                  # default slice: jobs 0:300 of each trace (about 5 minutes)
    python benchmarks/trace_replay.py --jobs 50 --brokers first-fit

Writes benchmarks/results/trace_replay.{md,json}, replay_v2017_utilisation.png and
replay_v2018_utilisation.png.

It calls the loaders and the engine directly, not `cloudsim.run`, because it measures the whole trace's loading
(seconds and peak memory of the process) and draws each run's machine events and utilisation over time, which
a replay's rows do not hold.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmark_common import code_version

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "alibaba"

# The slice the benchmark was asked for, and the one it runs by default. Tetris makes one
# decision per instance and each costs about 0.3-0.6 ms on 1,313-4,034 machines; jobs 0:500
# hold 432,568 (v2017) and 655,207 (v2018) instances, about 9 minutes of Tetris alone on an
# idle 2-core machine, too close to the ten-minute budget on a shared one. The default is
# therefore smaller, equally for every broker (the output says so); at 300 jobs the v2017
# slice already queues (job slowdown above 1), so the brokers still differ.
REQUESTED_JOBS = 500
DEFAULT_JOBS = 300

TRACES = {
    "v2017": {"loader": "load_alibaba_v2017", "tasks": "v2017/batch_task.csv",
              "machines": "machines_v2017", "machine_file": "v2017/server_event.csv"},
    "v2018": {"loader": "load_alibaba_v2018", "tasks": "v2018/selected_DAGs.csv",
              "machines": "machines_v2018", "machine_file": "v2018/machine_meta.csv"},
}

CHILD = r"""
import json, os, sys, time
started = time.perf_counter()
spec = json.loads(sys.argv[1])
def peak_rss_mb():  # this process's own high-water mark (ru_maxrss carries the parent's over fork)
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) / 1024 for l in status if l.startswith("VmHWM:"))
import traces.alibaba as ta
from traces import job_range
from agents import make_broker
from cloudsim.engine.simulation import simulate
workload = getattr(ta, spec["loader"])(spec["tasks"], cache=spec["cache"])
machines = getattr(ta, spec["machines"])(spec["machine_file"])
ordered = sorted(workload.jobs, key=lambda j: j.submit_time)
stop = min(spec["start"] + spec["jobs"], len(ordered))
jobs = job_range(ordered, spec["start"], stop)
origin = ordered[spec["start"]].submit_time
events = ta.shift_events(machines.events, origin) if spec["machine_events"] else []
load_s = time.perf_counter() - started
result = simulate(machines.cluster, jobs, make_broker(spec["broker"]), tick=None, machine_events=events)
util = result.utilisation()
util.to_parquet(spec["utilisation"], index=False)
makespan = result.summary["makespan"]
row = {
    **result.summary,
    "origin": origin, "load_s": load_s, "process_s": time.perf_counter() - started, "peak_rss_mb": peak_rss_mb(),
    "machines": machines.cluster.machines, "skipped": workload.skipped, "notes": workload.notes,
    "workload_jobs": len(workload.jobs),
    "events_total": len(events),
    "events_at_zero": sum(e.time == 0 for e in events),
    "events_in_run": sum(e.time <= makespan for e in events),
    "events_in_run_by_state": {s: sum(e.time <= makespan and e.state == s for e in events)
                               for s in ("up", "down", "failed")},
}
print(json.dumps(row), flush=True)
# Leave without interpreter shutdown: up to commit 4919adc, a process that had read CSV through
# traces.rawcsv.stream_batches (machines_v2017 / machines_v2018 do) sometimes aborted at exit
# ("terminate called without an active exception"), after all its work.
os._exit(0)
"""

# Fills the shared cache and counts the instances of the requested slice, in a child process
# for the same reason.
PREPARE = r"""
import json, os, sys
spec = json.loads(sys.argv[1])
import traces.alibaba as ta
workload = getattr(ta, spec["loader"])(spec["tasks"], cache=spec["cache"])
ordered = sorted(workload.jobs, key=lambda j: j.submit_time)
row = {"jobs_in_trace": len(ordered),
       "instances_requested_slice": sum(t.instances for j in ordered[:spec["requested"]] for t in j.tasks)}
print(json.dumps(row), flush=True)
os._exit(0)
"""


def progress(message: str) -> None:
    print(f"[trace_replay {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run_child(spec: dict, code: str = CHILD) -> dict:
    env = {**os.environ, "CLOUDSIM_CACHE": spec["cache"], "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, json.dumps(spec)], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"child failed for {spec}:\n{out.stderr[-3000:]}")
    row = json.loads(out.stdout.splitlines()[-1])
    row["outer_s"] = time.perf_counter() - started
    return row


def prepare(trace: str, data: Path, cache: Path) -> dict:
    """Fill the cache once and count what the requested slice holds (in a child process)."""
    paths = TRACES[trace]
    spec = {"loader": paths["loader"], "tasks": str(data / paths["tasks"]), "cache": str(cache),
            "requested": REQUESTED_JOBS}
    row = run_child(spec, PREPARE)
    row.pop("outer_s")
    return row


def replay_cases(args, cache: Path, work: Path) -> list[dict]:
    cases = [(t, b, False) for t in args.traces for b in args.brokers]
    cases += [(t, b, True) for t in args.traces for b in args.events_brokers]
    rows = []
    for n, (trace, broker, events) in enumerate(cases, start=1):
        paths = TRACES[trace]
        label = f"{trace} {broker}{' + machine events' if events else ''}"
        runs = []
        for k in range(args.repeats):
            progress(f"case {n}/{len(cases)}: {label}, run {k + 1}/{args.repeats}")
            spec = {"trace": trace, "broker": broker, "machine_events": events, "loader": paths["loader"],
                    "machines": paths["machines"], "tasks": str(args.data / paths["tasks"]),
                    "machine_file": str(args.data / paths["machine_file"]), "cache": str(cache),
                    "start": args.start, "jobs": args.jobs,
                    "utilisation": str(work / f"util-{trace}-{broker}-{int(events)}-{k}.parquet")}
            runs.append(run_child(spec))
        first = runs[0]
        row = {
            "trace": trace, "broker": broker, "machine_events": events, "runs": len(runs),
            "slice": f"{args.start}:{args.start + first['jobs']}", "origin": first["origin"],
            "machines": first["machines"],
            **{k: first[k] for k in ("jobs", "tasks", "instances", "makespan", "avg_completion", "avg_slowdown",
                                     "avg_job_completion", "avg_job_slowdown", "instances_finished",
                                     "instances_failed", "instance_restarts", "decisions")},
            "utilisation_cpu": first["utilisation_cpu"], "utilisation_memory": first["utilisation_memory"],
            "sim_s": round(statistics.median(r["sim_wall_s"] for r in runs), 2),
            "process_s": round(statistics.median(r["outer_s"] for r in runs), 2),
            "load_s": round(statistics.median(r["load_s"] for r in runs), 2),
            "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs)),
            "ms_per_decision": round(statistics.median(r["sim_wall_s"] for r in runs) / first["decisions"] * 1e3, 3),
            "skipped": first["skipped"], "notes": first["notes"], "workload_jobs": first["workload_jobs"],
            "events_total": first["events_total"], "events_at_zero": first["events_at_zero"],
            "events_in_run": first["events_in_run"], "events_in_run_by_state": first["events_in_run_by_state"],
            "utilisation_file": str(work / f"util-{trace}-{broker}-{int(events)}-0.parquet"),
        }
        rows.append(row)
        progress(f"case {n}/{len(cases)}: {label}: makespan {row['makespan']:.0f}, {row['instances']:,} instances, "
                 f"{row['decisions']:,} decisions, simulation {row['sim_s']} s, process {row['process_s']} s, "
                 f"peak RSS {row['peak_rss_mb']} MB")
    return rows


def plot_utilisation(trace: str, rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    mine = [r for r in rows if r["trace"] == trace and not r["machine_events"]]
    if not mine:
        return
    fig, axes = plt.subplots(2, 1, figsize=(10, 6.5), sharex=True)
    longest = max(r["makespan"] for r in mine)
    scale, unit = (3600.0, "h") if longest > 3 * 3600 else (60.0, "min")
    styles = ["-", "--", ":", "-."]
    for i, r in enumerate(mine):
        util = pd.read_parquet(r["utilisation_file"])
        for ax, resource in zip(axes, ("cpu", "memory")):
            ax.step(util.time / scale, util[resource] * 100, where="post", ls=styles[i % len(styles)], lw=1.1,
                    label=f"{r['broker']} (mean {r[f'utilisation_{resource}'] * 100:.2f}%, "
                          f"makespan {r['makespan'] / scale:.1f} {unit})")
    first = mine[0]
    for ax, resource in zip(axes, ("cpu", "memory")):
        ax.set_ylabel(f"{resource} in use (% of cluster)")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="upper right")
        ax.set_title(f"{resource} utilisation")
    axes[-1].set_xlabel(f"simulated time since the slice's first submit ({unit})")
    fig.suptitle(f"Alibaba {trace}: jobs {first['slice']} on {first['machines']:,} machines, event-driven, "
                 f"no machine events")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def fmt(value, digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "nan"
    return f"{value:,.{digits}f}"


def write_markdown(result: dict, path: Path) -> None:
    rows = result["replays"]
    lines = ["# Trace replay: real Alibaba samples on their real clusters", "",
             f"Command: `{result['command']}`", "", f"Code: {result['code']}.", "",
             f"Machine: {result['machine']}.", "",
             result["slice_note"], "",
             "## Replays (event-driven)", "",
             "| trace | broker | machine events | machines | jobs | tasks | instances | makespan s | "
             "avg completion s | "
             "avg slowdown | avg job completion s | avg job slowdown | mean cpu util | mean memory util | decisions | "
             "simulation s | ms/decision | process s | peak RSS MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['trace']} | {r['broker']} | {'yes' if r['machine_events'] else 'no'} | {r['machines']:,} | "
            f"{r['jobs']} | {r['tasks']:,} | {r['instances']:,} | {fmt(r['makespan'], 0)} | "
            f"{fmt(r['avg_completion'])} | {fmt(r['avg_slowdown'], 3)} | {fmt(r['avg_job_completion'])} | "
            f"{fmt(r['avg_job_slowdown'], 3)} | {r['utilisation_cpu'] * 100:.3f}% | "
            f"{r['utilisation_memory'] * 100:.3f}% | {r['decisions']:,} | {r['sim_s']} | {r['ms_per_decision']} | "
            f"{r['process_s']} | {r['peak_rss_mb']} |")
    lines += ["",
              "Completion and slowdown as defined in `cloudsim/engine/metrics.py` (task: last finish - first start, "
              "over its duration; job: finish - submit, over its critical path). Utilisation: mean over [0, makespan] "
              "of used / total capacity. simulation s: `simulate()` alone (median over runs); process s: the whole "
              "fresh process (imports, loading from the warm cache, simulation, writing the utilisation table).", "",
              "## With machine events", "",
              "| trace | broker | events replayed | of which at t=0 | within the run (down / failed / up) | "
              "instances finished | failed | restarts | makespan s (without events) |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if not r["machine_events"]:
            continue
        base = next((b for b in rows if b["trace"] == r["trace"] and b["broker"] == r["broker"]
                     and not b["machine_events"]), None)
        s = r["events_in_run_by_state"]
        lines.append(
            f"| {r['trace']} | {r['broker']} | {r['events_total']} | {r['events_at_zero']} | "
            f"{r['events_in_run']} ({s['down']} / {s['failed']} / {s['up']}) | {r['instances_finished']:,} | "
            f"{r['instances_failed']:,} | {r['instance_restarts']:,} | {fmt(r['makespan'], 0)} "
            f"({fmt(base['makespan'], 0) if base else '-'}) |")
    lines += ["", result["events_note"], "", "## Rows the loaders skipped (whole trace, by reason)", "",
              "| trace | jobs kept (whole trace) | skipped tasks by reason | notes |", "|---|---|---|---|"]
    for trace in dict.fromkeys(r["trace"] for r in rows):
        r = next(x for x in rows if x["trace"] == trace)
        skipped = ", ".join(f"{k} {v:,}" for k, v in sorted(r["skipped"].items(), key=lambda kv: -kv[1]))
        notes = ", ".join(f"{k} {v:,}" for k, v in r["notes"].items()) or "-"
        lines.append(f"| {trace} | {r['workload_jobs']:,} | {skipped} (total {sum(r['skipped'].values()):,}) "
                     f"| {notes} |")
    lines += ["", "Plots: `benchmarks/results/replay_v2017_utilisation.png`, "
              "`benchmarks/results/replay_v2018_utilisation.png`.", "",
              f"Wall time of the whole benchmark: {result['wall_s']} s.", ""]
    path.write_text("\n".join(lines))


def slice_note(args, prepared: dict, rows: list[dict]) -> str:
    if args.jobs >= REQUESTED_JOBS:
        return f"Slice: jobs {args.start}:{args.start + args.jobs} of each trace in submit order."
    parts = []
    for trace, info in prepared.items():
        tetris = [r for r in rows if r["trace"] == trace and r["broker"] == "tetris" and not r["machine_events"]]
        seconds = info["instances_requested_slice"] * tetris[0]["ms_per_decision"] / 1e3 if tetris else 0.0
        need = f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"
        cost = f"; at the {tetris[0]['ms_per_decision']} ms per decision measured here, tetris alone would need " \
               f"about {need}" if tetris else ""
        parts.append(f"{trace}: jobs 0:{REQUESTED_JOBS} hold {info['instances_requested_slice']:,} instances{cost}")
    return (f"**Slice reduced:** jobs {args.start}:{args.start + args.jobs} of each trace in submit order (rebased to "
            f"t=0), for every broker alike, instead of the requested first {REQUESTED_JOBS} jobs, to keep the run "
            f"under about ten minutes on this machine. Tetris makes one decision per instance. "
            + "; ".join(parts) + ". Pass `--jobs 500` to run the full request.")


def events_note(rows: list[dict]) -> str:
    parts = []
    for r in rows:
        if r["machine_events"]:
            parts.append(f"{r['trace']}: {r['events_total']} event(s) after shifting to the slice's origin "
                         f"(trace time {r['origin']:,.0f} s), {r['events_in_run']} of them before the makespan")
    return ("Machine events come from the machine table (`machines_v2017`: softerror = down, harderror = failed, a "
            "later add = up; `machines_v2018`: status other than USING = down) and are shifted with "
            "`traces.alibaba.shift_events(table.events, origin)`, origin = the slice's first submit time in trace "
            "time. A down machine takes no new work and its instances run on, so only failed events end instances "
            "(re-queued: restarts). " + "; ".join(parts) + ".")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with v2017/ and v2018/ samples")
    parser.add_argument("--traces", default="v2017,v2018", help="comma-separated: v2017, v2018")
    parser.add_argument("--start", type=int, default=0, help="first job of the slice (submit order)")
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS,
                        help=f"jobs in the slice (default {DEFAULT_JOBS}; {REQUESTED_JOBS} takes far longer)")
    parser.add_argument("--brokers", default="first-fit,tetris", help="brokers replayed without machine events")
    parser.add_argument("--events-brokers", default="first-fit",
                        help="brokers replayed again with machine events ('' for none)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each case (median times reported)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep the Parquet cache and utilisation tables here (default: a temporary directory)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the results go")
    args = parser.parse_args()
    args.traces = [t.strip() for t in args.traces.split(",") if t.strip()]
    args.brokers = [b.strip() for b in args.brokers.split(",") if b.strip()]
    args.events_brokers = [b.strip() for b in args.events_brokers.split(",") if b.strip()]
    unknown = [t for t in args.traces if t not in TRACES]
    if unknown:
        sys.exit(f"unknown trace(s) {unknown}; choose from {', '.join(TRACES)}")
    for trace in args.traces:
        for key in ("tasks", "machine_file"):
            if not (args.data / TRACES[trace][key]).is_file():
                sys.exit(f"sample not found: {args.data / TRACES[trace][key]} (pass --data DIR)")
    started = time.perf_counter()
    code_at_start = code_version()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.jobs < REQUESTED_JOBS:
        progress(f"slice reduced: jobs {args.start}:{args.start + args.jobs} for every broker instead of "
                 f"0:{REQUESTED_JOBS} (tetris at 500 jobs would take about ten minutes on its own)")
    with tempfile.TemporaryDirectory(prefix="bench-replay-") as temporary:
        work = Path(args.cache) if args.cache is not None else Path(temporary)
        cache = work / "cache"
        cache.mkdir(parents=True, exist_ok=True)
        prepared = {}
        for trace in args.traces:
            progress(f"loading {trace} once to fill the cache")
            prepared[trace] = prepare(trace, args.data, cache)
        rows = replay_cases(args, cache, work)
        for trace in args.traces:
            plot_utilisation(trace, rows, args.out / f"replay_{trace}_utilisation.png")
    for r in rows:
        r.pop("utilisation_file")
    result = {
        "command": "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]),
        "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
        "code": code_at_start if code_version() == code_at_start else
        f"{code_at_start} at the start, {code_version()} at the end (the tree changed during the run)",
        "slice_note": slice_note(args, prepared, rows),
        "events_note": events_note(rows),
        "prepared": prepared,
        "replays": rows,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    (args.out / "trace_replay.json").write_text(json.dumps(result, indent=1) + "\n")
    write_markdown(result, args.out / "trace_replay.md")
    progress(f"done in {result['wall_s']} s; wrote {args.out / 'trace_replay.md'}")


if __name__ == "__main__":
    main()
