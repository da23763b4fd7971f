"""A user's broker is foreign code: whatever it does (raise, exit, kill its worker, refuse, sit inside --out,
carry a name that is also a path), the run ends in one line naming it, never a hang, a silent exit 0 or a
deleted file. Each rule is tried on every command it applies to, with the brokers of `hostile_brokers`."""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hostile_brokers
from agents import plugins
from cloudsim.engine.runner import Runner, WorkerDied, WorkExited
from conftest import cli, work_in

HOSTILE = Path(hostile_brokers.__file__).resolve()
JOBS = ",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk\n" \
       "0,0,3.0,1.0,0.1,7,1,2,0\n1,1,2.0,1.0,0.1,8,1,1,0\n2,2,4.0,2.0,0.1,9,1,1,0\n"
CLUSTER = ["--machines", "1", "--capacity", "cpu=2,memory=1,disk=1"]
COMMANDS = {  # every command that runs brokers on a workload, by the options that make it small
    "replay": ["replay", "inputs/jobs.csv", *CLUSTER],
    "compare": ["compare", "inputs/jobs.csv", *CLUSTER],
    "bench": ["bench", "inputs/jobs.csv", *CLUSTER, "--chunk-size", "1", "--chunks", "0:2"],
    "leaderboard": ["leaderboard", "--workloads", "synthetic", "--seeds", "1"],
}


