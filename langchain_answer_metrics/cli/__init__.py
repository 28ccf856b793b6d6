"""The ``answer-metrics`` command: the entry point (``main``: parse, read the arguments once
into the command's typed options, run the command), the parser and its option groups
(``parser``, ``option_groups``, ``group_options``, ``command_options``), one module per
command (``commands/``), what they print and write (``output/``), and what the commands
share below them (the checks, the scoring run ``run`` and its ``streaming``, input files
``datasets``, ``--out`` records).

``console`` (the installed command) handles Ctrl-C from its first moment, before the
command's modules are imported (:mod:`~langchain_answer_metrics.cli.interrupts`); ``main``
is imported on first use.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from langchain_answer_metrics.cli.command import main

__all__ = ["console", "main"]

EXIT_INTERRUPTED = 130


def console() -> NoReturn:
    """The ``answer-metrics`` command. Ctrl-C pressed while it starts exits 130 too."""
    from langchain_answer_metrics.cli.interrupts import CTRL_C, exit_now

    CTRL_C.install()  # from here on a Ctrl-C is recorded, and honoured at a safe point
    try:
        from langchain_answer_metrics.cli import command
    except KeyboardInterrupt:  # not raised by our handler; Python's, if it was put back
        print("\ninterrupted", file=sys.stderr)
        exit_now(EXIT_INTERRUPTED)
    command.console()


def __getattr__(name: str) -> Any:
    if name == "main":
        from langchain_answer_metrics.cli.command import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
