"""Devices (GPUs) in the engine: requests, the default device rule, the checks of a broker's choice, the fit
matrix, giving devices back, and device accounting under every heuristic with faults.

Expected values are worked out by hand from the resource model of docs/gpu.md's reference study: a device has
1,000 milli; a sharing instance takes part of one device (the tightest that holds it, lowest index on ties);
an exclusive one takes whole, completely free devices (the lowest-indexed).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.registry import broker_spec
from agents import BROKERS, LEARNED, make_broker
from cloudsim import ClusterSpec, Decision, InvalidDecisionError, JobSpec, Simulation, TaskSpec, simulate
from cloudsim.engine.devices import default_devices, device_fit_count
from cloudsim.engine.faults import RandomFaults
from cloudsim.engine.specs import DeviceRequest, UnschedulableTaskError

# Brokers that plan by the grid need a signal as well: tests/test_carbon_study.py runs them.
HEURISTICS = sorted(n for n in BROKERS if n not in LEARNED and not broker_spec(n).grid)


def pod(job, milli, count=1, cpu=1.0, duration=10.0, at=0.0, accepts=(), instances=1):
    return JobSpec(job, at, (TaskSpec(0, instances, {"cpu": cpu}, duration, devices=DeviceRequest(count, milli),
                                      accepts=accepts),))


def gpu_cluster(*devices, models=None, cpu=16.0):
    return ClusterSpec(("cpu",), tuple((cpu,) for _ in devices), devices=devices,
                       attributes={"model": models} if models else ())


# ------------------------------------------------------------------ the model
@pytest.mark.parametrize("count, milli", [(1, 0), (1, 1001), (1, -5), (0, 1000), (2, 500), (1.0, 500)])
def test_a_device_request_outside_the_model_is_refused(count, milli):
    with pytest.raises(ValueError):
        DeviceRequest(count, milli)


def test_the_default_rule_gives_a_sharing_instance_the_tightest_device():
    free = np.array([1000, 400, 700, 400, -1])
    assert default_devices(free, 1, 300) == (1,)   # 400 is the least that holds 300; 1 before 3 on the tie
    assert default_devices(free, 1, 500) == (2,)   # 400 cannot hold it; 700 is the next
    assert default_devices(free, 1, 1000) == (0,)  # whole: the only free device
    assert default_devices(np.array([200, 100]), 1, 300) is None


def test_the_default_rule_gives_an_exclusive_instance_whole_free_devices_in_order():
    free = np.array([1000, 700, 1000, 1000, -1])
    assert default_devices(free, 2, 1000) == (0, 2)  # device 1 is partly used: never given to it
    assert default_devices(free, 3, 1000) == (0, 2, 3)
    assert default_devices(free, 4, 1000) is None


def test_instances_that_fit_devices_one_after_another():
    assert device_fit_count(np.array([1000, 400, -1]), 1, 300) == 3 + 1  # 1000 holds three, 400 one
    assert device_fit_count(np.array([1000, 1000, 900, 1000]), 2, 1000) == 1  # three free devices: one pair
    assert device_fit_count(np.array([1000]), 0, 0) > 10**9  # no device asked: devices never limit


# ------------------------------------------------------------------ the engine
def test_the_view_shows_devices_and_the_engine_applies_the_default_rule():
    sim = Simulation(gpu_cluster(2, 4, models=("T4", "V100")), [pod(0, 600), pod(1, 300), pod(2, 1000, count=2)])
    view = sim.next_decision()
    assert view.device_free.tolist() == [[1000, 1000, -1, -1], [1000, 1000, 1000, 1000]]
    assert view.device_request.tolist() == [[1, 600], [1, 300], [2, 1000]]
    assert view.machine_attribute("model") == ("T4", "V100")
    sim.apply(Decision(0, 0))   # 600 on machine 0: both devices free, the first
    view = sim.next_decision()
    assert view.device_free[0].tolist() == [400, 1000, -1, -1]
    assert view.fits.tolist() == [[True, False], [True, True]]  # one whole device left on machine 0: not a pair
    sim.apply(Decision(0, 0))   # 300: the tightest device that holds it is device 0 (400 free)
    view = sim.next_decision()
    assert view.device_free[0].tolist() == [100, 1000, -1, -1]
    # the exclusive pair needs two whole devices: machine 0 has one left
    assert view.fits.tolist() == [[False], [True]]
    sim.apply(Decision(1, 0))
    assert sim.next_decision().device_free[1].tolist() == [0, 0, 1000, 1000]


def test_a_broker_may_name_the_devices_and_the_engine_checks_them():
    cluster = gpu_cluster(3, models=("T4",))
    sim = Simulation(cluster, [pod(0, 600), pod(1, 500), pod(2, 1000, count=2), pod(3, 1000)])
    view = sim.next_decision()
    sim.apply(Decision(0, 0, devices=(2,)))  # not the default rule's device 0: the broker's choice stands
    view = sim.next_decision()
    assert view.device_free[0].tolist() == [1000, 1000, 400]
    for devices, problem in [((2,), "device 2 has 400 milli free; the task needs 500"),
                             ((3,), "device 3: no such device (the machine has 3"),
                             ((0, 1), "names 2 device(s)")]:
        with pytest.raises(InvalidDecisionError, match=re.escape(problem)):
            sim.apply(Decision(0, 0, devices=devices))
        view = sim.next_decision()
    with pytest.raises(InvalidDecisionError, match="device 2 is partly used .400 of 1000 milli free.: an exclusive"):
        sim.apply(Decision(0, 1, devices=(0, 2)))
    view = sim.next_decision()
    sim.apply(Decision(0, 1, devices=(0, 1)))
    assert sim.next_decision().device_free[0].tolist() == [0, 0, 400]


def test_what_a_device_decision_cannot_be():
    cluster = ClusterSpec(("cpu",), ((16.0,), (16.0,)), devices=(2, 2), attributes={"model": ("T4", "V100")})
    jobs = [pod(0, 500, accepts={"model": "V100"}, instances=2), JobSpec(1, 0.0, (TaskSpec(0, 1, {"cpu": 1}, 5.0),))]
    sim = Simulation(cluster, jobs)
    sim.next_decision()
    cases = [(Decision(0, 0), "the machine's model 'T4' is not one the task accepts .V100."),
             (Decision(1, 1, devices=(0,)), "names devices .0,., but the task asks for none"),
             (Decision(1, 0, 2, devices=(0,)), "names devices for 2 instances"),
             (Decision(1, 0, 1, at=5.0), "cannot be reserved for later")]
    for decision, problem in cases:
        with pytest.raises(InvalidDecisionError, match=problem):
            sim.apply(decision)
        sim.next_decision()
    sim.apply(Decision(1, 0, 2))  # two sharing instances of 500: device 0 holds both (tightest after the first)
    assert sim.next_decision().device_free[1].tolist() == [0, 1000]


def test_devices_come_back_when_instances_end_or_fail():
    cluster = gpu_cluster(2)
    jobs = [pod(0, 300, duration=5.0), pod(1, 1000, duration=8.0), pod(2, 1000, count=2, at=1.0, duration=2.0)]
    sim = Simulation(cluster, jobs, make_broker("fcfs"))
    result = sim.run()
    # 300 on device 0 and the whole device 1 at t=0; the pair waits for both devices: t=8 (device 0 free at 5)
    starts = result.tasks.set_index("job_id")["start_time"].to_dict()
    assert starts == {0: 0.0, 1: 0.0, 2: 8.0}
    assert sim.state.device_free.tolist() == [[1000, 1000]]
    assert sim.record.group_devices == {0: [(0,)], 1: [(1,)], 2: [(0, 1)]}


def test_a_task_no_machine_can_hold_is_refused_before_the_run():
    cluster = gpu_cluster(8, 4, models=("V100", "T4"))
    with pytest.raises(UnschedulableTaskError,
                       match="asks for 9 device.s. of 1000 milli .*the most any machine has: 8"):
        simulate(cluster, [pod(0, 1000, count=9)], make_broker("first-fit"))
    with pytest.raises(UnschedulableTaskError, match=r"model in \{A100\} \(the cluster has T4, V100\)"):
        simulate(cluster, [pod(0, 500, accepts={"model": "A100"})], make_broker("first-fit"))
    with pytest.raises(UnschedulableTaskError, match="the most any machine has: 0"):
        simulate(ClusterSpec.uniform(2, {"cpu": 4}), [pod(0, 500)], make_broker("first-fit"))


def test_machines_without_devices_behave_as_before():
    jobs = [JobSpec(j, float(j), (TaskSpec(0, 3, {"cpu": 1.5}, 4.0 + j),)) for j in range(6)]
    plain = simulate(ClusterSpec.uniform(2, {"cpu": 4.0}), jobs, make_broker("tetris"))
    spelled = simulate(ClusterSpec(("cpu",), ((4.0,), (4.0,)), devices=(0, 0)), jobs, make_broker("tetris"))
    timings = {"sim_wall_s"}
    assert plain.groups.equals(spelled.groups)
    assert {k: v for k, v in plain.summary.items() if k not in timings} == \
        {k: v for k, v in spelled.summary.items() if k not in timings}


# ------------------------------------------------------------------ accounting under every broker
class Audit:
    """Wraps a broker; at every view checks the devices against the record: each device holds 0..1,000 milli,
    the milli taken equal what the running groups' instances asked for, and a device an exclusive instance
    holds holds nothing else."""

    def __init__(self, broker, sim_box):
        self.broker, self.sim_box, self.name = broker, sim_box, broker.name
        self.views = 0

    def decide(self, view):
        sim = self.sim_box[0]
        free = view.device_free
        held = view.device_count
        for m in range(view.num_machines):
            assert ((free[m, :held[m]] >= 0) & (free[m, :held[m]] <= 1000)).all()
            assert (free[m, held[m]:] == -1).all()
        taken = np.where(free >= 0, 1000 - free, 0)
        expected = np.zeros_like(taken)
        users = {}
        groups = sim.record.groups
        tasks = sim.tasks
        for gid, devices in sim.record.group_devices.items():
            if not groups.running(gid):
                continue
            row = gid - groups.base
            machine, task = groups.machine[row], groups.task[row]
            milli = int(tasks.task_device_milli[task - tasks.task_base])
            for instance in devices:
                for d in instance:
                    expected[machine, d] += milli
                    users.setdefault((machine, d), []).append(milli)
        assert (taken == expected).all()
        for holders in users.values():
            assert 1000 not in holders or holders == [1000]  # an exclusive instance holds its device alone
        self.views += 1
        return self.broker.decide(view)


@st.composite
def gpu_workloads(draw):
    machines = draw(st.integers(1, 3))
    devices = tuple(draw(st.lists(st.integers(0, 4), min_size=machines, max_size=machines)))
    if not any(devices):
        devices = (2,) + devices[1:]
    models = tuple(draw(st.sampled_from(["A", "B"])) for _ in range(machines))
    jobs = []
    for j in range(draw(st.integers(1, 8))):
        gpu = draw(st.sampled_from(["none", "share", "whole"]))
        at = float(draw(st.integers(0, 6)))
        duration = float(draw(st.integers(1, 6)))
        if gpu == "none":
            jobs.append(JobSpec(j, at, (TaskSpec(0, draw(st.integers(1, 3)), {"cpu": 1.0}, duration),)))
            continue
        usable = [m for m in range(machines) if devices[m]]
        model = models[draw(st.sampled_from(usable))]
        accepts = {"model": model} if draw(st.booleans()) else ()
        fitting = max(devices[m] for m in usable if not accepts or models[m] == model)
        request = DeviceRequest(1, draw(st.sampled_from([100, 250, 500, 700]))) if gpu == "share" else \
            DeviceRequest(draw(st.integers(1, fitting)), 1000)
        jobs.append(JobSpec(j, at, (TaskSpec(0, draw(st.integers(1, 3)), {"cpu": 1.0}, duration, devices=request,
                                             accepts=accepts),)))
    jobs.sort(key=lambda job: job.submit_time)
    cluster = ClusterSpec(("cpu",), tuple((8.0,) for _ in range(machines)), devices=devices,
                          attributes={"model": models})
    return cluster, jobs


@settings(max_examples=25, deadline=None)
@given(workload=gpu_workloads(), faults=st.booleans(), broker=st.sampled_from(HEURISTICS))
def test_devices_are_accounted_for_under_every_broker(workload, faults, broker):
    cluster, jobs = workload
    box = []
    audit = Audit(make_broker(broker, seed=0), box)
    sim = Simulation(cluster, jobs, audit, faults=RandomFaults(10.0, 2.0, seed=3) if faults else None)
    box.append(sim)
    result = sim.run()
    instances = sum(job.instances for job in jobs)
    assert result.summary["instances_finished"] + result.summary["instances_failed"] == instances
    assert (sim.state.device_free == np.where(sim.state.device_free >= 0, 1000, -1)).all()  # all given back
    assert audit.views > 0


@pytest.mark.parametrize("broker", ["tetris", "deepjs"])
def test_brokers_that_keep_best_pairs_on_large_clusters_follow_devices(broker):
    # 500 machines or more: these brokers keep each machine's best pairs, which know resources only; on a
    # cluster with devices they score the view's fit pairs instead. Machine 0 has the room in cpu but no GPU left
    # after the first pod: the second must go elsewhere.
    cluster = ClusterSpec(("cpu", "memory"), tuple((16.0, 16.0) for _ in range(500)), devices=(1,) * 500)
    jobs = [JobSpec(j, float(j), (TaskSpec(0, 1, {"cpu": 1.0, "memory": 1.0}, 100.0,
                                           devices=DeviceRequest(1, 1000)),)) for j in range(3)]
    result = simulate(cluster, jobs, make_broker(broker))
    assert result.summary["instances_finished"] == 3
    assert result.groups["machine"].nunique() == 3  # one whole GPU each: three machines


def test_easy_reserves_for_a_cpu_head_on_a_gpu_cluster_and_backfills_a_gpu_task():
    cluster = ClusterSpec(("cpu",), ((4.0,),), devices=(2,))
    jobs = [JobSpec(0, 0.0, (TaskSpec(0, 1, {"cpu": 3.0}, 10.0),)),
            JobSpec(1, 1.0, (TaskSpec(0, 1, {"cpu": 3.0}, 4.0),)),  # fits at 10 only: reserved
            JobSpec(2, 2.0, (TaskSpec(0, 1, {"cpu": 1.0}, 5.0, devices=DeviceRequest(1, 500)),))]  # ends at 7
    sim = Simulation(cluster, jobs, make_broker("easy"))
    result = sim.run()
    starts = result.tasks.set_index("job_id")["start_time"].to_dict()
    assert starts == {0: 0.0, 1: 10.0, 2: 2.0}  # the GPU task backfilled around the reservation
    assert result.reservations["outcome"].tolist() == ["started"]
    assert sim.state.device_free.tolist() == [[1000, 1000]] and sim.record.group_devices == {1: [(0,)]}


def test_a_plan_in_the_making_shows_the_devices_its_decisions_took():
    from agents.planning import PlannedView

    sim = Simulation(gpu_cluster(2, 2), [pod(0, 1000, count=2), pod(1, 300)])
    planned = PlannedView(sim.next_decision())
    planned.apply(Decision(0, 0))  # both whole GPUs of machine 0
    assert planned.device_free.tolist() == [[0, 0], [1000, 1000]]
    assert planned.fits.tolist() == [[False, False], [False, True]]
