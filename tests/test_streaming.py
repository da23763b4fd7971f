"""Streamed simulations: jobs read lazily, finished rows written out, the same results as in memory."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest

import cloudsim.engine.simulation
from agents import make_broker
from cloudsim import ClusterSpec, JobBlock, JobSpec, Simulation, StreamedResult, TaskSpec
from cloudsim.engine.specs import UnschedulableTaskError
from cloudsim.engine.faults import RandomFaults
from cloudsim.engine.metrics import stringify_ids
from conftest import task
from traces import alibaba_like, iter_alibaba_like

TABLES = ("tasks", "jobs", "groups")


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 5 jobs, so that a short run writes out and drops rows many times."""
    monkeypatch.setattr(cloudsim.engine.simulation, "STREAM_BLOCK", 5)


def both(cluster, jobs, broker, folder, **options):
    """(in-memory result, streamed result) of the same run."""
    in_memory = Simulation(cluster, list(jobs), make_broker(broker), **options).run()
    streamed = Simulation(cluster, iter(jobs), make_broker(broker), stream_to=folder, **options).run()
    return in_memory, streamed


def assert_same_results(in_memory, streamed):
    assert isinstance(streamed, StreamedResult)
    for name in TABLES:
        # The files hold what EpisodeResult.to_parquet writes: ids as text.
        pd.testing.assert_frame_equal(stringify_ids(getattr(in_memory, name)), getattr(streamed, name)(),
                                      check_exact=True)
    pd.testing.assert_frame_equal(stringify_ids(in_memory.capacity), streamed.capacity(), check_exact=True)
    for key, value in in_memory.summary.items():
        if key.startswith("imbalance_"):
            assert np.isnan(streamed.summary[key])  # not computed in a streamed run
        elif key in ("avg_completion", "avg_slowdown"):
            assert streamed.summary[key] == pytest.approx(value, rel=1e-12, nan_ok=True)  # running sums
        elif key != "sim_wall_s":
            assert streamed.summary[key] == value or (np.isnan(value) and np.isnan(streamed.summary[key])), key


@pytest.mark.parametrize("broker", ["first-fit", "tetris", "drf", "sjf"])
@pytest.mark.parametrize("tick", [None, 1.0])
def test_a_streamed_run_gives_the_results_of_the_same_run_in_memory(small_blocks, tmp_path, broker, tick):
    # DAG jobs (dag_fraction 0.5) on a small cluster: queues form, so many jobs are in flight
    # at once and rows are written out while later ones still run.
    jobs = alibaba_like(60, seed=3, max_instances=40)
    cluster = ClusterSpec.uniform(4, {"cpu": 96, "memory": 1})
    assert_same_results(*both(cluster, jobs, broker, tmp_path / "out", tick=tick))


def test_streamed_results_hold_with_machine_failures_and_reservations(small_blocks, tmp_path):
    jobs = alibaba_like(40, seed=5, max_instances=30)
    cluster = ClusterSpec.uniform(3, {"cpu": 96, "memory": 1})
    faults = dict(faults=RandomFaults(mtbf=300, mttr=40, seed=1))
    for broker in ("first-fit", "easy"):  # EASY backfilling reserves
        in_memory, streamed = both(cluster, jobs, broker, tmp_path / broker, **faults)
        assert in_memory.summary["instance_restarts"] > 0  # failures did re-queue instances
        assert_same_results(in_memory, streamed)


def test_the_streamed_files_are_the_files_to_parquet_writes(small_blocks, tmp_path):
    jobs = alibaba_like(30, seed=0, max_instances=20)
    cluster = ClusterSpec.uniform(4, {"cpu": 96, "memory": 1})
    in_memory, streamed = both(cluster, jobs, "first-fit", tmp_path / "streamed")
    in_memory.to_parquet(tmp_path / "memory")
    for name in TABLES:
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "memory" / f"{name}.parquet"),
                                      pd.read_parquet(tmp_path / "streamed" / f"{name}.parquet"), check_exact=True)
    summary = json.loads((tmp_path / "streamed" / "summary.json").read_text())
    assert summary["jobs"] == 30 and summary["imbalance_machines"] is None


