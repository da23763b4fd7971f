"""GPU sharing: the fragmentation measure, each placement policy's choice, the openb trace and the fill
experiment, with expected values worked out by hand from the reference study's definitions (docs/gpu.md)."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

from agents import make_broker
from cloudsim import ClusterSpec, Decision, JobSpec, Simulation, TaskSpec
from cloudsim.engine.broker import CompiledRound
from cloudsim.engine.fragmentation import FragmentationMeter, TargetWorkload, node_fragmentation
from cloudsim.run.fill import fill_run, inflate
from cloudsim.engine.specs import DeviceRequest
from traces.openb import load_openb, machines_openb


def pod(job, cpu, milli=0, count=1, models=(), instances=1, at=0.0):
    devices = DeviceRequest(count, milli) if milli else None
    return JobSpec(job, at, (TaskSpec(0, instances, {"cpu": cpu}, 10.0, devices=devices,
                                      accepts={"model": models} if models else ()),))


def nodes(*specs, cpu=64000.0):
    """Nodes from (devices, model) pairs."""
    return ClusterSpec(("cpu",), tuple((cpu,) for _ in specs), devices=tuple(d for d, _ in specs),
                       attributes={"model": tuple(m for _, m in specs)})


# Shapes: a 500 share (p 0.5), one whole GPU (p 0.25), CPU-only (p 0.25)
SHAPES = [pod("a", 1.0, 500), pod("b", 1.0, 500), pod("c", 1.0, 1000), pod("d", 1.0)]


def test_the_target_workload_keeps_the_most_frequent_shapes_covering_95_percent():
    jobs = ([pod(f"a{k}", 2.0, 500) for k in range(10)] + [pod(f"b{k}", 1.0, 1000) for k in range(6)]
            + [pod(f"c{k}", 4.0) for k in range(3)] + [pod("d", 8.0, 250)])
    target = TargetWorkload.of(jobs)
    # 10, 16, then 19 of 20 pods: 95 % covered after the third shape; the fourth is left out
    assert target.cpu.tolist() == [2.0, 1.0, 4.0] and target.milli.tolist() == [500, 1000, 0]
    assert target.count.tolist() == [1, 1, 0]
    assert np.allclose(target.p, [10 / 19, 6 / 19, 3 / 19])
    tied = TargetWorkload.of([pod("x", 1.0, 300), pod("y", 4.0, 300)])  # one pod each: the larger cpu first
    assert tied.cpu.tolist() == [4.0, 1.0]



@pytest.mark.parametrize("cpu, milli, count, p, words", [
    ([], [], [], [], "it has no shape"),
    ([1.0], [500, 250], [1], [1.0], "one entry per shape (got 1, 2, 1, 1 and 1)"),
    ([-1.0], [500], [1], [1.0], "cpu must be finite and >= 0"),
    ([1.0], [1500], [1], [1.0], "milli must be whole numbers in [0, 1000]"),
    ([1.0], [500.5], [1], [1.0], "milli must be whole numbers"),
    ([1.0], [500], [-2], [1.0], "count whole numbers >= 0"),
    ([1.0], [500], [1], [float("nan")], "p must be finite and >= 0"),
])
def test_a_target_workload_that_cannot_be_measured_against_is_refused(cpu, milli, count, p, words):
    """Its arrays are read by compiled loops, shape by shape: lengths that differ would read past them."""
    with pytest.raises(ValueError, match=r"TargetWorkload: .*" + re.escape(words) + r".*TargetWorkload\.of\(jobs\)"):
        TargetWorkload(np.array(cpu), np.array(milli), np.array(count), ((),) * len(cpu), np.array(p))


def test_fgd_takes_a_target_workload_or_none():
    with pytest.raises(TypeError,
                       match=r"FGD: target must be a cloudsim.engine.fragmentation.TargetWorkload .* got 'the pods'"):
        make_broker("fgd", target="the pods")

def test_node_fragmentation_by_hand():
    target = TargetWorkload.of(SHAPES)
    assert np.allclose(target.p, [0.5, 0.25, 0.25])
    free = np.array([[600, 1000], [300, 200], [1000, -1]])
    accepted = np.ones((3, 3), dtype=bool)
    f = node_fragmentation(np.array([8.0, 8.0, 0.5]), free, accepted, target)
    # node 0 (idle 1600): the share fits, nothing below 500 -> 0; a whole GPU fits, device 0's 600 is below
    # -> 600; CPU-only -> all 1600: 0.5*0 + 0.25*600 + 0.25*1600 = 550
    # node 1 (idle 500): neither GPU shape fits -> 500 each, CPU-only 500 -> 500
    # node 2: cpu 0.5 < 1 -> no shape can run: all of idle 1000
    assert f.tolist() == [550.0, 500.0, 1000.0]
    only_t4 = TargetWorkload.of([pod("a", 1.0, 500, models=("T4",))])
    refused = node_fragmentation(np.array([8.0]), np.array([[1000, 1000]]), np.array([[False]]), only_t4)
    assert refused.tolist() == [2000.0]  # the node's model is not accepted: all of its idle GPU


def test_the_meter_follows_placements_and_counts_idle_gpus():
    cluster = nodes((2, "T4"), (2, "T4"))
    sim = Simulation(cluster, [pod(0, 1.0, 400)])
    meter = FragmentationMeter(cluster, sim.state, TargetWorkload.of(SHAPES))
    assert meter.total == 2 * 0.25 * 2000 and meter.idle == 4000  # empty nodes: only CPU-only shapes count
    sim.next_decision()
    sim.apply(Decision(0, 0))  # 400 on node 0's device 0: [600, 1000], as in the hand example
    assert meter.total == 550 + 500 and meter.idle == 3600
    assert math.isclose(meter.rate, 1050 / 3600)


def choose(policy, cluster, task_pod, placed=(), seed=0, **options):
    """The policy's decision for ``task_pod`` after ``placed`` (machine, devices, pod) starts."""
    jobs = [p for _, _, p in placed] + [task_pod]
    sim = Simulation(cluster, jobs)
    for machine, devices, _ in placed:
        sim.next_decision()
        sim.apply(Decision(machine, 0, devices=devices))
    view = sim.next_decision()
    broker = make_broker(policy, seed=seed, **options)
    return broker, view, broker.decide(view)


