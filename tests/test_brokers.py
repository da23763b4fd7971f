"""The papers' baseline brokers: each one's rule on a run small enough to follow by hand."""

import numpy as np
import pytest

from agents import BROKERS, LEARNED, make_broker
from agents.registry import broker_names, register_broker
from agents.heuristics import (
    BestFit,
    DominantResourceFairness,
    FirstComeFirstServed,
    FirstFit,
    HighestResponseRatioNext,
    LeastLoad,
    Packer,
    RoundRobin,
    ShortestJobFirst,
    TetrisStar,
)
from cloudsim import ClusterSpec, Decision, JobSpec, simulate
from cloudsim.engine.broker import as_plan
from conftest import task
from traces import generate

ONE_BIG = ClusterSpec.uniform(1, {"cpu": 10, "memory": 10})


def single(job_id, submit, cpu, duration, memory=0.0):
    return JobSpec(job_id, submit, (task(0, 1, cpu, memory, duration),))


def starts(result) -> dict:
    """Job id -> start time of its (single) task."""
    return dict(zip(result.tasks.job_id, result.tasks.start_time))


def test_sjf_runs_the_shortest_first_and_fcfs_in_arrival_order():
    # Three jobs at t=0, each needing 6 of 10 cpu: only one runs at a time.
    jobs = [single("A", 0, 6, 5), single("B", 0, 6, 2), single("C", 0, 6, 1)]
    assert starts(simulate(ONE_BIG, jobs, ShortestJobFirst())) == {"C": 0, "B": 1, "A": 3}
    assert starts(simulate(ONE_BIG, jobs, FirstComeFirstServed())) == {"A": 0, "B": 5, "C": 7}


def test_fcfs_blocks_behind_the_head_of_its_queue_where_first_fit_does_not():
    # A holds 8 of 10 cpu for 0-10. B (8 cpu) waits from 1; C (2 cpu) arrives at 2 and would fit.
    jobs = [single("A", 0, 8, 10), single("B", 1, 8, 1), single("C", 2, 2, 1)]
    assert starts(simulate(ONE_BIG, jobs, FirstComeFirstServed())) == {"A": 0, "B": 10, "C": 10}
    assert starts(simulate(ONE_BIG, jobs, FirstFit())) == {"A": 0, "B": 10, "C": 2}


def test_hrrn_lets_a_long_wait_beat_a_short_duration():
    # The machine is busy 0-10. At 10: X (duration 4, waited 9) has ratio (9+4)/4 = 3.25,
    # Y (duration 2, waited 1) has (1+2)/2 = 1.5, so HRRN runs X first; SJF runs Y first.
    jobs = [single("L", 0, 10, 10), single("X", 1, 10, 4), single("Y", 9, 10, 2)]
    assert starts(simulate(ONE_BIG, jobs, HighestResponseRatioNext())) == {"L": 0, "X": 10, "Y": 14}
    assert starts(simulate(ONE_BIG, jobs, ShortestJobFirst())) == {"L": 0, "Y": 10, "X": 12}


def test_drf_reproduces_the_example_of_the_drf_paper():
    # Ghodsi et al. 2011, section 4: 9 cpu and 18 GB; user A's tasks need <1 cpu, 4 GB>,
    # user B's <3 cpu, 1 GB>. DRF gives A three tasks and B two (both dominant shares 2/3).
    cluster = ClusterSpec.uniform(1, {"cpu": 9, "memory": 18})
    jobs = [JobSpec("A", 0, (task("a", 10, 1, 4, 5),)), JobSpec("B", 0, (task("b", 10, 3, 1, 5),))]
    result = simulate(cluster, jobs, DominantResourceFairness())
    first_round = result.groups[result.groups.start == 0]
    assert first_round.groupby("job_id").instances.sum().to_dict() == {"A": 3, "B": 2}
    # First-fit in arrival order would give all it can to A first: four tasks (16 of 18 GB), then B one.
    first_fit = simulate(cluster, jobs, FirstFit()).groups
    assert first_fit[first_fit.start == 0].groupby("job_id").instances.sum().to_dict() == {"A": 4, "B": 1}


