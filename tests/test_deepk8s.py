"""Deepk8s's agents: the network export, DAgger's aggregated set, exact resume, the command line, shipped policies."""

import json

import numpy as np
import pytest
import torch

from agents import make_broker
from agents.deepk8s import (ActorCritic, Deepk8sPolicy, PairActorCritic, from_sb3, load_policy, save_policy,
                            shipped_checkpoint, train)
from agents.deepk8s.config import BROKER_NAMES, Deepk8sConfig
from agents.kit import CheckpointError, read_checkpoint
from cloudsim import ClusterSpec, JobSpec, TaskSpec, simulate
from cloudsim.cli import main
from cloudsim.engine.envs import deepk8s_cluster
from traces import deepk8s_workload


def task_job(jid, submit, cpu, duration):
    return JobSpec(jid, submit, (TaskSpec(0, 1, {"cpu": cpu, "memory": 1.0}, duration),))


def small(seed: int, n: int = 12) -> list[JobSpec]:
    rng = np.random.default_rng(seed)
    return [task_job(i, float(2 * i), float(rng.integers(1, 6)), float(rng.integers(2, 20))) for i in range(n)]


TINY = dict(iterations=2, envs=2, steps_per_env=16, minibatch=16, trunk=(16, 16), head=(8,), dagger_episodes=1,
            dagger_updates=2)


def test_daggers_set_holds_every_visited_state_with_sjfs_label(tmp_path):
    # Tasks A (cpu 2, 5 long) and B (cpu 1, 2 long) wait at t=0 on one machine: SJF starts B (slot 1)
    # on machine 0, action 0 * 10 + 1 = 1, whatever the learner does.
    jobs = [task_job("A", 0, 2, 5), task_job("B", 0, 1, 2), task_job("C", 3, 4, 1)]
    cluster = ClusterSpec.uniform(1, {"cpu": 10, "memory": 64})
    config = Deepk8sConfig(algo="dagger", **TINY)
    train(config, lambda seed: jobs, tmp_path, cluster=cluster, progress=False)
    saved = read_checkpoint(tmp_path / "dagger.pt", agent="deepk8s-dagger")
    log = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    labels, masks = saved["labels"].numpy(), saved["masks"].numpy()
    first, total = (row["dataset"] for row in log)  # one episode per iteration, added to the set
    assert 0 < first < total == len(labels)
    assert labels[0] == 1 and labels[first] == 1  # each episode's first state
    assert masks[np.arange(len(labels)), labels].all()  # every label is a possible action


def oracle_case() -> list[JobSpec]:
    # One machine of 10 cpu. R (cpu 1, 100 long) runs from t=0; A (cpu 9, 4 long) arrives at 0.5 and B (cpu 9,
    # 1 long) at 1. SJF starts A at 0.5, so B waits until 4.5: weighted turnarounds A 1, B (5.5 - 1) / 1 = 4.5.
    # Waiting at 0.5 lets B run first at 1: B 1, A (6 - 0.5) / 4 = 1.375, 3.125 less, and only a look-ahead sees it.
    return [task_job("R", 0.0, 1, 100), task_job("A", 0.5, 9, 4), task_job("B", 1.0, 9, 1)]


def test_the_oracle_labels_the_wait_that_sjf_misses():
    from agents.deepk8s.dagger import oracle_labels

    cluster = ClusterSpec.uniform(1, {"cpu": 10, "memory": 64})
    config = Deepk8sConfig(algo="dagger", expert="oracle", **TINY)
    wait = config.window  # one machine: actions 0-9 are (slot, machine 0), 10 waits
    # The trajectory: R now (slot 0), wait at 0.5, B (slot 1 after A) at 1, then A when B ends.
    played = np.array([0, wait, 1, 0])
    assert list(oracle_labels(config, lambda seed: oracle_case(), cluster, 7, played)) == [0, wait, 1, 0]
    # Where the learner did not wait, the oracle still labels each state it reached: at 0.5 it would wait.
    assert oracle_labels(config, lambda seed: oracle_case(), cluster, 7, np.array([0, 0, 0]))[1] == wait