def test_fgd_takes_the_placement_that_decreases_fragmentation_most():
    cluster = nodes((2, "T4"), (2, "T4"))
    target = TargetWorkload.of([pod("a", 1.0, 500), pod("b", 1.0, 1000)])  # p 0.5 each
    placed = [(0, (0,), pod("p", 1.0, 400))]  # node 0: [600, 1000]
    broker, view, decision = choose("fgd", cluster, pod("x", 1.0, 500), placed, target=target)
    # node 0 before: share 0, whole 600 -> 300. On device 0 ([100, 1000]): 100 and 100 -> 100, Delta +200;
    # on device 1 ([600, 500]): 0, and no whole GPU left -> 1100 -> 550, Delta -250. Node 1 ([1000, 1000] -> 0):
    # on device 0 ([500, 1000]) share 0, whole 500 -> 250, Delta -250.
    assert decision == Decision(0, 0, 1, devices=(0,))
    scores, devices = broker.scores(view, 0, np.array([0, 1]))
    assert scores.tolist() == [int(100 / (1 + math.exp(-0.2))), int(100 / (1 + math.exp(0.25)))] == [54, 43]


def test_best_fit_and_dot_product_by_hand():
    cluster = ClusterSpec(("cpu",), ((64000.0,), (8000.0,)), devices=(2, 1), attributes={"model": ("T4", "T4")})
    broker, view, decision = choose("gpu-best-fit", cluster, pod("x", 4000.0, 500))
    # s = 0.5 (cpu_left - 4000)/128000 + 0.5 (idle - 500)/8000: node 0 0.328125 -> 67, node 1 0.046875 -> 95;
    # min-max scaled: 0 and 100
    assert broker.scores(view, 0, np.array([0, 1]))[0].tolist() == [0, 100] and decision.machine == 1
    broker, view, decision = choose("gpu-dot-product", cluster, pod("x", 4000.0, 500))
    # dot: node 0 0.5*0.03125 + 0.25*0.0625 = 0.03125 -> int(100 (1 - 0.015625)) = 98; node 1 0.009765625 -> 99
    assert broker.scores(view, 0, np.array([0, 1]))[0].tolist() == [98, 99] and decision.machine == 1


