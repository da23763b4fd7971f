"""The engine's compiled path gives what its Python path gives, bit for bit, and is taken only where it applies.

`Simulation.run` takes the compiled path (`cloudsim.engine.compiled`) for a broker that declares a compiled
round (first-fit, random, the pair scores Tetris, Packer, Tetris* and DeepJS, the queue policies FCFS, SJF,
HRRN, DRF, best-fit, least-load and round-robin); ``compiled=False`` forces the Python path, where the broker's own
``decide`` makes the plan and
the engine checks and applies it. The two must leave the same task, job and group tables, the same
summary and the same machine state, on every workload: ties of submit and end times, DAGs, tasks that
fill machines exactly, zero durations, shares that do not add up exactly in floating point.
"""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cloudsim.engine.compiled
import cloudsim.engine.simulation
from agents import make_broker
from agents.deepjs import DeepJS, NumpyFitness, load_policy
from agents.deepjs.config import DeepJSConfig
from agents.heuristics.gpu import target_options
from agents.heuristics import EasyBackfilling, FirstFit, ShortestJobFirst, Tetris, TetrisStar
from cloudsim.engine.broker import CompiledRound
from cloudsim.engine.compiled import CompiledState
from cloudsim.engine.specs import DeviceRequest
from cloudsim.engine.record import by_end_time
from cloudsim import ClusterSpec, JobSpec, MachineEvent, Simulation, TaskSpec
from cloudsim.engine.faults import RandomFaults
from cloudsim.engine.fragmentation import GpuSampler, TargetWorkload
from traces import alibaba_like, iter_alibaba_like


def built(broker, jobs):
    """The broker of that name; FGD's target workload the jobs' own (as a run from the command line gives it)."""
    return make_broker(broker, **target_options(broker, TargetWorkload.of(jobs)))


def both_paths(cluster, jobs, broker="first-fit", sampled=False, **options):
    """The run on the Python path and on the compiled path, with the simulations; ``sampled``: each with a
    `GpuSampler` as its ``on_round``, whose samples must be the same."""
    runs, samples = [], []
    for compiled in (False, True):
        sampler = GpuSampler(cluster, TargetWorkload.of(jobs)) if sampled else None
        sim = Simulation(cluster, jobs, built(broker, jobs), compiled=compiled, on_round=sampler, **options)
        runs.append((sim, sim.run()))
        samples.append(sampler and sampler.samples)
    assert samples[0] == samples[1]
    return runs


def assert_same_run(python, compiled):
    (sim_p, p), (sim_c, c) = python, compiled
    for table in ("tasks", "jobs", "groups", "reservations"):
        pd.testing.assert_frame_equal(getattr(p, table), getattr(c, table), check_exact=True)
    summary = [pd.Series({k: v for k, v in r.summary.items() if "wall" not in k}, dtype=object) for r in (p, c)]
    assert summary[0].equals(summary[1])  # (NaN where NaN)
    assert np.array_equal(sim_p.state.free, sim_c.state.free) and np.array_equal(sim_p.state.running,
                                                                                 sim_c.state.running)
    assert sim_c.tasks.unfinished_jobs == 0 and sim_c.tasks.running_instances == 0 and len(sim_c.tasks.ready) == 0


@st.composite
def workloads(draw, min_resources=1):
    """A cluster of 1-5 machines of ``min_resources``-3 resources, 1-12 jobs of 1-4 tasks with DAGs and a tick or
    none: submit times and
    durations from a few integers (ties everywhere, zero durations among them), demands from shares that
    fill a machine exactly (1/2, 1/4) or not quite in floating point (1/3, 0.1, 0.05)."""
    resources = ("cpu", "memory", "disk")[:draw(st.integers(min_resources, 3))]
    sizes = [tuple(float(draw(st.sampled_from([1, 2, 10, 64]))) for _ in resources)
             for _ in range(draw(st.integers(1, 5)))]
    cluster = ClusterSpec(resources, tuple(sizes))
    smallest = np.min(np.array(sizes), axis=0)
    jobs = []
    for j in range(draw(st.integers(1, 12))):
        tasks = []
        for t in range(draw(st.integers(1, 4))):
            share = [draw(st.sampled_from([0.0, 0.05, 0.1, 0.25, 1 / 3, 0.5, 1.0])) for _ in resources]
            parents = tuple(p for p in range(t) if draw(st.booleans()))
            tasks.append(TaskSpec(t, draw(st.integers(1, 30)), dict(zip(resources, (s * m for s, m in
                                                                                    zip(share, smallest)))),
                                  float(draw(st.sampled_from([0, 1, 2, 3, 5, 0.1]))), parents))
        jobs.append(JobSpec(j, float(draw(st.sampled_from([0, 0, 1, 2, 3, 7]))), tuple(tasks)))
    return cluster, jobs, draw(st.sampled_from([None, None, 1.0, 0.5]))


# The built-in brokers with a compiled round
COMPILED = ["first-fit", "tetris", "packer", "tetris-star", "fcfs", "sjf", "hrrn", "drf", "best-fit", "least-load",
            "round-robin", "random", "easy", "deepjs", "gpu-best-fit", "gpu-dot-product", "gpu-packing",
            "gpu-clustering", "fgd"]


@pytest.mark.parametrize("broker", COMPILED)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_compiled_round_is_its_python_path_group_for_group(broker, data):
    """Event-driven and with a fixed tick (1, or 0.5: ticks that fall between submit times and end times).
    DeepJS's features read cpu and memory: its clusters have both."""
    cluster, jobs, tick = data.draw(workloads(min_resources=2 if broker == "deepjs" else 1))
    python, compiled = both_paths(cluster, jobs, broker, tick=tick)
    assert_same_run(python, compiled)


@pytest.mark.parametrize("broker", COMPILED)
def test_compiled_on_alibaba_like_jobs_on_a_large_cluster(broker):
    """300 alibaba-like jobs (DAGs, thousands of instances) on 1,000 machines of two resources: thousands of
    groups, many machines freed and filled at once, long waiting queues (a pair score's states and task
    slots grow many times over)."""
    python, compiled = both_paths(ClusterSpec.uniform(1000, {"cpu": 96, "memory": 1}), alibaba_like(300, seed=3),
                                  broker)
    assert len(compiled[1].groups) > 1000
    assert_same_run(python, compiled)


