"""The leaderboard: its tables hold what replays give, a refusal is a cell, an interrupted board resumes,
and mistakes are one line."""

from __future__ import annotations

import dataclasses
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


def test_a_table_holds_the_mean_and_spread_of_the_replays_and_each_measure_ranks_the_brokers(tmp_path):
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
    for measure, lowest_is_best in (("avg_job_slowdown", True), ("makespan", True), ("utilisation_cpu", False)):
        means = table[f"{measure}_mean"]
        best = means.idxmin() if lowest_is_best else means.idxmax()
        assert result.ranks.loc[best, f"synthetic {measure}"] == 1
        assert result.ranks[f"synthetic {measure}"].max() == (2 if means.nunique() == 2 else 1)
    assert result.ranking.loc["sjf", "mean_rank"] == pytest.approx(result.ranks.loc["sjf"].mean())
    out = tmp_path / "board"
    for name in ("leaderboard.md", "leaderboard.html", "ranking.png", "leaderboard.json", "workload-synthetic.png"):
        assert (out / name).stat().st_size > 0
    assert "## synthetic" in (out / "leaderboard.md").read_text()
    assert json.loads((out / "leaderboard.json").read_text())["brokers"] == ["first-fit", "sjf"]


def test_a_broker_that_refuses_a_workload_is_a_cell_not_a_crash(tmp_path):
    # The shipped Deepk8s A2C policy is a flat network trained for 5 machines: the synthetic workload has 3.
    result = board.leaderboard(small(tmp_path, brokers=("first-fit", "deepk8s-a2c"), seeds=1))
    table = result.tables["synthetic"]
    assert table.loc["deepk8s-a2c", "runs"] == 0
    assert "trained for 5 machines; this cluster has 3" in table.loc["deepk8s-a2c", "not_run"]
    assert result.ranks.loc["deepk8s-a2c"].isna().all()
    assert (result.ranks.loc["first-fit"] == 1).all()
    assert result.against["synthetic"]["deepk8s-a2c"]["makespan"].episodes == 0
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
    header = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
              "scheduled_time\n")
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
    assert result.ranks["gpu-fill unallocated_gpu_pct_at_100"].dropna().to_dict() == expected.to_dict()
    assert [c for c in result.ranks if c.startswith("gpu")] == ["gpu-fill unallocated_gpu_pct_at_100",
                                                                "gpu-replay gpu_fragmentation_pct_mean"]
    gpu_mean = result.ranks.loc["fgd", ["gpu-fill unallocated_gpu_pct_at_100", "gpu-replay gpu_fragmentation_pct_mean"]]
    assert result.ranking.loc["fgd", "gpu"] == pytest.approx(gpu_mean.mean())
    report = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "| gpu |" in report and "| unallocated_gpu_pct_at_100 |" in report


def test_each_broker_is_compared_with_first_fit_episode_by_episode(tmp_path):
    result = board.leaderboard(small(tmp_path, seeds=3))
    rows = {broker: [replay(RunConfig(workload=WorkloadConfig(synthetic_jobs=30, seed=seed),
                                      cluster=ClusterConfig(3, {"cpu": 64.0, "memory": 1.0}),
                                      brokers=BrokerConfig((broker,)), runner=RunnerConfig(workers=1))).rows[0]
                     for seed in range(3)] for broker in ("first-fit", "sjf")}
    mine, base = ([r["avg_job_slowdown"] for r in rows[b]] for b in ("sjf", "first-fit"))
    against = result.against["synthetic"]["sjf"]["avg_job_slowdown"]
    assert against.wins == sum(m < b for m, b in zip(mine, base)) and against.episodes == 3
    assert against.difference == pytest.approx(np.mean(np.subtract(mine, base)))
    half = 4.302653 * np.std(np.subtract(mine, base), ddof=1) / np.sqrt(3)  # t(0.975, 2)
    assert against.high - against.low == pytest.approx(2 * half, rel=1e-5)
    assert "first-fit" not in result.against["synthetic"]
    report = (tmp_path / "board" / "leaderboard.md").read_text()
    assert f"{against.wins}/{against.ties}/{against.losses} · {against.difference_pct:+.1f} %" in report


def test_without_first_fit_the_report_says_how_to_get_the_comparison(tmp_path):
    result = board.leaderboard(small(tmp_path, brokers=("sjf", "tetris"), seeds=1))
    assert result.against == {"synthetic": {}}
    assert "add it to --brokers" in (tmp_path / "board" / "leaderboard.md").read_text()


def test_the_report_names_no_path_of_the_machine_it_ran_on(tmp_path):
    from cloudsim.run.output import INSTALLATION
    result = board.leaderboard(small(tmp_path, brokers=("first-fit", "deepk8s-a2c"), seeds=1))
    out = result.out
    texts = [(out / name).read_text() for name in ("leaderboard.md", "leaderboard.html", "leaderboard.json")]
    texts += [p.read_text() for p in (out / "cells").glob("*.json")]
    assert "agents/checkpoints/deepk8s-a2c.pt is a flat network" in texts[0]
    for text in texts:
        assert str(INSTALLATION) not in text and str(tmp_path) not in text


@pytest.mark.parametrize("name, load, machines", [("v2018@1.1", 1.1, 2), ("v2017@0.8", 0.8, 3)])
def test_the_real_trace_workloads_run_at_their_load_on_machines_drawn_from_the_trace(tmp_path, name, load, machines):
    from traces.data import data_folder
    if any(not (data_folder() / f).is_file() for f in board.LEADERBOARD_WORKLOADS[name].files):
        pytest.skip(f"needs the real samples under {data_folder()}")
    config = board.LEADERBOARD_WORKLOADS[name].make([str(data_folder() / f) for f in
                                                     board.LEADERBOARD_WORKLOADS[name].files], 0)
    assert (config.workload.load, config.cluster.machines, config.workload.chunks) == (load, machines, (0, 6))
    config = dataclasses.replace(config, workload=dataclasses.replace(config.workload, chunks=(0, 1)),
                                 brokers=BrokerConfig(("first-fit",)), runner=RunnerConfig(workers=1))
    row = replay(config).rows[0]
    assert row["offered_load"] == pytest.approx(load, rel=1e-9)
    assert row["avg_job_slowdown"] > 1.2  # jobs queue
    result = board.leaderboard(small(tmp_path, workloads=(name,)))
    table = result.tables[name]
    assert (table.runs == 6).all() and table.offered_load_mean.to_numpy() == pytest.approx([load, load])
    assert f"{name} offered_load" not in result.ranks  # shown beside the utilisation, not ranked
    assert "| offered_load |" in (result.out / "leaderboard.md").read_text()
    # Energy and carbon are shown, not ranked: every machine draws at least the default model's idle 58.4 W.
    machines_idle_kwh = machines * 58.4 * row["makespan"] / 3.6e6
    assert row["energy_kwh"] >= machines_idle_kwh and row["carbon_kg"] > 0
    assert f"{name} energy_kwh" not in result.ranks and f"{name} carbon_kg" not in result.ranks
    assert table.energy_kwh_mean.notna().all() and table.carbon_kg_mean.notna().all()
