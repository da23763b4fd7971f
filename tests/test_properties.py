"""Property-based robustness: random small workloads, clusters, brokers and faults.

Whatever the workload and the broker (every registered heuristic, and one that
answers at random, often invalidly), resources stay within [0, capacity], time
never runs backwards, every instance ends exactly once, and an invalid decision
raises `InvalidDecisionError` with the state left as it was.
"""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import BROKERS, LEARNED, make_broker
from cloudsim import (
    ClusterSpec,
    Decision,
    InvalidDecisionError,
    JobSpec,
    Simulation,
    SimulationStalledError,
    TaskSpec,
)
from cloudsim.engine.faults import RandomFaults

EPS = 1e-9
HEURISTICS = sorted(n for n in BROKERS if n not in LEARNED)


@st.composite
def clusters(draw) -> ClusterSpec:
    machines = draw(st.integers(1, 4))
    rows = [(draw(st.integers(1, 10)), draw(st.integers(1, 10))) for _ in range(machines)]
    return ClusterSpec(("cpu", "memory"), tuple(rows))


@st.composite
def workloads(draw, cluster: ClusterSpec) -> list[JobSpec]:
    """1-6 jobs of 1-3 tasks; every task fits the largest machine; parents among earlier tasks."""
    capacity = np.array(cluster.capacities)
    jobs = []
    for j in range(draw(st.integers(1, 6))):
        machine = capacity[draw(st.integers(0, len(capacity) - 1))]
        tasks = []
        for t in range(draw(st.integers(1, 3))):
            share = [draw(st.floats(0.0, 1.0)) for _ in machine]
            parents = tuple(p for p in range(t) if draw(st.booleans()))
            tasks.append(TaskSpec(t, draw(st.integers(1, 4)),
                                  {"cpu": share[0] * machine[0], "memory": share[1] * machine[1]},
                                  float(draw(st.integers(0, 10))), parents))
        jobs.append(JobSpec(j, float(draw(st.integers(0, 20))), tuple(tasks)))
    return jobs


class ChaosBroker:
    """Answers at random: a fit pair, or an out-of-range index, a count too large, a
    pair that does not fit, a wrong type, or None."""

    name = "chaos"

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def decide(self, view):
        roll = self.rng.random()
        machines, tasks = view.fit_pairs
        if roll < 0.85 and len(machines):  # mostly valid, so that runs get deep before a bad answer
            k = int(self.rng.integers(len(machines)))
            return Decision(int(machines[k]), int(tasks[k]), 1)
        if roll < 0.9:
            return None
        if roll < 0.96 and view.num_tasks:  # any machine, any count: often too many or no fit
            return Decision(int(self.rng.integers(view.num_machines)), int(self.rng.integers(view.num_tasks)),
                            int(self.rng.integers(0, 6)))
        if roll < 0.98:
            return (int(self.rng.integers(-1, view.num_machines + 1)), int(self.rng.integers(-1, view.num_tasks + 1)))
        return "start something"


class Inspector:
    """Wraps a broker: checks the state at every decision and keeps a copy of it."""

    def __init__(self, broker) -> None:
        self.broker = broker
        self.name = getattr(broker, "name", "broker")
        self.last_time = -np.inf
        self.sim: Simulation | None = None
        self.snapshot = None

    def decide(self, view):
        assert view.time >= self.last_time, "time went backwards"
        self.last_time = view.time
        assert (view.free >= -EPS).all(), f"negative free resources at t={view.time}: {view.free}"
        assert (view.free <= view.capacity + EPS).all(), f"free above capacity at t={view.time}"
        s = self.sim
        self.snapshot = (s.state.free.copy(), s.tasks.task_started.copy(), s.state.up.copy(), s.record.decisions,
                         s.tasks.ready.copy())
        return self.broker.decide(view)


def run(cluster, jobs, broker, tick, faults, on_failure):
    inspector = Inspector(broker)
    sim = Simulation(cluster, jobs, inspector, tick=tick, faults=faults, on_failure=on_failure, max_idle_ticks=200)
    inspector.sim = sim
    return sim, inspector


