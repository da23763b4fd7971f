"""Plans: a round answered with a list of decisions means the same decisions given one by one.

Each heuristic runs twice on the same workload: once as it answers (one decision per call, or
its own plans), recording every round's decisions (by global task index), and once answering
each round with all the recorded decisions as one plan. The two runs must leave the same instance groups
(task, machine, first instance, count, start, end, outcome), with ticks, failures and EASY's reservations.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.registry import broker_spec
from agents import BROKERS, LEARNED, FirstFit, Windowed, make_broker
from cloudsim import (ClusterSpec, Decision, InvalidDecisionError, JobSpec, Simulation, SimulationStalledError,
                      TaskSpec)
from cloudsim.engine.broker import ArrayPlan, Plan, as_plan, ends_round
from cloudsim.engine import plan_check, simulation
from cloudsim.engine.faults import RandomFaults
from test_properties import clusters, workloads

# Brokers that plan by the grid need a signal as well: tests/test_carbon_study.py runs them.
HEURISTICS = sorted(n for n in BROKERS if n not in LEARNED and not broker_spec(n).grid)


class Recorder:
    """Wraps a broker; keeps each round's decisions as (machine, global task, count, at), one list a
    round (a round ends when the broker answers None)."""

    def __init__(self, broker) -> None:
        self.broker, self.name = broker, getattr(broker, "name", "broker")
        self.rounds: list[list[tuple]] = []
        self._new_round = True

    def decide(self, view):
        if self._new_round:
            self.rounds.append([])
            self._new_round = False
        decision = self.broker.decide(view)
        plan = as_plan(decision)
        if ends_round(decision):  # None, or a final plan: the broker is not asked again this round
            self._new_round = True
        for d in plan:
            d = d if isinstance(d, Decision) else Decision(*d)
            self.rounds[-1].append((d.machine, int(view.task_index[d.task]), d.count, d.at))
        return decision


class Replayer:
    """Answers each round with the recorded round's decisions as one plan, then None."""

    def __init__(self, rounds: list[list[tuple]], name: str, arrays: bool = False) -> None:
        self.rounds, self.name, self._planned, self.arrays = iter(rounds), name, False, arrays

    def decide(self, view):
        if self._planned:
            self._planned = False
            return None
        plan = next(self.rounds)  # the runs open the same rounds: running out would be a bug
        if not plan:
            return None
        self._planned = True
        position = {int(g): p for p, g in enumerate(view.task_index)}
        if self.arrays and all(at is None for *_, at in plan):  # the same decisions as arrays
            machine, task, count = zip(*[(m, position[g], count) for m, g, count, _ in plan])
            return ArrayPlan(machine, task, count)
        return [Decision(m, position[g], count, at) for m, g, count, at in plan]


def groups(result):
    frame = result.groups
    return frame[["task", "machine", "first_instance", "instances", "start", "end", "outcome"]].reset_index(drop=True)


def one_by_one_then_as_plans(cluster, jobs, name, tick, faults_seed, arrays=False):
    faults = (lambda: RandomFaults(40, 5, seed=faults_seed)) if faults_seed is not None else (lambda: None)
    recorder = Recorder(make_broker(name, seed=3))
    one = Simulation(cluster, jobs, recorder, tick=tick, faults=faults(), max_idle_ticks=200).run()
    replayer = Replayer(recorder.rounds, recorder.name, arrays)
    planned = Simulation(cluster, jobs, replayer, tick=tick, faults=faults(), max_idle_ticks=200).run()
    return one, planned, recorder


@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.data(), name=st.sampled_from(HEURISTICS), tick=st.sampled_from([None, 1.0]),
       faulty=st.booleans(), arrays=st.booleans())
