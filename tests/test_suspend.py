"""Suspend and resume: a broker stops running instances, and their remaining work runs later, anywhere.

Hand-worked runs check the times, the results and the energy; a property checks, on random workloads and
random suspensions, that every instance runs its whole work once (plus the resume cost per suspension).
"""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from agents import FirstFit
from cloudsim import (ClusterSpec, Decision, InvalidDecisionError, JobSpec, MachineEvent, Simulation, Suspend,
                      simulate)
from cloudsim.engine.energy import LinearPower, meter
from cloudsim.engine.specs import DeviceRequest, TaskSpec
from conftest import task

FOUR = {"cpu": 4, "memory": 1}


def finish(sim):
    """Run the rest of the episode, ending every round at once."""
    while sim.next_decision() is not None:
        sim.apply(None)
    return sim.result()


def test_suspended_instances_resume_elsewhere_with_their_remaining_work_and_the_cost():
    # Job a: 3 instances x 10 s on m0 from t=0. At t=2 (job b arrives) the last 2 are suspended: 8 s left
    # each, + 1 s to resume = 9 s on m1 from t=2, so they finish at 11; the first goes on to 10.
    jobs = [JobSpec("a", 0.0, (task("t", 3, 1, 0.1, 10.0),)), JobSpec("b", 2.0, (task("t", 1, 1, 0.1, 5.0),))]
    sim = Simulation(ClusterSpec.uniform(2, FOUR), jobs, resume_cost=1.0)
    sim.next_decision()
    sim.apply(Decision(0, 0, 3))
    sim.next_decision()
    sim.apply(None)
    view = sim.next_decision()
    running = view.running_groups
    assert view.time == 2.0 and running.group.tolist() == [0] and running.instances.tolist() == [3]
    assert running.end.tolist() == [10.0] and running.machine.tolist() == [0] and math.isnan(running.deadline[0])
    sim.apply(Suspend(0, 2))
    view = sim.next_decision()  # the same instant: the suspended work waits, before job b
    assert view.time == 2.0 and view.waiting.tolist() == [2, 1] and view.suspended.tolist() == [2, 0]
    assert view.next_duration.tolist() == [9.0, 5.0] and view.free[0, 0] == 3.0
    sim.apply([Decision(1, 0, 2), Decision(0, 1, 1)])
    result = finish(sim)
    groups = result.groups
    assert groups[["machine", "instances", "start", "end", "outcome"]].values.tolist() == [
        [0, 1, 0.0, 10.0, "finished"], [0, 2, 0.0, 2.0, "suspended"], [1, 2, 2.0, 11.0, "finished"],
        [0, 1, 2.0, 7.0, "finished"]]
    assert result.jobs.finish_time.tolist() == [11.0, 7.0]
    summary = result.summary
    assert summary["instance_suspensions"] == 2 and summary["instances_finished"] == 4
    assert summary["instance_restarts"] == 0 and summary["makespan"] == 11.0


def test_a_run_without_suspensions_has_no_suspension_count():
    result = simulate(ClusterSpec.uniform(1, FOUR), [JobSpec("a", 0.0, (task("t", 1, 1, 0.1, 3.0),))], FirstFit())
    assert "instance_suspensions" not in result.summary


def test_a_suspended_machine_draws_idle_power_and_the_energy_adds_up():
    # One cpu-1 machine, one 10 s job: runs [0, 4), suspended, resumes at 10 for its 6 s left: ends at 16.
    # 100 W idle, 200 W full: 200 W x (4 + 6) s + 100 W x 6 s = 2,600 J.
    sim = Simulation(ClusterSpec.uniform(1, {"cpu": 1, "memory": 1}), [JobSpec("a", 0.0, (task("t", 1, 1, 1, 10.0),))])
    sim.next_decision()
    sim.apply(Decision(0, 0))
    sim.next_decision()
    sim.apply(None, wake_after=4.0)
    view = sim.next_decision()
    assert view.time == 4.0
    sim.apply(Suspend(int(view.running_groups.group[0])))
    view = sim.next_decision()
    assert view.running_groups.group.tolist() == [] and view.next_duration.tolist() == [6.0]
    sim.apply(None, wake_after=6.0)
    view = sim.next_decision()
    assert view.time == 10.0
    sim.apply(Decision(0, 0))
    result = finish(sim)
    assert result.summary["makespan"] == 16.0
    report = meter(result, LinearPower(100, 200))
    assert report.energy_kwh == pytest.approx(2600 / 3.6e6, rel=1e-12)
    assert report.power[0].tolist() == [0, 4, 10, 16] and report.power[1].tolist() == [200, 100, 200, 100]


