"""RLSK: the federation's state and reward worked by hand, postponement, the queues of full clusters, nodes
inside a cluster, the Gymnasium contract, the baselines over clusters, training and the shipped agent."""

from __future__ import annotations

import json

import gymnasium
import numpy as np
import pytest

from conftest import cli
from gymnasium.utils.env_checker import check_env

import cloudsim  # noqa: F401  (registers the environments)
from agents import make_broker, make_federated_broker
from agents.rlsk.federation import FederatedBroker
from agents.kit import CheckpointError
from cloudsim import ClusterSpec, JobSpec, TaskSpec, simulate
from cloudsim.engine.envs.rlsk import (Federation, RLSKEnv, RLSKWeights, cluster_bounds, cluster_utilisation,
                                federation_cluster, federation_metrics, reward_rate)
from traces import rlsk_workload


def job(j: int, at: float, cpu: float, memory: float, duration: float) -> JobSpec:
    return JobSpec(j, at, (TaskSpec(0, 1, {"cpu": cpu, "memory": memory}, duration),))


def fixed(jobs):
    return lambda seed: jobs


# Two clusters of 1 cpu and 1 memory. A (0.4 cpu, 0.1 memory, 10 steps) arrives at 0, B (0.1, 0.3, 5) at 2.
HAND = [job(0, 0, 0.4, 0.1, 10), job(1, 2, 0.1, 0.3, 5)]


def test_state_and_reward_of_eq_2_and_4_by_hand_on_two_clusters():
    env = RLSKEnv(fixed(HAND), clusters=2, weights=RLSKWeights(1, 1, 1))
    obs, _ = env.reset(seed=0)
    # Both clusters idle; A's demand as a fraction of a cluster.
    np.testing.assert_allclose(obs, [0, 0, 0, 0, 0.4, 0.1], atol=1e-7)
    obs, reward, terminated, _, _ = env.step(1)  # A to cluster 1
    np.testing.assert_allclose(obs, [0.4, 0.1, 0, 0, 0.1, 0.3], atol=1e-7)
    # On [0, 2): U_1 = (0.4, 0.1), mean 0.25; Util 0.25, DiffCluster |0.4 - 0.1| = 0.3,
    # DiffRes |0.25 - 0| = 0.25: r = -0.3 per step, for 2 steps.
    assert reward == pytest.approx(-0.6) and not terminated
    obs, reward, terminated, _, info = env.step(2)  # B to cluster 2
    # On [2, 7): U_2 = (0.1, 0.3), mean 0.2: Util 0.45, DiffCluster 0.3 + 0.2, DiffRes 0.05: r = -0.1 x 5;
    # on [7, 10): as on [0, 2), -0.3 x 3.
    assert terminated and reward == pytest.approx(-0.5 - 0.9)
    assert info["total_reward"] == pytest.approx(-2.0)
    # eq. 7 and 8 averaged over the makespan of 10: (0.3 x 2 + 0.5 x 5 + 0.3 x 3) / 10, (0.25 x 5 + 0.05 x 5) / 10
    assert info["imbalance_resources"] == pytest.approx(0.4) and info["imbalance_machines"] == pytest.approx(0.15)
    assert info["makespan"] == 10


def test_reward_rate_is_eq_4_with_the_weights():
    util = np.array([[0.5, 0.1], [0.2, 0.2], [0.0, 0.0]])
    # Util: 0.3 + 0.2 + 0; DiffCluster: 0.4 + 0 + 0; DiffRes: |0.3-0.2| + |0.3-0| + |0.2-0| = 0.6
    assert reward_rate(util, RLSKWeights(2, 3, 0.5)) == pytest.approx(2 * 0.5 - 3 * 0.4 - 0.5 * 0.6)
    assert reward_rate(np.stack([util, util]), RLSKWeights()).shape == (2,)


