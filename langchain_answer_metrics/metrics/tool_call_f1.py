"""ToolCallF1: partial credit for an agent's tool calls, order-free, no model.

The largest one-to-one matching of the calls made and the calls expected (a call matches
when its name is the same and its arguments agree under ``tool_args``). Precision is
matched / calls made, recall is matched / calls expected, and the score is their F1. No
calls expected and none made scores 1.0.

    >>> ToolCallF1().invoke({"messages": messages, "reference_tool_calls": expected}).details
    ToolCallF1Details(precision=0.5, recall=1.0, f1=0.667, ...)
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from langchain_answer_metrics.agents import AgentSample
from langchain_answer_metrics.agents.matching import ArgsMode, largest_matching
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.metrics.agent_calls import (
    AlignedDetails,
    ToolCallMetric,
    aligned_calls,
    first_extra,
    first_missing,
    not_json,
)


class ToolCallF1Details(AlignedDetails):
    """Precision, recall and F1 of the calls, the counts, and the alignment (each
    expected call with its match or none; the calls matched to none in ``extra``)."""

    kind: Literal["tool_call_f1"] = "tool_call_f1"
    tool_args: ArgsMode
    overridden_tools: list[str] = Field(default_factory=list)
    precision: float
    recall: float
    f1: float
    matched: int
    calls_made: int
    calls_expected: int
    arguments_not_json: list[str] = Field(default_factory=list)


class ToolCallF1(ToolCallMetric):
    """The F1 of the agent's tool calls against the expected ones, order-free, no model.

    Attributes:
        tool_args: ``"exact"``, ``"ignore"``, ``"superset"`` or ``"subset"`` (see
            :class:`~langchain_answer_metrics.metrics.agent_calls.ToolCallMetric`).
        tool_args_overrides: per tool, a callable ``(actual_args, expected_args) -> bool``
            or the list of argument names to compare.
        name: the result key (default ``"tool_call_f1"``).

    Raises:
        InvalidSampleError: from ``invoke``: ``messages`` or the expected calls missing
            or unreadable.

    Example:
        >>> result = ToolCallF1(tool_args="ignore").invoke(
        ...     {"messages": messages, "reference_tool_calls": expected})
        >>> result.details.precision, result.details.recall, result.score
        (0.5, 1.0, 0.6666666666666666)
    """

    metric_key: ClassVar[str] = "tool_call_f1"

    def _scored(self, sample: AgentSample) -> MetricResult:
        actual, expected = sample.tool_calls, sample.expected_tool_calls or []
        pairs = largest_matching(actual, expected, self.comparison())
        matched = len(pairs)
        if not actual and not expected:
            precision = recall = f1 = 1.0
        else:
            precision = matched / len(actual) if actual else 0.0
            recall = matched / len(expected) if expected else 0.0
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        aligned = aligned_calls(actual, expected, pairs)
        details = ToolCallF1Details(
            tool_args=self.tool_args,
            overridden_tools=sorted(self.tool_args_overrides),
            precision=precision,
            recall=recall,
            f1=f1,
            matched=matched,
            calls_made=len(actual),
            calls_expected=len(expected),
            **aligned,
            arguments_not_json=not_json(actual, expected),
        )
        reason = (
            f"{matched} of {len(actual)} calls made matched {len(expected)} expected: "
            f"precision {precision:.2f}, recall {recall:.2f}, F1 {f1:.2f}"
        )
        divergence = first_missing(actual, expected, pairs) or first_extra(actual, pairs)
        if divergence:
            reason += f"; first difference: {divergence}"
        if details.arguments_not_json:
            reason += f"; {len(details.arguments_not_json)} with arguments not JSON (as text)"
        return self._computed(f1, details, reason)
