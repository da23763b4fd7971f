"""The engine's compiled path side by side with another checkout's engine, and with its own Python path.

Each case runs in a fresh Python process per variant, the variants alternating within every repeat so
that all see the same machine load; the report gives each variant's median and the ratios of medians.
The variants:

* ``base``: the checkout given by ``--against`` (the commit the compiled-engine issue measures against,
  e8a013e), as it runs by default;
* ``python``: this checkout with ``Simulation(compiled=False)`` (the broker's own ``decide``, the plan
  checked and applied by the engine);
* ``compiled``: this checkout as it runs by default (the compiled path where it applies).

The cases (alibaba-like jobs of seed 0 on v2018's 4,034 machines of cpu 96 and memory 1, event-driven;
CloudSimPy's whole jobs.csv on 50 machines through ``cloudsim replay``; first-fit but where a case names
its broker):

* ``first-fit-1000`` and ``<broker>-1000`` (Tetris, Packer, Tetris*, FCFS, SJF, HRRN, DRF, best-fit, least-load,
  round-robin, random, EASY, DeepJS with its shipped checkpoint): decisions per second of simulation (results left
  out), 1,000 jobs;
* ``first-fit-10000``, ``tetris-10000``: seconds of simulation, 10,000 jobs;
* ``deeprm-v2018``, ``deeprm-plus-v2018``: the DeepRM brokers with their shipped checkpoints (which take the
  Python path: they reserve starts ahead and wait a time step at a time), through ``cloudsim replay``, on jobs
  50:60 of v2018's DAG sample at an offered load of 1.1 on 2 machines drawn from its machine table (as the
  leaderboard's busiest v2018 chunk): seconds of simulation;
* ``first-fit-openb``, ``least-load-openb``, ``random-openb``, ``gpu-best-fit-openb``, ``gpu-packing-openb``,
  ``fgd-openb``, ``gpu-random-openb`` (seed 0; FGD's target workload the pods'): the GPU trace's default pod list
  (openb, 8,152 pods of shares and whole GPUs, some asking for a GPU model) replayed at its creation times on its
  1,213 GPU nodes through `cloudsim.Simulation` (no sampling of the GPUs, which a command-line run adds),
  decisions per second of simulation;
* ``stream-100000``: first-fit streamed (``stream_to``, jobs from `traces.iter_alibaba_like`, in blocks of
  1,024 where it makes them, as a streamed replay reads it), 100,000 jobs: the whole process, seconds and
  peak memory;
* ``cloudsimpy-whole``: the whole ``cloudsim replay`` process, seconds and peak memory (base and compiled
  only: the command line has no switch for the Python path);
* ``easy-cloudsimpy-0:200``: EASY on the same jobs, machines and tick, where the queue is long and reservations
  are many: simulation time (base and compiled);
* ``cloudsimpy-0:200``: jobs 0:200 on 5 machines, tick 1, simulation time, against CloudSimPy's own run of the
  same jobs (``peer``: ``../shared/peers/cloudsimpy_bench.py``, in this process's Python, so with the same
  pandas: its time moves about 2x with the pandas version);
* ``floor``: first-fit's cost per decision where every decision is one round, one start and one end (one
  machine, one task of 100,000 instances that each fill it), in µs, against SimPy's own timeout event
  (``simpy``, measured in the same repeats).

The first run of a new checkout compiles its kernels (numba, cached on disk); a warm-up run per variant
comes before the timed ones, so the figures are those of an installation that has run once.

    git worktree add /tmp/e8a013e e8a013e
    python benchmarks/compiled_engine.py --against /tmp/e8a013e --repeats 3 [--cases first-fit-1000]

Writes benchmarks/results/compiled_engine.{md,json}: the cases run replace their rows, each row naming the
commits it compared; the other cases' rows are kept.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmark_common import CLOUDSIMPY_TRACE, RESULTS, ROOT, code_version
from replay_speed import CHILD as CLI

# SimPy's own timeout event, in µs per event
SIMPY = r"""
import json, time, simpy
env = simpy.Environment()
def ticker(env, n):
    for _ in range(n):
        yield env.timeout(1.0)
