"""Score whole datasets: every sample with every metric, streamed, under one request budget.

    >>> rows = evaluate(samples, metrics=[FactualCorrectness(llm=judge), Faithfulness(llm=judge)],
    ...                 max_concurrency=16)
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
import os
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterable, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, Field

from langchain_answer_metrics.checkpoints import Checkpoint, metric_signature, sample_fingerprint
from langchain_answer_metrics.judging.scope import RunScope, at_position, enter_scope
from langchain_answer_metrics.judging.sync import BlockingSession, run_sync
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.redaction import redact
from langchain_answer_metrics.result import MetricResult
from langchain_answer_metrics.sample import SampleLike
from langchain_answer_metrics.strict_options import rejects_unknown_keywords


class MetricError(BaseModel):
    """A metric that could not score a sample, in that sample's place."""

    key: str
    error_type: str
    message: str


class SampleResults(BaseModel):
    """Every metric's outcome for one sample, at its position in the input."""

    index: int
    results: dict[str, MetricResult | MetricError]

    @property
    def errors(self) -> dict[str, MetricError]:
        return {
            key: outcome for key, outcome in self.results.items()
            if isinstance(outcome, MetricError)
        }


class Progress(BaseModel):
    """How far a run has got; passed to ``on_progress`` after each sample, and every
    :data:`PROGRESS_EVERY` seconds while the next sample is still being scored."""

    done: int
    errors: int = Field(description="Samples with at least one metric error.")
    total: int | None
    elapsed: float
    requests_done: int = Field(default=0, description="Model requests finished so far.")
    requests_in_flight: int = Field(default=0, description="Model requests out right now.")

    @property
    def rate(self) -> float:
        return self.done / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def eta(self) -> float | None:
        """Seconds left at the rate so far (None before the first sample or without a
        total)."""
        if self.total is None or not self.done or self.elapsed <= 0:
            return None
        return (self.total - self.done) / self.rate


PROGRESS_EVERY = 2.0
"""Seconds between progress reports while no sample finishes."""


ProgressCallback = Callable[[Progress], None]


class EvaluationResults(list[SampleResults]):
    """The rows of a run, in input order (a list); :meth:`to_pandas` gives a DataFrame."""

    inputs: Any = None  # the input DataFrame, when the run was given one

    def to_pandas(self, inputs: Any = None) -> Any:
        """The rows as a pandas DataFrame: the input columns (``inputs``, or the DataFrame
        the run was given) and per metric ``<key>_score/_passed/_reason/_error/_result``;
        see :mod:`langchain_answer_metrics.integrations.dataframes`."""
        from langchain_answer_metrics.integrations.dataframes import to_pandas

        return to_pandas(self, inputs if inputs is not None else self.inputs)


def _is_frame(samples: Any) -> bool:
    """Whether ``samples`` is a pandas DataFrame (duck-typed; pandas is not imported here)."""
    return hasattr(samples, "columns") and callable(getattr(samples, "itertuples", None))


def _rows_of(samples: Any) -> Any:
    """A DataFrame becomes its samples (columns found by name, as for dataset rows)."""
    if _is_frame(samples):
        from langchain_answer_metrics.integrations.dataframes import samples_from_dataframe

        return samples_from_dataframe(samples)
    return samples


def _check_keys(metrics: Sequence[AnswerMetric]) -> None:
    keys = [metric.key for metric in metrics]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise ValueError(
            f"metrics share the key(s) {', '.join(duplicates)}; give each a distinct name="
        )


async def _score_sample(
    index: int,
    sample: SampleLike,
    metrics: Sequence[AnswerMetric],
    config: RunnableConfig | None,
) -> SampleResults:
    # This task's requests are served before those of later samples: samples finish
    # steadily in input order however wide the read-ahead window.
    at_position(index)
    outcomes = await asyncio.gather(
        *(metric.ainvoke(sample, config) for metric in metrics), return_exceptions=True
    )
    results: dict[str, MetricResult | MetricError] = {}
    for metric, outcome in zip(metrics, outcomes):
        if isinstance(outcome, MetricResult):
            results[metric.key] = outcome
        elif isinstance(outcome, Exception):
            results[metric.key] = MetricError(
                key=metric.key, error_type=type(outcome).__name__, message=redact(str(outcome))
            )
        else:
            raise outcome
    return SampleResults(index=index, results=results)


def _saved_row(index: int, saved: dict[str, dict[str, Any]]) -> asyncio.Future[SampleResults]:
    """A finished future holding the results a checkpoint already has."""
    future: asyncio.Future[SampleResults] = asyncio.get_running_loop().create_future()
    results = {key: MetricResult.model_validate(result) for key, result in saved.items()}
    future.set_result(SampleResults(index=index, results=dict(results)))
    return future


