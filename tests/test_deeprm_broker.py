"""DeepRM and DeepRM_Plus as brokers of the core: the numpy forward equals the torch networks, placements
follow DeepRM's earliest fit within the horizon (worked by hand), and they run on any cluster."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from agents import make_broker
from agents.deeprm.agent import DeepRMNet, snapshot_tensors
from agents.deeprm.broker import DeepRMBroker, NumpyDeepRM
from agents.deeprm.plus import DeepRMPlusNet
from cloudsim import ClusterSpec, JobSpec, TaskSpec, simulate
from cloudsim.engine.envs.deeprm import DeepRMParams

PARAMS = DeepRMParams()


def random_snapshot(rng, params, batch=7):
    p = params
    return {"used": rng.integers(0, p.res_slot + 1, (batch, p.horizon, p.resources)),
            "slot_len": rng.integers(0, p.max_job_len + 1, (batch, p.slots)),
            "slot_size": rng.integers(0, p.max_job_size + 1, (batch, p.slots, p.resources)),
            "backlog_n": rng.integers(0, p.backlog + 1, batch),
            "since_new": rng.integers(0, p.max_track_since_new + 1, batch)}


@pytest.mark.parametrize("net_type, network", [(DeepRMNet, "dense"), (DeepRMPlusNet, "cnn")])
def test_the_numpy_forward_is_the_networks_forward(net_type, network):
    torch.manual_seed(3)
    net = net_type(PARAMS)
    for parameter in net.parameters():  # weights larger than the initialisation's, so that differences show
        torch.nn.init.normal_(parameter, std=0.3)
    snap = random_snapshot(np.random.default_rng(0), PARAMS)
    with torch.no_grad():
        expected = net.logits_snapshot(snapshot_tensors(snap), net.prefix_tables()).numpy()
    weights = {name: value.detach().numpy().astype(np.float64) for name, value in net.state_dict().items()}
    got = NumpyDeepRM(PARAMS, weights, network).logits(snap)
    assert got == pytest.approx(expected, rel=1e-4, abs=1e-4)


def always_slot_zero(params=PARAMS) -> NumpyDeepRM:
    """A dense policy whose logits are its output bias: slot 0 with probability 1 - 6e-9."""
    height, width = params.image_shape
    bias = np.full(params.slots + 1, -10.0)
    bias[0] = 10.0
    weights = {"hidden.weight": np.zeros((20, height * width)), "hidden.bias": np.zeros(20),
               "out.weight": np.zeros((params.slots + 1, 20)), "out.bias": bias}
    return NumpyDeepRM(params, weights, "dense")


def job(j, at, cpu, duration):
    return JobSpec(j, at, (TaskSpec(0, 1, {"cpu": cpu, "memory": 1.0}, duration),))


def test_a_placement_is_the_earliest_fit_within_the_horizon_worked_by_hand():
    # One machine of 10 units, tick 1 (the jobs submitted at 0 arrive just after the wake at 0, so the first
    # decisions are at 1). A (6 cpu, 10 steps) starts at 1. B (6 cpu, 2 steps) fits from 11: offset 10 is below
    # T - len = 18, so it is reserved to start at 11. C (6 cpu, 15 steps) fits from 13 (after B): its offset is
    # not below 20 - 15 = 5 until t = 9 (offset 4): DeepRM waits, then reserves it at 13; it ends at 28.
    cluster = ClusterSpec.uniform(1, {"cpu": 10.0, "memory": 10.0})
    jobs = [job(0, 0, 6.0, 10), job(1, 0, 6.0, 2), job(2, 0, 6.0, 15)]
    result = simulate(cluster, jobs, DeepRMBroker(always_slot_zero()), tick=1.0)
    starts = result.groups.set_index("job_id").start.to_dict()
    assert starts == {0: 1.0, 1: 11.0, 2: 13.0}
    assert result.summary["makespan"] == 28


def test_event_driven_it_waits_a_step_and_is_asked_again():
    # Without a tick nothing happens between 0 and 10 but the broker's own wake-ups, one step apart:
    # C (15 steps) after A (10 steps) is reserved once its offset is below 5, and starts at 10.
    cluster = ClusterSpec.uniform(1, {"cpu": 10.0, "memory": 10.0})
    result = simulate(cluster, [job(0, 0, 6.0, 10), job(1, 0, 6.0, 15)], DeepRMBroker(always_slot_zero()))
    assert result.groups.set_index("job_id").start.to_dict() == {0: 0.0, 1: 10.0}


def test_on_many_machines_the_most_probable_placeable_draw_wins_ties_to_the_first_machine():
    # Two machines of 10 units, event-driven. A (6 units, 10 steps) goes to machine 0 (both machines draw
    # slot 0 with the same probability: the first machine wins). B (6 units, 3 steps): machine 0 would
    # reserve it at 10 (offset 10 < 17), machine 1 starts it now; their images differ, and so may their
    # probabilities, but this policy ignores the image: equal probabilities, so machine 0 reserves it.
    cluster = ClusterSpec.uniform(2, {"cpu": 10.0, "memory": 10.0})
    result = simulate(cluster, [job(0, 0, 6.0, 10), job(1, 0, 6.0, 3)], DeepRMBroker(always_slot_zero()))
    groups = result.groups.set_index("job_id")
    assert groups.machine.to_dict() == {0: 0, 1: 0} and groups.start.to_dict() == {0: 0.0, 1: 10.0}


def test_the_shipped_policies_replay_on_a_large_cluster_in_worker_processes(tmp_path):
    # Workers are forked after the policies were loaded: a torch forward in a worker could hang there.
    argv = [sys.executable, "-m", "cloudsim", "replay", "--synthetic-jobs", "3", "--machines", "12",
            "--brokers", "sjf,deeprm,deeprm-plus", "--workers", "2", "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["finished"] == {b: summary["instances"] for b in ("sjf", "deeprm", "deeprm-plus")}
    assert "trained on one machine" in done.stderr and "disk is not shown" in done.stderr


def test_a_cluster_with_one_resource_is_refused_by_name():
    broker = make_broker("deeprm")
    with pytest.raises(ValueError, match="its images show 2 resources; this cluster has 1"):
        broker.check_cluster(ClusterSpec.uniform(3, {"cpu": 1.0}))


@pytest.mark.parametrize("name", ["deeprm", "deeprm-plus"])
def test_a_softmax_row_met_before_is_looked_up_with_the_same_bits_and_decisions(name, monkeypatch):
    # The broker keeps each softmax row by what the policy reads of its machine: a row computed in a batch of
    # others equals the row alone (the arithmetic is row by row), so a replay that looks rows up decides
    # exactly as one that computes every row at every decision, with far fewer rows computed.
    from traces import alibaba_like
    import agents.deeprm.broker as module

    broker = make_broker(name)
    snap = random_snapshot(np.random.default_rng(3), broker.params, batch=9)
    batch = broker._softmax(snap)
    for row in range(9):
        alone = broker._softmax({k: v[row:row + 1] for k, v in snap.items()})
        assert np.array_equal(alone[0], batch[row])
    cluster = ClusterSpec.uniform(3, {"cpu": 64.0, "memory": 1.0})
    jobs = alibaba_like(6, seed=1)

    def replay(memo_rows):
        monkeypatch.setattr(module, "MEMO_ROWS", memo_rows)
        broker = make_broker(name)
        computed = []
        softmax = broker._softmax
        broker._softmax = lambda snap: computed.append(len(snap["used"])) or softmax(snap)
        result = simulate(cluster, jobs, broker)
        return result.groups, sum(computed)

    (looked_up, few), (computed, every) = replay(module.MEMO_ROWS), replay(0)  # 0: rows forgotten at every call
    assert looked_up.equals(computed) and few < every