@pytest.mark.parametrize("broker", COMPILED)
def test_a_full_queue_on_few_machines_is_the_same_on_both_paths(broker):
    """CloudSimPy's shape: few machines and a queue of hundreds of tasks that wait for a long time."""
    python, compiled = both_paths(ClusterSpec.uniform(3, {"cpu": 8, "memory": 1}), alibaba_like(80, seed=1), broker)
    assert_same_run(python, compiled)


@st.composite
def device_workloads(draw):
    """1-4 machines of cpu and memory with 0-4 GPUs each and a model attribute, 1-12 jobs of 1-3 tasks with DAGs:
    CPU tasks, shares (100-700 milli of one GPU) and whole GPUs (1-3), some accepting one model only, and a
    tick or none."""
    machines = draw(st.integers(1, 4))
    devices = tuple(draw(st.integers(0, 4)) for _ in range(machines))
    models = tuple(draw(st.sampled_from(["A", "B"])) for _ in range(machines))
    cpu = tuple(float(draw(st.sampled_from([2, 4, 8]))) for _ in range(machines))
    cluster = ClusterSpec(("cpu", "memory"), tuple((c, 1.0) for c in cpu), devices=devices,
                          attributes={"model": models})
    jobs = []
    for j in range(draw(st.integers(1, 12))):
        tasks = []
        for t in range(draw(st.integers(1, 3))):
            # a task some machine can hold: its devices and model
            m = draw(st.integers(0, machines - 1))
            kind = draw(st.sampled_from(["none", "share", "whole"] if devices[m] else ["none"]))
            request = None if kind == "none" else DeviceRequest(1, draw(st.sampled_from([100, 250, 500, 700]))) \
                if kind == "share" else DeviceRequest(draw(st.integers(1, min(3, devices[m]))), 1000)
            accepts = {"model": models[m]} if draw(st.booleans()) else ()
            demand = {"cpu": cpu[m] * draw(st.sampled_from([0.25, 0.5, 1 / 3, 1.0])),
                      "memory": draw(st.sampled_from([0.0, 0.1, 0.5]))}
            parents = tuple(p for p in range(t) if draw(st.booleans()))
            tasks.append(TaskSpec(t, draw(st.integers(1, 6)), demand, float(draw(st.sampled_from([0, 1, 2, 3, 0.5]))),
                                  parents, devices=request, accepts=accepts))
        jobs.append(JobSpec(j, float(draw(st.sampled_from([0, 0, 1, 2, 5]))), tuple(tasks)))
    return cluster, sorted(jobs, key=lambda job: job.submit_time), draw(st.sampled_from([None, None, 1.0, 0.5]))


def assert_same_devices(python, compiled):
    """The devices each group's instances took and the machines' devices at the end, on both paths."""
    (sim_p, _), (sim_c, _) = python, compiled
    assert sim_p.record.group_devices == sim_c.record.group_devices
    for name in ("device_free", "device_users", "device_rank"):
        assert np.array_equal(getattr(sim_p.state, name), getattr(sim_c.state, name)), name


@pytest.mark.parametrize("broker", CompiledRound.WITH_DEVICES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_compiled_round_with_devices_and_attributes_is_its_python_path(broker, data):
    """GPUs shared and whole, machines without any, model constraints: the same groups, and the same devices per
    instance (the engine's default rule), on both paths."""
    cluster, jobs, tick = data.draw(device_workloads())
    # sampled: its allocation and fragmentation after every round, empty ones too (no round runs in the event
    # that makes it due then), the same on both paths
    sampled = sum(cluster.devices) > 0 and data.draw(st.booleans())
    python, compiled = both_paths(cluster, jobs, broker, sampled=sampled, tick=tick)
    assert compiled[0].compiled_refusal() is None
    assert_same_run(python, compiled)
    assert_same_devices(python, compiled)


@pytest.mark.parametrize("broker", CompiledRound.WITH_DEVICES)
def test_devices_on_a_large_cluster_on_both_paths(broker):
    """300 machines of 0, 2 or 8 GPUs and two models, 400 jobs of shares, whole GPUs and CPU tasks arriving
    over time: thousands of groups, machines freed and filled by devices as much as by cpu, and a device log
    that grows."""
    rng = np.random.default_rng(5)
    devices = tuple(int(d) for d in rng.choice([0, 2, 8], size=300))
    models = tuple(str(m) for m in rng.choice(["A", "B"], size=300))
    cluster = ClusterSpec(("cpu", "memory"), tuple((32.0, 1.0) for _ in range(300)), devices=devices,
                          attributes={"model": models})
    jobs = []
    for j in range(400):
        kind = rng.integers(3)
        request = None if kind == 0 else DeviceRequest(1, int(rng.choice([200, 500]))) if kind == 1 else \
            DeviceRequest(int(rng.integers(1, 3)), 1000)
        accepts = {"model": str(rng.choice(["A", "B"]))} if rng.random() < 0.3 else ()
        jobs.append(JobSpec(j, float(j // 4), (TaskSpec(0, int(rng.integers(1, 40)), {"cpu": 2.0, "memory": 0.01},
                                                        float(rng.integers(1, 20)), devices=request,
                                                        accepts=accepts),)))
    python, compiled = both_paths(cluster, jobs, broker, sampled=True)
    assert len(compiled[1].groups) > 1000 and len(compiled[0].record.group_devices) > 500
    assert_same_run(python, compiled)
    assert_same_devices(python, compiled)