def test_a_plan_gives_the_same_groups_as_its_decisions_one_by_one(data, name, tick, faulty, arrays):
    # ``arrays``: the rounds without reservations answered as an ArrayPlan (checked compiled as it is)
    cluster = data.draw(clusters())
    jobs = data.draw(workloads(cluster))
    with pytest.MonkeyPatch.context() as patch:  # every plan of two or more checked compiled, too
        patch.setattr(plan_check, "COMPILED_CHECK_FROM", 2)
        one, planned, recorder = one_by_one_then_as_plans(cluster, jobs, name, tick, 7 if faulty else None,
                                                          arrays)
    assert groups(planned).equals(groups(one))
    assert planned.summary["decisions"] == one.summary["decisions"] == sum(map(len, recorder.rounds))


def end_state(sim: Simulation) -> dict:
    """What a run leaves: every group, every task's counts and times, the machines' free vectors (bits)."""
    t = sim.tasks
    return {"groups": groups(sim.result()), "free": sim.state.free.tobytes(), "running": sim.state.running.tolist(),
            "changes": sim.state.machine_change.tolist(),
            **{name: getattr(t, name).tolist() for name in ("task_started", "task_finished", "task_failed",
                                                          "task_restarts", "task_start_time", "task_finish_time",
                                                          "task_waiting_change", "job_finish")}}


@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.data(), name=st.sampled_from(HEURISTICS), tick=st.sampled_from([None, 1.0]),
       faulty=st.booleans(), own_durations=st.booleans())
def test_starts_and_ends_applied_at_once_leave_the_state_one_by_one_leaves(data, name, tick, faulty, own_durations):
    # A plan's starts, and the groups that end at one instant, are applied as array operations from
    # BULK_FROM on; one by one is the reference. Tasks with durations of their own per instance, re-queued
    # instances (failures) and DRF's job usage take the one-by-one path; the state must not tell which ran.
    cluster = data.draw(clusters())
    jobs = data.draw(workloads(cluster))
    if own_durations:  # every other task's instances each run for a duration of their own
        jobs = [JobSpec(j.id, j.submit_time, tuple(
            TaskSpec(t.id, t.instances, t.demand, tuple(float(t.duration + i % 3) for i in range(t.instances)),
                     t.parents) if k % 2 else t for k, t in enumerate(j.tasks))) for j in jobs]
    states, seen = [], []
    for bulk_from in (2, 10**9):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(simulation, "BULK_FROM", bulk_from)
            faults = RandomFaults(40, 5, seed=7) if faulty else None
            broker = Watcher(make_broker(name, seed=3))
            sim = Simulation(cluster, jobs, broker, tick=tick, faults=faults, max_idle_ticks=200)
            sim.run()
            states.append(end_state(sim))
            seen.append(broker.seen)
    assert seen[0] == seen[1]  # what every decision saw, changes included
    assert states[0]["groups"].equals(states[1]["groups"])
    assert ({k: v for k, v in states[0].items() if k != "groups"}
            == {k: v for k, v in states[1].items() if k != "groups"})


class Watcher:
    """Wraps a broker; keeps what each of its decisions saw: time, free vectors (bits), waiting counts,
    and which machines and tasks changed since the decision before (what incremental brokers read)."""

    def __init__(self, broker) -> None:
        self.broker, self.name, self.seen = broker, getattr(broker, "name", "broker"), []
        self._machines = self._tasks = 0

    def decide(self, view):
        self.seen.append((view.time, view.free.tobytes(), view.waiting.tolist(), view.task_index.tolist(),
                          view.machines_changed_since(self._machines).tolist(),
                          view.task_index[view.tasks_changed_since(self._tasks)].tolist()))
        self._machines, self._tasks = view.machine_changes, view.waiting_changes
        return self.broker.decide(view)


