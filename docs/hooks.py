"""MkDocs hooks: the command reference, written from the argparse definitions at every build."""

from __future__ import annotations

import argparse

MARKER = "<!-- cli-reference -->"


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


def on_page_markdown(markdown: str, page, config, files) -> str:
    return markdown.replace(MARKER, cli_reference()) if MARKER in markdown else markdown
