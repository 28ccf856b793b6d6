"""What the judged agent metrics (AgentGoalAccuracy, TrajectoryJudge) share: an agent
sample as input, the task it judges against, and the trajectory's budget.

The sample is read by :func:`~langchain_answer_metrics.agents.check_agent_sample` (any of
the three message forms, refused before any request when a field is missing or cannot be
read). The task is ``user_input``, else the first human message; neither is refused, as
the judge would have nothing to judge the trajectory against. The trajectory is rendered
once per sample (:mod:`~langchain_answer_metrics.judging.trajectory_text`), within
``tool_result_chars`` per tool result and ``max_trajectory_chars`` in all, and what was
cut goes into the result's details.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig
from pydantic import Field

from langchain_answer_metrics.agents import AGENT_FIELDS, AgentSample, check_agent_sample
from langchain_answer_metrics.core.result import DetailsModel, MetricResult, TokenUsage
from langchain_answer_metrics.core.sample import InvalidSampleError, Sample, SampleField
from langchain_answer_metrics.judging.steps.voting import Vote
from langchain_answer_metrics.judging.trajectory_text import (
    MAX_CHARS,
    TOOL_RESULT_CHARS,
    MessageLike,
    RenderedTrajectory,
    ToolCallLike,
    render_trajectory,
)
from langchain_answer_metrics.metrics.base import JudgedMetric
from langchain_answer_metrics.metrics.settings import (
    MAX_TRAJECTORY_CHARS_SETTING as MAX_TRAJECTORY_CHARS_SETTING,
)
from langchain_answer_metrics.metrics.settings import (
    TOOL_RESULT_CHARS_SETTING as TOOL_RESULT_CHARS_SETTING,
)
from langchain_answer_metrics.metrics.votes import warn_if_votes_will_agree

EXAMPLE_CHARS = 4000
"""The most characters of a trajectory in a few-shot example made from a label."""
EXAMPLE_TOOL_RESULT_CHARS = 300
"""The most characters of one tool result in such an example."""


@dataclass(frozen=True)
class _ExpectedCalls:
    """One group of expected calls, as an assistant message that makes them."""

    tool_calls: tuple[ToolCallLike, ...]
    role: str = "assistant"
    content: str = ""
    tool_call_id: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class ReferencePath:
    """The expected trajectory rendered for the judge, and where it came from."""

    rendered: RenderedTrajectory
    source: str  # "reference_messages" or "reference_tool_calls"


@dataclass(frozen=True)
class SampleView:
    """What the judges are shown of one sample, rendered once for the whole panel."""

    sample: AgentSample
    trajectory: RenderedTrajectory
    reference: ReferencePath | None = None


# The sample being scored, as its judges see it: set by _evaluate around the panel (whose
# tasks copy the context), read by _score_with and _details.
_CURRENT: ContextVar[SampleView | None] = ContextVar("judged_agent_sample", default=None)


class JudgedAgentMetric(JudgedMetric):
    """Base of the judged agent metrics: an :class:`~langchain_answer_metrics.AgentSample`
    in, the trajectory rendered within its budget, ``strictness`` votes per judge.

    Attributes:
        strictness: votes per judge (1 to 5), asked in one request with ``n`` choices where
            the model allows it; use a temperature above 0.
        tool_result_chars: the most characters of one tool result shown to the judge
            (default 1,000); the rest is cut, and the cut is in the details.
        max_trajectory_chars: the most characters of the whole trajectory shown to the
            judge (default 24,000, about 6,000 tokens): beyond it the middle steps are
            left out, counted per tool on one line, and named in the details.
    """

    required_fields: ClassVar[tuple[SampleField, ...]] = ()
    # The faces hand an agent metric the fields a mapping found (messages, expected
    # calls), which check_sample reads in any of their forms.
    reads_agent_fields: ClassVar[bool] = True
    agent_fields: ClassVar[tuple[str, ...]] = AGENT_FIELDS

    strictness: int = Field(default=1, ge=1, le=5)
    tool_result_chars: int = Field(default=TOOL_RESULT_CHARS, ge=50)
    max_trajectory_chars: int = Field(default=MAX_CHARS, ge=2000)

    def model_post_init(self, context: Any) -> None:
        super().model_post_init(context)
        warn_if_votes_will_agree(f"{type(self).__name__} {self.key!r}", self.llm, self.strictness)

    def check_sample(self, value: Any) -> Sample:
        """``value`` as an agent sample with a task, refused before any request."""
        sample = check_agent_sample(self.key, value, max_chars=self.max_input_chars)
        if not sample.messages:
            raise InvalidSampleError(self.key, "messages", "is empty: there is no trajectory")
        if not (sample.user_input or "").strip():
            raise InvalidSampleError(
                self.key,
                "user_input",
                "is required but missing: give the task, or start messages with the user's message",
            )
        return sample

    def _shown(self, sample: AgentSample) -> SampleView:
        """What the judges are shown of ``sample`` (a metric adds the reference path)."""
        return SampleView(sample, self.rendered(sample))

    async def _evaluate(self, sample: Sample, config: RunnableConfig) -> MetricResult:
        assert isinstance(sample, AgentSample)  # check_sample made it one
        token = _CURRENT.set(self._shown(sample))
        try:
            return await super()._evaluate(sample, config)
        finally:
            _CURRENT.reset(token)

    @staticmethod
    def view() -> SampleView:
        """The sample being scored, as its judges see it (inside ``_evaluate`` only)."""
        shown = _CURRENT.get()
        assert shown is not None, "view() is read while a sample is scored"
        return shown

    def labelled_example(
        self, sample: Sample, *, passed: bool, label: bool | float, reason: str
    ) -> tuple[str, dict[str, Any]]:
        """A few-shot example of this metric's step from a human label (for ``align``;
        ``sample`` is an AgentSample, as :meth:`check_sample` made it):
        the sample as the step shows it (the trajectory within :data:`EXAMPLE_CHARS`, as
        examples go with every request) and the label's verdict, ``reason`` first."""
        raise NotImplementedError

    def example_trajectory(self, messages: Sequence[MessageLike]) -> str:
        """A trajectory as an example shows it: within :data:`EXAMPLE_CHARS`."""
        return render_trajectory(
            messages,
            tool_result_chars=min(EXAMPLE_TOOL_RESULT_CHARS, self.tool_result_chars),
            max_chars=EXAMPLE_CHARS,
        ).text

    def _trajectory(self, messages: Sequence[MessageLike], max_chars: int) -> RenderedTrajectory:
        return render_trajectory(
            messages, tool_result_chars=self.tool_result_chars, max_chars=max_chars
        )

    def rendered(self, sample: AgentSample) -> RenderedTrajectory:
        """The sample's trajectory as the judge sees it."""
        return self._trajectory(list(sample.messages), self.max_trajectory_chars)

    def expected_messages(self, sample: AgentSample) -> Sequence[MessageLike] | None:
        """The reference path as messages: ``reference_messages``, or ``reference_tool_calls``
        as the calls an assistant makes, one message per group of parallel calls."""
        if sample.reference_messages is not None:
            return list(sample.reference_messages)
        expected = sample.expected_tool_calls
        if expected is None:
            return None
        groups: dict[int, list[ToolCallLike]] = {}
        for call in expected:
            groups.setdefault(call.group, []).append(call.call)
        return [_ExpectedCalls(tuple(calls)) for _, calls in sorted(groups.items())]

    def reference_path(self, sample: AgentSample) -> ReferencePath | None:
        """The expected trajectory as the judge sees it (half the trajectory's budget):
        ``reference_messages`` as they are, or ``reference_tool_calls`` as the calls an
        assistant makes, one message per group of parallel calls; None without either."""
        messages = self.expected_messages(sample)
        if messages is None:
            return None
        budget = max(2000, self.max_trajectory_chars // 2)
        source = (
            "reference_messages"
            if sample.reference_messages is not None
            else ("reference_tool_calls")
        )
        return ReferencePath(self._trajectory(messages, budget), source)


def spent(votes: list[Vote[Any]]) -> TokenUsage:
    """What a judge's votes cost together."""
    usage = TokenUsage()
    for vote in votes:
        usage = usage.add(vote.usage)
    return usage


def vote_split(votes: list[Any]) -> str:
    """`` (2 PASS / 1 FAIL)`` for pass/fail votes, `` (votes: 4, 3, 4)`` for levels; nothing
    for one vote."""
    if len(votes) < 2:
        return ""
    if all(vote in ("PASS", "FAIL") for vote in votes):
        return f" ({votes.count('PASS')} PASS / {votes.count('FAIL')} FAIL)"
    return f" (votes: {', '.join(str(vote) for vote in votes)})"


class AgentJudgeModelDetails(DetailsModel):
    """One judge's verdict (``verdict``: PASS/FAIL or a level), every vote with its
    reason, and for a trajectory the step it faults (``faulted_step``, of the deciding vote)."""

    absent_when_none = frozenset({"faulted_step", "faulted_steps"})
    verdict: str | int
    votes: list[str | int] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)
    faulted_step: int | None = None
    faulted_steps: list[int | None] | None = None
    tie: bool = False


__all__ = [
    "MAX_TRAJECTORY_CHARS_SETTING",
    "TOOL_RESULT_CHARS_SETTING",
    "AgentJudgeModelDetails",
    "JudgedAgentMetric",
    "ReferencePath",
    "spent",
    "vote_split",
]
