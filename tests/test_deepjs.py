"""DeepJS: the training maths of Algorithm 2 by hand, batched log-probabilities, checkpoints."""

import json
import math

import numpy as np
import pytest
import torch

from cloudsim import ClusterSpec, JobSpec, Simulation
from conftest import task
from agents.deepjs import (
    DeepJS,
    DeepJSConfig,
    DeepJSTrainer,
    NumpyFitness,
    Trajectory,
    baselines,
    returns_to_go,
    segment_log_softmax,
)

CLUSTER = ClusterSpec.uniform(2, {"cpu": 4, "memory": 1})


def small_jobs(seed):
    rng = np.random.default_rng(seed)
    return [JobSpec(j, float(2 * j), tuple(task(t, int(rng.integers(1, 6)), float(rng.choice([1, 2])), 0.1,
                                                float(rng.integers(1, 5))) for t in range(3))) for j in range(3)]


def test_returns_to_go_and_the_padded_baseline_by_hand():
    a = returns_to_go([0, -1, 0, -1])
    b = returns_to_go([0, -1])
    assert a.tolist() == [-2, -2, -1, -1] and b.tolist() == [-1, -1]
    # Index by index: (-2 + -1) / 2, (-2 + -1) / 2, (-1 + 0) / 2, (-1 + 0) / 2 (b padded with zeros).
    assert baselines([a, b]).tolist() == [-1.5, -1.5, -0.5, -0.5]
    assert returns_to_go([1, 1, 1], gamma=0.5).tolist() == [1.75, 1.5, 1.0]


def test_batched_log_probabilities_equal_one_softmax_per_decision():
    torch.manual_seed(0)
    scores = torch.randn(9)
    segments = torch.tensor([0, 0, 0, 1, 2, 2, 2, 2, 2])
    batched = segment_log_softmax(scores, segments, 3)
    for k, (start, end) in enumerate([(0, 3), (3, 4), (4, 9)]):
        assert torch.allclose(batched[start:end], torch.log_softmax(scores[start:end], 0), atol=1e-6)


def test_the_update_recomputes_the_recorded_decisions_log_probabilities():
    trainer = DeepJSTrainer(DeepJSConfig(), CLUSTER, workers=1)
    trainer.fit_normaliser(small_jobs(0))
    policy = trainer.policy()
    broker = DeepJS(policy, sample=True, seed=3, record=True)
    Simulation(CLUSTER, small_jobs(0), broker, tick=1).run()
    t = broker.trajectory.packed()
    x = (torch.from_numpy(t.features[0]) - torch.tensor(trainer.config.feature_mean, dtype=torch.float32)) \
        / torch.tensor(trainer.config.feature_std, dtype=torch.float32)
    scores = trainer.model(x).detach()
    sizes = [n for n, c in zip(t.pairs, t.chosen) if c >= 0]
    segments = torch.from_numpy(np.repeat(np.arange(len(sizes)), sizes))
    batched = segment_log_softmax(scores, segments, len(sizes))
    start = 0
    for n in sizes:
        per_decision = torch.log_softmax(trainer.model(x[start:start + n]).detach(), 0)
        assert torch.allclose(batched[start:start + n], per_decision, atol=1e-5)
        # The rollout's numpy network gives the same scores.
        assert np.allclose(policy[0](t.features[0][start:start + n].astype(float)), scores[start:start + n].numpy(),
                           atol=1e-5)
        start += n
    # Tick mode, makespan reward: -1 per wake until all jobs are done, so the return is -makespan.
    assert sum(t.rewards) == -Simulation(CLUSTER, small_jobs(0), DeepJS(policy, sample=True, seed=3),
                                         tick=1).run().makespan


def test_one_update_moves_towards_the_better_trajectory():
    config = DeepJSConfig(feature_mean=(0.0,) * 6, feature_std=(1.0,) * 6, normalize_advantage=False,
                          learning_rate=0.01)
    trainer = DeepJSTrainer(config, CLUSTER, workers=1)
    state = np.array([[4, 1, 1, 0.1, 2, 3], [2, 0.5, 2, 0.1, 4, 1]], dtype=np.float32)  # two fit pairs
    # A picked pair 0 and was done after one more step (return -1); B picked pair 1 and needed three (-3).
    better = Trajectory([state], [2, 0], [0, -1], [0.0, -1.0])
    worse = Trajectory([state], [2, 0, 0, 0], [1, -1, -1, -1], [0.0, -1.0, -1.0, -1.0])

    def p_first():
        with torch.no_grad():
            return torch.softmax(trainer.model(torch.from_numpy(state)), 0)[0].item()

    before = p_first()
    trainer.update([better, worse])
    # Baselines -2, -2, -1, -0.5: the better choice has advantage +1, the worse one -1; both raise pair 0.
    assert p_first() > before


