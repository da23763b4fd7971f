"""Power models, the exact energy of a run and its carbon under a grid signal, on runs worked out by hand."""

import datetime as dt
import json

import numpy as np
import pytest

from agents import FirstFit, make_broker
from cloudsim import ClusterSpec, JobSpec, simulate
from cloudsim.engine.carbon import GridSignal, SignalError
from cloudsim.engine.energy import DEFAULT_POWER, GpuPower, LinearPower, MachinePower, TablePower, meter, parse_power
from conftest import task

TEN = {"cpu": 10, "memory": 10}


def job(id, submit, cpu, duration, instances=1):
    return JobSpec(id, submit, (task(f"{id}.t", instances, cpu, 1, duration),))


@pytest.fixture
def two_jobs():
    """One (cpu 10) machine. J0 (cpu 5) runs [0, 4), J1 (cpu 10) waits for it and runs [4, 6); idle [6, 10) until
    J2 (cpu 2) runs [10, 12). Utilisation: 0.5 for 4 s, 1.0 for 2 s, 0 for 4 s, 0.2 for 2 s; makespan 12."""
    jobs = [job("J0", 0, 5, 4), job("J1", 1, 10, 2), job("J2", 10, 2, 2)]
    return simulate(ClusterSpec.uniform(1, TEN), jobs, FirstFit())


def test_linear_energy_is_the_sum_over_the_steps(two_jobs):
    # 100 W idle, 200 W full: 150 W x 4 s + 200 W x 2 s + 100 W x 4 s + 120 W x 2 s = 1640 J.
    report = meter(two_jobs, LinearPower(100, 200))
    assert report.energy_kwh == pytest.approx(1640 / 3.6e6, rel=1e-12)
    assert report.machine_kwh.tolist() == pytest.approx([1640 / 3.6e6], rel=1e-12)
    # The identity on one machine: makespan x (idle + (max - idle) x mean cpu utilisation) / 3.6e6.
    utilisation = two_jobs.summary["utilisation_cpu"]
    assert report.energy_kwh == pytest.approx(12 * (100 + 100 * utilisation) / 3.6e6, rel=1e-12)
    times, watts = report.power
    assert times.tolist() == [0, 4, 6, 10, 12] and watts.tolist() == pytest.approx([150, 200, 100, 120, 100])
    assert np.isnan(report.carbon_kg) and report.summary() == {"energy_kwh": report.energy_kwh}


def test_a_table_is_interpolated_between_its_tens(two_jobs):
    # Watts 0, 10, ..., 100: at 0.5 -> 50, at 1.0 -> 100, at 0 -> 0, at 0.2 -> 20 (a straight table: u x 100).
    report = meter(two_jobs, TablePower(tuple(range(0, 101, 10))))
    assert report.energy_kwh * 3.6e6 == pytest.approx(50 * 4 + 100 * 2 + 0 + 20 * 2)
    # A bent one: 0, 10, ..., 40 up to 40 %, then 100 W flat: at 0.2 -> 20, 0.5 -> 100 (interpolating 40..100).
    bent = TablePower((0, 10, 20, 30, 40, 100, 100, 100, 100, 100, 100))
    assert meter(two_jobs, bent).energy_kwh * 3.6e6 == pytest.approx(100 * 4 + 100 * 2 + 20 * 2)


def test_idle_machines_draw_idle_power_over_the_whole_run():
    # Two machines; J0 (cpu 10, 3 s) on m0 at t=0: m1 is idle all 3 s. 50 W idle, 150 W full.
    result = simulate(ClusterSpec.uniform(2, TEN), [job("J0", 0, 10, 3)], FirstFit())
    report = meter(result, LinearPower(50, 150))
    assert (report.machine_kwh * 3.6e6).tolist() == pytest.approx([150 * 3, 50 * 3])
    assert report.power[1].tolist() == pytest.approx([200, 100])