def test_packing_by_hand():
    cluster = nodes((2, "T4"), (4, "T4"), (8, "T4"))
    placed = [(1, (1,), pod("p", 1.0, 600)), (2, (7,), pod("q", 1.0, 800))]  # node 1 [1000, 400, 1000, 1000]
    broker, view, decision = choose("gpu-packing", cluster, pod("x", 1.0, 300), placed)
    # node 0 all free: max(33 - 2, 2) = 31. node 1: the least free device that holds 300 is the 400 one, not
    # whole: max(100 - (40 // 10), 50) = 96. node 2 ([1000 x 7, 200]): 200 cannot hold it, the next is whole:
    # max(50 - 1, 33) = 49.
    assert broker.scores(view, 0, np.array([0, 1, 2]))[0].tolist() == [31, 96, 49] and decision.machine == 1
    assert broker.scores(view, 0, np.array([0]))[0].tolist() == [31]
    _, cpu_view, _ = choose("gpu-packing", cluster, pod("y", 1.0))
    assert broker.scores(cpu_view, 0, np.array([0, 1, 2]))[0].tolist() == [0, 0, 0]  # CPU-only: 0 everywhere


def test_clustering_by_hand():
    cluster = nodes((2, "T4"), (2, "T4"), (4, "T4"))
    placed = [(1, (0,), pod("p", 1.0, 300)), (2, (0,), pod("q", 1.0, 1000)), (2, (1,), pod("r", 1.0, 500))]
    broker, view, decision = choose("gpu-clustering", cluster, pod("x", 1.0, 200), placed)
    # base = int(25 (8000 - idle) / 8000). node 0: idle 2000 -> 18, no GPU pods +25 = 43; node 1: idle 1700
    # -> 19, shares only (its kind) +75 = 94; node 2: idle 2500 -> 17, a share among a whole GPU +50 = 67
    assert broker.scores(view, 0, np.array([0, 1, 2]))[0].tolist() == [43, 94, 67] and decision.machine == 1


def test_ties_go_to_the_seeded_permutation_and_random_fit_is_seeded():
    cluster = nodes(*[(2, "T4")] * 6)
    chosen = {choose("gpu-dot-product", cluster, pod("x", 1.0, 500), seed=s)[2].machine for s in range(12)}
    assert len(chosen) > 1  # identical nodes: the seed's permutation decides
    first = [choose("gpu-random", cluster, pod("x", 1.0, 500), seed=3)[2] for _ in range(2)]
    assert first[0] == first[1] and first[0].devices is not None


def test_inflation_shuffles_then_grows_or_cuts_to_the_factor():
    pods = [pod(k, 1.0, 1000, count=1 + k % 2) for k in range(10)]  # 15 GPUs asked in all
    grown = inflate(pods, cluster_milli=10_000, factor=2.0, seed=4)
    assert sorted(job.id for job in grown[:10]) == list(range(10))  # the originals, shuffled, come first
    total = sum(job.tasks[0].devices.total for job in grown)
    assert total >= 20_000 and total - grown[-1].tasks[0].devices.total < 20_000
    assert inflate(pods, 10_000, 2.0, seed=4) == grown
    cut = inflate(pods, cluster_milli=10_000, factor=1.0, seed=4)
    assert sum(job.tasks[0].devices.total for job in cut) <= 10_000 and len(cut) < 10


