"""MkDocs hook: the command-line reference, generated from the argument parser at build time.

docs/cli.md holds the marker ``<!-- cli-reference -->``; every build replaces it with the
``--help`` of ``answer-metrics`` and of each subcommand, taken from
``langchain_answer_metrics.cli.command.build_parser``, so the page cannot drift from the
parser. ``tests/test_docs_site.py`` checks the built page holds every subcommand and option.

The marker ``<!-- cli-metrics -->`` becomes the table of the ``--metric`` names, from the
registry (``METRICS``): a metric added there, or with ``register()``, appears in it.
"""

from __future__ import annotations

import argparse
from typing import Any

MARKER = "<!-- cli-reference -->"
METRICS_MARKER = "<!-- cli-metrics -->"
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


def _models(entry: Any) -> str:
    if entry.needs_judge and entry.needs_embeddings:
        return "judge + embeddings"
    if entry.needs_judge:
        return "judge"
    if entry.needs_embeddings:
        return "embeddings (local by default)"
    return "none"


def metric_table() -> str:
    """Markdown: each registered metric, what it measures (its class's first docstring
    line), the sample fields it needs, the models it needs and its setting flags."""
    from langchain_answer_metrics.cli.options import flag
    from langchain_answer_metrics.metrics.registry import METRICS

    rows = ["| `--metric` | measures | needs | model | settings |", "|---|---|---|---|---|"]
    for key, entry in METRICS.items():
        doc = (entry.metric_class.__doc__ or "").strip().splitlines()
        measures = doc[0].strip().replace("``", "`").replace("|", "\\|") if doc else ""
        fields = ", ".join(f"`{name}`" for name in entry.required_fields) or "its own fields"
        settings = ", ".join(f"`{flag(setting)}`" for setting in entry.settings) or "-"
        rows.append(f"| `{key}` | {measures} | {fields} | {_models(entry)} | {settings} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if METRICS_MARKER in markdown:
        markdown = markdown.replace(METRICS_MARKER, metric_table())
    if MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, cli_reference())
