"""The stepping API: driving the engine one decision at a time, and the visible-task window."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.registry import broker_spec
from agents import LEARNED, BROKERS, Windowed, make_broker
from agents.heuristics import ShortestJobFirst
from cloudsim import ClusterSpec, Decision, JobSpec, Simulation, TaskSpec, simulate

# Brokers that plan by the grid need a signal as well: tests/test_carbon_study.py runs them.
HEURISTICS = sorted(n for n in BROKERS if n not in LEARNED and not broker_spec(n).grid)


def job(jid, submit, cpu, duration, instances=1):
    return JobSpec(jid, submit, (TaskSpec("t", instances, {"cpu": cpu, "memory": 1.0}, duration),))


@st.composite
def workloads(draw):
    n = draw(st.integers(1, 12))
    return [job(i, draw(st.integers(0, 20)), draw(st.sampled_from([1, 2, 3, 4])), draw(st.integers(1, 9)),
                draw(st.integers(1, 3))) for i in range(n)]


@settings(max_examples=40, deadline=None)
@given(jobs=workloads(), broker=st.sampled_from(HEURISTICS), tick=st.sampled_from([None, 1.0]),
       machines=st.integers(1, 3), peeks=st.integers(0, 2))
def test_stepping_with_a_brokers_decisions_gives_the_episode_simulate_gives(jobs, broker, tick, machines, peeks):
    cluster = ClusterSpec.uniform(machines, {"cpu": 4, "memory": 4})
    expected = simulate(cluster, jobs, make_broker(broker, seed=1), tick=tick)
    sim = Simulation(cluster, jobs, tick=tick, name=broker)
    chooser = make_broker(broker, seed=1)
    while (view := sim.next_decision()) is not None:
        for _ in range(peeks):  # asking again for the view of the same decision changes nothing
            view = sim.next_decision()
        sim.apply(chooser.decide(view))
    result = sim.result()
    assert sim.done and sim.next_decision() is None
    for frame in ("tasks", "jobs", "groups"):
        a, b = getattr(result, frame), getattr(expected, frame)
        assert a.equals(b), frame
    assert result.summary["makespan"] == expected.summary["makespan"]
    assert result.summary["decisions"] == expected.summary["decisions"]


def test_apply_needs_a_decision_to_answer():
    sim = Simulation(ClusterSpec.uniform(1, {"cpu": 4}), [JobSpec(0, 0, (TaskSpec("t", 1, {"cpu": 1}, 1),))])
    with pytest.raises(RuntimeError, match="call next_decision"):
        sim.apply(None)
    sim.next_decision()
    sim.apply(Decision(0, 0))
    with pytest.raises(RuntimeError, match="call next_decision"):
        sim.apply(None)  # the view of a decision answers once
    with pytest.raises(RuntimeError, match="not over"):
        sim.result()
    with pytest.raises(TypeError, match="needs a broker"):
        Simulation(ClusterSpec.uniform(1, {"cpu": 4}), []).run()


def test_a_wait_with_wake_after_opens_a_round_even_if_nothing_happens():
    # One task that does not fit until... it always fits; the broker waits twice before starting it.
    cluster = ClusterSpec.uniform(1, {"cpu": 4})
    sim = Simulation(cluster, [JobSpec(0, 0, (TaskSpec("t", 1, {"cpu": 1}, 5),))])
    times = []
    view = sim.next_decision()
    times.append(view.time)
    sim.apply(None, wake_after=3)
    view = sim.next_decision()
    times.append(view.time)
    sim.apply(None, wake_after=3)
    times.append(sim.next_decision().time)
    sim.apply(Decision(0, 0))
    sim.next_decision()
    sim.apply(None)
    assert sim.next_decision() is None
    assert times == [0, 3, 6]
    assert sim.result().summary["makespan"] == 11  # started at 6, runs 5


def test_the_window_shows_the_first_tasks_and_summarises_the_rest_as_a_backlog():
    # Four single-task jobs arrive at t=0 in this order; one machine of 4 cpu.
    cluster = ClusterSpec.uniform(1, {"cpu": 4, "memory": 4})
    jobs = [job("a", 0, 3, 5), job("b", 0, 1, 2), job("c", 0, 4, 7), job("d", 0, 2, 1)]
    sim = Simulation(cluster, jobs)
    view = sim.next_decision()
    small = view.window(2)
    assert small.num_tasks == 2 and small.backlog == 2 and view.backlog == 0
    assert small.demand[:, 0].tolist() == [3, 1]
    assert small.duration.tolist() == [5, 2]
    assert small.backlog_demand[:, 0].tolist() == [4, 2]
    assert small.backlog_duration.tolist() == [7, 1]
    assert small.fits.shape == (1, 2) and small.fits.tolist() == [[True, True]]
    assert [small.task_key(t)[0] for t in range(2)] == ["a", "b"]
    # A decision on the window is a decision on the full view: start "b" (slot 1), 3 cpu left.
    sim.apply(Decision(0, 1))
    view = sim.next_decision().window(2)
    assert [view.task_key(t)[0] for t in range(2)] == ["a", "c"] and view.backlog == 1
    assert view.fits.tolist() == [[True, False]]  # a needs 3 of the 3 left, c needs 4
    assert view.machine_fits_some.tolist() == [True]
    with pytest.raises(ValueError, match="at least 1"):
        view.window(0)


def test_a_windowed_heuristic_picks_only_among_the_visible_tasks():
    # SJF over all tasks starts the 1-long task "d" first; over a window of 2 it starts "b" (2 long).
    cluster = ClusterSpec.uniform(1, {"cpu": 4, "memory": 4})
    jobs = [job("a", 0, 3, 5), job("b", 0, 1, 2), job("c", 0, 4, 7), job("d", 0, 2, 1)]
    whole = simulate(cluster, jobs, ShortestJobFirst()).tasks.set_index("job_id").start_time
    windowed = simulate(cluster, jobs, Windowed(ShortestJobFirst(), 2)).tasks.set_index("job_id").start_time
    assert whole["d"] == 0 and windowed["b"] == 0
    assert windowed["d"] > 0
    assert Windowed(ShortestJobFirst(), 2).name == "sjf"
    with pytest.raises(ValueError, match="at least 1"):
        Windowed(ShortestJobFirst(), 0)


def test_instance_groups_are_named_records():
    cluster = ClusterSpec.uniform(1, {"cpu": 4})
    sim = Simulation(cluster, [JobSpec(0, 0, (TaskSpec("t", 3, {"cpu": 1}, 2),))], make_broker("first-fit"))
    sim.run()
    (group,) = sim.record.groups
    assert (group.task, group.machine, group.first_instance, group.instances) == (0, 0, 0, 3)
    assert (group.start, group.end, group.outcome) == (0, 2, "finished")
    assert np.array_equal(sim.state.free, sim.state.capacity)


@pytest.mark.parametrize("size", [0, -1, 2.5, True, "2", None])
def test_a_window_is_a_whole_number_of_tasks_from_1(size):
    sim = Simulation(ClusterSpec.uniform(1, {"cpu": 4.0}),
                     [JobSpec(1, 0.0, tuple(TaskSpec(t, 1, {"cpu": 1.0}, 1.0) for t in range(3)))])
    view = sim.next_decision()
    with pytest.raises(ValueError, match="a task window holds at least 1 task"):
        view.window(size)
    window = view.window(2)
    assert (window.num_tasks, window.backlog) == (2, 1)