def test_training_resumes_exactly(tmp_path):
    config = DeepJSConfig(iterations=2, trajectories=3, seed=7)
    chunks = [small_jobs(1), small_jobs(2)]

    straight = DeepJSTrainer(config, CLUSTER, workers=1)
    straight.fit_normaliser(chunks[0] + chunks[1])
    for i, chunk in enumerate(chunks):
        straight.train_chunk(i, chunk)

    first = DeepJSTrainer(config, CLUSTER, workers=1)
    first.fit_normaliser(chunks[0] + chunks[1])
    first.train_chunk(0, chunks[0])
    first.save(tmp_path / "ckpt.pt")
    resumed = DeepJSTrainer.resume(tmp_path / "ckpt.pt", workers=1)
    resumed.train_chunk(1, chunks[1])

    for a, b in zip(straight.model.state_dict().values(), resumed.model.state_dict().values()):
        assert torch.equal(a, b)
    assert resumed.log == straight.log and resumed.chunks_done == [0, 1]
    assert resumed.config == straight.config


def test_worker_processes_give_the_same_trajectories():
    trainer = DeepJSTrainer(DeepJSConfig(), CLUSTER, workers=2)
    trainer.fit_normaliser(small_jobs(4))
    try:
        parallel = trainer.collect(small_jobs(4), [1, 2, 3])
    finally:
        trainer.close()
    trainer.workers = 1
    serial = trainer.collect(small_jobs(4), [1, 2, 3])
    assert [t.chosen for t in parallel] == [t.chosen for t in serial]
    assert [t.makespan for t in parallel] == [t.makespan for t in serial]


def test_config_errors_name_the_choices():
    with pytest.raises(ValueError, match="unknown DeepJS features"):
        DeepJSConfig(features=("machine_cpu", "colour"))
    with pytest.raises(ValueError, match="unknown reward"):
        DeepJSConfig(reward="speed")


@pytest.mark.parametrize("options, message", [
    ({"iterations": 0}, "iterations must be a whole number >= 1, got 0; iterations per chunk; the paper uses 10 "
                        "(--iterations 10)"),
    ({"iterations": 2.5}, "iterations must be a whole number >= 1, got 2.5;"),
    ({"trajectories": 0}, "trajectories must be a whole number >= 1, got 0; trajectories per iteration; the paper "
                          "uses 12 (--trajectories 12)"),
    ({"hidden": ()}, "DeepJSConfig.hidden=() lists no hidden layer; give layer sizes such as (3, 9, 6), Table 1's "
                     "(--hidden 3,9,6)"),
    ({"hidden": (3, 0, 6)}, "DeepJSConfig.hidden=(3, 0, 6): layer 1 has size 0, but every layer needs a whole number "
                            "of units >= 1 (a zero-width layer cuts the network); give sizes such as (3, 9, 6)"),
    ({"hidden": (3, -2)}, "DeepJSConfig.hidden=(3, -2): layer 1 has size -2,"),
    ({"learning_rate": 0.0}, "learning_rate must be a finite number > 0, got 0.0; the paper uses 0.001 "
                             "(--learning-rate 0.001)"),
    ({"learning_rate": -0.001}, "learning_rate must be a finite number > 0, got -0.001; the paper uses 0.001"),
    ({"learning_rate": math.nan}, "learning_rate must be a finite number > 0, got nan; the paper uses 0.001"),
    ({"learning_rate": math.inf}, "learning_rate must be a finite number > 0, got inf; the paper uses 0.001"),
    ({"gamma": 0.0}, "gamma must be a finite number in (0, 1], got 0.0; 1 (no discount) is Algorithm 2's"),
    ({"gamma": 1.5}, "gamma must be a finite number in (0, 1], got 1.5;"),
    ({"gamma": math.nan}, "gamma must be a finite number in (0, 1], got nan;"),
    ({"tick": 0.0}, "tick must be a finite number > 0, got 0.0; the time between scheduler wakes; DeepJS's reward "
                    "of -1 per tick uses 1 (--tick 1)"),
    ({"tick": math.inf}, "tick must be a finite number > 0, got inf;"),
    ({"seed": -1}, "seed must be a whole number >= 0, got -1"),
    ({"features": ()}, "DeepJSConfig.features is empty; name at least one of"),
    ({"feature_std": (1.0,) * 5}, "DeepJSConfig.feature_std=(1.0, 1.0, 1.0, 1.0, 1.0) needs one finite value > 0 per "
                                  "feature (6: machine_cpu, machine_memory, task_cpu, task_memory, task_duration, "
                                  "task_waiting; features are divided by it); leave it empty to fit it on the "
                                  "training workload (DeepJSTrainer.fit_normaliser)"),
    ({"feature_std": (1.0, 1.0, 0.0, 1.0, 1.0, 1.0)}, "DeepJSConfig.feature_std=(1.0, 1.0, 0.0, 1.0, 1.0, 1.0) needs "
                                                      "one finite value > 0 per feature"),
    ({"feature_std": (1.0, 1.0, -1.0, 1.0, 1.0, 1.0)}, "DeepJSConfig.feature_std=(1.0, 1.0, -1.0, 1.0, 1.0, 1.0) needs "
                                                       "one finite value > 0 per feature"),
    ({"feature_mean": (0.0,) * 7}, "DeepJSConfig.feature_mean=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0) needs one finite "
                                   "value per feature (6: machine_cpu,"),
])
def test_config_refuses_each_bad_value_naming_the_field_the_value_and_the_fix(options, message):
    with pytest.raises(ValueError) as caught:
        DeepJSConfig(**options)
    assert str(caught.value).startswith(message)


