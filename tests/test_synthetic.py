"""The papers' workload generators and the Alibaba-like default workload."""

import json
import math

import numpy as np
import pytest

from cloudsim import JobSpec, simulate
from agents import FirstFit
from conftest import JOBS_CSV, DATA, cli, task
from traces import (
    DEEPRM,
    DEEPRM_PLUS,
    RLSK,
    alibaba_like,
    bimodal_cluster,
    deeprm_workload,
    fit_alibaba_like,
    generate,
    poisson_workload,
    rlsk_workload,
)
from traces import synthetic


def realised_load(jobs, pools, units):
    """Offered work per resource per step over capacity, over the steps in which jobs arrive."""
    steps = jobs[-1].submit_time + 1
    work = sum(j.tasks[0].duration * np.array(list(j.tasks[0].demand.values())) for j in jobs)
    return work / (pools * units * steps)


def test_mean_work_follows_the_papers_numbers():
    # DeepRM: duration 0.8 x 2 + 0.2 x 12.5 = 4.1 steps; demand per resource 0.5 x 0.375 + 0.5 x 0.075 = 0.225 r.
    assert DEEPRM.mean_work() == pytest.approx(4.1 * 0.225)
    # DeepRM_Plus doubles the demands; RLSK: 0.8 x 30.5 + 0.2 x 250 = 74.4 steps x 0.0225 r.
    assert DEEPRM_PLUS.mean_work() == pytest.approx(4.1 * 0.45)
    assert RLSK.mean_work() == pytest.approx(74.4 * 0.0225)


def test_deeprm_jobs_have_the_bimodal_shape_and_one_dominant_resource():
    jobs = deeprm_workload(0.5, jobs=4000, seed=3)
    durations = np.array([j.tasks[0].duration for j in jobs])
    demands = np.array([list(j.tasks[0].demand.values()) for j in jobs])
    assert set(np.unique(durations)) <= {1, 2, 3, 10, 11, 12, 13, 14, 15}
    assert np.mean(durations <= 3) == pytest.approx(0.8, abs=0.02)
    # In units of a pool of 10: dominant 2.5-5, the other 0.5-1.
    dominant, other = demands.max(axis=1), demands.min(axis=1)
    assert dominant.min() >= 2.5 and dominant.max() <= 5 and other.min() >= 0.5 and other.max() <= 1
    assert np.mean(demands[:, 0] > demands[:, 1]) == pytest.approx(0.5, abs=0.03)
    assert all(j.tasks[0].instances == 1 for j in jobs)


@pytest.mark.parametrize("load", [0.1, 0.7, 1.3, 1.9])
def test_deeprm_reaches_the_target_load(load):
    jobs = deeprm_workload(load, jobs=3000, seed=1)
    assert realised_load(jobs, 1, 10) == pytest.approx([load, load], rel=0.08)
    per_step = np.bincount([int(j.submit_time) for j in jobs])
    rate = load / DEEPRM.mean_work()
    # A Bernoulli process: at most one job per step below one job per step, else floor or ceil of the rate.
    assert per_step.max() <= math.ceil(rate) and per_step[:-1].min() >= math.floor(rate)


def test_poisson_and_rlsk_workloads():
    sizes = {len(poisson_workload(1.4, seed=s)) for s in range(30)}
    assert min(sizes) >= 5 and max(sizes) <= 50 and len(sizes) > 5
    jobs = poisson_workload(1.4, jobs=3000, seed=2)
    assert realised_load(jobs, 1, 10) == pytest.approx([1.4, 1.4], rel=0.08)
    assert np.bincount([int(j.submit_time) for j in jobs]).max() > 2  # several arrivals in one step
    jobs = rlsk_workload(0.7, jobs=3000, seed=2)
    assert realised_load(jobs, 3, 1) == pytest.approx([0.7, 0.7], rel=0.1)
    assert {d for j in jobs for d in [j.tasks[0].duration]} <= set(range(1, 61)) | set(range(200, 301))


def test_generators_are_seeded_and_run_on_their_clusters():
    for name in ("alibaba-like", "deeprm", "poisson", "rlsk"):
        jobs, cluster = generate(name, 20, seed=5)
        assert generate(name, 20, seed=5)[0] == jobs != generate(name, 20, seed=6)[0]
        result = simulate(cluster, jobs, FirstFit())
        assert result.summary["instances_finished"] == sum(j.instances for j in jobs)
    assert bimodal_cluster(3, 1, RLSK).machines == 3
    with pytest.raises(ValueError, match="unknown generator 'nope'"):
        generate("nope")
    with pytest.raises(ValueError, match="load must be a positive fraction"):
        deeprm_workload(0)