def test_least_load_round_robin_and_best_fit_choose_machines_by_their_rules():
    three = ClusterSpec.uniform(3, {"cpu": 10, "memory": 10})
    # One job, four long tasks in order: (5, 5), (2, 2), (1, 1), (1, 1).
    job = [JobSpec("J", 0, (task("t0", 1, 5, 5, 9), task("t1", 1, 2, 2, 9), task("t2", 1, 1, 1, 9),
                            task("t3", 1, 1, 1, 9)))]
    # Least load: loads (0, 0, 0) -> m0; (.5, 0, 0) -> m1; (.5, .2, 0) -> m2; (.5, .2, .1) -> m2.
    assert simulate(three, job, LeastLoad()).groups.machine.tolist() == [0, 1, 2, 2]
    # Round robin: m0, m1, m2, then back to m0.
    assert simulate(three, job, RoundRobin()).groups.machine.tolist() == [0, 1, 2, 0]
    # Best fit on machines of 10, 4 and 6 cpu, a 3-cpu task: left 0.7, 0.25, 0.5 of capacity -> m1.
    mixed = ClusterSpec(("cpu",), ((10,), (4,), (6,)))
    one = [JobSpec("J", 0, (task("t", 1, 3, 0, 1),))]
    assert simulate(mixed, one, BestFit()).groups.machine.tolist() == [1]
    assert simulate(mixed, one, FirstFit()).groups.machine.tolist() == [0]


def test_round_robin_skips_machines_that_do_not_fit():
    cluster = ClusterSpec(("cpu",), ((4,), (1,), (4,)))
    job = [JobSpec("J", 0, tuple(task(f"t{i}", 1, 2, 0, 9) for i in range(4)))]
    # 2-cpu tasks never fit m1 (1 cpu): m0, (m1 skipped) m2, m0, m2.
    assert simulate(cluster, job, RoundRobin()).groups.machine.tolist() == [0, 2, 0, 2]


def test_packer_packs_the_best_aligned_task_and_tetris_star_trades_it_for_short_tasks():
    # Free (10, 10). A (5, 5), duration 10: alignment 0.5 + 0.5 = 1.0. B (1, 1), duration 1: 0.2.
    # Tetris* scales both terms by their maxima: A = k*1 + (1-k)*0.1, B = k*0.2 + (1-k)*1.
    jobs = [JobSpec("A", 0, (task("a", 1, 5, 5, 10),)), JobSpec("B", 0, (task("b", 1, 1, 1, 1),))]
    # On a machine of 5.5 units only one of them runs at a time; the scores keep those ratios.
    first = {}
    for name, broker in [("packer", Packer()), ("k0.5", TetrisStar(0.5)), ("k0.9", TetrisStar(0.9))]:
        result = simulate(ClusterSpec.uniform(1, {"cpu": 5.5, "memory": 5.5}), jobs, broker)
        first[name] = [job for job, start in starts(result).items() if start == 0]
    # k=0.5: A 0.55 < B 0.6; k=0.9: A 0.91 > B 0.28.
    assert first == {"packer": ["A"], "k0.5": ["B"], "k0.9": ["A"]}
    with pytest.raises(ValueError, match="knob"):
        TetrisStar(1.5)


class OneAtATime:
    """Wraps a broker and starts one instance per decision whatever count it answers."""

    def __init__(self, broker):
        self.broker = broker

    def decide(self, view):
        plan = as_plan(self.broker.decide(view))  # a broker's first decision, whether it plans or not
        return Decision(plan[0].machine, plan[0].task, 1) if plan else None


@pytest.mark.parametrize("name", ["first-fit", "best-fit", "fcfs", "sjf", "hrrn"])
def test_answering_with_counts_gives_the_same_run_as_one_instance_at_a_time(name):
    jobs, cluster = generate("alibaba-like", 40, seed=3)
    counted = simulate(cluster, jobs, make_broker(name))
    single_steps = simulate(cluster, jobs, OneAtATime(make_broker(name)))
    key = ["job_id", "task_id", "instance"]
    a, b = (r.instances().sort_values(key).reset_index(drop=True) for r in (counted, single_steps))
    assert a[key + ["machine", "start", "end"]].equals(b[key + ["machine", "start", "end"]])
    assert counted.summary["decisions"] < single_steps.summary["decisions"]