def test_config_accepts_the_edges_of_each_range():
    config = DeepJSConfig(iterations=1, trajectories=1, hidden=(1,), learning_rate=1e-9, gamma=1.0, tick=0.5, seed=0,
                          feature_mean=(-1.0,) * 6, feature_std=(1e-6,) * 6)
    assert config.hidden == (1,) and config.gamma == 1.0
    assert DeepJSConfig(gamma=1e-3).gamma == 1e-3  # the open end of (0, 1]


def test_training_on_nothing_is_refused_up_front():
    trainer = DeepJSTrainer(DeepJSConfig(), CLUSTER, workers=1)
    with pytest.raises(ValueError, match=r"fit_normaliser: no jobs to fit the feature normaliser on; pass the "
                                         r"training workload \(check that --chunks"):
        trainer.fit_normaliser([])
    assert trainer.config.feature_mean == ()  # left as it was
    with pytest.raises(ValueError, match=r"train_chunk: chunk 3 has no jobs, so there is nothing to train on; pass "
                                         r"a non-empty chunk"):
        trainer.train_chunk(3, [])
    assert trainer.chunks_done == [] and trainer.log == []


def test_a_resource_of_capacity_zero_is_a_constant_feature_not_a_division_by_zero():
    cluster = ClusterSpec.uniform(2, {"cpu": 4, "memory": 0})
    trainer = DeepJSTrainer(DeepJSConfig(), cluster, workers=1)
    trainer.fit_normaliser([JobSpec(0, 0.0, (task(0, 1, 1, 0, 2),))])
    # machine cpu uniform on [0, 4]: mean 2, std 4 / sqrt(12); machine memory always 0: mean 0, std 1.
    assert trainer.config.feature_mean[:2] == (2.0, 0.0)
    assert trainer.config.feature_std[:2] == (4 / math.sqrt(12), 1.0)


def test_other_feature_sets_and_sizes_are_configuration():
    config = DeepJSConfig(features=("machine_cpu", "task_cpu", "task_age"), hidden=(4,))
    trainer = DeepJSTrainer(config, CLUSTER, workers=1)
    trainer.fit_normaliser(small_jobs(5))
    result = Simulation(CLUSTER, small_jobs(5), DeepJS(trainer.policy()), tick=1).run()
    assert result.summary["instances_finished"] == sum(j.instances for j in small_jobs(5))
    assert isinstance(trainer.policy()[0], NumpyFitness) and not math.isnan(result.makespan)


def test_cli_trains_resumes_and_benches(tmp_path, capsys):
    from cloudsim.cli import main

    trace = tmp_path / "jobs.csv"
    rows = [",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk"]
    for j, job in enumerate(small_jobs(6) + [JobSpec(9, 9.0, (task(1, 3, 2, 0.1, 2),))]):
        rows += [f"{len(rows)},{job.submit_time},{t.duration},{t.demand['cpu']},{t.demand['memory']},{j},{t.id},"
                 f"{t.instances},0" for t in job.tasks]
    trace.write_text("\n".join(rows) + "\n")
    out = tmp_path / "run"
    checkpoint = out / "policy.pt"
    common = [str(trace), "--chunk-size", "2", "--machines", "2", "--capacity", "cpu=4,memory=1,disk=1"]
    assert main(["train", "deepjs", *common, "--chunks", "0:1", "--iterations", "1", "--trajectories", "2",
                 "--out", str(out)]) == 0
    assert main(["train", "deepjs", *common, "--chunks", "0:2", "--resume", "--out", str(out)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # One log line per chunk trained, then a summary: the resumed run trained chunk 1 only.
    assert [line.get("chunk", line.get("chunks")) for line in lines] == [0, 1, 1, 2]
    assert all("makespan_before" in line for line in (lines[0], lines[2]))
    main(["bench", *common, "--chunks", "0:2", "--brokers", "first-fit,deepjs", "--checkpoint", str(checkpoint),
          "--json", "--plots", str(tmp_path / "plots")])
    *per_chunk, summary = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["chunk"], r["broker"]) for r in per_chunk] == [(0, "first-fit"), (0, "deepjs"), (1, "first-fit"),
                                                              (1, "deepjs")]
    table = summary["comparison"]["first-fit"]
    assert table["chunks"] == 2 and table["lower"] + table["equal"] + table["higher"] == 2
    makespans = {(r["chunk"], r["broker"]): r["makespan"] for r in per_chunk}
    expected = np.mean([makespans[(c, "first-fit")] - makespans[(c, "deepjs")] for c in (0, 1)])
    assert table["mean_difference"] == pytest.approx(expected)
    assert (tmp_path / "plots" / "makespan_difference.png").is_file()