def line_of(function, text: str) -> int:
    """The file line of ``text`` inside ``function`` (worked out from the source, not from cloudsim)."""
    lines, first = inspect.getsourcelines(function)
    return first + next(k for k, line in enumerate(lines) if text in line)


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A fresh current folder with a small trace under inputs/ and the hostile brokers in brokers/."""
    work_in(tmp_path, monkeypatch, JOBS)
    Path("brokers").mkdir()
    shutil.copy(HOSTILE, "brokers/hostile.py")
    return tmp_path


def one_line(err: str) -> str:
    lines = [line for line in err.strip().splitlines() if line.startswith("cloudsim: ") and "warning" not in line]
    assert lines and "Traceback" not in err, err
    return lines[0]


# ---------------------------------------------------------------- 1. inputs are never deleted
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_output_folder_that_holds_a_broker_file_is_refused_and_the_file_stays(here, capsys, command):
    Path("proj").mkdir()
    shutil.copy(HOSTILE, "proj/mybroker.py")
    code, _, err = cli([*COMMANDS[command], "--brokers", "first-fit,proj/mybroker.py:FirstFit", "--out", "proj",
                        "--overwrite"], capsys)
    assert code == 2 and "--out proj: holds --brokers proj/mybroker.py, which this command reads" in err, err
    assert Path("proj/mybroker.py").read_bytes() == HOSTILE.read_bytes()


# ---------------------------------------------------------------- 2. output names come from one function
def test_output_names_hold_no_path_are_unique_and_stable(here):
    names = {ref: plugins.output_name(ref) for ref in (
        "brokers/hostile.py:FirstFit", "./brokers/hostile.py:FirstFit", f"{HOSTILE}:FirstFit", "a:b/x.py:C",
        "a_b/x.py:C", "../../x.py:C", "pkg.mod:C", "pkg:mod.C", "first-fit")}
    for name in names.values():
        assert "/" not in name and ":" not in name and ".." not in name and not name.startswith(".")
    # One file named two ways is one broker; the copy elsewhere is another, and so are look-alike paths.
    assert names["brokers/hostile.py:FirstFit"] == names["./brokers/hostile.py:FirstFit"]
    assert len(set(names.values())) == len(names) - 1
    tag = hashlib.sha256(f"{here / 'brokers' / 'hostile.py'}:FirstFit".encode()).hexdigest()[:8]
    assert names["brokers/hostile.py:FirstFit"] == f"hostile_FirstFit-{tag}"
    assert names["first-fit"] == "first-fit"


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_file_broker_writes_inside_out_under_its_output_name_and_keeps_its_reference(here, capsys, workers):
    reference = f"{HOSTILE}:FirstFit"
    for overwrite in ([], ["--overwrite"]):  # a second run over the first
        code, _, err = cli([*COMMANDS["replay"], "--brokers", f"{reference},first-fit", "--out", "o", "--workers",
                            workers, *overwrite], capsys)
        assert code == 0, err
    assert sorted(p.name for p in Path("o/episode-all").iterdir()) == sorted(["first-fit",
                                                                              plugins.output_name(reference)])
    assert sorted(p.name for p in HOSTILE.parent.iterdir() if ":" in p.name) == []  # nothing beside the file
    assert json.loads(Path("o/brokers.json").read_text())[reference]["kind"] == "file"
    assert reference in Path("o/episodes.csv").read_text()


def test_bench_of_several_chunks_with_a_file_broker_writes_every_chunk(here, capsys):
    code, _, err = cli([*COMMANDS["bench"], "--brokers", "first-fit,brokers/hostile.py:FirstFit", "--out", "b"],
                       capsys)
    assert code == 0, err
    assert not Path("b.incomplete").exists()
    for chunk in ("episode-0", "episode-1"):
        assert (Path("b") / chunk / plugins.output_name("brokers/hostile.py:FirstFit")).is_dir()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_same_file_named_two_ways_is_refused(here, capsys, command):
    code, _, err = cli([*COMMANDS[command], "--brokers", "brokers/hostile.py:FirstFit,./brokers/hostile.py:FirstFit",
                        "--out", "o"], capsys)
    assert code == 2 and "brokers/hostile.py:FirstFit and ./brokers/hostile.py:FirstFit name the same broker" in err


def test_leaderboard_cells_of_look_alike_references_are_two_cells(here, capsys):
    for folder in ("a:b", "a_b"):
        Path(folder).mkdir()
        shutil.copy(HOSTILE, f"{folder}/good.py")
    brokers = "a:b/good.py:FirstFit,a_b/good.py:FirstFit"
    code, _, err = cli([*COMMANDS["leaderboard"], "--brokers", brokers, "--out", "board"], capsys)
    assert code == 0, err
    assert len(list(Path("board/cells").glob("*.json"))) == 2
    report = Path("board/leaderboard.md").read_text()
    assert "a:b/good.py:FirstFit" in report and "a_b/good.py:FirstFit" in report


def test_the_leaderboard_report_names_no_path_of_this_machine_for_a_file_broker(here, capsys):
    brokers = f"first-fit,{HOSTILE}:FirstFit,{here / 'brokers' / 'hostile.py'}:FirstFit"
    code, _, err = cli([*COMMANDS["leaderboard"], "--brokers", brokers, "--out", "board"], capsys)
    assert code == 0, err
    for name in ("leaderboard.md", "leaderboard.html", "leaderboard.json"):
        text = (here / "board" / name).read_text()
        assert str(HOSTILE.parent) not in text and str(here) not in text, name
        assert "hostile_brokers.py:FirstFit" in text and "brokers/hostile.py:FirstFit" in text, name


# ---------------------------------------------------------------- 3. every exit of foreign code is named
@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_broker_that_exits_in_decide_is_a_failure_naming_it_and_its_line(here, capsys, command, workers):
    broker = "brokers/hostile.py:ExitsInDecide"
    code, _, err = cli([*COMMANDS[command], "--brokers", f"first-fit,{broker}", "--workers", workers, "--out", "o"],
                       capsys)
    line = line_of(hostile_brokers.ExitsInDecide.misbehave, "sys.exit(0)")
    assert code == 1, err
    said = err if command == "leaderboard" else one_line(err)
    assert f"broker {broker!r} exited (sys.exit(0)) instead of returning in its decide(view) call 1 at t=0" in said
    assert f"(brokers/hostile.py line {line})" in said
    assert not Path("o").exists() or command == "leaderboard"


def test_a_module_that_exits_at_import_is_one_line_naming_it(here, capsys):
    Path("brokers/exits.py").write_text(hostile_brokers.EXITS_AT_IMPORT)
    for command in ("replay", "compare", "leaderboard"):
        code, _, err = cli([*COMMANDS[command], "--brokers", "brokers/exits.py:X", "--out", "o"], capsys)
        assert code == 2 and "running brokers/exits.py exited (sys.exit(0)) instead of returning " \
                             "(brokers/exits.py line 2)" in one_line(err), err
    code, out, _ = cli(["check-broker", "brokers/exits.py:X"], capsys)
    assert code != 0


@pytest.mark.parametrize("broker, words", [
    ("FailsInCheckCluster", "raised TypeError: object of type 'ClusterSpec' has no len() in its "
                            "check_cluster(cluster) (brokers/hostile.py line {line})"),
    ("ExitsInCheckCluster", "exited (sys.exit(3)) instead of returning in its check_cluster(cluster) "
                            "(brokers/hostile.py line {line})"),
    ("FailsToStart", "making it failed: TypeError: a constructor that fails (brokers/hostile.py line {line})"),
    ("ExitsInConstructor", "making it exited (sys.exit(0)) instead of returning (brokers/hostile.py line {line})"),
    ("RefusesEveryCluster", "refuses this cluster: I refuse every cluster"),
])
def test_a_broker_failing_outside_decide_is_named_not_an_internal_error(here, capsys, broker, words):
    method, text = {"FailsInCheckCluster": ("check_cluster", "len(cluster)"),
                    "ExitsInCheckCluster": ("check_cluster", "sys.exit"), "FailsToStart": ("__init__", "raise"),
                    "ExitsInConstructor": ("__init__", "sys.exit"),
                    "RefusesEveryCluster": ("check_cluster", "raise")}[broker]
    line = line_of(getattr(getattr(hostile_brokers, broker), method), text)
    code, _, err = cli([*COMMANDS["replay"], "--brokers", f"brokers/hostile.py:{broker}"], capsys)
    assert code == 1 and words.format(line=line) in one_line(err) and "internal error" not in err, err
    assert f"brokers/hostile.py:{broker}" in one_line(err)


def test_an_installed_broker_that_exits_at_import_is_listed_as_not_loading(here, capsys, monkeypatch):
    Path("exits_pkg.py").write_text(hostile_brokers.EXITS_AT_IMPORT)
    monkeypatch.syspath_prepend(str(here))
    point = importlib.metadata.EntryPoint("exiter", "exits_pkg:X", plugins.ENTRY_POINT_GROUP)
    monkeypatch.setattr(plugins, "installed", lambda: {"exiter": point})
    code, out, _ = cli(["brokers"], capsys)
    assert code == 0 and "exiter" in out and "does not load" in out and "exited (sys.exit(0))" in out
    code, _, err = cli([*COMMANDS["replay"], "--brokers", "exiter"], capsys)
    assert code == 2 and "importing it exited (sys.exit(0))" in one_line(err)


# ---------------------------------------------------------------- 4. a dead worker is a failure, never a hang
def exits_on_two(item: int) -> int:
    if item == 2:
        sys.exit(0)
    return item


def dies_on_two(item: int) -> int:
    if item == 2:
        os._exit(7)
    return item


@pytest.mark.parametrize("workers", [1, 2])
def test_an_exit_in_the_work_is_an_error_naming_the_item(workers):
    with Runner(workers=workers) as runner, pytest.raises(WorkExited,
                                                          match=r"item 2: it exited \(SystemExit: code 0\)"):
        list(runner.map(exits_on_two, range(4), name=lambda item: f"item {item}"))


def test_a_worker_that_dies_ends_the_map_naming_what_it_ran():
    with Runner(workers=2) as runner:
        with pytest.raises(WorkerDied, match="a worker process died while running item 2: it ended without an answer"):
            list(runner.map(dies_on_two, range(6), name=lambda item: f"item {item}"))
        assert list(runner.map(abs, [-1, -2])) == [1, 2]  # the runner goes on with a new pool


@pytest.mark.parametrize("command", ["replay", "compare", "leaderboard"])
@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_broker_that_kills_its_worker_fails_the_command_naming_it(here, capsys, command, workers):
    # With one worker too: a user's broker never runs in the command's own process, which it would end.
    code, _, err = cli([*COMMANDS[command], "--brokers", "first-fit,brokers/hostile.py:KillsItsProcess",
                        "--workers", workers, "--out", "o", *(["--seeds", "2"] if command == "compare" else [])],
                       capsys)
    assert code == 1 and "a worker process died while running" in one_line(err), err
    assert "KillsItsProcess" in one_line(err)


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_the_run_and_every_worker_within_seconds(here, sig, status):
    command = [sys.executable, "-m", "cloudsim", *COMMANDS["compare"], "--brokers",
               "first-fit,brokers/hostile.py:Sleeps", "--seeds", "2", "--workers", "2", "--out", "o"]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while len(children(process.pid)) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)  # waiting for the workers to start, not for a hang
    workers = children(process.pid)
    assert len(workers) >= 2, process.communicate()[1]
    sent = time.monotonic()
    process.send_signal(sig)
    _, err = process.communicate(timeout=30)
    assert process.returncode == status and time.monotonic() - sent < 5, err
    assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
    assert not list(here.glob(".o.partial-*")) and not Path("o").exists()


# ---------------------------------------------------------------- 5. refused is not failed (the leaderboard)
def board(capsys, brokers: str) -> tuple[int, str, str]:
    return cli([*COMMANDS["leaderboard"], "--brokers", brokers, "--out", "board"], capsys)


def test_a_broker_that_raises_or_cannot_be_made_fails_its_cell_and_runs_again_once_fixed(here, capsys):
    code, out, err = board(capsys, "first-fit,brokers/hostile.py:Raises")
    assert code == 1 and "1 cell(s) failed and are not kept" in err and "boom after 0" in err
    assert len(list(Path("board/cells").glob("*.json"))) == 1  # first-fit's only
    Path("brokers/hostile.py").write_text(HOSTILE.read_text().replace('raise ValueError(f"boom after {self.after}")',
                                                                      "return super().misbehave(view)"))
    code, out, err = board(capsys, "first-fit,brokers/hostile.py:Raises")
    assert code == 0 and "1 cell(s) run now, 1 kept from before" in out, err
    code, _, err = board(capsys, "first-fit,brokers/hostile.py:FailsToStart")
    assert code == 1 and "a constructor that fails" in err


def test_a_refusing_broker_is_not_run_and_kept(here, capsys):
    code, out, err = board(capsys, "first-fit,brokers/hostile.py:RefusesEveryCluster")
    assert code == 0, err
    assert "not run: I refuse every cluster" in out
    code, out, _ = board(capsys, "first-fit,brokers/hostile.py:RefusesEveryCluster")
    assert code == 0 and "0 cell(s) run now, 2 kept from before" in out


def test_a_kept_cell_of_a_file_broker_runs_again_when_its_file_changed(here, capsys):
    assert board(capsys, "first-fit,brokers/hostile.py:FirstFit")[0] == 0
    with open("brokers/hostile.py", "a") as source:
        source.write("\n# changed\n")
    code, out, err = board(capsys, "first-fit,brokers/hostile.py:FirstFit")
    assert code == 0 and "1 cell(s) run now, 1 kept from before" in out
    assert "the code of broker brokers/hostile.py:FirstFit changed since it ran" in err


@pytest.mark.parametrize("damage, words", [
    (lambda cell: {**cell, "rows": "garbage"}, "its rows are not a list"),
    (lambda cell: {**cell, "rows": [{**cell["rows"][0], "makespan": "abc"}]}, "makespan = 'abc', not a number"),
    (lambda cell: {**cell, "rows": [{"makespan": 1}]}, "run 0 lacks avg_job_completion"),
    (lambda cell: {**cell, "status": "failed"}, "its status is 'failed'"),
    (lambda cell: {**cell, "broker": "tetris"}, "not this cell's"),
    (lambda cell: [cell], "it is not a JSON object"),
])
def test_a_damaged_cell_is_named_and_run_again_with_the_same_result(here, capsys, damage, words):
    assert board(capsys, "first-fit")[0] == 0
    (path,) = Path("board/cells").glob("*.json")
    fresh = json.loads(path.read_text())
    path.write_text(json.dumps(damage(fresh)))
    code, out, err = board(capsys, "first-fit")
    assert code == 0 and f"leaderboard cell {path} is damaged (" in err and words in err, err
    again = json.loads(path.read_text())
    timeless = lambda rows: [{k: v for k, v in row.items() if not k.endswith("wall_s")} for row in rows]  # noqa: E731
    assert timeless(again["rows"]) == timeless(fresh["rows"])


# ---------------------------------------------------------------- 6. check-broker checks what it claims
@pytest.mark.parametrize("broker, rule", [
    ("RefusesEveryCluster", "accepts a workload"),
    ("ExitsInDecide", "raises"),
    ("FailsInCheckCluster", "raises"),
    ("ExitsInCheckCluster", "raises"),
    ("WritesIntoTheView", "raises"),
    ("KillsItsProcess", "raises"),  # each case runs in a worker process: the check goes on to the next
    ("Garbage", "answers"),
])
def test_check_broker_names_the_rule_each_hostile_broker_breaks(here, capsys, broker, rule):
    code, out, err = cli(["check-broker", f"brokers/hostile.py:{broker}", "--timeout", "5"], capsys)
    assert code == 1 and f"breaks '{rule}'" in out and "every rule holds" not in out, (out, err)


def test_check_broker_refuses_a_broker_that_exits_when_made_in_one_line(here, capsys):
    code, _, err = cli(["check-broker", "brokers/hostile.py:ExitsInConstructor"], capsys)
    assert code == 1 and "making it exited (sys.exit(0))" in one_line(err)


# ---------------------------------------------------------------- 7. provenance is true
def test_an_installed_package_declaring_a_built_in_name_is_not_taken_for_its_source(here, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(here / "brokers"))
    points = {name: importlib.metadata.EntryPoint(name, value, plugins.ENTRY_POINT_GROUP)
              for name, value in (("first-fit", "hostile:FirstFit"), ("lookahead", "hostile:FirstFit"),
                                  ("odd:name", "hostile:FirstFit"))}
    monkeypatch.setattr(plugins, "installed", lambda: points)
    code, _, err = cli([*COMMANDS["replay"], "--brokers", "first-fit", "--out", "o"], capsys)
    assert code == 0, err
    assert json.loads(Path("o/brokers.json").read_text())["first-fit"]["kind"] == "built-in"
    code, out, err = cli(["brokers", "--json"], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines()]
    for row in rows:
        if row["registry"] != "core (installed)":
            assert row["source"].startswith("cloudsim "), row
    installed = {row["name"]: row for row in rows if row["registry"] == "core (installed)"}
    assert installed["odd:name"]["summary"] == ("(not loaded, its name is refused: it holds ':', which reads as a "
                                                "reference (module:Class); run it as --brokers hostile:FirstFit)")
    assert "first-fit has this name too; run it as --brokers hostile:FirstFit" in installed["first-fit"]["summary"]


# ---------------------------------------------------------------- 8. options given to a broker
def test_a_seed_among_the_options_is_refused_naming_the_runs_seed(here, capsys):
    for argv in ([*COMMANDS["replay"], "--brokers", "random", "--broker-options", "random.seed=5"],
                 [*COMMANDS["replay"], "--brokers", "brokers/hostile.py:Labelled", "--broker-options",
                  "brokers/hostile.py:Labelled.seed=5"],
                 ["check-broker", "brokers/hostile.py:Labelled", "--broker-options", "seed=3"]):
        code, _, err = cli(argv, capsys)
        assert code == 2 and "its seed is the run's" in one_line(err), err


def test_a_quoted_option_value_may_hold_commas(here, capsys):
    from cloudsim.run.config.fields import broker_option_list, keyword_list

    assert broker_option_list("x.py:L.label='a,b',y.k=2") == (("x.py:L", "label", "a,b"), ("y", "k", 2))
    assert keyword_list('label="must-have-comma, yes",seed=1') == {"label": "must-have-comma, yes", "seed": 1}
    code, _, err = cli([*COMMANDS["replay"], "--brokers", "brokers/hostile.py:Labelled", "--broker-options",
                        "brokers/hostile.py:Labelled.label='must-have-comma,a'"], capsys)
    assert code == 0, err
    code, _, err = cli([*COMMANDS["replay"], "--brokers", "brokers/hostile.py:Labelled", "--broker-options",
                        "brokers/hostile.py:Labelled.label='a,b"], capsys)
    assert code == 2 and "quote is not closed" in one_line(err)


# ---------------------------------------------------------------- 9. a user's module named like ours
@pytest.mark.parametrize("shadow", ["agents.py", "traces/__init__.py"])
@pytest.mark.parametrize("argv", [["--version"], ["replay"]])
def test_a_module_named_like_a_cloudsim_package_is_one_line_naming_it(tmp_path, shadow, argv):
    (tmp_path / shadow).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / shadow).write_text("x = 1\n")
    done = subprocess.run([sys.executable, "-m", "cloudsim", *argv], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)}, cwd=tmp_path, timeout=120)
    name = shadow.split("/")[0].removesuffix(".py")
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert f"another module named {name!r} before cloudsim's own: {tmp_path / shadow}" in done.stderr
