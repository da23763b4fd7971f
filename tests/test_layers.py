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

    assert set(MOVED) == {path.stem for path in (ROOT / "cloudsim" / "engine").iterdir()
                          if path.suffix == ".py" and path.stem not in ("__init__", "checks") or path.name == "envs"}
    for name in ("specs", "broker", "envs.deeprm"):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            old = importlib.import_module(f"cloudsim.{name}")
        assert old is importlib.import_module(f"cloudsim.engine.{name}")
        assert any(issubclass(w.category, DeprecationWarning) and f"cloudsim.engine.{name}" in str(w.message)
                   for w in said) or name == "envs.deeprm"  # a submodule of a moved package: its parent warned


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
