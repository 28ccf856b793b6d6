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

import os
from collections.abc import AsyncGenerator, Iterable, Iterator, Sequence

from langchain_answer_metrics.core.sample import SampleLike
from langchain_answer_metrics.judging.sync import BlockingSession, run_sync
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.engine import Run
from langchain_answer_metrics.run.options import (
    RunOptions,  # runner.RunOptions: the CLI's
    takes_run_options,
)
from langchain_answer_metrics.run.results import (
    EvaluationResults,
    MetricError,  # noqa: F401  (runner.MetricError, as before)
    Progress,  # noqa: F401  (runner.Progress, as before)
    SampleResults,
)


def run_of(
    samples: Iterable[SampleLike], metrics: Sequence[AnswerMetric], options: RunOptions
) -> Run:
    """The :class:`~langchain_answer_metrics.run.Run` the public functions execute: under
    a limit, the samples started before any has finished are expected to spend what the
    run's dry run estimates (:mod:`~langchain_answer_metrics.run.estimate`: it sends no
    request), and batch mode counts its requests with it.

    Example:
        >>> rows = await run_of(samples, metrics, RunOptions(budget=0.5)).results()
    """

    async def estimate_first(
        sample: SampleLike, todo: Sequence[AnswerMetric]
    ) -> tuple[float | None, int]:
        from langchain_answer_metrics.run.estimate.estimator import aestimate

        plan = await aestimate(
            [sample], todo, prices=options.prices, max_concurrency=options.max_concurrency
        )
        return plan.total.cost_high, plan.total.requests

    if options.batch:  # judge requests through the Batch API (run/batch_mode.py)
        from langchain_answer_metrics.run.batch_mode import BatchRun

        async def count_requests(listed: Sequence[SampleLike], todo: Sequence[AnswerMetric]) -> int:
            from langchain_answer_metrics.run.estimate.estimator import aestimate

            plan = await aestimate(listed, todo, max_concurrency=options.max_concurrency)
            return plan.total.requests

        live = Run(samples, metrics, options, estimate_first=estimate_first)
        return BatchRun(  # type: ignore[return-value]  # the same stream() and results()
            samples, metrics, options, count_requests=count_requests, live=lambda: live
        )
    return Run(samples, metrics, options, estimate_first=estimate_first)


@takes_run_options
async def astream_evaluate(
    samples: Iterable[SampleLike], metrics: Sequence[AnswerMetric], options: RunOptions
) -> AsyncGenerator[SampleResults, None]:
    """Yield each sample's results in input order, reading ``samples`` lazily.

    A sample is a :class:`Sample` or a dict; a dict's fields are found by name as in a
    dataset file (``question``, ``answer``, ``contexts``, ``ground_truth``...: see
    :func:`~langchain_answer_metrics.run.tables.run_inputs`), and contexts
    may be LangChain ``Document`` objects. In a list, a field the metrics need that no
    sample has, or a row holding one field under two names, is refused before any request.

    At most ``window`` samples are read ahead, so memory stays flat however long the
    input; a wide window lets embeddings be batched across many samples. By default it
    holds ``max(256, 8 * max_concurrency)`` samples, or, for embedding metrics alone,
    enough for ``2 * max_concurrency`` full batches (see
    :mod:`~langchain_answer_metrics.run.window`).
    The window is refilled a quarter at a time, not one sample per finished row: the
    texts of the samples started together are queued before they start, so a long
    stream keeps sending full embedding batches, several at once.

    ``checkpoint="run.jsonl"`` saves each finished sample there (flushed and fsynced) and
    skips, on a rerun, the samples already saved for the same text and metric settings
    (the records of the CLI's ``--out``: :mod:`~langchain_answer_metrics.run.records`,
    each found by its id: a dict row's ``id_key``, else its number from 1, as the CLI
    numbers a dataset's rows, so an ``--out`` file resumes here and a checkpoint in the
    CLI; a checkpoint of an earlier version resumes too); samples where a judge was excluded
    are re-scored unless ``keep_degraded``. One run writes a checkpoint at a time: a
    second one refuses at once (``CheckpointBusyError``, naming the first one's process).

    ``budget`` (USD, with a price for every model: ``prices`` by label or model id, else
    the built-in table) and ``max_requests`` stop the run from starting samples that
    would take it past them (see :mod:`~langchain_answer_metrics.run.limits`). Samples a
    run stops before are yielded as not run (``row.not_run``; never checkpointed). So are
    the samples in flight when ``max_consecutive_failures`` requests in a row to one
    endpoint fail (the circuit breaker, see :mod:`~langchain_answer_metrics.judging.endpoints`).

    Args:
        samples: ``Sample``s or dicts, read lazily.
        metrics: the metrics, with distinct keys.
        options: keyword-only, the fields of :class:`~langchain_answer_metrics.run.RunOptions`
            (``max_concurrency``, ``window``, ``checkpoint``, ``budget`` ...).

    Yields:
        One ``SampleResults`` per sample, in input order.

    Raises:
        UnknownOptionError: a misspelt keyword (a ``TypeError``), before any request.

    Example:
        >>> async for row in astream_evaluate(samples, [Faithfulness(llm=judge)], window=64):
        ...     print(row.index, row.results["faithfulness"].score)
    """
    async for row in run_of(samples, metrics, options).stream():
        yield row