def test_the_online_look_ahead_labels_what_it_can_see():
    # oracle_case's state at 0.5 without B, which has not arrived: starting A now costs A's 1, a wait lasts
    # the longest wait, 16 (R ends at 100), and costs A (16.5 + 4 - 0.5) / 4 = 5, so it starts A (slot 0).
    from agents.deepk8s.dagger import oracle_labels

    cluster = ClusterSpec.uniform(1, {"cpu": 10, "memory": 64})
    config = Deepk8sConfig(algo="dagger", expert="online", **TINY)
    assert list(oracle_labels(config, lambda seed: oracle_case(), cluster, 7, np.array([0, 0, 0]))) == [0, 0, 0]


def test_an_oracle_dagger_training_is_the_same_for_any_number_of_workers_and_keeps_its_labels(tmp_path, monkeypatch):
    from agents.deepk8s import dagger

    config = Deepk8sConfig(algo="dagger", expert="oracle", **{**TINY, "dagger_episodes": 3, "tasks": 6})
    workload = lambda seed: small(seed, 6)  # noqa: E731
    train(config, workload, tmp_path / "one", progress=False)
    train(config, workload, tmp_path / "two", progress=False, workers=2)
    a = read_checkpoint(tmp_path / "one" / "dagger.pt", agent="deepk8s-dagger")
    b = read_checkpoint(tmp_path / "two" / "dagger.pt", agent="deepk8s-dagger")
    assert torch.equal(a["labels"], b["labels"]) and all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])
    assert len(list((tmp_path / "one" / "oracle-labels").glob("*.npz"))) == 2 * 3  # every episode's labels kept
    # A training stopped in an iteration labels again only what it had not kept: here nothing.
    (tmp_path / "one" / "dagger.pt").unlink()
    (tmp_path / "one" / "policy.pt").unlink()
    monkeypatch.setattr(dagger, "oracle_labels", lambda *args: pytest.fail("labelled again"))
    train(config, workload, tmp_path / "one", progress=False)
    again = read_checkpoint(tmp_path / "one" / "dagger.pt", agent="deepk8s-dagger")
    assert torch.equal(again["labels"], a["labels"])


def test_a_resumed_dagger_training_ends_exactly_as_an_uninterrupted_one(tmp_path):
    config = Deepk8sConfig(algo="dagger", **{**TINY, "iterations": 3})
    train(config, small, tmp_path / "straight", progress=False)
    train(Deepk8sConfig(algo="dagger", **{**TINY, "iterations": 1}), small, tmp_path / "resumed", progress=False)
    train(config, small, tmp_path / "resumed", resume=True, progress=False)
    a = read_checkpoint(tmp_path / "straight" / "policy.pt", agent="deepk8s")["model"]
    b = read_checkpoint(tmp_path / "resumed" / "policy.pt", agent="deepk8s")["model"]
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("network", ["pairs", "flat"])
@pytest.mark.parametrize("algo", ["ppo", "a2c"])
def test_the_broker_reads_the_sb3_networks_weights(tmp_path, algo, network):
    from stable_baselines3 import A2C
    from sb3_contrib import MaskablePPO

    config = Deepk8sConfig(algo=algo, network=network, **TINY)
    train(config, small, tmp_path, progress=False)
    model = (MaskablePPO if algo == "ppo" else A2C).load(tmp_path / "model.zip", device="cpu")
    policy = load_policy(tmp_path / "policy.pt")
    obs = np.random.default_rng(0).random((5, policy.encoding.size)).astype(np.float32)
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs))
        expected = dist.distribution.logits.numpy()
    got = np.stack([policy.logits(o) for o in obs])
    # Both are log-probabilities up to a constant per row (SB3 normalises its logits).
    np.testing.assert_allclose(got - got.max(1, keepdims=True), expected - expected.max(1, keepdims=True),
                               atol=1e-5)
    net = from_sb3(model.policy, config, policy.encoding.size, policy.encoding.actions, 2)
    assert isinstance(net, PairActorCritic if network == "pairs" else ActorCritic)
    with torch.no_grad():
        logits, _ = net(torch.as_tensor(obs))
    np.testing.assert_allclose(got, logits.numpy(), atol=1e-5)
    log = (tmp_path / "log.csv").read_text().splitlines()
    assert log[0].startswith("iteration,") and len(log) == 1 + config.iterations


