"""The leaderboard: its tables hold what replays give, a refusal is a cell, an interrupted board resumes,
and mistakes are one line."""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

from cloudsim.cli import main
from cloudsim.run import BrokerConfig, ClusterConfig, ConfigError, RunConfig, RunnerConfig, WorkloadConfig, replay
from cloudsim.run.config import LEADERBOARD_WORKLOADS, LeaderboardConfig

board = importlib.import_module("cloudsim.run.leaderboard")  # the module: cloudsim.run.leaderboard is also its function


def small(tmp_path, **changes) -> LeaderboardConfig:
    options = dict(out=str(tmp_path / "board"), brokers=("first-fit", "sjf"), workloads=("synthetic",), seeds=2,
                   runner=RunnerConfig(workers=1))
    options.update(changes)
    return LeaderboardConfig(**options)


def test_every_workload_name_has_its_definition():
    assert tuple(board.LEADERBOARD_WORKLOADS) == LEADERBOARD_WORKLOADS


def test_a_table_holds_the_mean_and_spread_of_the_replays_and_the_ranking_follows_slowdown(tmp_path):
    result = board.leaderboard(small(tmp_path))
    table = result.tables["synthetic"]
    for broker in ("first-fit", "sjf"):  # the same runs replayed directly, seed by seed
        rows = [replay(RunConfig(workload=WorkloadConfig(synthetic_jobs=30, seed=seed),
                                 cluster=ClusterConfig(3, {"cpu": 64.0, "memory": 1.0}),
                                 brokers=BrokerConfig((broker,)), runner=RunnerConfig(workers=1))).rows[0]
                for seed in (0, 1)]
        slowdown = [r["avg_job_slowdown"] for r in rows]
        assert table.loc[broker, "runs"] == 2
        assert table.loc[broker, "avg_job_slowdown_mean"] == pytest.approx(np.mean(slowdown))
        assert table.loc[broker, "avg_job_slowdown_sd"] == pytest.approx(np.std(slowdown))
        assert table.loc[broker, "makespan_mean"] == pytest.approx(np.mean([r["makespan"] for r in rows]))
    means = table.avg_job_slowdown_mean
    best = means.idxmin()
    assert result.ranking.loc[best, "synthetic"] == 1
    out = tmp_path / "board"
    for name in ("leaderboard.md", "leaderboard.html", "ranking.png", "leaderboard.json"):
        assert (out / name).stat().st_size > 0
    assert "## synthetic" in (out / "leaderboard.md").read_text()
    assert json.loads((out / "leaderboard.json").read_text())["brokers"] == ["first-fit", "sjf"]


def test_a_broker_that_refuses_a_workload_is_a_cell_not_a_crash(tmp_path):
    # The shipped Deepk8s A2C policy is a flat network trained for 5 machines: the synthetic workload has 3.
    result = board.leaderboard(small(tmp_path, brokers=("first-fit", "deepk8s-a2c"), seeds=1))
    table = result.tables["synthetic"]
    assert table.loc["deepk8s-a2c", "runs"] == 0
    assert "trained for 5 machines; this cluster has 3" in table.loc["deepk8s-a2c", "not_run"]
    assert np.isnan(result.ranking.loc["deepk8s-a2c", "synthetic"])
    assert result.ranking.loc["first-fit", "synthetic"] == 1
    assert "deepk8s-a2c not run: " in (tmp_path / "board" / "leaderboard.md").read_text()


def test_an_interrupted_board_keeps_its_finished_cells_and_resumes(tmp_path, monkeypatch):
    config = small(tmp_path)
    calls = []
    real = board.run_cell

    def interrupted(cell):
        calls.append(cell.key)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(cell)

    monkeypatch.setattr(board, "run_cell", interrupted)
    with pytest.raises(KeyboardInterrupt) as stop:
        board.leaderboard(config)
    assert stop.value.__notes__ == [f"2 of 4 cell(s) are kept in {tmp_path / 'board' / 'cells'}; run the same "
                                    f"command again to run the others and write the report"]
    out = tmp_path / "board"
    assert sorted(p.stem for p in (out / "cells").glob("*.json")) == sorted(calls[:2])
    assert not (out / "leaderboard.md").exists()  # no report from half the cells
    monkeypatch.setattr(board, "run_cell", real)
    seen = []
    result = board.leaderboard(config, seen.append)
    assert (result.ran, result.kept) == (2, 2) and len(seen) == 2
    assert (out / "leaderboard.md").exists()


