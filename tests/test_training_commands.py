"""Every `cloudsim train AGENT`: its agent's settings are options, declared once, and one `train` runs each."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pytest

from agents.deepjs.config import DeepJSConfig
from agents.deepk8s.config import Deepk8sConfig
from agents.deeprm.config import DeepRMConfig
from agents.rlsk.config import RLSKConfig
from agents.kit.settings import setting
from cloudsim.run.config.fields import options_of, real, whole, whole_list, whole_pair
from cloudsim.run.config.training import agent_setting_names
from cloudsim.run.train import (DeepJSTraining, Deepk8sTrainConfig, DeepRMPlusTrainConfig, DeepRMTrainConfig,
                                RLSKTrainConfig, train)
from agents.deeprm.config import CLONING
from agents.deeprm.config import DEEPRM_PLUS_DEFAULTS as PLUS_DEFAULTS

COMMANDS = [(DeepJSTraining, DeepJSConfig, DeepJSConfig(), ()),
            (Deepk8sTrainConfig, Deepk8sConfig, Deepk8sConfig(), ()),
            (DeepRMTrainConfig, DeepRMConfig, DeepRMConfig(), CLONING),
            (DeepRMPlusTrainConfig, DeepRMConfig, PLUS_DEFAULTS, ()), (RLSKTrainConfig, RLSKConfig, RLSKConfig(), ())]


@pytest.mark.parametrize("command, agent, defaults, left_out", COMMANDS, ids=lambda c: getattr(c, "__name__", ""))
def test_a_command_offers_each_setting_of_its_agent_as_declared_there(command, agent, defaults, left_out):
    declared = [f for f in dataclasses.fields(agent) if "setting" in f.metadata and f.name not in left_out]
    assert sorted(agent_setting_names(command)) == sorted(f.name for f in declared)
    options = {name: (how, default) for name, how, default in options_of(command)}
    for f in declared:
        how, default = options[f.name]
        assert default == getattr(defaults, f.name)  # the command's default is the agent's
        assert how.help == f.metadata["setting"].help.replace("%", "%%")  # argparse's escape, nothing else
        assert how.flag == (f.metadata["setting"].flag or "--" + f.name.replace("_", "-"))


def test_an_option_is_derived_from_the_settings_type():
    @dataclass(frozen=True)
    class Toy:
        count: int = setting(3, "a count")
        share: float = setting(0.5, "a share", metavar="S")
        fast: bool = setting(False, "go fast")
        slow_start: bool = setting(True, "start slowly", flag="--no-slow-start")
        kind: str = setting("a", "a kind", choices=("a", "b"))
        layers: tuple[int, ...] = setting((4, 4), "layer sizes")
        span: tuple[int, int] = setting((1, 10), "LOW:HIGH")
        path: str | None = setting(None, "a file", metavar="PATH")
        hidden: int = 7  # no setting: no option

    how = {name: option for name, option, _ in options_of(Toy)}
    assert list(how) == ["count", "share", "fast", "slow_start", "kind", "layers", "span", "path"]
    assert (how["count"].flag, how["count"].parse, how["count"].metavar) == ("--count", whole, "N")
    assert (how["share"].parse, how["share"].metavar) == (real, "S")
    assert how["fast"].switch and how["slow_start"].switch and how["slow_start"].flag == "--no-slow-start"
    assert (how["kind"].choices, how["kind"].parse, how["kind"].metavar) == (("a", "b"), None, None)
    assert how["layers"].parse is whole_list and whole_list("3,9,6") == (3, 9, 6)
    assert how["span"].parse is whole_pair and whole_pair("2:5") == (2, 5) and whole_pair("4") == (4, 4)
    assert (how["path"].parse, how["path"].metavar) == (None, "PATH")

    @dataclass(frozen=True)
    class Odd:
        table: dict = setting(None, "a mapping")

    with pytest.raises(TypeError, match="Odd.table: a setting of type"):
        options_of(Odd)


def test_the_switch_of_a_setting_on_by_default_turns_it_off(tmp_path):
    from cloudsim.cli import build_parser
    from cloudsim.cli.options import parse_given

    namespace = build_parser().parse_args(["train", "deepjs", "--no-advantage-normalisation"])
    assert parse_given(namespace, "agent", DeepJSTraining) == {"normalize_advantage": False}


def test_train_runs_each_command_config_into_its_folder_and_refuses_anything_else(tmp_path):
    config = DeepRMTrainConfig(out=str(tmp_path / "run"), iterations=1, jobsets=2, episodes=2, progress=False,
                               device="cpu")
    summary = train(config)
    assert summary["agent"] == "deeprm" and summary["iterations"] == 1
    assert {p.name for p in (tmp_path / "run").iterdir()} >= {"policy.pt", "config.json", "log.csv"}
    with pytest.raises(TypeError, match="train\\(\\) takes one of TrainConfig, Deepk8sTrainConfig"):
        train(DeepRMConfig())


def test_a_training_stopped_before_its_first_checkpoint_leaves_nothing(tmp_path, monkeypatch):
    import agents.deeprm.agent

    def stopped(*args, **kwargs):
        (tmp_path / "run").mkdir()
        (tmp_path / "run" / "config.json").write_text("{}")
        raise KeyboardInterrupt

    monkeypatch.setattr(agents.deeprm.agent, "train", stopped)
    with pytest.raises(KeyboardInterrupt):
        train(DeepRMTrainConfig(out=str(tmp_path / "run"), progress=False, device="cpu"))
    assert not (tmp_path / "run").exists()


def test_a_default_folder_in_the_way_stops_only_the_training_that_would_write_there(tmp_path, monkeypatch, capsys):
    from cloudsim.cli import main

    monkeypatch.chdir(tmp_path)
    for default in ("deepjs-run", "deeprm-run"):  # each command's default --out, holding a finished training
        (tmp_path / default).mkdir()
        (tmp_path / default / "policy.pt").write_bytes(b"trained")
    with pytest.raises(SystemExit) as shown:
        main(["--help"])
    assert shown.value.code == 0  # the command line is built without checking any default folder
    assert main(["train", "deeprm", "--out", "elsewhere", "--iterations", "1", "--jobsets", "1", "--episodes", "1",
                 "--device", "cpu"]) == 0
    assert (tmp_path / "elsewhere" / "policy.pt").is_file()
    capsys.readouterr()
    assert main(["train", "deeprm", "--iterations", "1"]) == 2
    assert "--out deeprm-run: already holds a trained policy" in capsys.readouterr().err