def test_ended_groups_are_written_a_few_at_a_time_with_the_same_results(small_blocks, tmp_path, monkeypatch):
    """However many groups end between two writes (a run's last write hands over all that are left), they are
    written at most `_GROUPS_PER_WRITE` at a time: the same files and utilisation, in more row groups."""
    import pyarrow.parquet as pq

    import cloudsim.engine.streaming
    monkeypatch.setattr(cloudsim.engine.streaming, "_GROUPS_PER_WRITE", 3)
    jobs = alibaba_like(30, seed=0, max_instances=20)
    in_memory, streamed = both(ClusterSpec.uniform(4, {"cpu": 96, "memory": 1}), jobs, "first-fit", tmp_path / "out")
    assert_same_results(in_memory, streamed)
    sizes = [pq.ParquetFile(tmp_path / "out" / "groups.parquet").metadata.row_group(g).num_rows
             for g in range(pq.ParquetFile(tmp_path / "out" / "groups.parquet").num_row_groups)]
    assert max(sizes) == 3 and sum(sizes) == len(in_memory.groups)


def test_memory_follows_the_jobs_in_flight(small_blocks, tmp_path):
    # 400 single-task jobs, one every 10 s, each running 3 s on an idle machine: at most one
    # job is in flight, so the tables never hold more than about two blocks of 5 jobs.
    jobs = (JobSpec(j, 10.0 * j, (task(0, 2, 1, 0.1, 3.0),)) for j in range(400))
    cluster = ClusterSpec.uniform(2, {"cpu": 4, "memory": 1})
    sim = Simulation(cluster, jobs, make_broker("first-fit"), stream_to=tmp_path / "out")
    held_jobs, held_groups = [], []
    while (view := sim.next_decision()) is not None:
        held_jobs.append(len(sim.tasks.job_finish))
        held_groups.append(len(sim.record.groups))
        sim.apply(sim.broker.decide(view))
    assert max(held_jobs) <= 10 and max(held_groups) <= 10
    assert sim.result().summary["jobs"] == 400
    assert len(pd.read_parquet(tmp_path / "out" / "groups.parquet")) == 400  # 2 instances fit one machine


def test_jobs_are_read_as_the_run_needs_them(small_blocks, tmp_path):
    read = itertools.count()

    def source():
        for j in range(100):
            next(read)
            yield JobSpec(j, float(j), (task(0, 1, 1, 0.1, 1.0),))

    sim = Simulation(ClusterSpec.uniform(1, {"cpu": 4, "memory": 1}), source(), make_broker("first-fit"),
                     stream_to=tmp_path / "out")
    assert next(read) == 0  # building the simulation reads nothing
    sim.next_decision()
    assert next(read) == 1 + 5  # the first decision needs the first block only


def test_a_stream_out_of_submit_order_is_refused_and_leaves_no_files(small_blocks, tmp_path):
    jobs = [JobSpec(j, t, (task(0, 1, 1, 0.1, 1.0),)) for j, t in enumerate([0.0, 5.0, 3.0])]
    sim = Simulation(ClusterSpec.uniform(1, {"cpu": 4, "memory": 1}), jobs, make_broker("first-fit"),
                     stream_to=tmp_path / "out")
    with pytest.raises(ValueError, match=r"job 2 is submitted at 3.0, before the job read before it \(5.0\).*sort"):
        sim.run()
    assert list(tmp_path.iterdir()) == []  # neither the folder nor a partial one


