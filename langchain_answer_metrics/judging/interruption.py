"""A Ctrl-C that the sync waits honour: set by a SIGINT handler that does not raise
(the CLI's, ``cli/interrupts.py``), read by :mod:`~langchain_answer_metrics.judging.sync`.

Every sync wait in progress, or started later, then ends with KeyboardInterrupt raised in
plain code, not wherever the signal happened to land (raised inside a weakref callback,
an exception is printed and lost). Kept apart from ``sync`` so that the handler can be
installed before asyncio is even imported:

    >>> request_interrupt()  # from a signal handler: safe, it only sets an event
    >>> interrupt_requested()
    True
"""

from __future__ import annotations

import threading

__all__ = ["clear_interrupt", "interrupt_requested", "request_interrupt"]

_interrupted = threading.Event()


def request_interrupt() -> None:
    """Make every sync wait, now or later, raise KeyboardInterrupt (its work is cancelled
    as on Ctrl-C). Safe to call from a signal handler."""
    _interrupted.set()


def clear_interrupt() -> None:
    """Undo :func:`request_interrupt` (the CLI does, when a command ends)."""
    _interrupted.clear()


def interrupt_requested() -> bool:
    """Whether :func:`request_interrupt` was called since the last :func:`clear_interrupt`."""
    return _interrupted.is_set()
