"""Alibaba v2017 / v2018 loaders on small files written to the official schemas, and on the real samples."""

import gzip
import json

import pytest

from cloudsim import MachineEvent
from cloudsim.cli import main
from conftest import DATA, write
from traces import (
    TraceFormatError,
    load_alibaba_v2017,
    load_alibaba_v2018,
    machines_v2017,
    machines_v2018,
)
from traces.alibaba import parse_task_name

# v2017 batch_task: create, end, job, task, instances, status, plan_cpu, plan_mem
V2017_TASKS = (
    "10,40,1,1,2,Terminated,50,0.01\n"
    "12,30,1,2,1,Terminated,100,0.02\n"
    "5,20,2,7,3,Terminated,100,0.03\n"
    "-5,10,3,1,1,Terminated,50,0.01\n"
    "20,50,4,1,1,Failed,50,0.01\n"
    "30,0,5,1,1,Waiting,,\n"
)
# v2017 batch_instance: start, end, job, task, machine, status, seq_no, total_seq_no, 4 usage columns
V2017_INSTANCES = (
    "11,31,1,1,7,Terminated,1,1,0,0,0,0\n"
    "11,15,1,1,8,Failed,1,2,0,0,0,0\n"
    "16,46,1,1,8,Terminated,2,2,0,0,0,0\n"
)
# v2018 batch_task: task_name, instance_num, job_name, task_type, status, start, end, plan_cpu, plan_mem
V2018_TASKS = (
    "M1,2.0,j_1,1,Terminated,100,110,100.0,0.5\n"
    "R2_1,1.0,j_1,1,Terminated,110,130,50.0,1.0\n"
    "J3_1_2,1.0,j_1,1,Terminated,130,135,200.0,0.39\n"
    "task_Nzg3ODAwNDgzMTAwNTIxNTM4NQ==,3.0,j_2,1,Terminated,50,60,100.0,0.2\n"
    "M1,1.0,j_3,1,Terminated,70,80,100.0,0.2\n"
    "R2_1,1.0,j_3,1,Running,80,0,100.0,0.2\n"
)


def task_table(job):
    return [(t.id, t.instances, dict(t.demand), t.duration, t.parents) for t in job.tasks]


# ----------------------------------------------------------------- v2017
def test_v2017_builds_jobs_from_task_times_and_counts_skips(tmp_path, cache):
    workload = load_alibaba_v2017(write(tmp_path, "batch_task.csv", V2017_TASKS), cache=cache)
    # Job 2 (created at 5) comes before job 1 (earliest task at 10); cpu 50 = half a core.
    assert [(j.id, j.submit_time) for j in workload.jobs] == [("2", 5.0), ("1", 10.0)]
    assert task_table(workload.jobs[1]) == [
        ("1", 2, {"cpu": 0.5, "memory": 0.01}, 30.0, ()),
        ("2", 1, {"cpu": 1.0, "memory": 0.02}, 18.0, ()),
    ]
    assert workload.skipped == {"before_window": 1, "status_Failed": 1, "status_Waiting": 1}


def test_v2017_keep_policy_replays_failed_tasks_with_their_times(tmp_path, cache):
    workload = load_alibaba_v2017(write(tmp_path, "batch_task.csv", V2017_TASKS), status_policy="keep", cache=cache)
    assert [j.id for j in workload.jobs] == ["2", "1", "4"]
    assert workload.jobs[2].tasks[0].duration == 30.0
    # The Waiting row has no demand and no end time: still a counted skip.
    assert workload.skipped == {"before_window": 1, "missing_demand": 1}
    with pytest.raises(ValueError, match="status_policy must be one of"):
        load_alibaba_v2017(tmp_path / "batch_task.csv", status_policy="maybe", cache=cache)


