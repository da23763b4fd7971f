"""The core's rules on workloads small enough to work out by hand (see each test's comment)."""

import math

import numpy as np
import pandas as pd
import pytest

from agents import FirstFit, Tetris
from cloudsim import (
    ClusterSpec,
    ClusterView,
    Decision,
    InvalidDecisionError,
    JobSpec,
    Simulation,
    SimulationStalledError,
    TaskSpec,
    UnschedulableTaskError,
    sequential_fit,
    sequential_fit_count,
    simulate,
)
from cloudsim.engine.foreign import BrokerError
from conftest import task


def by_task(result):
    return result.tasks.set_index("task_id")


def test_event_mode_on_two_machines_three_tasks(two_machines, three_tasks):
    # t=0: first-fit puts both a1 instances on m0 (4,4 -> 2,3 -> 0,2) and a2 on m1 (2,8 -> 0,4).
    # t=1: b1 (1,1) fits neither machine. t=3: a2 ends, m1 = (2,8), b1 starts there.
    # t=5: a1 (started 0, 5 s) and b1 (started 3, 2 s) end: makespan 5.
    result = simulate(two_machines, three_tasks, FirstFit())
    t = by_task(result)
    assert result.makespan == 5
    assert t.start_time.to_dict() == {"a1": 0, "a2": 0, "b1": 3}
    assert t.finish_time.to_dict() == {"a1": 5, "a2": 3, "b1": 5}
    assert t.loc["b1", "wait"] == 2  # ready at its arrival, t=1
    assert result.summary["avg_completion"] == pytest.approx((5 + 3 + 2) / 3)
    assert result.summary["avg_slowdown"] == pytest.approx(1.0)
    jobs = result.jobs.set_index("job_id")
    assert jobs.completion.to_dict() == {"A": 5, "B": 4}
    assert jobs.slowdown.to_dict() == {"A": 1.0, "B": 2.0}  # B: 4 s for a 2 s job
    groups = result.groups.set_index("task_id")
    assert groups.loc["a1", "machine"] == 0 and groups.loc["a1", "instances"] == 2
    assert groups.loc["a2", "machine"] == 1 and groups.loc["b1", "machine"] == 1


def test_tick_mode_on_the_same_workload(two_machines, three_tasks):
    # Tick 1: at t=0 the scheduler wakes before job A arrives, so A starts at t=1
    # (a1 x2 on m0, a2 on m1); B arrives at t=1 just after that wake; a2 ends at 4,
    # before the wake at 4, so b1 starts at 4 and ends at 6 with a1 (1 + 5).
    # The wake at 6 finds every job finished: makespan 6.
    result = simulate(two_machines, three_tasks, FirstFit(), tick=1)
    t = by_task(result)
    assert result.makespan == 6
    assert t.start_time.to_dict() == {"a1": 1, "a2": 1, "b1": 4}
    assert t.finish_time.to_dict() == {"a1": 6, "a2": 4, "b1": 6}
    assert result.jobs.set_index("job_id").completion.to_dict() == {"A": 6, "B": 5}


def test_utilisation_steps_and_mean(two_machines, three_tasks):
    # Total capacity: cpu 6, memory 12. [0,3): a1 x2 (4,2) + a2 (2,4) = (6,6);
    # [3,5): a1 x2 + b1 = (5,3); from 5: nothing.
    result = simulate(two_machines, three_tasks, FirstFit())
    util = result.utilisation().set_index("time")
    assert util.loc[0.0].tolist() == pytest.approx([1.0, 0.5])
    assert util.loc[3.0].tolist() == pytest.approx([5 / 6, 0.25])
    assert util.loc[5.0].tolist() == pytest.approx([0.0, 0.0])
    assert result.summary["utilisation_cpu"] == pytest.approx((6 * 3 + 5 * 2) / (6 * 5))
    assert result.summary["utilisation_memory"] == pytest.approx((6 * 3 + 3 * 2) / (12 * 5))