def test_a_failure_after_a_resume_goes_back_to_the_checkpoint():
    # 10 s of work on m0: suspended at 4 (6 s left), resumed at 5 with a 1 s cost (7 s, to end at 12); m0 fails
    # at 8: the instance waits again with its checkpoint (6 s + 1 s), and runs [8, 15) on m1.
    sim = Simulation(ClusterSpec.uniform(2, FOUR), [JobSpec("a", 0.0, (task("t", 1, 1, 0.1, 10.0),))],
                     machine_events=[MachineEvent(8.0, 0, "failed")], resume_cost=1.0)
    sim.next_decision()
    sim.apply(Decision(0, 0))
    sim.next_decision()
    sim.apply(None, wake_after=4.0)
    sim.next_decision()
    sim.apply(Suspend(0))
    sim.next_decision()
    sim.apply(None, wake_after=1.0)
    view = sim.next_decision()
    assert view.time == 5.0 and view.next_duration.tolist() == [7.0]
    sim.apply(Decision(0, 0))
    sim.next_decision()
    sim.apply(None)
    view = sim.next_decision()
    assert view.time == 8.0 and view.next_duration.tolist() == [7.0] and view.suspended.tolist() == [1]
    sim.apply(Decision(1, 0))
    result = finish(sim)
    assert result.groups[["machine", "start", "end", "outcome"]].values.tolist() == [
        [0, 0.0, 4.0, "suspended"], [0, 5.0, 8.0, "requeued"], [1, 8.0, 15.0, "finished"]]
    assert result.summary["instance_restarts"] == 1 and result.summary["instance_suspensions"] == 1


def test_suspending_part_of_a_group_gives_back_its_instances_devices():
    # Two instances sharing devices 0 and 1 (600 milli each, one device each): the last one's device comes back.
    cluster = ClusterSpec(("cpu", "memory"), ((8, 8),), devices=(2,))
    gpu = TaskSpec("g", 2, {"cpu": 1, "memory": 1}, 10.0, devices=DeviceRequest(1, 600))
    sim = Simulation(cluster, [JobSpec("a", 0.0, (gpu,))])
    sim.next_decision()
    sim.apply(Decision(0, 0, 1, devices=(0,)))
    sim.next_decision()
    sim.apply(Decision(0, 0, 1, devices=(1,)))
    view = sim.next_decision()
    assert view.device_free[0].tolist() == [400, 400] and view.running_groups.instances.tolist() == [2]
    sim.apply(Suspend(0, 1))
    view = sim.next_decision()
    assert view.device_free[0].tolist() == [400, 1000] and view.suspended.tolist() == [1]
    sim.apply(Decision(0, 0, 1, devices=(1,)))
    result = finish(sim)
    assert result.groups.outcome.tolist() == ["finished", "suspended", "finished"]
    assert result.summary["instances_finished"] == 2


def started(n):
    """A simulation with ``n`` instances of one task running on m0 since t=0, at its next round (t=2, a second
    job's arrival)."""
    jobs = [JobSpec("a", 0.0, (task("t", n, 1, 0.1, 10.0),)), JobSpec("b", 2.0, (task("t", 1, 1, 0.1, 1.0),))]
    sim = Simulation(ClusterSpec.uniform(2, FOUR), jobs)
    sim.next_decision()
    sim.apply(Decision(0, 0, n))
    sim.next_decision()
    sim.apply(None)
    return sim, sim.next_decision()


@pytest.mark.parametrize("answer, words", [
    (Suspend(7), "group 7 is not running; suspend a group of view.running_groups.group"),
    (Suspend(0, 0), "count must be a whole number from 1 to the 2 instance(s) of group 0 still running"),
    (Suspend(0, 3), "from 1 to the 2 instance(s)"),
    (Suspend(0, 1.0), "count must be a whole number"),
    (Suspend("0"), "group '0' is not running"),
    ([Suspend(0, 1), Suspend(0, 2)], "suspension 1 of 2: Suspend(group=0, count=2): count must be a whole number "
                                     "from 1 to the 1 instance(s)"),
    ([Suspend(0, 1), Decision(1, 0)], "among suspensions; a suspension is answered alone"),
    ([Decision(1, 0), Suspend(0)], "among starts; a suspension changes the view"),
])
def test_a_wrong_suspension_is_refused_and_changes_nothing(answer, words):
    sim, view = started(n=2)
    free = view.free.copy()
    with pytest.raises(InvalidDecisionError) as refused:
        sim.apply(answer)
    assert words in str(refused.value) and "broker 'external' at t=2.0" in str(refused.value)
    view = sim.next_decision()  # the round is still open, as it was
    assert view.free.tolist() == free.tolist() and view.running_groups.instances.tolist() == [2]
    assert view.waiting.tolist() == [1]


def test_a_group_that_ends_at_this_instant_cannot_be_suspended():
    # With a tick, a group of one tick's duration ends just after the round of the tick it ends at: started at
    # the tick of t=1 (the tick of t=0 comes before the job's arrival), it is running at the tick of t=2.
    sim = Simulation(ClusterSpec.uniform(1, FOUR), [JobSpec("a", 0.0, (task("t", 1, 1, 0.1, 1.0),))], tick=1.0)
    assert sim.next_decision().num_tasks == 0
    sim.apply(None)
    sim.next_decision()
    sim.apply(Decision(0, 0))
    sim.next_decision()
    sim.apply(None)
    view = sim.next_decision()
    assert view.time == 2.0 and view.running_groups.end.tolist() == [2.0]
    with pytest.raises(InvalidDecisionError, match="group 0 ends at this instant; nothing is left to suspend"):
        sim.apply(Suspend(0))


