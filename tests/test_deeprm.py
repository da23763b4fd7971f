"""DeepRM's environment against its published code's behaviour (docs/papers/deeprm.md), and its agent.

The calibration figures come from that page's calibration table (measured by running the
original code); the small episodes are worked out by hand in the comments.
"""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import cloudsim  # noqa: F401  (registers the environments)
from cloudsim.engine.envs.deeprm import (DeepRMBatch, DeepRMEnv, DeepRMParams, deeprm_jobsets, load_for_rate,
                                  packer_actions, rate_for_load, render_image, sjf_actions, tetris_star_actions)

# a small machine for hand-worked episodes: 3 units of 2 resources, 4 steps of horizon,
# 2 slots of 2 columns, a backlog of 4 (one column of the image)
SMALL = dict(slots=2, horizon=4, res_slot=3, max_job_len=3, max_job_size=2, backlog=4, resources=2)


def jobset(*jobs):
    """Jobs (index, length, (size0, size1)) as the code's arrays, 4 steps long."""
    lengths, sizes = np.zeros(4, dtype=int), np.zeros((4, 2), dtype=int)
    for index, length, size in jobs:
        lengths[index], sizes[index] = length, size
    return lengths, sizes


def run_all(batch: DeepRMBatch, policy) -> None:
    while not batch.done.all():
        batch.step(policy(batch))


def pooled(batch: DeepRMBatch):
    slow, comp = [], []
    for b in range(batch.B):
        for job in batch.jobs(b):
            comp.append(job["finish_time"] - job["enter_time"])
            slow.append(comp[-1] / job["length"])
    return len(slow), np.mean(slow), np.mean(comp)


@pytest.mark.parametrize("rate,jobs,sjf,packer,sjf_completion", [
    (0.1, 61, 1.354, 1.377, 4.426),
    (0.3, 163, 2.493, 4.320, 8.006),
    (0.5, 234, 2.994, 7.326, 8.808),
    (0.7, 352, 5.755, 14.406, 17.571),
    (0.9, 436, 6.537, 17.151, 20.218),
])
def test_calibration_table_of_the_original_code(rate, jobs, sjf, packer, sjf_completion):
    params = DeepRMParams(slots=10, new_job_rate=rate)
    lengths, sizes = deeprm_jobsets(42, 10, params)
    results = {}
    for name, policy in (("sjf", sjf_actions), ("packer", packer_actions)):
        batch = DeepRMBatch(params, lengths, sizes)
        run_all(batch, policy)
        results[name] = pooled(batch)
        assert not batch.truncated.any() and batch.dropped.sum() == 0
    assert results["sjf"][0] == results["packer"][0] == jobs
    assert results["sjf"][1] == pytest.approx(sjf, abs=5e-4)
    assert results["packer"][1] == pytest.approx(packer, abs=5e-4)
    assert results["sjf"][2] == pytest.approx(sjf_completion, abs=5e-4)


def test_jobsets_follow_the_codes_call_order():
    # the first draws of RandomState(42): rand() = 0.3745 < 0.7 -> a job; rand() = 0.9507 >= 0.8 -> big,
    # randint(10, 16); then the dominant resource and the two demands, in that order
    rng = np.random.RandomState(42)
    assert rng.rand() < 0.7 and rng.rand() >= 0.8
    length = rng.randint(10, 16)
    dominant = rng.randint(0, 2)
    first = [rng.randint(5, 11) if i == dominant else rng.randint(1, 3) for i in range(2)]
    lengths, sizes = deeprm_jobsets(42, 1, DeepRMParams(new_job_rate=0.7))
    assert lengths[0, 0] == length and list(sizes[0, 0]) == first
    # the same stream cut in jobsets: the second jobset of a draw of 2 goes on where the first stopped
    two, _ = deeprm_jobsets(42, 2, DeepRMParams(new_job_rate=0.7))
    assert np.array_equal(two[0], lengths[0])


def test_loads_and_the_papers_sizes():
    code, paper = DeepRMParams(), DeepRMParams(mode="paper")
    # E[len] = 0.8 * 2 + 0.2 * 12.5 = 4.1; E[demand] = (7.5 + 1.5) / 2 = 4.5 units of 10 (code) or 20 (paper)
    assert load_for_rate(1.0, code) == pytest.approx(1.845)
    assert load_for_rate(1.0, paper) == pytest.approx(0.9225)
    assert rate_for_load(1.3, code) == pytest.approx(1.3 / 1.845)
    with pytest.raises(ValueError, match="out of reach.*code's job sizes"):
        rate_for_load(1.3, paper)
    # the paper's 0.25r-0.5r and 0.05r-0.1r on 20 units: 5..10 and 1..2 units
    lengths, sizes = deeprm_jobsets(3, 20, DeepRMParams(mode="paper", new_job_rate=1.0))
    dominant, other = sizes.max(2), sizes.min(2)
    assert dominant.min() >= 5 and dominant.max() <= 10 and other.min() >= 1 and other.max() <= 2


