"""Machines that draw differently: watts per GPU, and power by machine shape from a power file, on runs worked out
by hand."""

import json

import numpy as np
import pytest

from agents import FirstFit, make_broker
from cloudsim import ClusterSpec, JobSpec, TaskSpec, simulate
from cloudsim.engine.energy import (DEFAULT_POWER, GpuPower, LinearPower, MachinePower, meter, read_power,
                                    read_power_file)
from cloudsim.engine.specs import DeviceRequest


def gpu_job(id, submit, cpu, duration, devices=None, instances=1):
    return JobSpec(id, submit, (TaskSpec(f"{id}.t", instances, {"cpu": cpu, "memory": 1}, duration,
                                         devices=devices),))


@pytest.fixture
def sharing_and_whole():
    """One machine (cpu 10, two GPUs). A (cpu 5) shares half of device 0 over [0, 4); B (cpu 2) takes device 1
    whole over [0, 6)."""
    cluster = ClusterSpec(("cpu", "memory"), ((10, 10),), devices=(2,))
    jobs = [gpu_job("A", 0, 5, 4, DeviceRequest(1, 500)), gpu_job("B", 0, 2, 6, DeviceRequest(1, 1000))]
    return simulate(cluster, jobs, FirstFit())


def test_gpu_watts_by_hand(sharing_and_whole):
    # Cpu: 100 + 100 u: 170 W over [0, 4) (u 0.7), 120 W over [4, 6) (u 0.2): 920 J. Two GPUs idle at 30 W: 60 W
    # over 6 s: 360 J. Above idle (250 - 30 = 220 W a whole GPU): A half a GPU over 4 s: 440 J; B one over 6 s:
    # 1320 J. The machine: 3040 J.
    report = meter(sharing_and_whole, MachinePower(LinearPower(100, 200), GpuPower(30, 250)))
    assert report.energy_kwh * 3.6e6 == pytest.approx(3040)
    times, watts = report.power
    assert times.tolist() == [0, 4, 6] and watts.tolist() == pytest.approx([170 + 60 + 110 + 220, 120 + 60 + 220,
                                                                           100 + 60])
    # The jobs: the machine's draw but the GPUs' above idle (230 W, then 180 W) split by cpu, 5 : 2 over [0, 4)
    # and B's alone over [4, 6); each its GPUs' above idle.
    a = 230 * 5 / 7 * 4 + 440
    b = 230 * 2 / 7 * 4 + 180 * 2 + 1320
    assert (report.job_kwh * 3.6e6).tolist() == pytest.approx([a, b])
    assert (report.group_kwh * 3.6e6).tolist() == pytest.approx([a, b])
    assert report.idle_kwh == pytest.approx(0.0, abs=1e-15) and a + b == pytest.approx(3040)


def test_without_gpu_watts_the_devices_draw_nothing(sharing_and_whole):
    plain = meter(sharing_and_whole, LinearPower(100, 200))
    assert plain.energy_kwh * 3.6e6 == pytest.approx(920)
    assert meter(sharing_and_whole, MachinePower(LinearPower(100, 200))).energy_kwh == plain.energy_kwh