env.process(ticker(env, 200_000))
started = time.perf_counter()
env.run()
print(json.dumps({"us_per_event": (time.perf_counter() - started) / 200_000 * 1e6}))
"""

ALIBABA = r"""
import inspect, json, sys
broker, jobs, compiled = sys.argv[1], int(sys.argv[2]), sys.argv[3]
from agents import make_broker
from cloudsim import ClusterSpec, Simulation
from traces import alibaba_like
options = {} if compiled == "default" else {"compiled": compiled == "on"}
assert not options or "compiled" in inspect.signature(Simulation).parameters
s = Simulation(ClusterSpec.uniform(4034, {"cpu": 96, "memory": 1}), alibaba_like(jobs, seed=0),
               make_broker(broker), **options).run().summary
print(json.dumps({"decisions": s["decisions"], "makespan": s["makespan"], "simulation_s": s["sim_wall_s"],
                  "decisions_per_s": s["decisions"] / s["sim_wall_s"]}))
"""

STREAM = r"""
import inspect, json, resource, sys, tempfile, time
started = time.perf_counter()
jobs, compiled = int(sys.argv[1]), sys.argv[2]
from agents import make_broker
from cloudsim import ClusterSpec, Simulation
from traces import iter_alibaba_like
options = {} if compiled == "default" else {"compiled": compiled == "on"}
# as blocks of jobs (columns) where the generator makes them (as a streamed replay reads it), else one at a time
blocks = {"block": 1024} if "block" in inspect.signature(iter_alibaba_like).parameters else {}
with tempfile.TemporaryDirectory() as folder:
    s = Simulation(ClusterSpec.uniform(4034, {"cpu": 96, "memory": 1}), iter_alibaba_like(jobs, seed=0, **blocks),
                   make_broker("first-fit"), stream_to=folder + "/out", **options).run().summary
