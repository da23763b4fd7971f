"""The layering of DESIGN.md holds: import-linter's contracts (setup.cfg) are all kept."""

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
