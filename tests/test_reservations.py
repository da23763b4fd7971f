"""Reservations in the core (a decision that starts instances later) and EASY backfilling.

Every expected time below is worked out by hand on one machine of 4 cpu
(memory never binds): the free profile is the free cpu now, plus what running
instances give back when they end, minus what reservations hold while they hold it.
"""

import numpy as np
import pytest

from agents import make_broker
from cloudsim import ClusterSpec, Decision, InvalidDecisionError, JobSpec, MachineEvent, Simulation, TaskSpec

ONE_MACHINE = ClusterSpec(("cpu", "memory"), ((4.0, 100.0),))


def job(name, cpu, duration, submit=0.0):
    return JobSpec(name, submit, (TaskSpec("t", 1, {"cpu": cpu, "memory": 0.0}, duration),))


def times(sim):
    """(start, finish) of every task, in job order."""
    t = sim.tasks
    return [(float(s), float(f)) for s, f in zip(t.task_start_time, t.task_finish_time)]


def position(view, name):
    return [view.task_key(i)[0] for i in range(view.num_tasks)].index(name)


def test_a_reserved_task_leaves_the_queue_and_starts_at_its_time():
    sim = Simulation(ONE_MACHINE, [job("A", 2, 10.0), job("B", 3, 5.0)])
    view = sim.next_decision()
    sim.apply(Decision(0, position(view, "A")))
    view = sim.next_decision()
    assert view.earliest_start(0, position(view, "B")) == 10.0  # A gives its 2 cpu back at 10
    sim.apply(Decision(0, position(view, "B"), at=10.0))
    view = sim.next_decision()
    assert view.num_tasks == 0  # B is held, not waiting
    assert [(r.task, r.start, r.end) for r in view.reservations] == [(1, 10.0, 15.0)]
    profile_times, free = view.free_profile(0)
    assert profile_times.tolist() == [0.0, 10.0, 15.0]
    assert free[:, 0].tolist() == [2.0, 1.0, 4.0]  # A runs; A ends and B starts; B ends
    sim.apply(None)
    while (view := sim.next_decision()) is not None:
        sim.apply(None)
    assert times(sim) == [(0.0, 10.0), (10.0, 15.0)]
    assert sim.result().makespan == 15.0


def test_a_machine_profile_follows_every_start_and_reservation_of_its_instant():
    """Profiles are kept between the decisions of an instant (the DeepRM brokers ask for them
    again and again) and must follow each start and reservation made on the machine meanwhile."""
    sim = Simulation(ONE_MACHINE, [job("A", 2, 10.0), job("B", 3, 5.0), job("C", 1, 4.0)])
    view = sim.next_decision()
    assert view.free_profile(0)[1][:, 0].tolist() == [4.0]  # idle: 4 cpu for ever
    sim.apply(Decision(0, position(view, "A")))
    view = sim.next_decision()
    profile_times, free = view.free_profile(0)
    assert (profile_times.tolist(), free[:, 0].tolist()) == ([0.0, 10.0], [2.0, 4.0])
    sim.apply(Decision(0, position(view, "B"), at=10.0))
    view = sim.next_decision()
    profile_times, free = view.free_profile(0)
    assert (profile_times.tolist(), free[:, 0].tolist()) == ([0.0, 10.0, 15.0], [2.0, 1.0, 4.0])
    sim.apply(Decision(0, position(view, "C")))
    view = sim.next_decision()
    profile_times, free = view.free_profile(0)  # C holds 1 cpu from 0 to 4
    assert (profile_times.tolist(), free[:, 0].tolist()) == ([0.0, 4.0, 10.0, 15.0], [1.0, 2.0, 1.0, 4.0])


def test_a_machine_profile_seen_at_a_later_instant_starts_then_and_keeps_what_comes_after():
    """A profile is kept while its machine does not change, also when time moves on: at a later instant
    it starts then, with the same steps after."""
    sim = Simulation(ONE_MACHINE, [job("A", 2, 10.0), job("B", 3, 5.0), job("D", 3, 1.0, submit=3.0)])
    view = reserved_b_then(sim)  # at 0: A runs 0-10, B is reserved for 10-15
    assert view.free_profile(0)[0].tolist() == [0.0, 10.0, 15.0]
    sim.apply(None)
    view = sim.next_decision()  # D arrives at 3 and does not fit the 2 cpu free: the machine is as it was
    assert view.time == 3.0 and view.num_tasks == 1
    profile_times, free = view.free_profile(0)
    assert (profile_times.tolist(), free[:, 0].tolist()) == ([3.0, 10.0, 15.0], [2.0, 1.0, 4.0])
    assert view.earliest_start(0, 0) == 15.0  # 3 cpu for 1 s: only once B is done
    sim.apply(None)
    view = sim.next_decision()  # at 10 A ends and B starts
    assert view.time == 10.0
    profile_times, free = view.free_profile(0)
    assert (profile_times.tolist(), free[:, 0].tolist()) == ([10.0, 15.0], [1.0, 4.0])


