"""Episode metrics on runs small enough to work out by hand (see each test's comment):
job start and wait, percentiles, cycling time, per-machine utilisation and RLSK's
imbalance measures (eq. 7 between resources, eq. 8 between machines)."""

import math

import numpy as np
import pandas as pd
import pytest

from agents import FirstFit
from cloudsim import ClusterSpec, JobSpec, simulate
from cloudsim.engine import metrics
from cloudsim.engine.carbon import GridSignal
from conftest import task

TEN = {"cpu": 10, "memory": 10}


def assert_rows(frame, expected):
    """The frame's values equal the expected rows (lists), up to float rounding."""
    np.testing.assert_allclose(frame.to_numpy(dtype=float), np.array(expected, dtype=float), rtol=1e-12, atol=1e-12)


def one_task_job(id, submit, cpu, memory, duration):
    return JobSpec(id, submit, (task(f"{id}.t", 1, cpu, memory, duration),))


@pytest.fixture
def queueing_run():
    """One (cpu 10, memory 10) machine; four one-task jobs, event-driven first-fit.

    J0 (submit 0, cpu 10, 4 s) runs [0, 4): completion 4, wait 0.
    J1 (submit 1, cpu 10, 2 s) waits for J0, runs [4, 6): completion 5, wait 3.
    J2 (submit 2, cpu 10, 3 s): at t=4 first-fit takes J1 first (arrival order),
    so J2 runs [6, 9): completion 7, wait 4.
    J3 (submit 20, cpu 5, 1 s) runs [20, 21): completion 1, wait 0. Makespan 21.
    """
    jobs = [
        one_task_job("J0", 0, 10, 1, 4),
        one_task_job("J1", 1, 10, 1, 2),
        one_task_job("J2", 2, 10, 1, 3),
        one_task_job("J3", 20, 5, 1, 1),
    ]
    return simulate(ClusterSpec.uniform(1, TEN), jobs, FirstFit())


def test_job_start_and_wait(queueing_run):
    jobs = queueing_run.jobs.set_index("job_id")
    assert jobs.start_time.tolist() == [0, 4, 6, 20]
    assert jobs.wait.tolist() == [0, 3, 4, 0]
    assert queueing_run.summary["avg_job_wait"] == pytest.approx((0 + 3 + 4 + 0) / 4)


def test_job_start_is_the_earliest_start_of_any_of_its_tasks():
    # One cpu-10 machine. J0 (t=0) holds 5 cpu over [0, 4). J1 arrives at 1 with tasks
    # a (cpu 10) then b (cpu 2): a does not fit, b does and starts at 1; a starts at 4.
    # J1's start is b's start (1), not its first task's (4): wait 0, finish 5.
    jobs = [
        one_task_job("J0", 0, 5, 1, 4),
        JobSpec("J1", 1, (task("a", 1, 10, 1, 1), task("b", 1, 2, 1, 1))),
    ]
    result = simulate(ClusterSpec.uniform(1, TEN), jobs, FirstFit())
    assert result.tasks.set_index("task_id").start_time.to_dict() == {"J0.t": 0, "a": 4, "b": 1}
    j1 = result.jobs.set_index("job_id").loc["J1"]
    assert (j1.start_time, j1.wait, j1.finish_time, j1.completion) == (1, 0, 5, 4)


