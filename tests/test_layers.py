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


def test_every_engine_module_is_under_the_engine_contract():
    """A new module of the engine is checked too: each one is a source of the `engine-up` contract."""
    import configparser

    parser = configparser.ConfigParser()
    parser.read(ROOT / "setup.cfg")
    listed = set(parser["importlinter:contract:engine-up"]["source_modules"].split())
    engine = {f"cloudsim.{path.stem}" for path in (ROOT / "cloudsim").glob("*.py")
              if path.stem not in ("__init__", "__main__")}  # __main__ only starts the command line
    engine |= {f"cloudsim.{path.name}" for path in (ROOT / "cloudsim").iterdir()
               if (path / "__init__.py").is_file() and path.name not in ("run", "cli")}
    assert engine - listed == set(), "add these engine modules to setup.cfg's engine-up contract"


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