def reserved_b_then(sim):
    """A (2 cpu) runs 0-10; B (3 cpu, 5 s) is reserved for 10-15; return the view after."""
    view = sim.next_decision()
    sim.apply(Decision(0, position(view, "A")))
    view = sim.next_decision()
    sim.apply(Decision(0, position(view, "B"), at=10.0))
    return sim.next_decision()


def test_a_reservation_that_no_longer_fits_is_refused():
    jobs = [job("A", 2, 10.0), job("B", 3, 5.0), job("C", 2, 5.0)]
    sim = Simulation(ONE_MACHINE, jobs)
    view = reserved_b_then(sim)
    c = position(view, "C")
    with pytest.raises(InvalidDecisionError, match="free profile"):
        sim.apply(Decision(0, c, at=12.0))  # only 1 cpu is free while B holds 3 of 4
    view = sim.next_decision()  # the refused decision changed nothing
    assert view.num_tasks == 1 and len(view.reservations) == 1
    sim.apply(Decision(0, c, at=15.0))  # once B is done
    while (view := sim.next_decision()) is not None:
        sim.apply(None)
    assert times(sim) == [(0.0, 10.0), (10.0, 15.0), (15.0, 20.0)]


def test_a_start_now_may_not_take_what_a_reservation_holds():
    jobs = [job("A", 2, 10.0), job("B", 3, 5.0), job("long", 2, 20.0), job("short", 2, 10.0)]
    sim = Simulation(ONE_MACHINE, jobs)
    view = reserved_b_then(sim)
    with pytest.raises(InvalidDecisionError, match="reserved"):
        sim.apply(Decision(0, position(view, "long")))  # fits now, but would still run at 10
    view = sim.next_decision()
    assert view.fits_from(0, position(view, "short"))  # it ends at 10, as B starts
    sim.apply(Decision(0, position(view, "short")))
    view = sim.next_decision()
    assert view.earliest_start(0, position(view, "long")) == 15.0
    sim.apply(None)
    while (view := sim.next_decision()) is not None:
        sim.apply(Decision(0, 0) if view.num_tasks and view.fits[0, 0] else None)
    assert times(sim) == [(0.0, 10.0), (10.0, 15.0), (15.0, 35.0), (0.0, 10.0)]


@pytest.mark.parametrize("at, message", [(-1.0, "has passed"), (float("nan"), "finite"), ("soon", "finite")])
def test_reservation_times_that_make_no_sense_are_refused(at, message):
    sim = Simulation(ONE_MACHINE, [job("A", 2, 10.0)])
    sim.next_decision()
    with pytest.raises(InvalidDecisionError, match=message):
        sim.apply(Decision(0, 0, at=at))


def test_with_a_scheduler_tick_a_reservation_starts_at_a_tick():
    sim = Simulation(ONE_MACHINE, [job("A", 4, 3.0), job("B", 4, 2.0)], tick=1.0)
    while (view := sim.next_decision()).num_tasks == 0:  # the tick at 0 comes before the arrivals
        sim.apply(None)
    assert view.time == 1.0
    sim.apply(Decision(0, 0))
    view = sim.next_decision()
    with pytest.raises(InvalidDecisionError, match="tick"):
        sim.apply(Decision(0, 0, at=4.5))
    view = sim.next_decision()
    sim.apply(Decision(0, 0, at=4.0))
    while (view := sim.next_decision()) is not None:
        sim.apply(None)
    assert times(sim) == [(1.0, 4.0), (4.0, 6.0)]


