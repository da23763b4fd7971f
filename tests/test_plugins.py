"""A user's broker in every command: by reference, from an installed package, listed, checked and recorded."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import textwrap

import pytest

from agents import BROKERS, make_broker, plugins
from cloudsim.run.check_broker import RULES, check_broker
from conftest import cli

SMALLEST_FIRST = textwrap.dedent('''
    import numpy as np
    from cloudsim import Decision

    class SmallestFirst:
        """Starts the waiting task of the smallest cpu demand on its first fit machine."""
        name = "smallest-first"

        def __init__(self, spread: int = 0):
            self.spread = spread

        def decide(self, view):
            machines, tasks = view.fit_pairs
            if len(tasks) == 0:
                return None
            best = int(np.argmin(view.demand[tasks, 0]))
            return Decision(int(machines[best]), int(tasks[best]))

    class Raises:
        def decide(self, view):
            raise KeyError("no such key")

    class Garbage:
        def decide(self, view):
            return "start everything" if view.num_tasks else None

    class Lazy:
        def decide(self, view):
            return None

    class Dice:
        """Reads state outside its seed: every other instance takes the last fit pair instead of the first."""
        made = 0

        def __init__(self):
            Dice.made += 1
            self.last = Dice.made % 2 == 0

        def decide(self, view):
            machines, tasks = view.fit_pairs
            if not len(tasks):
                return None
            k = len(tasks) - 1 if self.last else 0
            return Decision(int(machines[k]), int(tasks[k]))

    class Hangs:
        def decide(self, view):
            while True:
                pass

    class NoDecide:
        pass

    class FailsToStart:
        def __init__(self):
            raise ZeroDivisionError("in its own __init__")

        def decide(self, view):
            return None
''')


@pytest.fixture
def broker_file(tmp_path, monkeypatch):
    (tmp_path / "my_brokers.py").write_text(SMALLEST_FIRST)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path / "my_brokers.py"


def test_a_broker_by_file_and_by_module_replays_as_a_built_in_does_and_names_its_source(broker_file, capsys, tmp_path):
    code, out, err = cli(["replay", "--brokers", "my_brokers.py:SmallestFirst,my_brokers:SmallestFirst,first-fit",
                          "--broker-options", "my_brokers.py:SmallestFirst.spread=2", "--workers", "2", "--json",
                          "--out", str(tmp_path / "runs")], capsys)
    assert code == 0, err
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{") and "\"summary\": true" not in line]
    by_broker = {row["broker"]: row for row in rows}
    # The same class by file and by module: the same run (built again in each worker from its reference).
    assert by_broker["my_brokers.py:SmallestFirst"]["makespan"] == by_broker["my_brokers:SmallestFirst"]["makespan"]
    assert by_broker["my_brokers.py:SmallestFirst"]["instances_finished"] == by_broker["first-fit"]["instances"]
    sources = json.loads((tmp_path / "runs" / "brokers.json").read_text())
    assert sources["first-fit"]["kind"] == "built-in"
    assert sources["my_brokers.py:SmallestFirst"]["file"] == str(broker_file.resolve())
    assert len(sources["my_brokers.py:SmallestFirst"]["sha256"]) == 64
    assert sources["my_brokers:SmallestFirst"]["kind"] == "module"


@pytest.mark.parametrize("brokers, words", [
    ("nowhere.py:X", "no such file 'nowhere.py'"),
    ("my_brokers.py:Nope", "my_brokers.py has no 'Nope'"),
    ("no_module_here:X", "no module named 'no_module_here'"),
    ("my_brokers.py:NoDecide", "class NoDecide has no decide(view) method"),
    ("smallest", "unknown broker smallest"),
    ("binary.py:X", "binary.py: source code string cannot contain null bytes"),
])
def test_a_reference_that_gives_no_broker_is_one_line_naming_it(broker_file, capsys, brokers, words):
    (broker_file.parent / "binary.py").write_bytes(b"\x00\x01 not python")
    code, out, err = cli(["replay", "--brokers", brokers], capsys)
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_option_a_broker_does_not_take_is_refused_with_the_options_it_takes(broker_file, capsys):
    code, _, err = cli(["replay", "--brokers", "my_brokers.py:SmallestFirst",
                        "--broker-options", "my_brokers.py:SmallestFirst.width=3"], capsys)
    assert code == 1 and "takes no option 'width'; its options: spread" in err
    code, _, err = cli(["replay", "--brokers", "first-fit", "--broker-options", "tetris.x=1"], capsys)
    assert code == 2 and "tetris is not in --brokers" in err
    assert make_broker("tetris-star", knob=0.25).knob == 0.25


def test_an_installed_broker_runs_by_name_and_a_clash_with_a_built_in_is_refused(broker_file, capsys, monkeypatch):
    points = {name: importlib.metadata.EntryPoint(name, "my_brokers:SmallestFirst", plugins.ENTRY_POINT_GROUP)
              for name in ("smallest", "tetris")}
    monkeypatch.setattr(plugins, "installed", lambda: points)
    assert type(make_broker("smallest")).__name__ == "SmallestFirst"
    with pytest.raises(plugins.BrokerReferenceError, match="'tetris' is both .*broker tetris and declared by"):
        plugins.factory("tetris", lambda name: "cloudsim's broker tetris")
    code, out, _ = cli(["brokers"], capsys)
    assert code == 0 and "smallest" in out
    assert ("tetris           (not loaded, its name is refused: cloudsim's broker tetris has this name too; run it "
            "as --brokers my_brokers:SmallestFirst)") in out


def test_the_broker_list_shows_every_registry_and_what_each_broker_needs(capsys):
    code, out, _ = cli(["brokers", "--json"], capsys)
    rows = [json.loads(line) for line in out.splitlines()]
    core = {row["name"] for row in rows if row["registry"] == "core"}
    assert core == set(BROKERS)
    by = {(row["registry"], row["name"]): row for row in rows}
    assert "checkpoint" in by["core", "deepjs"]["needs"] and "GPUs" in by["core", "fgd"]["needs"]
    assert "--env deeprm" in by["DeepRM's environment", "sjf"]["needs"]  # another sjf than the core's
    assert "GPUs" in by["core", "deeprm"]["refuses"]


@pytest.mark.parametrize("name", sorted(BROKERS))
def test_every_built_in_broker_keeps_the_protocol(name):
    report = check_broker(lambda: make_broker(name, seed=0), name, timeout=60)
    assert report.passed, report.failures
    assert any(outcome == "ok" for outcome in report.cases.values())  # checked on some workload


@pytest.mark.parametrize("broker, rule, case", [
    ("Raises", "raises", "one machine, one task"),
    ("Garbage", "answers", "one machine, one task"),
    ("Lazy", "finishes", "one machine, one task"),
    ("Dice", "reproducible", "one machine, a scheduler tick"),
])
def test_the_checker_names_the_rule_a_broker_breaks_and_the_smallest_workload(broker_file, capsys, broker, rule, case):
    code, out, _ = cli(["check-broker", f"my_brokers.py:{broker}"], capsys)
    assert code == 1
    assert f"breaks '{rule}', first on '{case}'" in out
    assert rule in RULES


def test_a_broker_that_never_answers_is_stopped_and_named(broker_file, capsys):
    code, out, _ = cli(["check-broker", "my_brokers.py:Hangs", "--timeout", "0.2"], capsys)
    assert code == 1 and "breaks 'answers in time', first on 'one machine, one task': decision call 1 at t=0.0" in out


def test_a_user_broker_is_ranked_on_the_leaderboard(broker_file, capsys, tmp_path):
    code, out, err = cli(["leaderboard", "--brokers", "my_brokers.py:SmallestFirst,first-fit", "--workloads",
                          "synthetic", "--seeds", "1", "--out", str(tmp_path / "board")], capsys)
    assert code == 0, err
    assert "my_brokers.py:SmallestFirst" in (tmp_path / "board" / "leaderboard.md").read_text()
    # Its cell is named by the class and a hash of the file's place and the class: no "/" or ":" in it.
    tag = hashlib.sha256(f"{broker_file.resolve()}:SmallestFirst".encode()).hexdigest()[:8]
    assert (tmp_path / "board" / "cells" / f"synthetic--my_brokers_SmallestFirst-{tag}--s0.json").is_file()
    assert json.loads((tmp_path / "board" / "brokers.json").read_text())["first-fit"]["kind"] == "built-in"


def test_a_broker_that_raises_in_a_run_is_named_with_the_run_and_no_folder_is_left(broker_file, capsys, tmp_path):
    code, _, err = cli(["replay", "--brokers", "first-fit,my_brokers.py:Raises", "--out", str(tmp_path / "runs")],
                       capsys)
    lines = err.strip().splitlines()
    line = SMALLEST_FIRST.splitlines().index('        raise KeyError("no such key")') + 1
    assert code == 1 and lines[0] == (f"cloudsim: broker 'my_brokers.py:Raises' raised KeyError: 'no such key' in its "
                                      f"decide(view) call 1 at t=0.0 (my_brokers.py line {line}); fix the broker (run "
                                      "again with --debug for its traceback)")
    assert lines[1] == "cloudsim: in the run of broker 'my_brokers.py:Raises' on all (seed 0)"
    assert not (tmp_path / "runs").exists()


def test_a_broker_whose_constructor_fails_is_named_not_an_internal_error(broker_file, capsys):
    code, _, err = cli(["replay", "--brokers", "my_brokers.py:FailsToStart"], capsys)
    line = SMALLEST_FIRST.splitlines().index('        raise ZeroDivisionError("in its own __init__")') + 1
    assert code == 1 and err.strip() == ("cloudsim: broker 'my_brokers.py:FailsToStart': making it failed: "
                                         f"ZeroDivisionError: in its own __init__ (my_brokers.py line {line})")
