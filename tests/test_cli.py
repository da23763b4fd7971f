import json

import pytest

from cloudsim.cli import main

HEADER = ",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk\n"
ROWS = "0,10,3.0,1.0,0.1,7,1,2,0\n1,12,2.0,1.0,0.1,8,1,1,0\n2,15,4.0,2.0,0.1,9,1,1,0\n"
ARGS = ["--format", "cloudsimpy", "--machines", "1", "--capacity", "cpu=2,memory=1,disk=1", "--tick", "1"]


@pytest.fixture
def trace(tmp_path):
    path = tmp_path / "jobs.csv"
    path.write_text(HEADER + ROWS)
    return str(path)


def json_lines(capsys):
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_replay_chunks_as_json(trace, capsys):
    # Chunk 0 = jobs 7 (t=0) and 8 (t=2). Task 7/1 starts at the wake at 1 (2 x 1 cpu, 3 s)
    # and ends at 4; job 8 waits for cpu and runs 4-6; the wake at 6 ends it: makespan 6,
    # completions 3 and 2. Chunk 1 = job 9 alone: runs 1-5, makespan 5.
    assert main(["replay", trace, *ARGS, "--chunk-size", "2", "--chunks", "0:2", "--json"]) == 0
    lines = json_lines(capsys)
    chunks, summary = lines[:-1], lines[-1]
    assert [(c["chunk"], c["broker"], c["makespan"]) for c in chunks] == [(0, "first-fit", 6), (1, "first-fit", 5)]
    assert chunks[0]["avg_completion"] == 2.5 and chunks[0]["avg_slowdown"] == 1.0
    assert (chunks[0]["tasks"], chunks[0]["instances"]) == (2, 3)
    assert all(c["wall_s"] >= 0 for c in chunks)
    assert summary["summary"] is True and summary["instances"] == 4 and summary["jobs"] == 3


def test_replay_job_range_as_one_episode(trace, capsys):
    # Jobs at 0, 2, 5: 7/1 runs 1-4, 8/1 runs 4-6, 9/1 (2 cpu) waits for 8/1 and runs 6-10.
    main(["replay", trace, *ARGS, "--jobs", "0:3", "--broker", "first-fit,tetris", "--json"])
    lines = json_lines(capsys)
    assert [(line["jobs_range"], line["broker"], line["makespan"]) for line in lines[:-1]] == [
        ("0:3", "first-fit", 10), ("0:3", "tetris", 10)]


def test_replay_table_and_parquet_output(trace, tmp_path, capsys):
    out = tmp_path / "out"
    main(["replay", trace, *ARGS, "--chunk-size", "2", "--out", str(out)])
    text = capsys.readouterr().out
    assert "makespan" in text and "first-fit" in text
    assert (out / "episode-0" / "first-fit" / "tasks.parquet").is_file()
    assert (out / "episodes.csv").is_file()


def test_a_streamed_replay_writes_the_tables_a_replay_in_memory_writes(trace, tmp_path, capsys):
    import pandas as pd

    for name, extra in (("memory", []), ("streamed", ["--stream"])):
        assert main(["replay", trace, *ARGS, "--chunk-size", "2", "--brokers", "first-fit,tetris",
                     "--out", str(tmp_path / name), *extra]) == 0
    for episode in ("episode-0", "episode-1"):
        for broker in ("first-fit", "tetris"):
            for table in ("tasks", "jobs", "groups", "capacity"):
                path = f"{episode}/{broker}/{table}.parquet"
                pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "memory" / path),
                                              pd.read_parquet(tmp_path / "streamed" / path), check_exact=True)
    assert not (tmp_path / "streamed" / "episode-0" / "first-fit" / "utilisation.parquet").exists()
    streamed = pd.read_csv(tmp_path / "streamed" / "episodes.csv")
    assert list(streamed.makespan) == [6, 6, 5, 5]  # as worked out in test_replay_chunks_as_json


def test_replay_runs_the_built_in_workload(capsys):
    main(["replay", "--synthetic-jobs", "4", "--broker", "first-fit,random", "--json"])
    lines = json_lines(capsys)
    assert [line["broker"] for line in lines[:-1]] == ["first-fit", "random"]
    assert lines[-1]["jobs"] == 4


def test_workers_give_the_same_results(trace, capsys):
    main(["replay", trace, *ARGS, "--chunk-size", "1", "--json"])
    serial = [(x["chunk"], x["makespan"]) for x in json_lines(capsys)[:-1]]
    main(["replay", trace, *ARGS, "--chunk-size", "1", "--workers", "2", "--json"])
    assert [(x["chunk"], x["makespan"]) for x in json_lines(capsys)[:-1]] == serial


def test_compare_runs_every_broker_on_every_load_and_seed(capsys, tmp_path):
    argv = ["compare", "deeprm", "--brokers", "sjf,fcfs,random", "--loads", "0.3,0.9", "--seeds", "2", "--json"]
    main([*argv, "--workers", "1"])
    lines = json_lines(capsys)
    runs, summary = lines[:-1], lines[-1]
    assert [(r["load"], r["seed"], r["broker"]) for r in runs] == [
        (load, seed, broker) for load in (0.3, 0.9) for seed in (0, 1) for broker in ("sjf", "fcfs", "random")]
    for run in runs:
        assert {"makespan", "avg_completion", "avg_slowdown", "avg_job_slowdown", "job_slowdown_p95"} <= set(run)
        assert run["instances_finished"] == run["instances"] == 50  # DeepRM's 50 jobs of one instance
    assert summary["summary"] is True and summary["runs"] == 12
    # The same seeds give the same numbers, in parallel processes too.
    main([*argv, "--workers", "2"])
    again = json_lines(capsys)[:-1]
    assert ([(r["makespan"], r["avg_job_slowdown"]) for r in again]
            == [(r["makespan"], r["avg_job_slowdown"]) for r in runs])