def test_a_broker_run_gets_the_same_total_reward_as_the_environments_steps():
    actions = iter([1, 2])
    broker = FederatedBroker(lambda federation, view, task: next(actions), clusters=2)
    result = simulate(federation_cluster(2), HAND, broker)
    assert federation_metrics(result, 2, RLSKWeights(1, 1, 1))["total_reward"] == pytest.approx(-2.0)
    # The default weights count DiffRes three times: -2.0 - 2 x (0.25 x 2 + 0.05 x 5 + 0.25 x 3) = -5.0
    assert federation_metrics(result, 2)["total_reward"] == pytest.approx(-5.0)


def test_a_postponed_job_comes_back_after_its_interval_and_is_asked_again():
    env = RLSKEnv(fixed([job(0, 0, 0.2, 0.1, 4)]), clusters=2, postpone=(3, 3))
    env.reset(seed=0)
    obs, reward, terminated, _, _ = env.step(0)  # postpone: back at t = 3, nothing ran meanwhile
    assert not terminated and reward == 0.0
    np.testing.assert_allclose(obs, [0, 0, 0, 0, 0.2, 0.1], atol=1e-7)
    assert env.view.time == 3
    _, _, terminated, _, info = env.step(2)
    assert terminated and info["postponements"] == 1
    jobs = info["jobs"]
    assert float(jobs["start_time"].iloc[0]) == 3 and float(jobs["finish_time"].iloc[0]) == 7


def test_a_job_sent_to_a_full_cluster_waits_there_without_blocking_smaller_ones():
    jobs = [job(0, 0, 0.8, 0.1, 10), job(1, 1, 0.5, 0.1, 4), job(2, 2, 0.1, 0.1, 3)]
    sent = iter([1, 1, 1])  # all three to cluster 1; cluster 2 stays empty
    result = simulate(federation_cluster(2), jobs, FederatedBroker(lambda f, v, t: next(sent), clusters=2))
    frame = result.jobs.set_index("job_id")
    assert frame.loc[1, "start_time"] == 10  # waited for A to end, though cluster 2 was free
    assert frame.loc[2, "start_time"] == 2  # fits beside A: not held behind B
    assert set(result.groups.machine) == {0}


def test_queued_jobs_start_on_the_least_allocated_node_of_their_cluster():
    # Two clusters of two nodes of 0.5 cpu and 0.5 memory. A (0.3, 0.1) goes to node 0 (a tie: the first);
    # B (0.1, 0.1): node 0 would keep (0.2, 0.6) of its capacity, node 1 (0.8, 0.8): node 1;
    # C (0.25, 0.05): node 0 has 0.2 cpu left, so node 1.
    jobs = [job(0, 0, 0.3, 0.1, 10), job(1, 1, 0.1, 0.1, 10), job(2, 2, 0.25, 0.05, 10)]
    cluster = federation_cluster(2, nodes=2)
    assert cluster.machines == 4 and cluster.capacities[0] == (0.5, 0.5)
    result = simulate(cluster, jobs, FederatedBroker(lambda f, v, t: 1, clusters=2))
    machines = result.groups.sort_values("start").machine.tolist()
    assert machines == [0, 1, 1]
    # The state pools a cluster's nodes: after all three, cluster 1 holds (0.65, 0.25) of (1, 1).
    env = RLSKEnv(fixed(jobs + [job(3, 3, 0.01, 0.01, 1)]), cluster, clusters=2)
    env.reset(seed=0)
    for _ in range(3):
        obs, *_ = env.step(1)
    np.testing.assert_allclose(obs[:4], [0.65, 0.25, 0, 0], atol=1e-7)


def test_the_environment_passes_gymnasiums_checks_and_replays_a_workload():
    env = gymnasium.make("cloudsim/RLSK-v0", jobs=40)
    check_env(env.unwrapped)
    first = env.reset(options={"workload_seed": 5})[0]
    again = env.reset(options={"workload_seed": 5})[0]
    np.testing.assert_array_equal(first, again)
    assert env.observation_space.shape == (8,) and env.action_space.n == 4
    with pytest.raises(ValueError, match="'jobs' or 'workload_seed'"):
        env.reset(options={"seed": 1})


