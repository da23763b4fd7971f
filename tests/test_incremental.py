"""Incremental pair scoring (`agents.incremental.BestPairs`) decides exactly as scoring every pair does.

Random clusters and workloads are built so that ties are common: capacities,
demands and durations come from a few values, so many pairs score the same and
the tie rule (the first pair in machine-major order) decides. Machine failures
and repairs change rows without any start. Every scoring broker runs twice on
the same episode, once keeping its best pairs between decisions and once scoring
every pair at every decision, and the two decision sequences must be equal.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import incremental, make_broker
from agents.heuristics import Packer, PairScore, Tetris, TetrisStar, Windowed
from agents.incremental import KEPT
from cloudsim import ClusterSpec, Decision, JobSpec, MachineEvent, Simulation, TaskSpec
from cloudsim.engine.broker import as_plan

SCORERS = {
    "tetris": Tetris,
    "packer": Packer,
    "tetris-star": TetrisStar,
    "tetris-star-0.2": lambda: TetrisStar(0.2),
}


@st.composite
def episodes(draw):
    machines = draw(st.integers(1, 14))
    sizes = [(4.0, 4.0), (8.0, 4.0), (8.0, 8.0)]
    rows = tuple(sizes[draw(st.integers(0, len(sizes) - 1))] for _ in range(machines))
    cluster = ClusterSpec(("cpu", "memory"), rows)
    jobs = []
    # More distinct tasks than a row keeps, so rows run out of kept tasks and are rescored.
    for j in range(draw(st.integers(1, 3 + KEPT))):
        tasks = []
        for t in range(draw(st.integers(1, 3))):
            parents = tuple(p for p in range(t) if draw(st.booleans()))
            cpu, memory = draw(st.sampled_from([0.0, 1.0, 2.0, 4.0])), draw(st.sampled_from([0.5, 1.0, 2.0, 4.0]))
            tasks.append(TaskSpec(t, draw(st.integers(1, 6)), {"cpu": cpu, "memory": memory},
                                  float(draw(st.sampled_from([0, 1, 2, 5]))), parents))
        jobs.append(JobSpec(j, float(draw(st.integers(0, 8))), tuple(tasks)))
    events = []
    for _ in range(draw(st.integers(0, 4))):
        machine, at = draw(st.integers(0, machines - 1)), float(draw(st.integers(0, 10)))
        events += [MachineEvent(at, machine, draw(st.sampled_from(["down", "failed"]))),
                   MachineEvent(at + draw(st.integers(1, 5)), machine, "up")]
    return cluster, jobs, events


def decisions(broker, cluster, jobs, events) -> list[tuple[int, int, int]]:
    """(machine, global task, count) of every decision of one episode."""
    sim = Simulation(cluster, jobs, machine_events=events, max_idle_ticks=50)
    made = []
    while (view := sim.next_decision()) is not None:
        plan = as_plan(broker.decide(view))  # a plan's first decision: one decision at a time
        decision = plan[0] if plan else None
        if decision is not None:
            made.append((decision.machine, int(view.task_index[decision.task]), decision.count))
        sim.apply(decision)
    return made


def scorer(name: str, incremental: bool) -> PairScore:
    broker = SCORERS[name]()
    broker.incremental_from = 1 if incremental else 10**9
    broker.compiled_rounds = False  # one pair per call: kept best pairs, or every pair scored
    return broker


@pytest.mark.parametrize("kept", [1, 2, KEPT])
@pytest.mark.parametrize("name", sorted(SCORERS))
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(episode=episodes())
def test_incremental_scoring_decides_as_scoring_every_pair(name, kept, episode, monkeypatch):
    # Rows that keep fewer tasks run out of them often, and are rescored whole then.
    monkeypatch.setattr(incremental, "KEPT", kept)
    cluster, jobs, events = episode
    assert decisions(scorer(name, True), cluster, jobs, events) == decisions(scorer(name, False), cluster, jobs, events)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(episode=episodes(), size=st.integers(1, 4))
def test_incremental_scoring_in_a_task_window(episode, size):
    cluster, jobs, events = episode
    windowed = [Windowed(scorer("tetris", incremental), size) for incremental in (True, False)]
    assert decisions(windowed[0], cluster, jobs, events) == decisions(windowed[1], cluster, jobs, events)


class ScoreEveryPair:
    """The reference: ``inner.score`` over every fit pair at every decision, the first best pair."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def decide(self, view):
        machines, tasks = view.fit_pairs
        if len(machines) == 0:
            return None
        best = int(np.argmax(self.inner.score(view, machines, tasks)))
        return Decision(int(machines[best]), int(tasks[best]))