def test_dag_children_wait_for_their_parents():
    # 1 (2 s) -> {2 (3 s), 3 (1 s)} -> 4 (1 s) on one large machine, event-driven:
    # 1: 0-2; 2: 2-5; 3: 2-3; 4 starts when both 2 and 3 are done: 5-6.
    job = JobSpec("j", 0, (task(1, 1, 1, 1, 2), task(2, 1, 1, 1, 3, (1,)), task(3, 1, 1, 1, 1, (1,)),
                           task(4, 1, 1, 1, 1, (2, 3))))
    result = simulate(ClusterSpec.uniform(1, {"cpu": 10, "memory": 10}), [job], FirstFit())
    t = by_task(result)
    assert t.start_time.to_dict() == {1: 0, 2: 2, 3: 2, 4: 5}
    assert t.ready_time.to_dict() == {1: 0, 2: 2, 3: 2, 4: 5}
    assert result.makespan == 6
    assert result.jobs.slowdown.iloc[0] == 1.0  # finished in its critical-path time


def test_dag_in_tick_mode():
    # Tick 1: task 1 arrives after the wake at 0, runs 1-3; 2 and 3 start at the wake at 3;
    # 3 (1 s) ends at 4 just after that wake; 2 ends at 6 before the wake at 6, so 4 runs 6-7;
    # it ends just after the wake at 7, and the wake at 8 sees the job finished.
    job = JobSpec("j", 0, (task(1, 1, 1, 1, 2), task(2, 1, 1, 1, 3, (1,)), task(3, 1, 1, 1, 1, (1,)),
                           task(4, 1, 1, 1, 1, (2, 3))))
    result = simulate(ClusterSpec.uniform(1, {"cpu": 10, "memory": 10}), [job], FirstFit(), tick=1)
    assert by_task(result).start_time.to_dict() == {1: 1, 2: 3, 3: 3, 4: 6}
    assert result.makespan == 8


def test_duration_one_frees_resources_after_the_next_wake():
    # One machine with cpu 1 and a task of 2 instances of cpu 1.
    # Duration 1: #1 runs 1-2 but frees cpu just after the wake at 2, so #2 starts at 3
    # and ends at 4, after the wake at 4: makespan 5. Duration 2: #1 runs 1-3 and frees cpu
    # before the wake at 3; #2 runs 3-5: makespan 5 as well. Event mode with duration 1: 2.
    cluster = ClusterSpec.uniform(1, {"cpu": 1, "memory": 1})
    one = [JobSpec("j", 0, (task("x", 2, 1, 0, 1),))]
    two = [JobSpec("j", 0, (task("x", 2, 1, 0, 2),))]
    tick_one = simulate(cluster, one, FirstFit(), tick=1)
    assert sorted(tick_one.groups.start) == [1, 3]
    assert tick_one.makespan == 5
    assert simulate(cluster, two, FirstFit(), tick=1).makespan == 5
    assert simulate(cluster, one, FirstFit()).makespan == 2


def test_second_job_with_the_same_submit_time_arrives_after_the_wake():
    # J1 and J2 both at t=5, one machine with room for both. J1's arrival timer was set at
    # t=0 and fires before the wake at 5; J2's is set when J1 arrives and fires after it.
    cluster = ClusterSpec.uniform(1, {"cpu": 4, "memory": 4})
    jobs = [JobSpec("J0", 0, (task("t", 1, 1, 0, 1),)), JobSpec("J1", 5, (task("t", 1, 1, 0, 10),)),
            JobSpec("J2", 5, (task("t", 1, 1, 0, 10),))]
    result = simulate(cluster, jobs, FirstFit(), tick=1)
    assert result.tasks.set_index("job_id").start_time.to_dict() == {"J0": 1, "J1": 5, "J2": 6}


def test_a_task_no_machine_can_hold_is_refused_before_the_run(two_machines):
    jobs = [JobSpec("ok", 0, (task("fine", 1, 1, 1, 1),)), JobSpec("big", 3, (task("huge", 1, 3, 5, 1),))]
    # (3, 5): m0 lacks cpu... no, m0 has cpu 4 but memory 4 < 5; m1 has memory 8 but cpu 2 < 3.
    with pytest.raises(UnschedulableTaskError, match="job 'big', task 'huge'.*no machine can hold"):
        Simulation(two_machines, jobs, FirstFit())


class Scripted:
    """Returns the scripted decisions in turn, then None."""

    name = "scripted"

    def __init__(self, *decisions):
        self.decisions = list(decisions)

    def decide(self, view):
        return self.decisions.pop(0) if self.decisions else None