def test_a_job_postponed_too_often_goes_to_the_least_loaded_cluster():
    # B (20 steps) holds cluster 1 when A arrives at 1; A is postponed twice by 2 steps, the limit,
    # so the third postponement sends it to cluster 2, the least loaded, at t = 5.
    jobs = [job(0, 0, 0.5, 0.5, 20), job(1, 1, 0.2, 0.1, 4)]
    env = RLSKEnv(fixed(jobs), clusters=2, postpone=(2, 2), max_postpones=2)
    env.reset(seed=0)
    env.step(1)
    for _ in range(2):
        env.step(0)
    assert env.view.time == 5
    _, _, terminated, _, info = env.step(0)
    assert terminated and info["postponements"] == 2 and info["forced"] == 1
    starts = info["jobs"].set_index("job_id")["start_time"]
    assert starts[1] == 5
    assert env.sim.result().groups.set_index("job_id").loc[1, "machine"] == 1


def test_the_baselines_act_on_clusters_as_section_iv_a_defines_them():
    jobs = [job(j, j, 0.3, 0.1, 100) for j in range(4)]
    cluster = federation_cluster(3)
    # Round robin: clusters 0, 1, 2, 0 in turn.
    result = simulate(cluster, jobs, make_federated_broker("round-robin", clusters=3, seed=0))
    assert result.groups.sort_values("start").machine.tolist() == [0, 1, 2, 0]
    # Least load: the least-loaded cluster, the first on ties: 0, 1, 2, then 0 again.
    result = simulate(cluster, jobs, make_federated_broker("least-load", clusters=3, seed=0))
    assert result.groups.sort_values("start").machine.tolist() == [0, 1, 2, 0]
    # First fit: cluster 0 while it holds the job (0.3 x 3 = 0.9), then cluster 1.
    result = simulate(cluster, jobs, make_federated_broker("first-fit", clusters=3, seed=0))
    assert result.groups.sort_values("start").machine.tolist() == [0, 0, 0, 1]
    # First fit with every cluster full: the job waits for the first room, then takes it.
    big = [job(0, 0, 0.9, 0.1, 10), job(1, 0, 0.9, 0.1, 20), job(2, 1, 0.5, 0.1, 5)]
    result = simulate(federation_cluster(2), big, make_federated_broker("first-fit", clusters=2, seed=0))
    frame = result.jobs.set_index("job_id")
    assert frame.loc[2, "start_time"] == 10 and result.groups.set_index("job_id").loc[2, "machine"] == 0


def test_the_lookahead_oracle_sends_a_job_where_the_reward_over_its_stay_is_highest():
    # Three clusters of 1 cpu and 1 memory. A (0.6, 1 step), B (0.5, 100) and C (0.55, 100) are placed on
    # clusters 0, 1, 2 at 0; D (0.4, 50) comes at 0.5. Least load sends D to cluster 1 (0.5 is the lowest
    # now). Over D's stay [0.5, 50.5), with cpu and memory equal eq. 7 is 0 and Util the same for any choice,
    # so the reward is -3 x the integral of eq. 8 (sum over pairs of |U_m - U_n|):
    #   cluster 0: 1.0 x 0.5 (1.0, 0.5, 0.55) + 0.3 x 49.5 (0.4, 0.5, 0.55) = 15.35
    #   cluster 1: 0.7 x 0.5 (0.6, 0.9, 0.55) + 1.8 x 49.5 (0, 0.9, 0.55) = 89.45
    #   cluster 2: 0.9 x 0.5 (0.6, 0.5, 0.95) + 1.9 x 49.5 (0, 0.5, 0.95) = 94.5
    # so the look-ahead sends it to cluster 0, where A is about to end.
    from agents.rlsk.federation import least_load, lookahead

    jobs = [job(0, 0, 0.6, 0.6, 1), job(1, 0, 0.5, 0.5, 100), job(2, 0, 0.55, 0.55, 100), job(3, 0.5, 0.4, 0.4, 50)]

    def placed_first(then):
        order = [1, 2, 3]
        return lambda federation, view, task: order.pop(0) if order else then(federation, view, task)

    for rule, cluster in ((least_load(), 1), (lookahead(), 0)):
        result = simulate(federation_cluster(3), jobs, FederatedBroker(placed_first(rule), 3, seed=0))
        assert result.groups.set_index("job_id").machine.tolist() == [0, 1, 2, cluster]