@takes_run_options
async def aevaluate_dataset(
    samples: Iterable[SampleLike], metrics: Sequence[AnswerMetric], options: RunOptions
) -> EvaluationResults:
    """Score every sample with every metric; one :class:`SampleResults` per sample, in order.

    Args:
        samples: ``Sample``s, dicts or a pandas DataFrame (``.to_pandas()`` on the result
            gives its columns with the scores beside them); a generator is read as it runs.
        metrics: the metrics, with distinct keys.
        options: keyword-only, each field of :class:`~langchain_answer_metrics.run.RunOptions`
            (``max_concurrency``, ``checkpoint``, ``budget`` ...: listed below).

    Returns:
        The rows in input order, per metric a ``MetricResult`` or a ``MetricError``; with
        ``budget``/``max_requests`` or a tripped breaker, ``.stopped`` says why the
        ``not_run`` rows were not run.

    Raises:
        UnknownOptionError: a misspelt keyword (a ``TypeError``), before any request.

    Example:
        >>> rows = await aevaluate_dataset(samples, [Faithfulness(llm=judge)])"""
    return await run_of(samples, metrics, options).results()


@takes_run_options
def evaluate_dataset(
    samples: Iterable[SampleLike], metrics: Sequence[AnswerMetric], options: RunOptions
) -> EvaluationResults:
    """Sync :func:`aevaluate_dataset` (same arguments): models are called through their sync
    interface, in ``max_concurrency`` threads (see :mod:`langchain_answer_metrics.judging.sync`).

    Args:
        samples: ``Sample``s, dicts or a pandas DataFrame; a generator is read as it runs.
        metrics: the metrics, with distinct keys.
        options: keyword-only, as for :func:`aevaluate_dataset`.

    Returns:
        The rows in input order, per metric a ``MetricResult`` or a ``MetricError``.

    Raises:
        UnknownOptionError: a misspelt keyword (a ``TypeError``), before any request.

    Example:
        >>> rows = evaluate_dataset(samples, [Faithfulness(llm=judge)], checkpoint="run.jsonl")
    """
    return run_sync(
        run_of(samples, metrics, options).results(), max_concurrency=options.max_concurrency
    )


async def cancel_batches(
    metrics: Sequence[AnswerMetric], state: str | os.PathLike[str] | None
) -> list[str]:
    """Cancel the batches a batch run left running (kept in its checkpoint, or in the
    ``<checkpoint>.batches`` side file of an earlier version), through the judges of
    ``metrics``; a line per batch saying what became of it.

    Example:
        >>> asyncio.run(cancel_batches(metrics, "run.jsonl"))
        ['batch_abc123 cancelled']
    """
    from langchain_answer_metrics.run.batch_mode import cancel_batches as cancel

    return await cancel(metrics, state)


async def check_batch(metrics: Sequence[AnswerMetric], *, embeddings: bool = True) -> None:
    """Raise ``BatchUnavailableError`` (naming the model) when ``metrics`` cannot run in
    batch mode: no OpenAI model, or an endpoint that answers 404 on the Batch API;
    ``embeddings``: as ``batch_embeddings``.

    Example:
        >>> asyncio.run(check_batch([Faithfulness(llm=judge)]))
    """
    from langchain_answer_metrics.run.batch_mode import check_batch as check

    await check(metrics, embeddings=embeddings)


# The package's own names; the root exports evaluate_dataset (no clash with LangSmith's).
evaluate = evaluate_dataset
aevaluate = aevaluate_dataset


@takes_run_options
def stream_evaluate(
    samples: Iterable[SampleLike], metrics: Sequence[AnswerMetric], options: RunOptions
) -> Iterator[SampleResults]:
    """Sync :func:`astream_evaluate`: yields rows in order as they finish.

    The stream keeps one private event loop for its lifetime; abandoning it half-way
    (or ending the script with it half consumed) cancels the rest and never hangs.

    Args:
        samples: ``Sample``s or dicts, read lazily (at most ``window`` ahead).
        metrics: the metrics, with distinct keys.
        options: keyword-only, as for :func:`aevaluate_dataset` (``window``: samples
            read ahead).

    Yields:
        One ``SampleResults`` per sample, in input order.

    Raises:
        UnknownOptionError: a misspelt keyword (a ``TypeError``), before any request.

    Example:
        >>> rows = (json.loads(line) for line in open("big.jsonl"))
        >>> for row in stream_evaluate(rows, [Faithfulness(llm=judge)], window=512):
        ...     print(row.index, row.results["faithfulness"].score)
    """
    stream = run_of(samples, metrics, options).stream()
    session = BlockingSession(options.max_concurrency)

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
