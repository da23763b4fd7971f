"""Pictures of runs: the step function and lanes they are drawn from (worked by hand), and the figures
`cloudsim replay --plots` and `cloudsim plot` write."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cloudsim.cli import main
from cloudsim.run.plots import FIGURES, _binned, lanes, read_run, usage_steps

PNG = b"\x89PNG\r\n\x1a\n"


def test_usage_steps_apply_the_ends_of_an_instant_before_its_starts():
    # [0,10) holds 2, [5,15) holds 1, [10,12) holds 3: 2 from 0, 3 from 5, at 10 the first ends and the
    # third starts (1 + 3 = 4), 1 from 12, nothing from 15.
    start, end = np.array([0.0, 5.0, 10.0]), np.array([10.0, 15.0, 12.0])
    times, level = usage_steps(start, end, np.array([[2.0], [1.0], [3.0]]))
    assert list(times) == [0.0, 5.0, 10.0, 12.0, 15.0]
    assert list(level[:, 0]) == [2.0, 3.0, 4.0, 1.0, 0.0]


def test_groups_that_overlap_on_a_machine_take_separate_lanes():
    # Machine 0: [0,10) lane 0; [5,15) overlaps it: lane 1; [10,12) starts when lane 0 frees: lane 0.
    machine = np.array([0, 0, 0, 1])
    start, end = np.array([0.0, 5.0, 10.0, 3.0]), np.array([10.0, 15.0, 12.0, 4.0])
    assert list(lanes(machine, start, end)) == [0, 1, 0, 0]


def test_binned_usage_is_the_mean_held_in_each_bin():
    # Weight 2 over [1, 7) in bins of width 2: [0,2) holds it half the bin, [2,4) and [4,6) the whole bin,
    # [6,8) half; a second group in row 1 holds 4 over [2, 3), half of bin [2,4).
    edges = np.array([0.0, 2.0, 4.0, 6.0, 8.0])
    held = _binned(np.array([0, 1]), np.array([1.0, 2.0]), np.array([7.0, 3.0]), np.array([2.0, 4.0]), 2, edges)
    assert held.tolist() == [[1.0, 2.0, 2.0, 1.0], [0.0, 2.0, 0.0, 0.0]]


def _assert_pictures(folder):
    for name in FIGURES:
        data = (folder / name).read_bytes()
        assert data.startswith(PNG) and len(data) > 5_000, name


def test_replay_with_plots_draws_every_run_and_the_curve_agrees_with_the_summary(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["replay", "--synthetic-jobs", "6", "--machines", "4", "--brokers", "first-fit,tetris",
                 "--out", str(out), "--plots", "--json"]) == 0
    for broker in ("first-fit", "tetris"):
        folder = out / "episode-all" / broker
        _assert_pictures(folder)
        # The utilisation drawn is the engine's: its time-weighted mean is the summary's utilisation_cpu.
        run = read_run(folder)
        times, level = usage_steps(run.groups.start.to_numpy(), run.groups.end.to_numpy(), run.usage)
        mean = float((level[:, 0] * np.diff(np.r_[times, run.makespan])).sum() / run.makespan
                     / run.capacity[:, 0].sum())
        assert mean == pytest.approx(json.loads((folder / "summary.json").read_text())["utilisation_cpu"],
                                     rel=1e-12)


def test_plot_draws_a_folder_after_the_fact_and_rows_of_machines_above_the_limit(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["replay", "--synthetic-jobs", "4", "--machines", "12", "--mtbf", "50", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["plot", str(out), "--max-machines", "3"]) == 0
    printed = capsys.readouterr().out.split()
    folder = out / "episode-all" / "first-fit"
    assert printed == [str(folder / name) for name in FIGURES]
    _assert_pictures(folder)


@pytest.mark.parametrize("argv, status, words", [
    (["replay", "--synthetic-jobs", "2", "--plots"], 2, ["--plots", "--out DIR"]),
    (["plot", "nowhere"], 2, ["RUNS nowhere", "no such folder"]),
    (["plot", "empty"], 1, ["holds no run", "--out"]),
    (["plot", "empty", "--max-machines", "0"], 2, ["--max-machines 0", ">= 1"]),
])
def test_plot_mistakes_are_one_line(tmp_path, monkeypatch, capsys, argv, status, words):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    assert main(argv) == status
    err = capsys.readouterr().err
    assert all(w in err for w in words) and len(err.strip().splitlines()) == 1, err


def test_a_damaged_table_is_named(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["replay", "--synthetic-jobs", "2", "--out", str(out)]) == 0
    groups = out / "episode-all" / "first-fit" / "groups.parquet"
    groups.write_bytes(groups.read_bytes()[:100])
    capsys.readouterr()
    assert main(["plot", str(out)]) == 1
    err = capsys.readouterr().err
    assert str(groups) in err and "cannot be read as Parquet" in err
    assert not (groups.parent / FIGURES[0]).exists()


@pytest.mark.parametrize("stream", [False, True])
def test_a_run_folder_keeps_its_reservations_and_the_gantt_marks_them(tmp_path, capsys, stream):
    out = tmp_path / "out"
    argv = ["replay", "--synthetic-jobs", "6", "--machines", "2", "--brokers", "easy", "--out", str(out), "--plots"]
    assert main(argv + (["--stream"] if stream else [])) == 0
    folder = out / "episode-all" / "easy"
    reservations = read_run(folder).reservations
    made = int(json.loads((folder / "summary.json").read_text())["decisions"])
    assert reservations is not None and 0 < len(reservations) <= made
    assert (reservations.start > reservations.made).all() and set(reservations.outcome) <= {"started", "cancelled"}
    _assert_pictures(folder)
    # A folder written before reservations were recorded is drawn without them.
    (folder / "reservations.parquet").unlink()
    assert read_run(folder).reservations is None
    assert main(["plot", str(folder)]) == 0
    _assert_pictures(folder)