def test_a_folder_that_is_not_a_leaderboard_is_refused_and_overwrite_starts_afresh(tmp_path):
    out = tmp_path / "board"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    with pytest.raises(ConfigError, match="not a leaderboard's"):
        board.leaderboard(small(tmp_path))
    assert (out / "notes.txt").exists()
    result = board.leaderboard(small(tmp_path, overwrite=True, brokers=("first-fit",), seeds=1))
    assert result.ran == 1 and not (out / "notes.txt").exists()


def test_workloads_without_their_files_are_named_and_skipped(tmp_path):
    empty = tmp_path / "data"
    empty.mkdir()
    result = board.leaderboard(small(tmp_path, workloads=("synthetic", "swf"), data=str(empty), seeds=1))
    assert list(result.tables) == ["synthetic"] and "swf/lublin_256.swf" in result.skipped_workloads["swf"]
    with pytest.raises(ConfigError, match="none of them can run"):
        board.leaderboard(small(tmp_path, workloads=("swf",), data=str(empty)))


@pytest.mark.parametrize("argv, words", [
    (["leaderboard"], ["--out", "give the report folder"]),
    (["leaderboard", "--out", "b", "--seeds", "0"], ["--seeds 0", ">= 1"]),
    (["leaderboard", "--out", "b", "--brokers", "first-fit,nope"], ["--brokers", "unknown broker nope"]),
    (["leaderboard", "--out", "b", "--workloads", "synthetic,synthetic"], ["--workloads", "names one twice"]),
    (["leaderboard", "--out", "b", "--data", "nowhere"], ["--data nowhere", "no such folder"]),
    (["leaderboard", "--out", "afile"], ["--out afile", "is a file"]),
])
def test_leaderboard_mistakes_are_one_line(tmp_path, monkeypatch, capsys, argv, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("x\n")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words) and len(err.strip().splitlines()) == 1, err


def test_a_learned_broker_off_its_training_cluster_runs_and_its_warnings_are_in_the_report(tmp_path):
    # The shipped Deepk8s PPO policy scores pairs with shared weights: trained on 5 machines, it runs on 3.
    result = board.leaderboard(small(tmp_path, brokers=("first-fit", "deepk8s"), seeds=1))
    assert result.tables["synthetic"].loc["deepk8s", "runs"] == 1
    report = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "deepk8s: trained on 5 machines, running on 3" in report


def test_the_gpu_workloads_rank_by_unallocated_gpu_and_fragmentation(tmp_path):
    gpu = tmp_path / "data" / "alibaba" / "gpu-v2023"
    gpu.mkdir(parents=True)
    header = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
    (gpu / "openb_pod_list_default.csv").write_text(header + "".join(
        f"p{k},1000,1024,1,{[100, 200, 300][k % 3]},,LS,Running,{k},{k + 50},{k}\n" for k in range(12)))
    # 40 GPUs: a pod adds at most 0.75 % of them, so every whole percent of arrived workload has a value
    (gpu / "openb_node_list_gpu_node.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\n" + "".join(
        f"n{k},640000,655360,8,T4\n" for k in range(5)))
    result = board.leaderboard(small(tmp_path, brokers=("first-fit", "fgd", "gpu-random"),
                                     workloads=("synthetic", "gpu-fill", "gpu-replay"), data=str(tmp_path / "data")))
    fill, replayed = result.tables["gpu-fill"], result.tables["gpu-replay"]
    assert list(result.tables["synthetic"].index) == ["first-fit"]  # the GPU policies run on GPU workloads only
    assert list(fill.index) == ["first-fit", "fgd", "gpu-random"] and (fill["runs"] == 2).all()  # one per seed
    assert ((fill["unallocated_gpu_pct_at_100_mean"] >= 0) & (fill["unallocated_gpu_pct_at_100_mean"] <= 100)).all()
    assert "gpu_fragmentation_pct_mean_mean" in replayed and (replayed["runs"] == 1).all()
    expected = fill["unallocated_gpu_pct_at_100_mean"].rank(method="min")
    assert result.ranking["gpu-fill"].dropna().to_dict() == expected.to_dict()
    report = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "gpu-fill: unallocated gpu pct at 100" in report and "| unallocated_gpu_pct_at_100 |" in report