@pytest.mark.parametrize("seed", range(5))
def test_energy_is_idle_power_over_time_plus_the_groups_dynamic_energy(seed):
    """Property: with a linear model, a run's energy = machines x idle x makespan + (max - idle) x the sum over
    instance groups of cpu demand x instances / cpu capacity x run time."""
    rng = np.random.default_rng(seed)
    jobs = [job(f"J{k}", float(rng.integers(0, 30)), float(rng.integers(1, 8)), float(rng.integers(1, 20)),
                int(rng.integers(1, 3))) for k in range(25)]
    cluster = ClusterSpec(("cpu", "memory"), ((8, 10), (16, 10), (10, 10)))
    result = simulate(cluster, jobs, make_broker("random", seed=seed))
    groups, tasks = result.groups, result.tasks.set_index("task_id")
    capacity = result.capacity["cpu"].to_numpy()
    dynamic = sum(tasks.loc[g.task_id, "demand_cpu"] * g.instances / capacity[g.machine] * (g.end - g.start)
                  for g in groups.itertuples())
    expected = 3 * 40 * result.makespan + (90 - 40) * dynamic
    assert meter(result, LinearPower(40, 90)).energy_kwh * 3.6e6 == pytest.approx(expected, rel=1e-9)


def signal_file(tmp_path, rows, header="Time,Carbon Intensity"):
    path = tmp_path / "ci.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_carbon_is_power_times_intensity_over_the_merged_steps(tmp_path, two_jobs):
    # Intensity 100 g/kWh from 00:00, 300 from 00:00:05 (two rows of 300: the last holds 5 s, to 00:00:15).
    # Power (linear 100-200 W): 150 [0,4), 200 [4,6), 100 [6,10), 120 [10,12). Joules x g/kWh: 150x4x100 + 200x1x100
    # + 200x1x300 + 100x4x300 + 120x2x300 = 60000 + 20000 + 60000 + 120000 + 72000 = 332000; / 3.6e6 = grams.
    path = signal_file(tmp_path, ["2020-01-01 00:00:00,100", "2020-01-01 00:00:05,300", "2020-01-01 00:00:10,300"])
    signal = GridSignal.read(path, "2020-01-01 00:00:00")
    report = meter(two_jobs, LinearPower(100, 200), signal)
    assert report.carbon_kg * 1000 == pytest.approx(332000 / 3.6e6, rel=1e-12)
    assert report.carbon_intensity_mean == pytest.approx(332000 / 1640, rel=1e-12)
    assert set(report.summary()) == {"energy_kwh", "carbon_kg", "carbon_intensity_mean"}
    # A start later in the file moves the run: from 00:00:02, [0, 3) is at 100 and the rest at 300.
    later = GridSignal.read(path, dt.datetime(2020, 1, 1, 0, 0, 2))
    grams = (150 * 3 * 100 + 150 * 1 * 300 + 200 * 2 * 300 + 100 * 4 * 300 + 120 * 2 * 300) / 3.6e6
    assert meter(two_jobs, LinearPower(100, 200), later).carbon_kg * 1000 == pytest.approx(grams, rel=1e-12)
    # A run past the signal's end is refused, naming both spans.
    short = GridSignal.read(signal_file(tmp_path, ["2020-01-01 00:00:00,100", "2020-01-01 00:00:04,300"]),
                            "2020-01-01")
    with pytest.raises(SignalError, match="the run spans 2020-01-01 00:00:00 to 2020-01-01 00:00:12, outside"):
        meter(two_jobs, LinearPower(100, 200), short)


def test_the_signal_is_a_step_function_with_means_and_a_seeded_forecast(tmp_path):
    path = signal_file(tmp_path, ["2020-01-01 00:00:00,10", "2020-01-01 00:15:00,20", "2020-01-01 00:30:00,40",
                                  "2020-01-01 01:00:00,80"])  # irregular steps; the last holds 30 min
    signal = GridSignal.read(path, "2020-01-01 00:00")
    assert signal.end == 5400 and signal.intensity(899.0) == 10 and signal.intensity(900.0) == 20
    assert signal.mean(0, 1800) == pytest.approx(15) and signal.mean(600, 2400) == pytest.approx(
        (10 * 300 + 20 * 900 + 40 * 600) / 1800)
    assert signal.every(1800).values.tolist() == [10, 40, 80]
    assert signal.forecast(0.0) is signal
    noisy = signal.forecast(0.05, seed=3)
    expected = np.array([10, 20, 40, 80]) + np.random.default_rng(3).normal(0, 0.05 * 37.5, 4)
    assert noisy.values.tolist() == pytest.approx(expected.tolist())
    with pytest.raises(SignalError, match="an instant asked spans .* outside"):
        signal.intensity(5400.5)