def test_v2017_instance_durations_come_from_terminated_instance_rows(tmp_path, cache):
    tasks = write(tmp_path, "batch_task.csv", V2017_TASKS)
    instances = write(tmp_path, "batch_instance.csv", V2017_INSTANCES)
    workload = load_alibaba_v2017(tasks, instances, cache=cache)
    first, second = workload.jobs[1].tasks
    # Two Terminated rows (11-31 and 16-46); the failed first try of seq 2 is not a run.
    assert (first.instances, first.duration) == (2, (20.0, 30.0))
    assert (second.instances, second.duration) == (1, 18.0)  # no instance rows: the task's own times
    assert workload.notes["tasks_timed_by_instances"] == 1
    assert workload.source == {"batch_task": str(tasks), "batch_instance": str(instances)}


def test_window_selects_jobs_by_submit_time_with_all_their_tasks(tmp_path, cache):
    tasks = write(tmp_path, "batch_task.csv", V2017_TASKS + "8,14,6,1,1,Terminated,50,0.01\n"
                  "16,30,6,2,1,Terminated,50,0.01\n")
    workload = load_alibaba_v2017(tasks, window=(6, 15), cache=cache)
    # Job 1 (10) and job 6 (8) are in [6, 15); job 6's task created at 16 comes along; job 2 (5) does not.
    assert [(j.id, len(j.tasks)) for j in workload.jobs] == [("6", 2), ("1", 2)]


def test_headered_and_compressed_files_load_the_same(tmp_path, cache):
    header = "task_create_time, task_end_time, job_id, task_id,number_of_instances, status, cpu, mem\r\n"
    plain = load_alibaba_v2017(write(tmp_path, "plain.csv", V2017_TASKS), cache=cache).jobs
    headered = load_alibaba_v2017(write(tmp_path, "headered.csv", header + V2017_TASKS.replace("\n", "\r\n")),
                                  cache=cache).jobs
    packed = tmp_path / "packed.csv.gz"
    packed.write_bytes(gzip.compress(V2017_TASKS.encode()))
    assert plain == headered == load_alibaba_v2017(packed, cache=cache).jobs


def test_a_tar_archive_is_refused_before_reading(tmp_path, cache):
    import tarfile

    csv_file = write(tmp_path, "batch_task.csv", V2018_TASKS)
    for name in ("batch_task.tar.gz", "disguised.csv.gz"):
        with tarfile.open(tmp_path / name, "w:gz") as archive:
            archive.add(csv_file, arcname="batch_task.csv")
        with pytest.raises(TraceFormatError, match=r"is a tar archive.*extract the CSV first"):
            load_alibaba_v2018(tmp_path / name, cache=cache)


def test_the_cache_is_reused_until_the_source_changes(tmp_path, cache):
    path = write(tmp_path, "batch_task.csv", V2017_TASKS)
    load_alibaba_v2017(path, cache=cache)
    assert len(list(cache.glob("*.tasks.*.parquet"))) == 1
    assert len(load_alibaba_v2017(path, cache=cache).jobs) == 2
    assert len(list(cache.glob("*.tasks.*.parquet"))) == 1
    path.write_text(V2017_TASKS + "60,70,9,1,1,Terminated,50,0.01\n")
    assert len(load_alibaba_v2017(path, cache=cache).jobs) == 3
    assert len(list(cache.glob("*.tasks.*.parquet"))) == 2


# ----------------------------------------------------------------- v2018
@pytest.mark.parametrize(
    "name, expected",
    [
        ("M1", ("1", (), False)),
        ("R2_1", ("2", ("1",), False)),
        ("J3_1_2", ("3", ("1", "2"), False)),
        ("MergeTask12_3_4", ("12", ("3", "4"), False)),
        ("task_Nzg3ODAwNDgzMTAwNTIxNTM4NQ==", ("task_Nzg3ODAwNDgzMTAwNTIxNTM4NQ==", (), False)),
    ],
)
def test_task_names_encode_the_dag(name, expected):
    assert parse_task_name(name) == expected


