"""The documentation: the MkDocs site builds with --strict, and every snippet marked runnable runs.

A snippet is runnable when the line before its fence is ``<!-- runnable -->``; bash snippets run
with ``bash -e`` and Python ones with the interpreter, each in a fresh folder, so that what the
README and the docs show cannot rot.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
MARKER = "<!-- runnable -->"
SNIPPET = re.compile(r"^<!-- runnable -->\n```(bash|python)\n(.*?)^```", re.M | re.S)


def runnable_snippets() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        if "results" in page.relative_to(ROOT).parts:
            continue
        text = page.read_text()
        snippets = SNIPPET.findall(text)
        assert len(snippets) == text.count(MARKER), (f"{page}: a {MARKER} line is not right before a bash or "
                                                     "python fence")
        found += [(f"{page.relative_to(ROOT)}#{k}", language, code) for k, (language, code) in enumerate(snippets)]
    return found


SNIPPETS = runnable_snippets()


def test_the_readme_marks_its_snippets_runnable():
    assert sum(name.startswith("README.md#") for name, _, _ in SNIPPETS) >= 4


@pytest.mark.parametrize("name, language, code", SNIPPETS, ids=[s[0] for s in SNIPPETS])
def test_a_runnable_snippet_runs(name, language, code, tmp_path):
    command = ["bash", "-e", "-c", code] if language == "bash" else [sys.executable, "-c", code]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{name} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


@pytest.mark.needs("mkdocs")
def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "cloudsim replay" in (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()


def test_every_named_thing_of_the_registries_is_documented():
    """A broker, trace format or generator added to its table is named (in backticks) in the docs too: the
    brokers in the guide, the GPU page or a paper's page, the formats in the replay guide's --format row."""
    from agents.registry import PLACES, broker_names
    from traces.formats import TRACE_FORMATS
    from traces.generators import GENERATORS

    docs = ROOT / "docs"
    named = set(re.findall(r"`([a-z0-9-]+)`", "\n".join(p.read_text() for p in docs.rglob("*.md"))))
    for place in PLACES:
        assert set(broker_names(place)) <= named, f"{place}: document {set(broker_names(place)) - named}"
    format_row = next(line for line in (docs / "guide" / "replay.md").read_text().splitlines()
                      if line.startswith("| `--format` |"))
    assert all(f"`{name}`" in format_row for name in TRACE_FORMATS), "name every format in replay.md's --format row"
    assert set(GENERATORS) <= named, f"document the generators {set(GENERATORS) - named}"