def test_job_percentiles_use_linear_interpolation(queueing_run):
    # numpy's default (linear): the p-th percentile of n sorted values sits at position
    # p/100 * (n - 1), interpolated between its two neighbours. n = 4: positions 1.5, 2.85, 2.97.
    s = queueing_run.summary
    # Completions sorted: 1, 4, 5, 7.
    assert s["job_completion_p50"] == pytest.approx(4 + 0.5 * (5 - 4))  # 4.5
    assert s["job_completion_p95"] == pytest.approx(5 + 0.85 * (7 - 5))  # 6.7
    assert s["job_completion_p99"] == pytest.approx(5 + 0.97 * (7 - 5))  # 6.94
    # Waits sorted: 0, 0, 3, 4.
    assert s["job_wait_p50"] == pytest.approx(0 + 0.5 * (3 - 0))  # 1.5
    assert s["job_wait_p95"] == pytest.approx(3 + 0.85 * (4 - 3))  # 3.85
    assert s["job_wait_p99"] == pytest.approx(3 + 0.97 * (4 - 3))  # 3.97
    # Slowdowns (completion / duration): 4/4, 5/2, 7/3, 1/1, sorted 1, 1, 7/3, 5/2.
    assert s["job_slowdown_p50"] == pytest.approx(1 + 0.5 * (7 / 3 - 1))  # 5/3
    assert s["job_slowdown_p95"] == pytest.approx(7 / 3 + 0.85 * (5 / 2 - 7 / 3))
    assert s["job_slowdown_p99"] == pytest.approx(7 / 3 + 0.97 * (5 / 2 - 7 / 3))


def test_cycling_time_is_the_average_job_completion(queueing_run):
    # DeepRM_Plus's cycling time = finish - arrival: (4 + 5 + 7 + 1) / 4 = 4.25.
    s = queueing_run.summary
    assert s["avg_cycling_time"] == s["avg_job_completion"] == pytest.approx(4.25)


def test_empty_run_has_nan_percentiles_and_imbalance():
    s = simulate(ClusterSpec.uniform(2, TEN), [], FirstFit()).summary
    for key in ("avg_job_wait", "avg_cycling_time", "job_completion_p50", "job_wait_p95", "job_slowdown_p99",
                "imbalance_resources", "imbalance_machines"):
        assert math.isnan(s[key]), key
    assert s["makespan"] == 0


def test_existing_summary_keys_are_kept(queueing_run):
    for key in ("broker", "mode", "makespan", "jobs", "tasks", "instances", "instances_finished",
                "instances_failed", "instance_restarts", "avg_completion", "avg_slowdown", "avg_job_completion",
                "avg_job_slowdown", "utilisation_cpu", "utilisation_memory", "decisions", "sim_wall_s"):
        assert key in queueing_run.summary, key


def test_one_instance_on_two_machines():
    # Machine 0 runs one (cpu 5, memory 1) instance over [0, 4); machine 1 stays idle.
    # U_0 = (0.5, 0.1), U_1 = (0, 0). Eq. 7: |0.5 - 0.1| = 0.4. Eq. 5: U_0 = 0.3, U_1 = 0;
    # eq. 8: |0.3 - 0| = 0.3. Both hold over the whole run (makespan 4).
    result = simulate(ClusterSpec.uniform(2, TEN), [one_task_job("J", 0, 5, 1, 4)], FirstFit())
    per_machine = result.machine_utilisation()
    assert per_machine.columns.tolist() == ["time", "machine", "cpu", "memory"]
    assert_rows(per_machine, [[0, 0, 0.5, 0.1], [4, 0, 0, 0]])
    imbalance = result.imbalance()
    assert imbalance.columns.tolist() == ["time", "imbalance_resources", "imbalance_machines"]
    assert_rows(imbalance, [[0, 0.4, 0.3], [4, 0, 0]])
    assert result.summary["imbalance_resources"] == pytest.approx(0.4)
    assert result.summary["imbalance_machines"] == pytest.approx(0.3)