def test_v2018_builds_dags_converts_units_and_skips_incomplete_jobs(tmp_path, cache):
    workload = load_alibaba_v2018(write(tmp_path, "batch_task.csv", V2018_TASKS), cache=cache)
    assert [(j.id, j.submit_time) for j in workload.jobs] == [("j_2", 50.0), ("j_1", 100.0)]
    # plan_cpu 100 = 1 core; plan_mem is on a 0-100 scale.
    assert task_table(workload.jobs[1]) == [
        ("1", 2, {"cpu": 1.0, "memory": 0.005}, 10.0, ()),
        ("2", 1, {"cpu": 0.5, "memory": 0.01}, 20.0, ("1",)),
        ("3", 1, {"cpu": 2.0, "memory": pytest.approx(0.0039)}, 5.0, ("1", "2")),
    ]
    assert workload.jobs[0].tasks[0].id == "task_Nzg3ODAwNDgzMTAwNTIxNTM4NQ=="
    # j_3's R2_1 is still running: it is skipped, and so is its parent M1 (the DAG would be cut).
    assert workload.skipped == {"status_Running": 1, "job_incomplete": 1}


def test_v2018_as_a_block_holds_the_same_jobs_as_columns(tmp_path, cache):
    """``as_blocks=True``: the jobs of the test above as one JobBlock, parents as rows of their job."""
    tasks = write(tmp_path, "batch_task.csv", V2018_TASKS)
    workload = load_alibaba_v2018(tasks, cache=cache, as_blocks=True)
    [block] = workload.jobs
    assert block.ids == ("j_2", "j_1") and block.submit.tolist() == [50.0, 100.0]
    assert (block.task_start.tolist() == [0, 1, 4]
            and block.task_ids == ("task_Nzg3ODAwNDgzMTAwNTIxNTM4NQ==", "1", "2", "3"))
    assert block.instances.tolist() == [3, 2, 1, 1] and block.duration.tolist() == [10.0, 10.0, 20.0, 5.0]
    assert block.demand[:, 0].tolist() == [1.0, 1.0, 0.5, 2.0] and block.demand[1:3, 1].tolist() == [0.005, 0.01]
    # "2" (row 2) after "1" (row 1); "3" (row 3) after "1" and "2"
    assert block.parent_start.tolist() == [0, 0, 0, 1, 3] and block.parents.tolist() == [1, 1, 2]
    assert block.critical_paths().tolist() == [10.0, 35.0]
    assert (workload.skipped, workload.total_jobs) == ({"status_Running": 1, "job_incomplete": 1}, 2)
    instances = write(tmp_path, "batch_instance.csv", "ins_1,M1,j_1,1,Terminated,101,104,m_1,1,1,0,0,0,0\n")
    with pytest.raises(ValueError, match="as_blocks=True: a JobBlock holds one duration per task"):
        load_alibaba_v2018(tasks, instances, cache=cache, as_blocks=True)


@pytest.mark.parametrize("version", ["v2017", "v2018"])
def test_a_real_sample_as_blocks_fills_the_task_table_as_its_jobs_do(cache, version):
    """Every column the engine keeps of the tasks and jobs, from a block or from JobSpecs, for every job of the
    sample (v2018's DAGs list children before parents at times)."""
    import numpy as np

    from cloudsim import ClusterSpec
    from cloudsim.engine.tasks import TaskTable
    path = real(version, "batch_task.csv" if version == "v2017" else "selected_DAGs.csv")
    load = load_alibaba_v2017 if version == "v2017" else load_alibaba_v2018
    cluster = ClusterSpec.uniform(2, {"cpu": 96, "memory": 1})
    by_specs, by_block = TaskTable(cluster, load(path, cache=cache).jobs), TaskTable(cluster)
    by_block.extend(load(path, cache=cache, as_blocks=True).jobs[0])
    for name in (*TaskTable._TASK_ARRAYS, *TaskTable._JOB_ARRAYS, "job_first_task"):
        assert np.array_equal(getattr(by_block, name), getattr(by_specs, name), equal_nan=True), name
    for name in ("task_ids", "children", "job_ids"):
        assert getattr(by_block, name) == getattr(by_specs, name), name


