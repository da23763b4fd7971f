"""The papers' workload generators and the Alibaba-like default workload."""

import math

import numpy as np
import pytest

from cloudsim import JobSpec, simulate
from agents import FirstFit
from conftest import JOBS_CSV, DATA, task
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
            JobSpec(2, 30, (task(1, 2, 0.5, 0.01, 2, ()), task(2, 2, 0.5, 0.01, 2, (1,)), task(3, 1, 0.5, 0.01, 1, (1, 2))))]
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