@pytest.mark.parametrize("broker", CompiledRound.WITH_DEVICES)
def test_tasks_that_wait_for_devices_round_after_round_on_both_paths(broker):
    """Four nodes of one GPU each, two models; whole-GPU tasks arrive faster than they end, so a queue of them
    waits round after round for a GPU (some for one model), while shares and CPU tasks come and start around
    them: the rounds pass over the tasks that fit nowhere, and test them again on the machines freed since."""
    rng = np.random.default_rng(11)
    cluster = ClusterSpec(("cpu", "memory"), ((8.0, 1.0),) * 4, devices=(1, 1, 1, 1),
                          attributes={"model": ("A", "B", "A", "B")})
    jobs = []
    for j in range(120):
        kind = int(rng.integers(3))
        request, duration = ((DeviceRequest(1, 1000), 9.0), (DeviceRequest(1, 600), 3.0), (None, 1.0))[kind]
        accepts = {"model": "A"} if kind == 0 and rng.random() < 0.3 else ()
        jobs.append(JobSpec(j, j * 0.5, (TaskSpec(0, int(rng.integers(1, 3)), {"cpu": 1.0, "memory": 0.1}, duration,
                                                  devices=request, accepts=accepts),)))
    python, compiled = both_paths(cluster, jobs, broker)
    waited = python[1].jobs.wait.to_numpy()
    assert waited.max() > 50 and (waited > 10).sum() > 20  # (a long queue, for many rounds)
    assert_same_run(python, compiled)
    assert_same_devices(python, compiled)


def test_machines_of_different_sizes_keep_their_pair_scores_apart():
    """Packer's states hold capacity beside free resources: two machines with the same free resources but
    different capacities score apart (shares), and Tetris on a chosen resource scores that one only."""
    cluster = ClusterSpec(("cpu", "memory"), ((8.0, 4.0), (16.0, 8.0), (8.0, 4.0), (4.0, 2.0)))
    jobs = [JobSpec(j, float(j % 3), (TaskSpec(0, 6, {"cpu": 2.0, "memory": 0.5 + j % 2}, 2.0 + j % 4),
                                      TaskSpec(1, 3, {"cpu": 4.0, "memory": 1.0}, 1.0, (0,))))
            for j in range(12)]
    for broker in ("packer", "tetris"):
        assert_same_run(*both_paths(cluster, jobs, broker))
    python = Simulation(cluster, jobs, Tetris(resources=("memory",)), compiled=False)
    compiled = Simulation(cluster, jobs, Tetris(resources=("memory",)), compiled=True)
    assert_same_run((python, python.run()), (compiled, compiled.run()))


def test_run_takes_the_compiled_path_only_where_it_applies():
    cluster = ClusterSpec.uniform(2, {"cpu": 4})
    jobs = [JobSpec(0, 0.0, (TaskSpec(0, 3, {"cpu": 1.0}, 2.0),))]
    assert Simulation(cluster, jobs, FirstFit()).compiled_refusal() is None
    assert "it has no broker" in Simulation(cluster, jobs).compiled_refusal()

    class Mine(FirstFit):  # decides otherwise: its decisions are not first-fit's round
        def decide(self, view):
            return super().decide(view)

    assert "changes decide() of FirstFit" in Simulation(cluster, jobs, Mine()).compiled_refusal()
    class Plain:  # a broker of its own
        def decide(self, view):
            return None

    assert "declares no compiled round" in Simulation(cluster, jobs, Plain()).compiled_refusal()
    assert "has no compiled round here" in Simulation(cluster, jobs, make_broker("fgd")).compiled_refusal()

    class Scored(Tetris):  # its own score: Tetris's compiled round is not its round
        def score(self, view, machines, tasks):
            return -super().score(view, machines, tasks)

    one_at_a_time = Tetris()
    one_at_a_time.compiled_rounds = False
    class Longest(ShortestJobFirst):  # its own priority: SJF's compiled round is not its round
        def priority(self, view):
            return -view.duration

    strict_sjf = ShortestJobFirst()
    strict_sjf.strict = True

    class LongestStar(TetrisStar):  # its own terms: Tetris*'s compiled round is not its round
        def terms(self, view, machines, tasks):
            return super().terms(view, machines, tasks)[:, ::-1]

    class NoBackfill(EasyBackfilling):  # its own rule: EASY's compiled round is not its round
        def decide_one(self, view):
            return None if view.reservations else super().decide_one(view)

    for broker in (Scored(), one_at_a_time, LongestStar(), Longest(), strict_sjf, NoBackfill()):
        assert "has no compiled round here" in Simulation(cluster, jobs, broker).compiled_refusal()
    assert Simulation(cluster, jobs, Tetris()).compiled_refusal() is None
    assert Simulation(cluster, jobs, TetrisStar(knob=1)).compiled_refusal() is None
    failing = [MachineEvent(1.0, 0, "failed"), MachineEvent(2.0, 0, "up")]
    for options, reason in (({"machine_events": failing}, "machine events"),
                            ({"faults": RandomFaults(mtbf=5.0, mttr=1.0, seed=0)}, "faults")):
        refusal = Simulation(cluster, jobs, FirstFit(), **options).compiled_refusal()
        assert reason in refusal
        with pytest.raises(ValueError, match=f"compiled=True: the compiled path does not apply: .*{reason}"):
            Simulation(cluster, jobs, FirstFit(), compiled=True, **options).run()
    gpus = ClusterSpec(("cpu",), ((4.0,), (4.0,)), devices=(2, 0))
    shares = [JobSpec(0, 0.0, (TaskSpec(0, 3, {"cpu": 1.0}, 2.0, devices=DeviceRequest(1, 500)),))]
    assert Simulation(gpus, shares, FirstFit()).compiled_refusal() is None
    for broker, where in ((Tetris(), Simulation), (FirstFit(), "streamed")):
        sim = Simulation(gpus, iter(shares), broker, stream_to="unused") if where == "streamed" else \
            Simulation(gpus, shares, broker)
        assert "devices or machine attributes" in sim.compiled_refusal()
    per_instance = [JobSpec(0, 0.0, (TaskSpec(0, 2, {"cpu": 1.0}, (1.0, 2.0)),))]
    assert "per-instance durations" in Simulation(cluster, per_instance, FirstFit()).compiled_refusal()
    with pytest.raises(ValueError, match="compiled must be None"):
        Simulation(cluster, jobs, FirstFit(), compiled="yes")


def test_a_subclass_that_keeps_decide_runs_compiled_and_gives_first_fits_run():
    class Renamed(FirstFit):
        name = "renamed"

    cluster = ClusterSpec.uniform(2, {"cpu": 4})
    jobs = [JobSpec(j, float(j), (TaskSpec(0, 5, {"cpu": 1.5}, 3.0),)) for j in range(4)]
    sim = Simulation(cluster, jobs, Renamed(), compiled=True)
    result = sim.run()
    # by hand: each job's 5 instances of 1.5 cpu on machines of 4 cpu: 2 per machine (1.0 left), 4 at t=0 ...
    assert result.summary["broker"] == "renamed"
    assert result.summary["makespan"] == Simulation(cluster, jobs, FirstFit(), compiled=False).run().makespan


