"""What the benchmark scripts share: where results and the real trace are, which code a result was measured on."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CLOUDSIMPY_TRACE = ROOT.parent / "shared" / "data" / "cloudsimpy" / "jobs.csv"


def code_version(root: Path = ROOT) -> str:
    """The library code measured (in checkout ``root``): git commit, and tracked files changed since, results
    aside (read-only git calls)."""
    def git(*argv: str) -> str:
        try:
            return subprocess.run(["git", "--no-optional-locks", *argv], cwd=root, capture_output=True,
                                  text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    head = git("rev-parse", "--short", "HEAD")
    if not head:
        return "unknown (not a git checkout)"
    changed = [path for path in (line.split(maxsplit=1)[-1] for line in git(
        "status", "--porcelain", "--untracked-files=no").splitlines()) if not path.startswith("benchmarks/results/")]
    return f"commit {head}" + (f", with uncommitted changes to {', '.join(changed)}" if changed else "")