def test_compare_writes_the_report(capsys, tmp_path, trace):
    out = tmp_path / "report"
    main(["compare", "deeprm", "--brokers", "sjf,packer", "--loads", "0.5:0.9:0.2", "--seeds", "2", "--workers", "1",
          "--out", str(out)])
    text = capsys.readouterr().out
    assert "sjf" in text and "packer" in text and "avg_job_slowdown" in text
    for name in ("runs.parquet", "summary.md", "brokers.png", "slowdown_vs_load.png", "utilisation.png"):
        assert (out / name).is_file(), name
    import pandas as pd

    runs = pd.read_parquet(out / "runs.parquet")
    assert sorted(runs["load"].unique()) == [0.5, 0.7, 0.9] and len(runs) == 12
    # A trace runs chunk by chunk; faults show up as failures and re-runs.
    main(["compare", trace, *ARGS, "--chunk-size", "1", "--brokers", "first-fit,sjf", "--workers", "1",
          "--mtbf", "3", "--mttr", "1", "--on-failure", "fail", "--json"])
    lines = json_lines(capsys)
    assert [(r["chunk"], r["broker"]) for r in lines[:-1]] == [(c, b) for c in (0, 1, 2) for b in ("first-fit", "sjf")]
    assert all(r["instances_finished"] + r["instances_failed"] == r["instances"] for r in lines[:-1])




def test_compare_runs_the_brokers_it_is_given_even_its_default_list():
    """Without --brokers each experiment runs its own list; a list given is run as given, never swapped."""
    from pathlib import Path

    from cloudsim.run.config import (HEURISTICS, BrokerConfig, CompareConfig, ConfigError, DeepRMCompareConfig,
                                     FederationCompareConfig, WorkloadConfig)

    deeprm = WorkloadConfig("deeprm")
    assert DeepRMCompareConfig(workload=deeprm).chosen_brokers.brokers == (
        "sjf", "packer", "tetris-star", "random", "deeprm")
    assert FederationCompareConfig(workload=WorkloadConfig("rlsk")).chosen_brokers.brokers == (
        "first-fit", "random", "round-robin", "least-load", "rlsk")
    assert CompareConfig().chosen_brokers.brokers == HEURISTICS and CompareConfig().brokers.brokers is None
    # the heuristics' list typed out is run as typed: in DeepRM's environment, refused (it was DeepRM's list)
    with pytest.raises(ConfigError, match="cannot act in DeepRM's environment"):
        DeepRMCompareConfig(workload=deeprm, brokers=BrokerConfig(HEURISTICS))
    # a bare --checkpoint PATH belongs to the one learned broker of the default list (it was refused)
    shipped = str(Path(__file__).resolve().parents[1] / "agents" / "checkpoints" / "deeprm.pt")
    config = DeepRMCompareConfig(workload=deeprm, brokers=BrokerConfig(checkpoint=shipped))
    assert config.chosen_brokers.checkpoint == (("deeprm", shipped),)
    with pytest.raises(ConfigError, match="--brokers names none"):
        CompareConfig(workload=WorkloadConfig("alibaba-like"), brokers=BrokerConfig(checkpoint=shipped))


@pytest.mark.parametrize("argv, config, message", [
    (["deeprm", "--env", "deeprm"], "DeepRMCompareConfig", None),
    (["rlsk"], "FederationCompareConfig", None),
    (["rlsk", "--env", "cloudsim"], "CompareConfig", None),
    (["deeprm"], "CompareConfig", None),
    (["deeprm", "--sizes", "code"], None, "--sizes code: applies to DeepRM's environment; add --env deeprm"),
    (["rlsk", "--env", "deeprm"], None, "--env deeprm: runs the deeprm workload's jobsets"),
    (["deeprm", "--env", "deeprm", "--nodes", "2"], None, "--nodes 2: applies to RLSK's federation; add --env rlsk"),
    (["deeprm", "--env", "rlsk"], None, "--env rlsk: runs RLSK's federation on the rlsk workload"),
    (["deeprm", "--fill", "1.3"], None, "--fill 1.3: fills a GPU cluster with the pods of an openb pod list"),
    (["deeprm", "--env", "deeprm", "--fill", "1.3"], None, "--fill 1.3: runs on the simulator: leave --env out"),
])
def test_compare_picks_each_experiments_config_and_refuses_anothers_options(argv, config, message, monkeypatch,
                                                                             capsys):
    """`cloudsim compare` makes the config of the experiment asked for (by --env, --fill or the rlsk workload);
    an option of another experiment ends in one line that names it and the fix."""
    import cloudsim.cli.compare as command

    class Made(BaseException):  # stops the command once its config is made: the run is not the point here
        pass

    made = []

    def record(config, *args):
        made.append(config)
        raise Made

    monkeypatch.setattr(command, "compare", record)
    if message is None:
        with pytest.raises(Made):
            main(["compare", *argv, "--seeds", "1"])
        assert type(made[0]).__name__ == config
    else:
        assert main(["compare", *argv, "--seeds", "1"]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err and not made