def test_a_hand_worked_episode_with_a_stale_job():
    # job 1 (len 2, size (2,1)) arrives at time 1, job 2 (len 1, (1,2)) at 2, job 3 (len 3, (2,2)) at 3
    lengths, sizes = jobset((1, 2, (2, 1)), (2, 1, (1, 2)), (3, 3, (2, 2)))
    env = DeepRMEnv(observation="image", simu_len=4, **SMALL)
    env.reset(options={"jobset": {"lengths": lengths, "sizes": sizes}})
    void = 2
    steps = []
    for action in (void, 0, void, 0, void, 0, void, void, void):
        obs, reward, terminated, truncated, info = env.step(action)
        steps.append((info["time"], reward))
        if terminated:
            break
    # time 1: job 1 waits (-1/2); allocated; time 2: job 1 runs, job 2 waits (-1/2 - 1);
    # job 2 allocated now; time 3: job 1 finishes and leaves, job 2 finished too but, right after a removed job
    # in the list, stays (-1), job 3 arrives (-1/3); allocated; times 4, 5: job 3 (-1/3 each); time 6: done (0)
    assert steps == [(1, -0.5), (1, 0.0), (2, -1.5), (2, 0.0), (3, -1 - 1 / 3), (3, 0.0), (4, -1 / 3),
                     (5, -1 / 3), (6, 0.0)]
    assert terminated and not truncated
    assert [(j["enter_time"], j["start_time"], j["finish_time"], j["length"]) for j in info["jobs"]] == \
        [(1, 1, 3, 2), (2, 2, 3, 1), (3, 3, 6, 3)]
    # without the stale job (paper mode) the rewards add up to minus the slowdowns: 1 + 1 + 1
    paper = DeepRMBatch(DeepRMParams(mode="paper", simu_len=4, **{**SMALL, "res_slot": 3}), lengths, sizes)
    total = 0.0
    for action in (void, 0, void, 0, void, 0, void, void, void):
        reward, done = paper.step(np.array([action]))
        total += reward[0]
        if done[0]:
            break
    assert total == pytest.approx(-3.0)
    # with it, one more job-step of job 2 is charged: -4
    assert sum(r for _, r in steps) == pytest.approx(-4.0)


def test_reward_sums_to_minus_the_slowdowns_without_stale_jobs():
    params = DeepRMParams(slots=5, new_job_rate=0.5, mode="paper")
    lengths, sizes = deeprm_jobsets(7, 6, params)
    batch = DeepRMBatch(params, lengths, sizes)
    total = np.zeros(batch.B)
    while not batch.done.all():
        reward, _ = batch.step(tetris_star_actions(batch, knob=0.3))
        total += reward
    slow = [sum((j["finish_time"] - j["enter_time"]) / j["length"] for j in batch.jobs(b)) for b in range(batch.B)]
    assert np.allclose(total, -np.array(slow), atol=1e-9)


def test_a_job_is_placed_at_the_earliest_future_offset_and_starts_then():
    # job 1 (len 2) takes all of both resources for times 1-2; job 2 (len 1, (1,1)) arrives at 2 and,
    # allocated at time 2, fits first at offset 1 (time 3), inside the horizon's rows 0..T-len-1 = 0..2
    lengths, sizes = jobset((1, 2, (2, 2)), (2, 1, (1, 1)))
    params = DeepRMParams(simu_len=4, **{**SMALL, "res_slot": 2})
    batch = DeepRMBatch(params, lengths, sizes)
    batch.step(np.array([2]))  # time 1: job 1 arrives
    batch.step(np.array([0]))  # allocated now, times 1 and 2
    batch.step(np.array([2]))  # time 2: job 2 arrives
    batch.step(np.array([0]))
    assert batch.start[0, 2] == 3 and batch.finish[0, 2] == 4
    assert list(batch.avbl[0, :, 0]) == [0, 1, 2, 2]  # row 0 (time 2) job 1; row 1 (time 3) job 2
    # a heuristic never reserves: it only takes a job that fits from now
    batch2 = DeepRMBatch(params, lengths, sizes)
    for _ in range(3):
        batch2.step(sjf_actions(batch2))
    assert sjf_actions(batch2)[0] == 2  # job 2 does not fit now: void


