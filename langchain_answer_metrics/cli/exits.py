"""The exit codes of ``answer-metrics`` (their meaning: ``answer-metrics --help``)."""

from __future__ import annotations

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_ERRORS, EXIT_INTERNAL, EXIT_STOPPED = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED = 130