def test_an_interrupted_run_leaves_the_folder_as_it_was(small_blocks, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("an earlier run")

    class Interrupted:
        decisions = 0

        def decide(self, view):
            self.decisions += 1
            if self.decisions == 20:
                raise KeyboardInterrupt
            return make_broker("first-fit").decide(view)

    sim = Simulation(ClusterSpec.uniform(2, {"cpu": 96, "memory": 1}), iter_alibaba_like(50, seed=0),
                     Interrupted(), stream_to=out)
    with pytest.raises(KeyboardInterrupt):
        sim.run()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert [p.name for p in out.iterdir()] == ["summary.json"]
    assert (out / "summary.json").read_text() == "an earlier run"


def test_a_stream_folder_that_is_a_file_is_refused_before_the_run(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="is a file, not a folder"):
        Simulation(ClusterSpec.uniform(1, {"cpu": 1}), [], make_broker("first-fit"), stream_to=tmp_path / "file" / "x")
    with pytest.raises(ValueError, match="name the folder"):
        Simulation(ClusterSpec.uniform(1, {"cpu": 1}), [], make_broker("first-fit"), stream_to="")
    with pytest.raises(TypeError, match="not iterable"):
        Simulation(ClusterSpec.uniform(1, {"cpu": 1}), 5, make_broker("first-fit"), stream_to=tmp_path / "out")
    assert list(tmp_path.iterdir()) == [tmp_path / "file"]  # nothing written


def test_only_finished_jobs_leave_the_task_table():
    from cloudsim.engine.tasks import TaskTable

    table = TaskTable(ClusterSpec.uniform(1, {"cpu": 4, "memory": 1}),
                      [JobSpec(j, float(j), (task(0, 1, 1, 0.1, 1.0), task(1, 1, 1, 0.1, 1.0, parents=(0,))))
                       for j in range(3)])
    table.arrive(0, 0.0)
    for g in (0, 1):  # job 0's two tasks, one after the other
        table.start(g, 1, 0.0)
        table.end(g, 0, 1, "finished", 1.0)
    assert table.finished_jobs() == 1
    with pytest.raises(ValueError, match="only finished jobs"):
        table.retire(2)
    table.retire(1)
    # Job 1's rows are now the first; global numbers are kept: its tasks are still 2 and 3.
    assert (table.task_base, table.job_base, len(table.task_ids)) == (2, 1, 4)
    table.arrive(1, 2.0)
    assert table.ready.tolist() == [2] and table.task_key(3) == (1, 1)


def test_an_empty_stream_writes_empty_tables_with_their_columns(tmp_path):
    result = Simulation(ClusterSpec.uniform(1, {"cpu": 1, "memory": 1}), iter([]), make_broker("first-fit"),
                        stream_to=tmp_path / "out").run()
    in_memory = Simulation(ClusterSpec.uniform(1, {"cpu": 1, "memory": 1}), [], make_broker("first-fit")).run()
    for name in TABLES:
        assert list(getattr(result, name)().columns) == list(getattr(in_memory, name).columns)
        assert len(getattr(result, name)()) == 0
    assert result.summary["jobs"] == 0 and result.makespan == 0.0


def v2018_trace(jobs: int) -> str:
    """A v2018 batch_task table (written in reverse submit order) of ``jobs`` jobs, half of them
    DAGs of two tasks, submit times tied in pairs, and one job the loader skips (a task still running)."""
    rows = []
    for k in range(jobs):
        start = 100 + 5 * (k // 2)
        rows.append(f"M1,{k % 3 + 1}.0,j_{k},1,Terminated,{start},{start + 10 + k % 5},100.0,0.5")
        if k % 2:
            status = "Running" if k == 7 else "Terminated"
            rows.append(f"R2_1,1.0,j_{k},1,{status},{start + 20},{start + 26},50.0,1.0")
    return "\n".join(reversed(rows)) + "\n"


@pytest.mark.parametrize("jobs", [None, "3:25"])
def test_a_streamed_trace_replay_gives_the_tables_of_a_replay_in_memory(monkeypatch, tmp_path, jobs):
    import cloudsim.run.workload
    from cloudsim.cli import main
    from conftest import write

    # Blocks of 4 jobs read from the trace and of 3 into the engine: both cross many times.
    monkeypatch.setattr(cloudsim.run.workload, "TRACE_BLOCK", 4)
    monkeypatch.setattr(cloudsim.engine.simulation, "STREAM_BLOCK", 3)
    trace = write(tmp_path, "batch_task.csv", v2018_trace(30))
    selection = [] if jobs is None else ["--jobs", jobs]
    common = ["replay", str(trace), "--format", "alibaba-v2018", "--machines", "2", "--capacity", "cpu=2,memory=1",
              "--cache", str(tmp_path / "cache"), "--brokers", "first-fit,tetris", *selection, "--json"]
    rows = {}
    for name, extra in (("memory", []), ("streamed", ["--stream"])):
        assert main([*common, "--out", str(tmp_path / name), *extra]) == 0
        rows[name] = pd.read_csv(tmp_path / name / "episodes.csv")
    episode = "episode-all" if jobs is None else "episode-3-25"
    for broker in ("first-fit", "tetris"):
        for table in TABLES:
            path = f"{episode}/{broker}/{table}.parquet"
            pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "memory" / path),
                                          pd.read_parquet(tmp_path / "streamed" / path), check_exact=True)
    # 30 jobs, job 7 skipped: 29 replayable; --jobs 3:25 takes 22 of them.
    assert list(rows["streamed"].jobs) == ([29, 29] if jobs is None else [22, 22])
    pd.testing.assert_series_equal(rows["memory"].makespan, rows["streamed"].makespan)


