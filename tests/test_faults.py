"""The seeded random fault model: reproducible failures and repairs, and no instance lost."""

import itertools

import numpy as np
import pytest

from agents import FirstFit, make_broker
from cloudsim import ClusterSpec, JobSpec, Simulation, SimulationStalledError, simulate
from cloudsim.engine.faults import RandomFaults
from conftest import task
from traces import generate


def test_the_same_seed_gives_the_same_failures_and_each_machine_alternates():
    first = list(itertools.islice(RandomFaults(50, 5, seed=7).events(4), 400))
    again = list(itertools.islice(RandomFaults(50, 5, seed=7).events(4), 400))
    other = list(itertools.islice(RandomFaults(50, 5, seed=8).events(4), 400))
    assert first == again and first != other
    times = [e.time for e in first]
    assert times == sorted(times)
    for machine in range(4):
        states = [e.state for e in first if e.machine == machine]
        assert states[0] == "failed"
        assert all(a != b for a, b in zip(states, states[1:]))  # failed, up, failed, up, ...


def test_up_and_repair_times_have_the_means_asked_for():
    events = list(itertools.islice(RandomFaults(100, 10, seed=0).events(1), 4000))
    times = np.array([0.0] + [e.time for e in events])
    up, down = np.diff(times)[0::2], np.diff(times)[1::2]  # alternating, starting up at t=0
    # 2,000 exponential draws each: the standard error of the mean is mean/sqrt(2000), about 2.2 %.
    assert up.mean() == pytest.approx(100, rel=0.1)
    assert down.mean() == pytest.approx(10, rel=0.1)


def test_only_the_machines_named_fail():
    events = list(itertools.islice(RandomFaults(10, 1, seed=0, machines=[2]).events(3), 50))
    assert {e.machine for e in events} == {2}
    with pytest.raises(ValueError, match="no machine 5"):
        next(RandomFaults(10, 1, machines=[5]).events(3))
    with pytest.raises(ValueError, match="mtbf must be a positive"):
        RandomFaults(0, 1)


@pytest.mark.parametrize("on_failure", ["requeue", "fail"])
@pytest.mark.parametrize("tick", [None, 1.0])
def test_under_frequent_failures_every_instance_is_accounted_for(on_failure, tick):
    # RLSK's jobs last at most 300 steps: with a failure every 200 steps per cluster on
    # average, a re-queued instance still finds a long enough up time within a few tries.
    jobs, cluster = generate("rlsk", 150, seed=2, load=0.9)
    submitted = sum(j.instances for j in jobs)
    result = simulate(cluster, jobs, FirstFit(), tick=tick, faults=RandomFaults(200, 30, seed=1),
                      on_failure=on_failure)
    s = result.summary
    assert s["instances_finished"] + s["instances_failed"] == submitted
    assert s["instance_restarts"] > 0 if on_failure == "requeue" else s["instances_failed"] > 0
    assert s["instances_failed"] == 0 if on_failure == "requeue" else s["instance_restarts"] == 0
    # Each instance ends once; a re-queued run is an extra row before its final one.
    runs = result.instances()
    final = runs[runs.outcome != "requeued"]
    assert not final.duplicated(["job_id", "task_id", "instance"]).any() and len(final) == submitted
    assert (runs.outcome == "requeued").sum() == s["instance_restarts"]
    # No instance started on a machine while it was failed, and none ran across a failure.
    model = RandomFaults(200, 30, seed=1).events(cluster.machines)
    events = itertools.takewhile(lambda e: e.time <= result.makespan, model)
    failed_since = {}
    for event in events:
        if event.state == "failed":
            failed_since[event.machine] = event.time
            continue
        on_machine = result.groups[result.groups.machine == event.machine]
        fail, repair = failed_since.pop(event.machine), event.time
        assert not ((on_machine.start >= fail) & (on_machine.start < repair)).any()
        assert not ((on_machine.start < fail) & (on_machine.end > fail)).any()


def test_a_fault_model_changes_nothing_before_its_first_failure():
    jobs, cluster = generate("deeprm", 40, seed=0, load=0.5)
    faults = RandomFaults(1e9, 1, seed=0)  # the first failure comes long after the run
    plain = simulate(cluster, jobs, make_broker("sjf"))
    with_model = simulate(cluster, jobs, make_broker("sjf"), faults=faults)
    assert with_model.summary["makespan"] == plain.summary["makespan"]
    assert with_model.groups.equals(plain.groups)


class Never:
    def decide(self, view):
        return None


@pytest.mark.parametrize("tick", [None, 1.0])
def test_a_broker_that_never_starts_work_stalls_even_with_an_endless_fault_model(tick):
    cluster = ClusterSpec.uniform(2, {"cpu": 1, "memory": 1})
    jobs = [JobSpec("A", 0, (task("a", 1, 1, 1, 5),))]
    sim = Simulation(cluster, jobs, Never(), tick=tick, faults=RandomFaults(3, 1, seed=0), max_idle_ticks=50)
    with pytest.raises(SimulationStalledError, match="keeps answering None"):
        sim.run()


def test_faults_must_be_a_model():
    cluster = ClusterSpec.uniform(1, {"cpu": 1, "memory": 1})
    with pytest.raises(TypeError, match="events"):
        Simulation(cluster, [], FirstFit(), faults=[1, 2])