@pytest.mark.parametrize("kept", [1, 2, KEPT])
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(episode=episodes())
def test_incremental_deepjs_decides_as_its_fitness_over_every_pair(kept, episode, monkeypatch):
    """DeepJS's score reads waiting counts, which change at every start: the changed task leaves
    every row and comes back with its new fitness. A row that keeps fewer tasks than fit it must not
    keep the changed task behind its kept ones (a task it does not keep may rank above it there):
    with 2 kept, that made other decisions than scoring every pair until fixed."""
    monkeypatch.setattr(incremental, "KEPT", kept)
    cluster, jobs, events = episode
    deepjs = make_broker("deepjs")
    deepjs.incremental_from = 1
    reference = ScoreEveryPair(make_broker("deepjs"))
    assert decisions(deepjs, cluster, jobs, events) == decisions(reference, cluster, jobs, events)


def test_deepjs_scores_each_pair_alone():
    """The fitness incremental DeepJS ranks by gives each pair the same float in any batch."""
    fitness = make_broker("deepjs").fitness
    raw = np.random.default_rng(0).uniform(0, 10, size=(3000, 6))
    whole = fitness(raw)
    assert all(np.array_equal(fitness(raw[a:b]), whole[a:b]) for a, b in [(0, 1), (5, 9), (17, 2900)])


def test_ties_go_to_the_first_machine_then_the_first_task():
    """Two idle machines and two tasks with the same score: (machine 0, task 0) first; after it,
    machine 1 (untouched, same score) beats machine 0, whose free resources shrank."""
    cluster = ClusterSpec.uniform(2, {"cpu": 4, "memory": 4})
    same = {"cpu": 1.0, "memory": 1.0}
    jobs = [JobSpec("a", 0.0, (TaskSpec(1, 1, same, 1.0), TaskSpec(2, 1, same, 1.0)))]
    broker = scorer("tetris", True)
    # Scores: free (4, 4) . demand (1, 1) = 8 on both machines for both tasks.
    assert decisions(broker, cluster, jobs, []) == [(0, 0, 1), (1, 1, 1)]


def test_one_broker_serves_episode_after_episode():
    """What a broker keeps belongs to one episode: a second episode starts afresh."""
    cluster = ClusterSpec.uniform(3, {"cpu": 4, "memory": 4})
    jobs = [JobSpec(j, float(j), (TaskSpec(1, 2, {"cpu": 1.0 + j, "memory": 1.0}, 2.0),)) for j in range(3)]
    broker = scorer("packer", True)
    first = decisions(broker, cluster, jobs, [])
    assert decisions(broker, cluster, jobs, []) == first == decisions(scorer("packer", False), cluster, jobs, [])


class NotANumber(PairScore):
    name = "nan"

    def score(self, view, machines, tasks):
        return np.full(len(machines), np.nan)


def test_a_nan_score_is_refused_with_the_broker_named():
    broker = NotANumber()
    broker.incremental_from = 1
    sim = Simulation(ClusterSpec.uniform(1, {"cpu": 1}), [JobSpec(1, 0.0, (TaskSpec(1, 1, {"cpu": 1}, 1.0),))])
    with pytest.raises(ValueError, match="broker 'nan' at t=0.0: a pair's score is NaN"):
        broker.decide(sim.next_decision())


def test_small_clusters_score_every_pair():
    """Below incremental_from machines the broker keeps nothing between decisions."""
    broker = Tetris()
    broker.compiled_rounds = False
    sim = Simulation(ClusterSpec.uniform(2, {"cpu": 2, "memory": 2}),
                     [JobSpec(1, 0.0, (TaskSpec(1, 1, {"cpu": 1, "memory": 1}, 1.0),))])
    assert broker.decide(sim.next_decision()) == Decision(0, 0)
    assert broker.best_pairs is None


def groups_of(result):
    return result.groups[["task", "machine", "first_instance", "instances", "start", "end", "outcome"]]


