"""A plain text table on the terminal: columns padded, a rule under the header."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

from langchain_answer_metrics.cli.output.terminal import for_terminal


def print_table(rows: Sequence[Sequence[str]], stream: TextIO) -> None:
    """Print ``rows`` (the first is the header) left-aligned, each cell neutralised."""
    shown = [[for_terminal(cell) for cell in row] for row in rows]
    widths = [max(len(row[i]) for row in shown) for i in range(len(shown[0]))]
    for number, row in enumerate(shown):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip(), file=stream)
        if number == 0:
            print("  ".join("-" * w for w in widths), file=stream)