def cli(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exit:  # argparse's own refusals
        code = exit.code
    out, err = capsys.readouterr()
    return code, out, err


def test_train_resume_and_compare_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "run"
    base = ["train", "deepk8s", "--algo", "dagger", "--tasks", "20", "--out", str(out)]
    code, stdout, err = cli([*base, "--iterations", "1"], capsys)
    assert code == 0, err
    assert json.loads(stdout.splitlines()[-1])["iterations"] == 1
    code, stdout, err = cli([*base, "--iterations", "2", "--resume"], capsys)
    assert code == 0, err
    assert len((out / "log.csv").read_text().splitlines()) == 3  # header and two iterations
    code, stdout, err = cli(["compare", "deepk8s", "--brokers", "sjf,deepk8s-dagger", "--checkpoint",
                             f"deepk8s-dagger={out / 'policy.pt'}", "--seeds", "0:2", "--synthetic-jobs", "20",
                             "--json"], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in stdout.splitlines()]
    runs, summary = rows[:-1], rows[-1]
    assert sorted((r["broker"], r["seed"]) for r in runs) == [("deepk8s-dagger", 0), ("deepk8s-dagger", 1),
                                                             ("sjf", 0), ("sjf", 1)]
    assert all({"makespan", "avg_job_completion", "avg_job_slowdown"} <= r.keys() for r in runs)
    assert all(r["instances_finished"] == 20 for r in runs) and summary["summary"] and summary["seeds"] == [0, 1]


@pytest.mark.parametrize("argv, words", [
    (["--resume"], ["--resume", "no ppo training to resume", "model.zip is missing"]),
    (["--iterations", "0"], ["--iterations", ">= 1"]),
    (["--entropy", "-1"], ["--entropy", ">= 0"]),
    (["--algo", "dqn"], ["--algo", "ppo"]),
    (["--expert", "oracle"], ["--expert oracle", "applies to DAgger; add --algo dagger"]),
    (["--dagger-updates", "64"], ["--dagger-updates 64", "applies to DAgger; add --algo dagger"]),
    (["--algo", "dagger", "--dagger-updates", "0"], ["--dagger-updates 0", ">= 1"]),
    (["--algo", "dagger", "--workers", "2"], ["--workers 2", "add --algo dagger --expert oracle"]),
    (["--algo", "dagger", "--expert", "oracle", "--workers", "0"], ["--workers 0", ">= 1"]),
])
def test_training_mistakes_get_one_clear_message(tmp_path, capsys, argv, words):
    code, _, err = cli(["train", "deepk8s", "--out", str(tmp_path / "run"), *argv], capsys)
    assert code == 2 and "Traceback" not in err
    for word in words:
        assert word in err, err


def test_a_finished_folder_is_not_overwritten_and_a_resume_keeps_its_settings(tmp_path, capsys):
    out = str(tmp_path / "run")
    assert cli(["train", "deepk8s", "--algo", "dagger", "--tasks", "20", "--iterations", "1", "--out", out],
               capsys)[0] == 0
    code, _, err = cli(["train", "deepk8s", "--algo", "dagger", "--tasks", "20", "--out", out], capsys)
    assert code == 2 and "already holds a trained policy" in err and "--resume" in err
    code, _, err = cli(["train", "deepk8s", "--algo", "dagger", "--tasks", "30", "--resume", "--out", out], capsys)
    assert code == 2 and "--tasks 30" in err and "differs from the training being resumed" in err


def test_a_resume_without_iterations_goes_on_to_the_saved_length_not_the_default(tmp_path, capsys):
    # A training of 2 iterations stopped after 1 (as a session ends): resumed without --iterations it does
    # the 1 left, not the default's 300; a resume that gives --iterations (on the command line, or another
    # value than the default from Python) sets the new length.
    from cloudsim.run.train import Deepk8sTrainConfig

    out = tmp_path / "run"
    assert cli(["train", "deepk8s", "--algo", "dagger", "--tasks", "20", "--iterations", "1", "--out", str(out)],
               capsys)[0] == 0
    saved = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**saved, "iterations": 2}))  # as if asked for 2
    code, stdout, _ = cli(["train", "deepk8s", "--algo", "dagger", "--resume", "--out", str(out)], capsys)
    assert code == 0 and json.loads(stdout.splitlines()[-1])["iterations"] == 2
    assert (out / "log.csv").read_text().count("\n") == 3  # header and iterations 1 and 2
    resumed = dict(algo="dagger", out=str(out), resume=True)
    assert Deepk8sTrainConfig(**resumed).agent.iterations == 2
    assert Deepk8sTrainConfig(**resumed, iterations=5).agent.iterations == 5
    assert Deepk8sTrainConfig(**resumed, iterations=300, given=frozenset({"iterations"})).agent.iterations == 300


