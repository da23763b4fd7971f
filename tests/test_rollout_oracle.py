"""The look-ahead oracle of Deepk8s's problem (`agents.deepk8s.rollout.RolloutOracle`)."""

import numpy as np
import pytest

from agents import Windowed, make_broker
from agents.deepk8s.rollout import RolloutOracle
from cloudsim import simulate
from cloudsim.engine.specs import ClusterSpec, JobSpec, TaskSpec


def job(ident, submit, duration, cpu=1.0):
    return JobSpec(ident, submit, (TaskSpec(0, 1, {"cpu": cpu}, duration),))


def sjf():
    return Windowed(make_broker("sjf"), 10)


def weighted(result):
    jobs = result.jobs.set_index("job_id")
    return ((jobs.finish_time - jobs.submit_time) / jobs.duration).to_dict()


def test_the_oracle_runs_a_longer_task_first_when_a_short_one_is_about_to_arrive():
    # One machine of 1 cpu, every task takes all of it. SJF starts J0 (2) before J1 (3); J2 (1)
    # arrives at 2.5 and waits for J1 to end at 5: weighted turnarounds 2/2, 5/3, (6 - 2.5)/1.
    # Starting J1 first lets J2 run at 3, before J0: 3/3, (4 - 2.5)/1, 6/2, summing 5.5 < 6.17.
    cluster = ClusterSpec.uniform(1, {"cpu": 1.0})
    jobs = [job(0, 0.0, 2.0), job(1, 0.0, 3.0), job(2, 2.5, 1.0)]
    assert weighted(simulate(cluster, jobs, sjf())) == pytest.approx({0: 1.0, 1: 5 / 3, 2: 3.5})
    result = simulate(cluster, jobs, RolloutOracle(jobs, cluster, sjf))
    assert weighted(result) == pytest.approx({0: 3.0, 1: 1.0, 2: 1.5})
    assert result.jobs.set_index("job_id").start_time.to_dict() == pytest.approx({0: 4.0, 1: 0.0, 2: 3.0})


def test_the_online_look_ahead_cannot_wait_for_a_task_it_does_not_know_of():
    # The first test's jobs: played out without J2, SJF's order sums 2/2 + 5/3 = 2.67 and J1 first
    # 3/3 + 5/2 = 3.5, so the look-ahead that leaves out the jobs to come keeps SJF's order, and ends
    # at SJF's weighted turnarounds, above the oracle's.
    cluster = ClusterSpec.uniform(1, {"cpu": 1.0})
    jobs = [job(0, 0.0, 2.0), job(1, 0.0, 3.0), job(2, 2.5, 1.0)]
    online = RolloutOracle(jobs, cluster, sjf, knows_arrivals=False)
    result = simulate(cluster, jobs, online)
    assert weighted(result) == pytest.approx({0: 1.0, 1: 5 / 3, 2: 3.5})
    assert online.playouts > 0 and online.name == "rollout-online"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_oracle_never_does_worse_than_the_policy_it_improves(seed):
    # Rollout improvement: SJF's own choice is always a candidate and wins ties, and each play-out
    # rebuilds the state exactly (running tasks end when they would), so the oracle's summed
    # weighted turnaround is at most SJF's. Whole-number times keep the play-outs' clocks exact.
    rng = np.random.default_rng(seed)
    cluster = ClusterSpec.uniform(2, {"cpu": 4.0, "memory": 4.0})
    arrivals = np.cumsum(rng.integers(0, 3, 16))
    jobs = [JobSpec(i, float(arrivals[i]), (TaskSpec(0, 1, {"cpu": float(rng.integers(1, 4)),
                                                             "memory": float(rng.integers(1, 3))},
                                                     float(rng.integers(1, 9))),))
            for i in range(16)]
    base = sum(weighted(simulate(cluster, jobs, sjf())).values())
    oracle = RolloutOracle(jobs, cluster, sjf)
    result = simulate(cluster, jobs, oracle)
    assert result.summary["instances_finished"] == 16
    assert sum(weighted(result).values()) <= base + 1e-9
    assert oracle.playouts > 0


def test_the_oracle_refuses_jobs_it_cannot_play_out():
    cluster = ClusterSpec.uniform(1, {"cpu": 1.0})
    two_tasks = JobSpec(0, 0.0, (TaskSpec(0, 1, {"cpu": 1.0}, 1.0), TaskSpec(1, 1, {"cpu": 1.0}, 1.0)))
    with pytest.raises(ValueError, match="single-task jobs of one instance"):
        RolloutOracle([two_tasks], cluster, sjf)


def test_a_job_the_engine_clock_reaches_a_rounding_error_early_still_plays_out():
    # 0.2 + (0.9 - 0.2) is 0.8999999999999999: the view at J2's arrival is a hair before its submit
    # time; the play-out must still count J2 as here (it once looked for it among the arrivals to come).
    cluster = ClusterSpec.uniform(1, {"cpu": 2.0})
    jobs = [job(0, 0.0, 10.0), job(1, 0.2, 10.0, cpu=0.5), job(2, 0.9, 1.0, cpu=0.5)]
    oracle = RolloutOracle(jobs, cluster, sjf)
    result = simulate(cluster, jobs, oracle)
    assert oracle.playouts >= 2  # J2 now or a wait
    assert weighted(result) == pytest.approx({0: 1.0, 1: 1.0, 2: 1.0})


def test_the_bound_script_never_mixes_the_oracle_and_the_online_look_ahead_in_one_csv(tmp_path):
    # benchmarks/deepk8s_oracle.py resumes from its CSV; the oracle's rows appended to the online
    # look-ahead's (or the other way) would summarise two schedulers as one.
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent.parent / "benchmarks" / "deepk8s_oracle.py"
    kept = tmp_path / "oracle.csv"
    kept.write_text("seed,sjf_turnaround,oracle_turnaround,sjf_makespan,oracle_makespan,playouts\n"
                    "200,1.5,1.4,600.0,600.0,10\n")
    run = subprocess.run([sys.executable, str(script), "--seeds", "200:201", "--online", "--out", str(kept)],
                         capture_output=True, text=True)
    assert run.returncode == 2
    assert "not this script's CSV for the online look-ahead" in run.stderr and "without --online" in run.stderr
    assert kept.read_text().count("\n") == 2 and not kept.with_suffix(".md").exists()
