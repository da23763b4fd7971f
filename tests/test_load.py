"""A trace at a chosen load: one factor on its submit times, worked out by hand, and nothing else changed."""

from __future__ import annotations

import json

import pytest

from cloudsim import ClusterSpec, JobSpec, TaskSpec
from cloudsim.run import RunConfig, WorkloadConfig
from cloudsim.run.workload import episodes, resolve_workload
from conftest import cli
from traces.load import offered_load, time_scale

TWO_MACHINES = ClusterSpec.uniform(2, {"cpu": 4.0, "memory": 8.0})
JOBS = [
    JobSpec("A", 0.0, (TaskSpec("a", 2, {"cpu": 1.0, "memory": 1.0}, 10.0),)),  # 20 cpu-s, 20 memory-s
    JobSpec("B", 10.0, (TaskSpec("b", 1, {"cpu": 2.0, "memory": 0.0}, 5.0),)),  # 10 cpu-s
    JobSpec("C", 20.0, (TaskSpec("c", 3, {"cpu": 1.0, "memory": 0.5}, (1.0, 2.0, 3.0)),)),  # 6 cpu-s, 3 memory-s
]


def test_the_offered_load_is_the_most_demanded_resources_work_over_capacity_and_span():
    # cpu: 36 cpu-s over 8 cpu x 20 s = 0.225; memory: 23 over 16 x 20 = 0.071875: cpu binds.
    assert offered_load(JOBS, TWO_MACHINES) == (36 / 160, "cpu")
    factor, before, resource, span = time_scale(JOBS, TWO_MACHINES, 0.9)
    assert (factor, before, resource) == (0.25, 0.225, "cpu")  # submit times 0, 2.5, 5: 36 / (8 x 5) = 0.9
    assert span == 5.0


def test_a_workload_without_a_span_or_a_resource_refuses_a_load():
    with pytest.raises(ValueError, match="all 2 job\\(s\\) arrive at one instant"):
        offered_load([JOBS[0], JobSpec("A2", 0.0, JOBS[0].tasks)], TWO_MACHINES)
    with pytest.raises(ValueError, match="no job"):
        offered_load([], TWO_MACHINES)


def test_a_trace_at_a_load_keeps_its_jobs_and_scales_only_their_submit_times(tmp_path):
    trace = tmp_path / "jobs.csv"  # CloudSimPy's format: one row per task, durations and demands as written
    rows = ["submit_time,duration,instances_num,cpu,memory,disk,task_id,job_id",
            "0,10,2,1,0.01,0,1,1", "10,5,1,2,0,0,1,2", "20,2,3,1,0.01,0,1,3"]
    trace.write_text("\n".join(rows) + "\n")
    config = RunConfig(workload=WorkloadConfig(str(trace), format="cloudsimpy", load=0.9))
    plain = RunConfig(workload=WorkloadConfig(str(trace), format="cloudsimpy"))
    cluster = dict(machines=2, capacity={"cpu": 4.0, "memory": 1.0, "disk": 1.0})
    from cloudsim.run.config import ClusterConfig
    import dataclasses
    config, plain = (dataclasses.replace(c, cluster=ClusterConfig(**cluster)) for c in (config, plain))
    scaled, = episodes(config, resolve_workload(config))
    original, = episodes(plain, resolve_workload(plain))
    # cpu: 20 + 10 + 6 = 36 cpu-s over 8 cpu x 20 s = 0.225; to 0.9: times x 0.25.
    assert [job.submit_time for job in scaled.jobs] == [0.0, 2.5, 5.0] and scaled.offered_load == 0.9
    assert [dataclasses.replace(job, submit_time=0.0) for job in scaled.jobs] == \
        [dataclasses.replace(job, submit_time=0.0) for job in original.jobs]
    assert original.offered_load is None


