import pytest

from cloudsim import ClusterSpec, JobSpec, TaskSpec, parse_capacity
from conftest import task


def test_parse_capacity_keeps_order_and_values():
    assert parse_capacity("cpu=64,memory=1,disk=1") == {"cpu": 64.0, "memory": 1.0, "disk": 1.0}
    assert list(parse_capacity(" gpu=2 , cpu=8 ")) == ["gpu", "cpu"]


@pytest.mark.parametrize("text", ["", "cpu", "cpu=", "cpu=-1", "cpu=abc", "cpu=1,cpu=2", "=3"])
def test_parse_capacity_rejects_bad_text(text):
    with pytest.raises(ValueError, match="capacity"):
        parse_capacity(text)


def test_task_validation_names_the_task():
    with pytest.raises(ValueError, match="task 't'.*instances"):
        TaskSpec("t", 0, {"cpu": 1}, 1.0)
    with pytest.raises(ValueError, match="task 't'.*demand cpu"):
        TaskSpec("t", 1, {"cpu": -1}, 1.0)
    with pytest.raises(ValueError, match="3 per-instance durations given for 2"):
        TaskSpec("t", 2, {"cpu": 1}, (1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="durations"):
        TaskSpec("t", 1, {"cpu": 1}, float("nan"))


def test_job_rejects_duplicate_ids_unknown_parents_and_cycles():
    with pytest.raises(ValueError, match="duplicate task ids"):
        JobSpec("j", 0, (task(1, 1, 1, 1, 1), task(1, 1, 1, 1, 1)))
    with pytest.raises(ValueError, match="unknown parent tasks \\[9\\]"):
        JobSpec("j", 0, (task(1, 1, 1, 1, 1, parents=(9,)),))
    with pytest.raises(ValueError, match="cycle"):
        JobSpec("j", 0, (task(1, 1, 1, 1, 1, parents=(2,)), task(2, 1, 1, 1, 1, parents=(1,))))


def test_critical_path_is_the_longest_chain():
    # 1 (2 s) -> {2 (3 s), 3 (1 s)} -> 4 (1 s): the longest chain is 2 + 3 + 1.
    job = JobSpec("j", 0, (task(1, 1, 1, 1, 2), task(2, 1, 1, 1, 3, (1,)), task(3, 1, 1, 1, 1, (1,)),
                           task(4, 1, 1, 1, 1, (2, 3))))
    assert job.critical_path() == 6
    # Per-instance durations: the slowest instance counts.
    assert JobSpec("k", 0, (TaskSpec(1, 2, {"cpu": 1}, (1.0, 4.0)),)).critical_path() == 4


def test_cluster_demand_vector_follows_cluster_resources():
    cluster = ClusterSpec.uniform(2, {"cpu": 4, "memory": 1})
    assert cluster.demand_vector(TaskSpec(1, 1, {"memory": 0.5, "cpu": 2, "disk": 0}, 1)).tolist() == [2, 0.5]
    with pytest.raises(ValueError, match=r"demands gpu=1 but the cluster only has resources \('cpu', 'memory'\)"):
        cluster.demand_vector(TaskSpec(1, 1, {"gpu": 1}, 1))