def test_imbalance_that_changes_over_time():
    # Three (cpu 10, memory 10) machines; one job at t=0 with a (cpu 5, memory 1, 4 s)
    # and b (cpu 8, memory 2, 2 s). First-fit: a on machine 0 (free 5, 9), b does not
    # fit there any more, so b goes on machine 1. Machine 2 stays idle.
    # [0, 2): U_0 = (0.5, 0.1), U_1 = (0.8, 0.2), U_2 = (0, 0).
    #   eq. 7 = |0.5 - 0.1| + |0.8 - 0.2| = 0.4 + 0.6 = 1.0
    #   means 0.3, 0.5, 0: eq. 8 = |0.3 - 0.5| + |0.3 - 0| + |0.5 - 0| = 0.2 + 0.3 + 0.5 = 1.0
    # [2, 4): b has ended. eq. 7 = 0.4; means 0.3, 0, 0: eq. 8 = 0.3 + 0.3 + 0 = 0.6
    # Time averages over makespan 4: eq. 7 = (1.0 * 2 + 0.4 * 2) / 4 = 0.7,
    # eq. 8 = (1.0 * 2 + 0.6 * 2) / 4 = 0.8.
    jobs = [JobSpec("J", 0, (task("a", 1, 5, 1, 4), task("b", 1, 8, 2, 2)))]
    result = simulate(ClusterSpec.uniform(3, TEN), jobs, FirstFit())
    per_machine = result.machine_utilisation()
    assert_rows(per_machine, [[0, 0, 0.5, 0.1], [0, 1, 0.8, 0.2], [2, 1, 0, 0], [4, 0, 0, 0]])
    assert_rows(result.imbalance(), [[0, 1.0, 1.0], [2, 0.4, 0.6], [4, 0, 0]])
    assert result.summary["imbalance_resources"] == pytest.approx(0.7)
    assert result.summary["imbalance_machines"] == pytest.approx(0.8)


def test_imbalance_is_zero_before_the_first_change():
    # Tick 1: the scheduler wakes at t=0 before the job arrives, so the (cpu 5, memory 1)
    # instance runs [1, 5) on machine 0 and the makespan is 5. Over [0, 1) all is idle:
    # eq. 7 = 0.4 * 4 / 5 = 0.32, eq. 8 = 0.3 * 4 / 5 = 0.24.
    result = simulate(ClusterSpec.uniform(2, TEN), [one_task_job("J", 0, 5, 1, 4)], FirstFit(), tick=1)
    assert result.makespan == 5
    assert result.imbalance().time.tolist() == [1, 5]
    assert result.summary["imbalance_resources"] == pytest.approx(0.32)
    assert result.summary["imbalance_machines"] == pytest.approx(0.24)


def test_a_single_machine_has_no_imbalance_between_machines():
    # One machine: no pair for eq. 8 (0); eq. 7 = |0.5 - 0.1| = 0.4 while the instance runs.
    result = simulate(ClusterSpec.uniform(1, TEN), [one_task_job("J", 0, 5, 1, 4)], FirstFit())
    assert_rows(result.imbalance(), [[0, 0.4, 0], [4, 0, 0]])
    assert result.summary["imbalance_resources"] == pytest.approx(0.4)
    assert result.summary["imbalance_machines"] == 0


def test_zero_capacity_resources_and_machines():
    # Machine 0 = (cpu 10, memory 0), machine 1 = (0, 0), machine 2 = (10, 10). A (cpu 5,
    # memory 0) instance fits machine 0 first: U_0 = (0.5, NaN). Eq. 7: machine 0 has one
    # resource, so no pair: 0. Eq. 8 leaves machine 1 (no capacity at all) out:
    # U_0 = 0.5 (its one resource), U_2 = 0: |0.5 - 0| = 0.5.
    cluster = ClusterSpec(("cpu", "memory"), ((10, 0), (0, 0), (10, 10)))
    result = simulate(cluster, [one_task_job("J", 0, 5, 0, 4)], FirstFit())
    first = result.machine_utilisation().iloc[0]
    assert (first.time, first.machine, first.cpu) == (0, 0, 0.5) and math.isnan(first.memory)
    assert result.summary["imbalance_resources"] == 0
    assert result.summary["imbalance_machines"] == pytest.approx(0.5)


