"""What the tool-call metrics share: their input (an agent sample with expected calls),
their argument settings, no model, and the alignment they record.

:class:`ToolCallMetric` is a metric that calls no model: it scores in the caller's thread
(``invoke`` starts no event loop), and its details hold the alignment, each expected
call with the call matched to it or none (:class:`CallAlignment`), and every extra call,
kept compact and built when read (:mod:`~langchain_answer_metrics.metrics.call_alignment`).

    >>> TrajectoryMatch(mode="unordered").invoke(sample).details.alignment[0].matched
    CallRecord(position=1, group=1, name='get_weather', args={'city': 'Paris'}, ...)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from langchain_core.callbacks import CallbackManagerForChainRun
from langchain_core.runnables import RunnableConfig
from pydantic import Field, field_validator

from langchain_answer_metrics.agents import AgentSample, TrajectoryCall, check_agent_sample
from langchain_answer_metrics.agents.matching import ArgsMode, ArgsOverride, CallComparison, Pairs
from langchain_answer_metrics.core.result import MetricDetails, MetricResult
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.metrics.call_alignment import (
    AlignedDetails,
    CallAlignment,
    CallAlignments,
    CallRecord,
    ExtraCalls,
    aligned_calls,
)
from langchain_answer_metrics.metrics.trajectory_view import CallCell, TrajectoryView

# The details' models live in call_alignment (the view's in trajectory_view); they are
# importable from here, as before.
__all__ = [
    "AlignedDetails",
    "CallAlignment",
    "CallAlignments",
    "CallCell",
    "CallRecord",
    "ExtraCalls",
    "ToolCallMetric",
    "TrajectoryView",
    "aligned_calls",
    "first_extra",
    "first_missing",
    "not_json",
    "quoted",
]


def quoted(call: TrajectoryCall) -> str:
    return f"`{call.call.render()}`"


def not_json(actual: Sequence[TrajectoryCall], expected: Sequence[TrajectoryCall]) -> list[str]:
    """The calls whose arguments were not a JSON object (compared as text), in words."""
    return [
        f"{side} call {call.position + 1} ({call.call.name}): arguments not a JSON object, "
        "compared as text"
        for side, calls in (("agent's", actual), ("expected", expected))
        for call in calls
        if call.call.invalid_arguments
    ]


def first_missing(
    actual: Sequence[TrajectoryCall], expected: Sequence[TrajectoryCall], pairs: Pairs
) -> str | None:
    """The first expected call left unmatched, and the unmatched call of its name the
    agent made instead, if any, in words."""
    used = set(pairs.values())
    for index, wanted in enumerate(expected):
        if index in pairs:
            continue
        instead = next(
            (
                made
                for position, made in enumerate(actual)
                if position not in used and made.call.name == wanted.call.name
            ),
            None,
        )
        if instead is None:
            return f"expected call {index + 1} {quoted(wanted)} was not made"
        return (
            f"call {instead.position + 1}: expected {quoted(wanted)}, the agent called "
            f"{quoted(instead)}"
        )
    return None


def first_extra(actual: Sequence[TrajectoryCall], pairs: Pairs) -> str | None:
    """The first call made that matched no expected call, in words."""
    used = set(pairs.values())
    for position, made in enumerate(actual):
        if position not in used:
            return f"call {position + 1}: the agent called {quoted(made)}, which was not expected"
    return None


class ToolCallMetric(AnswerMetric):
    """Base of the metrics that compare an agent's tool calls with the expected ones.

    No model is called: the score is computed from the sample alone.

    Attributes:
        tool_args: how arguments are compared: ``"exact"``, ``"ignore"`` (names only),
            ``"superset"`` (the call has every expected argument, may have more) or
            ``"subset"`` (every argument of the call is expected).
        tool_args_overrides: per tool name, a callable ``(actual_args, expected_args) ->
            bool`` or a list of the argument names to compare, instead of ``tool_args``.
    """

    required_fields: ClassVar[tuple[SampleField, ...]] = ()
    # The faces give it the fields they found as they are (an agent's messages in any
    # form), for its check to read (see check_agent_sample).
    reads_agent_fields: ClassVar[bool] = True

    tool_args: ArgsMode = "exact"
    tool_args_overrides: dict[str, ArgsOverride] = Field(default_factory=dict)

    @field_validator("tool_args_overrides", mode="before")
    @classmethod
    def _overrides_checked(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ValueError("tool_args_overrides must map tool names to a callable or a list")
        for name, rule in value.items():
            names = not isinstance(rule, (str, bytes)) and isinstance(rule, Sequence)
            if not (callable(rule) or (names and all(isinstance(item, str) for item in rule))):
                raise ValueError(
                    f"tool_args_overrides[{name!r}] must be a callable (actual_args, "
                    f"expected_args) -> bool or a list of argument names, got "
                    f"{type(rule).__name__}"
                )
        return {str(name): rule if callable(rule) else list(rule) for name, rule in value.items()}

    def comparison(self) -> CallComparison:
        """Whether a call made matches an expected one, under these settings."""
        return CallComparison(tool_args=self.tool_args, overrides=self.tool_args_overrides)

    def check_sample(self, value: Any) -> AgentSample:
        """``value`` as an :class:`AgentSample` with expected calls, refused before any
        work naming the field when one is missing or cannot be read."""
        return check_agent_sample(
            self.key, value, needs_expected=True, max_chars=self.max_input_chars
        )

    def _panel_members(self) -> Sequence[Any]:
        return ()

    def _scored(self, sample: AgentSample) -> MetricResult:
        """The result for one checked sample."""
        raise NotImplementedError

    def _computed(self, score: float, details: MetricDetails, reason: str) -> MetricResult:
        return self._result(score=score, per_model={}, details=details, reason=reason)

    async def _evaluate(self, sample: Sample, config: RunnableConfig) -> MetricResult:
        assert isinstance(sample, AgentSample)  # check_sample made it
        return self._scored(sample)

    def _run_blocking(
        self, value: Any, run_manager: CallbackManagerForChainRun, config: RunnableConfig
    ) -> MetricResult:
        # Pure computation: no event loop to start, no model to reach.
        return self._scored(self.check_sample(value))