def test_a_worked_example_by_hand():
    """Two machines of 4 cpu; job 0 at t=0: task a, 3 instances of 2 cpu for 5; job 1 at t=1: task b, 2
    instances of 3 cpu for 2. First-fit at t=0: machine 0 takes 2 of a, machine 1 takes 1 (2 cpu left);
    at t=1 b fits nowhere (2 cpu free on machine 1); at t=5 a's instances end and b starts, one on each
    machine (machine-major: machine 0 first), ending at 7."""
    cluster = ClusterSpec.uniform(2, {"cpu": 4})
    jobs = [JobSpec(0, 0.0, (TaskSpec("a", 3, {"cpu": 2.0}, 5.0),)),
            JobSpec(1, 1.0, (TaskSpec("b", 2, {"cpu": 3.0}, 2.0),))]
    result = Simulation(cluster, jobs, FirstFit(), compiled=True).run()
    groups = result.groups
    assert groups[["task_id", "machine", "instances", "start", "end"]].values.tolist() == [
        ["a", 0, 2, 0.0, 5.0], ["a", 1, 1, 0.0, 5.0], ["b", 0, 1, 5.0, 7.0], ["b", 1, 1, 5.0, 7.0]]
    assert result.makespan == 7.0 and result.summary["decisions"] == 4


def test_a_worked_example_of_tetris_by_hand():
    """Machines of 4 and 6 cpu; at t=0 task a (3 instances of 2 cpu for 5) and task b (1 of 3 cpu for 2).
    Tetris scores free x demand: (m1, b) 18 first (m1 keeps 3); then (m0, a) 8 against (m1, a) 6 (m0 keeps
    2); then (m1, a) 6 against (m0, a) 4 (m1 keeps 1); then (m0, a) 4, the only fit. a's third instance
    follows its second (on m1), not its first (on m0): it begins a group of its own on m0."""
    cluster = ClusterSpec(("cpu",), ((4.0,), (6.0,)))
    jobs = [JobSpec(0, 0.0, (TaskSpec("a", 3, {"cpu": 2.0}, 5.0), TaskSpec("b", 1, {"cpu": 3.0}, 2.0)))]
    result = Simulation(cluster, jobs, Tetris(), compiled=True).run()
    assert result.groups[["task_id", "machine", "first_instance", "instances", "start", "end"]].values.tolist() == [
        ["b", 1, 0, 1, 0.0, 2.0], ["a", 0, 0, 1, 0.0, 5.0], ["a", 1, 1, 1, 0.0, 5.0], ["a", 0, 2, 1, 0.0, 5.0]]
    assert result.makespan == 5.0 and result.summary["decisions"] == 4


@pytest.mark.parametrize("broker, starts", [("fcfs", [0.0, 10.0, 16.0]), ("hrrn", [0.0, 10.0, 16.0]),
                                            ("sjf", [0.0, 12.0, 10.0])])
def test_a_worked_example_of_the_queue_policies_by_hand(broker, starts):
    """One machine of 2 cpu; a (10 long) at t=0, b (6 long) at t=1, c (2 long) at t=9, each filling the
    machine. At t=10, b has waited 9 (response ratio (9 + 6) / 6 = 2.5) and c 1 ((1 + 2) / 2 = 1.5): HRRN
    starts b (10-16) then c (16-18), as FCFS does; SJF starts c (10-12) then b (12-18)."""
    cluster = ClusterSpec.uniform(1, {"cpu": 2.0})
    jobs = [JobSpec(name, at, (TaskSpec(0, 1, {"cpu": 2.0}, length),))
            for name, at, length in (("a", 0.0, 10.0), ("b", 1.0, 6.0), ("c", 9.0, 2.0))]
    result = Simulation(cluster, jobs, make_broker(broker), compiled=True).run()
    assert result.tasks.start_time.tolist() == starts and result.makespan == 18.0


def test_round_robin_goes_on_from_its_turn_in_its_next_run():
    """Five machines of 4 cpu, one task of 3 instances of 1 cpu: a first run starts them on machines 0, 1, 2; the
    same broker's next run goes on from machine 3: 3, 4, then 0. Both paths, the turn kept by the broker."""
    cluster = ClusterSpec.uniform(5, {"cpu": 4.0})
    jobs = [JobSpec(0, 0.0, (TaskSpec("a", 3, {"cpu": 1.0}, 1.0),))]
    for compiled in (False, True):
        broker = make_broker("round-robin")
        runs = [Simulation(cluster, jobs, broker, compiled=compiled).run().groups.machine.tolist() for _ in range(2)]
        assert runs == [[0, 1, 2], [3, 4, 0]] and broker.next_machine == 1


def test_random_draws_from_its_own_generator_run_after_run():
    """The compiled round draws from the broker's generator itself: a second run of the same broker goes on
    with the stream where the first left it, as its decide does, and the draws after the runs are the same."""
    cluster = ClusterSpec.uniform(6, {"cpu": 4.0, "memory": 1.0})
    jobs = alibaba_like(20, seed=2, max_instances=12)
    runs, after = {}, {}
    for compiled in (False, True):
        broker = make_broker("random")
        runs[compiled] = [Simulation(cluster, jobs, broker, compiled=compiled).run().groups for _ in range(2)]
        after[compiled] = broker.rng.integers(1 << 62, size=4).tolist()
    for python, compiled in zip(runs[False], runs[True]):
        pd.testing.assert_frame_equal(python, compiled, check_exact=True)
    assert not runs[True][0].equals(runs[True][1])  # (the second run drew other pairs)
    assert after[False] == after[True]


