"""MkDocs hooks, run at every build: the home page is the README (its links rewritten for the site), and
the command reference is written from the argparse definitions, so that neither can drift."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

MARKER = "<!-- cli-reference -->"
README_MARKER = "<!-- readme -->"
ROOT = Path(__file__).resolve().parents[1]


def _commands(parser: argparse.ArgumentParser, prefix: str):
    """(``cloudsim COMMAND ...``, its parser) for every command and sub-command, depth first."""
    for action in parser._actions:  # argparse keeps sub-parsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield f"{prefix} {name}", sub
                yield from _commands(sub, f"{prefix} {name}")


def cli_reference() -> str:
    from cloudsim.cli import PROG, build_parser

    parser = build_parser()
    parts = [f"## `{PROG}`\n\n```text\n{parser.format_help()}```\n"]
    for name, sub in _commands(parser, PROG):
        parts.append(f"## `{name}`\n\n```text\n{sub.format_help()}```\n")
    return "\n".join(parts)


def readme() -> str:
    """The README as the site's home page: its links into docs/ and benchmarks/results/ made relative
    to docs/ (where benchmarks/results is linked as results/)."""
    text = (ROOT / "README.md").read_text()
    text = re.sub(r"\]\(docs/", "](", text)
    return re.sub(r"\]\(benchmarks/results/", "](results/", text)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if README_MARKER in markdown:
        markdown = markdown.replace(README_MARKER, readme())
    return markdown.replace(MARKER, cli_reference()) if MARKER in markdown else markdown