def test_v2018_instances_time_each_instance(tmp_path, cache):
    tasks = write(tmp_path, "batch_task.csv", V2018_TASKS)
    # instance_name, task_name, job_name, task_type, status, start, end, machine, seq_no, total_seq_no, 4 usage
    instances = write(tmp_path, "batch_instance.csv",
                      "ins_1,M1,j_1,1,Terminated,101,104,m_1,1,1,0,0,0,0\n"
                      "ins_2,M1,j_1,1,Terminated,101,111,m_2,1,1,0,0,0,0\n"
                      "ins_3,R2_1,j_1,1,Terminated,112,120,m_1,1,1,0,0,0,0\n")
    job = load_alibaba_v2018(tasks, instances, cache=cache).jobs[1]
    assert [(t.id, t.instances, t.duration) for t in job.tasks] == [("1", 2, (3.0, 10.0)), ("2", 1, (8.0,)),
                                                                    ("3", 1, 5.0)]
    broken = write(tmp_path, "broken_instance.csv", "ins_1,M1,j_1,1,Terminated,101,104,m_1,1,1,0,0,0,0\n"
                   "ins_2,M1,j_1,1,Lost,101,111,m_2,1,1,0,0,0,0\n")
    with pytest.raises(TraceFormatError,
                       match=r"broken_instance.csv: column 'status' is not one of .* on 1 line\(s\): 2"):
        load_alibaba_v2018(tasks, broken, cache=cache)


# ----------------------------------------------------------------- machines
def test_v2017_server_events_give_the_cluster_and_its_failures(tmp_path):
    table = machines_v2017(write(tmp_path, "server_event.csv",
                                 "0,2,add,,64,0.5,0.9\n0,1,add,,64,0.69,1\n100,2,softerror,machine_fail,0,0,0\n"
                                 "200,1,harderror,,0,0,0\n300,1,add,,64,0.69,1\n"))
    assert table.cluster.resources == ("cpu", "memory", "disk")
    assert table.cluster.machine_ids == (1, 2)
    assert table.cluster.capacities == ((64, 0.69, 1), (64, 0.5, 0.9))
    assert table.events == [MachineEvent(100, 1, "down"), MachineEvent(200, 0, "failed"), MachineEvent(300, 0, "up")]


def test_soft_errors_can_be_given_a_downtime(tmp_path):
    path = write(tmp_path, "server_event.csv", "0,1,add,,64,0.5,1\n0,2,add,,64,0.5,1\n"
                 "100,1,softerror,,0,0,0\n150,1,softerror,,0,0,0\n400,1,softerror,,0,0,0\n50,2,softerror,,0,0,0\n")
    # Machine 1: down at 100, still down at 150 (error again before 100 + 60), up at 210, down at 400, up at 460.
    assert machines_v2017(path, softerror_downtime=60).events == [
        MachineEvent(50, 1, "down"), MachineEvent(100, 0, "down"), MachineEvent(110, 1, "up"),
        MachineEvent(210, 0, "up"), MachineEvent(400, 0, "down"), MachineEvent(460, 0, "up")]
    with pytest.raises(ValueError, match="softerror_downtime must be a positive"):
        machines_v2017(path, softerror_downtime=0)


def test_v2018_machine_meta_statuses_become_events(tmp_path):
    table = machines_v2018(write(tmp_path, "machine_meta.csv",
                                 "m_2,0,1,1,96,100,USING\nm_10,0,1,2,96,100,USING\n"
                                 "m_2,500,1,1,96,100,IMPORT_INSTALLING\nm_2,900,1,,96,100,USING\n"
                                 "m_3,700,1,1,96,100,IMPORT_INSTALLING\nm_3,800,1,1,96,100,USING\n"))
    assert table.cluster.machine_ids == ("m_2", "m_3", "m_10")
    assert table.cluster.capacities == ((96, 1.0), (96, 1.0), (96, 1.0))
    # m_3 is first seen being installed: out of service from the start until it is USING.
    assert table.events == [MachineEvent(0, 1, "down"), MachineEvent(500, 0, "down"), MachineEvent(800, 1, "up"),
                            MachineEvent(900, 0, "up")]


# ----------------------------------------------------------------- bad input
GOOD = "10,40,1,1,2,Terminated,50,0.01\n"