@pytest.mark.parametrize("seed", [0, 1, 2024])
def test_the_compiled_draws_are_numpy_integers_and_hand_the_state_back(seed):
    """`draw_below(words, n)` is ``Generator.integers(n)`` on a PCG64 generator's state: bounds on both sides of
    each of numpy's branches (n = 1 draws nothing; up to 2**32 from 32-bit halves, one buffered between draws;
    beyond, 64-bit outputs), in a mixed order; after them the generator set from the words draws on as numpy's
    own, a buffered half included."""
    from cloudsim.engine.kernels import draw_below, generator_state, restore_generator
    bounds = [1, 2, 3, 7, 1213, 2**31, 2**31 + 1, 2**32 - 1, 2**32, 2**32 + 1, 2**40 + 3, 2**62 + 5, 2**63 - 1]
    order = np.random.default_rng(seed + 1).choice(bounds, size=400).tolist() + [3]  # (the last leaves a half)
    numpy, ours = np.random.default_rng(seed), np.random.default_rng(seed)
    words = generator_state(ours)
    assert [draw_below(words, n) for n in order] == [int(numpy.integers(n)) for n in order]
    restore_generator(ours, words)
    assert ours.bit_generator.state == numpy.bit_generator.state
    assert ours.integers(1 << 32, size=3).tolist() == numpy.integers(1 << 32, size=3).tolist()


def test_random_with_another_bit_generator_keeps_the_python_path():
    """The compiled round draws as PCG64 does: random given an MT19937 generator runs its own decide (the
    default), says why, and refuses ``compiled=True`` with that reason."""
    cluster = ClusterSpec.uniform(3, {"cpu": 4.0, "memory": 1.0})
    jobs = alibaba_like(5, seed=1, max_instances=4)
    broker = make_broker("random")
    broker.rng = np.random.Generator(np.random.MT19937(3))
    sim = Simulation(cluster, jobs, broker)
    assert "draws from a MT19937 generator" in sim.compiled_refusal()
    summary = sim.run().summary
    assert summary["instances_finished"] == summary["instances"] > 0
    with pytest.raises(ValueError, match="compiled=True: the compiled path does not apply: .*MT19937"):
        Simulation(cluster, jobs, broker, compiled=True).run()


@pytest.mark.parametrize("knob, first, starts", [(0.5, "b", [0.0, 1.0]), (0.9, "a", [0.0, 10.0])])
def test_a_worked_example_of_tetris_star_by_hand(knob, first, starts):
    """One machine of 4 cpu; at t=0 task a (1 instance of 4 cpu for 10) and b (1 of 1 cpu for 1). Alignments
    (free/4 x demand/4): a 1, b 0.25, the maximum 1; shortness (1 / duration): a 0.1, b 1, the maximum 1. With
    knob 0.5: a 0.5 x 1 + 0.5 x 0.1 = 0.55 against b 0.5 x 0.25 + 0.5 x 1 = 0.625: b first (Packer would take a),
    a fits no more and starts when b ends at 1. With knob 0.9: a 0.91 against b 0.325: a first, b at 10."""
    cluster = ClusterSpec.uniform(1, {"cpu": 4.0})
    jobs = [JobSpec(0, 0.0, (TaskSpec("a", 1, {"cpu": 4.0}, 10.0), TaskSpec("b", 1, {"cpu": 1.0}, 1.0)))]
    sims = [Simulation(cluster, jobs, TetrisStar(knob=knob), compiled=compiled) for compiled in (True, False)]
    runs = [(sim, sim.run()) for sim in sims]
    groups = runs[0][1].groups
    assert groups["task_id"].tolist()[0] == first and groups["start"].tolist() == starts
    assert_same_run(runs[1], runs[0])


@pytest.mark.parametrize("rule, knob, message", [
    ("tetris-star", None, "rule 'tetris-star', and it alone, takes a knob"),
    ("shares", 0.5, "rule 'tetris-star', and it alone, takes a knob"),
    ("tetris-star", 1.5, "a float in \\[0, 1\\]"),
    ("tetris-star", 1, "a float in \\[0, 1\\]"),
])
def test_a_compiled_round_takes_a_knob_for_tetris_star_alone(rule, knob, message):
    from cloudsim.engine.broker import CompiledRound
    with pytest.raises(ValueError, match=message):
        CompiledRound(rule, (0,), knob=knob)


@pytest.mark.parametrize("rule, rng, message", [
    ("random", None, "rule 'random', and it alone, takes an rng"),
    ("first-fit", np.random.default_rng(0), "rule 'random', and it alone, takes an rng"),
    ("random", np.random.RandomState(0), "a numpy Generator"),
])
def test_a_compiled_round_takes_a_generator_for_random_alone(rule, rng, message):
    from cloudsim.engine.broker import CompiledRound
    with pytest.raises(ValueError, match=message):
        CompiledRound(rule, rng=rng)


@pytest.mark.parametrize("rule, columns, seed, message", [
    ("gpu-packing", (0,), None, "a GPU policy's rule, and it alone, takes a seed"),
    ("first-fit", (), 0, "a GPU policy's rule, and it alone, takes a seed"),
    ("gpu-best-fit", (0,), -1, "an int >= 0"),
    ("gpu-best-fit", (0,), True, "an int >= 0"),
    ("gpu-clustering", (), 0, "a GPU policy .* one \\(its cpu\\)"),
    ("gpu-clustering", (0, 1), 0, "a GPU policy .* one \\(its cpu\\)"),
    ("fgd", (0,), 0, "rule 'fgd', and it alone, takes a target"),
])
def test_a_compiled_round_takes_a_seed_and_a_cpu_column_for_a_gpu_policy_alone(rule, columns, seed, message):
    with pytest.raises(ValueError, match=message):
        CompiledRound(rule, columns=columns, seed=seed)
    with pytest.raises(ValueError, match="rule 'fgd', and it alone, takes a target"):
        CompiledRound("gpu-packing", columns=(0,), seed=0, target=TargetWorkload.of(
            [JobSpec(0, 0.0, (TaskSpec(0, 1, {"cpu": 1.0}, 1.0),))]))
    with pytest.raises(ValueError, match="takes a target: a cloudsim.engine.fragmentation.TargetWorkload"):
        CompiledRound("fgd", columns=(0,), seed=0, target="the jobs")