def _checkpoint_outcomes(row: SampleResults) -> dict[str, dict[str, Any]]:
    return {
        key: {"result": outcome.model_dump(mode="json")}
        if isinstance(outcome, MetricResult)
        else {"error": outcome.model_dump(mode="json")}
        for key, outcome in row.results.items()
    }


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
) -> AsyncGenerator[SampleResults, None]:
    """Yield each sample's results in input order, reading ``samples`` lazily.

    At most ``window`` samples (default ``max(256, 8 * max_concurrency)``) are read
    ahead, so memory stays flat however long the input; a wide window lets embeddings
    be batched across many samples. The window is refilled a quarter at a time, not one
    sample per finished row: samples started together embed their texts together, so a
    long stream keeps sending full embedding batches.

    ``checkpoint="run.jsonl"`` saves each finished sample there (flushed and fsynced) and
    skips, on a rerun, the samples already saved for the same text and metric settings
    (see :class:`~langchain_answer_metrics.checkpoints.Checkpoint`); samples where a
    judge was excluded are re-scored unless ``keep_degraded``.
    """
    if max_concurrency < 1:
        raise ValueError("max_concurrency must be at least 1")
    _check_keys(metrics)
    samples = _rows_of(samples)
    ahead = window or max(256, 8 * max_concurrency)
    refill_below = ahead - max(1, ahead // 4)
    total = len(samples) if isinstance(samples, Sequence) else None
    started = time.monotonic()
    done = errors = 0
    pending: deque[tuple[asyncio.Future[SampleResults], dict[str, Any], str]] = deque()
    store = (
        Checkpoint(
            checkpoint, {metric.key: metric_signature(metric) for metric in metrics},
            keep_degraded=keep_degraded,
        )
        if checkpoint is not None
        else None
    )
    source = iter(samples)
    exhausted = False
    # The sample tasks run in a context holding this run's scope. A generator may be
    # resumed from different tasks (see stream_evaluate), so the scope is not set around
    # the loop but given to each task it starts.
    scope_context = contextvars.copy_context()
    scope = RunScope(max_concurrency=max_concurrency)
    scope_context.run(enter_scope, scope)
    loop = asyncio.get_running_loop()

    def state() -> Progress:
        budget = scope.budget
        return Progress(
            done=done, errors=errors, total=total, elapsed=time.monotonic() - started,
            requests_done=budget.returned if budget else 0,
            requests_in_flight=budget.granted - budget.returned if budget else 0,
        )

    try:
        while True:
            refilling = not exhausted and len(pending) <= refill_below
            while refilling and not exhausted and len(pending) < ahead:
                try:
                    sample = next(source)
                except StopIteration:
                    exhausted = True
                    break
                index = done + len(pending)
                fingerprint = sample_fingerprint(sample) if store is not None else ""
                saved = store.reusable(index, fingerprint) if store is not None else {}
                todo = [metric for metric in metrics if metric.key not in saved]
                if todo:
                    scoring = _score_sample(index, sample, todo, config)
                    scorer = scope_context.run(loop.create_task, scoring)
                    pending.append((scorer, saved, fingerprint))
                else:
                    pending.append((_saved_row(index, saved), {}, fingerprint))
            if not pending:
                return
            running, saved, fingerprint = pending[0]
            while on_progress is not None and not running.done():
                await asyncio.wait([running], timeout=PROGRESS_EVERY)
                if not running.done():
                    on_progress(state())  # requests move while no sample finishes
            row = await running
            pending.popleft()
            if saved:  # some metrics were scored now, the others read back
                restored = {key: MetricResult.model_validate(value) for key, value in saved.items()}
                merged = {**restored, **row.results}
                row = SampleResults(
                    index=row.index, results={metric.key: merged[metric.key] for metric in metrics}
                )
            if store is not None and isinstance(running, asyncio.Task):
                store.append(row.index, fingerprint, _checkpoint_outcomes(row))
            done += 1
            errors += bool(row.errors)
            if on_progress is not None:
                on_progress(state())
            yield row
    finally:
        for task, _, _ in pending:
            task.cancel()
        if store is not None:
            store.close()


@rejects_unknown_keywords()
async def aevaluate(
    samples: Iterable[SampleLike],
    metrics: Sequence[AnswerMetric],
    *,
    max_concurrency: int = 16,
    on_progress: ProgressCallback | None = None,
    config: RunnableConfig | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    keep_degraded: bool = False,
) -> EvaluationResults:
    """Score every sample with every metric; one :class:`SampleResults` per sample, in order.

    ``samples`` may also be a pandas DataFrame; ``.to_pandas()`` on the result gives its
    columns with the scores beside them."""
    rows = EvaluationResults(
        [
            row
            async for row in astream_evaluate(
                samples, metrics, max_concurrency=max_concurrency,
                on_progress=on_progress, config=config, checkpoint=checkpoint,
                keep_degraded=keep_degraded,
            )
        ]
    )
    rows.inputs = samples if _is_frame(samples) else None
    return rows


@rejects_unknown_keywords()
def evaluate(
    samples: Iterable[SampleLike],
    metrics: Sequence[AnswerMetric],
    *,
    max_concurrency: int = 16,
    on_progress: ProgressCallback | None = None,
    config: RunnableConfig | None = None,
    checkpoint: str | os.PathLike[str] | None = None,
    keep_degraded: bool = False,
) -> EvaluationResults:
    """Sync :func:`aevaluate`: models are called through their sync interface, in
    ``max_concurrency`` threads (see :mod:`langchain_answer_metrics.judging.sync`)."""
    return run_sync(
        aevaluate(
            samples, metrics, max_concurrency=max_concurrency,
            on_progress=on_progress, config=config, checkpoint=checkpoint,
            keep_degraded=keep_degraded,
        ),
        max_concurrency=max_concurrency,
    )


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