def test_a_replay_at_a_load_reports_it_beside_the_achieved_utilisation(tmp_path, capsys):
    trace = tmp_path / "jobs.csv"
    trace.write_text("submit_time,duration,instances_num,cpu,memory,disk,task_id,job_id\n0,10,2,1,0.01,0,1,1\n"
                     "10,5,1,2,0,0,1,2\n20,2,3,1,0.01,0,1,3\n")
    code, out, err = cli(["replay", str(trace), "--format", "cloudsimpy", "--machines", "2", "--capacity",
                          "cpu=4,memory=1,disk=1", "--load", "0.9", "--json"], capsys)
    row = json.loads(out.splitlines()[0])
    assert code == 0 and row["offered_load"] == 0.9 and 0 < row["utilisation_cpu"] <= 1
    code, out, err = cli(["replay", "--brokers", "first-fit", "--json", "--synthetic-jobs", "20"], capsys)
    assert code == 0 and "offered_load" not in out  # a generator keeps its own meaning of --load, and no new column


@pytest.mark.parametrize("argv, words", [
    (["--load", "0"], "--load 0: must be a finite number > 0"),
    (["--load", "-1"], "--load -1: must be a finite number > 0"),
    (["--load", "nan"], "--load nan: must be a finite number > 0"),
    (["--load", "5", "--tick", "1000"], "every job would arrive within the first tick"),
])
def test_a_load_that_cannot_work_is_one_line(tmp_path, capsys, argv, words):
    trace = tmp_path / "jobs.csv"
    trace.write_text("submit_time,duration,instances_num,cpu,memory,disk,task_id,job_id\n0,10,2,1,0.01,0,1,1\n"
                     "10,5,1,2,0,0,1,2\n")
    code, _, err = cli(["replay", str(trace), "--format", "cloudsimpy", "--machines", "2", "--capacity",
                        "cpu=4,memory=1,disk=1", *argv], capsys)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_the_gpus_count_among_the_resources_that_set_the_load():
    # One machine of 8 cpu, 16 memory and 4 GPUs (4,000 milli). A at 0: two whole GPUs for 10 s (2 x 1,000 x 10
    # = 20,000 milli-s) and 1 cpu (10 cpu-s); B at 10: two instances of a quarter GPU for 4 s (2 x 250 x 4 = 2,000)
    # and 1 cpu each (8 cpu-s). gpu: 22,000 / (4,000 x 10) = 0.55; cpu: 18 / (8 x 10) = 0.225: the GPUs bind.
    from cloudsim.engine.specs import DeviceRequest
    gpu_box = ClusterSpec(("cpu", "memory"), ((8.0, 16.0),), devices=(4,))
    jobs = [JobSpec("A", 0.0, (TaskSpec("a", 1, {"cpu": 1.0, "memory": 1.0}, 10.0, devices=DeviceRequest(2, 1000)),)),
            JobSpec("B", 10.0, (TaskSpec("b", 2, {"cpu": 1.0, "memory": 1.0}, 4.0, devices=DeviceRequest(1, 250)),))]
    assert offered_load(jobs, gpu_box) == (0.55, "gpu")
    assert time_scale(jobs, gpu_box, 1.1) == (0.5, 0.55, "gpu", 5.0)  # B then arrives at 5
    with pytest.raises(ValueError, match="the jobs ask for gpu, which the cluster has none of"):
        offered_load(jobs, ClusterSpec(("cpu", "memory"), ((8.0, 16.0),)))


def _gpu_trace(tmp_path):
    """An openb pod list and node list: one node of 8 cores, 16 GiB and 4 GPUs; pod A at 0 takes two whole GPUs
    for 10 s, pod B at 10 a quarter GPU for 4 s."""
    pods, nodes = tmp_path / "pods.csv", tmp_path / "nodes.csv"
    pods.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
                    "scheduled_time\nA,1000,1024,2,1000,,LS,Succeeded,0,10,0\n"
                    "B,1000,1024,1,250,,LS,Succeeded,10,14,10\n")
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,8000,16384,4,T4\n")
    return pods, nodes


def test_a_gpu_trace_at_a_load_is_scaled_by_its_gpus(tmp_path, capsys):
    # gpu: (2 x 1,000 x 10 + 250 x 4) / (4,000 x 10) = 0.525; cpu: (1,000 x 10 + 1,000 x 4) / (8,000 x 10) = 0.175;
    # memory: 1,024 x 14 / (16,384 x 10) = 0.0875. To 1.05: times x 0.5, B arrives at 5 (by cpu it would be 1.67).
    pods, nodes = _gpu_trace(tmp_path)
    config = RunConfig(workload=WorkloadConfig(str(pods), format="openb", machine_table=str(nodes), load=1.05))
    scaled, = episodes(config, resolve_workload(config))
    assert [job.submit_time for job in scaled.jobs] == [0.0, 5.0] and scaled.offered_load == 1.05
    code, out, err = cli(["replay", str(pods), "--format", "openb", "--machine-table", str(nodes), "--load", "1.05",
                          "--json"], capsys)
    row = json.loads(out.splitlines()[0])
    # B fits the two free GPUs beside A at 5 and ends at 9; A ends at 10. Nothing waits.
    assert code == 0 and row["offered_load"] == 1.05 and row["makespan"] == 10.0 and row["avg_job_wait"] == 0.0