def test_a_job_that_fits_nowhere_in_the_horizon_moves_time_on():
    # job 1: len 3 of all units; job 2: len 3 too: with T = 4 a job may start only at offset 0 (0 < 4 - 3)
    lengths, sizes = jobset((1, 3, (2, 2)), (2, 3, (1, 1)))
    params = DeepRMParams(simu_len=4, **{**SMALL, "res_slot": 2})
    batch = DeepRMBatch(params, lengths, sizes)
    batch.step(np.array([2]))
    batch.step(np.array([0]))
    batch.step(np.array([2]))
    assert not batch.placeable()[0, 0]
    batch.step(np.array([0]))  # refused: time moves on instead
    assert batch.time[0] == 3 and batch.start[0, 2] == -1


def test_a_job_arriving_to_a_full_backlog_is_dropped_and_counted():
    lengths, sizes = jobset((1, 1, (1, 1)), (2, 1, (1, 1)), (3, 1, (1, 1)))
    env = DeepRMEnv(simu_len=4, **{**SMALL, "slots": 1, "backlog": 1})
    env.reset(options={"jobset": {"lengths": lengths, "sizes": sizes}})
    for _ in range(3):
        *_, info = env.step(1)  # void: job 1 in the slot, job 2 in the backlog, job 3 dropped
    assert info["dropped"] == 1
    while True:
        *_, terminated, truncated, info = env.step(0)
        if terminated or truncated:
            break
    assert [j["enter_time"] for j in info["jobs"]] == [1, 2]
    assert info["summary"]["dropped"] == 1 and info["summary"]["jobs"] == 2


def test_image_of_a_hand_drawn_state():
    # time 2 of the stale-job episode: job 1 (size (2,1)) holds row 0; job 2 (len 1, (1,2)) waits in slot 0;
    # a backlog of 1 of 4 cells; 0 steps since the last arrival
    lengths, sizes = jobset((1, 2, (2, 1)), (2, 1, (1, 2)))
    params = DeepRMParams(simu_len=4, **SMALL)
    batch = DeepRMBatch(params, lengths, sizes)
    for action in (2, 0, 2):
        batch.step(np.array([action]))
    image = batch.image()[0]
    assert image.shape == (4, (3 + 2 * 2) * 2 + 1 + 1) == params.image_shape
    expected = np.zeros((4, 16), dtype=np.float32)
    expected[0, 0:2] = 1        # resource 0: 2 of 3 units used at offset 0
    expected[0, 3:4] = 1        # slot 0, resource 0: 1 row x 1 column
    expected[0, 7:8] = 1        # resource 1: 1 unit used
    expected[0, 10:12] = 1      # slot 0, resource 1: 1 row x 2 columns
    assert np.array_equal(image, expected)
    # time-since-last-job column, and the backlog filled row by row (bw = 1 column here)
    snap = batch.snapshot()
    snap["backlog_n"] = np.array([3], dtype=np.int16)
    snap["since_new"] = np.array([4], dtype=np.int16)
    drawn = render_image(snap, params)[0]
    assert list(drawn[:, 14]) == [1, 1, 1, 0] and np.allclose(drawn[:, 15], 0.4)
    wide = DeepRMParams(slots=10)
    assert wide.image_shape == (20, 224) and DeepRMParams(slots=5).image_shape == (20, 124)
    assert DeepRMParams(slots=5).compact_size == 76 and wide.compact_size == 91


def test_compact_observation_by_hand():
    lengths, sizes = jobset((1, 2, (2, 1)), (2, 1, (1, 2)))
    batch = DeepRMBatch(DeepRMParams(simu_len=4, **SMALL), lengths, sizes)
    for action in (2, 0, 2):
        batch.step(np.array([action]))
    compact = batch.compact()[0]
    # running jobs per offset: job 1 finishes at 3 = now + 1 -> [1, 0, 0, 0]; free units per offset of
    # resource 0 [1, 3, 3, 3] and resource 1 [2, 3, 3, 3]; slots [len, sizes] = [1, 1, 2] and [0, 0, 0]; backlog 0
    assert list(compact) == [1, 0, 0, 0, 1, 3, 3, 3, 2, 3, 3, 3, 1, 1, 2, 0, 0, 0, 0]