@pytest.mark.parametrize("rows, header, message", [
    (["2020-01-01 00:00:00,10", "2020-01-01 00:30:00,20"], "Time,Intensity", "line 1: the header must be"),
    (["2020-01-01 00:00:00,10", "2020-01-01 00:30:00,x"], None, "line 3, column 2 .*'x' is no intensity"),
    (["2020-01-01 00:00:00,10", "2020-01-01 00:30:00,-1"], None, "line 3, column 2 .*'-1' is no intensity"),
    (["2020-01-01 00:00:00,10", "2020-01-01 00:30:00,"], None, "line 3, column 2"),
    (["2020-01-01 00:00:00,10", "2020-01-01 00:00:00,20"], None, "line 3, column 1 .*repeats the time"),
    (["2020-01-01 01:00:00,10", "2020-01-01 00:30:00,20"], None, "line 3, column 1 .*comes before the time"),
    (["yesterday,10", "2020-01-01 00:30:00,20"], None, "line 2, column 1 .*'yesterday' is no time"),
    (["2020-01-01 00:00:00,10,3", "2020-01-01 00:30:00,20"], None, "line 2: 3 field"),
    (["2020-01-01 00:00:00,10"], None, "1 row\\(s\\) of data"),
])
def test_a_damaged_signal_file_is_one_line_naming_where(tmp_path, rows, header, message):
    path = signal_file(tmp_path, rows, header or "Time,Carbon Intensity")
    with pytest.raises(SignalError, match=message):
        GridSignal.read(path, "2020-01-01")


def test_a_start_outside_the_signal_or_a_missing_file_is_refused(tmp_path):
    path = signal_file(tmp_path, ["2020-01-01 00:00:00,10", "2020-01-01 00:30:00,20"])
    with pytest.raises(SignalError, match="--start 2019-12-31 23:00:00: outside .* covers 2020-01-01 00:00:00 to "
                                          "2020-01-01 01:00:00"):
        GridSignal.read(path, "2019-12-31 23:00")
    with pytest.raises(SignalError, match="cannot read it"):
        GridSignal.read(tmp_path / "none.csv", "2020-01-01")
    with pytest.raises(ValueError, match="is no date and time"):
        GridSignal.read(path, "January")


def test_power_models_from_the_command_line_and_their_checks():
    assert parse_power("linear:100,250") == MachinePower(LinearPower(100, 250))
    assert parse_power("default").cpu is DEFAULT_POWER and DEFAULT_POWER.table[0] == 58.4
    assert parse_power("table:" + ",".join(map(str, range(0, 110, 10)))) == MachinePower(
        TablePower(tuple(map(float, range(0, 110, 10)))))
    assert parse_power("default+gpu:30,250") == MachinePower(DEFAULT_POWER, GpuPower(30, 250))
    for text, message in [("linear:100", "two watts"), ("table:1,2,3", "11 watts"), ("cubic:1,2", "no power model"),
                          ("linear:a,b", "must be numbers"), ("linear:200,100", "must not fall"),
                          ("linear:-1,100", ">= 0"), ("table:0,10,20,30,40,35,60,70,80,90,100", "must not fall"),
                          ("linear:nan,100", ">= 0"), ("default+gpu:30", "gpu:IDLE,BUSY"),
                          ("default+cpu:1,2", "gpu:IDLE,BUSY"), ("linear:1,2+gpu:300,250", "must not fall"),
                          ("default+gpu:x,1", "must be numbers")]:
        with pytest.raises(ValueError, match=message):
            parse_power(text)


