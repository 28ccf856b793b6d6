"""A metric's outcome as LangSmith reads it: feedback for a row (a result, or the error
the metric failed with) and the openevals result dict of a function evaluator. The
evaluators of :mod:`~langchain_answer_metrics.adapters.langsmith.evaluators` score;
this module only shapes what they report.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Mapping
from typing import Any, TypedDict

from langsmith.evaluation.evaluator import EvaluationResult

from langchain_answer_metrics.adapters.langsmith import feedback
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.judging.panel import AllModelsFailedError


class EvaluatorResult(TypedDict):
    """What a function evaluator returns: the openevals / LangSmith result dict."""

    key: str
    score: float | None
    comment: str
    metadata: dict[str, Any]


def feedback_detail(result: MetricResult) -> dict[str, Any]:
    """The claim-level record of a result, JSON-ready, for feedback metadata/extra."""
    return result.model_dump(mode="json", exclude={"key", "score", "reason"})


def error_detail(error: BaseException) -> dict[str, Any]:
    """What went wrong, for an error feedback's metadata/extra (``error: True``)."""
    detail: dict[str, Any] = {
        "error": True,
        "error_type": type(error).__name__,
        "error_message": str(error),
    }
    if isinstance(error, AllModelsFailedError):
        detail["excluded"] = [
            failure.model_dump(mode="json", exclude_none=True) for failure in error.failures
        ]
    return detail


def error_comment(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def feedback_for(
    result: MetricResult,
    *,
    key: str | None = None,
    source_run_id: uuid.UUID | None = None,
    config: Mapping[str, Any] = feedback.FEEDBACK_CONFIG,
) -> EvaluationResult:
    """One LangSmith feedback from a metric result (``config``: its key's feedback config)."""
    detail = feedback_detail(result)
    return EvaluationResult(
        key=key or result.key,
        score=result.score,
        comment=result.reason,
        metadata=detail,
        extra=detail,
        feedback_config=dict(config),
        source_run_id=source_run_id,
    )


def error_feedback(
    key: str, error: BaseException, *, source_run_id: uuid.UUID | None = None
) -> EvaluationResult:
    """The feedback of a row the metric failed on: no score, the error in the comment."""
    detail = error_detail(error)
    return EvaluationResult(
        key=key,
        score=None,
        comment=error_comment(error),
        metadata=detail,
        extra=detail,
        source_run_id=source_run_id,
    )


async def settled(scoring: Awaitable[MetricResult]) -> MetricResult | BaseException:
    """The metric's result, or the error it failed with: a failed row is feedback too."""
    try:
        return await scoring
    except Exception as error:
        return error


def function_result(key: str, outcome: MetricResult | BaseException) -> EvaluatorResult:
    if isinstance(outcome, MetricResult):
        return EvaluatorResult(
            key=key, score=outcome.score, comment=outcome.reason, metadata=feedback_detail(outcome)
        )
    return EvaluatorResult(
        key=key, score=None, comment=error_comment(outcome), metadata=error_detail(outcome)
    )
