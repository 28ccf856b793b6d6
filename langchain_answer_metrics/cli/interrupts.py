"""Ctrl-C in the ``answer-metrics`` command: never lost, never in the middle of a write.

Python's own SIGINT handler raises KeyboardInterrupt wherever the main thread happens to
be, which goes wrong in three ways:

- raised while Python runs a weakref callback or a ``__del__``, the exception is printed
  ("Exception ignored in ...") and dropped: the run went on and exited 0;
- raised while a record is written, it can cut the line short;
- raised inside code run by ``eval`` or ``exec`` (``namedtuple`` builds its classes so,
  while the command's modules are imported), it marks the process, and the interpreter
  then ends itself by SIGINT, whatever exit code the command chose.

So the command's handler (:data:`CTRL_C`) raises nothing: it records the request. A run
command (evaluate, demo, calibrate) honours it at its next safe point: :meth:`CtrlC.check`
between two steps of the start-up and between two records, or at once while it waits for
the models (every sync wait ends with KeyboardInterrupt once
:func:`~langchain_answer_metrics.judging.interruption.request_interrupt` is called). It
keeps what is saved and exits 130. Past the run's last decision (:meth:`CtrlC.exiting`),
a Ctrl-C ends the process at once with 130: everything is written by then. Other
commands (``toy-judge``, which serves until Ctrl-C) get Python's behaviour back
(:meth:`CtrlC.raise_at_once`).

    >>> with CTRL_C.installed():
    ...     for record in records:
    ...         write(record)
    ...         CTRL_C.check()  # raises KeyboardInterrupt if Ctrl-C was pressed
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from types import FrameType
from typing import Any, NoReturn, TypeVar

from langchain_answer_metrics.judging.interruption import clear_interrupt, request_interrupt

__all__ = ["CTRL_C", "EXIT_INTERRUPTED", "CtrlC"]

EXIT_INTERRUPTED = 130

T = TypeVar("T")


class CtrlC:
    """The command's SIGINT handler and what it has seen (one per process)."""

    def __init__(self) -> None:
        self.requested = False
        self.run_command = False  # the command is a run, whose Ctrl-C exits 130
        self._raising = False  # Python's behaviour: raise where the signal lands
        self._exiting = False
        self._installs = 0
        self._previous: Any = None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True
        request_interrupt()
        if self._exiting and self.run_command:
            exit_now(EXIT_INTERRUPTED)  # past the last decision: everything is written
        if self._raising:
            raise KeyboardInterrupt

    def install(self) -> bool:
        """Handle SIGINT from now on (in the main thread only); False if it cannot."""
        if threading.current_thread() is not threading.main_thread():
            return False
        if self._installs == 0:
            self.requested = self.run_command = self._raising = self._exiting = False
            clear_interrupt()
            self._previous = signal.signal(signal.SIGINT, self._handle)
        self._installs += 1
        return True

    def uninstall(self) -> None:
        """Undo one :meth:`install`; the last one puts the previous handler back."""
        self._installs -= 1
        if self._installs == 0:
            signal.signal(signal.SIGINT, self._previous)
            clear_interrupt()

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Handle SIGINT for the duration of the block (nested blocks share it)."""
        if not self.install():
            yield
            return
        try:
            yield
        finally:
            self.uninstall()

    def check(self) -> None:
        """A safe point: raise KeyboardInterrupt if Ctrl-C was pressed."""
        if self.requested:
            raise KeyboardInterrupt

    def between(self, items: Iterable[T]) -> Iterator[T]:
        """``items``, with a safe point (:meth:`check`) before each."""
        for item in items:
            self.check()
            yield item

    def starting_run(self) -> None:
        """A run command starts (it writes ``--out``): Ctrl-C from now on ends the
        command with 130, whatever it is doing; one already pressed raises now."""
        self.run_command = True
        self._raising = False
        self.check()

    def raise_at_once(self) -> None:
        """The command is not a run: Ctrl-C raises KeyboardInterrupt where it lands, as
        Python's own handler does (one already pressed raises now)."""
        self._raising = True
        self.check()

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """Within the block, Ctrl-C raises nothing where it lands: it is honoured at the
        next :meth:`check` or sync wait. A Ctrl-C already pressed raises on entry."""
        self.check()
        raising, self._raising = self._raising, False
        try:
            yield
        finally:
            self._raising = raising

    def exit_code(self, code: int) -> int:
        """``code``, or 130 if a run command was interrupted (even after it finished)."""
        return EXIT_INTERRUPTED if self.requested and self.run_command else code

    def exiting(self, code: int) -> int:
        """The process exits now with the returned code (``code``, or 130): a Ctrl-C
        from here on ends a run command at once with 130, and raises nothing."""
        self._raising = False
        self._exiting = True
        return self.exit_code(code)


def exit_now(code: int) -> NoReturn:
    """End the process with ``code`` now, its output flushed (no interpreter clean-up:
    for when everything is written, or nothing was)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


CTRL_C = CtrlC()