@pytest.mark.parametrize(
    "text, message",
    [
        ("10,40,1,1,2,Terminated,50\n", r"line 1 has 7 columns, but alibaba-v2017 batch_task .* has 8"),
        (GOOD + "10,40,1,2,2,Terminated,50,0.01,9\n", r"line 2: expected 8 columns, found 9"),
        (GOOD + "10,40,abc,2,2,Terminated,50,0.01\n", r"line 2, column 'job_id': 'abc' is not a number"),
        (GOOD + "10.5,40,1,2,2,Terminated,50,0.01\n",
         r"line 2, column 'task_create_time': '10.5' is not a whole number"),
        (GOOD + "10,40,1,2,2,Terminated,-50,0.01\n", r"column 'plan_cpu' is negative on 1 line\(s\): 2"),
        (GOOD + "10,40,1,2,2.5,Terminated,50,0.01\n",
         r"column 'instances' is not a whole number >= 0 on 1 line\(s\): 2"),
        (GOOD + "10,40,1,2,2,Exploded,50,0.01\n", r"column 'status' is not one of .* on 1 line\(s\): 2"),
        (GOOD + "11,40,1,1,1,Terminated,50,0.01\n", r"line 2: job '1' has task '1' more than once"),
    ],
)
def test_bad_input_names_file_line_and_column(tmp_path, cache, text, message):
    path = write(tmp_path, "bad_task.csv", text)
    with pytest.raises(TraceFormatError, match=f"bad_task.csv: {message}"):
        load_alibaba_v2017(path, cache=cache)


def test_dirty_rows_known_in_the_real_data_are_counted_skips(tmp_path, cache):
    text = (GOOD + "-3,40,2,1,1,Terminated,50,0.01\n"  # created before the trace window
            + "20,10,3,1,1,Terminated,50,0.01\n"  # ends before it starts
            + "20,30,4,1,1,Terminated,nan,0.01\n"  # NaN demand
            + "20,30,5,1,1,Terminated,,\n"  # empty demand
            + "20,,6,1,1,Terminated,50,0.01\n")  # empty end time
    workload = load_alibaba_v2017(write(tmp_path, "dirty.csv", text), cache=cache)
    assert [j.id for j in workload.jobs] == ["1"]
    assert workload.skipped == {"before_window": 1, "end_before_start": 1, "missing_demand": 2, "missing_time": 1}


def test_a_file_of_another_format_is_refused(tmp_path, cache):
    meta = write(tmp_path, "machine_meta.csv", "m_1,0,1,1,96,100,USING\n")
    with pytest.raises(TraceFormatError, match=r"line 1 has 7 columns.*is this the right file for this format"):
        load_alibaba_v2018(meta, cache=cache)
    with pytest.raises(TraceFormatError, match=r"column 'event_type' is not one of .* on 1 line\(s\): 2"):
        machines_v2017(write(tmp_path, "events.csv", "0,1,add,,64,0.5,1\n5,1,reboot,,0,0,0\n"))
    with pytest.raises(TraceFormatError, match=r"'machine_id' names a machine that has no add event on 1 line\(s\): 2"):
        machines_v2017(write(tmp_path, "events2.csv", "0,1,add,,64,0.5,1\n5,9,softerror,,0,0,0\n"))
    with pytest.raises(TraceFormatError, match=r"column 'machine_id' is not of the form m_<number>"):
        machines_v2018(write(tmp_path, "meta2.csv", "machine7,0,1,1,96,100,USING\n"))