def test_tetris_star_knob_ends():
    params = DeepRMParams(slots=10, new_job_rate=0.7)
    lengths, sizes = deeprm_jobsets(11, 3, params)
    for knob, plain in ((0.0, sjf_actions), (1.0, packer_actions)):
        a, b = DeepRMBatch(params, lengths, sizes), DeepRMBatch(params, lengths, sizes)
        while not a.done.all():
            act = tetris_star_actions(a, knob)
            assert np.array_equal(act, plain(b))
            a.step(act)
            b.step(act)


def test_gymnasium_contract():
    for observation in ("image", "compact"):
        env = gymnasium.make("cloudsim/DeepRM-v0", slots=10, observation=observation)
        check_env(env.unwrapped, skip_render_check=True)
    env = gymnasium.make("cloudsim/DeepRM-v0", slots=5)
    p = env.unwrapped.params
    assert (p.horizon, p.res_slot, p.max_job_len, p.max_job_size, p.backlog, p.resources, p.end) == \
        (20, 10, 15, 10, 60, 2, "all_done")
    with pytest.raises(ValueError, match="load or new_job_rate"):
        DeepRMEnv(load=0.7, new_job_rate=0.3)
    with pytest.raises(ValueError, match="jobset"):
        DeepRMEnv().reset(options={"jobset": [1, 2]})
    with pytest.raises(ValueError, match="lengths must be in"):
        DeepRMEnv().reset(options={"jobset": {"lengths": [0, 99], "sizes": [[0, 0], [1, 1]]}})


# ------------------------------------------------------------------ the agent
torch = pytest.importorskip("torch")


def test_network_size_and_fast_forward_equal_the_image_network():
    from agents.deeprm.agent import DeepRMNet, image_logits, snapshot_tensors

    params = DeepRMParams(slots=10, new_job_rate=0.7)
    net = DeepRMNet(params)
    # 4,480 pixels x 20 + 20, then 20 x 11 + 11; the paper's 89,451 is this without the
    # time-since-arrival column (4,460 pixels)
    assert sum(p.numel() for p in net.parameters()) == 4480 * 20 + 20 + 20 * 11 + 11 == 89_851
    with torch.no_grad():
        for weight in net.parameters():
            weight.normal_()
    lengths, sizes = deeprm_jobsets(5, 12, params)
    batch = DeepRMBatch(params, lengths, sizes)
    rng = np.random.default_rng(0)
    for _ in range(40):  # random actions: reservations in the future, full backlogs
        batch.step(rng.integers(0, 11, batch.B))
    with torch.no_grad():
        fast = net.logits_snapshot(snapshot_tensors(batch.snapshot()))
        slow = image_logits(net, batch)
    assert torch.allclose(fast, slow, rtol=1e-4, atol=1e-3)


def test_advantages_use_the_per_step_baseline_with_zero_padding():
    from agents.deeprm.agent import Rollout, advantages

    # one jobset, N = 2 episodes: rewards [-1, -1, -1] and [-2]; returns [-3, -2, -1] and [-2];
    # baseline b_t = mean with the short one padded by 0: [-2.5, -1, -0.5]
    params = DeepRMParams(**SMALL, simu_len=4)
    lengths, sizes = jobset()
    batch = DeepRMBatch(params, np.stack([lengths] * 2), np.stack([sizes] * 2))
    roll = Rollout(episode=np.array([0, 1, 0, 0]), step=np.array([0, 0, 1, 2]), snap={}, action=np.zeros(4, int),
                   reward=np.array([-1.0, -2.0, -1.0, -1.0]), batch=batch)
    adv, totals = advantages(roll, episodes_per_jobset=2, gamma=1.0)
    assert np.allclose(adv, [-3 + 2.5, -2 + 2.5, -2 + 1, -1 + 0.5])
    assert list(totals) == [-3.0, -2.0]