def test_a_flat_policy_refuses_another_machine_count_and_a_pairs_policy_warns_and_runs(tmp_path):
    for network in ("flat", "pairs"):
        train(Deepk8sConfig(algo="dagger", network=network, **{**TINY, "iterations": 1}), small, tmp_path / network,
              progress=False)
    flat = make_broker("deepk8s-dagger", checkpoint=str(tmp_path / "flat" / "policy.pt"))
    pairs = make_broker("deepk8s-dagger", checkpoint=str(tmp_path / "pairs" / "policy.pt"))
    three = ClusterSpec.uniform(3, {"cpu": 10, "memory": 64})
    assert flat.check_cluster(deepk8s_cluster()) == [] and pairs.check_cluster(deepk8s_cluster()) == []
    with pytest.raises(CheckpointError, match="flat network trained for 5 machines; this cluster has 3"):
        flat.check_cluster(three)
    notes = pairs.check_cluster(three)
    assert len(notes) == 1 and "trained on 5 machines, running on 3" in notes[0]
    assert len(pairs.check_cluster(ClusterSpec.uniform(40, {"cpu": 96, "memory": 100}))) == 2  # count, capacity
    for broker in (flat, pairs):
        with pytest.raises(CheckpointError, match="reads the resources cpu, memory; this cluster has cpu, gpu"):
            broker.check_cluster(ClusterSpec.uniform(5, {"cpu": 10, "gpu": 1}))
    with_disk = ClusterSpec.uniform(5, {"cpu": 10, "memory": 64, "disk": 1})
    assert pairs.check_cluster(with_disk) == ["deepk8s-dagger: sees cpu, memory; disk is not shown to it (the engine "
                                              "still checks it)"]
    with pytest.raises(CheckpointError, match="reads the resources cpu, memory; this cluster has cpu, memory, disk"):
        flat.check_cluster(with_disk)
    # A network that never waits while a pair fits (its wait bias far below any pair's score) runs on 3.
    net = PairActorCritic(2, Deepk8sConfig(**TINY))
    with torch.no_grad():
        net.wait[-1].bias.fill_(-1e3)
    eager = make_broker("deepk8s", checkpoint=str(save_policy(tmp_path / "eager.pt", net, Deepk8sConfig(**TINY),
                                                                deepk8s_cluster())))
    assert simulate(three, small(3), eager).summary["instances_finished"] == 12
    # Disk is not shown but still decides where a task fits: two tasks needing all of a machine's disk
    # cannot share one, whatever their cpu.
    disk = [JobSpec(i, 0.0, (TaskSpec(0, 1, {"cpu": 1.0, "memory": 1.0, "disk": 1.0}, 5.0),)) for i in range(2)]
    result = simulate(ClusterSpec.uniform(2, {"cpu": 10, "memory": 64, "disk": 1}), disk, eager)
    assert result.summary["instances_finished"] == 2 and result.summary["makespan"] == 5.0


def test_a_pairs_policy_scores_a_machine_by_what_it_holds_not_by_how_many_machines_there_are():
    # Ten copies of a 5-machine state have the same means and maxima over machines, so each machine of the
    # 50 must get the score its original gets among 5; wait's logit is the same too.
    torch.manual_seed(0)
    config = Deepk8sConfig(**TINY)
    net = PairActorCritic(2, config)
    policy = Deepk8sPolicy({k: v.detach() for k, v in net.state_dict().items()}, config, deepk8s_cluster())
    rng = np.random.default_rng(2)
    free, rest = rng.random(5 * 2).astype(np.float32), rng.random(11 * 3 + 1).astype(np.float32)
    five, fifty = policy.logits(np.r_[free, rest]), policy.logits(np.r_[np.tile(free, 10), rest])
    np.testing.assert_allclose(fifty[:-1], np.tile(five[:-1], 10), rtol=1e-5)
    assert fifty[-1] == pytest.approx(five[-1])
    # Scoring only the machines the mask allows (each distinct free vector once) changes no allowed score.
    mask = np.zeros(50 * 10 + 1, dtype=bool)
    mask[[3, 57, 499, 500]] = True
    masked = policy.logits(np.r_[np.tile(free, 10), rest], mask)
    np.testing.assert_allclose(masked[mask], fifty[mask], rtol=1e-5)
    assert np.isneginf(masked[:-1].reshape(50, 10)[[1, 2, 3, 4, 6]]).all()