def test_easy_with_a_scheduler_tick_reserves_at_a_tick():
    # The textbook example below, J1 lasting 10.5 s, tick 1: the tick at 0 comes before the arrivals, so
    # the first starts are at 1. J1 runs 1-11.5; the head J2 (4 cpu) is reserved for the first tick after
    # J1's end, 12 (at 11.5 it was refused: not a tick); J3 is backfilled 1-6; J4 would delay J2 and
    # waits for its end at 17.
    jobs = [job("J1", 2, 10.5), job("J2", 4, 5.0), job("J3", 1, 5.0), job("J4", 1, 20.0)]
    sim = Simulation(ONE_MACHINE, jobs, make_broker("easy"), tick=1.0)
    sim.run()
    assert times(sim) == [(1.0, 11.5), (12.0, 17.0), (1.0, 6.0), (17.0, 37.0)]
    assert sim.record.cancelled_reservations == 0


def test_with_a_tick_instances_of_one_tick_free_their_machine_after_the_next_ticks_round():
    # Tick 1 on 4 cpu (CloudSimPy's order: an instance lasting exactly one tick ends just after the
    # round of the tick at its end). A (4 cpu, 1 s) starts at 1 (the tick at 0 comes before the
    # arrivals) and holds the machine through the round at 2; the head B (4 cpu, 2 s) is reserved for
    # 3, not 2 (at 2 it would not fit: the reservation was cancelled), and runs 3-5.
    sim = Simulation(ONE_MACHINE, [job("A", 4, 1.0), job("B", 4, 2.0)], make_broker("easy"), tick=1.0)
    sim.run()
    assert times(sim) == [(1.0, 2.0), (3.0, 5.0)]
    assert sim.record.cancelled_reservations == 0


def test_with_a_tick_a_one_tick_instance_ending_at_a_reservation_would_delay_it():
    # Tick 1 on 4 cpu. X (2 cpu, 3 s) starts at 1 and ends at 4, before that tick's round; the head
    # H (4 cpu, 1 s) is reserved for 4. S (2 cpu, 1 s) arrives at 2.5: started at 3 it would hold
    # its cpu through the round at 4 and delay H, so it is not backfilled; H runs 4-5 and holds the
    # machine through the round at 5, so S is reserved for 6 and runs 6-7. (Backfilled at 3, S
    # made H's reservation fail: H started at 5.)
    jobs = [job("X", 2, 3.0), job("H", 4, 1.0), job("S", 2, 1.0, submit=2.5)]
    sim = Simulation(ONE_MACHINE, jobs, make_broker("easy"), tick=1.0)
    sim.run()
    assert times(sim) == [(1.0, 4.0), (4.0, 5.0), (6.0, 7.0)]
    assert sim.record.cancelled_reservations == 0


def test_a_reservation_on_a_machine_that_failed_is_cancelled_and_its_task_waits_again():
    events = [MachineEvent(5.0, 0, "failed"), MachineEvent(20.0, 0, "up")]
    sim = Simulation(ONE_MACHINE, [job("A", 2, 3.0), job("B", 4, 2.0)], machine_events=events)
    view = sim.next_decision()
    sim.apply(Decision(0, 0))
    view = sim.next_decision()
    sim.apply(Decision(0, 0, at=10.0))  # the machine is down from 5 to 20
    while (view := sim.next_decision()) is not None:
        sim.apply(Decision(0, 0) if view.num_tasks and view.fits[0, 0] else None)
    assert sim.record.cancelled_reservations == 1
    assert times(sim) == [(0.0, 3.0), (20.0, 22.0)]
    # The run's table of reservations: B's, made at 0 for 10, cancelled (its machine was down then).
    assert sim.result().reservations.values.tolist() == [[0.0, 0, "B", "t", 1, 10.0, "cancelled"]]


def test_every_reservation_is_in_the_results_with_when_it_was_made_and_its_outcome(tmp_path):
    # The textbook example under EASY: the head J2 is reserved at 0 for 10 (J1's end); at 10, with J2
    # holding all 4 cpu, the new head J4 is reserved for 15 (J2's end). Both start when reserved.
    import pandas as pd

    jobs = [job("J1", 2, 10.0), job("J2", 4, 5.0), job("J3", 1, 5.0), job("J4", 1, 20.0)]
    result = Simulation(ONE_MACHINE, jobs, make_broker("easy")).run()
    expected = [[0.0, 0, "J2", "t", 1, 10.0, "started"], [10.0, 0, "J4", "t", 1, 15.0, "started"]]
    assert result.reservations.values.tolist() == expected
    result.to_parquet(tmp_path)
    assert pd.read_parquet(tmp_path / "reservations.parquet").values.tolist() == expected