# ----------------------------------------------------------------- CLI
def test_cli_replays_a_v2017_trace_with_its_machines_and_their_failures(tmp_path, cache, capsys):
    tasks = write(tmp_path, "batch_task.csv", V2017_TASKS)
    # Two machines of 1 cpu; machine 2 fails hard at t=15 of trace time (t=10 of the replay).
    events = write(tmp_path, "server_event.csv", "0,1,add,,1,1,1\n0,2,add,,1,1,1\n15,2,harderror,,0,0,0\n")
    main(["replay", str(tasks), "--format", "alibaba-v2017", "--machine-table", str(events), "--machine-events",
          "--cache", str(cache), "--json"])
    *episodes, summary = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    # Job 2 (t=0: 3 x 1 cpu, 15 s) fills both machines; job 1 (t=5) waits. At t=10 machine 2 fails and
    # its instance is re-queued; every instance still finishes.
    assert summary["instances"] == 6 and summary["finished"] == {"first-fit": 6}
    assert summary["failed"] == {"first-fit": 0} and summary["restarts"] == {"first-fit": 1}
    assert summary["skipped"] == {"before_window": 1, "status_Failed": 1, "status_Waiting": 1}
    assert episodes[0]["instance_restarts"] == 1


def test_cli_summary_counts_the_machine_rows_it_read_otherwise(tmp_path, cache, capsys):
    tasks = write(tmp_path, "batch_task.csv", V2017_TASKS)
    # Machine 2's add is before the window (-5: up from t=0), its soft error has no time (skipped), and
    # machine 1 has a soft error at -3 (down from t=0): one row skipped, two noted.
    events = write(tmp_path, "server_event.csv",
                   "0,1,add,,4,1,1\n-5,2,add,,4,1,1\n,2,softerror,,0,0,0\n-3,1,softerror,,0,0,0\n")
    assert main(["replay", str(tasks), "--format", "alibaba-v2017", "--machine-table", str(events),
                 "--machine-events", "--cache", str(cache), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["machines_skipped"] == {"missing_time": 1} and summary["machine_notes"] == {"before_window": 2}
    meta = write(tmp_path, "machine_meta.csv", "m_1,0,1,1,4,100,USING\nm_2,-10,1,1,4,100,USING\n"
                                               "m_2,50,1,1,4,100,OFFLINE\nm_2,70,1,1,4,100,\n")
    v2018 = write(tmp_path, "v2018.csv", "M1,1.0,j_1,1,Terminated,100,110,1.0,0.5\n")
    assert main(["replay", str(v2018), "--format", "alibaba-v2018", "--machine-table", str(meta),
                 "--cache", str(cache)]) == 0
    out = capsys.readouterr().out
    assert "machine table rows skipped: {'missing_status': 1}" in out
    assert "noted in the machine table: {'before_window': 1, 'unknown_status_OFFLINE': 1}" in out


# ----------------------------------------------------------------- real samples
def real(*parts):
    path = DATA.joinpath("alibaba", *parts)
    if not path.is_file():
        pytest.skip(f"real sample {path} not found (set CLOUDSIM_DATA)")
    return path


def test_real_v2017_sample_loads_with_the_documented_skips(cache):
    workload = load_alibaba_v2017(real("v2017", "batch_task.csv"), cache=cache)
    # The data README: Terminated 67,013, Waiting 8,847, Running 3,567, Failed 1,126; 167 negative create times.
    assert workload.skipped["status_Waiting"] == 8847
    assert workload.skipped["status_Running"] == 3567
    assert workload.skipped["status_Failed"] == 1126
    kept = sum(len(j.tasks) for j in workload.jobs)
    assert kept + sum(workload.skipped.values()) == 80553


def test_real_v2018_sample_and_machines_load(cache):
    workload = load_alibaba_v2018(real("v2018", "selected_DAGs.csv"), cache=cache)
    assert sum(len(j.tasks) for j in workload.jobs) + sum(workload.skipped.values()) == 55874
    assert any(t.parents for j in workload.jobs for t in j.tasks)
    table = machines_v2018(real("v2018", "machine_meta.csv"))
    assert table.cluster.machines == 4034  # m_1 .. m_4034
    assert table.cluster.machine_ids[:3] == ("m_1", "m_2", "m_3")
    v2017 = machines_v2017(real("v2017", "server_event.csv"))
    assert v2017.cluster.machines == 1313
    # 39 softerrors on 7 machines, no recovery recorded: each machine goes down once and stays down.
    assert len(v2017.events) == 7 and {e.state for e in v2017.events} == {"down"}
