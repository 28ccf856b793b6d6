"""Score whole datasets: every sample with every metric, streamed, under one request budget.

    >>> rows = evaluate_dataset(samples, [FactualCorrectness(llm=judge), Faithfulness(llm=judge)])
    >>> rows[0].results["faithfulness"].score

Every sample comes back, in order, with a :class:`MetricResult` or an explicit
:class:`MetricError` per metric. Identical model calls within the run are made once
(shared decompositions, repeated references) and embeddings are batched across samples.
``max_concurrency`` caps the model requests in flight across all metrics and models,
chat and embedding alike.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import itertools
import os
import time
from collections import deque
from collections.abc import AsyncGenerator, Iterable, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig

from langchain_answer_metrics.checkpoints import Checkpoint, metric_signature, sample_fingerprint
from langchain_answer_metrics.judging.endpoints import DEFAULT_MAX_CONSECUTIVE_FAILURES
from langchain_answer_metrics.judging.scope import Halt, RunScope, enter_scope
from langchain_answer_metrics.judging.sync import BlockingSession, run_sync
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.prices import PriceTable
from langchain_answer_metrics.result import MetricResult
from langchain_answer_metrics.run_limits import Admission, Decision, sample_size
from langchain_answer_metrics.run_results import (
    PROGRESS_EVERY,
    EvaluationResults,
    MetricError,  # noqa: F401  (runner.MetricError, as before)
    Progress,
    ProgressCallback,
    RunStop,
    SampleResults,
    is_frame,
    not_run_row,
    rows_of,
    run_stop,
)
from langchain_answer_metrics.run_window import (
    Pending,
    Starting,
    reserve,
    saved_row,
    score_sample,
    window_size,
)
from langchain_answer_metrics.sample import SampleLike
from langchain_answer_metrics.spend import Pricing
from langchain_answer_metrics.strict_options import rejects_unknown_keywords


def _check_keys(metrics: Sequence[AnswerMetric]) -> None:
    keys = [metric.key for metric in metrics]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise ValueError(
            f"metrics share the key(s) {', '.join(duplicates)}; give each a distinct name="
        )


def _stop_of(halt: Halt) -> RunStop:
    return RunStop.model_validate({"reason": halt.reason, "message": halt.message})


@rejects_unknown_keywords()
async def astream_evaluate(
    samples: Iterable[SampleLike],
    metrics: Sequence[AnswerMetric],
    *,
    max_concurrency: int = 16,
    window: int | None = None,
    on_progress: ProgressCallback | None = None,
    config: RunnableConfig | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    keep_degraded: bool = False,
    budget: float | None = None,
    max_requests: int | None = None,
    prices: PriceTable | None = None,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
) -> AsyncGenerator[SampleResults, None]:
    """Yield each sample's results in input order, reading ``samples`` lazily.

    A sample is a :class:`Sample` or a dict; a dict's fields are found by name as in a
    dataset file (``question``, ``answer``, ``contexts``, ``ground_truth``...: see
    :func:`~langchain_answer_metrics.integrations.dataframes.run_inputs`), and contexts
    may be LangChain ``Document`` objects. In a list, a field the metrics need that no
    sample has, or a row holding one field under two names, is refused before any request.

    At most ``window`` samples are read ahead, so memory stays flat however long the
    input; a wide window lets embeddings be batched across many samples. By default it
    holds ``max(256, 8 * max_concurrency)`` samples, or, for embedding metrics alone,
    enough for ``2 * max_concurrency`` full batches (see
    :mod:`~langchain_answer_metrics.run_window`).
    The window is refilled a quarter at a time, not one sample per finished row: the
    texts of the samples started together are queued before they start, so a long
    stream keeps sending full embedding batches, several at once.

    ``checkpoint="run.jsonl"`` saves each finished sample there (flushed and fsynced) and
    skips, on a rerun, the samples already saved for the same text and metric settings
    (see :class:`~langchain_answer_metrics.checkpoints.Checkpoint`); samples where a
    judge was excluded are re-scored unless ``keep_degraded``.

    ``budget`` (USD, with a price for every model: ``prices`` by label or model id, else
    the built-in table) and ``max_requests`` stop the run from starting samples that
    would take it past them (see :mod:`~langchain_answer_metrics.run_limits`). Samples a
    run stops before are yielded as not run (``row.not_run``; never checkpointed). So are
    the samples in flight when ``max_consecutive_failures`` requests in a row to one
    endpoint fail (the circuit breaker, see :mod:`~langchain_answer_metrics.judging.endpoints`).
    """
    if max_concurrency < 1:
        raise ValueError("max_concurrency must be at least 1")
    _check_keys(metrics)
    admission = Admission(
        budget=budget, max_requests=max_requests, pricing=Pricing.of(metrics, prices=prices)
    )
    admission.check_prices()
    keys = [metric.key for metric in metrics]
    samples = rows_of(
        samples, [field for metric in metrics for field in getattr(metric, "required_fields", ())]
    )
    ahead = window_size(metrics, max_concurrency, window)
    refill_below = ahead - max(1, ahead // 4)
    total = len(samples) if isinstance(samples, Sequence) else None
    started = reported = time.monotonic()
    done = errors = not_run = 0
    pending: deque[Pending] = deque()
    signatures = {metric.key: metric_signature(metric) for metric in metrics}
    store = Checkpoint(checkpoint, signatures, keep_degraded=keep_degraded) if checkpoint else None
    source = iter(samples)
    held: list[SampleLike] = []  # read, but waiting for room under the limits
    exhausted = False
    # The sample tasks run in a context holding this run's scope. A generator may be
    # resumed from different tasks (see stream_evaluate), so the scope is not set around
    # the loop but given to each task it starts.
    scope_context = contextvars.copy_context()
    scope = RunScope(
        max_concurrency=max_concurrency, max_consecutive_failures=max_consecutive_failures
    )
    scope_context.run(enter_scope, scope)
    loop = asyncio.get_running_loop()
    moved = asyncio.Event()  # a sample finished
    halt_watch = loop.create_task(scope.halted().wait())  # the run was stopped

    def requests_sent() -> int:
        return scope.budget.granted if scope.budget else 0

    def state() -> Progress:
        budget = scope.budget
        return Progress(
            done=done, errors=errors, total=total, elapsed=time.monotonic() - started,
            requests_done=budget.returned if budget else 0,
            requests_in_flight=budget.granted - budget.returned if budget else 0,
            not_run=not_run,
        )

    def finished(index: int, task: asyncio.Future[SampleResults]) -> None:
        if task.cancelled() or task.exception() is not None:
            admission.abandoned(index)
        else:
            admission.finished(index, task.result().results)
        moved.set()

    def admit() -> None:
        nonlocal exhausted
        if len(pending) > refill_below and not admission.active:
            return
        group: list[Starting] = []  # read now, started together
        while scope.halt is None and len(pending) + len(group) < ahead:
            if not held:
                try:
                    held.append(next(source))
                except StopIteration:
                    exhausted = True
                    break
            sample = held[0]
            index = done + not_run + len(pending) + len(group)
            fingerprint = sample_fingerprint(sample) if store is not None else ""
            saved = store.reusable(index, fingerprint) if store is not None else {}
            todo = [metric for metric in metrics if metric.key not in saved]
            if todo:
                size = sample_size(sample)
                decision = admission.decide(size, requests_sent())
                if decision is Decision.WAIT:
                    break
                if decision is Decision.STOP:
                    stop = admission.stop(requests_sent())
                    scope.stop(Halt(reason=stop.reason, message=stop.message))
                    break
                admission.started(index, size)
            held.pop()
            group.append(Starting(index, sample, todo, saved, fingerprint))
        # Only admitted samples are in the group: what they share is queued first.
        reserved = scope_context.run(reserve, metrics, group, config)
        for each in group:
            if not each.todo:
                pending.append(
                    Pending(each.index, saved_row(each.index, each.saved), {}, each.fingerprint)
                )
                continue
            scorer = scope_context.run(
                loop.create_task, score_sample(each.index, each.sample, each.todo, config)
            )
            scorer.add_done_callback(functools.partial(finished, each.index))
            scorer.add_done_callback(reserved.one_done)
            pending.append(Pending(each.index, scorer, each.saved, each.fingerprint))

    try:
        while True:
            moved.clear()
            if not exhausted:
                admit()
            if scope.halt is not None and scope.halt.abort:
                for item in pending:
                    if not item.task.done():
                        item.task.cancel()
            if not pending:
                break
            head = pending[0]
            if not head.task.done():
                # A sample finishing out of turn matters only when it may make room
                # under the limits; a stop (the circuit breaker) matters once.
                waiting: list[asyncio.Future[Any]] = [head.task]
                waiting += [] if halt_watch.done() else [halt_watch]
                moved_watch = None
                if admission.active and not exhausted and scope.halt is None:
                    moved_watch = loop.create_task(moved.wait())
                    waiting.append(moved_watch)
                try:
                    await asyncio.wait(
                        waiting, timeout=PROGRESS_EVERY if on_progress else None,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                finally:
                    if moved_watch is not None:
                        moved_watch.cancel()
                quiet_for = time.monotonic() - reported
                if on_progress is not None and quiet_for >= PROGRESS_EVERY:
                    reported = time.monotonic()
                    on_progress(state())  # requests move while no sample finishes
                continue
            pending.popleft()
            # Its done callback may not have run yet: the limits must see it finished
            # before the next admission, or an empty run could still "wait" for it.
            finished(head.index, head.task)
            if head.task.cancelled() and scope.halt is not None:  # aborted in flight
                not_run += 1
                yield not_run_row(head.index, keys, _stop_of(scope.halt))
                continue
            row = head.task.result()
            if head.saved:  # some metrics were scored now, the others read back
                restored = {
                    key: MetricResult.model_validate(value) for key, value in head.saved.items()
                }
                merged = {**restored, **row.results}
                row = SampleResults(
                    index=row.index, results={metric.key: merged[metric.key] for metric in metrics}
                )
            if store is not None and isinstance(head.task, asyncio.Task):
                store.append(row.index, head.fingerprint, row.checkpoint_outcomes())
            done += 1
            errors += bool(row.errors)
            if on_progress is not None:
                reported = time.monotonic()
                on_progress(state())
            yield row
        if scope.halt is not None:  # the rest of the input is reported, not scored
            for _ in itertools.chain(held, source):
                not_run += 1
                yield not_run_row(done + not_run - 1, keys, _stop_of(scope.halt))
            if on_progress is not None:
                on_progress(state())
    finally:
        halt_watch.cancel()
        for item in pending:
            item.task.cancel()
        if store is not None:
            store.close()


@rejects_unknown_keywords()
async def aevaluate_dataset(
    samples: Iterable[SampleLike],
    metrics: Sequence[AnswerMetric],
    *,
    max_concurrency: int = 16,
    on_progress: ProgressCallback | None = None,
    config: RunnableConfig | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    keep_degraded: bool = False,
    budget: float | None = None,
    max_requests: int | None = None,
    prices: PriceTable | None = None,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
) -> EvaluationResults:
    """Score every sample with every metric; one :class:`SampleResults` per sample, in order.

    Args:
        samples: ``Sample``s, dicts or a pandas DataFrame (``.to_pandas()`` on the result
            gives its columns with the scores beside them); a generator is read as it runs.
        metrics: the metrics, with distinct keys. The other options: see the guide's
            "Whole datasets" (checkpoint, budget, max_requests, prices, ...).

    Returns:
        The rows in input order, per metric a ``MetricResult`` or a ``MetricError``; with
        ``budget``/``max_requests`` or a tripped breaker, ``.stopped`` says why the
        ``not_run`` rows were not run.

    Raises:
        UnknownOptionError: a misspelt keyword (a ``TypeError``), before any request.

    Example:
        >>> rows = await aevaluate_dataset(samples, [Faithfulness(llm=judge)])"""
    rows = EvaluationResults(
        [
            row
            async for row in astream_evaluate(
                samples, metrics, max_concurrency=max_concurrency,
                on_progress=on_progress, config=config, checkpoint=checkpoint,
                keep_degraded=keep_degraded, budget=budget, max_requests=max_requests,
                prices=prices, max_consecutive_failures=max_consecutive_failures,
            )
        ]
    )
    rows.inputs = samples if is_frame(samples) else None
    rows.stopped = run_stop(rows)
    rows.pricing = Pricing.of(metrics, prices=prices)  # for rows.spend()
    return rows


@rejects_unknown_keywords()
def evaluate_dataset(
    samples: Iterable[SampleLike],
    metrics: Sequence[AnswerMetric],
    *,
    max_concurrency: int = 16,
    on_progress: ProgressCallback | None = None,
    config: RunnableConfig | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    keep_degraded: bool = False,
    budget: float | None = None,
    max_requests: int | None = None,
    prices: PriceTable | None = None,
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES,
) -> EvaluationResults:
    """Sync :func:`aevaluate_dataset` (same arguments): models are called through their sync
    interface, in ``max_concurrency`` threads (see :mod:`langchain_answer_metrics.judging.sync`).

    Example:
        >>> rows = evaluate_dataset(samples, [Faithfulness(llm=judge)], checkpoint="run.jsonl")
    """
    return run_sync(
        aevaluate_dataset(
            samples, metrics, max_concurrency=max_concurrency,
            on_progress=on_progress, config=config, checkpoint=checkpoint,
            keep_degraded=keep_degraded, budget=budget, max_requests=max_requests,
            prices=prices, max_consecutive_failures=max_consecutive_failures,
        ),
        max_concurrency=max_concurrency,
    )


# The package's own names; the root exports evaluate_dataset (no clash with LangSmith's).
evaluate = evaluate_dataset
aevaluate = aevaluate_dataset


@rejects_unknown_keywords(forwards_to=astream_evaluate)
def stream_evaluate(
    samples: Iterable[SampleLike],
    metrics: Sequence[AnswerMetric],
    **options: Any,
) -> Iterator[SampleResults]:
    """Sync :func:`astream_evaluate`: yields rows in order as they finish.

    The stream keeps one private event loop for its lifetime; abandoning it half-way
    (or ending the script with it half consumed) cancels the rest and never hangs.
    """
    session = BlockingSession(options.get("max_concurrency", 16))
    stream = astream_evaluate(samples, metrics, **options)

    async def next_row() -> SampleResults:
        return await stream.__anext__()

    try:
        while True:
            try:
                yield session.run(next_row())
            except StopAsyncIteration:
                return
    finally:
        session.close()