@pytest.mark.parametrize("bulk_from", [2, 10**9])
def test_many_instances_ending_at_once_free_their_machine_exactly(monkeypatch, bulk_from):
    # 3 machines of 1 cpu; 30 instances of 0.1 cpu (one per decision: 30 groups) start at t=0, 10 a machine
    # (1 - 0.1 ten times in running totals is 1.4e-16, not 0), and all end at t=2. A machine with nothing
    # left running is at its capacity exactly, so the task that needs a whole machine, waiting since t=1,
    # starts on machine 0 at t=2, whether the 30 ends are applied one by one or at once.
    monkeypatch.setattr(simulation, "BULK_FROM", bulk_from)
    cluster = ClusterSpec.uniform(3, {"cpu": 1.0})
    jobs = [JobSpec("small", 0.0, (TaskSpec("a", 30, {"cpu": 0.1}, 2.0),)),
            JobSpec("whole", 1.0, (TaskSpec("b", 1, {"cpu": 1.0}, 1.0),))]

    class OneEach:  # one instance on each machine in turn, a round's decisions as one plan
        name = "one-each"

        def decide(self, view):
            if view.time > 0:
                return FirstFit().decide(view)
            return Plan([Decision(m % 3, 0) for m in range(30)], final=True)

    result = Simulation(cluster, jobs, OneEach()).run()
    assert len(result.groups) == 31
    by_task = result.groups.groupby("task_id")
    assert by_task.instances.sum().to_dict() == {"a": 30, "b": 1}
    whole = result.groups[result.groups.task_id == "b"].iloc[0]
    assert (whole.machine, whole.start, whole.end) == (0, 2.0, 3.0) and result.makespan == 3.0


@pytest.mark.parametrize("bulk_from", [2, 10**9])
def test_a_later_plan_of_the_round_grows_the_group_its_instances_follow(monkeypatch, bulk_from):
    # One task of 30 instances. The round's first plan (a list: the round stays open) starts 2 instances on
    # machine 2 (instances 0-1), 3 on machine 0 (2-4), 1 on machine 1 (5); the second, 2 on machine 1 (6-7),
    # which follow machine 1's group, so it grows to 3, and 1 on machine 2 (8), which does not follow
    # machine 2's group (0-1): a group of its own.
    monkeypatch.setattr(simulation, "BULK_FROM", bulk_from)
    plans = iter([[Decision(2, 0, 2), Decision(0, 0, 3), Decision(1, 0, 1)],
                  Plan([Decision(1, 0, 2), Decision(2, 0, 1)], final=True)])

    class TwoPlans:
        name = "two-plans"

        def decide(self, view):
            return next(plans, None) if view.time == 0 else FirstFit().decide(view)

    jobs = [JobSpec("A", 0.0, (TaskSpec("a", 30, {"cpu": 1.0}, 5.0),))]
    result = Simulation(ClusterSpec.uniform(3, {"cpu": 10.0}), jobs, TwoPlans()).run()
    first_round = result.groups[result.groups.start == 0]
    assert first_round[["machine", "first_instance", "instances"]].values.tolist() == \
        [[2, 0, 2], [0, 2, 3], [1, 5, 3], [2, 8, 1]]


class FirstOfPlan:
    """A broker's one-decision path, one decision per call: its rule for one decision where it has one
    (`decide_one`: a rule with state, such as round-robin's next machine, must not plan ahead), else
    the first decision of whatever it answers."""

    def __init__(self, broker) -> None:
        self.broker, self.name = broker, getattr(broker, "name", "broker")

    def decide(self, view):
        if getattr(type(self.broker), "decide_one", None) is not None:
            return self.broker.decide_one(view)
        plan = as_plan(self.broker.decide(view))
        return plan[0] if plan else None


@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.data(), name=st.sampled_from(HEURISTICS), tick=st.sampled_from([None, 1.0]),
       faulty=st.booleans())
def test_a_broker_that_plans_makes_the_decisions_it_makes_one_at_a_time(data, name, tick, faulty):
    # Its plan's first decision, asked for again after each one is applied, is the one-decision path.
    cluster = data.draw(clusters())
    jobs = data.draw(workloads(cluster))
    runs = []
    for broker in (make_broker(name, seed=3), FirstOfPlan(make_broker(name, seed=3))):
        faults = RandomFaults(40, 5, seed=7) if faulty else None
        runs.append(Simulation(cluster, jobs, broker, tick=tick, faults=faults, max_idle_ticks=200).run())
    assert groups(runs[0]).equals(groups(runs[1]))
    assert runs[0].summary["decisions"] == runs[1].summary["decisions"]


