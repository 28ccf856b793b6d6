"""A run: every sample scored by every metric, streamed in input order.

    >>> run = Run(samples, metrics, RunOptions(max_concurrency=8, budget=2.0))
    >>> async for row in run.stream(): ...

The run wires its collaborators, each with one job: :class:`~.reading.ReadAhead` (the
read-ahead window and admission under the limits, :class:`~.limits.Admission`),
:class:`~.keeping.Keeper` (the checkpoint), :class:`~.halting.Halting` (a limit reached or
the circuit breaker tripped) and :class:`~.progress.ProgressReport`.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
from collections.abc import AsyncGenerator, Iterable, Sequence
from typing import NamedTuple

from langchain_answer_metrics.core.sample import SampleLike
from langchain_answer_metrics.judging.scope import RunScope, enter_scope
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.halting import Halting
from langchain_answer_metrics.run.keeping import Keeper
from langchain_answer_metrics.run.limits import Admission
from langchain_answer_metrics.run.options import RunOptions
from langchain_answer_metrics.run.progress import ProgressReport
from langchain_answer_metrics.run.reading import EstimateFirst, ReadAhead
from langchain_answer_metrics.run.results import (
    EvaluationResults,
    MetricError,
    SampleResults,
    is_frame,
    rows_of,
    run_stop,
)
from langchain_answer_metrics.run.spend import Pricing
from langchain_answer_metrics.run.window import window_size


def check_keys(metrics: Sequence[AnswerMetric]) -> None:
    keys = [metric.key for metric in metrics]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise ValueError(
            f"metrics share the key(s) {', '.join(duplicates)}; give each a distinct name="
        )


class Run:
    """One run of ``metrics`` over ``samples`` under ``options``; checked when built
    (distinct keys, a price for every model under a budget, the fields the metrics need),
    before any request.

    ``estimate_first`` gives a sample's expected spend before any sample has finished (the
    public functions pass the run wing's dry run, :mod:`~langchain_answer_metrics.run.estimate`).

    Example:
        >>> rows = await Run(samples, metrics, RunOptions(budget=1.0)).results()
    """

    def __init__(
        self,
        samples: Iterable[SampleLike],
        metrics: Sequence[AnswerMetric],
        options: RunOptions | None = None,
        *,
        estimate_first: EstimateFirst | None = None,
    ) -> None:
        self.options = options = options or RunOptions()
        check_keys(metrics)
        self.metrics = list(metrics)
        self.pricing = Pricing.of(self.metrics, prices=options.prices)
        self.admission = Admission(
            budget=options.budget, max_requests=options.max_requests, pricing=self.pricing
        )
        self.admission.check_prices()
        self.inputs = samples
        needed = [field for metric in metrics for field in getattr(metric, "required_fields", ())]
        self.samples = rows_of(samples, needed, id_key=options.id_key)
        self.estimate_first = estimate_first

    async def results(self) -> EvaluationResults:
        """Every row, in order, with why the run stopped and its pricing."""
        rows = [row async for row in self.stream()]
        return EvaluationResults(
            rows,
            inputs=self.inputs if is_frame(self.inputs) else None,
            stopped=run_stop(rows),
            pricing=self.pricing,
        )

    async def stream(self) -> AsyncGenerator[SampleResults, None]:
        """Each sample's row in input order, reading the samples lazily."""
        parts = self._wire()
        progress, keeper, halting, window = parts
        try:
            while True:
                window.moved.clear()
                await window.fill(progress.given_back)
                if halting.aborted:
                    window.cancel()
                if not window.pending:
                    break
                if not window.pending[0].task.done():
                    await window.wait_for_head(progress.timeout)
                    progress.quiet()
                    continue
                yield self._finished_head(parts)
            if halting.halted:  # the rest of the input is reported, not scored
                for row in halting.rest(
                    itertools.chain(window.held, window.source), progress.given_back
                ):
                    progress.skipped()
                    yield row
                progress.report()
        finally:
            halting.close()
            window.cancel_all()
            keeper.close()

    def _wire(self) -> _Parts:
        """The collaborators of one stream, sharing one run scope."""
        options, metrics, samples = self.options, self.metrics, self.samples
        # The sample tasks run in a context holding this run's scope. A generator may be
        # resumed from different tasks (see stream_evaluate), so the scope is not set
        # around the loop but given to each task it starts.
        context = contextvars.copy_context()
        scope = RunScope(
            max_concurrency=options.max_concurrency,
            max_consecutive_failures=options.max_consecutive_failures,
        )
        context.run(enter_scope, scope)

        def requests_sent() -> int:
            return scope.budget.granted if scope.budget else 0

        def requests() -> tuple[int, int]:
            budget = scope.budget
            return (budget.returned, budget.granted - budget.returned) if budget else (0, 0)

        progress = ProgressReport(
            on_progress=options.on_progress,
            requests=requests,
            total=len(samples) if isinstance(samples, Sequence) else None,
        )
        keeper = Keeper(options.checkpoint, metrics, keep_degraded=options.keep_degraded)
        if isinstance(samples, Sequence):
            keeper.check_ids(samples)  # before the checkpoint is opened or a request sent
        halting = Halting(scope, keys=[metric.key for metric in metrics])
        window = ReadAhead(
            samples,
            metrics,
            ahead=window_size(metrics, options.max_concurrency, options.window),
            admission=self.admission,
            keeper=keeper,
            halting=halting,
            context=context,
            config=options.config,
            requests_sent=requests_sent,
            estimate_first=self.estimate_first,
        )
        return _Parts(progress, keeper, halting, window)

    @staticmethod
    def _finished_head(parts: _Parts) -> SampleResults:
        """The row of the first pending sample, which is done: scored (and kept), read
        back from the checkpoint, or not run (cancelled by a stop)."""
        progress, keeper, halting, window = parts
        head = window.pending.popleft()
        # Its done callback may not have run yet: the limits must see it finished
        # before the next admission, or an empty run could still "wait" for it.
        window.finished(head.index, head.task)
        if head.task.cancelled() and halting.halted:  # aborted in flight
            progress.skipped()
            return halting.not_run(head.index)
        if halting.halted and _judges_excluded(head.task.result()):
            # Every judge was found broken before this sample sent anything: not run,
            # so that a rerun, once the judges are fixed, scores it.
            progress.skipped()
            return halting.not_run(head.index)
        row = keeper.merged(head.task.result(), head.saved)
        if isinstance(head.task, asyncio.Task):  # scored now, not read back
            keeper.keep(row, head.fingerprint)
        progress.row(errors=bool(row.errors))
        return row


def _judges_excluded(row: SampleResults) -> bool:
    """Whether every metric of ``row`` failed only because its judges were excluded."""
    return bool(row.results) and all(
        isinstance(result, MetricError) and result.error_type == "AllJudgesExcludedError"
        for result in row.results.values()
    )


class _Parts(NamedTuple):
    progress: ProgressReport
    keeper: Keeper
    halting: Halting
    window: ReadAhead