print(json.dumps({"decisions": s["decisions"], "makespan": s["makespan"], "simulation_s": s["sim_wall_s"],
                  "process_s": time.perf_counter() - started,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

FLOOR = r"""
import inspect, json, sys
from agents import make_broker
from cloudsim import ClusterSpec, JobSpec, Simulation, TaskSpec
options = {} if sys.argv[1] == "default" else {"compiled": sys.argv[1] == "on"}
n = 100_000
jobs = [JobSpec(0, 0.0, (TaskSpec(0, n, {"cpu": 1.0}, 1.0),))]
s = Simulation(ClusterSpec.uniform(1, {"cpu": 1.0}), jobs, make_broker("first-fit"), **options).run().summary
assert s["decisions"] == n
print(json.dumps({"makespan": s["makespan"], "us_per_decision": s["sim_wall_s"] / n * 1e6}))
"""

GPU = r"""
import inspect, json, sys
broker, folder, compiled = sys.argv[1], sys.argv[2], sys.argv[3]
from agents import make_broker
from cloudsim import Simulation
from traces.openb import load_openb, machines_openb
options = {} if compiled == "default" else {"compiled": compiled == "on"}
assert not options or "compiled" in inspect.signature(Simulation).parameters
from agents.heuristics.gpu import target_options
try:
    from cloudsim.engine.fragmentation import TargetWorkload
except ImportError:  # a checkout from before the engine's folder
    from cloudsim.fragmentation import TargetWorkload
pods = load_openb(folder + "/openb_pod_list_default.csv").jobs
policy = make_broker(broker, **target_options(broker, TargetWorkload.of(pods)))
s = Simulation(machines_openb(folder + "/openb_node_list_gpu_node.csv"), pods, policy, **options).run().summary
print(json.dumps({"decisions": s["decisions"], "makespan": s["makespan"], "simulation_s": s["sim_wall_s"],
                  "decisions_per_s": s["decisions"] / s["sim_wall_s"]}))
"""

PEERS = ROOT.parent / "shared" / "peers"
V2018 = ROOT.parent / "shared" / "data" / "alibaba" / "v2018"
OPENB = ROOT.parent / "shared" / "data" / "alibaba" / "gpu-v2023"
PEER = (str(PEERS / "cloudsimpy_bench.py"), str(PEERS / "CloudSimPy"), "--csv", str(CLOUDSIMPY_TRACE),
        "--algos", "first_fit", "--jobs", "0:200", "--machines", "5", "--timeout", "3600")

CASES = {
    "cloudsimpy-0:200": (CLI, "replay", str(CLOUDSIMPY_TRACE), "--format", "cloudsimpy", "--jobs", "0:200",
                         "--machines", "5", "--capacity", "cpu=64,memory=1,disk=1", "--tick", "1",
                         "--broker", "first-fit", "--json"),
    "easy-cloudsimpy-0:200": (CLI, "replay", str(CLOUDSIMPY_TRACE), "--format", "cloudsimpy", "--jobs", "0:200",
                              "--machines", "5", "--capacity", "cpu=64,memory=1,disk=1", "--tick", "1",
                              "--broker", "easy", "--json"),
    "floor": (FLOOR,),
    "first-fit-1000": (ALIBABA, "first-fit", 1000),
    "first-fit-10000": (ALIBABA, "first-fit", 10000),
    "tetris-1000": (ALIBABA, "tetris", 1000),
    "tetris-10000": (ALIBABA, "tetris", 10000),
    "packer-1000": (ALIBABA, "packer", 1000),
    "tetris-star-1000": (ALIBABA, "tetris-star", 1000),
    "fcfs-1000": (ALIBABA, "fcfs", 1000),
    "sjf-1000": (ALIBABA, "sjf", 1000),
    "hrrn-1000": (ALIBABA, "hrrn", 1000),
    "drf-1000": (ALIBABA, "drf", 1000),
    "best-fit-1000": (ALIBABA, "best-fit", 1000),
    "least-load-1000": (ALIBABA, "least-load", 1000),
    "round-robin-1000": (ALIBABA, "round-robin", 1000),
    "random-1000": (ALIBABA, "random", 1000),
    "easy-1000": (ALIBABA, "easy", 1000),
    "deepjs-1000": (ALIBABA, "deepjs", 1000),
    **{f"{broker}-v2018": (CLI, "replay", str(V2018 / "selected_DAGs.csv"), "--format", "alibaba-v2018",
                           "--jobs", "50:60", "--load", "1.1", "--machine-table", str(V2018 / "machine_meta.csv"),
                           "--machines", "2", "--broker", broker, "--json") for broker in ("deeprm", "deeprm-plus")},
    **{f"{broker}-openb": (GPU, broker, str(OPENB)) for broker in ("first-fit", "least-load", "random",
                                                                   "gpu-best-fit", "gpu-packing", "fgd", "gpu-random")},
    "stream-100000": (STREAM, 100_000),
    "cloudsimpy-whole": (CLI, "replay", str(CLOUDSIMPY_TRACE), "--format", "cloudsimpy", "--machines", "50",
                         "--capacity", "cpu=64,memory=1,disk=1", "--broker", "first-fit", "--json"),
}
HEADLINE = {"cloudsimpy-0:200": "simulation_s", "easy-cloudsimpy-0:200": "simulation_s", "floor": "us_per_decision",
            "cloudsimpy-whole": "process_s",
            "stream-100000": "process_s", "deeprm-v2018": "simulation_s", "deeprm-plus-v2018": "simulation_s",
            **{case: "decisions_per_s" if case.endswith("-1000") else "simulation_s"
               for case, (code, *_) in CASES.items() if code == ALIBABA},
            **{case: "decisions_per_s" for case, (code, *_) in CASES.items() if code == GPU}}


def run(checkout: Path, case: str, variant: str) -> dict:
    code, *argv = {"simpy": (SIMPY,), "peer": (None, *PEER)}.get(variant, CASES[case])
    if code in (ALIBABA, FLOOR, STREAM, GPU):
        argv.append({"base": "default", "python": "off", "compiled": "default"}[variant])
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, *(("-c", code) if code else ()), *map(str, argv)], capture_output=True,
                          text=True, cwd=checkout, env=env)
    if done.returncode != 0:
        raise SystemExit(f"compiled_engine.py: {case} ({variant}) failed: "
                         f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
    row = json.loads(done.stdout.strip().splitlines()[-1 if code else 0])
    if variant == "simpy":  # per event, set beside the floor's per decision
        row["us_per_decision"] = row.pop("us_per_event")
    if variant == "peer":  # simulation time: CloudSimPy's wall_s, a replay's sim_wall_s
        row["simulation_s"] = row["wall_s"]
    elif "sim_wall_s" in row:
        row.setdefault("simulation_s", row["sim_wall_s"])
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="the base checkout (a git worktree)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES), help=f"among {', '.join(CASES)}")
    args = parser.parse_args()
    cases = args.cases.split(",")
    unknown = sorted(set(cases) - set(CASES))
    if unknown or args.repeats < 1 or not (args.against / "cloudsim" / "simulation.py").is_file():
        raise SystemExit(f"compiled_engine.py: give --cases among {', '.join(CASES)}, --repeats >= 1 and --against "
                         f"a checkout of cloudsim (got {unknown or args.cases}, {args.repeats}, {args.against})")
    RESULTS.mkdir(exist_ok=True)
    saved = RESULTS / "compiled_engine.json"
    rows = json.loads(saved.read_text())["cases"] if saved.is_file() else {}
    for case in cases:
        variants = {ALIBABA: ("base", "python", "compiled"), STREAM: ("base", "python", "compiled"),
                    GPU: ("base", "python", "compiled"), FLOOR: ("base", "python", "compiled", "simpy")}.get(
            CASES[case][0], ("base", "compiled"))
        if case == "cloudsimpy-0:200":
            variants = ("peer", "compiled")
        checkouts = {"base": args.against.resolve(), "python": ROOT, "compiled": ROOT, "simpy": ROOT, "peer": ROOT}
        for variant in variants:  # warm-up: kernels compiled and cached, files in the page cache
            run(checkouts[variant], case, variant)
        runs = {variant: [] for variant in variants}
        for repeat in range(args.repeats):
            for variant in (variants if repeat % 2 == 0 else variants[::-1]):
                runs[variant].append(run(checkouts[variant], case, variant))
                print(case, variant, json.dumps(runs[variant][-1]), flush=True)
        medians = {variant: {key: statistics.median(r[key] for r in rs) for key in rs[0]
                             if isinstance(rs[0][key], (int, float))} for variant, rs in runs.items()}
        reference = runs["base" if "base" in runs else "peer"][0].get("makespan")
        for variant, rs in runs.items():  # the same results on every path (CloudSimPy's own included)
            assert variant == "simpy" or rs[0].get("makespan") == reference, (case, variant, rs[0].get("makespan"))
        rows[case] = {"code": code_version(), "base": "CloudSimPy (../shared/peers)" if "peer" in runs else
                      code_version(args.against.resolve()), "repeats": args.repeats, "medians": medians}
        saved.write_text(json.dumps({"cases": rows}, indent=1) + "\n")  # (each case kept as soon as measured)
    key = HEADLINE
    lines = ["# The compiled engine side by side", "",
             "Medians of alternating runs in fresh processes, after one warm-up run each (`repeats` runs each); "
             "each case names the code measured and its base.", "",
             "| case | measure | base | python path | compiled | compiled vs base | compiled vs python path |",
             "|---|---|---|---|---|---|---|"]
    for case in [case for case in CASES if case in rows]:
        medians = rows[case]["medians"]
        measure = key[case]
        reference = "base" if "base" in medians else "peer"
        base, compiled = medians[reference][measure], medians["compiled"][measure]
        python = medians.get("python", {}).get(measure)
        faster = (lambda a, b: b / a) if measure == "decisions_per_s" else (lambda a, b: a / b)
        if "simpy" in medians:
            lines.append(f"| {case} | SimPy's own timeout event, µs | {medians['simpy'][measure]:.3g} | | | "
                         f"compiled: {compiled / medians['simpy'][measure]:.1f}x SimPy's event | |")
        shown = "{:,.0f}".format if measure == "decisions_per_s" else "{:.3g}".format
        lines.append(f"| {case} | {measure} | {shown(base)} | {'-' if python is None else shown(python)} | "
                     f"{shown(compiled)} | {faster(base, compiled):.2f}x | "
                     f"{'-' if python is None else f'{faster(python, compiled):.2f}x'} |")
        if "peak_rss_mb" in medians["compiled"]:
            python_rss = medians.get("python", {}).get("peak_rss_mb")
            lines.append(f"| {case} | peak_rss_mb | {medians[reference]['peak_rss_mb']:.0f} | "
                         f"{'-' if python_rss is None else f'{python_rss:.0f}'} | "
                         f"{medians['compiled']['peak_rss_mb']:.0f} | | |")
    lines += ["", "| case | code | base | repeats |", "|---|---|---|---|"]
    lines += [f"| {case} | {rows[case]['code']} | {rows[case]['base']} | {rows[case]['repeats']} |"
              for case in CASES if case in rows]
    (RESULTS / "compiled_engine.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