@pytest.mark.parametrize(
    "decision, message",
    [
        (Decision(7, 0), "machine 7, task 0: no such machine"),
        (Decision(0, 5), "machine 0, task 5: no such task"),
        (Decision(1, 0, 1), r"machine 1, task 0 \(job 'A', task 'a1'\): 1 instance\(s\) do not fit: only 0 fit"),
        (Decision(0, 0, 3), "count 3 not in 1..2 waiting"),
        ((0, 0, 1.5), "must be integers"),
        ("m0", "returned 'm0'"),
    ],
)
def test_invalid_decisions_name_broker_machine_and_task(two_machines, three_tasks, decision, message):
    # The first decision fills m0 with a1's two instances... except here the
    # first decision is valid (a2 on m1) so that the invalid one meets a changed state.
    sim = Simulation(two_machines, three_tasks, Scripted(Decision(1, 1), decision))
    with pytest.raises(InvalidDecisionError, match="broker 'scripted' at t=0"):
        try:
            sim.run()
        except InvalidDecisionError as err:
            assert err.args[0].find(message) >= 0 or __import__("re").search(message, err.args[0]), err.args[0]
            raise
    # Only the valid decision was applied: a2 (2, 4) on m1.
    assert sim.state.free.tolist() == [[4, 4], [0, 4]]


def test_a_broker_that_never_schedules_is_reported_as_stalled(two_machines, three_tasks):
    for tick in (None, 1):
        with pytest.raises(SimulationStalledError, match="broker 'scripted' keeps answering None"):
            simulate(two_machines, three_tasks, Scripted(), tick=tick)


def test_sequential_fit_count_follows_float_subtraction():
    # 1.0 - 0.05 - 0.05 ... in binary floats leaves slightly less than 0.05 after 19 steps,
    # so 19 instances fit, not 20 (checked with a plain Python loop of the same subtractions).
    free = 1.0
    fitted = 0
    while free >= 0.05:
        free -= 0.05
        fitted += 1
    assert fitted == 19
    assert sequential_fit_count(np.array([1.0, 1.0]), np.array([0.05, 0.0]), 100) == 19
    assert sequential_fit_count(np.array([64.0, 1.0]), np.array([0.5, 0.001]), 100) == 100  # capped by limit
    assert sequential_fit_count(np.array([64.0, 1.0]), np.array([0.5, 0.6]), 100) == 1
    assert sequential_fit_count(np.array([64.0, 1.0]), np.array([0.0, 0.0]), 7) == 7


@pytest.mark.parametrize("limit", [3, 16, 17, 40, 100])
def test_sequential_fit_leaves_the_free_vector_of_the_same_subtractions(limit):
    # cpu 1.0 less 0.05 per instance, memory 1.0 less 0.03: the plain Python loop below is the reference
    # for both the count and the bits left (the engine's running totals), below and above the
    # stepwise threshold.
    free, demand = [1.0, 1.0], [0.05, 0.03]
    fitted = 0
    while fitted < limit and all(f >= d for f, d in zip(free, demand)):
        free = [f - d for f, d in zip(free, demand)]
        fitted += 1
    count, left = sequential_fit(np.array([1.0, 1.0]), np.array(demand), limit)
    assert count == fitted == min(limit, 19)
    assert left.tolist() == free


def test_sequential_fit_with_a_tiny_demand_is_bounded_by_the_limit():
    # 1.0 / 5e-324 overflows a float: no quotient bound, the limit bounds the count.
    for limit in (5, 50):
        count, left = sequential_fit(np.array([1.0, 1.0]), np.array([0.0, 5e-324]), limit)
        assert count == limit and left.tolist() == [1.0, 1.0]  # 1.0 - 5e-324 rounds back to 1.0