# The two-job trace of the test below offers 0.375 of its cpu over a span of 10 s (30 cpu-s over 8 cpu x 10 s).
# The last arrival, 10 x 0.375 / X, stays below 2**53 for X > 3.75 / 2**53 = 4.163e-16; the factor 0.375 / X
# stays at least the smallest normal float64 (2.2250738585072014e-308) for X <= 1.685e307.
@pytest.mark.parametrize("load, words", [
    ("1e-300", "--load 1e-300: episode all: the last job would arrive at t=3.75e+300, past 2**53 "
               "(9007199254740992), where float64 stops holding every whole second"),
    ("1e-300", "ask for a load of at least 4.17e-16 (as it is, the workload offers 0.375 of the cluster's cpu)"),
    ("4.16e-16", "the last job would arrive at t=9.01442e+15, past 2**53 (9007199254740992)"),
    ("1e308", "--load 1e+308: episode all: the factor on submit times would be 3.75e-309, below the smallest "
              "normal float64 (2.23e-308)"),
    ("1e308", "ask for a load of at most 1.68e+307"),
])
def test_a_load_past_what_a_float_holds_is_refused_with_the_loads_that_work(tmp_path, capsys, load, words):
    trace = tmp_path / "jobs.csv"
    trace.write_text("submit_time,duration,instances_num,cpu,memory,disk,task_id,job_id\n0,10,2,1,0.01,0,1,1\n"
                     "10,5,1,2,0,0,1,2\n")
    code, out, err = cli(["replay", str(trace), "--format", "cloudsimpy", "--machines", "2", "--capacity",
                          "cpu=4,memory=1,disk=1", "--load", load, "--json"], capsys)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1 and out == ""


@pytest.mark.parametrize("load", ["4.17e-16", "1e-14", "1.68e307"])
def test_the_loads_a_refusal_names_run_and_no_job_finishes_before_its_duration(tmp_path, capsys, load):
    trace = tmp_path / "jobs.csv"
    trace.write_text("submit_time,duration,instances_num,cpu,memory,disk,task_id,job_id\n0,10,2,1,0.01,0,1,1\n"
                     "10,5,1,2,0,0,1,2\n")
    code, out, err = cli(["replay", str(trace), "--format", "cloudsimpy", "--machines", "2", "--capacity",
                          "cpu=4,memory=1,disk=1", "--load", load, "--json"], capsys)
    row = json.loads(out.splitlines()[0])
    # Nothing waits (2 machines of 4 cpu; A takes 2, B 2): every slowdown is exactly 1, however far B arrives.
    assert code == 0 and row["offered_load"] == float(load) and row["avg_job_wait"] == 0.0
    assert row["avg_slowdown"] == row["avg_job_slowdown"] == row["job_slowdown_p99"] == 1.0
    assert row["makespan"] < 2 ** 53