@pytest.mark.parametrize("name", ["tetris", "packer"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(episode=episodes(), tick=st.sampled_from([None, 1.0]))
def test_a_compiled_round_starts_what_scoring_every_pair_starts_one_at_a_time(name, episode, tick):
    """`agents.kernels.state_round` plans the whole round by machine state; the reference scores every fit pair at
    every decision. Same instance groups, same number of decisions, ties included."""
    cluster, jobs, events = episode
    runs = [Simulation(cluster, jobs, broker, tick=tick, machine_events=events, max_idle_ticks=50).run()
            for broker in (SCORERS[name](), scorer(name, False))]
    assert groups_of(runs[0]).equals(groups_of(runs[1]))
    assert runs[0].summary["decisions"] == runs[1].summary["decisions"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(episode=episodes(), tick=st.sampled_from([None, 1.0]))
def test_deepjs_plans_its_round_by_machine_state_as_it_decides_pair_by_pair(episode, tick):
    """`agents.kernels.state_round` scores each distinct machine state once and plans the whole round;
    the reference scores every fit pair at every decision. Same instance groups and decisions, ties,
    failures and repairs included."""
    cluster, jobs, events = episode
    compiled = make_broker("deepjs")
    compiled.incremental_from = 1
    runs = [Simulation(cluster, jobs, broker, tick=tick, machine_events=events, max_idle_ticks=50).run()
            for broker in (compiled, ScoreEveryPair(make_broker("deepjs")))]
    assert groups_of(runs[0]).equals(groups_of(runs[1]))
    assert runs[0].summary["decisions"] == runs[1].summary["decisions"]


def test_deepjs_round_with_a_nan_fitness_is_refused_with_the_broker_named():
    deepjs = make_broker("deepjs")
    deepjs.incremental_from = 1
    weights = list(deepjs.fitness.network.weights)
    weights[0] = np.full_like(weights[0], np.nan)
    deepjs.fitness.network.weights = tuple(weights)
    sim = Simulation(ClusterSpec.uniform(2, {"cpu": 2, "memory": 2}),
                     [JobSpec(1, 0.0, (TaskSpec(1, 1, {"cpu": 1, "memory": 1}, 1.0),))])
    with pytest.raises(ValueError, match="broker 'deepjs' at t=0.0: a pair's score is NaN"):
        deepjs.decide(sim.next_decision())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(episode=episodes(), size=st.integers(1, 4))
def test_a_compiled_round_in_a_task_window_stops_where_a_backlog_task_would_enter(episode, size):
    cluster, jobs, events = episode
    runs = [Simulation(cluster, jobs, Windowed(broker, size), machine_events=events, max_idle_ticks=50).run()
            for broker in (Tetris(), scorer("tetris", False))]
    assert groups_of(runs[0]).equals(groups_of(runs[1]))
    assert runs[0].summary["decisions"] == runs[1].summary["decisions"]


def test_a_compiled_packer_scores_a_resource_a_machine_lacks_as_zero():
    # Machine 0 has no gpu: the gpu term of its pairs is 0, not a division by zero. Scores as shares of
    # capacity: B (cpu 1, gpu 1) fits machine 1 only, 1 * 1/4 + 1 * 1 = 1.25, the best pair, first. Then A
    # (cpu 1, gpu 0): machine 0, 1 * 1/4 + 0 = 0.25, beats machine 1, 3/4 * 1/4 + 0 = 0.1875.
    cluster = ClusterSpec(("cpu", "gpu"), ((4.0, 0.0), (4.0, 1.0)))
    jobs = [JobSpec("a", 0.0, (TaskSpec("A", 1, {"cpu": 1.0, "gpu": 0.0}, 1.0),
                               TaskSpec("B", 1, {"cpu": 1.0, "gpu": 1.0}, 1.0)))]
    for broker in (Packer(), scorer("packer", False)):
        sim = Simulation(cluster, jobs, broker)
        result = sim.run()
        placed = result.groups.sort_values("task")["machine"].tolist()
        assert placed == [0, 1]


class ScaledTetris(Tetris):
    name = "scaled-tetris"

    def score(self, view, machines, tasks):
        return -super().score(view, machines, tasks)  # the worst alignment first


def test_a_subclass_that_changes_the_score_is_scored_by_it_not_compiled():
    cluster = ClusterSpec.uniform(2, {"cpu": 4, "memory": 4})
    sim = Simulation(cluster, [JobSpec("a", 0.0, (TaskSpec(1, 1, {"cpu": 1, "memory": 1}, 1.0),))])
    answer = ScaledTetris().decide(sim.next_decision())
    assert isinstance(answer, Decision)  # one pair per call, by its own score


class MostWaiting(PairScore):
    """The task with the most waiting instances first (a score that reads the waiting counts)."""

    name = "most-waiting"
    reads_waiting = True

    def score(self, view, machines, tasks):
        return view.waiting[tasks].astype(float)


def test_a_changed_task_is_not_kept_behind_tasks_a_row_does_not_keep(monkeypatch):
    """Machines of 3 and 2 cpu; tasks T0 (1 instance of 2 cpu), T1 (1 of 1 cpu), T2 (2 of 1 cpu); rows
    keep 2 tasks; the task with the most waiting goes first, the first pair on ties. By hand: T2 (2
    waiting) on machine 0; then all have 1: T0 on machine 0, which is then full; T1 on machine 1 (tied
    with T2, earlier); T2 there. Machine 1's row first keeps T2(2) and T0(1), not T1(1). After the
    first start T2 has 1: it must not rejoin the row behind T0, where T1, not kept, ranks above it;
    kept there, T2 was picked before T1 once T0 ran out."""
    monkeypatch.setattr(incremental, "KEPT", 2)
    cluster = ClusterSpec(("cpu",), ((3.0,), (2.0,)))
    jobs = [JobSpec(0, 0.0, tuple(TaskSpec(t, n, {"cpu": cpu}, 1.0)
                                  for t, (n, cpu) in enumerate([(1, 2.0), (1, 1.0), (2, 1.0)])))]
    broker = MostWaiting()
    broker.incremental_from = 1
    assert decisions(broker, cluster, jobs, []) == [(0, 2, 1), (0, 0, 1), (1, 1, 1), (1, 2, 1)]
