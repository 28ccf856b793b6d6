"""The read-ahead window of a run: samples read, admitted under the limits, started.

    >>> window = ReadAhead(samples, metrics, options, admission=..., keeper=..., ...)
    >>> await window.fill(given_back=0)  # start what the window and the limits allow

The window is refilled a quarter at a time, not one sample per finished row: the texts
of the samples started together are queued before they start (``reserve_requests``), so
a long stream keeps sending full embedding batches. Before any sample has finished the
limits have nothing to fit; a sample's expected spend is then the dry-run estimate
(``estimate_first``: it sends no request).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig

from langchain_answer_metrics.core.sample import SampleLike
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.halting import Halting
from langchain_answer_metrics.run.keeping import Keeper
from langchain_answer_metrics.run.limits import Admission, Decision, sample_size
from langchain_answer_metrics.run.results import SampleResults
from langchain_answer_metrics.run.window import Pending, Starting, reserve, saved_row, score_sample

EstimateFirst = Callable[[SampleLike, Sequence[AnswerMetric]], Awaitable[tuple[float | None, int]]]
"""A sample's dry-run cost (USD, None without prices) and requests, sending no request."""


class ReadAhead:
    """Keeps up to ``ahead`` samples started, in input order (``pending``)."""

    def __init__(
        self,
        samples: Iterable[SampleLike],
        metrics: Sequence[AnswerMetric],
        *,
        ahead: int,
        admission: Admission,
        keeper: Keeper,
        halting: Halting,
        context: contextvars.Context,
        config: RunnableConfig | None,
        requests_sent: Callable[[], int],
        estimate_first: EstimateFirst | None = None,
    ) -> None:
        self.source = iter(samples)
        self.metrics = list(metrics)
        self.ahead = ahead
        self.refill_below = ahead - max(1, ahead // 4)
        self.admission = admission
        self.keeper = keeper
        self.halting = halting
        self.context = context  # holds the run's scope, given to each sample task
        self.config = config
        self.requests_sent = requests_sent
        self.estimate_first = estimate_first
        self.pending: deque[Pending] = deque()
        self.held: list[SampleLike] = []  # read, but waiting for room under the limits
        self.exhausted = False
        self.moved = asyncio.Event()  # a sample finished

    def finished(self, index: int, task: asyncio.Future[SampleResults]) -> None:
        """A started sample is done (or cancelled): the limits learn its spend."""
        if task.cancelled() or task.exception() is not None:
            self.admission.abandoned(index)
        else:
            self.admission.finished(index, task.result().results)
        self.moved.set()

    async def _decide(
        self, sample: SampleLike, size: int, todo: Sequence[AnswerMetric]
    ) -> Decision:
        if self.estimate_first is not None and self.admission.wants_estimate():
            cost, requests = await self.estimate_first(sample, todo)
            self.admission.expect(cost, requests)
        return self.admission.decide(size, self.requests_sent())

    async def fill(self, given_back: int) -> None:
        """Read and start samples while the window and the limits allow."""
        if self.exhausted or (len(self.pending) > self.refill_below and not self.admission.active):
            return
        group: list[Starting] = []  # read now, started together
        while not self.halting.halted and len(self.pending) + len(group) < self.ahead:
            if not self.held:
                try:
                    self.held.append(next(self.source))
                except StopIteration:
                    self.exhausted = True
                    break
            sample = self.held[0]
            index = given_back + len(self.pending) + len(group)
            saved, fingerprint = self.keeper.reusable(index, sample)
            todo = [metric for metric in self.metrics if metric.key not in saved]
            if todo:
                size = sample_size(sample)
                decision = await self._decide(sample, size, todo)
                if decision is Decision.WAIT:
                    break
                if decision is Decision.STOP:
                    self.halting.stop(self.admission.stop(self.requests_sent()))
                    break
                self.admission.started(index, size)
            self.held.pop()
            group.append(Starting(index, sample, todo, saved, fingerprint))
        self._start(group)

    def _start(self, group: list[Starting]) -> None:
        # Only admitted samples are in the group: what they share is queued first.
        reserved = self.context.run(reserve, self.metrics, group, self.config)
        loop = asyncio.get_running_loop()
        for each in group:
            if not each.todo:
                self.pending.append(
                    Pending(each.index, saved_row(each.index, each.saved), {}, each.fingerprint)
                )
                continue
            scorer = self.context.run(
                loop.create_task, score_sample(each.index, each.sample, each.todo, self.config)
            )
            scorer.add_done_callback(functools.partial(self.finished, each.index))
            scorer.add_done_callback(reserved.one_done)
            self.pending.append(Pending(each.index, scorer, each.saved, each.fingerprint))

    async def wait_for_head(self, timeout: float | None) -> None:
        """Wait until the first pending sample is done, a stop comes (the circuit
        breaker), ``timeout`` passes or, under a limit with samples held back, any
        sample finishes (it may make room for the next admission)."""
        waiting: list[asyncio.Future[Any]] = [self.pending[0].task, *self.halting.waiting()]
        moved_watch = None
        if self.admission.active and not self.exhausted and not self.halting.halted:
            moved_watch = asyncio.get_running_loop().create_task(self.moved.wait())
            waiting.append(moved_watch)
        try:
            await asyncio.wait(waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if moved_watch is not None:
                moved_watch.cancel()

    def cancel(self) -> None:
        for item in self.pending:
            if not item.task.done():
                item.task.cancel()

    def cancel_all(self) -> None:
        """The run ended (or was abandoned): nothing it started outlives it."""
        for item in self.pending:
            item.task.cancel()