def test_a_refused_load_names_one_that_every_episode_takes(tmp_path, capsys):
    # Chunks of 2 jobs on 8 cpu. Chunk 0 (0 to 10 s): 30 cpu-s, 0.375 of the cpu, last arrival 3.75 / X, below
    # 2**53 from X = 4.17e-16. Chunk 1 (20 to 60 s): 2 x 1 x 20 + 2 x 10 = 60 cpu-s over 8 x 40, 0.1875, last
    # arrival 7.5 / X, below 2**53 from X = 7.5 / 2**53 = 8.327e-16: 8.33e-16 for both.
    trace = tmp_path / "jobs.csv"
    trace.write_text("submit_time,duration,instances_num,cpu,memory,disk,task_id,job_id\n0,10,2,1,0.01,0,1,1\n"
                     "10,5,1,2,0,0,1,2\n20,20,2,1,0,0,1,3\n60,10,1,2,0,0,1,4\n")
    options = [str(trace), "--format", "cloudsimpy", "--machines", "2", "--capacity", "cpu=4,memory=1,disk=1",
               "--chunk-size", "2", "--json"]
    code, out, err = cli(["replay", *options, "--load", "1e-300"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and out == ""
    assert "--load 1e-300: episode 0: the last job would arrive at t=3.75e+300" in err
    assert "ask for a load of at least 8.33e-16, which each of the 2 episodes takes" in err
    code, out, err = cli(["replay", *options, "--load", "4.17e-16"], capsys)
    assert code == 2 and "--load 4.17e-16: episode 1: the last job would arrive at t=1.79856e+16" in err
    code, out, err = cli(["replay", *options, "--load", "8.33e-16"], capsys)
    rows = [json.loads(line) for line in out.splitlines()[:2]]
    assert code == 0 and [row["offered_load"] for row in rows] == [8.33e-16, 8.33e-16]


def test_compare_takes_one_load_on_a_trace_and_says_so_for_several(tmp_path, capsys):
    trace = tmp_path / "jobs.csv"
    trace.write_text("submit_time,duration,instances_num,cpu,memory,disk,task_id,job_id\n0,10,2,1,0.01,0,1,1\n"
                     "10,5,1,2,0,0,1,2\n")
    options = [str(trace), "--format", "cloudsimpy", "--machines", "2", "--capacity", "cpu=4,memory=1,disk=1",
               "--brokers", "first-fit", "--workers", "1", "--json"]
    code, out, err = cli(["compare", *options, "--loads", "0.5,0.9"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--loads 0.5,0.9: sweeps the load of generators (deeprm, poisson, rlsk); on a trace file give one " \
           "--load X (its submit times scaled to offered load X) and run compare once per load" in err
    code, out, err = cli(["compare", *options, "--load", "0.9"], capsys)
    assert code == 0 and json.loads(out.splitlines()[0])["offered_load"] == 0.9


def test_a_sample_of_a_machine_table_keeps_its_mix_of_shapes_and_their_events():
    from cloudsim import MachineEvent
    from traces.alibaba import MachineTable

    rows = [(4.0, 1.0)] * 6 + [(8.0, 2.0)] * 3 + [(16.0, 4.0)]  # shapes of 6, 3 and 1 machines
    table = MachineTable(ClusterSpec(("cpu", "memory"), tuple(rows), machine_ids=tuple(f"m{k}" for k in range(10))),
                         [MachineEvent(5.0, m, "failed") for m in range(10)])
    sample = table.sample(5, seed=3)
    # Shares of 5: 3.0, 1.5 and 0.5 -> 3, 1 and 0, and the one left goes to the larger remainder, the earlier
    # shape on the tie: 3, 2 and 0.
    shapes = [tuple(row) for row in sample.cluster.capacities]
    assert (shapes.count((4.0, 1.0)), shapes.count((8.0, 2.0)), shapes.count((16.0, 4.0))) == (3, 2, 0)
    ids = list(sample.cluster.machine_ids)
    assert ids == sorted(ids, key=lambda i: int(i[1:]))  # table order kept
    assert [(e.machine, e.time) for e in sample.events] == [(k, 5.0) for k in range(5)]  # each one's event, renumbered
    assert sample.notes["machines_sampled_from"] == 10 and table.sample(5, seed=3) == sample
    with pytest.raises(ValueError, match="11 machines cannot be drawn from a table of 10"):
        table.sample(11)


def test_a_load_on_a_fill_run_is_refused(tmp_path):
    # A fill run offers its pods one an instant: a load would change nothing, so it is refused, not ignored.
    from cloudsim.run.config import ConfigError, FillCompareConfig

    pods, nodes = tmp_path / "pods.csv", tmp_path / "nodes.csv"
    pods.write_text(""), nodes.write_text("")  # (the options are checked before the files are read)
    with pytest.raises(ConfigError, match="--load 0.8: a fill run offers its pods one an instant"):
        FillCompareConfig(workload=WorkloadConfig(str(pods), format="openb", load=0.8, machine_table=str(nodes)),
                          fill=1.3)


@pytest.mark.parametrize("machines, words", [("0", "--machines 0: must be a whole number >= 1"),
                                             ("1314", "--machines 1314: "), ("1314", "has 1313 machines; ask for at "
                                                                                    "most that")])
def test_more_machines_than_the_table_has_or_none_is_one_line(capsys, machines, words):
    from conftest import DATA
    trace, table = DATA / "alibaba" / "v2017" / "batch_task.csv", DATA / "alibaba" / "v2017" / "server_event.csv"
    if not (trace.is_file() and table.is_file()):
        pytest.skip(f"needs the v2017 sample under {DATA}")
    code, _, err = cli(["replay", str(trace), "--format", "alibaba-v2017", "--machine-table", str(table),
                        "--machines", machines, "--jobs", "0:5"], capsys)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_deepjs_trains_on_trace_chunks_at_a_load_on_machines_drawn_from_the_table(tmp_path, capsys):
    # The training's episodes are those a replay of the same options runs: the same 3 machines drawn from the
    # table with the seed, the same jobs at the same submit times scaled to the load.
    from conftest import DATA
    from cloudsim.run.config import ClusterConfig
    from cloudsim.run.train import DeepJSTraining, TrainConfig, TrainWorkloadConfig
    trace, table = DATA / "alibaba" / "v2017" / "batch_task.csv", DATA / "alibaba" / "v2017" / "server_event.csv"
    if not (trace.is_file() and table.is_file()):
        pytest.skip(f"needs the v2017 sample under {DATA}")
    source = dict(format="alibaba-v2017", machine_table=str(table), load=1.1, chunk_size=2, chunks=(0, 2))
    training = TrainConfig(workload=TrainWorkloadConfig(str(trace), **source), cluster=ClusterConfig(machines=3),
                           agent=DeepJSTraining(out=str(tmp_path / "unused")))
    replay = RunConfig(workload=WorkloadConfig(str(trace), **source), cluster=ClusterConfig(machines=3))
    trained_on, replayed = resolve_workload(training), resolve_workload(replay)
    assert trained_on.cluster == replayed.cluster and trained_on.cluster.machines == 3
    chunks = episodes(training, trained_on, 1.0)
    assert [c.jobs for c in chunks] == [c.jobs for c in episodes(replay, replayed, 1.0)]
    assert [c.offered_load for c in chunks] == [1.1, 1.1] and chunks[0].jobs[0].submit_time == 0.0
    code, out, err = cli(["train", "deepjs", str(trace), "--format", "alibaba-v2017", "--machine-table", str(table),
                          "--machines", "3", "--load", "1.1", "--chunk-size", "2", "--chunks", "0:1",
                          "--iterations", "1", "--trajectories", "2", "--out", str(tmp_path / "run")], capsys)
    assert code == 0, err
    assert json.loads(out.splitlines()[0])["chunk"] == 0 and (tmp_path / "run" / "policy.pt").stat().st_size > 0
    assert (tmp_path / "run" / "log.csv").read_text().count("\n") == 2  # header and the one iteration


def test_the_checkpoint_trained_for_v2017_at_load_fits_that_cluster_where_the_first_one_warns():
    # deepjs-v2017.pt was trained on the leaderboard's v2017@1.1 workload: its recorded cluster is the one those
    # options draw from the table, so it runs there without the warning the CloudSimPy-trained checkpoint gives.
    from conftest import DATA
    from agents import make_broker
    from agents.deepjs import SHIPPED_CHECKPOINT
    from cloudsim.run.config import ClusterConfig
    trace, table = DATA / "alibaba" / "v2017" / "batch_task.csv", DATA / "alibaba" / "v2017" / "server_event.csv"
    if not (trace.is_file() and table.is_file()):
        pytest.skip(f"needs the v2017 sample under {DATA}")
    workload = WorkloadConfig(str(trace), format="alibaba-v2017", machine_table=str(table), load=1.1, chunk_size=10,
                              chunks=(400, 401))
    cluster = resolve_workload(RunConfig(workload=workload, cluster=ClusterConfig(machines=3))).cluster
    trained = SHIPPED_CHECKPOINT.with_name("deepjs-v2017.pt")
    assert make_broker("deepjs", checkpoint=str(trained)).check_cluster(cluster) == []
    assert "may not fit" in make_broker("deepjs").check_cluster(cluster)[0]