def test_a_negative_resume_cost_is_refused():
    with pytest.raises(ValueError, match="resume_cost must be .*0, got -1"):
        Simulation(ClusterSpec.uniform(1, FOUR), [], resume_cost=-1)


class SuspendSometimes:
    """First-fit that, in a round with something running, suspends a random part of a random running group
    (at most ``budget`` times in all; the suspended work is started again by first-fit)."""

    name = "suspend-sometimes"

    def __init__(self, seed, budget=6):
        self.rng, self.budget, self.first_fit = np.random.default_rng(seed), budget, FirstFit()
        self.last_round = None

    def decide(self, view):
        running = view.running_groups
        if self.budget and len(running) and view.time != self.last_round and self.rng.random() < 0.5:
            self.budget -= 1
            self.last_round = view.time  # (once a round: first-fit would start it again at once, forever)
            k = int(self.rng.integers(len(running)))
            live = running.end > view.time
            if live[k]:
                return Suspend(int(running.group[k]), int(self.rng.integers(1, running.instances[k] + 1)))
        return self.first_fit.decide(view)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), cost=st.sampled_from([0.0, 0.5, 2.0]),
       shape=st.lists(st.tuples(st.integers(0, 20), st.integers(1, 4), st.integers(1, 4), st.integers(1, 30)),
                      min_size=1, max_size=8))
def test_every_instance_runs_its_whole_work_once_plus_the_cost_of_each_resume(seed, cost, shape):
    jobs = [JobSpec(f"j{k}", float(submit), (task("t", instances, cpu, 0.1, float(duration)),))
            for k, (submit, instances, cpu, duration) in enumerate(shape)]
    result = simulate(ClusterSpec.uniform(2, FOUR), jobs, SuspendSometimes(seed), resume_cost=cost)
    groups = result.groups
    held = (groups.instances * (groups.end - groups.start)).groupby(groups.task).sum()
    suspended = groups.instances.where(groups.outcome == "suspended", 0).groupby(groups.task).sum()
    work = result.tasks.instances * result.tasks.duration
    assert held.tolist() == pytest.approx((work + cost * suspended).tolist(), rel=1e-9, abs=1e-9)
    assert result.summary["instances_finished"] == sum(s[1] for s in shape)
    assert result.summary.get("instance_suspensions", 0) == int(suspended.sum())
    assert set(groups.outcome) <= {"finished", "suspended"}


def test_a_streamed_run_counts_its_suspensions(tmp_path):
    jobs = [JobSpec(f"j{k}", float(k), (task("t", 2, 2, 0.1, 5.0),)) for k in range(6)]
    in_memory = simulate(ClusterSpec.uniform(2, FOUR), jobs, SuspendSometimes(3))
    simulate(ClusterSpec.uniform(2, FOUR), iter(jobs), SuspendSometimes(3), stream_to=tmp_path / "out")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["instance_suspensions"] == in_memory.summary["instance_suspensions"] > 0
    assert summary["makespan"] == in_memory.summary["makespan"]


BROKERS = '''
from cloudsim import Decision, Suspend

class Flapper:
    """Suspends every running group it sees, 20 times, and starts what fits, first-fit."""
    def __init__(self):
        self.left = 20
    def decide(self, view):
        running = view.running_groups
        live = running.group[running.end > view.time]
        if len(live) and self.left:
            self.left -= 1
            return [Suspend(int(group)) for group in live]
        machines, tasks = view.fit_pairs
        return Decision(int(machines[0]), int(tasks[0])) if len(tasks) else None

class Stray:
    def decide(self, view):
        if len(view.running_groups):
            return Suspend(123456)
        machines, tasks = view.fit_pairs
        return Decision(int(machines[0]), int(tasks[0])) if len(tasks) else None
'''


def test_a_suspending_broker_on_the_command_line(tmp_path, capsys, monkeypatch):
    from cloudsim.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(BROKERS)
    assert main(["replay", "--brokers", "mine.py:Flapper", "--synthetic-jobs", "10", "--resume-cost", "5",
                 "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    run, total = lines[0], lines[-1]
    assert run["instance_suspensions"] == total["suspensions"]["mine.py:Flapper"] > 0
    assert run["instances_finished"] == run["instances"]
    assert main(["replay", "--brokers", "mine.py:Stray", "--synthetic-jobs", "10", "--out", "out"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "group 123456 is not running; suspend a group of view.running_groups.group" in err[0]
    assert not (tmp_path / "out").exists()
    assert main(["replay", "--resume-cost", "-1"]) == 2
    assert "--resume-cost -1: must be a finite number >= 0" in capsys.readouterr().err
