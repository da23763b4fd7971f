"""The runner: results in item order and identical whichever executor and worker count runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from cloudsim.cli import main
from cloudsim.engine.runner import Runner, RunnerError

needs_ray = pytest.mark.needs("ray")


def square_after_pid(x: int) -> tuple[int, int]:
    time.sleep(0.05)  # long enough that both workers take items
    return x * x, os.getpid()


def fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError(f"item {x} is bad")
    return x


def test_results_come_in_item_order_from_several_processes():
    with Runner(workers=2) as runner:
        results = list(runner.map(square_after_pid, range(8)))
    assert [r for r, _ in results] == [0, 1, 4, 9, 16, 25, 36, 49]
    assert len({pid for _, pid in results}) == 2  # two worker processes did the work


def test_one_worker_runs_in_this_process_and_never_more_workers_than_items():
    with Runner(workers=1) as runner:
        assert {pid for _, pid in runner.map(square_after_pid, range(3))} == {os.getpid()}
    with Runner(workers=8) as runner:
        assert {pid for _, pid in runner.map(square_after_pid, [5])} == {os.getpid()}  # one item: no pool


def test_a_failure_in_a_worker_reaches_the_caller_as_itself():
    with Runner(workers=2) as runner, pytest.raises(ValueError, match="item 3 is bad"):
        list(runner.map(fail_on_three, range(6)))


ABANDON_A_MAP_OF_LARGE_ANSWERS = """
import sys, time
from cloudsim.engine.runner import Runner

def answer(k):
    return bytes(30_000_000) if k else b"x"  # long enough to write that a stop often comes in the middle

if __name__ == "__main__":
    with Runner(workers=2, progress=False) as runner:
        results = runner.map(answer, [0, 1, 1, 1])
        next(results)
        time.sleep(float(sys.argv[1]))
        results.close()  # abandoned: the runner stops the workers, one of them writing its answer
    print("ended")
"""


def test_a_map_abandoned_while_a_worker_writes_its_answer_lets_the_process_end(tmp_path):
    # A worker stopped halfway through writing its answer used to leave part of a message in the pool's
    # pipe: the pool's reading thread then waited for the rest, and the process never ended.
    script = tmp_path / "abandon.py"
    script.write_text(ABANDON_A_MAP_OF_LARGE_ANSWERS)
    for pause in ("0", "0.01", "0.02", "0.04"):
        done = subprocess.run([sys.executable, str(script), pause], capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout) == (0, "ended\n"), done.stderr


STOP_POOLS_AT_ONCE = """
import sys
from cloudsim.engine.runner import Runner, WorkExited

def exits_at_once(item):
    if item == 0:
        sys.exit(0)  # the map stops while the pool's second worker may still be starting
    return item

if __name__ == "__main__":
    for _ in range(40):
        with Runner(workers=2, progress=False) as runner:
            try:
                list(runner.map(exits_at_once, range(4)))
            except WorkExited:
                pass
    print("ended")
"""


def test_a_pool_stopped_while_a_worker_starts_lets_the_process_end(tmp_path):
    # A worker forked but not yet registered used to be left running when the map stopped: it waited forever
    # for the call queue's lock, held by a worker the stop had ended, and the process hung at exit.
    script = tmp_path / "stop.py"
    script.write_text(STOP_POOLS_AT_ONCE)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "ended\n") and "Traceback" not in done.stderr, done.stderr


def test_bad_runner_settings_are_refused():
    with pytest.raises(ValueError, match="workers"):
        Runner(workers=0)
    with pytest.raises(ValueError, match="executor"):
        Runner(executor="slurm")
    with pytest.raises(ValueError, match="address applies to the ray executor"):
        Runner(address="auto")


@needs_ray
def test_an_unreachable_ray_address_fails_fast():
    with Runner(executor="ray", address="127.0.0.1:9") as runner:
        with pytest.raises(RunnerError, match="no Ray cluster answers"):
            list(runner.map(abs, [1, 2]))


def compare_rows(capsys, *options: str) -> list[dict]:
    assert main(["compare", "deeprm", "--brokers", "sjf,random,tetris-star", "--loads", "0.5,0.9", "--seeds", "2",
                 "--synthetic-jobs", "30", "--json", *options]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()][:-1]


def comparable(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in ("wall_s", "sim_wall_s")} for r in rows]


def test_local_one_worker_equals_local_two_workers(capsys):
    one = compare_rows(capsys, "--workers", "1")
    two = compare_rows(capsys, "--workers", "2")
    assert len(one) == 2 * 2 * 3
    assert [(r["load"], r["seed"], r["broker"]) for r in one] == [
        (load, seed, broker) for load in (0.5, 0.9) for seed in (0, 1) for broker in ("sjf", "random", "tetris-star")]
    assert comparable(one) == comparable(two)


@needs_ray
def test_ray_gives_the_same_rows_as_the_local_runner(capsys):
    local = compare_rows(capsys, "--workers", "1")
    on_ray = compare_rows(capsys, "--executor", "ray", "--workers", "2")  # a local Ray cluster of 2 CPUs
    assert comparable(on_ray) == comparable(local)