def test_plans_on_a_real_sized_round_with_ties_and_reservations():
    # 3 equal machines (ties everywhere) and 12 jobs of several tasks arriving together: rounds of many
    # decisions; EASY reserves the head of its queue within its plans.
    cluster = ClusterSpec.uniform(3, {"cpu": 8, "memory": 1})
    rng = np.random.default_rng(5)
    jobs = [JobSpec(j, float(j // 4), tuple(TaskSpec(t, int(rng.integers(1, 6)), {"cpu": float(rng.integers(1, 9)),
                                                                               "memory": 0.125},
                                                     float(rng.integers(1, 7)))
                                          for t in range(3))) for j in range(12)]
    for name in ("first-fit", "tetris", "easy", "sjf", "drf"):
        for tick in (None, 1.0):
            one, planned, recorder = one_by_one_then_as_plans(cluster, jobs, name, tick, None)
            assert groups(planned).equals(groups(one)), (name, tick)
            alone = Simulation(cluster, jobs, FirstOfPlan(make_broker(name, seed=3)), tick=tick).run()
            assert groups(alone).equals(groups(one)), (name, tick)
            assert max(map(len, recorder.rounds)) > 1  # the plans had several decisions
            if name == "easy":  # its plans reserved the head of its queue and started others now
                assert any(at is not None for plan in recorder.rounds for *_, at in plan)


@pytest.mark.parametrize("name", ["first-fit", "fcfs", "sjf", "hrrn", "best-fit", "drf", "least-load",
                                  "round-robin"])
def test_a_plan_on_a_window_stops_where_a_backlog_task_would_enter_it(name):
    # Windows of 2 tasks over 9 waiting tasks: when a planned task runs out, one at a time the next
    # backlog task takes its slot and may be chosen before the rest of the plan.
    cluster = ClusterSpec.uniform(2, {"cpu": 6, "memory": 1})
    jobs = [JobSpec(j, 0.0, (TaskSpec(0, 1 + j % 2, {"cpu": 1.0 + j % 3, "memory": 0.1}, 2.0 + j),)) for j in range(9)]
    planned = Simulation(cluster, jobs, Windowed(make_broker(name), 2)).run()
    alone = Simulation(cluster, jobs, Windowed(FirstOfPlan(make_broker(name)), 2)).run()
    assert groups(planned).equals(groups(alone))


def two_machine_view():
    # m0 and m1 of 4 cpu; task 0: 3 instances of 2 cpu, task 1: 1 instance of 4 cpu, both at t=0.
    cluster = ClusterSpec.uniform(2, {"cpu": 4})
    jobs = [JobSpec("A", 0, (TaskSpec("a", 3, {"cpu": 2}, 5), TaskSpec("b", 1, {"cpu": 4}, 5)))]
    sim = Simulation(cluster, jobs)
    return sim, sim.next_decision()