def test_a_dagger_policy_never_waits_while_a_task_fits_and_a_ppo_one_may_on_its_training_cluster(tmp_path):
    # A (cpu 4, 10 long) and B (cpu 4, 2 long) arrive at 0 on one machine of 10 cpu: both fit at once.
    # A network that always prefers waiting starts one at 0 (nothing runs), then, as PPO on the cluster it
    # was trained on, waits until that one ends and starts the other: makespan 12 either way. As DAgger, or
    # as PPO on any other cluster (here: trained on 5 machines, or on one of 20 cpu), it starts both at 0:
    # makespan 10.
    jobs = [task_job("A", 0, 4, 10), task_job("B", 0, 4, 2)]
    one = ClusterSpec.uniform(1, {"cpu": 10, "memory": 64})
    net = PairActorCritic(2, Deepk8sConfig(**TINY))
    with torch.no_grad():
        net.wait[-1].bias.fill_(1e3)
    makespans = {}
    for algo, trained in (("ppo", one), ("dagger", one), ("ppo", deepk8s_cluster()),
                          ("ppo", ClusterSpec.uniform(1, {"cpu": 20, "memory": 64}))):
        config = Deepk8sConfig(algo=algo, **TINY)
        name = f"{algo} trained on {trained.machines} of {trained.capacity_array()[0, 0]:g} cpu"
        broker = make_broker(config.broker_name, checkpoint=str(save_policy(tmp_path / f"{len(makespans)}.pt", net,
                                                                           config, trained)))
        makespans[name] = simulate(one, jobs, broker).summary["makespan"]
        notes = broker.check_cluster(one)
        assert any("not its training cluster, so it does not wait while a task fits" in n for n in notes) == (
            algo == "ppo" and trained is not one)
    assert makespans == {"ppo trained on 1 of 10 cpu": 12.0, "dagger trained on 1 of 10 cpu": 10.0,
                         "ppo trained on 5 of 10 cpu": 10.0, "ppo trained on 1 of 20 cpu": 10.0}


def test_a_wake_that_finds_the_same_observation_takes_the_same_action_without_the_network(tmp_path):
    # The PPO network above always waits while something runs. A (cpu 4, 10 long) starts at 0; B arrives at 1
    # and fits but waits; the broker is woken every max_wait (2) time units until A ends at 10, each wake
    # seeing what the one before saw. The network is asked once per distinct observation and mask.
    jobs = [task_job("A", 0, 4, 10), task_job("B", 1, 4, 2)]
    net = PairActorCritic(2, Deepk8sConfig(**TINY))
    with torch.no_grad():
        net.wait[-1].bias.fill_(1e3)
    config = Deepk8sConfig(algo="ppo", max_wait=2.0, **TINY)
    one = ClusterSpec.uniform(1, {"cpu": 10, "memory": 64})  # its training cluster: it may wait there
    broker = make_broker(config.broker_name, checkpoint=str(save_policy(tmp_path / "ppo.pt", net, config, one)))
    asked, act = [], broker.policy.act
    broker.policy.act = lambda obs, mask: asked.append(1) or act(obs, mask)
    seen = []
    decide = broker.decide
    broker.decide = lambda view: seen.append(view.time) or decide(view)
    result = simulate(one, jobs, broker)
    assert result.summary["makespan"] == 12.0
    # A starts (then nothing waits: None); B waits, woken 4 times; A ends, B starts at 10 (then None)
    assert seen == [0.0, 0.0, 1.0, 3.0, 5.0, 7.0, 9.0, 10.0, 10.0]
    assert len(asked) == 3  # at 0 (A alone), at 1 (B waits: the same at 3, 5, 7 and 9) and at 10


def test_a_checkpoint_written_before_the_network_setting_loads_as_the_flat_network(tmp_path):
    import dataclasses

    config = Deepk8sConfig(network="flat", **TINY)
    net = ActorCritic(5 * 2 + 11 * 3 + 1, 51, config)
    path = save_policy(tmp_path / "old.pt", net, config, deepk8s_cluster())
    saved = torch.load(path, weights_only=True)
    del saved["config"]["network"]
    torch.save(saved, path)
    assert load_policy(path).config == dataclasses.replace(config)