@pytest.mark.parametrize("name", [n for n in BROKERS if n not in LEARNED])
def test_every_registered_broker_finishes_every_instance(name):
    import datetime as dt

    from agents.registry import broker_spec
    from cloudsim.engine.carbon import GridSignal

    # A broker that plans by the grid sees a signal of half-hour steps over a year (cycling 100, 300, 200).
    days = 366 * 48
    grid = GridSignal(np.arange(days) * 1800.0, np.resize([100.0, 300.0, 200.0], days), days * 1800.0,
                      dt.datetime(2020, 1, 1)) if broker_spec(name).grid else None
    for generator in ("deeprm", "rlsk", "alibaba-like"):
        jobs, cluster = generate(generator, 30, seed=1, load=0.9)
        result = simulate(cluster, jobs, make_broker(name, seed=1), carbon_forecast=grid)
        assert result.summary["instances_finished"] == sum(j.instances for j in jobs)
        assert result.summary["broker"] == name


def test_sjf_beats_fcfs_on_slowdown_on_deeprms_workload():
    # DeepRM Figure 4 and Deepk8s Table 1: shortest first gives lower slowdown than arrival order.
    slowdown = {name: np.mean([simulate(*reversed(generate("deeprm", None, seed=s, load=0.9)),
                                        make_broker(name)).summary["avg_job_slowdown"] for s in range(5)])
                for name in ("sjf", "fcfs")}
    assert slowdown["sjf"] < slowdown["fcfs"]


@pytest.mark.parametrize("name", ["random", "deepjs"])
def test_a_broker_built_without_a_seed_runs_reproducibly(name):
    """make_broker without ``seed`` gives the broker's own default seed, not fresh entropy: two runs
    decide alike (random's draws; DeepJS's seed, used when it samples)."""
    cluster = ClusterSpec.uniform(4, {"cpu": 8.0, "memory": 8.0})
    jobs = [single(j, float(j % 5), 1.0 + j % 3, 2.0 + j % 4) for j in range(40)]

    def run():
        return simulate(cluster, jobs, make_broker(name)).groups[["machine", "start"]].to_numpy().tolist()

    assert run() == run()
    rng = make_broker(name).rng
    assert rng.bit_generator.state == np.random.default_rng(0).bit_generator.state


def test_the_default_broker_lists_come_from_the_registry():
    from cloudsim.run.config import HEURISTICS
    from cloudsim.run.config.leaderboard import LeaderboardConfig

    # compare's default: the hand-written brokers of CPU clusters, neither a GPU policy, nor the ablation
    # variant fgd-exact, nor a trained policy.
    assert HEURISTICS == ("first-fit", "best-fit", "tetris", "random", "fcfs", "sjf", "hrrn", "drf", "packer",
                          "tetris-star", "least-load", "round-robin", "easy")
    board = LeaderboardConfig.__dataclass_fields__["brokers"].default
    assert "fgd-exact" not in board and {"fgd", "deepjs", "rlsk", "deeprm-plus"} <= set(board)
    assert set(board) == set(BROKERS) - {"fgd-exact", "carbon-shift"}  # the unlisted: an ablation, one needing --carbon


def test_exactly_the_brokers_declared_to_refuse_devices_refuse_a_gpu_cluster():
    gpu = ClusterSpec(("cpu", "memory"), ((64.0, 1.0),) * 4, devices=(2, 2, 2, 2))  # two GPUs a machine

    def refuses(name):
        try:
            make_broker(name).check_cluster(gpu)
        except ValueError as refusal:
            return "GPU" in str(refusal)
        return False

    refusing = {name for name in LEARNED if refuses(name)}
    assert refusing == {"deeprm", "deeprm-plus", "deepk8s", "deepk8s-a2c", "deepk8s-dagger"}
    assert refusing == set(broker_names(learned=True, devices="refused"))


@pytest.mark.parametrize("name, options, words", [
    ("first-fit", {}, "already declared as cloudsim's broker"),
    ("mine", {"acts_in": "kubernetes"}, "acts_in must be one of core, deeprm-env, rlsk-federation"),
    ("mine", {"devices": "some"}, "devices must be one of any, required, refused"),
    ("my:Broker", {}, "without ':'"),
    ("", {}, "give a non-empty name"),
])
def test_a_broker_declared_twice_or_wrongly_is_refused(name, options, words):
    with pytest.raises(ValueError, match=words):
        register_broker(name, FirstFit, **options)
    assert "mine" not in BROKERS