def test_a_cluster_without_cpu_has_no_power_model():
    cluster = ClusterSpec(("memory",), ((10,),))
    result = simulate(cluster, [JobSpec("J", 0, (__import__("cloudsim").TaskSpec("t", 1, {"memory": 1}, 1),))],
                      FirstFit())
    with pytest.raises(ValueError, match="read cpu utilisation"):
        meter(result, DEFAULT_POWER)


# ------------------------------------------------------------------ the command line
def replay_json(capsys, *argv):
    from cloudsim.cli import main

    assert main(["replay", "--json", *argv]) == 0
    import json

    return [json.loads(line) for line in capsys.readouterr().out.splitlines()][0]


def test_replay_reports_energy_only_with_a_power_model(capsys):
    plain = replay_json(capsys)
    assert not {"energy_kwh", "carbon_kg", "carbon_intensity_mean"} & set(plain)
    run = replay_json(capsys, "--power", "linear:100,200")
    # The built-in workload's five identical machines: energy = makespan x 5 x (100 + 100 x cluster utilisation).
    assert run["energy_kwh"] == pytest.approx(run["makespan"] * 5 * (100 + 100 * run["utilisation_cpu"]) / 3.6e6,
                                              rel=1e-9)
    timed = ("wall_s", "sim_wall_s")
    assert {k: v for k, v in run.items() if k not in ("energy_kwh", *timed)} == {
        k: v for k, v in plain.items() if k not in timed}  # nothing else changes


def test_with_deadlines_every_broker_is_metered_until_the_latest_deadline(capsys):
    # With --slack the machines draw until the jobs' latest deadline: the energy is the run's over its makespan
    # plus five idle machines (100 W) from the makespan to that deadline, whichever broker made the run.
    slack = 1e5
    from traces import generate

    jobs, _ = generate("alibaba-like", 100, seed=0)  # the built-in workload
    late = max(job.submit_time + job.critical_path() for job in jobs) + slack
    for broker in ("first-fit", "random"):
        run = replay_json(capsys, "--power", "linear:100,200", "--slack", str(slack), "--brokers", broker)
        busy = run["makespan"] * 5 * (100 + 100 * run["utilisation_cpu"])
        assert run["energy_kwh"] == pytest.approx((busy + 5 * 100 * (late - run["makespan"])) / 3.6e6, rel=1e-9)


def test_a_horizon_meters_idle_power_after_the_makespan(two_jobs):
    # The run of 1,640 J over 12 s, metered to 20 s: 8 s more at 100 W idle.
    report = meter(two_jobs, LinearPower(100, 200), horizon=20.0)
    assert report.energy_kwh == pytest.approx(2440 / 3.6e6, rel=1e-12)
    assert report.idle_kwh == pytest.approx((400 + 800) / 3.6e6, rel=1e-12)
    assert report.job_kwh.sum() + report.idle_kwh == pytest.approx(report.energy_kwh, rel=1e-12)
    with pytest.raises(ValueError, match="the energy horizon 11.0 is before the run's makespan 12.0"):
        meter(two_jobs, LinearPower(100, 200), horizon=11.0)


def test_replay_with_a_signal_reports_carbon(capsys, tmp_path):
    # A flat 200 g/kWh for two hours: carbon = energy x 200, and the mean intensity 200.
    path = signal_file(tmp_path, ["2020-01-01 00:00:00,200", "2020-01-01 01:00:00,200"])
    run = replay_json(capsys, "--power", "default", "--carbon", str(path), "--start", "2020-01-01")
    assert run["carbon_kg"] == pytest.approx(run["energy_kwh"] * 200 / 1000, rel=1e-12)
    assert run["carbon_intensity_mean"] == pytest.approx(200)