def test_a_fill_run_by_hand():
    cluster = nodes((2, "T4"))
    # 2 GPUs; pods 600, 600, 200, a whole GPU and a V100 share (no V100 here: it always fails): 2.5 GPUs, which
    # is 1.25 x 2 exactly, so the pods are only shuffled
    jobs = [pod(0, 1.0, 600), pod(1, 1.0, 600), pod(2, 1.0, 200), pod(3, 1.0, 1000), pod(4, 1.0, 100, models=("V100",))]
    run = fill_run(cluster, jobs, "gpu-best-fit", seed=0, factor=1.25)
    assert run.pods == 5
    # 2.4 GPUs of shares and a whole GPU cannot all fit on 2 devices, and the V100 pod fails: 2 or more fail
    assert run.failed_pods >= 2
    assert max(run.unallocated_gpu_pct, key=int) == "125"
    assert all(0 <= v <= 100 for v in run.unallocated_gpu_pct.values())


@pytest.mark.parametrize("broker", CompiledRound.WITH_DEVICES)
def test_a_fill_offered_on_the_compiled_path_is_its_stepped_run(broker):
    """Where its round runs compiled, a fill runs the engine on its pods at once: a pod it cannot place stays
    waiting, where the stepped fill drops it. The same curves and failures, broker by broker, on 20 nodes of
    0-8 GPUs of two models filled past their GPUs with shares, whole GPUs, CPU-only pods, pods for one model,
    pods that ask for nothing and pods no node holds (FCFS, whose queue waits behind its head, is stepped)."""
    rng = np.random.default_rng(3)
    cluster = ClusterSpec(("cpu", "memory"), tuple((float(rng.choice([8, 16, 32])), 1.0) for _ in range(20)),
                          devices=tuple(int(d) for d in rng.choice([0, 2, 4, 8], size=20)),
                          attributes={"model": tuple(str(m) for m in rng.choice(["T4", "V100"], size=20))})
    jobs = []
    for j in range(120):
        kind = int(rng.integers(5))
        devices = (DeviceRequest(1, int(rng.choice([100, 250, 500, 700]))),
                   DeviceRequest(int(rng.integers(1, 5)), 1000),
                   None, DeviceRequest(1, 500), DeviceRequest(9, 1000))[kind]  # (nine GPUs: no node holds them)
        demand = {"cpu": 0.0, "memory": 0.0} if j % 37 == 0 else {"cpu": float(rng.integers(1, 12)), "memory": 0.01}
        jobs.append(JobSpec(j, 0.0, (TaskSpec(0, 1, demand, 10.0, devices=None if j % 37 == 0 else devices,
                                              accepts={"model": "V100"} if kind == 3 else ()),)))
    runs = [fill_run(cluster, jobs, broker, seed=2, factor=2.0, compiled=compiled).row() for compiled in (False, None)]
    for run in runs:
        run.pop("wall_s")
    assert runs[0] == runs[1]
    assert runs[0]["failed_pods"] >= 20  # (of 77 pods offered, 12 no node holds: the others wait compiled)


# ------------------------------------------------------------------ the trace, hostile input
POD_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
              "scheduled_time\n")


def test_openb_rows_that_cannot_be_pods_are_counted(tmp_path):
    path = tmp_path / "pods.csv"
    path.write_text(POD_HEADER + "\n".join([
        "p0,4000,1024,1,500,,LS,Running,10,100,12",       # a share, lifetime 88
        "p1,4000,1024,2,1000,V100M16|T4,LS,Running,5,50,",  # two whole GPUs, never scheduled: 45 in the queue
        "p2,4000,1024,1,1500,,LS,Running,0,10,0",          # gpu_milli above 1000
        "p3,4000,1024,1,-5,,LS,Running,0,10,0",            # negative
        "p4,4000,1024,2,500,,LS,Running,0,10,0",           # two GPUs shared
        "p5,4000,1024,9,1000,,LS,Running,0,10,0",          # nine GPUs: kept (the cluster decides)
        "p6,-1,1024,0,0,,LS,Running,0,10,0",               # negative cpu
        "p7,4000,1024,0,0,,LS,Running,20,10,0",            # deleted before created
    ]) + "\n")
    workload = load_openb(path)
    assert [job.id for job in workload.jobs] == ["p5", "p1", "p0"]  # by creation time
    assert workload.skipped == {"gpu_milli outside 0..1000": 2, "negative or non-whole resources": 1,
                                "several GPUs shared": 1, "bad times": 1}
    assert workload.notes == {"never scheduled": 1}
    p0, p1 = workload.jobs[2].tasks[0], workload.jobs[1].tasks[0]
    assert (p0.duration == 88.0 and p0.devices == DeviceRequest(1, 500)
            and p0.demand == {"cpu": 4000.0, "memory": 1024.0})
    assert p1.duration == 45.0 and p1.accepts == (("model", ("T4", "V100M16")),)


