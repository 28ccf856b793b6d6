"""The metrics as LangSmith summary evaluators: experiment-level feedback per metric.

    evaluate(app, data=..., evaluators=[ev], summary_evaluators=[ev.summary_evaluator])

A summary evaluator reads the row scores its row evaluator
(:class:`~langchain_answer_metrics.integrations.langsmith_evaluators.MetricEvaluator`)
produced in the same experiment, and gives the mean, pass rate, error count and 95% CI.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from langsmith.evaluation.evaluator import EvaluationResult, EvaluationResults
from langsmith.schemas import Example, Run

from langchain_answer_metrics.summary import MetricSummary, summarize

if TYPE_CHECKING:
    from langchain_answer_metrics.integrations.langsmith_evaluators import MetricEvaluator


def summary_feedback(summary: MetricSummary) -> EvaluationResults:
    """Experiment-level feedback: ``<key>_mean``, ``_pass_rate`` (with a threshold),
    ``_error_count``, ``_ci_low`` and ``_ci_high`` (None with fewer than two scores).

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
    )


class MetricSummaryEvaluator:
    """A LangSmith summary evaluator: ``summary_evaluators=[evaluator.summary_evaluator]``.

    It reads the scores its row evaluator produced in the same experiment; rows it has no
    score for (used on its own) are scored first.
    """

    def __init__(self, row_evaluator: MetricEvaluator) -> None:
        self.row_evaluator = row_evaluator
        # LangSmith names the summary run and its results' fallback key from __name__.
        self.__name__ = f"{row_evaluator.key}_summary"

    def summarize(self, runs: Sequence[Run], examples: Sequence[Example]) -> MetricSummary:
        scores = [self.row_evaluator.score_of(run, example) for run, example in zip(runs, examples)]
        metric = self.row_evaluator.metric
        return summarize(metric.key, scores, threshold=metric.threshold)

    def __call__(self, runs: Sequence[Run], examples: Sequence[Example]) -> EvaluationResults:
        return summary_feedback(self.summarize(runs, examples))

    def __repr__(self) -> str:
        return f"<MetricSummaryEvaluator {self.row_evaluator.key}>"