@pytest.mark.parametrize("argv, words", [
    (["--power", "cubic"], "--power cubic: 'cubic' is no power model"),
    (["--power", "linear:200,100"], "must not fall as the load rises"),
    (["--carbon", "SIGNAL"], "needs --start DATETIME"),
    (["--start", "2020-01-01"], "--start 2020-01-01: applies with --carbon"),
    (["--forecast-error", "0.1"], "--forecast-error 0.1: applies with --carbon"),
    (["--carbon", "SIGNAL", "--start", "2020-01-01", "--forecast-error", "-1"], "--forecast-error -1: must be"),
    (["--carbon", "SIGNAL", "--start", "yesterday"], "'yesterday' is no date and time"),
    (["--carbon", "SIGNAL", "--start", "2019-01-01"], "--start 2019-01-01 00:00:00: outside"),
    (["--carbon", "nowhere.csv", "--start", "2020-01-01"], "nowhere.csv: cannot read it"),
    (["--carbon", "SIGNAL", "--start", "2020-01-01 01:00", "--power", "default"], "the run spans"),
    (["--brokers", "carbon-shift"], "carbon-shift plans by the grid's carbon intensity: add --carbon"),
])
def test_energy_and_carbon_mistakes_are_one_line_each(tmp_path, monkeypatch, capsys, argv, words):
    from cloudsim.cli import main

    path = signal_file(tmp_path, ["2020-01-01 00:00:00,100", "2020-01-01 00:30:00,200", "2020-01-01 01:00:00,50"])
    monkeypatch.chdir(tmp_path)
    assert main(["replay", *[str(path) if word == "SIGNAL" else word for word in argv]]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "s").exists()


def test_carbon_shift_runs_from_the_command_line_with_a_signal(capsys, tmp_path):
    path = signal_file(tmp_path, [f"2020-01-01 {h:02d}:{m:02d}:00,{100 + 50 * ((h * 2 + m // 30) % 3)}"
                                  for h in range(12) for m in (0, 30)])
    run = replay_json(capsys, "--brokers", "carbon-shift", "--broker-options", "carbon-shift.window=3600",
                      "--carbon", str(path), "--start", "2020-01-01", "--power", "default", "--jobs", "0:10")
    assert run["broker"] == "carbon-shift" and run["instances_finished"] == run["instances"] and run["carbon_kg"] > 0


def test_the_means_of_many_intervals_equal_the_integrals_over_them(tmp_path):
    rng = np.random.default_rng(7)
    steps = np.cumsum(rng.choice([900.0, 1800.0, 3600.0], 200))
    times = np.concatenate([[0.0], steps[:-1]])
    signal = GridSignal(times, rng.uniform(0, 400, times.size), float(steps[-1]), dt.datetime(2020, 1, 1))
    firsts = rng.uniform(0, steps[-1] - 20000, 300)
    for length in (0.0, 600.0, 1800.0, 7200.0, 19999.0):
        expected = [signal.intensity(f) if length == 0 else signal.integral(f, f + length) / length for f in firsts]
        assert signal.means(firsts, length).tolist() == pytest.approx(expected, rel=1e-12)
    # On a step's edges exactly: a half-hour inside one step is that step's value, to the bit.
    edges = signal.times[:50]
    inside = signal.means(edges, 900.0)
    assert inside.tolist() == signal.values[:50].tolist()


def test_power_and_intensity_are_plotted_over_a_window(tmp_path, two_jobs):
    from cloudsim.run.plots import plot_power_and_intensity

    path = signal_file(tmp_path, ["2020-01-01 00:00:00,100", "2020-01-01 00:00:05,300", "2020-01-01 00:00:10,300"])
    grid = GridSignal.read(path, "2020-01-01")
    report = meter(two_jobs, LinearPower(100, 200), grid)
    made = plot_power_and_intensity({"first-fit": report.power}, grid, tmp_path / "power.png", 2.0, 11.0)
    assert made.is_file() and made.stat().st_size > 10_000
    # A window where the power never changes is drawn too (its level held from before).
    assert plot_power_and_intensity({"flat": report.power}, grid, tmp_path / "flat.png", 6.5, 9.5).is_file()


def test_each_job_draws_its_share_of_its_machines_power(two_jobs):
    # J0 alone on the machine over [0, 4) at 150 W: 600 J; J1 over [4, 6) at 200 W: 400 J; J2 over [10, 12) at
    # 120 W: 240 J; the machine idle over [6, 10) at 100 W: 400 J that no job drew.
    report = meter(two_jobs, LinearPower(100, 200))
    assert two_jobs.jobs.job_id.tolist() == ["J0", "J1", "J2"]
    assert (report.job_kwh * 3.6e6).tolist() == pytest.approx([600, 400, 240])
    assert report.idle_kwh * 3.6e6 == pytest.approx(400)


