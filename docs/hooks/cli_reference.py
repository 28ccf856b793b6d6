"""MkDocs hook: the command-line reference, generated from the argument parser at build time.

docs/cli.md holds the marker ``<!-- cli-reference -->``; every build replaces it with the
``--help`` of ``answer-metrics`` and of each subcommand, taken from
``langchain_answer_metrics.cli.command.build_parser``, so the page cannot drift from the
parser. ``tests/test_docs_site.py`` checks the built page holds every subcommand and option.
"""

from __future__ import annotations

import argparse
from typing import Any

MARKER = "<!-- cli-reference -->"
WIDTH = 100


def _fixed_width(parser: argparse.ArgumentParser) -> None:
    # The help would otherwise wrap at the width of whatever terminal builds the site.
    parser.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=WIDTH)


def cli_reference() -> str:
    """Markdown: one section per command, each with its ``--help`` as a text block."""
    from langchain_answer_metrics.cli.command import build_parser

    parser = build_parser()
    _fixed_width(parser)
    sections = [("answer-metrics", parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                _fixed_width(sub)
                sections.append((f"answer-metrics {name}", sub))
    parts = []
    for title, command in sections:
        parts.append(f"### `{title}`\n\n```text\n{command.format_help().rstrip()}\n```\n")
    return "\n".join(parts)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference())
