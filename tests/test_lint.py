"""The code passes the linter the project holds itself to (docs/design.md, "Checks on the code"): ruff's
core rules (pyflakes' F and pycodestyle's E4, E7, E9: unused and undefined names, imports, syntax) and lines
of at most 120 characters. The options are given here, not in a configuration file, so that this test and a
contributor's ``ruff check`` read the same rules: `RUFF_COMMAND`."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUFF_COMMAND = ["ruff", "check", "--isolated", "--line-length", "120", "--select", "E4,E7,E9,F,E501", "."]
"""The lint command, run from the repository's root."""


def test_the_code_passes_ruff():
    done = subprocess.run([sys.executable, "-m", *RUFF_COMMAND], cwd=ROOT, capture_output=True, text=True)
    assert "No module named ruff" not in done.stderr, "ruff is missing: pip install -e '.[test]'"
    assert done.returncode == 0, (f"{' '.join(RUFF_COMMAND)} finds problems; fix them (`ruff check ... --fix` "
                                  f"mends some):\n{done.stdout[-4000:]}{done.stderr[-1000:]}")