def test_a_gpu_policy_runs_compiled_only_where_its_round_is_its_decisions():
    """A built-in GPU policy takes the compiled path with its seed; a subclass that scores machines its own way,
    FGD without a target workload (it builds one from the pods it sees) or with its scores unrounded (fgd-exact)
    keep their own ``decide``."""
    from agents.heuristics.gpu import GpuBestFit, GpuPacking

    class Mine(GpuPacking):
        def machine_scores(self, view, task, machines):
            scores, devices = super().machine_scores(view, task, machines)
            return -scores, devices

    cluster = ClusterSpec(("cpu",), ((4.0,), (4.0,)), devices=(2, 1))
    jobs = [JobSpec(0, 0.0, (TaskSpec(0, 2, {"cpu": 1.0}, 1.0, devices=DeviceRequest(1, 500)),))]
    sim = Simulation(cluster, jobs, GpuBestFit(seed=7))
    assert sim.compiled_refusal() is None and sim._compiled_rule == CompiledRound("gpu-best-fit", columns=(0,), seed=7)
    target = TargetWorkload.of(jobs)
    for broker in (Mine(), make_broker("fgd"), make_broker("fgd-exact", target=target), GpuBestFit(seed=-1)):
        assert Simulation(cluster, jobs, broker).compiled_refusal() is not None
    for broker in (make_broker("fgd", target=target), make_broker("gpu-random")):
        assert Simulation(cluster, jobs, broker).compiled_refusal() is None
    python, compiled = both_paths(cluster, jobs, "gpu-packing")
    assert_same_run(python, compiled)


@pytest.mark.parametrize("seed", [0, 1, 5, 12])
def test_gpu_random_compiled_draws_what_numpy_draws(seed):
    """gpu-random's compiled round draws from its seed's generator as the policy does with numpy's own calls: the
    permutation of its ties, then per decision ``integers`` over the machines that fit and ``choice(room, count,
    replace=False)`` over the devices with room. Three machines of 8 devices, jobs of 3 whole GPUs, of 2 and of
    a share arriving one after another: the devices each group took are numpy's draws, worked out here with
    numpy alone."""
    cluster = ClusterSpec(("cpu",), ((16.0,),) * 3, devices=(8, 8, 8))
    asks = [(3, 1000), (2, 1000), (1, 400), (3, 1000), (1, 1000)]
    jobs = [JobSpec(j, float(j), (TaskSpec(0, 1, {"cpu": 1.0}, 100.0, devices=DeviceRequest(count, milli)),))
            for j, (count, milli) in enumerate(asks)]
    sim = Simulation(cluster, jobs, make_broker("gpu-random", seed=seed), compiled=True)
    result = sim.run()
    rng = np.random.default_rng(seed)
    rng.permutation(3)
    free = np.full((3, 8), 1000)
    expected = []
    for count, milli in asks:  # (every machine fits each pod: all three, in ascending order)
        machine = int(rng.integers(3))
        room = np.flatnonzero(free[machine] >= milli)
        devices = np.sort(rng.choice(room, size=count, replace=False))
        free[machine, devices] -= milli
        expected.append((machine, tuple(devices.tolist())))
    took = [(int(row.machine), sim.record.group_devices[g][0]) for g, row in enumerate(result.groups.itertuples())]
    assert took == expected


def test_fgd_compiled_puts_a_share_on_the_device_its_score_chose():
    """One node of 8 cpu and two GPUs, the target a 500 share alone, and three long shares of 500, 400 and 100
    at t=0. FGD (by hand, F the free milli of devices below 500 where some device has 500 free): A (500): either
    device leaves F = 0 (Delta 0 both): the first, [500, 1000]. B (400): on device 0 [100, 1000] F = 100 (Delta
    -100), on device 1 [500, 600] F = 0 (Delta 0): device 1, where the default rule (the tightest that holds it)
    takes device 0. C (100): device 0 [400, 600] F = 400, device 1 [500, 500] F = 0: device 1 again. Scores
    int(100 / (1 + exp(0))) = 50 on the one node."""
    cluster = ClusterSpec(("cpu",), ((8.0,),), devices=(2,))
    jobs = [JobSpec(name, 0.0, (TaskSpec(0, 1, {"cpu": 1.0}, 10.0, devices=DeviceRequest(1, milli)),))
            for name, milli in (("A", 500), ("B", 400), ("C", 100))]
    target = TargetWorkload.of(jobs[:1])
    runs = []
    for compiled in (False, True):
        sim = Simulation(cluster, jobs, make_broker("fgd", target=target), compiled=compiled)
        runs.append((sim, sim.run()))
        assert [sim.record.group_devices[g] for g in range(3)] == [[(0,)], [(1,)], [(1,)]]
    assert runs[1][0].compiled_refusal() is None
    assert_same_run(*runs)


def test_a_policys_own_attribute_named_turn_is_its_own():
    """Only round-robin hands the engine a turn: an SJF that keeps something of its own under that name runs
    compiled as SJF does."""
    sjf = ShortestJobFirst()
    sjf.turn = "mine"
    cluster = ClusterSpec.uniform(2, {"cpu": 4.0})
    jobs = [JobSpec(j, float(j), (TaskSpec(0, 3, {"cpu": 1.0}, 2.0 + j),)) for j in range(3)]
    assert_same_run(*((sim, sim.run()) for sim in (Simulation(cluster, jobs, ShortestJobFirst(), compiled=False),
                                                   Simulation(cluster, jobs, sjf, compiled=True))))


def waiting_count_fitness(last_layer=1.0):
    """DeepJS with a network whose fitness is tanh(the task's waiting instances) x ``last_layer``."""
    config = DeepJSConfig(hidden=(1,), feature_mean=(0.0,) * 6, feature_std=(1.0,) * 6)
    state = {"layers.0.weight": np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 1.0]]), "layers.0.bias": np.zeros(1),
             "layers.2.weight": np.array([[last_layer]]), "layers.2.bias": np.zeros(1)}
    return DeepJS((NumpyFitness(state, config), config))