def test_a_later_decision_of_a_plan_sees_what_the_earlier_ones_took():
    sim, _ = two_machine_view()
    # Two instances of a fill m0; a third on m0 no longer fits, though it would on its own.
    with pytest.raises(InvalidDecisionError, match=r"decision 1 of the plan \(2 decisions\): machine 0, task 0 "
                                                   r"\(job 'A', task 'a'\): 1 instance\(s\) do not fit: only 0 fit"):
        sim.apply([Decision(0, 0, 2), Decision(0, 0, 1)])
    # Nothing of the refused plan was applied: the same instant, every instance still waiting.
    view = sim.next_decision()
    assert view.free.tolist() == [[4.0], [4.0]] and view.waiting.tolist() == [3, 1]
    with pytest.raises(InvalidDecisionError, match=r"decision 2 of the plan \(3 decisions\): machine 1, task 0 "
                                                   r"\(job 'A', task 'a'\): count 2 not in 1..1 waiting instances"):
        sim.apply([Decision(0, 0, 2), (1, 1), Decision(1, 0, 2)])
    view = sim.next_decision()
    assert view.free.tolist() == [[4.0], [4.0]] and sim.record.decisions == 0
    # A valid plan: a on m0 (2) and b on m1; the last a fits nowhere and waits.
    sim.apply([Decision(0, 0, 2), (1, 1)])
    view = sim.next_decision()
    assert view.free.tolist() == [[0.0], [0.0]] and view.waiting.tolist() == [1] and sim.record.decisions == 2


def test_a_plan_indexes_the_tasks_of_its_view_even_after_one_leaves_the_waiting_set():
    sim, _ = two_machine_view()
    # After a's three instances (two on m0, one on m1) a has none waiting: given one by one, b would
    # then be position 0. In the plan, position 1 is still b, whose 4 cpu no longer fit m1's 2 left.
    with pytest.raises(InvalidDecisionError, match=r"decision 2 of the plan \(3 decisions\): machine 1, task 1 "
                                                   r"\(job 'A', task 'b'\): 1 instance\(s\) do not fit: only 0 fit; "
                                                   r"free \{'cpu': 2.0\}"):
        sim.apply([Decision(0, 0, 2), Decision(1, 0, 1), (1, 1)])


def test_a_long_plan_is_checked_as_a_short_one(monkeypatch):
    # 20 machines of 4 cpu and one task of 45 instances of 1 cpu: 20 decisions of 2 instances, then 2 more on
    # machine 0, which fill it: 42 taken, 3 waiting. A 22nd decision of 4 instances asks for more than wait;
    # one of 1 instance on machine 0 finds no cpu left. (Checked compiled: COMPILED_CHECK_FROM lowered.)
    monkeypatch.setattr(plan_check, "COMPILED_CHECK_FROM", 16)
    cluster = ClusterSpec.uniform(20, {"cpu": 4})
    sim = Simulation(cluster, [JobSpec("A", 0, (TaskSpec("a", 45, {"cpu": 1}, 5),))])
    sim.next_decision()
    plan = [Decision(m, 0, 2) for m in range(20)] + [Decision(0, 0, 2), Decision(1, 0, 4)]
    with pytest.raises(InvalidDecisionError, match=r"decision 21 of the plan \(22 decisions\): machine 1, task 0 "
                                                   r"\(job 'A', task 'a'\): count 4 not in 1..3 waiting instances"):
        sim.apply(plan)
    sim.next_decision()
    plan[-1] = Decision(0, 0, 1)
    with pytest.raises(InvalidDecisionError, match=r"decision 21 of the plan \(22 decisions\): machine 0, task 0 "
                                                   r"\(job 'A', task 'a'\): 1 instance\(s\) do not fit: only 0 fit"):
        sim.apply(plan)
    view = sim.next_decision()  # nothing of either plan was applied
    assert view.free[:, 0].tolist() == [4.0] * 20 and view.waiting.tolist() == [45] and sim.record.decisions == 0
    sim.apply(plan[:-1])
    view = sim.next_decision()
    assert view.free[:, 0].tolist() == [0.0] + [2.0] * 19 and view.waiting.tolist() == [3]
    assert sim.record.decisions == 21


def test_a_final_plan_ends_the_round_and_a_list_leaves_it_open():
    sim, _ = two_machine_view()
    sim.apply([Decision(0, 0, 2)])  # a list: the broker is asked again at the same instant
    assert sim.next_decision().time == 0
    sim.apply(Plan([Decision(1, 0, 1)], final=True))  # the whole round: time moves on, to the ends at t=5
    view = sim.next_decision()
    assert view.time == 5 and view.waiting.tolist() == [1] and sim.record.decisions == 2  # two decisions


