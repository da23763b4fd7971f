"""Machines going down and failing during a run: no new work, killed instances re-queued or failed."""

import pytest

from agents import FirstFit
from cloudsim import ClusterSpec, JobSpec, MachineEvent, Simulation, SimulationStalledError, simulate
from conftest import task

ONE_CPU = {"cpu": 1, "memory": 1}


def test_a_down_machine_takes_no_new_work_but_keeps_running_its_instances():
    cluster = ClusterSpec.uniform(2, {"cpu": 2, "memory": 2})
    jobs = [JobSpec("A", 0, (task("a", 1, 1, 1, 10),)), JobSpec("B", 5, (task("b", 1, 1, 1, 2),))]
    # Without the event first-fit puts b beside a on machine 0; machine 0 is down from t=4.
    result = simulate(cluster, jobs, FirstFit(), machine_events=[MachineEvent(4, 0, "down")])
    groups = result.groups.set_index("task")
    assert (groups.loc[0, "machine"], groups.loc[0, "end"], groups.loc[0, "outcome"]) == (0, 10, "finished")
    assert (groups.loc[1, "machine"], groups.loc[1, "start"]) == (1, 5)
    assert simulate(cluster, jobs, FirstFit()).groups.machine.tolist() == [0, 0]


def test_a_failed_machine_requeues_its_instances_and_they_run_again():
    cluster = ClusterSpec.uniform(1, {"cpu": 2, "memory": 2})
    jobs = [JobSpec("A", 0, (task("a", 2, 1, 1, 10),))]
    events = [MachineEvent(4, 0, "failed"), MachineEvent(6, 0, "up")]
    result = simulate(cluster, jobs, FirstFit(), machine_events=events)
    # Both instances run 0-4, are killed, wait for the machine, and run 6-16.
    assert result.summary["makespan"] == 16
    assert result.summary["instance_restarts"] == 2
    assert result.summary["instances_finished"] == 2 and result.summary["instances_failed"] == 0
    assert result.groups[["start", "end", "outcome"]].values.tolist() == [[0, 4, "requeued"], [6, 16, "finished"]]
    assert result.groups.first_instance.tolist() == [0, 0]  # the same instances, run again


def test_the_fail_policy_counts_killed_instances_as_failed():
    cluster = ClusterSpec.uniform(2, ONE_CPU)
    jobs = [JobSpec("A", 0, (task("a", 2, 1, 1, 10),)), JobSpec("B", 1, (task("b", 1, 1, 1, 3),))]
    result = simulate(cluster, jobs, FirstFit(), machine_events=[MachineEvent(4, 1, "failed")], on_failure="fail")
    # a's instance on machine 1 fails at 4 and machine 1 stays out of service; b, waiting since 1,
    # gets machine 0 when a's other instance ends there at 10, and runs 10-13.
    s = result.summary
    assert (s["instances_finished"], s["instances_failed"], s["instance_restarts"]) == (2, 1, 0)
    assert s["instances_finished"] + s["instances_failed"] == s["instances"] == 3
    assert result.jobs.set_index("job_id").finish_time.to_dict() == {"A": 10, "B": 13}


def test_tick_mode_replays_failures_too():
    cluster = ClusterSpec.uniform(1, ONE_CPU)
    jobs = [JobSpec("A", 0, (task("a", 1, 1, 1, 3),))]
    # Tick 1: the wake at 0 comes before A arrives, so a starts at the wake at 1; it is killed at 2,
    # the machine is back at 2.5, and a starts again at the wake at 3 and ends at 6.
    result = simulate(cluster, jobs, FirstFit(), tick=1,
                      machine_events=[MachineEvent(2, 0, "failed"), MachineEvent(2.5, 0, "up")])
    assert result.groups[["start", "end"]].values.tolist() == [[1, 2], [3, 6]]
    assert result.summary["makespan"] == 6


def test_a_run_whose_only_machine_never_comes_back_is_reported_as_stalled():
    cluster = ClusterSpec.uniform(1, ONE_CPU)
    jobs = [JobSpec("A", 0, (task("a", 1, 1, 1, 5),))]
    with pytest.raises(SimulationStalledError, match="1 of 1 machine"):
        simulate(cluster, jobs, FirstFit(), machine_events=[MachineEvent(1, 0, "failed")])


def test_machine_events_are_checked():
    cluster = ClusterSpec.uniform(1, ONE_CPU)
    with pytest.raises(ValueError, match="state must be one of"):
        MachineEvent(1, 0, "rebooting")
    with pytest.raises(ValueError, match="time must be finite and >= 0"):
        MachineEvent(-1, 0, "up")
    with pytest.raises(ValueError, match="no such machine"):
        Simulation(cluster, [], FirstFit(), machine_events=[MachineEvent(1, 3, "down")])
    with pytest.raises(ValueError, match="on_failure must be one of"):
        Simulation(cluster, [], FirstFit(), on_failure="ignore")
