"""The ``answer-metrics`` command: arguments and exit codes (``main``), one run from options
to an exit code (``run``), terminal output (``printing``), input files (``datasets``) and
the result records and HTML report (``report``)."""

from langchain_answer_metrics.cli.command import console, main

__all__ = ["console", "main"]