def test_a_worked_example_of_deepjs_by_hand():
    """One machine of 8 cpu; task a (3 instances) and task b (2), 1 cpu each, fitness tanh(waiting). Scores:
    a 3 against b 2: a; then a 2, b 2: a (the earlier task on ties); then a 1, b 2: b; then 1 and 1: a; then
    b. A start changes its task's score: a round that kept a's first score would start a three times first."""
    cluster = ClusterSpec.uniform(1, {"cpu": 8.0, "memory": 8.0})
    jobs = [JobSpec(0, 0.0, (TaskSpec("a", 3, {"cpu": 1.0, "memory": 1.0}, 5.0),
                             TaskSpec("b", 2, {"cpu": 1.0, "memory": 1.0}, 5.0)))]
    sim = Simulation(cluster, jobs, waiting_count_fitness(), compiled=True)
    result = sim.run()
    assert result.groups[["task_id", "first_instance", "instances"]].values.tolist() == [
        ["a", 0, 2], ["b", 0, 1], ["a", 2, 1], ["b", 1, 1]]
    assert result.summary["decisions"] == 5


def test_deepjs_runs_compiled_only_where_its_round_is_its_decisions():
    cluster = ClusterSpec.uniform(2, {"cpu": 4.0, "memory": 4.0})
    jobs = [JobSpec(0, 0.0, (TaskSpec(0, 3, {"cpu": 1.0, "memory": 1.0}, 2.0),))]
    assert Simulation(cluster, jobs, make_broker("deepjs")).compiled_refusal() is None
    sampling = DeepJS(load_policy(), sample=True)
    unbounded = waiting_count_fitness(last_layer=np.inf)  # a fit pair could score -inf
    for broker in (sampling, unbounded):
        assert "has no compiled round here" in Simulation(cluster, jobs, broker).compiled_refusal()
    assert "asks for empty rounds" in Simulation(cluster, jobs, DeepJS(load_policy(), record=True)).compiled_refusal()
    assert Simulation(ClusterSpec.uniform(2, {"cpu": 4.0}), [JobSpec(0, 0.0, (TaskSpec(0, 1, {"cpu": 1.0}, 1.0),))],
                      make_broker("deepjs")).compiled_refusal() is not None  # (no memory: its features need it)


def test_a_nan_fitness_on_the_compiled_path_names_the_broker():
    deepjs = make_broker("deepjs")
    weights = list(deepjs.fitness.network.weights)
    weights[0] = np.full_like(weights[0], np.nan)
    deepjs.fitness.network.weights = tuple(weights)
    sim = Simulation(ClusterSpec.uniform(2, {"cpu": 2, "memory": 2}),
                     [JobSpec(1, 3.0, (TaskSpec(1, 1, {"cpu": 1, "memory": 1}, 1.0),))], deepjs, compiled=True)
    with pytest.raises(ValueError, match="broker 'deepjs' at t=3.0: a pair's score is NaN"):
        sim.run()


@pytest.mark.parametrize("duration, grows", [(1.0, False), (10_000.0, True)])
def test_an_in_memory_compiled_run_hands_ended_groups_to_its_table_as_its_rows_fill(monkeypatch, duration, grows):
    """5,000 one-instance jobs one time unit apart on one machine of room for all. Each lasting one unit, every
    group has ended when the next starts: the group rows (1,024 to begin with) hand the ended ones to the
    episode's table as they fill and never grow. Each lasting long, none has ended: the rows grow. Both runs
    are their Python path's, group for group."""
    sizes = []
    grown = cloudsim.engine.compiled._grown_rows
    monkeypatch.setattr(cloudsim.engine.compiled, "_grown_rows",
                        lambda rows, size: sizes.append(size) or grown(rows, size))
    cluster = ClusterSpec.uniform(1, {"cpu": 5000})
    jobs = [JobSpec(j, float(j), (TaskSpec(0, 1, {"cpu": 1.0}, duration),)) for j in range(5000)]
    python, compiled = both_paths(cluster, jobs)
    assert len(compiled[1].groups) == 5000 and compiled[1].groups.start.tolist() == list(range(5000))
    assert sizes == ([2048, 2048, 4096, 4096, 8192, 8192] if grows else [])  # (the int rows and the float rows)
    assert_same_run(python, compiled)


@pytest.mark.parametrize("observed", [False, True])
def test_a_compiled_run_lets_go_of_its_state_when_it_ends(observed):
    """Nothing holds the compiled state in a reference cycle: its buffers (the group rows among them) are freed
    as the run hands its results over, not whenever the cycle collector next runs (a whole-file replay held
    about 40 MB more at its peak so). With ``on_round``, what the function keeps holds the machines' views."""
    import gc

    cluster = ClusterSpec(("cpu", "memory"), ((8.0, 1.0),) * 3, devices=(2, 0, 1), attributes={"model": ("A",) * 3})
    jobs = [JobSpec(j, float(j), (TaskSpec(0, 2, {"cpu": 1.0, "memory": 0.1}, 3.0, devices=DeviceRequest(1, 500)),))
            for j in range(6)]
    seen = []
    gc.collect()
    gc.disable()
    try:
        sim = Simulation(cluster, jobs, make_broker("first-fit"), compiled=True,
                         on_round=(lambda time, machines: seen.append(machines)) if observed else None)
        sim.run()
        alive = [o for o in gc.get_objects() if type(o) is CompiledState]
    finally:
        gc.enable()
    # observed: a round at each arrival (t 0-5, the ends at 3-5 in the same instants) and at the ends at 6 and
    # 7; none at 8, where the run ends
    assert alive == [] and len(seen) == (8 if observed else 0)


def test_groups_that_end_at_one_time_share_one_end_event_in_launch_order():
    """By end time: the groups of each end time in launch order, the end times in the order of their first
    group; two durations that give one end time in float64 (2**53 + 0.5 and 2**53 + 1 both round to 2**53)
    are one end time."""
    assert [m.tolist() for m in by_end_time(1.0, np.array([2.0, 1.0, 2.0, 3.0, 1.0]))] == [[0, 2], [1, 4], [3]]
    assert [m.tolist() for m in by_end_time(2.0 ** 53, np.array([0.5, 1.0, 2.0]))] == [[0, 1], [2]]
    # The same on both paths, in a round of a few groups (ordered compiled) and of many (ordered by numpy).
    for tasks in (3, 40):
        durations = [(0.5, 1.0, 2.0)[t % 3] for t in range(tasks)]
        jobs = [JobSpec(0, 2.0 ** 53, tuple(TaskSpec(t, 1, {"cpu": 1.0}, d) for t, d in enumerate(durations)))]
        python, compiled = both_paths(ClusterSpec.uniform(tasks, {"cpu": 1.0}), jobs)
        assert_same_run(python, compiled)
        assert compiled[1].groups.end.tolist() == [2.0 ** 53 + (2.0 if t % 3 == 2 else 0.0) for t in range(tasks)]