def test_malformed_plans_are_refused_whole():
    sim, _ = two_machine_view()
    with pytest.raises(InvalidDecisionError, match=r"decision 1 of the plan \(2 decisions\): returned 'x'"):
        sim.apply([(0, 0), "x"])
    sim.next_decision()
    with pytest.raises(InvalidDecisionError, match=r"decision 0 of the plan \(2 decisions\): machine 5, task 0: "
                                                   r"no such machine"):
        sim.apply([(5, 0), (0, 0)])
    view = sim.next_decision()
    assert view.waiting.tolist() == [3, 1]
    sim.apply([])  # an empty plan ends the round, as None does: nothing runs or arrives, so the run stalls
    with pytest.raises(SimulationStalledError, match="keeps answering None"):
        sim.next_decision()


def test_first_fit_answering_plans_runs_as_first_fit(two_machines, three_tasks):
    class FirstFitPlans:
        """First-fit's decisions of a round collected on the stepping API of a copy, as one plan."""
        name = "first-fit"

        def decide(self, view):
            machines, tasks = view.fit_pairs
            if len(machines) == 0:
                return None
            m, t = int(machines[0]), int(tasks[0])
            return [Decision(m, t, view.fit_count(m, t))]

    assert groups(Simulation(two_machines, three_tasks, FirstFitPlans()).run()).equals(
        groups(Simulation(two_machines, three_tasks, FirstFit()).run()))


def test_an_array_plan_is_refused_as_its_decisions_would_be():
    """An impossible start given as arrays is refused with the message the same plan as a list gets:
    its position, the machine, the task and why; nothing of the plan is applied."""
    cluster = ClusterSpec.uniform(2, {"cpu": 4.0})
    jobs = [JobSpec("A", 0.0, (TaskSpec("a", 3, {"cpu": 2.0}, 1.0),))]
    messages = []
    for plan in ([Decision(0, 0, 2), Decision(1, 0, 2)], ArrayPlan([0, 1], [0, 0], [2, 2])):
        sim = Simulation(cluster, jobs)
        view = sim.next_decision()
        with pytest.raises(InvalidDecisionError) as refused:
            sim.apply(plan)
        messages.append(str(refused.value))
        assert sim.state.free.tolist() == [[4.0], [4.0]] and view.waiting.tolist() == [3]
    assert messages[0] == messages[1]
    assert "decision 1 of the plan (2 decisions)" in messages[0] and "count 2 not in 1..1" in messages[0]


def test_an_array_plan_reads_as_its_decisions():
    plan = ArrayPlan(np.array([3, 1]), np.array([0, 2]), final=True)
    assert len(plan) == 2 and list(plan) == [Decision(3, 0, 1), Decision(1, 2, 1)] and plan[1:] == [plan[1]]
    assert as_plan(plan) is plan and ends_round(plan) and not ends_round(ArrayPlan([0], [0]))
    for bad, why in (((["a"], [0]), "machine must be a 1-d array of integers"),
                     (([0, 1], [0]), "one length, got machine 2, task 1, count 1"),
                     (([0], [0], [[1]]), "count must be a 1-d array")):
        with pytest.raises(ValueError, match=why):
            ArrayPlan(*bad)


def test_the_plan_check_still_imports_from_its_old_module_with_a_warning():
    """`PlanCheck` moved to `cloudsim.engine.plan_check`; for one release `cloudsim.engine.broker` still gives it,
    warning."""
    import cloudsim.engine.broker
    import cloudsim.engine.plan_check

    for name in ("PlanCheck", "CheckedDecision", "check_decision"):
        with pytest.warns(DeprecationWarning,
                          match=f"cloudsim.engine.broker.{name} moved to cloudsim.engine.plan_check.{name}"):
            assert getattr(cloudsim.engine.broker, name) is getattr(cloudsim.engine.plan_check, name)
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        cloudsim.engine.broker.Nothing