def test_alibaba_like_dag_jobs_point_to_earlier_tasks():
    flat = alibaba_like(200, seed=4, dag_fraction=0)
    dags = alibaba_like(200, seed=4, dag_fraction=1)
    assert not any(t.parents for j in flat for t in j.tasks)
    # DAG shapes come from their own random stream: everything else is the same.
    assert [[(t.instances, t.duration) for t in j.tasks] for j in flat] == \
           [[(t.instances, t.duration) for t in j.tasks] for j in dags]
    with_parents = [t for j in dags for t in j.tasks if t.parents]
    assert len(with_parents) > 0.5 * sum(len(j.tasks) - 1 for j in dags)
    for job in dags:
        ids = [t.id for t in job.tasks]
        assert all(ids.index(p) < ids.index(t.id) for t in job.tasks for p in t.parents)


def test_fit_measures_what_the_generator_stores():
    jobs = [JobSpec(1, 0, (task(1, 1, 0.5, 0.01, 1), task(2, 4, 1.0, 0.01, 4))),
            JobSpec(2, 30, (task(1, 2, 0.5, 0.01, 2, ()), task(2, 2, 0.5, 0.01, 2, (1,)),
                            task(3, 1, 0.5, 0.01, 1, (1, 2))))]
    fit = fit_alibaba_like(jobs, dag_jobs=jobs[1:])
    assert fit["mean_interarrival"] == 30
    assert fit["tasks_per_job"][:3] == [0, 0.5, 0.5]
    # instances 1, 4, 2, 2, 1: logs 0, 2 ln 2, ln 2, ln 2, 0 -> mean 0.8 ln 2.
    assert fit["log_instances"][0] == pytest.approx(0.8 * math.log(2))
    assert fit["cpu_values"] == [0.5, 1.0] and fit["cpu_weights"] == [0.8, 0.2]
    assert fit["parents_per_task"] == [1, 1, 1]


def test_stored_statistics_are_the_fit_of_the_real_samples(tmp_path):
    dags = DATA / "alibaba" / "v2018" / "selected_DAGs.csv"
    if not (JOBS_CSV.is_file() and dags.is_file()):
        pytest.skip(f"real samples not found under {DATA}")
    from traces import load_alibaba_v2018, load_cloudsimpy

    fit = fit_alibaba_like(load_cloudsimpy(JOBS_CSV),
                           load_alibaba_v2018(dags, status_policy="keep", cache=tmp_path).jobs)
    assert fit["mean_interarrival"] == pytest.approx(synthetic._MEAN_INTERARRIVAL, abs=0.005)
    assert fit["tasks_per_job"] == pytest.approx(synthetic._TASKS_PER_JOB, abs=5e-5)
    for key, stored in [("log_instances", synthetic._LOG_INSTANCES), ("log_duration", synthetic._LOG_DURATION),
                        ("log_memory", synthetic._LOG_MEMORY)]:
        assert fit[key] == pytest.approx(stored, abs=5e-4)
    assert fit["cpu_values"] == synthetic._CPU_VALUES.tolist()
    assert fit["cpu_weights"] == pytest.approx(synthetic._CPU_WEIGHTS, abs=5e-5)
    assert fit["parents_per_task"] == synthetic._PARENTS_PER_TASK.tolist()


def test_alibaba_like_streams_the_same_jobs_block_by_block(monkeypatch):
    """The stream draws inter-arrival times in blocks: with blocks of 7 jobs, the carried running
    sum and the skipped draws must give exactly the jobs drawn all at once."""
    from traces import synthetic

    whole = synthetic.alibaba_like(50, seed=4)
    monkeypatch.setattr(synthetic, "_SUBMIT_BLOCK", 7)
    assert list(synthetic.iter_alibaba_like(50, seed=4)) == whole
    assert [job.id for job in whole] == list(range(1, 51)) and whole[0].submit_time == 0.0


def test_alibaba_like_stream_starts_at_once_at_any_size():
    """Ten million jobs are not built to hand out the first (the first job of any stream arrives at 0)."""
    from traces import iter_alibaba_like

    first = next(iter_alibaba_like(10_000_000, seed=2))
    assert (first.id, first.submit_time) == (1, 0.0)


