"""The Gymnasium environments: registration, the checker, seeding, Deepk8s's reward and mask, vector envs."""

import functools

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import cloudsim  # noqa: F401  (registers the environments)
from cloudsim import ClusterSpec, JobSpec, TaskSpec
from cloudsim import ENVIRONMENTS
from cloudsim.engine.envs import Deepk8sEnv


def task_job(jid, submit, cpu, duration, memory=1.0):
    return JobSpec(jid, submit, (TaskSpec(0, 1, {"cpu": cpu, "memory": memory}, duration),))


def random_tasks(seed: int, n: int = 30) -> list[JobSpec]:
    """A small Deepk8s-like workload: tasks of 1-6 cpu, 1-30 memory, 2-40 long, about one every 3 time units."""
    rng = np.random.default_rng(seed)
    arrivals = np.floor(np.cumsum(rng.exponential(3, n)))
    arrivals -= arrivals[0]
    return [task_job(i, float(arrivals[i]), float(rng.integers(1, 7)), float(rng.integers(2, 41)),
                     float(rng.integers(1, 31))) for i in range(n)]


def make(**options):
    return gymnasium.make("cloudsim/Deepk8s-v0", workload=random_tasks, **options)


def play(env, actions_from, seed):
    """Run one episode; ``actions_from(mask, rng)`` picks each action. Returns (obs, rewards, final info)."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    observations, rewards, done = [obs], [], False
    while not done:
        obs, reward, terminated, truncated, info = env.step(actions_from(env.unwrapped.action_masks(), rng))
        observations.append(obs)
        rewards.append(reward)
        done = terminated or truncated
    return observations, rewards, info


def any_fit(mask, rng):
    return int(rng.choice(np.flatnonzero(mask)))


@pytest.mark.parametrize("env_id", sorted(ENVIRONMENTS))
def test_every_registered_environment_passes_the_checker_with_its_default_workload(env_id):
    env = gymnasium.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs) and "action_mask" in info


def test_deepk8s_spaces_are_the_papers():
    env = make()
    assert env.action_space.n == 5 * 10 + 1  # (machine, slot) pairs and wait
    assert env.observation_space.shape == (5 * 2 + 11 * 3 + 1,)


def test_the_return_is_minus_the_sum_of_weighted_turnarounds_on_three_tasks_by_hand():
    # One machine of 10 cpu. A (6 cpu, 4 long) and B (6 cpu, 2 long) arrive at 0, C (4 cpu, 3 long) at 1.
    # t=0: place A (slot 0); B does not fit, so time runs to C's arrival: -(1 - 0) * (1/4 + 1/2) = -0.75.
    # t=1: place C (slot 1; B is slot 0); nothing else fits until A and C end at 4:
    #      -(4 - 1) * (1/4 + 1/2 + 1/3) = -3.25.
    # t=4: place B, which ends at 6: -(6 - 4) * (1/2) = -1.
    # Weighted turnarounds: A (4 - 0) / 4 = 1, C (4 - 1) / 3 = 1, B (6 - 0) / 2 = 3: the sum is 5.
    jobs = [task_job("A", 0, 6, 4), task_job("B", 0, 6, 2), task_job("C", 1, 4, 3)]
    env = Deepk8sEnv(lambda seed: jobs, ClusterSpec.uniform(1, {"cpu": 10, "memory": 64}))
    env.reset(seed=0)
    rewards = []
    for action in (0, 1, 0):
        _, reward, terminated, truncated, info = env.step(action)
        rewards.append(reward)
    assert rewards == pytest.approx([-0.75, -3.25, -1.0])
    assert terminated and not truncated
    assert info["jobs"].set_index("job_id").finish_time.to_dict() == {"A": 4, "B": 6, "C": 4}
    assert sum(rewards) == pytest.approx(-5.0)


def test_over_a_random_episode_the_return_equals_minus_the_sum_of_weighted_turnarounds():
    _, rewards, info = play(make(), any_fit, seed=7)
    jobs = info["jobs"]
    assert sum(rewards) == pytest.approx(-((jobs.finish_time - jobs.submit_time) / jobs.duration).sum())
    assert info["summary"]["jobs"] == len(jobs) == 30


def test_the_action_mask_is_the_windows_fit_pairs_and_wait():
    env = make(window=4)
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(40):
        view = env.unwrapped.view
        if view is None:
            break
        visible = view.window(4)
        mask = env.unwrapped.action_masks()
        pairs = mask[:-1].reshape(5, 4)
        assert mask[-1]
        assert np.array_equal(pairs[:, : visible.num_tasks], visible.fits)
        assert not pairs[:, visible.num_tasks:].any()
        env.step(any_fit(mask, rng))


def test_an_invalid_pair_acts_as_wait():
    env = make()
    env.reset(seed=2)
    mask = env.unwrapped.action_masks()
    invalid = int(np.flatnonzero(~mask)[0])
    before = env.unwrapped.view.time
    _, _, _, _, info = env.step(invalid)
    assert info["invalid"]
    assert env.unwrapped.view is None or env.unwrapped.view.time > before  # time moved on, nothing started


def test_a_wait_lasts_at_most_max_wait():
    # Two tasks; the first runs 100 units. Waiting while the second fits moves time by 16, not to t=100.
    jobs = [task_job(0, 0, 2, 100), task_job(1, 0, 2, 5)]
    env = Deepk8sEnv(lambda seed: jobs, ClusterSpec.uniform(1, {"cpu": 10, "memory": 64}))
    env.reset(seed=0)
    env.step(0)  # start task 0
    assert env.view.time == 0
    env.step(env.action_space.n - 1)  # wait
    assert env.view.time == 16


def test_reset_is_seeded_and_replays_a_given_workload():
    env = make()
    a, _ = env.reset(seed=5)
    seed_a = env.unwrapped.workload_seed
    b, _ = env.reset(seed=5)
    assert np.array_equal(a, b) and env.unwrapped.workload_seed == seed_a
    env.reset(seed=6)
    assert env.unwrapped.workload_seed != seed_a
    jobs = random_tasks(99, 5)
    obs, info = env.reset(options={"jobs": jobs})
    assert info["workload_seed"] is None
    env.reset(options={"workload_seed": 12})
    assert env.unwrapped.workload_seed == 12
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"job": jobs})


def test_vector_environments_give_the_trajectories_of_single_ones():
    fns = [functools.partial(make) for _ in range(2)]
    seeds = [11, 12]
    singles = [play(make(), lambda mask, rng: int(np.flatnonzero(mask)[0]), seed=s) for s in seeds]
    for vector in (gymnasium.vector.SyncVectorEnv(fns), gymnasium.vector.AsyncVectorEnv(fns)):
        obs, _ = vector.reset(seed=seeds)
        steps = [[obs[i]] for i in range(2)]
        finished = [False, False]
        for _ in range(max(len(s[1]) for s in singles)):
            masks = np.stack(vector.call("action_masks"))
            obs, rewards, terminated, truncated, _ = vector.step(masks.argmax(axis=1))
            for i in range(2):
                if not finished[i]:
                    steps[i].append(obs[i])
                    finished[i] = terminated[i] or truncated[i]
        vector.close()
        for i, (observations, rewards, _) in enumerate(singles):
            # The last observation of a finished episode is the autoreset's; compare the ones before it.
            assert all(np.array_equal(a, b) for a, b in zip(observations[:-1], steps[i][:-1]))