def check_finished_run(sim: Simulation, result, jobs) -> None:
    submitted = sum(j.instances for j in jobs)
    s = result.summary
    assert s["instances_finished"] + s["instances_failed"] == submitted
    runs = result.instances()
    final = runs[runs.outcome != "requeued"]
    assert len(final) == submitted and not final.duplicated(["job_id", "task_id", "instance"]).any()
    numbers = final.groupby(["job_id", "task_id"]).instance.agg(["min", "max", "count"])
    assert (numbers["min"] == 0).all() and (numbers["max"] == numbers["count"] - 1).all()  # exactly 0..n-1
    assert (runs.outcome == "requeued").sum() == s["instance_restarts"]
    groups = result.groups
    assert (groups.end >= groups.start).all()
    # Everything given back at the end, exactly: an empty machine keeps no rounding residue.
    assert np.array_equal(sim.state.free, sim.state.capacity)
    # No machine above capacity at any instant: usage sweeps over each machine's starts and ends.
    demand = sim.tasks.task_demand[groups.task.to_numpy()] * groups.instances.to_numpy()[:, None]
    for machine in np.unique(groups.machine):
        on = (groups.machine == machine).to_numpy()
        times = np.concatenate([groups.start[on], groups.end[on]])
        deltas = np.concatenate([demand[on], -demand[on]])
        order = np.lexsort((np.r_[np.ones(on.sum()), np.zeros(on.sum())], times))  # ends before starts
        usage = np.cumsum(deltas[order], axis=0)
        assert (usage <= sim.state.capacity[machine] + 1e-9).all()
    # A task starts only after its job arrived and its parents finished.
    tasks = result.tasks
    assert (tasks.start_time >= tasks.submit_time).all()
    finish = {(r.job_id, r.task_id): r.finish_time for r in tasks.itertuples()}
    for job in jobs:
        for task in job.tasks:
            start = tasks[(tasks.job_id == job.id) & (tasks.task_id == task.id)].start_time.iloc[0]
            assert all(start >= finish[(job.id, p)] for p in task.parents)


settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


@settings(max_examples=60)
@given(data=st.data(), broker=st.sampled_from(HEURISTICS), tick=st.sampled_from([None, 1.0]),
       seed=st.integers(0, 2**16), faulty=st.booleans(), on_failure=st.sampled_from(["requeue", "fail"]))
def test_every_heuristic_keeps_the_state_sound(data, broker, tick, seed, faulty, on_failure):
    cluster = data.draw(clusters())
    jobs = data.draw(workloads(cluster))
    faults = RandomFaults(data.draw(st.floats(20, 100)), data.draw(st.floats(1, 10)), seed=seed) if faulty else None
    sim, _ = run(cluster, jobs, make_broker(broker, seed=seed), tick, faults, on_failure)
    check_finished_run(sim, sim.run(), jobs)  # every heuristic is work-conserving: it never stalls


@settings(max_examples=60)
@given(data=st.data(), tick=st.sampled_from([None, 1.0]), seed=st.integers(0, 2**16), faulty=st.booleans())
def test_a_random_broker_either_finishes_soundly_or_is_stopped_with_the_state_intact(data, tick, seed, faulty):
    cluster = data.draw(clusters())
    jobs = data.draw(workloads(cluster))
    faults = RandomFaults(50, 5, seed=seed) if faulty else None
    sim, inspector = run(cluster, jobs, ChaosBroker(seed), tick, faults, "requeue")
    try:
        result = sim.run()
    except InvalidDecisionError:
        free, started, up, decisions, ready = inspector.snapshot
        assert np.array_equal(sim.state.free, free) and np.array_equal(sim.tasks.task_started, started)
        assert (np.array_equal(sim.state.up, up) and sim.record.decisions == decisions
                and np.array_equal(sim.tasks.ready, ready))
    except SimulationStalledError:
        # It may keep answering None in event mode; nothing may have been lost meanwhile.
        assert sim.tasks.task_finished.sum() + sim.tasks.task_failed.sum() <= sum(j.instances for j in jobs)
    else:
        check_finished_run(sim, result, jobs)