def test_another_agents_checkpoint_is_refused(tmp_path, capsys):
    from agents.deepjs import DeepJSTrainer, DeepJSConfig

    deepjs = DeepJSTrainer(DeepJSConfig(), ClusterSpec.uniform(2, {"cpu": 64, "memory": 1, "disk": 1}), workers=1)
    path = deepjs.save(tmp_path / "deepjs.pt")
    deepjs.close()
    with pytest.raises(CheckpointError, match="deepk8s"):
        load_policy(path)


@pytest.mark.parametrize("name", sorted(BROKER_NAMES.values()))
def test_the_shipped_policies_load_and_schedule_every_task(name):
    broker = make_broker(name)
    assert isinstance(broker.policy, Deepk8sPolicy) and broker.name == name
    jobs = deepk8s_workload(0, 60)
    result = simulate(deepk8s_cluster(), jobs, broker)
    assert result.summary["instances_finished"] == 60


@pytest.mark.parametrize("network", ["pairs", "flat"])
def test_a_training_can_start_from_another_policys_actor(tmp_path, network):
    from sb3_contrib import MaskablePPO

    from agents.deepk8s import make_env, sb3_policy, to_sb3

    def ppo(config):
        policy_class, kwargs = sb3_policy(config, 2)
        return MaskablePPO(policy_class, make_env(config, small, deepk8s_cluster()), policy_kwargs=kwargs,
                           device="cpu")

    config = Deepk8sConfig(algo="ppo", network=network, **TINY)
    train(Deepk8sConfig(algo="dagger", network=network, **{**TINY, "iterations": 1}), small, tmp_path / "dagger",
          progress=False)
    teacher = load_policy(tmp_path / "dagger" / "policy.pt")
    model = ppo(config)
    to_sb3(teacher, model.policy, config)
    obs = np.random.default_rng(1).random((4, teacher.encoding.size)).astype(np.float32)
    with torch.no_grad():
        logits = model.policy.get_distribution(torch.as_tensor(obs)).distribution.logits.numpy()
    ours = np.stack([teacher.logits(o) for o in obs])
    np.testing.assert_allclose(ours - ours.max(1, keepdims=True), logits - logits.max(1, keepdims=True), atol=1e-5)
    bigger = Deepk8sConfig(algo="ppo", network=network, **{**TINY, "trunk": (32, 32)})
    with pytest.raises(CheckpointError, match="layer sizes"):
        to_sb3(teacher, ppo(bigger).policy, bigger)
    other = Deepk8sConfig(algo="ppo", network="flat" if network == "pairs" else "pairs", **TINY)
    with pytest.raises(CheckpointError, match=f"give --network {network}"):
        to_sb3(teacher, ppo(other).policy, other)


def test_a_resume_logs_from_the_saved_iteration_not_from_the_last_logged(tmp_path):
    # A training killed after logging iteration 2 but saving only iteration 1 logs iteration 2 again on
    # resume; the log keeps each iteration once.
    config = Deepk8sConfig(algo="dagger", **{**TINY, "iterations": 1})
    train(config, small, tmp_path, progress=False)
    with open(tmp_path / "log.csv", "a") as f:
        f.write("2,1,-1.0,0.5,0.5,99,1.0\n")
    with open(tmp_path / "log.jsonl", "a") as f:
        f.write('{"iteration": 2, "dataset": 99}\n')
    train(Deepk8sConfig(algo="dagger", **TINY), small, tmp_path, resume=True, progress=False)
    csv_rows = (tmp_path / "log.csv").read_text().splitlines()[1:]
    jsonl = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert [int(r.split(",")[0]) for r in csv_rows] == [1, 2] and [r["iteration"] for r in jsonl] == [1, 2]
    assert jsonl[1]["dataset"] != 99


def test_a_training_from_a_policy_of_the_other_network_is_refused_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "run"
    code, _, err = cli(["train", "deepk8s", "--network", "flat", "--init", str(shipped_checkpoint("dagger")),
                        "--iterations", "1", "--out", str(out)], capsys)
    assert code == 1 and "a pairs network; this training builds a flat one: give --network pairs" in err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("cloudsim: ") and not out.exists()
