"""The runner's read-ahead window: the samples it keeps started, and how they start.

The runner starts samples in groups (a refill of the window). Before a group's samples
start, each metric queues what they will send in requests shared across samples
(:meth:`AnswerMetric.reserve_requests`: SemanticSimilarity's embedding texts), so full
shared batches leave at once, with the priority of the earliest sample they serve,
instead of after every sample of the group has run its first step. What a group
reserved is released once its last sample is done.

The default window holds enough samples to fill the request budget twice over: a full
budget of requests in flight and as many queued behind, which leave as soon as places
come back, not once the rows of the first have been read and the window refilled. The
metric whose requests serve the fewest samples each fills the budget first
(:meth:`AnswerMetric.samples_per_request`: 1 for a judged metric, whose samples make
their own requests; 64 for SemanticSimilarity, two texts a sample in batches of 128), so
only a run of embedding metrics alone reads further ahead than ``max(256, 8 *
max_concurrency)`` samples, up to :data:`MAX_WINDOW` (SemanticSimilarity alone at
``max_concurrency=8``: 1024).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from langchain_answer_metrics.core.redaction import redact
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.sample import SampleLike
from langchain_answer_metrics.judging.scope import at_position
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.results import MetricError, SampleResults

# The fewest samples the default window holds, whatever the metrics.
MIN_WINDOW = 256
# The most samples the default window reads ahead to fill shared requests.
MAX_WINDOW = 4096


def window_size(
    metrics: Sequence[AnswerMetric], max_concurrency: int, window: int | None = None
) -> int:
    """``window`` if given, else enough samples for ``2 * max_concurrency`` requests of
    the metric whose requests serve the fewest samples (at most :data:`MAX_WINDOW`), and
    at least ``max(MIN_WINDOW, 8 * max_concurrency)``."""
    if window:
        return window
    per_request = min((metric.samples_per_request() for metric in metrics), default=1)
    filling = min(MAX_WINDOW, 2 * max_concurrency * per_request)
    return max(MIN_WINDOW, 8 * max_concurrency, filling)


@dataclass
class Starting:
    """A sample read into the window: the metrics still to score (``todo``; none when a
    checkpoint has them all) and what the checkpoint had (``saved``)."""

    index: int
    sample: SampleLike
    todo: list[AnswerMetric]
    saved: dict[str, Any]
    fingerprint: str


@dataclass
class Pending:
    """A sample started (or read back from the checkpoint), waiting for its turn."""

    index: int
    task: asyncio.Future[SampleResults]
    saved: dict[str, Any]
    fingerprint: str


class Group:
    """Samples started together: what they reserved is released when the last is done."""

    def __init__(self, release: Callable[[], None], size: int) -> None:
        self.release = release
        self.left = size
        if not size:
            release()

    def one_done(self, _: object = None) -> None:
        self.left -= 1
        if not self.left:
            self.release()


def reserve(
    metrics: Sequence[AnswerMetric], group: Sequence[Starting], config: RunnableConfig | None
) -> Group:
    """Have each metric queue what the samples of ``group`` it scores will share (in
    the current run scope); released once each of the group's scored samples is done."""
    releases = []
    for metric in metrics:
        samples = [
            (float(each.index), each.sample)
            for each in group
            if any(todo is metric for todo in each.todo)
        ]
        if samples:
            releases.append(metric.reserve_requests(samples, config))

    def release() -> None:
        for each in releases:
            each()

    return Group(release, sum(bool(each.todo) for each in group))


async def score_sample(
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
            failures = getattr(outcome, "failures", None) or []  # AllModelsFailedError's
            results[metric.key] = MetricError(
                key=metric.key,
                error_type=type(outcome).__name__,
                message=redact(str(outcome)),
                usage={failure.model: failure.usage for failure in failures if failure.usage},
            )
        else:
            raise outcome
    return SampleResults(index=index, results=results)


def saved_row(index: int, saved: dict[str, dict[str, Any]]) -> asyncio.Future[SampleResults]:
    """A finished future holding the results a checkpoint already has."""
    future: asyncio.Future[SampleResults] = asyncio.get_running_loop().create_future()
    results = {key: MetricResult.model_validate(result) for key, result in saved.items()}
    future.set_result(SampleResults(index=index, results=dict(results)))
    return future