def test_imbalance_is_the_same_whatever_the_block_size(monkeypatch):
    # Many random jobs on 7 machines: eq. 8 computed block by block must match the
    # definition evaluated directly at every instant, also when each block holds one
    # or a few instants (the machines' values carry over from block to block).
    rng = np.random.default_rng(3)
    jobs = [
        JobSpec(j, float(rng.integers(0, 30)),
                (task(0, int(rng.integers(1, 3)), float(rng.integers(1, 6)), float(rng.integers(1, 6)),
                      float(rng.integers(1, 8))),))
        for j in range(60)
    ]
    jobs.sort(key=lambda job: job.submit_time)
    result = simulate(ClusterSpec.uniform(7, TEN), jobs, FirstFit())
    per_machine = result.machine_utilisation()
    expected = []
    state = np.zeros((7, 2))
    for time, rows in per_machine.groupby("time"):
        state[rows.machine.to_numpy()] = rows[["cpu", "memory"]].to_numpy()
        means = state.mean(axis=1)
        expected.append([time, np.abs(state[:, 0] - state[:, 1]).sum(),
                         np.abs(means[:, None] - means[None, :]).sum() / 2])
    assert len(expected) > 20
    for cells in (7, 14, 30, 10**9):
        monkeypatch.setattr(metrics, "_BLOCK_CELLS", cells)
        assert_rows(result.imbalance(), expected)


def test_machine_steps_are_summed_a_few_machines_at_a_time_with_the_same_bits(monkeypatch):
    # Rows [first, stop) of machine numbers of about `rows` groups each, a machine with more alone:
    # machines 0,0,1,2,2,2,5 in blocks of 3 rows are {0, 1}, {2, 3, 4}, {5}.
    assert metrics._machine_blocks(np.array([0, 0, 1, 2, 2, 2, 5]), 3) == [(0, 2), (2, 5), (5, 6)]
    assert metrics._machine_blocks(np.array([], dtype=np.int64), 3) == []
    # Per-machine utilisation, summed block by block, equals the one-block sums bit for bit.
    rng = np.random.default_rng(4)
    jobs = sorted((JobSpec(j, float(rng.integers(0, 30)), (task(0, int(rng.integers(1, 4)), float(rng.random() * 5),
                                                                 float(rng.random() * 5), float(rng.integers(1, 8))),))
                   for j in range(80)), key=lambda job: job.submit_time)
    result = simulate(ClusterSpec.uniform(5, TEN), jobs, FirstFit())
    whole = result.machine_utilisation()
    for cells in (4, 40):  # one group, then ten, a block: one machine a block, then a few
        monkeypatch.setattr(metrics, "_BLOCK_CELLS", cells)
        assert result.machine_utilisation().equals(whole)


def test_to_parquet_writes_every_table(tmp_path, queueing_run):
    queueing_run.to_parquet(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "capacity.parquet", "groups.parquet", "jobs.parquet", "reservations.parquet", "summary.json", "tasks.parquet",
        "utilisation.parquet"]
    assert pd.read_parquet(tmp_path / "reservations.parquet").empty  # this run's broker reserves nothing
    jobs = pd.read_parquet(tmp_path / "jobs.parquet")
    assert jobs.start_time.tolist() == [0, 4, 6, 20] and jobs.wait.tolist() == [0, 3, 4, 0]
    assert len(pd.read_parquet(tmp_path / "groups.parquet")) == 4


def test_every_measure_a_table_shows_is_a_number_of_the_summary():
    from cloudsim.engine.metrics import MEASURES, shown_in

    result = simulate(ClusterSpec.uniform(2, {"cpu": 4.0}), [JobSpec(0, 0.0, (task(0, 2, 1.0, 0.0, 3.0),))],
                      FirstFit())
    from cloudsim.engine.energy import DEFAULT_POWER, meter

    # A measure that needs an option is a number of the summary of a run given it: the energy meter's.
    metered = {**result.summary, **meter(result, DEFAULT_POWER, GridSignal.daily_cycle()).summary()}
    for table in ("replay", "compare", "leaderboard"):
        assert shown_in(table) and set(shown_in(table)) <= set(metered), table
        assert {m.key for m in MEASURES if table in m.tables and not m.needs} <= set(result.summary), table
    assert [m.key for m in MEASURES if m.higher_is_better] == ["utilisation_cpu", "gpu_allocated_pct_mean"]