def test_machines_split_into_clusters_as_evenly_as_they_go():
    # 4 machines into 3 clusters: 2, 1, 1; v2018's 4,034 into 3: 1,345, 1,345, 1,344.
    assert cluster_bounds(4, 3).tolist() == [0, 2, 3, 4]
    assert cluster_bounds(4034, 3).tolist() == [0, 1345, 2690, 4034]
    federation = Federation(ClusterSpec.uniform(5, {"cpu": 1, "memory": 2}), 2)
    assert federation.capacity.tolist() == [[3.0, 6.0], [2.0, 4.0]]
    with pytest.raises(ValueError, match="2 machine.s. cannot form 3 clusters"):
        Federation(ClusterSpec.uniform(2, {"cpu": 1, "memory": 1}), 3)
    with pytest.raises(ValueError, match="postpone must be whole steps"):
        Federation(federation_cluster(3), 3, postpone=(5, 2))


def test_clusters_of_unequal_size_place_on_their_own_machines_and_pool_their_usage():
    # 5 machines of 1 cpu in 2 clusters: machines 0-2 and 3-4. Round robin sends job 0 to cluster 0
    # (machine 0: the least allocated, the first on ties), job 1 to cluster 1 (machine 3), job 2 to
    # cluster 0 again (machine 1, now the least allocated there).
    cluster = ClusterSpec.uniform(5, {"cpu": 1.0, "memory": 1.0})
    jobs = [job(j, j, 0.6, 0.3, 10) for j in range(3)]
    broker = make_federated_broker("round-robin", clusters=2, seed=0)
    result = simulate(cluster, jobs, broker)
    assert result.groups.sort_values("start").machine.tolist() == [0, 3, 1]
    # From t=2 to 10 cluster 0 holds 1.2 of its 3 cpus, cluster 1 holds 0.6 of its 2.
    times, util = cluster_utilisation(result, 2)
    at = int(np.searchsorted(times, 2.0))
    assert util[at, :, 0] == pytest.approx([1.2 / 3, 0.6 / 2])


@pytest.mark.parametrize("checkpoint", [None, "agents/checkpoints/rlsk-100.pt"])
def test_the_shipped_agents_load_and_dispatch_every_job(checkpoint):
    from pathlib import Path

    path = None if checkpoint is None else str(Path(__file__).resolve().parents[1] / checkpoint)
    broker = make_broker("rlsk", checkpoint=path)
    result = simulate(federation_cluster(3), rlsk_workload(0.7, 300, seed=0), broker)
    assert result.summary["instances_finished"] == 300
    assert broker.federation.dispatched == 300  # each job sent to a cluster once, postponed or not
    with pytest.raises(CheckpointError, match="trained for 3 clusters"):
        make_federated_broker("rlsk", clusters=2).check_cluster(federation_cluster(2))


def test_train_resume_and_compare_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "run"
    base = ["train", "rlsk", "--jobs", "30", "--sequences", "2", "--envs", "1", "--out", str(out)]
    code, stdout, err = cli([*base, "--timesteps", "70"], capsys)
    assert code == 0, err
    assert json.loads(stdout.splitlines()[-1])["timesteps"] == 70
    code, stdout, err = cli([*base, "--timesteps", "250", "--resume"], capsys)
    assert code == 0, err
    epochs = [json.loads(line)["epoch"] for line in (out / "log.jsonl").read_text().splitlines()]
    assert epochs == list(range(1, len(epochs) + 1)) and len(epochs) >= 1
    code, stdout, err = cli(["compare", "rlsk", "--brokers", "least-load,rlsk", "--checkpoint",
                             f"rlsk={out / 'policy.pt'}", "--seeds", "0:2", "--synthetic-jobs", "40", "--json"],
                            capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in stdout.splitlines()]
    runs, summary = rows[:-1], rows[-1]
    assert sorted((r["broker"], r["seed"]) for r in runs) == [("least-load", 0), ("least-load", 1),
                                                             ("rlsk", 0), ("rlsk", 1)]
    for row in runs:
        assert {"makespan", "imbalance_machines", "imbalance_resources", "mean_utilisation",
                "total_reward"} <= row.keys()
        assert row["instances_finished"] == 40
    assert summary["summary"] and summary["seeds"] == [0, 1]


