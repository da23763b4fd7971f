"""The speed goals of the decision-round work, one row each: where the engine and the brokers stand.

Every row is measured in fresh Python processes (so that no case warms another's caches), as the
median of ``--repeats`` runs; ratios are taken between medians measured in the same invocation,
the two cases alternating so that both see the same machine load. The rows:

* SimPy's own cost of one timeout event (the floor of any SimPy engine);
* the engine's own floor per decision: a broker that tests one fit and starts one instance, one
  machine, one task of 100,000 instances that each fill it, so that every decision is one round,
  one start and one completion (what a decision costs before any broker logic);
* first-fit's decisions per second, alibaba-like (seed 0) on v2018's 4,034 machines, event-driven
  (decisions over the simulation's wall time, results excluded);
* first-fit streamed (`Simulation(stream_to=...)`) over ``--stream-jobs`` alibaba-like jobs: the whole
  process and its peak memory, projected linearly to 1 million and v2018's 4 million jobs (a projection,
  not a measurement; `benchmarks/scale.py` runs the million);
* Tetris against first-fit on (500 jobs, 1,000 machines) and (``--tetris-jobs``, 4,034 machines);
* DeepJS (the shipped checkpoint) against Tetris on ``--deepjs-jobs`` jobs, 4,034 machines (both start
  one instance per decision);
* CloudSimPy's whole jobs.csv on 50 machines, event-driven, in memory: whole process and peak memory;
* CloudSimPy's jobs 0:200 on 5 machines, tick 1: simulation time (loading and start-up left out) against
  CloudSimPy's own 77.8 s (the figure of the engine-cost issue, not measured here);
* start-up: ``cloudsim --help`` and ``import cloudsim``, whole process;
* ``cloudsim/Deepk8s-v0`` environment steps per second under random masked actions.

The targets are the engine-cost issue's, against its landed commit (74586ec): the figures of that
commit are in ``LANDED``.

    python benchmarks/round_goals.py                      # every row, medians of 3 (about 20 minutes)
    python benchmarks/round_goals.py --rows floor,first-fit --repeats 5

Writes benchmarks/results/round_goals.{md,json}.

Its CloudSimPy rows run ``cloudsim replay`` and its start-up row ``cloudsim --help``, each in a fresh process;
the others call SimPy, the engine or the Deepk8s environment directly, not `cloudsim.run`, because they measure
the engine's own costs (a decision's floor, decisions per second, a streamed run's process time and peak
memory), which the run layer's resolve step and runner would add to.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmark_common import CLOUDSIMPY_TRACE, RESULTS, ROOT, code_version
from replay_speed import CHILD as CLI  # a `cloudsim` command in a fresh process, timed whole

CLOUDSIMPY_0_200_S = 77.8  # CloudSimPy's own simulation time, jobs 0:200, 5 machines, first-fit, tick 1
V2018_JOBS = 4_000_000
# The landed commit's figures the targets are relative to (74586ec, the engine-cost issue's table).
LANDED = {"first-fit": 18_251, "floor_ratio": 32, "stream_1m_s": 838, "tetris_10000_s": 28.4, "cloudsimpy_whole_s": 80,
          "startup_s": 1.2, "deepk8s_steps": 6_879}

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

ENGINE_FLOOR = r"""
import json
from cloudsim import ClusterSpec, Decision, JobSpec, Simulation, TaskSpec
from cloudsim.broker import Plan
class OneFitTest:
    name = "one-fit-test"
    def decide(self, view):
        return Plan([Decision(0, 0)], final=True) if view.num_tasks and view.fits_one(0, 0) else None
n = 100_000
jobs = [JobSpec(0, 0.0, (TaskSpec(0, n, {"cpu": 1.0}, 1.0),))]
s = Simulation(ClusterSpec.uniform(1, {"cpu": 1.0}), jobs, OneFitTest()).run().summary
assert s["decisions"] == n
print(json.dumps({"us_per_decision": s["sim_wall_s"] / n * 1e6}))
"""

ALIBABA = r"""
import json, resource, sys, tempfile, time
started = time.perf_counter()
broker, jobs, machines, stream = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "stream"
from agents import make_broker
from cloudsim import ClusterSpec, Simulation
from traces import alibaba_like, iter_alibaba_like
cluster = ClusterSpec.uniform(machines, {"cpu": 96, "memory": 1})
if stream:
    with tempfile.TemporaryDirectory() as folder:
        s = Simulation(cluster, iter_alibaba_like(jobs, seed=0), make_broker(broker),
                       stream_to=folder + "/out").run().summary
else:
    s = Simulation(cluster, alibaba_like(jobs, seed=0), make_broker(broker)).run().summary