def test_two_jobs_side_by_side_split_the_machine_by_cpu():
    # J0 (cpu 6) and J1 (cpu 2) together over [0, 5) on one cpu-10 machine: 0.8 utilisation, 100 + 100 x 0.8 =
    # 180 W, split 6 : 2 -> 135 W and 45 W: 675 J and 225 J; J1's second task (cpu 2) alone over [5, 7): 120 W.
    jobs = [job("J0", 0, 6, 5), JobSpec("J1", 0, (task("a", 1, 2, 1, 5), task("b", 1, 2, 1, 2, parents=("a",))))]
    result = simulate(ClusterSpec.uniform(1, TEN), jobs, FirstFit())
    report = meter(result, LinearPower(100, 200))
    assert (report.job_kwh * 3.6e6).tolist() == pytest.approx([675, 225 + 240])
    assert report.idle_kwh == pytest.approx(0.0, abs=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_the_jobs_and_the_idle_machines_add_up_to_the_runs_energy(seed):
    """Property, with a bent table (the watts per cpu differ with the load): the jobs' shares and the energy drawn
    while nothing ran, each computed on its own, add up to the run's energy; so does it with failures."""
    rng = np.random.default_rng(seed)
    jobs = [job(f"J{k}", float(rng.integers(0, 40)), float(rng.integers(1, 8)), float(rng.integers(1, 20)),
                int(rng.integers(1, 3))) for k in range(30)]
    cluster = ClusterSpec(("cpu", "memory"), ((8, 10), (16, 10), (10, 10), (12, 10)))
    table = TablePower((60, 95, 110, 118, 128, 140, 153, 170, 189, 205, 222))
    from cloudsim.engine.faults import RandomFaults

    for faults in (None, RandomFaults(30.0, 5.0, seed=seed)):
        result = simulate(cluster, jobs, make_broker("random", seed=seed), faults=faults)
        report = meter(result, table)
        assert report.job_kwh.sum() + report.idle_kwh == pytest.approx(report.energy_kwh, rel=1e-9)
        assert (report.job_kwh > 0).all() and report.idle_kwh > 0


def test_replay_writes_each_jobs_energy_into_its_jobs_table(capsys, tmp_path):
    import pandas as pd

    from cloudsim.cli import main

    assert main(["replay", "--power", "linear:100,200", "--out", str(tmp_path / "run"), "--json"]) == 0
    run = json.loads(capsys.readouterr().out.splitlines()[0])
    jobs = pd.read_parquet(next((tmp_path / "run").rglob("jobs.parquet")))
    assert len(jobs) == 100 and (jobs.energy_kwh > 0).all()
    assert jobs.energy_kwh.sum() < run["energy_kwh"]  # the rest was drawn while machines ran nothing
    assert main(["replay", "--out", str(tmp_path / "plain"), "--json"]) == 0
    capsys.readouterr()
    assert "energy_kwh" not in pd.read_parquet(next((tmp_path / "plain").rglob("jobs.parquet"))).columns


def test_a_streamed_replay_reports_the_energy_and_carbon_of_the_run_in_memory(capsys, tmp_path):
    path = signal_file(tmp_path, [f"2020-01-{d:02d} {h:02d}:00:00,{100 + 10 * h}" for d in (1, 2, 3, 4)
                                  for h in range(24)])
    options = ["--power", "default", "--carbon", str(path), "--start", "2020-01-01"]
    kept = replay_json(capsys, *options)
    streamed = replay_json(capsys, *options, "--stream", "--out", str(tmp_path / "streamed"))
    for key in ("energy_kwh", "carbon_kg", "carbon_intensity_mean"):
        assert streamed[key] == pytest.approx(kept[key], rel=1e-9)
    written = json.loads(next((tmp_path / "streamed").rglob("summary.json")).read_text())
    assert written["energy_kwh"] == streamed["energy_kwh"]