@pytest.mark.parametrize("argv, words", [
    (["compare", "rlsk", "--brokers", "tetris"], ["--brokers", "tetris", "cannot dispatch", "--env cloudsim"]),
    (["compare", "deeprm", "--nodes", "2"], ["--nodes", "--env rlsk"]),
    (["replay", "--synthetic-jobs", "3", "--brokers", "first-fit,lookahead"],
     ["--brokers", "lookahead dispatches jobs to RLSK's clusters only", "cloudsim compare rlsk --brokers lookahead"]),
    (["compare", "--synthetic-jobs", "3", "--brokers", "lookahead"], ["lookahead dispatches jobs to RLSK's clusters"]),
    (["compare", "rlsk", "--nodes", "0"], ["--nodes", ">= 1"]),
    (["train", "rlsk", "--postpone", "5:2"], ["--postpone 5:2", "1 <= LOW <= HIGH"]),
    (["train", "rlsk", "--jobs", "0"], ["--jobs", ">= 1"]),
    (["train", "rlsk", "--discount", "1.5"], ["--discount", "[0, 1]"]),
    (["train", "rlsk", "--resume"], ["--resume", "model.zip is missing"]),
])
def test_mistakes_get_one_clear_message(tmp_path, capsys, argv, words):
    code, _, err = cli([*argv, *(["--out", str(tmp_path / "run")] if argv[0] == "train" else [])], capsys)
    assert code == 2 and "Traceback" not in err
    for word in words:
        assert word in err, err


def test_the_environment_runs_in_a_vector_environment():
    envs = gymnasium.vector.SyncVectorEnv([lambda: gymnasium.make("cloudsim/RLSK-v0", jobs=20)] * 2)
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (2, 8)
    finished = 0
    for _ in range(200):
        obs, reward, terminated, truncated, info = envs.step(np.array([1, 2]))
        finished += int(terminated.sum())
    assert finished >= 2 and obs.shape == (2, 8)


def test_a_job_re_queued_by_a_failure_rejoins_its_clusters_queue():
    # A runs on cluster 1's only node, which fails at 2 and comes back at 5: A waits for it there
    # (as Kubernetes reschedules a pod inside its cluster), though cluster 2 is free, and ends at 15.
    from cloudsim import MachineEvent, Simulation

    jobs = [job(0, 0, 0.5, 0.5, 10)]
    broker = FederatedBroker(lambda f, v, t: 1, clusters=2)
    events = [MachineEvent(2, 0, "failed"), MachineEvent(5, 0, "up")]
    result = Simulation(federation_cluster(2), jobs, broker, machine_events=events).run()
    groups = result.groups.sort_values("start")
    assert groups.machine.tolist() == [0, 0] and groups.start.tolist() == [0, 5]
    assert result.makespan == 15 and broker.federation.dispatched == 1


def test_rlsk_replays_on_any_machine_count_and_says_how_the_clusters_differ(capsys):
    from cloudsim.cli import main
    # 7 machines into RLSK's 3 clusters: 3, 2 and 2 of them.
    assert main(["replay", "rlsk", "--synthetic-jobs", "20", "--machines", "7", "--brokers", "rlsk", "--json"]) == 0
    captured = capsys.readouterr()
    assert "running on 7 machines in clusters of 3, 2, 2 node(s)" in captured.err
    summary = json.loads(captured.out.splitlines()[-1])
    assert summary["finished"] == {"rlsk": summary["instances"]}
