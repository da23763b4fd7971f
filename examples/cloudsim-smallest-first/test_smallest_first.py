"""The example broker, installed: it keeps the broker protocol and is known to cloudsim by name."""

from agents import make_broker
from cloudsim import ClusterSpec, JobSpec, TaskSpec, simulate
from cloudsim.run.check_broker import check_broker


def test_it_is_installed_and_keeps_the_broker_protocol():
    report = check_broker(lambda: make_broker("smallest-first"), "smallest-first")
    assert report.passed, report.failures


def test_the_smaller_task_starts_first():
    # One machine of 4 cpu; A asks for 3 cpu, B for 2: both cannot run at once. B (smaller) runs 0-1, then A 1-3.
    jobs = [JobSpec("A", 0.0, (TaskSpec("a", 1, {"cpu": 3.0}, 2.0),)),
            JobSpec("B", 0.0, (TaskSpec("b", 1, {"cpu": 2.0}, 1.0),))]
    result = simulate(ClusterSpec.uniform(1, {"cpu": 4.0}), jobs, make_broker("smallest-first"))
    starts = dict(zip(result.groups.job_id, result.groups.start))
    assert starts == {"B": 0.0, "A": 1.0} and result.summary["makespan"] == 3.0
