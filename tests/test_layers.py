"""The layering of docs/design.md holds: import-linter's contracts (setup.cfg) are all kept."""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_contracts_are_kept():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert lint is not None, "import-linter is missing: pip install -e '.[test]'"
    done = subprocess.run([lint, "--config", str(ROOT / "setup.cfg")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_the_package_is_its_three_layers():
    """cloudsim/ holds its layers as folders (the engine, the run layer, the command line) and only the package's
    own files beside them, so that a new module of the engine lands in cloudsim/engine/, under its contract."""
    names = {path.name for path in (ROOT / "cloudsim").iterdir() if path.name != "__pycache__"}
    assert names == {"__init__.py", "__main__.py", "_moved.py", "version.py", "engine", "run", "cli"}


def test_the_old_paths_of_the_engine_modules_import_the_same_modules_with_a_warning():
    import importlib
    import warnings

    from cloudsim._moved import MOVED

    added_since = ("__init__", "checks", "carbon", "energy")  # modules that were never cloudsim.<name>
    assert set(MOVED) == {path.stem for path in (ROOT / "cloudsim" / "engine").iterdir()
                          if path.suffix == ".py" and path.stem not in added_since or path.name == "envs"}
    for name in ("specs", "broker", "envs.deeprm"):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            old = importlib.import_module(f"cloudsim.{name}")
        assert old is importlib.import_module(f"cloudsim.engine.{name}")
        assert any(issubclass(w.category, DeprecationWarning) and f"cloudsim.engine.{name}" in str(w.message)
                   for w in said) or name == "envs.deeprm"  # a submodule of a moved package: its parent warned


def test_each_paper_is_one_package_of_agents():
    """DeepRM (with DeepRM_Plus), DeepJS, Deepk8s and RLSK are each one package under agents/, their config in it;
    the hand-written brokers are agents/heuristics/; no module of a paper lies beside them."""
    names = {path.name for path in (ROOT / "agents").iterdir() if path.name != "__pycache__"}
    assert {"deeprm", "deepjs", "deepk8s", "rlsk", "heuristics", "kit", "checkpoints"} <= names
    assert not {name for name in names if name.startswith(("deeprm", "deepjs", "deepk8s", "rlsk")) and "." in name}
    for paper in ("deeprm", "deepjs", "deepk8s", "rlsk"):
        assert (ROOT / "agents" / paper / "config.py").is_file()


def test_the_old_paths_of_the_agents_modules_import_the_same_modules_with_a_warning():
    import importlib

    import pytest

    from agents import MOVED

    for old, new in MOVED.items():
        sys.modules.pop(old, None)
        with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
            assert importlib.import_module(old) is importlib.import_module(new)


def test_the_papers_packages_import_torch_only_when_a_trained_name_is_asked_for():
    code = ("import sys, agents, agents.deeprm, agents.deepjs, agents.deepk8s, agents.rlsk\n"
            "from agents.deeprm import DeepRMConfig\n"
            "assert 'torch' not in sys.modules, 'torch imported'\n"
            "from agents.deeprm import train\n"
            "assert 'torch' in sys.modules and train.__module__ == 'agents.deeprm.agent'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def test_the_config_package_exports_configs_and_moved_helpers_warn():
    """`cloudsim.run.config` exports the commands' configs and ConfigError; a parsing or training helper it
    exported before still imports from it for one release, with a warning naming its module."""
    import pytest

    import cloudsim.run.config as config
    import cloudsim.run.config.fields as fields

    assert {"RunConfig", "CompareConfig", "BenchConfig", "TuneConfig", "LeaderboardConfig", "ConfigError"} <= set(
        config.__all__)
    assert not {"option", "whole", "seed_span", "check_training_folder"} & set(config.__all__)
    with pytest.warns(DeprecationWarning, match="import it from there"):
        assert config.whole is fields.whole
    with pytest.raises(AttributeError):
        config.nothing_here
