"""DeepRM_Plus's workload (Poisson arrivals), the FCFS and HRRN baselines in DeepRM's environment,
and its training from the command line. Expected values are worked out by hand in the comments."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from cloudsim.engine.envs.deeprm import (DeepRMBatch, DeepRMEnv, DeepRMParams, fcfs_actions, hrrn_actions,
                                  jobsets_at_load, poisson_jobsets, poisson_rate_for_load, sjf_actions)

# 4 units of 2 resources, 6 steps of horizon, 2 slots
ROOMY = dict(slots=2, horizon=6, res_slot=4, max_job_len=5, max_job_size=4, backlog=4, resources=2)


def jobs(*rows):
    """(arrival, length, (size0, size1)) rows -> lengths, sizes, arrivals."""
    arrivals, lengths, sizes = zip(*rows)
    return np.array(lengths), np.array(sizes), np.array(arrivals)


def test_several_jobs_arriving_in_one_step_join_in_index_order():
    # three jobs at time 0 (the code's form would skip index 0; with arrival times nothing is skipped):
    # the first two fill the slots, the third waits in the backlog
    lengths, sizes, arrivals = jobs((0, 1, (1, 1)), (0, 2, (1, 1)), (0, 1, (1, 1)), (2, 1, (1, 1)))
    batch = DeepRMBatch(DeepRMParams(**ROOMY), lengths, sizes, arrivals)
    assert batch.slot[0].tolist() == [0, 1] and batch.backlog_n[0] == 1
    assert batch.enter[0].tolist() == [0, 0, 0, -1]
    reward, _ = batch.step(np.array([2]))  # void: at time 1, three jobs wait: -(1 + 1/2 + 1)
    assert batch.time[0] == 1 and reward[0] == pytest.approx(-2.5)
    batch.step(np.array([2]))
    assert batch.enter[0, 3] == 2  # the fourth arrives at 2, to the backlog
    assert batch.backlog_n[0] == 2


def test_arrival_times_must_be_whole_and_in_order():
    lengths, sizes, _ = jobs((0, 1, (1, 1)), (1, 1, (1, 1)))
    params = DeepRMParams(**ROOMY)
    with pytest.raises(ValueError, match="must not decrease"):
        DeepRMBatch(params, lengths, sizes, np.array([3, 1]))
    with pytest.raises(ValueError, match="shape"):
        DeepRMBatch(params, lengths, sizes, np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="whole time steps"):
        DeepRMBatch(params, lengths, sizes, np.array([0.5, 1]))


def test_fcfs_and_hrrn_by_hand():
    # A (len 3, all 4 units of resource 0) and Q (len 2, 2 units) arrive at 0; P (len 1, 2 units) at 3
    lengths, sizes, arrivals = jobs((0, 3, (4, 1)), (0, 2, (2, 1)), (3, 1, (2, 1)))
    batch = DeepRMBatch(DeepRMParams(**ROOMY), lengths, sizes, arrivals)
    assert fcfs_actions(batch).tolist() == [0]  # A is the oldest and fits
    batch.step(np.array([0]))
    # Q is now the oldest, and does not fit before A ends: FCFS waits (void), so does HRRN
    assert fcfs_actions(batch).tolist() == [2] and hrrn_actions(batch).tolist() == [2]
    for _ in range(3):
        batch.step(np.array([2]))
    # time 3: A has ended, P arrived into slot 0; both fit. Q waited 3: ratio (3 + 2) / 2 = 2.5;
    # P: (0 + 1) / 1 = 1. HRRN and FCFS take Q (slot 1), SJF takes P (slot 0)
    assert batch.time[0] == 3 and batch.slot[0].tolist() == [2, 1]
    assert hrrn_actions(batch).tolist() == [1]
    assert fcfs_actions(batch).tolist() == [1]
    assert sjf_actions(batch).tolist() == [0]


def test_poisson_jobsets_hold_5_to_50_jobs_at_the_rate_asked():
    params = DeepRMParams(slots=10)
    # the code's sizes: mean length 0.8 x 2 + 0.2 x 12.5 = 4.1 steps, mean demand (7.5 + 1.5) / 2 = 4.5
    # of 10 units: one job per step is 4.1 x 4.5 / 10 = 184.5 % load, so 140 % is 0.7588 jobs per step
    assert poisson_rate_for_load(1.4, params) == pytest.approx(1.4 / 1.845)
    lengths, sizes, arrivals = poisson_jobsets(7, 400, params, rate=0.5)
    counts = (lengths > 0).sum(1)
    assert counts.min() >= 5 and counts.max() <= 50 and 25 < counts.mean() < 30  # uniform on 5..50: 27.5
    assert np.all(np.diff(arrivals, axis=1) >= 0)
    real = lengths > 0
    assert np.all(real[:, :5]) and np.all(np.diff(real.astype(int), axis=1) <= 0)  # jobs first, padding after
    # the mean gap between arrivals is 1 / rate = 2 steps (the floor loses nothing on average over a sequence)
    spans = arrivals[np.arange(400), counts - 1] - arrivals[:, 0]
    assert (spans.sum() / (counts - 1).sum()) == pytest.approx(2.0, rel=0.05)
    short = lengths[real] <= 3
    assert short.mean() == pytest.approx(0.8, abs=0.03)
    again = poisson_jobsets(7, 400, params, rate=0.5)
    assert all(np.array_equal(a, b) for a, b in zip(again, (lengths, sizes, arrivals)))
    with pytest.raises(ValueError, match="rate"):
        poisson_jobsets(7, 1, params, rate=0)
    with pytest.raises(ValueError, match="load"):
        jobsets_at_load("poisson", 0, 1, params, -1.0)


def test_the_gymnasium_environment_replays_a_poisson_jobset():
    lengths, sizes, arrivals = jobs((0, 1, (1, 1)), (0, 2, (1, 1)), (1, 1, (1, 1)))
    env = DeepRMEnv(**ROOMY)
    env.reset(options={"jobset": {"lengths": lengths, "sizes": sizes, "arrivals": arrivals}})
    done = False
    while not done:
        _, _, done, _, info = env.step(int(sjf_actions(env.batch)[0]))
    assert [(j["enter_time"], j["start_time"], j["finish_time"]) for j in info["jobs"]] == \
        [(0, 0, 1), (0, 0, 2), (1, 1, 2)]


def test_deeprm_plus_trains_from_the_command_line_and_acts_as_a_broker(tmp_path, capsys):
    from agents import make_deeprm_broker
    from cloudsim.cli import main

    out = tmp_path / "plus"
    argv = ["train", "deeprm-plus", "--out", str(out), "--iterations", "2", "--jobsets", "2", "--episodes", "2",
            "--clone-jobsets", "3", "--clone-epochs", "2", "--save-every", "1"]
    assert main(argv) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["agent"] == "deeprm-plus" and summary["iterations"] == 2
    clone = json.loads((out / "clone.json").read_text())
    assert len(clone["test_accuracy"]) == 2 and clone["train_pairs"] + clone["test_pairs"] == clone["pairs"]
    config = json.loads((out / "config.json").read_text())
    assert (config["network"], config["workload"], config["load"]) == ("cnn", "poisson", 1.4)
    policy = make_deeprm_broker("deeprm-plus", checkpoint=str(out / "policy.pt"), seed=0)
    assert policy.name == "deeprm-plus"
    params = DeepRMParams(slots=10)
    batch = DeepRMBatch(params, *jobsets_at_load("poisson", 3, 2, params, 0.7))
    while not batch.done.all():
        batch.step(policy(batch))
    assert (batch.start[batch.enter >= 0] >= 0).mean() > 0.5


def test_cloning_belongs_to_the_cnn():
    from agents.deeprm.config import DeepRMConfig

    with pytest.raises(ValueError, match="cnn"):
        DeepRMConfig(network="dense", clone_jobsets=5)
    assert DeepRMConfig(network="cnn").hidden == 69 and DeepRMConfig().hidden == 20


def test_trace_tasks_become_deeprm_jobsets_by_hand():
    from cloudsim import JobSpec, TaskSpec
    from traces.deeprm import deeprm_jobsets_from_trace
    from traces.workload import Workload

    def task(name, seconds, cpu, memory):
        return TaskSpec(name, 1, {"cpu": cpu, "memory": memory}, seconds)

    workload = Workload([JobSpec("A", 0.0, (task("a1", 20.0, 1.0, 0.25), task("a2", 400.0, 0.5, 0.125))),
                         JobSpec("B", 100.0, (task("b1", 45.0, 2.0, 0.5),)),
                         JobSpec("C", 300.0, (task("c1", 1.0, 0.5, 0.0625),))])
    made = deeprm_jobsets_from_trace(workload, DeepRMParams(slots=2), tasks=4, load=1.0, step_s=20.0, per_jobset=2)
    # lengths: ceil(seconds / 20), 400 s capped at 15 steps
    assert made.lengths.tolist() == [[1, 15], [3, 1]] and made.capped == 1
    # sizes: fractions of the largest demand (2 cpu, 0.5 memory) x 10 units, rounded up
    assert made.sizes.tolist() == [[[5, 5], [3, 3]], [[10, 10], [3, 2]]]
    # work: mean(len x size) = (5 + 45 + 30 + 3 + 5 + 45 + 30 + 2) / 8 = 20.625 per task and resource;
    # 4 tasks x 20.625 / 10 units = 8.25 steps of a full pool, over the 300 s the submits span:
    # 0.0275 steps a second, so submits 0, 0, 100, 300 arrive at steps 0, 0, 2, 8; each jobset from 0
    assert made.arrivals.tolist() == [[0, 0], [0, 6]]
    with pytest.raises(ValueError, match="fewer than"):
        deeprm_jobsets_from_trace(workload, DeepRMParams(slots=2), tasks=5)


def test_the_shipped_deeprm_plus_checkpoint_loads_and_schedules():
    from agents import make_deeprm_broker

    policy = make_deeprm_broker("deeprm-plus", seed=1)
    assert policy.name == "deeprm-plus" and policy.params.slots == 10
    batch = DeepRMBatch(policy.params, *jobsets_at_load("poisson", 5, 3, policy.params, 1.4))
    while not batch.done.all():
        batch.step(policy(batch))
    assert not batch.truncated.any()
    arrived = batch.enter >= 0
    assert np.all(batch.start[arrived] >= batch.enter[arrived])


def test_fresh_jobsets_are_drawn_every_iteration_and_kept_checkpoints_resume_without_cloning(tmp_path, monkeypatch):
    import agents.deeprm.plus as plus
    from agents.deeprm import train
    from agents.deeprm.config import DeepRMConfig

    seeds = []
    real = DeepRMConfig.draw_jobsets
    monkeypatch.setattr(DeepRMConfig, "draw_jobsets", lambda self, seed, count: seeds.append(seed) or
                        real(self, seed, count))
    config = DeepRMConfig(network="cnn", workload="poisson", load=1.4, jobsets=2, episodes=2, iterations=3,
                          clone_jobsets=3, clone_epochs=1, fresh_jobsets=True)
    out = tmp_path / "fresh"
    train(config, out, progress=False, save_every=10, keep_every=2)
    # cloning's jobsets from 1001, iteration i's from 1001 + i: never the fixed set's 1000, nor a held-out seed
    assert seeds == [1001, 1002, 1003, 1004]
    assert sorted(p.name for p in out.glob("policy*.pt")) == ["policy-00002.pt", "policy.pt"]
    seeds.clear()
    monkeypatch.setattr(plus, "clone_sjf", lambda *a, **k: pytest.fail("a resumed training clones again"))
    train(dataclasses.replace(config, iterations=4), out, resume=True, progress=False, keep_every=2)
    assert seeds == [1005] and (out / "policy-00004.pt").is_file()
    seeds.clear()
    train(dataclasses.replace(config, fresh_jobsets=False, clone_jobsets=0, iterations=2), tmp_path / "fixed",
          progress=False)
    assert seeds == [1000]  # one set, drawn once


def test_a_cloned_training_stopped_before_its_first_iteration_resumes_without_cloning(tmp_path, monkeypatch):
    import agents.deeprm.plus as plus
    from agents.deeprm import train
    from agents.deeprm.config import DeepRMConfig

    config = DeepRMConfig(network="cnn", workload="poisson", load=1.4, jobsets=2, episodes=2, iterations=1,
                          clone_jobsets=3, clone_epochs=1)
    out = tmp_path / "cloned"
    monkeypatch.setattr("agents.deeprm.agent.rollout", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt) as stop:
        train(config, out, progress=False)
    assert "saved at iteration 0" in stop.value.__notes__[0]
    monkeypatch.undo()
    monkeypatch.setattr(plus, "clone_sjf", lambda *a, **k: pytest.fail("a resumed training clones again"))
    train(config, out, resume=True, progress=False)
    assert json.loads((out / "log.jsonl").read_text().splitlines()[-1])["iteration"] == 1