print(json.dumps({"decisions": s["decisions"], "makespan": s["makespan"], "simulation_s": s["sim_wall_s"],
                  "process_s": time.perf_counter() - started,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

DEEPK8S = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import gymnasium
import cloudsim  # noqa: F401  (registers the environments)
from deepk8s_speed import env_steps_per_second
print(json.dumps({"steps_per_s": env_steps_per_second(lambda: gymnasium.make("cloudsim/Deepk8s-v0"), 20_000)}))
"""


def child(code: str, *argv: object) -> dict:
    done = subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"a case failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def medians(cases: dict[str, tuple], repeats: int) -> dict[str, dict]:
    """Each case's runs, alternating between cases, and the median of every number per case."""
    runs: dict[str, list[dict]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, (code, *argv) in cases.items():
            runs[name].append(child(code, *argv))
    return {name: {key: statistics.median(run[key] for run in rows) for key, value in rows[0].items()
                   if isinstance(value, (int, float))} for name, rows in runs.items()}


def alibaba(broker: str, jobs: int, machines: int, mode: str = "memory") -> tuple:
    return (ALIBABA, broker, jobs, machines, mode)


def cloudsimpy(jobs: str | None, machines: int, tick: str | None) -> tuple:
    argv = ["replay", str(CLOUDSIMPY_TRACE), "--format", "cloudsimpy", "--machines", machines,
            "--capacity", "cpu=64,memory=1,disk=1", "--broker", "first-fit", "--json"]
    argv += ["--jobs", jobs] if jobs else []
    argv += ["--tick", tick] if tick else []
    return (CLI, *argv)


def ratio_row(goal: str, name: str, slow: dict, fast: dict, target: str, against: str = "first-fit") -> dict:
    return {"goal": goal, "measured": f"{slow['simulation_s'] / fast['simulation_s']:.1f}x "
            f"({name} {slow['simulation_s']:.2f} s, {against} {fast['simulation_s']:.2f} s, simulation time)",
            "target": target}


STARTUP = r"""
import json, subprocess, sys, time
out = {}
for name, argv in (("help", [sys.executable, "-m", "cloudsim", "--help"]), ("import", [sys.executable, "-c", "import cloudsim"])):
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    out[name] = time.perf_counter() - started
print(json.dumps(out))
"""

ROWS = ("floor", "first-fit", "stream", "tetris", "deepjs", "cloudsimpy-whole", "cloudsimpy-0-200",
        "startup", "deepk8s")


def measure(row: str, args: argparse.Namespace) -> list[dict]:
    r = args.repeats
    if row == "floor":
        m = medians({"simpy": (SIMPY,), "floor": (ENGINE_FLOOR,)}, r)
        return [{"goal": "SimPy's own cost of one timeout event", "measured": f"{m['simpy']['us_per_event']:.2f} µs",
                 "target": "-"},
                {"goal": "the engine's floor per decision (one round, one start, one completion; a broker that "
                         "tests one fit), against SimPy's event of the same run",
                 "measured": f"{m['floor']['us_per_decision']:.1f} µs, "
                             f"{m['floor']['us_per_decision'] / m['simpy']['us_per_event']:.0f}x",
                 "target": f"<= 10x (landed: {LANDED['floor_ratio']}x)"}]
    if row == "first-fit":
        m = medians({"ff": alibaba("first-fit", 1000, 4034)}, r)["ff"]
        rate = m['decisions'] / m['simulation_s']
        return [{"goal": "first-fit, 1,000 alibaba-like jobs on 4,034 machines",
                 "measured": f"{rate:,.0f} decisions/s ({m['decisions']:,.0f} decisions in {m['simulation_s']:.2f} s; "
                             f"{rate / LANDED['first-fit']:.2f}x the landed {LANDED['first-fit']:,})",
                 "target": ">= 5.5x the landed commit's rate"}]
    if row == "stream":
        jobs = args.stream_jobs
        m = medians({"stream": alibaba("first-fit", jobs, 4034, "stream")}, r)["stream"]
        per_job = m["process_s"] / jobs
        return [{"goal": f"first-fit, --stream, {jobs:,} alibaba-like jobs on 4,034 machines",
                 "measured": f"{m['process_s']:.0f} s, peak {m['peak_rss_mb']:.0f} MB; projected linearly: 1 M jobs "
                             f"{per_job * 1e6:,.0f} s, 4 M jobs {per_job * V2018_JOBS / 60:,.0f} min",
                 "target": f">= 7x faster than the landed {LANDED['stream_1m_s']} s for 1 M jobs (about 120 s), <= 300 MB"}]
    if row == "tetris":
        rows = []
        for jobs, machines in ((500, 1000), (args.tetris_jobs, 4034)):
            m = medians({"tetris": alibaba("tetris", jobs, machines), "ff": alibaba("first-fit", jobs, machines)}, r)
            target = (f">= 5x faster than the landed {LANDED['tetris_10000_s']} s" if jobs == 10_000 and machines == 4034
                      else "-")
            rows.append(ratio_row(f"Tetris against first-fit, {jobs:,} jobs on {machines:,} machines", "Tetris",
                                  m["tetris"], m["ff"], target))
        return rows
    if row == "deepjs":
        jobs = args.deepjs_jobs
        m = medians({"deepjs": alibaba("deepjs", jobs, 4034), "tetris": alibaba("tetris", jobs, 4034)}, r)
        return [ratio_row(f"DeepJS against Tetris, {jobs:,} alibaba-like jobs on 4,034 machines", "DeepJS",
                          m["deepjs"], m["tetris"], "<= 2x", against="Tetris")]
    if row == "cloudsimpy-whole":
        m = medians({"whole": cloudsimpy(None, 50, None)}, r)["whole"]
        return [{"goal": "CloudSimPy's whole jobs.csv, 50 machines, event-driven, in memory",
                 "measured": f"{m['process_s']:.1f} s, peak {m['peak_rss_mb']:.0f} MB (whole process; simulation "
                             f"{m['sim_wall_s']:.1f} s)",
                 "target": f">= 5x faster than the landed {LANDED['cloudsimpy_whole_s']} s, <= 500 MB"}]
    if row == "cloudsimpy-0-200":
        m = medians({"part": cloudsimpy("0:200", 5, "1")}, r)["part"]
        return [{"goal": "CloudSimPy jobs 0:200, 5 machines, tick 1: simulation time against CloudSimPy's own 77.8 s",
                 "measured": f"{CLOUDSIMPY_0_200_S / m['sim_wall_s']:.0f}x ({m['sim_wall_s']:.2f} s; whole process "
                             f"{m['process_s']:.2f} s)",
                 "target": ">= 150x"}]
    if row == "startup":
        m = medians({"startup": (STARTUP,)}, r)["startup"]
        return [{"goal": "start-up, whole process: `cloudsim --help`, `import cloudsim`",
                 "measured": f"{m['help']:.2f} s, {m['import']:.2f} s",
                 "target": f"<= 0.5 s (landed: {LANDED['startup_s']} s)"}]
    m = medians({"env": (DEEPK8S, ROOT / "benchmarks")}, r)["env"]
    return [{"goal": "cloudsim/Deepk8s-v0 environment steps/s (random masked actions)",
             "measured": f"{m['steps_per_s']:,.0f} ({m['steps_per_s'] / LANDED['deepk8s_steps']:.2f}x the landed "
                         f"{LANDED['deepk8s_steps']:,})", "target": ">= 1.5x the landed commit's"}]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=",".join(ROWS), help=f"comma-separated rows among {', '.join(ROWS)}")
    parser.add_argument("--repeats", type=int, default=3, help="runs per case; medians are reported (default 3)")
    parser.add_argument("--stream-jobs", type=int, default=100_000, help="jobs of the streamed row (default 100000)")
    parser.add_argument("--tetris-jobs", type=int, default=10_000,
                        help="jobs of the second Tetris row, on 4,034 machines (default 10000)")
    parser.add_argument("--deepjs-jobs", type=int, default=1000, help="jobs of the DeepJS row (default 1000)")
    parser.add_argument("--out", type=Path, default=RESULTS / "round_goals", help="output path without suffix")
    args = parser.parse_args(argv)
    rows = [name.strip() for name in args.rows.split(",") if name.strip()]
    unknown = [name for name in rows if name not in ROWS]
    if unknown or not rows:
        parser.error(f"--rows: {f'unknown {unknown}' if unknown else 'no row named'}; choose among {', '.join(ROWS)}")
    for option in ("repeats", "stream_jobs", "tetris_jobs", "deepjs_jobs"):
        if getattr(args, option) < 1:
            parser.error(f"--{option.replace('_', '-')} must be >= 1")
    if not CLOUDSIMPY_TRACE.is_file() and any(name.startswith("cloudsimpy") for name in rows):
        parser.error(f"{CLOUDSIMPY_TRACE} not found: the CloudSimPy rows read it (../shared/data, beside the project)")
    table = []
    for name in rows:
        try:
            lines = measure(name, args)
        except RuntimeError as error:  # a case's process failed: its last line says why
            parser.exit(1, f"round_goals.py: row {name}: {error}\n")
        for line in lines:
            print(json.dumps(line, ensure_ascii=False), flush=True)
            table.append(line)
    header = (f"Measured on {code_version()}, {args.repeats} run(s) per case, medians, each run a fresh process; "
              f"`python benchmarks/round_goals.py {' '.join(argv if argv is not None else sys.argv[1:])}`.\n\n"
              "| goal | measured | target |\n|---|---|---|\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=args.out.parent, delete=False, suffix=".tmp") as tmp:
        tmp.write(header + "".join(f"| {r['goal']} | {r['measured']} | {r['target']} |\n" for r in table))
    Path(tmp.name).replace(args.out.with_suffix(".md"))
    args.out.with_suffix(".json").write_text(json.dumps(table, indent=1, ensure_ascii=False) + "\n")
    print(f"-> {args.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