def test_an_openb_list_without_times_or_models_is_read_for_the_fill(tmp_path):
    path = tmp_path / "multigpu.csv"
    path.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,2,1000\np1,1000,1024,1,300\n")
    workload = load_openb(path)
    assert [(job.id, job.submit_time, job.tasks[0].duration) for job in workload.jobs] == [("p0", 0.0, 1.0),
                                                                                           ("p1", 1.0, 1.0)]
    assert workload.jobs[0].tasks[0].accepts == () and "no times" in next(iter(workload.notes))


def test_openb_files_that_cannot_be_read_say_why(tmp_path):
    bad = tmp_path / "pods.csv"
    bad.write_text("name,cpu_milli,memory_mib\np0,1,1\n")
    with pytest.raises(Exception, match="missing column.s. num_gpu, gpu_milli; an openb pod list has"):
        load_openb(bad)
    node = tmp_path / "nodes.csv"
    node.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,1024,0,V100M16\n")
    with pytest.raises(Exception, match="node 'n0' .row 2. has a model but no GPU"):
        machines_openb(node)
    node.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,1024,2,T4\nn1,32000,512,0,\n")
    cluster = machines_openb(node)
    assert (cluster.devices == (2, 0) and cluster.attribute("model") == ("T4", "")
            and cluster.machine_ids == ("n0", "n1"))


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "cloudsim", *args], capture_output=True, text=True, timeout=300)


def test_the_fill_command_prints_one_json_object_per_broker_and_seed(tmp_path):
    pods, node_list = tmp_path / "pods.csv", tmp_path / "nodes.csv"
    pods.write_text(POD_HEADER + "\n".join(f"p{k},1000,1024,1,{300 + 100 * (k % 5)},,LS,Running,{k},100,{k}"
                                           for k in range(12)) + "\n")
    node_list.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,65536,2,T4\nn1,64000,65536,1,T4\n")
    done = _cli("compare", str(pods), "--format", "openb", "--machine-table", str(node_list), "--fill", "1.3",
                "--brokers", "fgd,gpu-random", "--seeds", "2", "--json", "--workers", "1")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    runs = [r for r in rows if not r.get("summary")]
    assert [(r["broker"], r["seed"]) for r in runs] == [("fgd", 0), ("fgd", 1), ("gpu-random", 0), ("gpu-random", 1)]
    for r in runs:
        assert set(r) >= {"failed_pods", "unallocated_gpu_pct", "fragmentation_gpu_pct", "fragmentation_rate"}
        # 6 GPUs asked of 3: cut at random to 130 % or less, and above 130 % - 700 / 3000 (a pod asks for 700 at most)
        assert all(key.isdigit() for key in r["unallocated_gpu_pct"])
        assert 106 <= max(int(key) for key in r["unallocated_gpu_pct"]) <= 130


