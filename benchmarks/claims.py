"""The learned schedulers' claims, each measured on held-out cases with a paired 95 % interval.

A claim is "met" only when the whole 95 % interval of the paired difference (candidate minus baseline,
episode by episode, as % of the baseline's mean; `cloudsim.run.paired`) lies on the claimed side of the
paper's figure; "missed" says by how much the mean is short. Held-out cases are seeds that no training,
tuning or checkpoint choice drew: the training environments draw seeds from 1,000 up
(`cloudsim.engine.envs.TRAINING_SEEDS`), checkpoints were chosen on seeds 100-119 (Deepk8s), so the held-out
sets here are seeds 200-399; DeepJS's are its paper's 320 test chunks of CloudSimPy's jobs.csv (202-521;
its training used 0-199), on v2017 320 chunks of the v2017 sample (400-719; a DeepJS training for
v2017 uses chunks 100-199 and was chosen on 200-259), and on v2018 the sample's 202 chunks past the
leaderboard's (6-207; no DeepJS was trained on v2018).

    python benchmarks/claims.py                      # every claim below; a few minutes on 2 cores
    python benchmarks/claims.py --only deepk8s-ppo

Writes ``benchmarks/results/claims.json`` and ``claims.md``. It runs through the public run layer
(`cloudsim.run.compare`), the same path as ``cloudsim compare deepk8s --brokers ... --seeds 200:400``
(real samples from ``$CLOUDSIM_DATA``, else ``shared/data`` beside the checkout).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

from cloudsim.run import BrokerConfig, ClusterConfig, RunnerConfig, SimulationConfig, WorkloadConfig, compare
from cloudsim.run.config import compare_config
from cloudsim.run.paired import paired
from traces.data import data_folder

RESULTS = Path(__file__).resolve().parent / "results"
CHECKPOINTS = Path(__file__).resolve().parents[1] / "agents" / "checkpoints"
HELD_OUT = (200, 400)


@dataclass(frozen=True)
class Claim:
    """A paper's claim: ``candidate``'s ``measure`` against ``baseline``'s on ``workload``'s held-out cases.

    ``target_pct`` is the claimed mean difference, a bound from above (0: "below the baseline"), or from
    below with ``higher`` (0: "above the baseline"); with ``shares`` (the paper's fractions of cases lower
    and higher, as DeepJS's Table 2 counts them) the claim is those counts instead, and the mean
    difference's interval must lie below 0. ``checkpoint`` and ``baseline_checkpoint`` name files under
    ``agents/checkpoints`` (default: the broker's shipped one)."""

    name: str
    paper: str
    workload: str
    candidate: str
    baseline: str
    measure: str
    target_pct: float
    text: str
    shares: tuple[float, float] | None = None
    checkpoint: str | None = None
    baseline_checkpoint: str | None = None
    higher: bool = False


JOBS_CSV = "cloudsimpy/jobs.csv"
V2017 = Path("alibaba") / "v2017"
V2018 = Path("alibaba") / "v2018"

WORKLOADS = {
    # Deepk8s's 250-task sequences on its 5 machines, seeds 200-399
    "deepk8s": lambda data: dict(workload=WorkloadConfig("deepk8s"), seeds=HELD_OUT),
    # DeepRM's own environment (code job sizes, Bernoulli arrivals), one jobset per seed 200-399 at each load
    **{f"deeprm@{load:g}": (lambda data, load=load: dict(workload=WorkloadConfig("deeprm"), env="deeprm",
                                                        loads=(load,), seeds=HELD_OUT)) for load in (0.7, 1.3)},
    # DeepJS's 320 test chunks of CloudSimPy's jobs.csv (202-521; training used 0-199) on its 5 machines, tick 1
    "deepjs-chunks": lambda data: dict(
        workload=WorkloadConfig(str(data / JOBS_CSV), format="cloudsimpy", chunk_size=10, chunks=(202, 522)),
        cluster=ClusterConfig(5, {"cpu": 64.0, "memory": 1.0, "disk": 1.0}), simulation=SimulationConfig(tick=1.0)),
    # v2017's chunks 400-719 of 10 jobs at offered load 1.1 on 3 machines drawn from its table (the leaderboard's
    # v2017@1.1 workload, whose chunks 0-5 are not among them), tick 1
    "v2017@1.1-chunks": lambda data: dict(
        workload=WorkloadConfig(str(data / V2017 / "batch_task.csv"), format="alibaba-v2017", load=1.1,
                                machine_table=str(data / V2017 / "server_event.csv"), chunk_size=10,
                                chunks=(400, 720)),
        cluster=ClusterConfig(3), simulation=SimulationConfig(tick=1.0)),
    # v2018's chunks 6-207 of 10 jobs (all its sample's but the leaderboard's 0-5) at offered load 1.1 on 2 machines
    # drawn from its table (the leaderboard's v2018@1.1 workload), tick 1
    "v2018@1.1-chunks": lambda data: dict(
        workload=WorkloadConfig(str(data / V2018 / "selected_DAGs.csv"), format="alibaba-v2018", load=1.1,
                                machine_table=str(data / V2018 / "machine_meta.csv"), chunk_size=10,
                                chunks=(6, 208)),
        cluster=ClusterConfig(2), simulation=SimulationConfig(tick=1.0)),
    # DeepRM_Plus's section V-B jobsets (5-50 jobs, Poisson arrivals, the code's sizes) at 140 %, seeds 200-399
    "deeprm-poisson@1.4": lambda data: dict(workload=WorkloadConfig("deeprm"), env="deeprm", arrivals="poisson",
                                            loads=(1.4,), seeds=HELD_OUT),
    # RLSK's 1,000-job sequences at 70 % on its 3 clusters of 1 cpu and 1 memory, seeds 200-399
    "rlsk": lambda data: dict(workload=WorkloadConfig("rlsk"), env="rlsk", seeds=HELD_OUT),
}

CLAIMS = (
    *(Claim(f"deeprm-{load}-{baseline}", "DeepRM", f"deeprm@{load / 100:g}", "deeprm", baseline, "avg_job_slowdown",
            0.0, f"DeepRM's average job slowdown below {name}'s at {load} % load (Figure 4; the policy trained at "
            f"{load} %)", checkpoint=None if load == 70 else "deeprm-130.pt")
      for load in (70, 130) for baseline, name in (("sjf", "SJF"), ("tetris-star", "Tetris* (knob 0.5)"))),
    Claim("deepjs", "DeepJS", "deepjs-chunks", "deepjs", "first-fit", "makespan", 0.0,
          "DeepJS's makespan lower than first-fit's on 239 of 320 chunks, higher on 45 (Table 2)",
          shares=(239 / 320, 45 / 320)),
    *(Claim(f"deepjs-v2017-{baseline}", "DeepJS", "v2017@1.1-chunks", "deepjs", baseline, "makespan", 0.0,
            f"DeepJS (its shipped checkpoint, trained on CloudSimPy's chunks on 5 machines) on v2017 at load 1.1: "
            f"makespan lower than {name}'s on at least 75 % of held-out chunks, higher on at most 10 % (Table 2's "
            f"counts, on a real trace at load)", shares=(0.75, 0.10))
      for baseline, name in (("first-fit", "first-fit"), ("tetris", "Tetris"))),
    *(Claim(f"deepjs-v2017-trained-{baseline}", "DeepJS", "v2017@1.1-chunks", "deepjs", baseline, "makespan", 0.0,
            f"DeepJS fine-tuned on v2017 (deepjs-v2017.pt: the shipped checkpoint trained further on chunks 100-136 "
            f"at load 1.1 on 3 machines) against {name}: lower on at least 75 % of held-out chunks, higher on at "
            f"most 10 %", shares=(0.75, 0.10), checkpoint="deepjs-v2017.pt")
      for baseline, name in (("first-fit", "first-fit"), ("tetris", "Tetris"))),
    *(Claim(f"deepjs-v2018-{baseline}", "DeepJS", "v2018@1.1-chunks", "deepjs", baseline, "makespan", 0.0,
            f"DeepJS (its shipped checkpoint, never trained on v2018) on v2018 at load 1.1 on 2 machines: makespan "
            f"lower than {name}'s on at least 75 % of the chunks, higher on at most 10 %", shares=(0.75, 0.10))
      for baseline, name in (("first-fit", "first-fit"), ("tetris", "Tetris"))),
    Claim("deepk8s-ppo", "Deepk8s", "deepk8s", "deepk8s", "sjf", "avg_job_slowdown", -7.5,
          "PPO's average weighted turnaround 7.5 % below SJF's (Table 1)"),
    Claim("deepk8s-dagger", "Deepk8s", "deepk8s", "deepk8s-dagger", "sjf", "avg_job_slowdown", -7.5,
          "the same claim for the policy cloned by DAgger"),
    *(Claim(f"deeprm-plus{suffix}", "DeepRM_Plus", "deeprm-poisson@1.4", "deeprm-plus", "deeprm", "avg_job_slowdown",
            target, text, baseline_checkpoint="deeprm-poisson-140.pt")
      for suffix, target, text in (
          ("", 0.0, "DeepRM_Plus's average weighted turnaround below DeepRM's at 140 % (Figure 8; both trained "
                    "at 140 %)"),
          ("-paper", -51.85, "the same, by the paper's 51.85 %"))),
    Claim("rlsk-reward", "RLSK", "rlsk", "rlsk", "least-load", "total_reward", 0.0,
          "RLSK's total reward (eq. 4) above Least Load's (Figure 4)", higher=True),
    Claim("rlsk-within", "RLSK", "rlsk", "rlsk", "least-load", "imbalance_resources", 0.0,
          "RLSK's imbalance within clusters (eq. 7) below Least Load's (Figure 5)"),
    Claim("rlsk-between", "RLSK", "rlsk", "rlsk", "least-load", "imbalance_machines", 0.0,
          "RLSK's imbalance between clusters (eq. 8) below Least Load's (Figure 5)"),
)


def count_bounds(shares: tuple[float, float], cases: int) -> tuple[int, int]:
    """A count claim's bounds on ``cases``: the fewest cases lower and the most cases higher it allows."""
    lower, higher = shares
    return math.ceil(lower * cases - 1e-9), math.floor(higher * cases + 1e-9)


def measure(claims: list[Claim], workers: int) -> list[dict]:
    """Run each workload's brokers once per set of checkpoints on the held-out seeds and compare each claim's
    pair (two checkpoints of one broker, as DeepJS's two on v2017, are two runs)."""
    def run_of(claim: Claim) -> tuple[str, str, str]:
        return claim.workload, claim.checkpoint or "", claim.baseline_checkpoint or ""

    results = []
    for run in sorted({run_of(c) for c in claims}):
        workload = run[0]
        mine = [c for c in claims if run_of(c) == run]
        brokers = tuple(dict.fromkeys(b for c in mine for b in (c.baseline, c.candidate)))
        started = time.perf_counter()
        checkpoints = tuple(dict.fromkeys(
            (broker, str(CHECKPOINTS / file)) for c in mine
            for broker, file in ((c.candidate, c.checkpoint), (c.baseline, c.baseline_checkpoint)) if file))
        options = WORKLOADS[workload](data_folder())
        sections = {name: options.pop(name) for name in ("workload", "cluster", "simulation") if name in options}
        sections.update(brokers=BrokerConfig(brokers, checkpoint=checkpoints), runner=RunnerConfig(workers=workers))
        rows = compare(compare_config(sections, options, options.pop("env", None))).runs.to_dict("records")
        wall = time.perf_counter() - started
        by = {}
        for row in rows:  # a case is a (seed, chunk): sequences differ by seed, chunks by chunk
            broker = row["broker"].split("(")[0]  # DeepRM's environment names Tetris* with its knob
            by.setdefault(broker, {})[(row["seed"], row.get("chunk"))] = row
        for claim in mine:
            # in number order (chunk 6 before 10), whether a case names its chunk or only its seed
            cases = sorted(set(by[claim.candidate]) & set(by[claim.baseline]),
                           key=lambda case: tuple(-1 if part is None else part for part in case))
            result = paired([by[claim.candidate][c][claim.measure] for c in cases],
                            [by[claim.baseline][c][claim.measure] for c in cases], lower_is_better=not claim.higher)
            if claim.shares is not None:
                needed, allowed = count_bounds(claim.shares, result.episodes)
                met = result.wins >= needed and result.losses <= allowed and result.high < 0
            elif claim.higher:  # the whole interval above the claimed difference
                met = result.low_pct > claim.target_pct
            else:  # the whole interval below it
                met = result.high_pct < claim.target_pct
            seeds = [c[1] if c[1] is not None else c[0] for c in cases]
            results.append({
                "claim": claim.name, "paper": claim.paper, "text": claim.text, "candidate": claim.candidate,
                "baseline": claim.baseline, "measure": claim.measure, "target_pct": claim.target_pct,
                "seeds": f"{seeds[0]}-{seeds[-1]}", "cases": result.episodes,
                "candidate_mean": sum(by[claim.candidate][c][claim.measure] for c in cases) / len(cases),
                "baseline_mean": sum(by[claim.baseline][c][claim.measure] for c in cases) / len(cases),
                **{k: getattr(result, k) for k in ("wins", "ties", "losses", "difference_pct", "low_pct", "high_pct")},
                "verdict": "met" if met else "missed", "short_by_pct": 0.0 if met or claim.shares else
                max((claim.target_pct - result.difference_pct) if claim.higher else
                    (result.difference_pct - claim.target_pct), 0.0), "workload_wall_s": round(wall, 1)})
    return results


def markdown(results: list[dict]) -> str:
    lines = ["# Learned claims on held-out cases", "",
             "`python benchmarks/claims.py`. Paired difference candidate - baseline over the held-out cases, as % "
             "of the baseline's mean, with its 95 % interval (Student's t); met only when the whole interval is "
             "on the claimed side of the paper's figure.", "",
             "| claim | cases (seeds or chunks) | candidate | baseline | difference [95 % interval] | "
             "wins/ties/losses | paper | verdict |", "|---|---|---|---|---|---|---|---|"]
    claims = {c.name: c for c in CLAIMS}
    for r in results:
        shares = claims[r["claim"]].shares
        if r["verdict"] == "met":
            verdict = "met"
        elif shares is not None:  # counts: how far each is from what the claim allows
            needed, allowed = count_bounds(shares, r["cases"])
            verdict = (f"missed: {r['wins']} lower where {needed} are needed, {r['losses']} higher where at most "
                       f"{allowed} are allowed")
        else:
            far = r["low_pct"] if claims[r["claim"]].higher else r["high_pct"]
            verdict = (f"missed: the mean is on the claimed side, its interval not wholly (to {far:+.2f} %)"
                       if r["short_by_pct"] == 0 else f"missed by {r['short_by_pct']:.1f} points")
        lines.append(f"| {r['text']} | {r['cases']} ({r['seeds']}) | {r['candidate_mean']:.4f} | "
                     f"{r['baseline_mean']:.4f} | {r['difference_pct']:+.2f} % [{r['low_pct']:+.2f}, "
                     f"{r['high_pct']:+.2f}] | {r['wins']}/{r['ties']}/{r['losses']} | {r['paper']} | "
                     f"{verdict} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated claim names (default all): " +
                        ", ".join(c.name for c in CLAIMS))
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    args = parser.parse_args()
    names = args.only.split(",") if args.only else [c.name for c in CLAIMS]
    unknown = sorted(set(names) - {c.name for c in CLAIMS})
    if unknown:
        parser.error(f"--only: unknown claim {', '.join(unknown)}; choose from {', '.join(c.name for c in CLAIMS)}")
    if args.workers < 1:
        parser.error(f"--workers {args.workers}: give 1 or more")
    results = measure([c for c in CLAIMS if c.name in names], args.workers)
    kept = {}
    if args.only and (RESULTS / "claims.json").exists():  # the other claims keep their kept results
        kept = {r["claim"]: r for r in json.loads((RESULTS / "claims.json").read_text())}
    kept.update({r["claim"]: r for r in results})
    results = [kept[c.name] for c in CLAIMS if c.name in kept]  # in the order of CLAIMS
    (RESULTS / "claims.json").write_text(json.dumps(results, indent=1) + "\n")
    (RESULTS / "claims.md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