# ------------------------------------------------------------------------------------------ streamed runs
def streamed_on_both_paths(cluster, jobs, broker, folder, **options):
    """The streamed run (`stream_to`) on the Python path and on the compiled path."""
    return [Simulation(cluster, iter(jobs), built(broker, jobs), stream_to=folder / str(compiled), compiled=compiled,
                       **options).run() for compiled in (False, True)]


def assert_same_files(python, compiled):
    """The same tables in the files and the same summary, bit for bit: the rows are written out at the same
    points, so even the running sums of a streamed summary (utilisation, task means) agree exactly."""
    for table in ("tasks", "jobs", "groups"):
        pd.testing.assert_frame_equal(getattr(python, table)(), getattr(compiled, table)(), check_exact=True)
    summary = [pd.Series({k: v for k, v in r.summary.items() if "wall" not in k}, dtype=object)
               for r in (python, compiled)]
    assert summary[0].equals(summary[1]), pd.concat(summary, axis=1)[summary[0].ne(summary[1]) & summary[0].notna()]


def test_the_buffers_regions_cover_them_with_the_lengths_laid_out():
    """A streamed run lays the buffers out again and copies each machine's region by its length: each region's
    length must be what was laid out (the machines' regions one per machine, the last ones up to the buffer's
    end), and the regions must tile the buffers after their headers."""
    from cloudsim.engine import compiled as c
    cluster = ClusterSpec.uniform(7, {"cpu": 8.0, "memory": 1.0})
    for broker in ("random", "tetris", "deepjs"):
        sim = Simulation(cluster, alibaba_like(5, seed=1), make_broker(broker))
        assert sim.compiled_refusal() is None
        state = CompiledState(sim.state.capacity, sim.tasks, sim._compiled_rule)
        for slot in ("ON_MACHINE", "IS_DIRTY", "STATE_OF", "LAST_ROUND", "FIT_COUNT", "LOAD"):
            buffer = state.ints if getattr(c, slot) < c.CAPACITY else state.floats
            assert c._region_length(state.ints, buffer, getattr(c, slot)) == 7, slot
        for buffer, header, regions in ((state.ints, c.INT_HEADER, c._INT_REGIONS),
                                        (state.floats, c.FLOAT_HEADER, c._FLOAT_REGIONS)):
            lengths = [c._region_length(state.ints, buffer, slot) for slot in regions]
            assert min(lengths) >= 0 and header + sum(lengths) == len(buffer)


@pytest.fixture
def blocks_of(monkeypatch):
    """Streamed simulations read ``n`` jobs at a time (a short run writes out and drops rows many times)."""
    def read(n):
        monkeypatch.setattr(cloudsim.engine.simulation, "STREAM_BLOCK", n)
    return read


@pytest.mark.parametrize("broker", COMPILED)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_streamed_compiled_run_writes_the_files_of_its_python_path(broker, data, blocks_of, tmp_path_factory):
    """Blocks of 1-4 jobs: the compiled state drops finished jobs, tasks and groups and takes new ones
    between almost every two arrivals, while groups run and tasks wait."""
    cluster, jobs, tick = data.draw(workloads(min_resources=2 if broker == "deepjs" else 1))
    blocks_of(data.draw(st.integers(1, 4)))
    jobs = sorted(jobs, key=lambda job: job.submit_time)  # (a stream comes in submit-time order)
    assert_same_files(*streamed_on_both_paths(cluster, jobs, broker, tmp_path_factory.mktemp("out"), tick=tick))


@pytest.mark.parametrize("broker", COMPILED)
@pytest.mark.parametrize("tick", [None, 1.0])
def test_a_streamed_compiled_run_of_alibaba_like_jobs(broker, tick, blocks_of, tmp_path):
    """DAG jobs on 4 machines, read 5 at a time: queues form, so many jobs are in flight at once and the
    buffers keep groups, tasks and jobs across many hand-overs."""
    blocks_of(5)
    jobs = alibaba_like(60, seed=3, max_instances=40)
    python, compiled = streamed_on_both_paths(ClusterSpec.uniform(4, {"cpu": 96, "memory": 1}), jobs, broker,
                                              tmp_path, tick=tick)
    assert_same_files(python, compiled)
    assert compiled.summary["jobs"] == 60


def test_a_streamed_compiled_run_holds_only_the_jobs_in_flight(blocks_of, tmp_path, monkeypatch):
    """400 single-task jobs, one every 10 s, each running 3 s on an idle machine: at most one is in flight, so
    the compiled state never holds more than about two blocks of 5 jobs, their tasks and groups."""
    blocks_of(5)
    held = []
    restream = CompiledState.restream

    def recording(state, tasks):
        restream(state, tasks)
        held.append(state.held)

    monkeypatch.setattr(CompiledState, "restream", recording)
    jobs = (JobSpec(j, 10.0 * j, (TaskSpec(0, 2, {"cpu": 1.0}, 3.0),)) for j in range(400))
    result = Simulation(ClusterSpec.uniform(2, {"cpu": 4}), jobs, FirstFit(), stream_to=tmp_path / "out",
                        compiled=True).run()
    assert len(held) == 80 and max(max(h) for h in held) <= 10
    assert result.summary["jobs"] == 400 and len(result.groups()) == 400


def test_an_interrupted_streamed_compiled_run_leaves_the_folder_as_it_was(tmp_path):
    """Ctrl-C while the compiled path reads the next block: the partial files go, an earlier run's stay."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("an earlier run")

    def source():
        for k, block in enumerate(iter_alibaba_like(3000, seed=0, block=256)):
            if k == 5:  # (the earlier blocks' finished rows are written by now)
                raise KeyboardInterrupt
            yield block

    sim = Simulation(ClusterSpec.uniform(20, {"cpu": 96, "memory": 1}), source(), FirstFit(), stream_to=out,
                     compiled=True)
    with pytest.raises(KeyboardInterrupt):
        sim.run()
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert ([p.name for p in out.iterdir()] == ["summary.json"]
            and (out / "summary.json").read_text() == "an earlier run")
