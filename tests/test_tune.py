"""`cloudsim tune deepk8s`: trials scored on validation seeds, kept and resumed, and its mistakes."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cloudsim.cli import main
from cloudsim.run.config import ConfigError, RunnerConfig, TuneConfig

SPACE = {"learning_rate": ("log", 1e-5, 3e-4), "iterations": ("int", 1, 2, 1), "steps_per_env": ("choice", (16, 32))}
BASE = {"envs": 1, "minibatch": 16}


@pytest.fixture(scope="module")
def dagger(tmp_path_factory):
    from agents.deepk8s import Deepk8sConfig, train
    from traces import deepk8s_workload

    out = tmp_path_factory.mktemp("dagger")
    config = Deepk8sConfig(algo="dagger", iterations=1, tasks=30, trunk=(16, 16), head=(8,), dagger_episodes=1,
                           dagger_updates=2)
    return str(train(config, lambda seed: deepk8s_workload(seed, 30), out, progress=False))


def search(out, dagger, trials):
    from cloudsim.run.tune import tune

    return tune(TuneConfig(out=str(out), trials=trials, seeds=(100, 102), tasks=30, init=dagger, space=SPACE,
                           base=BASE, runner=RunnerConfig(workers=2)))


@pytest.mark.needs("optuna")
def test_each_trial_is_its_policys_mean_weighted_turnaround_on_the_validation_seeds(tmp_path, dagger):
    from agents import make_broker
    from cloudsim import simulate
    from cloudsim.engine.envs import deepk8s_cluster
    from traces import deepk8s_workload

    result = search(tmp_path / "s", dagger, 3)
    table = pd.read_csv(tmp_path / "s" / "trials.csv")
    assert len(table) == 3 and list(table.validation) == sorted(table.validation) and result.ran == 3
    for trial in map(json.loads, (p.read_text() for p in (tmp_path / "s" / "trials").glob("*.json"))):
        broker = make_broker("deepk8s", checkpoint=trial["policy"])
        jobs = [simulate(deepk8s_cluster(), deepk8s_workload(seed, 30), broker).jobs for seed in (100, 101)]
        turnaround = np.mean([(j.finish_time - j.submit_time).div(j.duration).mean() for j in jobs])
        assert trial["value"] == pytest.approx(turnaround)
        assert set(trial["params"]) == set(SPACE)
        assert (trial["init"], trial["seed"]) == (str(Path(dagger).resolve()), 0)  # what a resume must match
    best = json.loads((tmp_path / "s" / "best.json").read_text())
    assert best["validation"] == table.validation.min() and best["agent"]["init"] == dagger
    assert best["agent"]["iterations"] == table.iterations[0]  # the trained config, read from its folder
    report = (tmp_path / "s" / "search.md").read_text()
    assert "| trial | validation |" in report
    # the best policy is named inside the search's folder, not by this machine's absolute path
    assert best["policy"] == f"trials/{best['trial']}/policy.pt" and (tmp_path / "s" / best["policy"]).is_file()
    assert f"policy trials/{best['trial']}/policy.pt (in this folder)" in report and str(tmp_path / "s") not in report


@pytest.mark.needs("optuna")
def test_a_search_resumes_with_its_finished_trials_kept(tmp_path, dagger):
    search(tmp_path / "s", dagger, 2)
    kept = {p.name: p.read_text() for p in (tmp_path / "s" / "trials").glob("*.json")}
    result = search(tmp_path / "s", dagger, 3)
    assert result.ran == 1 and len(result.trials) == 3
    assert all((tmp_path / "s" / "trials" / name).read_text() == text for name, text in kept.items())
    # Resumed on other validation seeds, its values would mean two things: refused, with the seeds that resume it.
    from cloudsim.run.tune import tune
    with pytest.raises(ConfigError, match=r"--seeds 100:101: the search in .* scored its trials on seeds 100:102 of "
                                          r"30 tasks; resume it with --seeds 100:102 --tasks 30, or give a new folder"):
        tune(TuneConfig(out=str(tmp_path / "s"), trials=4, seeds=(100, 101), tasks=30, init=dagger, space=SPACE,
                        base=BASE))
    # A trial that does not say what scored it (written before cloudsim recorded it) is not mixed in either.
    older = json.loads((tmp_path / "s" / "trials" / "1.json").read_text())
    del older["seeds"]
    (tmp_path / "s" / "trials" / "1.json").write_text(json.dumps(older))
    with pytest.raises(ConfigError, match=r"1\.json does not say which validation sequences scored it"):
        search(tmp_path / "s", dagger, 3)
    assert len(list((tmp_path / "s" / "trials").glob("*.json"))) == 3  # nothing run, nothing removed
    # A damaged trial file is named, with what to do.
    (tmp_path / "s" / "trials" / "1.json").write_text('{"number": 1, "par')
    with pytest.raises(ConfigError, match=r"1\.json is damaged .*delete it to run that trial again"):
        search(tmp_path / "s", dagger, 3)


@pytest.mark.parametrize("argv, words", [
    (["--trials", "0"], ["--trials 0", ">= 1"]),
    (["--seeds", "5:5"], ["--seeds 5:5", "0 <= A < B"]),
    (["--init", "nowhere.pt"], ["--init nowhere.pt", "no such file"]),
    (["--threads", "0"], ["--threads 0", ">= 1"]),
    ([], ["--out", "give the search folder"]),
])
def test_tune_mistakes_get_one_clear_line(tmp_path, monkeypatch, capsys, argv, words):
    monkeypatch.chdir(tmp_path)
    out = [] if not argv else ["--out", "s"]
    assert main(["tune", "deepk8s", *out, *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert all(w in err for w in words) and len(err.splitlines()) == 1, err


@pytest.mark.needs("optuna")
def test_a_folder_of_other_files_is_not_taken_for_a_search(tmp_path):
    from cloudsim.run.tune import tune

    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match="not a search's"):
        tune(TuneConfig(out=str(tmp_path / "s")))
    assert (tmp_path / "s" / "notes.txt").read_text() == "mine"


# ------------------------------------------------------------------ a resumed search checks what made its trials
def finished_search(folder, trials=2, **made):
    """A search folder with ``trials`` finished trials of the default space, scored on seeds 100:102 of 30 tasks,
    each recording ``made`` (its --init, None for the shipped policy, and its --seed) as `cloudsim tune` does."""
    from cloudsim.run.config import DEEPK8S_SPACE

    (folder / "trials").mkdir(parents=True)
    for number in range(trials):
        trial = {"number": number, "params": dict.fromkeys(DEEPK8S_SPACE, 1), "value": 1.0 + number,
                 "seeds": [100, 102], "tasks": 30, **made, "policy": f"trials/{number}/policy.pt", "wall_s": 1.0}
        (folder / "trials" / f"{number}.json").write_text(json.dumps(trial))
    return folder


@pytest.mark.parametrize("argv, message", [
    (["--seed", "1"], "--seed 1: differs from the search being resumed in s, made with --seed 0; resume it with "
                      "--seed 0, or give another folder"),
    (["--init", "other.pt"], "--init {other}: differs from the search being resumed in s, made without --init; "
                             "resume it without --init, or give another folder"),
    (["--trials", "1"], "--trials 1: the search in s has done 2 trials already; give more than 2 to go further"),
])
def test_a_search_resumed_with_another_init_seed_or_fewer_trials_is_refused(tmp_path, monkeypatch, capsys, argv,
                                                                            message):
    monkeypatch.chdir(tmp_path)
    finished_search(tmp_path / "s", init=None, seed=0)
    (tmp_path / "other.pt").write_bytes(b"a policy")
    kept = {p.name: p.read_text() for p in (tmp_path / "s" / "trials").iterdir()}
    assert main(["tune", "deepk8s", "--out", "s", "--seeds", "100:102", "--tasks", "30", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "cloudsim: " + message.format(other=tmp_path / "other.pt") and len(err.splitlines()) == 1
    assert {p.name: p.read_text() for p in (tmp_path / "s" / "trials").iterdir()} == kept
    # The same search, asked as it was made, is taken up (its trials are read back, none refused).
    config = TuneConfig(out=str(tmp_path / "s"), trials=3, seeds=(100, 102), tasks=30)
    assert [t["number"] for t in config.finished_trials()] == [0, 1]


def test_a_search_and_a_training_each_name_the_others_folder(tmp_path, dagger, capsys):
    search = finished_search(tmp_path / "s", init=None, seed=0)
    training = Path(dagger).parent
    with pytest.raises(ConfigError, match=rf"--out {training}: holds a deepk8s dagger training, not a search; give a "
                                          rf"new folder \(`cloudsim train deepk8s --algo dagger --out {training} "
                                          rf"--resume` continues it\)"):
        TuneConfig(out=str(training))
    for resume in ([], ["--resume"]):
        assert main(["train", "deeprm", "--out", str(search), *resume]) == 2
        err = capsys.readouterr().err.strip()
        assert "holds a cloudsim tune deepk8s search" in err and f"`cloudsim tune deepk8s --out {search}`" in err
        assert len(err.splitlines()) == 1
    assert sorted(p.name for p in search.iterdir()) == ["trials"]


def test_a_search_space_naming_no_setting_of_the_agent_is_refused(tmp_path):
    with pytest.raises(ValueError, match="'learning_rat' is no setting of Deepk8sConfig"):
        TuneConfig(out=str(tmp_path / "s"), space={"learning_rat": ("log", 1e-5, 3e-4)})
    with pytest.raises(ValueError, match="'epoch' is no setting"):
        TuneConfig(out=str(tmp_path / "s"), base={"epoch": 2})
    assert set(TuneConfig(out=str(tmp_path / "s")).space) == {  # the default space: seven PPO settings
        "learning_rate", "iterations", "entropy", "clip", "epochs", "gae_lambda", "steps_per_env"}