def test_a_streamed_replay_of_the_generator_reads_it_in_each_worker(tmp_path):
    from cloudsim.cli import main

    common = ["replay", "--synthetic-jobs", "40", "--machines", "3", "--capacity", "cpu=96,memory=1",
              "--brokers", "first-fit,sjf", "--json"]
    assert main([*common, "--out", str(tmp_path / "memory")]) == 0
    assert main([*common, "--out", str(tmp_path / "streamed"), "--stream", "--workers", "2"]) == 0
    for broker in ("first-fit", "sjf"):
        for table in TABLES:
            path = f"episode-all/{broker}/{table}.parquet"
            pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "memory" / path),
                                          pd.read_parquet(tmp_path / "streamed" / path), check_exact=True)


def test_a_streamed_replay_names_the_capacity_when_a_task_read_later_cannot_fit(tmp_path, capsys):
    from cloudsim.cli import main

    code = main(["replay", "--synthetic-jobs", "50", "--machines", "2", "--capacity", "cpu=0.1,memory=1",
                 "--stream", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "--capacity cpu=0.1,memory=1" in err and "jobs read last" in err
    assert list(tmp_path.iterdir()) == []


def test_task_totals_add_up_batches_as_one_frame_would():
    from cloudsim.engine.metrics import TaskTotals, task_numbers

    batches = [pd.DataFrame({"instances": [2, 1, 4], "failed_instances": [0, 1, 0], "restarts": [1, 0, 0],
                             "completion": [1.0, 2.0, np.nan], "slowdown": [np.nan] * 3}),
               pd.DataFrame({"instances": [3], "failed_instances": [0], "restarts": [2],
                             "completion": [3.0], "slowdown": [np.nan]})]
    totals = TaskTotals()
    for batch in batches:
        totals.add(batch)
    numbers = totals.numbers()
    # Worked by hand: 4 tasks, 10 instances, 1 failed, 3 restarts; completion (1 + 2 + 3) / 3 known.
    assert {k: numbers[k] for k in ("tasks", "instances", "instances_failed", "instance_restarts")} == \
        {"tasks": 4, "instances": 10, "instances_failed": 1, "instance_restarts": 3}
    assert numbers["avg_completion"] == 2.0 and np.isnan(numbers["avg_slowdown"])
    assert list(numbers) == list(task_numbers(pd.concat(batches)))


# ----------------------------------------------------------------------------------- job blocks
def block_of_two_jobs(**change):
    """Job "a" at t=0 (tasks 1 -> 2, a DAG; 2 and 3 instances of 1 and 2 cpu, 4 s and 3 s) and job "b" at t=5
    (one task of 1 instance, 0.5 cpu for 2 s), as a JobBlock; ``change`` replaces columns."""
    columns = dict(ids=("a", "b"), submit=np.array([0.0, 5.0]), task_start=np.array([0, 2, 3]),
                   task_ids=(1, 2, 1), instances=np.array([2, 3, 1]), resources=("cpu",),
                   demand=np.array([[1.0], [2.0], [0.5]]), duration=np.array([4.0, 3.0, 2.0]),
                   parent_start=np.array([0, 0, 1, 1]), parents=np.array([0]))
    return JobBlock(**{**columns, **change})


def test_a_job_block_is_the_jobs_it_describes():
    block = block_of_two_jobs()
    specs = [JobSpec("a", 0.0, (TaskSpec(1, 2, {"cpu": 1.0}, 4.0), TaskSpec(2, 3, {"cpu": 2.0}, 3.0, (1,)))),
             JobSpec("b", 5.0, (TaskSpec(1, 1, {"cpu": 0.5}, 2.0),))]
    assert len(block) == 2 and block.critical_paths().tolist() == [7.0, 2.0]  # 4 + 3 along a's chain
    cluster = ClusterSpec.uniform(2, {"cpu": 4, "memory": 1})
    from cloudsim.engine.tasks import TaskTable
    by_block, by_specs = TaskTable(cluster), TaskTable(cluster, specs)
    by_block.extend(block)
    for name in (*TaskTable._TASK_ARRAYS, *TaskTable._JOB_ARRAYS, "job_first_task"):
        assert np.array_equal(getattr(by_block, name), getattr(by_specs, name), equal_nan=True), name
    for name in ("task_ids", "children", "job_ids", "instance_durations", "task_accepts"):
        assert getattr(by_block, name) == getattr(by_specs, name), name
    assert by_block.children == [[1], [], []] and by_block.task_demand[:, 1].tolist() == [0.0, 0.0, 0.0]


def test_a_job_block_may_list_a_child_before_its_parents():
    """As a trace may: job "a" of `block_of_two_jobs` with its tasks the other way round is the JobSpec of that
    order, critical path and all."""
    block = block_of_two_jobs(task_ids=(2, 1, 1), instances=np.array([3, 2, 1]), demand=np.array([[2.0], [1.0], [0.5]]),
                              duration=np.array([3.0, 4.0, 2.0]), parent_start=np.array([0, 1, 1, 1]),
                              parents=np.array([1]))
    specs = [JobSpec("a", 0.0, (TaskSpec(2, 3, {"cpu": 2.0}, 3.0, (1,)), TaskSpec(1, 2, {"cpu": 1.0}, 4.0))),
             JobSpec("b", 5.0, (TaskSpec(1, 1, {"cpu": 0.5}, 2.0),))]
    assert block.critical_paths().tolist() == [7.0, 2.0]
    from cloudsim.engine.tasks import TaskTable
    cluster = ClusterSpec.uniform(2, {"cpu": 4, "memory": 1})
    by_block, by_specs = TaskTable(cluster), TaskTable(cluster, specs)
    by_block.extend(block)
    for name in (*TaskTable._TASK_ARRAYS, *TaskTable._JOB_ARRAYS, "job_first_task"):
        assert np.array_equal(getattr(by_block, name), getattr(by_specs, name), equal_nan=True), name
    assert by_block.children == by_specs.children == [[], [0], []]


@pytest.mark.parametrize("change, message", [
    (dict(instances=np.array([2, 0, 1])), "job 'a', task 2: instances must be whole numbers >= 1"),
    (dict(demand=np.array([[1.0], [np.nan], [0.5]])), "job 'a', task 2: demands must be finite numbers >= 0"),
    (dict(duration=np.array([4.0, 3.0, -1.0])), "job 'b', task 1: durations must be finite and >= 0"),
    (dict(submit=np.array([5.0, 0.0])), "job 'b': submit times must not decrease"),
    (dict(parents=np.array([2])), "job 'a', task 2: a parent must be a row of the same job"),
    (dict(parent_start=np.array([0, 1, 2, 2]), parents=np.array([1, 0])),
     "job 'a': task dependencies form a cycle among \\[1, 2\\]"),
    (dict(parents=np.array([1])), "job 'a': task dependencies form a cycle among \\[2\\]"),
    (dict(task_ids=(1, 1, 1)), "job 'a': duplicate task ids"),
    (dict(task_start=np.array([0, 3, 3])), "give every job a task"),
    (dict(instances=[2, 3, 1]), "instances must be a numpy array of int64 of shape \\(3,\\)"),
    (dict(demand=np.array([1.0, 2.0, 0.5])), "demand must be a numpy array of float64 of shape \\(3, 1\\)"),
])
def test_a_job_block_names_the_job_and_task_it_refuses(change, message):
    with pytest.raises(ValueError, match=f"JobBlock: .*{message}"):
        block_of_two_jobs(**change)


def test_the_generator_in_blocks_gives_the_same_jobs(small_blocks, tmp_path):
    """`iter_alibaba_like(block=...)` makes the jobs it makes one at a time; a streamed run of its blocks writes
    the files and summary of the same run fed JobSpecs, bit for bit, on either engine path."""
    specs = list(iter_alibaba_like(23, seed=4, max_instances=40))
    blocks = list(iter_alibaba_like(23, seed=4, max_instances=40, block=5))
    assert [len(b) for b in blocks] == [5, 5, 5, 5, 3]
    from cloudsim.engine.tasks import TaskTable
    cluster = ClusterSpec.uniform(4, {"cpu": 96, "memory": 1})
    by_specs, by_blocks = TaskTable(cluster, specs), TaskTable(cluster)
    for block in blocks:
        by_blocks.extend(block)
    for name in (*TaskTable._TASK_ARRAYS, *TaskTable._JOB_ARRAYS, "job_first_task"):
        assert np.array_equal(getattr(by_blocks, name), getattr(by_specs, name), equal_nan=True), name
    assert by_blocks.children == by_specs.children and by_blocks.task_ids == by_specs.task_ids
    for compiled in (False, True):
        runs = [Simulation(cluster, source, make_broker("first-fit"), stream_to=tmp_path / f"{compiled}{k}",
                           compiled=compiled).run() for k, source in enumerate((iter(specs), iter(blocks)))]
        for name in TABLES:
            pd.testing.assert_frame_equal(getattr(runs[0], name)(), getattr(runs[1], name)(), check_exact=True)
        summaries = [pd.Series({k: v for k, v in r.summary.items() if k != "sim_wall_s"}, dtype=object) for r in runs]
        assert summaries[0].equals(summaries[1])  # (NaN where NaN)


def test_a_stream_of_blocks_is_checked_as_it_is_read(tmp_path):
    cluster = ClusterSpec.uniform(1, {"cpu": 4, "memory": 1})
    first = block_of_two_jobs()
    earlier = block_of_two_jobs(ids=("c", "d"), submit=np.array([3.0, 9.0]))
    cases = [([first, earlier], ValueError, r"job 'c' is submitted at 3.0, before the job read before it \(5.0\)"),
             ([first, {"id": "c"}], TypeError, r"must be JobSpec objects \(or JobBlocks, each a block\), got \{"),
             ([block_of_two_jobs(resources=("gpu",))], ValueError, "job 'a': task 1 demands gpu=1 .*--capacity"),
             ([block_of_two_jobs(demand=np.array([[1.0], [8.0], [0.5]]))], UnschedulableTaskError,
              "job 'a', task 2 demands .* per instance, which no machine can hold")]
    for jobs, error, message in cases:
        with pytest.raises(error, match=message):
            Simulation(cluster, iter(jobs), make_broker("first-fit"), stream_to=tmp_path / "out").run()
        assert list(tmp_path.iterdir()) == []
    with pytest.raises(TypeError, match="a JobBlock feeds a streamed simulation: pass stream_to"):
        Simulation(cluster, [first], make_broker("first-fit"))
    mixed = [first, JobSpec("c", 6.0, (task(0, 1, 1, 0.1, 1.0),)), block_of_two_jobs(ids=("d", "e"),
                                                                                   submit=np.array([6.0, 9.0]))]
    sim = Simulation(cluster, mixed, make_broker("first-fit"), stream_to=tmp_path / "out")
    assert sim._stream_length == 5  # (the progress bar counts jobs, not blocks)
    assert sim.run().summary["jobs"] == 5 and sim.result().jobs().job_id.tolist() == ["a", "b", "c", "d", "e"]


def test_a_job_stream_shifts_and_scales_blocks_as_it_does_jobs():
    from traces import JobStream

    stream = JobStream(3, lambda: iter([block_of_two_jobs(submit=np.array([10.0, 15.0])),
                                        JobSpec("c", 16.0, (task(0, 1, 1, 0.1, 1.0),))]), origin=10.0, scale=2.0)
    block, job = list(stream)
    assert block.submit.tolist() == [0.0, 10.0] and block.ids == ("a", "b") and job.submit_time == 12.0


def test_a_simulation_in_memory_reads_a_generator_of_jobs_once():
    jobs = alibaba_like(30, seed=2, max_instances=20)
    cluster = ClusterSpec.uniform(4, {"cpu": 96, "memory": 1})
    from_list = Simulation(cluster, jobs, make_broker("first-fit")).run()
    from_generator = Simulation(cluster, (job for job in jobs), make_broker("first-fit")).run()
    assert from_generator.summary["jobs"] == 30
    pd.testing.assert_frame_equal(from_list.groups, from_generator.groups, check_exact=True)


@pytest.mark.parametrize("compiled", [True, False])
def test_a_streamed_run_meters_the_energy_of_the_same_run_in_memory(small_blocks, tmp_path, compiled):
    """Machines of two shapes with their own models (one a bent table: the watts are no sum over groups), a daily
    carbon cycle, and on the Python path failures re-queueing work (the compiled one runs without): a streamed
    run's energy and carbon, metered as its groups are written, are those `meter` gives for the same run kept in
    memory."""
    from cloudsim.engine.carbon import GridSignal
    from cloudsim.engine.energy import LinearPower, MachinePower, StreamMeter, TablePower, meter

    jobs = alibaba_like(60, seed=3, max_instances=40)
    cluster = ClusterSpec(("cpu", "memory"), ((96, 1), (64, 1), (96, 1), (64, 1)))
    bent = TablePower((60, 95, 110, 118, 128, 140, 153, 170, 189, 205, 222))
    models = (MachinePower(bent), MachinePower(LinearPower(50, 150))) * 2
    grid = GridSignal.daily_cycle()
    options = dict(compiled=compiled, faults=None if compiled else RandomFaults(mtbf=300, mttr=40, seed=1))
    in_memory = Simulation(cluster, list(jobs), make_broker("first-fit"), **options).run()
    streamed = Simulation(cluster, iter(jobs), make_broker("first-fit"), stream_to=tmp_path / "out",
                          energy=StreamMeter(models, cluster, grid), **options).run()
    assert (in_memory.summary["instance_restarts"] > 0) != compiled
    expected = meter(in_memory, models, grid).summary()
    assert set(expected) == {"energy_kwh", "carbon_kg", "carbon_intensity_mean"}
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    for key, value in expected.items():
        assert streamed.summary[key] == pytest.approx(value, rel=1e-9) and written[key] == streamed.summary[key]
    with pytest.raises(ValueError, match="energy meters a streamed run"):
        Simulation(cluster, list(jobs), make_broker("first-fit"), energy=StreamMeter(models, cluster))
    used = StreamMeter(models, cluster)
    Simulation(cluster, iter(jobs), make_broker("first-fit"), stream_to=tmp_path / "once", energy=used).run()
    with pytest.raises(RuntimeError, match="has metered a whole run already; give each run a new one"):
        Simulation(cluster, iter(jobs), make_broker("first-fit"), stream_to=tmp_path / "twice", energy=used).run()
    assert not (tmp_path / "twice").exists()