@pytest.mark.parametrize("tick", [None, 1.0])
def test_an_empty_machine_is_at_its_exact_capacity_so_a_whole_machine_task_starts(tick):
    # One machine of 1 cpu. Job A (t=0): tasks of 0.79 and 0.08 cpu, 2 s each, run together; the running
    # float total after both end would be 1 - 0.79 - 0.08 + 0.79 + 0.08 = 0.9999999999999999 (checked
    # in plain Python), too little for job B (t=5): one instance of the whole 1 cpu, 3 s. Nothing runs
    # after A, so the machine is at its capacity, 1.0 exactly: B runs from 5 to 8.
    assert 1.0 - 0.79 - 0.08 + 0.79 + 0.08 < 1.0
    cluster = ClusterSpec.uniform(1, {"cpu": 1.0})
    jobs = [JobSpec("A", 0, (TaskSpec("a1", 1, {"cpu": 0.79}, 2), TaskSpec("a2", 1, {"cpu": 0.08}, 2))),
            JobSpec("B", 5, (TaskSpec("b", 1, {"cpu": 1.0}, 3),))]
    sim = Simulation(cluster, jobs, FirstFit(), tick=tick)
    result = sim.run()
    assert by_task(result)["start_time"]["b"] == 5.0 and result.summary["makespan"] == (8.0 if tick is None else 8)
    assert sim.state.free[0, 0] == 1.0


def test_tetris_takes_the_largest_dot_product_first_on_ties():
    # Free (4,1) and (1,4); tasks (1,0.5) and (0.5,1): scores m0.t0 = 4.5, m0.t1 = 3,
    # m1.t0 = 3, m1.t1 = 4.5. The tie goes to the first pair in machine-major order: (m0, t0).
    cluster = ClusterSpec(("cpu", "memory"), ((4, 1), (1, 4)))
    jobs = [JobSpec("j", 0, (task("t0", 1, 1, 0.5, 1), task("t1", 1, 0.5, 1, 1)))]
    seen = []

    class Recorder(Tetris):
        def decide(self, view):
            decision = super().decide(view)
            seen.append(decision)
            return decision

    simulate(cluster, jobs, Recorder())
    # Then m0 has (3, 0.5) free, too little memory for t1; on m1 it scores 1 x 0.5 + 4 x 1 = 4.5.
    # The round is one plan, its decisions indexing the round's view (t1 is its task 1).
    assert list(seen[0]) == [Decision(0, 0), Decision(1, 1)]


class OneAtATimeFirstFit(FirstFit):
    """The first decision of first-fit's plan, one instance of it: one instance per call."""

    def decide(self, view):
        plan = super().decide(view)
        return Decision(plan[0].machine, plan[0].task, 1) if plan else None


@pytest.mark.parametrize("tick", [None, 1])
def test_first_fit_counts_equal_one_at_a_time(tick):
    from traces import alibaba_like

    jobs = alibaba_like(jobs=15, seed=3, max_instances=300)
    cluster = ClusterSpec.uniform(3, {"cpu": 16, "memory": 0.2})
    fast = simulate(cluster, jobs, FirstFit(), tick=tick)
    slow = simulate(cluster, jobs, OneAtATimeFirstFit(), tick=tick)
    assert fast.makespan == slow.makespan
    assert fast.tasks[["start_time", "finish_time"]].equals(slow.tasks[["start_time", "finish_time"]])
    assert fast.summary["decisions"] < slow.summary["decisions"]
    assert fast.instances().sort_values(["job_id", "task_id", "instance"]).machine.tolist() == \
        slow.instances().sort_values(["job_id", "task_id", "instance"]).machine.tolist()


def test_per_instance_durations_finish_separately():
    job = JobSpec("j", 0, (TaskSpec("t", 2, {"cpu": 1}, (1.0, 3.0)),))
    result = simulate(ClusterSpec.uniform(1, {"cpu": 2}), [job], FirstFit())
    instances = result.instances()
    assert instances.end.tolist() == [1.0, 3.0] and instances.instance.tolist() == [0, 1]
    assert (instances.outcome == "finished").all()
    assert result.makespan == 3 and result.tasks.completion.iloc[0] == 3


def test_every_instance_is_accounted_for(two_machines, three_tasks):
    result = simulate(two_machines, three_tasks, Tetris(), tick=1)
    assert result.summary["instances"] == result.summary["instances_finished"] == 4
    assert result.groups.instances.sum() == 4
    assert len(result.instances()) == 4


def test_view_is_read_only(two_machines, three_tasks):
    class Vandal:
        def decide(self, view: ClusterView):
            view.free[0, 0] = 100.0

    with pytest.raises(BrokerError, match="broker 'Vandal' raised ValueError: .*read-only in its decide") as raised:
        simulate(two_machines, three_tasks, Vandal())
    assert isinstance(raised.value.__cause__, ValueError)  # the broker's own error, named as the broker's


