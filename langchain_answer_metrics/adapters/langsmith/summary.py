"""The metrics as LangSmith summary evaluators: experiment-level feedback per metric.

    evaluate(app, data=..., evaluators=[ev], summary_evaluators=[ev.summary_evaluator])

A summary evaluator reads the row scores its row evaluator
(:class:`~langchain_answer_metrics.adapters.langsmith.evaluators.MetricEvaluator`)
produced in the same experiment, and gives the mean, pass rate, error count and 95% CI,
leaving out the rows the metric does not apply to (a response with no claims under
Faithfulness's default) and counting them in ``<key>_not_applicable`` (and the responses
with no claims, abstentions, in ``<key>_no_claims``; both given only when not 0), and what
the rows spent: ``<key>_tokens`` (input + output tokens; the comment and the
metadata give requests, tokens, cache hits and cost per model) and, when every model that
spent has a price, ``<key>_cost`` (USD). Prices: ``MetricSummaryEvaluator(row_evaluator,
prices={label or model id: Price(...)})``, then the built-in table.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from threading import Lock
from typing import TYPE_CHECKING, Protocol

from langsmith.evaluation.evaluator import EvaluationResult, EvaluationResults
from langsmith.schemas import Example, Run

from langchain_answer_metrics.core.prices import PriceTable
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.run.spend import Pricing, Spend, tally
from langchain_answer_metrics.run.summary import MetricSummary, summarize

if TYPE_CHECKING:
    from langchain_answer_metrics.metrics.base import AnswerMetric


class RowEvaluator(Protocol):
    """What a summary evaluator reads of its row evaluator (a ``MetricEvaluator``,
    which imports this module: named by its shape, so the two modules make no cycle)."""

    @property
    def key(self) -> str: ...

    metric: AnswerMetric

    def result_of(self, run: Run, example: Example | None = None) -> MetricResult | None: ...


class RowResults:
    """The results a row evaluator has produced, by run id (None where the metric
    failed), for its summary evaluator."""

    def __init__(self) -> None:
        self._lock = Lock()
        self._results: dict[uuid.UUID, MetricResult | None] = {}

    def record(self, run_id: uuid.UUID, result: MetricResult | None) -> None:
        with self._lock:
            self._results[run_id] = result

    def get(self, run_id: uuid.UUID) -> tuple[bool, MetricResult | None]:
        with self._lock:
            return run_id in self._results, self._results.get(run_id)


def spend_feedback(key: str, spend: Spend) -> list[EvaluationResult]:
    """``<key>_tokens`` (input + output) with the spend in its comment and metadata, and
    ``<key>_cost`` (USD) when every model that spent has a price."""
    detail = spend.model_dump(mode="json")
    comment = f"{key} spend: {spend.describe()}"
    results = [
        EvaluationResult(
            key=f"{key}_tokens",
            score=float(spend.total.input_tokens + spend.total.output_tokens),
            comment=comment,
            metadata=detail,
            extra=detail,
        )
    ]
    if not spend.unpriced:
        results.append(
            EvaluationResult(key=f"{key}_cost", score=spend.total.cost or 0.0, comment=comment)
        )
    return results


def summary_feedback(summary: MetricSummary, spend: Spend | None = None) -> EvaluationResults:
    """Experiment-level feedback: ``<key>_mean``, ``_pass_rate`` (with a threshold),
    ``_error_count``, ``_ci_low`` and ``_ci_high`` (None with fewer than two scores),
    ``_not_applicable`` and ``_no_claims`` (when not 0), and with ``spend``,
    :func:`spend_feedback`'s.

    Every comment is the one-line summary; the mean's metadata holds all of it.
    """
    detail = summary.model_dump(mode="json")
    comment = summary.describe()
    scores: dict[str, float | None] = {"mean": summary.mean}
    if summary.threshold is not None:
        scores["pass_rate"] = summary.pass_rate
    scores["error_count"] = float(summary.error_count)
    scores["ci_low"] = summary.ci_low
    scores["ci_high"] = summary.ci_high
    for name, count in (
        ("not_applicable", summary.not_applicable),
        ("no_claims", summary.no_claims),
    ):
        if count:
            scores[name] = float(count)
    # The full summary rides on the mean only: five copies would add nothing.
    return EvaluationResults(
        results=[
            EvaluationResult(
                key=f"{summary.key}_{name}",
                score=value,
                comment=comment,
                metadata=detail if name == "mean" else None,
                extra=detail if name == "mean" else None,
            )
            for name, value in scores.items()
        ]
        + (spend_feedback(summary.key, spend) if spend is not None else [])
    )


class MetricSummaryEvaluator:
    """A LangSmith summary evaluator: ``summary_evaluators=[evaluator.summary_evaluator]``.

    It reads the results its row evaluator produced in the same experiment; rows it has
    no result for (used on its own) are scored first. ``prices`` (``{label or model id:
    Price}``, before the built-in table) price what the rows spent.
    """

    def __init__(self, row_evaluator: RowEvaluator, *, prices: PriceTable | None = None) -> None:
        self.row_evaluator = row_evaluator
        self.prices = dict(prices or {})
        # LangSmith names the summary run and its results' fallback key from __name__.
        self.__name__ = f"{row_evaluator.key}_summary"
        self.last_summary: MetricSummary | None = None
        """The summary of the last experiment it summarised (None before any): read
        offline, where LangSmith keeps the experiment's feedback only privately."""

    def summarize(self, runs: Sequence[Run], examples: Sequence[Example]) -> MetricSummary:
        """The rows' summary; a row the metric does not apply to is counted apart."""
        results = [
            self.row_evaluator.result_of(run, example) for run, example in zip(runs, examples)
        ]
        metric = self.row_evaluator.metric
        return summarize(metric.key, results, threshold=metric.threshold)

    def spend(self, runs: Sequence[Run], examples: Sequence[Example]) -> Spend:
        """What the rows' scores spent, per model and in all (cache hits apart)."""
        metric = self.row_evaluator.metric
        results = [
            self.row_evaluator.result_of(run, example) for run, example in zip(runs, examples)
        ]
        rows = [{metric.key: result} for result in results if result is not None]
        return tally(rows, Pricing.of([metric], prices=self.prices))

    def __call__(self, runs: Sequence[Run], examples: Sequence[Example]) -> EvaluationResults:
        summary = self.summarize(runs, examples)
        self.last_summary = summary
        return summary_feedback(summary, self.spend(runs, examples))

    def __repr__(self) -> str:
        return f"<MetricSummaryEvaluator {self.row_evaluator.key}>"