@pytest.mark.parametrize("args, message", [
    (["--fill", "0"], "--fill 0: must be a factor"),
    (["--fill", "-1"], "--fill -1: must be a factor"),
    (["--fill", "11"], "--fill 11: must be a factor"),
    (["--fill", "1.3", "--brokers", "deepjs"], "deepjs was trained on CPU clusters"),
    (["--fill", "1.3", "--chunk-size", "5"], "--chunk-size 5: a fill run offers every pod"),
])
def test_fill_options_that_do_not_fit_are_refused(tmp_path, args, message):
    pods, node_list = tmp_path / "pods.csv", tmp_path / "nodes.csv"
    pods.write_text(POD_HEADER + "p0,1000,1024,1,500,,LS,Running,0,100,0\n")
    node_list.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,65536,2,T4\n")
    done = _cli("compare", str(pods), "--format", "openb", "--machine-table", str(node_list), *args)
    assert done.returncode != 0 and message in done.stderr and "Traceback" not in done.stderr


def test_a_fill_needs_an_openb_pod_list_and_its_node_list(tmp_path):
    pods = tmp_path / "pods.csv"
    pods.write_text(POD_HEADER + "p0,1000,1024,1,500,,LS,Running,0,100,0\n")
    done = _cli("compare", "--fill", "1.3")
    assert done.returncode != 0 and "give the pod list as WORKLOAD with --format openb" in done.stderr
    done = _cli("compare", str(pods), "--format", "openb", "--fill", "1.3")
    assert done.returncode != 0 and "add --machine-table with its node list" in done.stderr


def _small_fill(tmp_path, pod_rows: str, *args: str):
    """compare --fill 0.1 --brokers fgd of these pods on one node of 8 T4 GPUs."""
    pods, node_list = tmp_path / "pods.csv", tmp_path / "nodes.csv"
    pods.write_text(POD_HEADER + pod_rows)
    node_list.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,65536,8,T4\n")
    return _cli("compare", str(pods), "--format", "openb", "--machine-table", str(node_list), "--fill", "0.1",
                "--brokers", "fgd", *args)