def test_a_training_can_start_from_another_checkpoints_weights(tmp_path, capsys):
    from agents.deepjs import read_checkpoint as deepjs_checkpoint
    from cloudsim.cli import main

    trained = DeepJSTrainer(DeepJSConfig(iterations=1, trajectories=2, hidden=(4, 3), seed=7), CLUSTER, workers=1)
    trained.fit_normaliser(small_jobs(1))
    trained.train_chunk(0, small_jobs(1))
    trained.save(tmp_path / "a.pt")
    # The network, its features and normaliser are the checkpoint's; the rest is this training's, from scratch.
    tuned = DeepJSTrainer.from_weights(tmp_path / "a.pt", DeepJSConfig(learning_rate=0.01, seed=3), CLUSTER)
    assert tuned.config.hidden == (4, 3) and tuned.config.feature_mean == trained.config.feature_mean
    assert tuned.config.learning_rate == 0.01 and tuned.chunks_done == [] and tuned.log == []
    assert all(torch.equal(a, b) for a, b in zip(tuned.model.state_dict().values(),
                                                 trained.model.state_dict().values()))
    # From the command line: a new training from those weights; and each misuse of --init in one line.
    trace = tmp_path / "jobs.csv"
    rows = [",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk"]
    for j, job in enumerate(small_jobs(6)):
        rows += [f"{len(rows)},{job.submit_time},{t.duration},{t.demand['cpu']},{t.demand['memory']},{j},{t.id},"
                 f"{t.instances},0" for t in job.tasks]
    trace.write_text("\n".join(rows) + "\n")
    common = ["train", "deepjs", str(trace), "--chunk-size", "2", "--chunks", "0:1", "--machines", "2",
              "--capacity", "cpu=4,memory=1,disk=1", "--iterations", "1", "--trajectories", "2"]
    assert main([*common, "--init", str(tmp_path / "a.pt"), "--out", str(tmp_path / "b")]) == 0
    assert deepjs_checkpoint(tmp_path / "b" / "policy.pt")["config"].hidden == (4, 3)
    # a missing or damaged --init says to pass another --init (not --checkpoint, which train has not)
    (tmp_path / "damaged.pt").write_bytes(b"not a checkpoint")
    for extra, words in ((["--init", str(tmp_path / "none.pt")], "pass a DeepJS checkpoint with --init"),
                         (["--init", str(tmp_path / "damaged.pt")], "pass a DeepJS checkpoint with --init"),
                         (["--init", str(tmp_path / "a.pt"), "--hidden", "3,3"], "are --init's checkpoint's"),
                         (["--init", str(tmp_path / "a.pt"), "--resume", "--out", str(tmp_path / "b")],
                          "starts a new training")):
        capsys.readouterr()
        assert main([*common, *extra, *([] if "--out" in extra else ["--out", str(tmp_path / "c")])]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err and not (tmp_path / "c").exists()


def test_the_shipped_checkpoint_loads_and_schedules():
    from agents import make_broker
    from agents.deepjs import SHIPPED_CHECKPOINT

    saved = torch.load(SHIPPED_CHECKPOINT, weights_only=True)
    assert saved["config"]["hidden"] == [3, 9, 6] and len(saved["chunks_done"]) > 0
    assert saved["cluster"]["capacities"] == [[64.0, 1.0, 1.0]] * 5  # DeepJS's 5 machines
    jobs = small_jobs(8)
    cluster = ClusterSpec.uniform(5, {"cpu": 64, "memory": 1, "disk": 1})
    result = Simulation(cluster, jobs, make_broker("deepjs"), tick=1).run()
    assert result.summary["instances_finished"] == sum(j.instances for j in jobs)
    with pytest.raises(FileNotFoundError, match="no DeepJS checkpoint"):
        make_broker("deepjs", checkpoint="/nonexistent/deepjs.pt")
