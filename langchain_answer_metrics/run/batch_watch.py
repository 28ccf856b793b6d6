"""The run of a batch run as its rounds see it: a scope they can halt, and the samples in
flight, whose waits tell them when a round may go (:mod:`~..judging.batch.settling`).

    >>> run = WatchedRun(samples, copies, options)
    >>> rounds = BatchRounds(..., in_flight=run.in_flight)
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_answer_metrics.judging.batch.settling import Samples
from langchain_answer_metrics.judging.scope import RunScope
from langchain_answer_metrics.run.engine import Run, _Parts
from langchain_answer_metrics.run.reading import ReadAhead

__all__ = ["WatchedRun"]


class WatchedRun(Run):
    """A Run whose scope the rounds can halt, and whose samples in flight they see."""

    scope: RunScope | None = None
    window: ReadAhead | None = None

    def _wire(self) -> _Parts:
        parts = super()._wire()
        self.scope = parts.halting.scope
        self.window = parts.window
        return parts

    def in_flight(self) -> Samples | None:
        """The samples started and not done (their tasks, and the shared calls they
        compute); None while more may start (the input is not all read, the window has
        room, and no stop came): the rounds then wait on their bounded wait
        (:mod:`~langchain_answer_metrics.judging.batch.settling`)."""
        window, scope = self.window, self.scope
        if window is None or scope is None:
            return None
        if (
            not window.exhausted
            and len(window.pending) <= window.refill_below
            and not window.halting.halted
        ):
            return None
        tasks: list[asyncio.Future[Any]] = [i.task for i in window.pending if not i.task.done()]
        within: dict[asyncio.Future[Any], Any] = dict.fromkeys(scope.calls.in_flight(), ())
        for batcher in scope.batchers.values():  # embeddings: awaited, sent by its tasks
            waits = batcher.waits()
            if waits is None:
                return None  # texts queued, about to be sent
            within.update(waits[0])
            tasks += waits[1]
        return Samples(tasks=tasks, within=within)