# --------------------------------------------------------------- the loads the bimodal generators can draw
# A load sets the arrival rate, rate = load x pools / mean_work jobs per step (mean_work as in
# test_mean_work_follows_the_papers_numbers). A step brings at most 2**53 arrivals, and the jobs' expected arrival
# span, jobs / rate steps, is at most 2**27 = 134,217,728 (one draw a step). By hand, in three digits, inwards:
# deeprm (0.9225, 1 pool, 50 jobs): least 50 x 0.9225 / 2**27 = 3.4367e-7 -> 3.44e-07; most 2**53 x 0.9225 =
#   8.3091e15 -> 8.3e+15. Just outside: 3.43e-07 (1.3448e8 steps), 8.31e+15 (9.0081e15 > 2**53 = 9.0072e15 a step).
# poisson (1.845, 1 pool, at most 50 jobs): least 92.25 / 2**27 = 6.873e-7 -> 6.88e-07; most 2**53 x 1.845 =
#   1.6618e16 -> 1.66e+16. Just outside: 6.87e-07 (1.3428e8 steps), 1.67e+16 (9.051e15 a step).
# rlsk (1.674, 3 pools, 1,000 jobs): least 1,000 x 1.674 / (3 x 2**27) = 4.1574e-6 -> 4.16e-06; most
#   2**53 x 1.674 / 3 = 5.026e15 -> 5.02e+15. Just outside: 4.15e-06 (1.3446e8 steps), 5.03e+15 (9.014e15 a step).
LOAD_RANGES = {"deeprm": (3.44e-07, 8.3e+15, 50, 3.43e-07, 8.31e+15),
               "poisson": (6.88e-07, 1.66e+16, 50, 6.87e-07, 1.67e+16),
               "rlsk": (4.16e-06, 5.02e+15, 1000, 4.15e-06, 5.03e+15)}


@pytest.mark.parametrize("name", sorted(LOAD_RANGES))
def test_the_bimodal_generators_load_range_is_what_they_can_draw(name):
    least, most, jobs, below, above = LOAD_RANGES[name]
    assert synthetic.load_range(name) == (least, most)
    assert synthetic.load_problem(name, least) is None and synthetic.load_problem(name, most) is None
    assert "steps, past 2**27 (134217728)" in synthetic.load_problem(name, below)
    assert "arrivals per step, past 2**53 (9007199254740992)" in synthetic.load_problem(name, above)
    # The library refuses before drawing anything (a hang before: one draw a step over 4.6e15 steps).
    make = {"deeprm": deeprm_workload, "poisson": poisson_workload, "rlsk": rlsk_workload}[name]
    for load in (1e-300, 1e-14, below, above, 1e300, 5e-324):
        with pytest.raises(synthetic.LoadOutOfRange) as refused:
            make(load)
        assert f"give a load in [{least:g}, {most:g}] (with {jobs} jobs" in str(refused.value)


@pytest.mark.parametrize("command", ["replay", "compare"])
@pytest.mark.parametrize("load, shown, words", [
    ("0", "0", "must be a finite number > 0"),
    ("-1", "-1", "must be a finite number > 0"),
    ("nan", "nan", "must be a finite number > 0"),
    ("inf", "inf", "must be a finite number > 0"),
    ("1e-300", "1e-300", "steps, past 2**27 (134217728), the most the generator draws (one draw a step)"),
    ("1e-14", "1e-14", "steps, past 2**27 (134217728), the most the generator draws (one draw a step)"),
    ("5e-324", "4.94066e-324", "job(s) would arrive over about inf steps, past 2**27"),
    ("1e300", "1e+300", "arrivals per step, past 2**53 (9007199254740992), the most a step's count holds exactly"),
])
@pytest.mark.parametrize("name", ["deeprm", "poisson", "rlsk", "alibaba-like", "deepk8s"])
def test_an_extreme_load_on_a_generator_is_one_line_before_any_job_is_made(capsys, command, name, load, shown, words):
    if name in LOAD_RANGES and not words.startswith("must"):
        assert synthetic.load_problem(name, float(load)) is not None  # the library's range is the command's
    extra = ["--workers", "1"] if command == "compare" else []
    code, out, err = cli([command, name, f"--load={load}", "--brokers", "first-fit", "--json", *extra], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"cloudsim: --load {shown}: ")
    if name not in LOAD_RANGES:
        assert f"the {name} generator has no target load" in err
        return
    assert words in err
    if not words.startswith("must"):
        least, most, jobs, _, _ = LOAD_RANGES[name]
        assert f"give a load in [{least:g}, {most:g}] (with {jobs} jobs" in err