@pytest.mark.parametrize("compiled", [False, True])
def test_easy_backfilling_on_the_textbook_example(compiled):
    # The Python path (each decision checked by the engine) and the compiled path alike. 4 cpu. J1 (2 cpu, 10 s)
    # starts; the head J2 needs all 4: it is reserved for t = 10;
    # J3 (1 cpu, 5 s) ends before 10 and is backfilled now; J4 (1 cpu, 20 s) fits now
    # but would delay J2, so it waits until J2 is done at 15.
    jobs = [job("J1", 2, 10.0), job("J2", 4, 5.0), job("J3", 1, 5.0), job("J4", 1, 20.0)]
    expected = {
        "easy": [(0.0, 10.0), (10.0, 15.0), (0.0, 5.0), (15.0, 35.0)],
        "fcfs": [(0.0, 10.0), (10.0, 15.0), (15.0, 20.0), (15.0, 35.0)],  # J3 waits behind J2
        "first-fit": [(0.0, 10.0), (20.0, 25.0), (0.0, 5.0), (0.0, 20.0)],  # J4 delays J2 to 20
    }
    for name, want in expected.items():
        sim = Simulation(ONE_MACHINE, jobs, make_broker(name), compiled=compiled)
        result = sim.run()
        assert times(sim) == want, name
        # J2's, made at 0 for 10; then, J2 holding all 4 cpu, the head J4's, made at 10 for 15
        reserved = [[0.0, 10.0, "started"], [10.0, 15.0, "started"]] if name == "easy" else []
        assert result.reservations[["made", "start", "outcome"]].values.tolist() == reserved, name


@pytest.mark.parametrize("compiled", [False, True])
def test_easy_picks_the_machine_where_the_head_starts_first(compiled):
    cluster = ClusterSpec(("cpu", "memory"), ((4.0, 100.0), (4.0, 100.0)))
    jobs = [job("long", 3, 30.0), job("short", 3, 10.0), job("head", 2, 5.0)]
    sim = Simulation(cluster, jobs, make_broker("easy"), compiled=compiled)
    result = sim.run()
    # long on machine 0 (free 1 till 30), short on machine 1 (free 1 till 10): head reserved on 1 at 10
    assert times(sim) == [(0.0, 30.0), (0.0, 10.0), (10.0, 15.0)]
    assert result.makespan == 30.0
    assert [g.machine for g in sim.record.groups] == [0, 1, 1]


def test_work_conserving_brokers_never_see_a_reservation():
    jobs = [job(f"j{i}", 1 + i % 3, 1.0 + i) for i in range(8)]
    sim = Simulation(ONE_MACHINE, jobs, make_broker("first-fit"))
    sim.run()
    assert sim.record.cancelled_reservations == 0
    assert np.all(sim.tasks.task_reserved == 0)


def test_a_profile_adds_the_running_groups_ends_in_the_order_they_were_made():
    """Machine 0 runs group 1 (0.1 cpu) and group 8 (0.2 cpu), both ending at 10; its free cpu now is
    (1 - 0.1) - 0.2 = 0.7. At 10 the profile adds group 1's 0.1, then group 8's 0.2: (0.7 + 0.1) + 0.2 = 1.0,
    where the other order gives (0.7 + 0.2) + 0.1 = 0.9999999999999999. (A set holding 1 and 8 lists 8
    first: the order must not be the set's.)"""
    cluster = ClusterSpec(("cpu", "memory"), ((1.0, 100.0), (1.0, 100.0)))
    cpu = [0.05, 0.1, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.2]
    jobs = [JobSpec(f"J{k}", 0.0, (TaskSpec("t", 1, {"cpu": c, "memory": 0.0}, 10.0),)) for k, c in enumerate(cpu)]
    sim = Simulation(cluster, jobs)
    view = sim.next_decision()
    sim.apply([Decision(0 if k in (1, 8) else 1, position(view, f"J{k}")) for k in range(9)])
    view = sim.next_decision()
    assert sim.record.groups.columns()["machine"].tolist() == [1, 0, 1, 1, 1, 1, 1, 1, 0]
    profile_times, free = view.free_profile(0)
    assert free[0, 0] == (1.0 - 0.1) - 0.2 == 0.7
    assert profile_times.tolist() == [0.0, 10.0] and free[1, 0] == (0.7 + 0.1) + 0.2 == 1.0
    assert (0.7 + 0.2) + 0.1 != 1.0
