"""Deepk8s's workload: real v2017 task sequences by seed (traces/deepk8s.py)."""

import numpy as np
import pytest

import traces.deepk8s as deepk8s
from traces import deepk8s_cluster, deepk8s_workload, generate, generator_skips

from conftest import DATA

V2017 = DATA / "alibaba" / "v2017" / "batch_task.csv"
needs_trace = pytest.mark.skipif(not V2017.is_file(), reason=f"{V2017} is absent")


def as_rows(jobs):
    return [(j.submit_time, t.demand["cpu"], t.demand["memory"], t.duration) for j in jobs for t in j.tasks]


@needs_trace
def test_a_sequence_is_the_seeds_and_every_task_fits_one_machine():
    a, b, c = deepk8s_workload(3, 40), deepk8s_workload(3, 40), deepk8s_workload(4, 40)
    assert as_rows(a) == as_rows(b) and as_rows(a) != as_rows(c)
    assert all(len(j.tasks) == 1 and j.tasks[0].instances == 1 for j in a)
    submit = np.array([j.submit_time for j in a])
    assert submit[0] == 0 and (np.diff(submit) >= 0).all()
    for cpu, memory, duration in (r[1:] for r in as_rows(a)):
        assert 0 < cpu <= 10 and 0 < memory <= 64 and 0 < duration <= deepk8s.MAX_DURATION_S


@needs_trace
def test_the_sequence_offers_the_cluster_the_stated_cpu_load():
    jobs = deepk8s_workload(7, 100)
    work = sum(t.demand["cpu"] * t.duration for j in jobs for t in j.tasks)
    span = jobs[-1].submit_time - jobs[0].submit_time
    assert work / (span * 5 * 10) == pytest.approx(deepk8s.LOAD, rel=1e-4)


@needs_trace
def test_a_task_is_the_whole_v2017_task_with_its_instances_together():
    # The sample's earliest task (line 64,596: 5,42,7026,41417,9,Terminated,50,0.016007041): created at
    # 5 s, ended at 42 s, 9 instances of 50 % of a core and 0.016007041 of a machine's memory.
    table, counts = deepk8s.deepk8s_tasks()
    first = table[0]
    assert first.tolist() == pytest.approx([5.0, 9 * 0.5, 9 * 0.016007041 * 64, 37.0])
    assert counts["larger_than_a_machine"] > 0 and counts["duration_out_of_range"] > 0
    assert generator_skips("deepk8s") == counts and generator_skips("deeprm") == {}


def test_without_the_trace_the_alibaba_like_generator_stands_in_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("CLOUDSIM_DATA", str(tmp_path))
    deepk8s.deepk8s_tasks.cache_clear()
    try:
        with pytest.warns(UserWarning, match="falls back to the Alibaba-like generator"):
            jobs = deepk8s_workload(0, 30)
            generated = deepk8s.deepk8s_tasks()[1]["generated"]  # warns again: lru_cache keys () apart from (None,)
        assert len(jobs) == 30 and generated == 1
    finally:
        deepk8s.deepk8s_tasks.cache_clear()
    with pytest.raises(FileNotFoundError, match="no such file"):
        deepk8s.deepk8s_tasks(str(tmp_path / "missing.csv"))


def test_the_generator_name_gives_the_papers_cluster_and_refuses_bad_counts():
    jobs, cluster = generate("deepk8s", jobs=10, seed=1)
    assert len(jobs) == 10 and cluster == deepk8s_cluster()
    assert cluster.machines == 5 and cluster.capacity_array()[0].tolist() == [10, 64]
    with pytest.raises(ValueError, match="whole number >= 1"):
        deepk8s_workload(0, 0)
    with pytest.raises(ValueError, match="usable tasks"):
        deepk8s_workload(0, 10**9)
