"""TrajectoryMatch: did the agent make the expected tool calls? 1.0 or 0.0, no model.

A tool call is its name and its arguments; the agent's calls are the ``tool_calls`` of its
AI messages, in order, and calls made together in one AI message (parallel calls) have no
order among themselves. How calls are grouped into messages does not matter otherwise.

- ``mode="strict"``: the same calls in the same order;
- ``"unordered"``: the same calls in any order (a one-to-one matching);
- ``"superset"``: every expected call was made (extra calls allowed);
- ``"subset"``: every call made was expected (missing calls allowed).

Matching is one-to-one and the largest possible, never greedy. The arguments are compared
by ``tool_args`` (see :class:`~langchain_answer_metrics.metrics.agent_calls.ToolCallMetric`).
The reason names the first divergence; the details hold the alignment.

    >>> TrajectoryMatch(mode="superset").invoke({"messages": messages,
    ...     "reference_tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]}).score
    1.0
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from langchain_answer_metrics.agents import AgentSample
from langchain_answer_metrics.agents.matching import (
    ArgsMode,
    CallComparison,
    largest_matching,
    longest_in_order,
    ordered_matching,
)
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.metrics.agent_calls import (
    AlignedDetails,
    ToolCallMetric,
    aligned_calls,
    first_extra,
    first_missing,
    not_json,
    quoted,
)
from langchain_answer_metrics.metrics.explain import counted

TrajectoryMode = Literal["strict", "unordered", "superset", "subset"]
TRAJECTORY_MODES: tuple[TrajectoryMode, ...] = ("strict", "unordered", "superset", "subset")


class TrajectoryMatchDetails(AlignedDetails):
    """The settings, each expected call with the call matched to it (``alignment``), the
    calls matched to none (``extra``), the first divergence in words, and the calls whose
    arguments were not JSON (compared as text)."""

    kind: Literal["trajectory_match"] = "trajectory_match"
    mode: TrajectoryMode
    tool_args: ArgsMode
    overridden_tools: list[str] = Field(default_factory=list)
    calls_made: int
    calls_expected: int
    divergence: str | None = None
    arguments_not_json: list[str] = Field(default_factory=list)


class TrajectoryMatch(ToolCallMetric):
    """Whether the agent's tool calls match the expected ones: 1.0 or 0.0, no model.

    Attributes:
        mode: ``"strict"`` (the same calls, in order), ``"unordered"`` (the same calls),
            ``"superset"`` (every expected call made, extra allowed) or ``"subset"``
            (every call made was expected, missing allowed).
        tool_args: ``"exact"``, ``"ignore"``, ``"superset"`` or ``"subset"`` (see
            :class:`~langchain_answer_metrics.metrics.agent_calls.ToolCallMetric`).
        tool_args_overrides: per tool, a callable ``(actual_args, expected_args) -> bool``
            or the list of argument names to compare.
        name: the result key (default ``"trajectory_match"``).

    Raises:
        InvalidSampleError: from ``invoke``: ``messages`` or the expected calls
            (``reference_tool_calls`` / ``reference_messages``) missing or unreadable.

    Example:
        >>> match = TrajectoryMatch(mode="unordered", tool_args_overrides={"search": ["query"]})
        >>> result = match.invoke({"messages": messages, "reference_tool_calls": expected})
        >>> result.score, result.reason
        (0.0, "call 2: expected `get_weather(city='Paris')`, the agent called ...")
    """

    metric_key: ClassVar[str] = "trajectory_match"

    mode: TrajectoryMode = "strict"

    def _scored(self, sample: AgentSample) -> MetricResult:
        actual, expected = sample.tool_calls, sample.expected_tool_calls or []
        same = self.comparison()
        in_order: set[int] | None = None
        if self.mode == "strict":
            complete, ordered = ordered_matching(actual, expected, same)
            pairs = dict(ordered)
            in_order = set(pairs)
            if not complete:  # the rest matched in any order, to show what was there
                divergence = _strict_divergence(sample, len(ordered), pairs)
                rest, rest_in_order = _rest_matched(sample, pairs, same)
                pairs.update(rest)
                in_order |= rest_in_order
        else:
            pairs = largest_matching(actual, expected, same)
            missing = len(pairs) < len(expected) and self.mode != "subset"
            extra = len(pairs) < len(actual) and self.mode != "superset"
            complete = not missing and not extra
            divergence = (
                (first_missing(actual, expected, pairs) if missing else None)
                or (first_extra(actual, pairs) if extra else None)
                or ""
            )
        aligned = aligned_calls(actual, expected, pairs, in_order)
        details = TrajectoryMatchDetails(
            mode=self.mode,
            tool_args=self.tool_args,
            overridden_tools=sorted(self.tool_args_overrides),
            calls_made=len(actual),
            calls_expected=len(expected),
            **aligned,
            divergence=None if complete else divergence,
            arguments_not_json=not_json(actual, expected),
        )
        reason = (
            _agreement(self.mode, len(actual), len(expected), len(pairs))
            if complete
            else (f"{divergence} ({self.mode} mode, arguments {self.tool_args})")
        )
        if details.arguments_not_json:
            reason += f"; {counted(len(details.arguments_not_json), 'call')} with arguments "
            reason += "that are not JSON, compared as text"
        return self._computed(1.0 if complete else 0.0, details, reason)


def _strict_divergence(sample: AgentSample, matched: int, pairs: dict[int, int]) -> str:
    actual, expected = sample.tool_calls, sample.expected_tool_calls or []
    used = set(pairs.values())
    wanted = next((call for index, call in enumerate(expected) if index not in pairs), None)
    made = next((call for index, call in enumerate(actual) if index not in used), None)
    where = f"call {matched + 1}"
    if wanted is not None and made is not None:
        return f"{where}: expected {quoted(wanted)}, the agent called {quoted(made)}"
    if wanted is not None:
        return f"{where}: expected {quoted(wanted)}, the agent made no more calls"
    assert made is not None  # an ordered match that is not complete leaves a call over
    return (
        f"{where}: the agent called {quoted(made)}, after all "
        f"{counted(len(expected), 'expected call')}"
    )


def _rest_matched(
    sample: AgentSample, pairs: dict[int, int], same: CallComparison
) -> tuple[dict[int, int], set[int]]:
    """The calls left after the in-order prefix: first those that keep both orders (a
    diff), then the others matched in any order; and which expected calls are in order."""
    actual, expected = sample.tool_calls, sample.expected_tool_calls or []
    used = set(pairs.values())
    rest_actual = [index for index in range(len(actual)) if index not in used]
    rest_expected = [index for index in range(len(expected)) if index not in pairs]
    ordered = longest_in_order(
        [actual[i] for i in rest_actual], [expected[i] for i in rest_expected], same
    )
    found = {rest_expected[wanted]: rest_actual[made] for wanted, made in ordered.items()}
    in_order = set(found)
    left_actual = [index for index in rest_actual if index not in set(found.values())]
    left_expected = [index for index in rest_expected if index not in found]
    others = largest_matching(
        [actual[i] for i in left_actual], [expected[i] for i in left_expected], same
    )
    found.update({left_expected[wanted]: left_actual[made] for wanted, made in others.items()})
    return found, in_order


def _agreement(mode: TrajectoryMode, made: int, expected: int, matched: int) -> str:
    if made == expected == 0:
        return "no calls were expected and the agent made none"
    if mode == "strict":
        return f"the agent made the {counted(expected, 'expected call')}, in order"
    if mode == "unordered":
        return f"the agent made the {counted(expected, 'expected call')} (order not compared)"
    if mode == "superset":
        extra = f", and {counted(made - matched, 'other call')}" if made > matched else ""
        return f"the agent made all {counted(expected, 'expected call')}{extra}"
    missing = f"; {expected - matched} expected not made" if expected > matched else ""
    return f"every call the agent made ({made}) was expected{missing}"