@pytest.mark.parametrize("seed", range(4))
def test_energy_is_idle_power_over_time_plus_the_groups_dynamic_energy_on_gpu_machines(seed):
    """Property, machines of two shapes with their own linear models and GPU watts: a run's energy = the sum over
    machines of (idle + devices x GPU idle) x makespan, plus over instance groups their cpu's share of (max - idle)
    and their devices' share of (busy - GPU idle), times their run time; the jobs and the idle draw add up to it."""
    rng = np.random.default_rng(seed)
    cluster = ClusterSpec(("cpu", "memory"), ((16, 64), (8, 64), (16, 64), (8, 64)), devices=(4, 2, 4, 2))
    jobs = []
    for k in range(30):
        kind = rng.integers(0, 3)
        devices = None if kind == 0 else DeviceRequest(1, int(rng.choice([250, 500]))) if kind == 1 else \
            DeviceRequest(int(rng.integers(1, 3)), 1000)
        jobs.append(gpu_job(f"J{k}", float(rng.integers(0, 40)), float(rng.integers(1, 8)),
                            float(rng.integers(1, 20)), devices, int(rng.integers(1, 3))))
    big, small = MachinePower(LinearPower(80, 300), GpuPower(40, 260)), MachinePower(LinearPower(50, 150),
                                                                                     GpuPower(20, 120))
    models = (big, small, big, small)
    result = simulate(cluster, jobs, make_broker("random", seed=seed))
    report = meter(result, models)
    by_task = {task.id: task for job in jobs for task in job.tasks}
    expected = sum((m.cpu.idle + d * m.gpu.idle) * result.makespan for m, d in zip(models, cluster.devices))
    for g in result.groups.itertuples():
        model, task = models[g.machine], by_task[g.task_id]
        milli = 0 if task.devices is None else task.devices.count * task.devices.milli
        expected += g.instances * (g.end - g.start) * (
            (model.cpu.peak - model.cpu.idle) * task.demand["cpu"] / cluster.capacities[g.machine][0]
            + (model.gpu.busy - model.gpu.idle) * milli / 1000)
    assert report.energy_kwh * 3.6e6 == pytest.approx(expected, rel=1e-9)
    assert report.job_kwh.sum() + report.idle_kwh == pytest.approx(report.energy_kwh, rel=1e-9)
    assert report.group_kwh.sum() == pytest.approx(report.job_kwh.sum(), rel=1e-12)


def power_file(tmp_path, *rows, header="cpu,model,power"):
    path = tmp_path / "power.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_a_power_file_gives_each_machine_shape_its_model(tmp_path):
    cluster = ClusterSpec(("cpu", "memory"), ((16, 8), (8, 8), (8, 8)), machine_ids=("a", "b", "c"),
                          devices=(2, 0, 0), attributes={"model": ("V100", "", "T4")})
    path = power_file(tmp_path, '16,V100,"linear:100,300+gpu:30,250"', '8,T4,default', ',,"linear:50,150"')
    models = read_power_file(path).for_cluster(cluster)
    assert models == (MachinePower(LinearPower(100, 300), GpuPower(30, 250)), MachinePower(LinearPower(50, 150)),
                      MachinePower(DEFAULT_POWER))
    assert read_power(str(path)) == read_power_file(path)
    # One job on the first machine (cpu 8 of 16) for 10 s: 200 W + two idle GPUs 60 W; the others idle: 50 W and
    # the default's 58.4 W.
    result = simulate(cluster, [gpu_job("J", 0, 8, 10)], FirstFit())
    report = meter(result, models)
    assert (report.machine_kwh * 3.6e6).tolist() == pytest.approx([2600, 500, 584])
    # A blank cell matches any machine; a machine no row matches is named.
    path = power_file(tmp_path, '16,,default')
    with pytest.raises(ValueError, match=r"no row matches machine 'b' \(cpu 8, memory 8, devices 0, "
                                         r"model ''; 2 machine\(s\) unmatched\)"):
        read_power_file(path).for_cluster(cluster)
    # Device counts are matched too.
    path = power_file(tmp_path, '2,"linear:1,2"', ',default', header="devices,power")
    assert read_power_file(path).for_cluster(cluster)[0].cpu == LinearPower(1, 2)


@pytest.mark.parametrize("rows, header, message", [
    (("8,default",), "cpu,watts", r"line 1: the header names the match columns and 'power'"),
    (("8,linear:1,2",), "cpu,power", r"line 2: 3 field\(s\) for the header's 2; quote a power model"),
    (("8,cubic",), "cpu,power", r"line 2 column power: 'cubic' is no power model"),
    (('8,"linear:2,1"',), "cpu,power", r"line 2 column power: linear power \(IDLE,MAX\): the watts must not fall"),
    ((), "cpu,power", "holds no rows"),
    (("8,default",), "cpu,cpu,power", "each once"),
])
def test_a_damaged_power_file_is_one_line_naming_where(tmp_path, rows, header, message):
    with pytest.raises(ValueError, match=message):
        read_power_file(power_file(tmp_path, *rows, header=header))