def test_the_least_load_grows_with_the_jobs(capsys):
    # 1,000,000 deeprm jobs: least 1e6 x 0.9225 / 2**27 = 0.0068731 -> 0.00688; 0.005 would take 1.845e8 steps.
    assert synthetic.load_range("deeprm", 1_000_000) == (0.00688, 8.3e+15)
    code, out, err = cli(["replay", "deeprm", "--synthetic-jobs", "1000000", "--load", "0.005"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("cloudsim: --load 0.005: 1000000 job(s) would arrive over about 1.84e+08 steps")
    assert "give a load in [0.00688, 8.3e+15] (with 1000000 jobs" in err


@pytest.mark.parametrize("name", sorted(LOAD_RANGES))
def test_the_loads_at_the_ends_of_the_range_run(capsys, name):
    least, most, jobs, _, _ = LOAD_RANGES[name]
    assert synthetic.load_range(name) == (least, most)
    for load in (least, most):
        code, out, err = cli(["replay", name, "--load", f"{load:g}", "--brokers", "first-fit", "--json"], capsys)
        row = json.loads(out.splitlines()[0])
        assert code == 0 and row["instances_finished"] == row["jobs"] <= jobs and row["makespan"] < 2 ** 53
        if load == most:  # every job arrives in the first step
            assert row["makespan"] < 1000
        else:  # spread over about 2**27 steps
            assert row["makespan"] > 2 ** 25


def test_a_compare_sweep_with_a_load_out_of_range_is_one_line_before_any_run(capsys, tmp_path):
    # Every load of --loads is checked against the generator's range when the command is read: the bad one is
    # named as --loads gave it, even after a good one, and nothing runs or is written.
    assert synthetic.load_problem("deeprm", 1e-300) is not None
    out_dir = tmp_path / "sweep"
    code, out, err = cli(["compare", "deeprm", "--loads", "0.5,1e-300", "--brokers", "first-fit", "--workers", "1",
                          "--out", str(out_dir)], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith("cloudsim: --loads 1e-300: ")
    assert "give a load in [3.44e-07, 8.3e+15] (with 50 jobs" in err
    assert not out_dir.exists() and list(tmp_path.iterdir()) == []
    # --synthetic-jobs moves the least load: 5 poisson jobs (DeepRM_Plus's sizes, 1.845 mean work),
    # 5 x 1.845 / 2**27 = 6.873e-8 -> 6.88e-08; 3e-08 spreads them over 5 x 1.845 / 3e-8 = 3.08e8 steps
    code, out, err = cli(["compare", "poisson", "--synthetic-jobs", "5", "--loads", "0.5,3e-8", "--brokers",
                          "first-fit", "--workers", "1"], capsys)
    assert code == 2 and err.startswith("cloudsim: --loads 3e-08: 5 job(s) would arrive over about 3.08e+08")
    assert "give a load in [6.88e-08, 1.66e+16] (with 5 jobs" in err


def test_deeprms_environment_checks_its_own_loads_not_the_generators(capsys):
    # compare --env deeprm draws its jobsets itself (cloudsim.engine.envs.deeprm): the generator's range does not apply.
    # Bernoulli arrivals: one job a step at most, 92.2 % with the paper's sizes (section 4.1); 1e-9 runs
    # (where the generator's least is 3.44e-07), 1e300 is refused with the environment's own reason.
    code, out, err = cli(["compare", "deeprm", "--env", "deeprm", "--load", "1e-9", "--brokers", "sjf", "--json"],
                         capsys)
    assert code == 0, err
    code, out, err = cli(["compare", "deeprm", "--env", "deeprm", "--load", "1e300", "--brokers", "sjf"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "pick a load in (0, 0.922]" in err
    assert "2**53" not in err
    # Poisson arrivals (DeepRM_Plus): up to 50 jobs at 1.845 load per unit rate; 2**27 steps at most, so the
    # least load is 50 x 1.845 / 2**27 = 6.873e-7 -> 6.88e-07 (1e-300 ended in "invalid value encountered in cast")
    for command in (["compare", "deeprm", "--env", "deeprm", "--arrivals", "poisson", "--brokers", "sjf"],
                    ["train", "deeprm-plus", "--iterations", "1"]):
        code, out, err = cli([*command, "--load", "1e-300"], capsys)
        assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
        assert err.startswith("cloudsim: --load 1e-300: ") and "pick a load of at least 6.88e-07" in err


@pytest.mark.parametrize("command", [["train", "rlsk", "--timesteps", "10"], ["train", "deepjs", "deeprm"]])
def test_a_training_refuses_a_load_its_generator_cannot_draw_before_it_starts(capsys, tmp_path, command):
    out_dir = tmp_path / "run"
    code, out, err = cli([*command, "--load", "1e300", "--out", str(out_dir)], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith("cloudsim: --load 1e+300: ") and "past 2**53" in err
    assert not out_dir.exists()


def test_train_rlsk_checks_its_load_against_its_own_jobs(capsys, tmp_path):
    # rlsk (1.674 mean work, 3 pools): 1,000 jobs need 1,000 x 1.674 / (3 x 2**27) = 4.16e-06 at least; 5 jobs
    # only 2.08e-08, so 1e-6 is refused with --jobs 1000 and trains with --jobs 5.
    code, out, err = cli(["train", "rlsk", "--load", "1e-6", "--timesteps", "10", "--out", str(tmp_path / "a")],
                         capsys)
    assert code == 2 and err.startswith("cloudsim: --load 1e-06: ") and "[4.16e-06, 5.02e+15] (with 1000 jobs" in err
    code, out, err = cli(["train", "rlsk", "--load", "1e-6", "--jobs", "5", "--timesteps", "10", "--threads", "1",
                          "--out", str(tmp_path / "b")], capsys)
    assert code == 0, err


def _step_by_step(load, jobs, seed, units, pools, spec, poisson):
    """The generators as they drew their arrivals before drawing them in blocks: one step after another."""
    rng = np.random.default_rng(seed)
    if poisson:
        jobs = int(rng.integers(5, 51)) if jobs is None else jobs
    rate = load * pools / spec.mean_work()
    counts = []
    while sum(counts) < jobs:
        counts.append(int(rng.poisson(rate)) if poisson else int(rate) + int(rng.random() < rate - int(rate)))
    arrivals = np.repeat(np.arange(len(counts)), counts)[:jobs]
    return synthetic._bimodal_jobs(arrivals, spec, units, rng)


@pytest.mark.parametrize("load", [0.05, 0.7, 0.9225, 1.9, 40.0])
def test_drawing_the_steps_in_blocks_gives_the_jobs_drawn_one_step_at_a_time(monkeypatch, load):
    monkeypatch.setattr(synthetic, "_BLOCK", 64)  # many blocks, and the last one cut short
    for seed in (0, 3):
        assert deeprm_workload(load, 80, seed) == _step_by_step(load, 80, seed, 10, 1, DEEPRM, False)
        assert rlsk_workload(load, 80, seed) == _step_by_step(load, 80, seed, 1, 3, RLSK, False)
        assert poisson_workload(load, 80, seed) == _step_by_step(load, 80, seed, 10, 1, DEEPRM_PLUS, True)
        assert poisson_workload(load, seed=seed) == _step_by_step(load, None, seed, 10, 1, DEEPRM_PLUS, True)


def test_the_alibaba_like_draws_are_numpys_choice_made_directly():
    """`_choice` and `_dag_parents` draw what ``Generator.choice`` draws (with ``p``; and ``replace=False``, Floyd's
    algorithm then a shuffle), the same numbers from the same stream, which then goes on alike."""
    from traces.synthetic import _PARENTS_PER_TASK, _cdf, _choice, _dag_parents

    weights = _PARENTS_PER_TASK
    for seed in range(200):
        for n in (1, 2, 7, 40):
            ours, numpys = np.random.default_rng([seed, n]), np.random.default_rng([seed, n])
            assert _choice(ours, _cdf(weights), n).tolist() == numpys.choice(
                len(weights), size=n, p=weights / weights.sum()).tolist()
            assert int(_choice(ours, _cdf(weights))) == int(numpys.choice(len(weights), p=weights / weights.sum()))
            counts = numpys.choice(len(weights), size=n, p=weights / weights.sum())
            expected = [tuple(np.sort(numpys.choice(i, size=min(int(c), i), replace=False)).tolist())
                        if min(int(c), i) else () for i, c in enumerate(counts)]
            assert _dag_parents(ours, n, range(n)) == expected
            assert ours.random() == numpys.random()


@pytest.mark.parametrize("block", [0, -1, True, 2.5, "2"])
def test_the_generator_refuses_a_block_that_is_not_a_count_of_jobs(block):
    from traces import iter_alibaba_like

    with pytest.raises(ValueError, match=f"block must be None .* or a whole number of jobs >= 1, got {block!r}"):
        next(iter_alibaba_like(10, block=block))