def test_training_saves_resumes_and_the_policy_schedules(tmp_path):
    from agents.deeprm import load_policy, train
    from agents.deeprm.config import DeepRMConfig

    config = DeepRMConfig(slots=5, simu_len=10, jobsets=2, episodes=3, iterations=2, max_actions=60)
    path = train(config, tmp_path, progress=False, save_every=1)
    rows = (tmp_path / "log.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("iteration,mean_reward,max_reward,mean_slowdown")
    train(DeepRMConfig(**{**config.__dict__, "iterations": 3}), tmp_path, progress=False, resume=True)
    assert len((tmp_path / "log.csv").read_text().splitlines()) == 4
    with pytest.raises(ValueError, match="other settings.*load"):
        train(DeepRMConfig(**{**config.__dict__, "load": 0.5}), tmp_path, progress=False, resume=True)
    policy = load_policy(path)
    params = config.env_params()
    lengths, sizes = deeprm_jobsets(1, 4, params)
    batch = DeepRMBatch(params, lengths, sizes)
    while not batch.done.all():
        batch.step(policy(batch))
    jobs = [job for b in range(4) for job in batch.jobs(b)]
    placed = [job for job in jobs if job["start_time"] >= 0]
    assert placed and all(job["start_time"] >= job["enter_time"] for job in placed)
    assert sum(batch.summary(b)["allocated"] + batch.summary(b)["not_allocated"] for b in range(4)) == len(jobs)
    with pytest.raises(ValueError, match="trained for 5 slots"):
        policy(DeepRMBatch(DeepRMParams(slots=10), lengths, sizes))


@pytest.mark.parametrize("slots,rate,backlog", [(5, 0.3, 60), (5, 0.9, 4), (10, 0.7, 60), (10, 1.0, 3)])
def test_matches_a_plain_model_of_the_code_step_by_step(slots, rate, backlog):
    from tests.deeprm_reference import ReferenceEpisode

    params = DeepRMParams(slots=slots, new_job_rate=rate, backlog=backlog)
    lengths, sizes = deeprm_jobsets(17, 6, params)
    rng = np.random.default_rng(slots)
    for policy in ("random", "sjf", "tetris-star"):
        batch = DeepRMBatch(params, lengths, sizes)
        refs = [ReferenceEpisode(lengths[b], sizes[b], slots=slots, backlog=backlog) for b in range(batch.B)]
        ended = [False] * batch.B
        while not batch.done.all():
            if policy == "random":  # reservations at future offsets, and every kind of void
                actions = rng.integers(0, slots + 1, batch.B)
            else:
                actions = sjf_actions(batch) if policy == "sjf" else tetris_star_actions(batch, 0.3)
            rewards, done = batch.step(actions)
            for b, ref in enumerate(refs):
                if not ended[b]:
                    reward, ref_done = ref.step(int(actions[b]))
                    assert rewards[b] == reward and done[b] == ref_done and batch.time[b] == ref.time
                    ended[b] = ref_done
        for b, ref in enumerate(refs):
            assert [(j["enter_time"], j["start_time"], j["finish_time"]) for j in batch.jobs(b)] == \
                [(j.enter, j.start, j.finish) for j in ref.record]
            assert batch.dropped[b].sum() == ref.dropped
    if backlog < 5:
        assert batch.dropped.sum() > 0  # the full-backlog path was exercised


# ------------------------------------------------------------------ command line
def test_compare_in_deeprms_environment_prints_one_row_per_broker_load_and_seed(capsys):
    import json

    from cloudsim.cli import main

    assert main(["compare", "deeprm", "--env", "deeprm", "--brokers", "sjf,packer,tetris-star", "--knobs", "0,1",
                 "--loads", "0.5,0.9", "--seeds", "0:3", "--sizes", "code", "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    rows, summary = lines[:-1], lines[-1]
    assert len(rows) == 4 * 2 * 3 and summary["summary"] and summary["runs"] == 24
    by = {(r["broker"], r["load"], r["seed"]): r for r in rows}
    for load in (0.5, 0.9):
        for seed in range(3):
            # knob 0 is SJF and knob 1 is Packer, job for job
            assert by["tetris-star(0)", load, seed]["avg_job_slowdown"] == by["sjf", load, seed]["avg_job_slowdown"]
            assert by["tetris-star(1)", load, seed]["avg_job_slowdown"] == by["packer", load, seed]["avg_job_slowdown"]
    # the same jobset as the environment draws for that seed, run by SJF here
    params = DeepRMParams(slots=10, new_job_rate=rate_for_load(0.9, DeepRMParams()))
    batch = DeepRMBatch(params, *deeprm_jobsets(2, 1, params))
    run_all(batch, sjf_actions)
    assert by["sjf", 0.9, 2]["avg_job_slowdown"] == pytest.approx(batch.summary(0)["avg_job_slowdown"])
    assert by["sjf", 0.9, 2]["jobs"] == batch.summary(0)["jobs"]


@pytest.mark.parametrize("argv,message", [
    (["compare", "deeprm", "--env", "deeprm", "--brokers", "first-fit"], "cannot act in DeepRM's environment"),
    (["compare", "alibaba-like", "--env", "deeprm"], "runs the deeprm workload"),
    (["compare", "deeprm", "--env", "deeprm", "--sizes", "paper", "--load", "1.3"], "out of reach in mode 'paper'"),
    (["compare", "deeprm", "--knobs", "0.3"], "add --env deeprm"),
    (["compare", "deeprm", "--env", "deeprm", "--brokers", "tetris-star", "--knobs", "2"], "in \\[0, 1\\]"),
    (["train", "deeprm", "--load", "0"], "out of reach"),
    (["train", "deeprm", "--jobsets", "0"], "jobsets"),
    (["train", "deeprm", "--sizes", "paper", "--load", "1.3"], "code's job sizes"),
])
def test_command_line_mistakes_name_the_option(argv, message, capsys, tmp_path):
    from cloudsim.cli import main

    assert main(argv + (["--out", str(tmp_path / "run")] if argv[0] == "train" else [])) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and pytest.importorskip("re").search(message, err)


def test_train_resume_refuses_other_settings(tmp_path, capsys):
    from cloudsim.cli import main

    out = str(tmp_path / "run")
    small = ["--slots", "5", "--jobsets", "2", "--episodes", "2", "--out", out]
    assert main(["train", "deeprm", *small, "--iterations", "1"]) == 0
    assert main(["train", "deeprm", *small, "--iterations", "1"]) == 2
    assert "already holds a trained policy" in capsys.readouterr().err
    assert main(["train", "deeprm", "--out", out, "--resume", "--load", "0.5", "--iterations", "2"]) == 2
    assert "differs from the training being resumed" in capsys.readouterr().err
    assert main(["train", "deeprm", "--out", out, "--resume", "--iterations", "2"]) == 0


# ------------------------------------------------------------------ DeepRM_Plus
def test_table_one_cnn_shapes():
    from agents.deeprm.plus import DeepRMPlusNet

    net = DeepRMPlusNet(DeepRMParams(slots=10))
    image = torch.zeros(3, 20, 224)
    assert net.features[:3](image[:, None]).shape == (3, 8, 10, 112)  # conv 5x5 x 8 (same size), pool 2x2
    assert net.features(image[:, None]).shape == (3, 16 * 5 * 56)     # conv 5x5 x 16, pool: 5 x 56 x 16
    assert net.hidden.out_features == 69 and net(image).shape == (3, 11)


def test_expert_pairs_are_distinct_and_cloning_learns_an_expert():
    from agents.deeprm.plus import DeepRMPlusNet, clone, expert_pairs

    params = DeepRMParams(slots=5, new_job_rate=0.7, simu_len=30)
    lengths, sizes = deeprm_jobsets(2, 4, params)
    states, actions = expert_pairs(params, lengths, sizes)
    twice, again = expert_pairs(params, np.concatenate([lengths] * 2), np.concatenate([sizes] * 2))
    assert again.size == actions.size  # the same jobsets twice add no new pair
    rows = np.concatenate([v.reshape(actions.size, -1) for v in states.values()] + [actions[:, None]], axis=1)
    assert len(np.unique(rows, axis=0)) == actions.size

    def first_slot(batch):  # an expert simple enough to be learnt exactly: slot 0 when it holds a job
        return np.where(batch.slot[:, 0] >= 0, 0, params.slots)

    states, actions = expert_pairs(params, lengths, sizes, expert=first_slot)
    torch.manual_seed(0)
    result = clone(DeepRMPlusNet(params), states, actions, accuracy=0.95, max_epochs=40, learning_rate=3e-3,
                   batch_size=256)
    assert result.accuracy > 0.95 and len(result.accuracies) < 40
    assert result.test_pairs == max(1, actions.size // 10) and result.train_pairs + result.test_pairs == actions.size


@pytest.mark.parametrize("objective", ["slowdown", "completion"])
def test_shipped_checkpoints_load_and_schedule(objective):
    from agents import make_deeprm_broker
    from agents.deeprm import load_policy, shipped_checkpoint

    policy = load_policy(shipped_checkpoint(objective))
    assert policy.params.slots == 10 and policy.params.objective == objective
    broker = make_deeprm_broker("deeprm", seed=1) if objective == "slowdown" else policy
    params = DeepRMParams(slots=10, new_job_rate=0.5)
    batch = DeepRMBatch(params, *deeprm_jobsets(3, 4, params))
    run_all(batch, broker)
    assert not batch.truncated.any()
    assert all(job["start_time"] >= job["enter_time"] for b in range(4) for job in batch.jobs(b))