def test_a_fill_counts_pods_no_node_can_hold_as_failures(tmp_path):
    done = _small_fill(tmp_path, "p0,1000,1024,9,1000,,LS,Running,0,100,0\np1,1000,1024,1,500,A100,LS,Running,0,100,0\n"
                       "p2,1000,1024,1,500,,LS,Running,0,100,0\n", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["pods_no_node_holds"] == 2 and summary["pods"] == 3
    # 10.5 GPUs asked of 8; cut at random to 0.8 GPU or less: only the 500 share can stay, and it fits
    run = json.loads(done.stdout.splitlines()[0])
    assert run["failed_pods"] == 0 and run["pods"] == 1


@pytest.mark.parametrize("compiled", [False, None])
@pytest.mark.parametrize("broker", ["gpu-best-fit", "first-fit"])
def test_a_replay_on_a_gpu_cluster_reports_allocation_and_fragmentation_over_time(broker, compiled):
    """Sampled after every round, the empty ones too: the state a round's decisions left, whether the broker
    plans a round at once (first-fit) or a decision at a time (gpu-best-fit), and on either path."""
    from cloudsim.engine.fragmentation import GpuSampler

    cluster = nodes((2, "T4"))
    jobs = [pod(0, 1.0, 1000), JobSpec(1, 4.0, (TaskSpec(0, 1, {"cpu": 1.0}, 2.0, devices=DeviceRequest(1, 500)),))]
    sampler = GpuSampler(cluster, TargetWorkload.of([pod("s", 1.0, 500)]))
    sim = Simulation(cluster, jobs, make_broker(broker), on_round=sampler, compiled=compiled)
    result = sim.run()
    assert sim.compiled_refusal() is None  # (a sampled run takes the compiled path where compiled is None)
    # t 0-4: one whole GPU of two (50 %); t 4-6: 1.5 GPUs (75 %); t 6-10: 50 % again (the share ended at 6, a
    # round with nothing waiting); none at 10, where the run ends
    times, allocated, fragmentation = sampler.curves()
    assert times.tolist() == [0.0, 4.0, 6.0] and allocated.tolist() == [50.0, 75.0, 50.0]
    # fragmentation against the 500 share alone: a device with 500 or more free holds it, and no device has
    # less than 500 but more than 0 free at any time ([0, 1000], [0, 500], [0, 1000]) -> 0
    assert fragmentation.tolist() == [0.0, 0.0, 0.0]
    summary = sampler.summary(result.summary["makespan"])
    assert summary["gpu_allocated_pct_peak"] == 75.0
    assert summary["gpu_allocated_pct_mean"] == (50 * 4 + 75 * 2 + 50 * 4) / 10


@pytest.mark.parametrize("compiled", [False, None])
def test_a_second_round_at_one_instant_replaces_its_sample(compiled):
    """A pod of no duration ends at the instant it starts, which makes a second round there: the instant's
    sample is the second's (nothing allocated), not the first's (one GPU of two)."""
    from cloudsim.engine.fragmentation import GpuSampler

    cluster = nodes((2, "T4"))
    jobs = [JobSpec(0, 0.0, (TaskSpec(0, 1, {"cpu": 1.0}, 0.0, devices=DeviceRequest(1, 1000)),)),
            pod(1, 1.0, 1000, at=5.0)]
    sampler = GpuSampler(cluster, TargetWorkload.of(jobs))
    Simulation(cluster, jobs, make_broker("first-fit"), on_round=sampler, compiled=compiled).run()
    assert [sample[:2] for sample in sampler.samples] == [(0.0, 0.0), (5.0, 50.0)]


def test_an_openb_pod_scheduled_after_its_deletion_is_a_counted_skip(tmp_path):
    path = tmp_path / "pods.csv"
    path.write_text(POD_HEADER + "p0,1000,1024,1,500,,LS,Running,0,10,20\np1,1000,1024,1,500,,LS,Running,0,10,2\n")
    workload = load_openb(path)
    assert [job.id for job in workload.jobs] == ["p1"] and workload.skipped == {"bad times": 1}
    assert workload.jobs[0].tasks[0].duration == 8.0


def test_fgd_without_a_target_counts_each_waiting_pod_once():
    broker = make_broker("fgd")
    sim = Simulation(nodes((1, "T4")), [pod(0, 1.0, 1000), pod(1, 1.0, 500), pod(2, 1.0, at=1.0)])
    view = sim.next_decision()
    sim.apply(broker.decide(view))  # the whole GPU; both pods counted in the stand-in target
    view = sim.next_decision()
    assert broker.decide(view) is None  # the share waits: no GPU left
    sim.apply(None)
    view = sim.next_decision()  # t=1: a CPU-only pod, a new shape: the target is rebuilt
    broker.decide(view)
    # the share, still waiting, is counted once, not again at the rebuild
    assert broker._seen_shapes == {(1.0, 1, 1000, ()): 1, (1.0, 1, 500, ()): 1, (1.0, 0, 0, ()): 1}


def test_a_fill_counts_the_rows_it_skips_as_a_replay_does(tmp_path):
    rows = ("p0,1000,1024,1,500,,LS,Running,0,100,0\np1,lots,1024,1,500,,LS,Running,0,100,0\n"
            "p2,-5,1024,1,500,,LS,Running,0,100,0\np3,1000,1024,1,1500,,LS,Running,0,100,0\n"
            "p4,1000,1024,2,500,,LS,Running,0,100,0\n")
    done = _small_fill(tmp_path, rows, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    assert summary["pods"] == 1 and summary["skipped"] == {
        "gpu_milli outside 0..1000": 1, "negative or non-whole resources": 2, "several GPUs shared": 1}
    table = _small_fill(tmp_path, rows)
    assert "skipped while loading (not offered), by reason: {'gpu_milli outside 0..1000': 1" in table.stdout


def test_a_node_list_naming_a_node_twice_is_refused(tmp_path):
    from traces.openb import machines_openb

    path = tmp_path / "nodes.csv"
    path.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,65536,8,T4\nn1,64000,65536,8,T4\nn0,1000,1024,0,\n")
    with pytest.raises(Exception, match=r"nodes.csv: node 'n0' is listed twice \(rows 2 and 4\); each node needs its "
                                        r"own name"):
        machines_openb(path)