def test_a_power_file_for_another_cluster_is_refused(tmp_path):
    cluster = ClusterSpec.uniform(2, {"cpu": 8, "memory": 8})
    with pytest.raises(ValueError, match="column 'rack' is no resource .cpu, memory., devices or machine attribute"):
        read_power_file(power_file(tmp_path, "r1,default", header="rack,power")).for_cluster(cluster)
    with pytest.raises(ValueError, match="line 2 column cpu: 'many' is no number"):
        read_power_file(power_file(tmp_path, "many,default", header="cpu,power")).for_cluster(cluster)
    memory_only = ClusterSpec(("memory",), ((10,),))
    with pytest.raises(ValueError, match="the power models read cpu utilisation; this cluster's resources are memory"):
        MachinePower(DEFAULT_POWER).for_cluster(memory_only)
    with pytest.raises(ValueError, match="the power models read cpu utilisation"):
        read_power_file(power_file(tmp_path, ",default", header="memory,power")).for_cluster(memory_only)
    with pytest.raises(ValueError, match="cannot read it"):
        read_power_file(tmp_path / "none.csv")
    with pytest.raises(ValueError, match="no power model, nor a power file"):
        read_power(str(tmp_path / "none.csv"))


def test_replay_with_a_power_file_writes_energy_per_job_group_and_machine(capsys, tmp_path):
    import pandas as pd

    from cloudsim.cli import main

    # The built-in workload's five machines all match the last row: the same energy as --power linear:100,200.
    path = power_file(tmp_path, '9999,"linear:1,2"', ',"linear:100,200"', header="cpu,power")
    assert main(["replay", "--power", str(path), "--out", str(tmp_path / "run"), "--json"]) == 0
    run = json.loads(capsys.readouterr().out.splitlines()[0])
    assert main(["replay", "--power", "linear:100,200", "--json"]) == 0
    same = json.loads(capsys.readouterr().out.splitlines()[0])
    assert run["energy_kwh"] == same["energy_kwh"]
    tables = {name: pd.read_parquet(next((tmp_path / "run").rglob(f"{name}.parquet")))
              for name in ("jobs", "groups", "capacity")}
    assert tables["capacity"].energy_kwh.sum() == pytest.approx(run["energy_kwh"], rel=1e-12)
    assert tables["groups"].energy_kwh.sum() == pytest.approx(tables["jobs"].energy_kwh.sum(), rel=1e-12)
    assert (tables["groups"].energy_kwh > 0).all()
    # A file no machine of the cluster matches is one line naming --power and the machine.
    bad = power_file(tmp_path, '9999,default', header="cpu,power")
    assert main(["replay", "--power", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "--power" in err and "no row matches machine" in err and "Traceback" not in err


def test_a_streamed_run_meters_gpu_watts_as_in_memory(tmp_path, monkeypatch):
    import cloudsim.engine.simulation
    from cloudsim import Simulation
    from cloudsim.engine.energy import StreamMeter

    monkeypatch.setattr(cloudsim.engine.simulation, "STREAM_BLOCK", 4)
    rng = np.random.default_rng(3)
    cluster = ClusterSpec(("cpu", "memory"), ((16, 64), (8, 64)), devices=(4, 2))
    jobs = sorted((gpu_job(f"J{k}", float(rng.integers(0, 60)), float(rng.integers(1, 8)), float(rng.integers(1, 20)),
                           DeviceRequest(1, int(rng.choice([250, 500, 1000])))) for k in range(40)),
                  key=lambda job: job.submit_time)
    models = (MachinePower(LinearPower(80, 300), GpuPower(40, 260)), MachinePower(DEFAULT_POWER, GpuPower(20, 120)))
    kept = Simulation(cluster, jobs, FirstFit()).run()
    streamed = Simulation(cluster, iter(jobs), FirstFit(), stream_to=tmp_path / "out",
                          energy=StreamMeter(models, cluster)).run()
    assert streamed.summary["energy_kwh"] == pytest.approx(meter(kept, models).energy_kwh, rel=1e-9)
    assert "carbon_kg" not in streamed.summary