def test_results_round_trip_through_parquet(tmp_path, two_machines, three_tasks):
    import pandas as pd

    result = simulate(two_machines, three_tasks, FirstFit())
    result.to_parquet(tmp_path)
    tasks = pd.read_parquet(tmp_path / "tasks.parquet")
    assert tasks.finish_time.tolist() == [5, 3, 5]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "capacity.parquet", "groups.parquet", "jobs.parquet", "reservations.parquet", "summary.json", "tasks.parquet",
        "utilisation.parquet"]


def test_a_simulation_runs_once(two_machines, three_tasks):
    sim = Simulation(two_machines, three_tasks, FirstFit())
    sim.run()
    with pytest.raises(RuntimeError, match="runs once"):
        sim.run()


def test_an_empty_workload_has_makespan_zero(two_machines):
    assert simulate(two_machines, [], FirstFit(), tick=1).makespan == 0
    assert math.isnan(simulate(two_machines, [], FirstFit()).summary["avg_completion"])


def test_equal_submit_times_that_floating_point_time_has_passed_by_an_ulp_arrive_at_once():
    # 2.022423 + (48.744959 - 2.022423) is 48.74495900000001: after the job at 48.744959 the clock is
    # past it, and the next job, submitted at the same time, must arrive at once rather than ask
    # SimPy for a negative delay.
    assert 2.022423 + (48.744959 - 2.022423) > 48.744959
    times = [2.022423, 48.744959, 48.744959]
    jobs = [JobSpec(i, t, (TaskSpec(0, 1, {"cpu": 1}, 1.0),)) for i, t in enumerate(times)]
    result = simulate(ClusterSpec.uniform(1, {"cpu": 4}), jobs, FirstFit())
    assert result.summary["makespan"] == pytest.approx(49.744959)
    assert result.jobs.submit_time.tolist() == pytest.approx(times)


class _AskedEveryRound:
    """A broker as it is, but asked at every round, empty ones too (the default for any broker)."""

    empty_rounds = True

    def __init__(self, broker) -> None:
        self.broker = broker
        self.asked = 0

    def decide(self, view):
        self.asked += 1
        return self.broker.decide(view)


@pytest.mark.parametrize("name", ["first-fit", "tetris", "sjf", "easy", "random", "round-robin", "drf", "best-fit"])
@pytest.mark.parametrize("faults", [False, True])
def test_a_broker_needing_no_empty_round_is_asked_less_with_the_same_results(name, faults):
    from agents import make_broker
    from cloudsim.engine.faults import RandomFaults
    from traces import alibaba_like

    jobs, cluster = alibaba_like(25, seed=3, max_instances=40), ClusterSpec.uniform(40, {"cpu": 64, "memory": 1})
    runs = []
    for broker in (make_broker(name, seed=0), _AskedEveryRound(make_broker(name, seed=0))):
        counting = broker if isinstance(broker, _AskedEveryRound) else _Counting(broker)
        sim = Simulation(cluster, jobs, counting, faults=RandomFaults(300.0, 50.0, seed=1) if faults else None)
        result = sim.run()
        runs.append((result.groups, result.summary, counting.asked))
    (quiet, quiet_summary, quiet_asked), (every, every_summary, every_asked) = runs
    pd.testing.assert_frame_equal(quiet, every)
    assert {k: v for k, v in quiet_summary.items() if k not in ("sim_wall_s", "broker")} == \
        {k: v for k, v in every_summary.items() if k not in ("sim_wall_s", "broker")}
    assert quiet_asked < every_asked  # completions with nothing waiting opened no round


class _Counting:
    """The broker as it is (its empty_rounds too), counting how often it is asked."""

    def __init__(self, broker) -> None:
        self.broker, self.asked = broker, 0
        self.empty_rounds = getattr(broker, "empty_rounds", True)

    def decide(self, view):
        self.asked += 1
        return self.broker.decide(view)


def test_on_round_must_be_a_function():
    with pytest.raises(TypeError, match=r"on_round must be a function of \(time, machines\) or None, got 5"):
        Simulation(ClusterSpec.uniform(1, {"cpu": 1.0}), [], on_round=5)
