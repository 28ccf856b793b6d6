"""AgentSample: what an agent did (its messages), what it should have done, and the task.

    >>> sample = AgentSample(messages=[
    ...     HumanMessage("Weather in Paris?"),
    ...     AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"},
    ...                                "id": "c1"}]),
    ...     ToolMessage("sunny", tool_call_id="c1"),
    ...     AIMessage("It is sunny in Paris.")],
    ...     reference_tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}}])
    >>> sample.user_input, sample.final_answer, [c.call.render() for c in sample.tool_calls]
    ('Weather in Paris?', 'It is sunny in Paris.', ["get_weather(city='Paris')"])

:func:`check_agent_sample` is how a metric reads its input (an ``AgentSample``, a dict of
its fields, or a dataset row), refusing a missing or malformed field before any request
with :class:`~langchain_answer_metrics.core.sample.InvalidSampleError` naming the metric and
the field (``messages[2].tool_calls[0].function.name``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import model_validator

from langchain_answer_metrics.agents.calls import MessageFormError, ToolCall, as_expected_calls
from langchain_answer_metrics.agents.messages import AgentMessage, as_messages
from langchain_answer_metrics.agents.trajectory import (
    TrajectoryCall,
    calls_made,
    expected_calls,
    final_answer,
    first_user_text,
)
from langchain_answer_metrics.core.sample import (
    DEFAULT_MAX_INPUT_CHARS,
    InvalidSampleError,
    RowFields,
    Sample,
    check_messages_sample,
    to_sample,
)

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

TRAJECTORY_FIELDS = ("messages", "reference_tool_calls", "reference_messages")
"""The fields an agent sample has beyond a :class:`Sample`'s."""
AGENT_FIELDS = (*TRAJECTORY_FIELDS, "user_input", "reference")
"""The fields of an :class:`AgentSample` a dict may give."""


class AgentSample(Sample):
    """One agent run to score: its messages, the expected calls, the task, the outcome.

    A :class:`~langchain_answer_metrics.core.sample.Sample` (so the runner takes it as one)
    whose ``response`` is the agent's final answer. Messages are normalised when the
    sample is built (see :mod:`~langchain_answer_metrics.agents.messages`).

    Attributes:
        messages: what the agent did: LangChain messages, OpenAI chat dicts, or a mapping
            with a ``messages`` key (a LangGraph state).
        reference_tool_calls: the expected calls, ``{"name": ..., "args": {...}}`` or in
            OpenAI's ``function`` form, in order; a nested list is a group of parallel
            calls (no order among them).
        reference_messages: or an expected trajectory, in any of the message forms; its
            tool calls are the expected calls. Giving both is refused as ambiguous.
        user_input: the task; default: the first human message.
        reference: the expected outcome, in words.
        response: the final answer; default: the last AI message's text, if it made no call.

    Raises:
        pydantic.ValidationError: a message or call that cannot be read, or both
            ``reference_tool_calls`` and ``reference_messages``.

    Example:
        >>> AgentSample(messages=[{"role": "user", "content": "Hi"},
        ...                       {"role": "assistant", "content": "Hello!"}],
        ...             reference_tool_calls=[]).expected_tool_calls
        []
    """

    messages: list[AgentMessage]
    reference_tool_calls: list[ToolCall | list[ToolCall]] | None = None
    reference_messages: list[AgentMessage] | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalised(cls, data: Any) -> Any:
        return normalised_fields(data) if isinstance(data, Mapping) else data

    @functools.cached_property
    def tool_calls(self) -> list[TrajectoryCall]:
        """The agent's calls in order, each with its AI message's index, its parallel
        group and its tool's result."""
        return calls_made(self.messages)

    @functools.cached_property
    def expected_tool_calls(self) -> list[TrajectoryCall] | None:
        """The expected calls (from ``reference_tool_calls`` or ``reference_messages``),
        as a trajectory's; None when neither is given."""
        if self.reference_messages is not None:
            return calls_made(self.reference_messages)
        if self.reference_tool_calls is None:
            return None
        return expected_calls(
            [item if isinstance(item, list) else [item] for item in self.reference_tool_calls]
        )

    @property
    def final_answer(self) -> str | None:
        """The agent's final answer: the last AI message's text, if it made no call."""
        return final_answer(self.messages)

    @classmethod
    def from_langgraph(
        cls,
        graph: CompiledStateGraph,
        config: Mapping[str, Any],
        *,
        messages_key: str = "messages",
        subgraphs: bool = True,
        **fields: Any,
    ) -> AgentSample:
        """A LangGraph thread, read from the graph's checkpointer: its messages at the
        checkpoint ``config`` names (the latest by default), with the messages of the
        subgraphs that ran in it merged in where they happened (``subgraphs=False``: the
        graph's own only), and ``fields`` (``reference_tool_calls``, ``user_input`` ...).

        Raises:
            ThreadNotReadableError: the graph has no checkpointer, ``config`` no
                ``thread_id``, or the thread no messages.

        Example:
            >>> config = {"configurable": {"thread_id": "trip-1"}}
            >>> graph.invoke({"messages": [("user", "Weather in Paris?")]}, config)
            >>> sample = AgentSample.from_langgraph(graph, config,
            ...     reference_tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}}])
            >>> TrajectoryMatch().invoke(sample).score
            1.0
        """
        from langchain_answer_metrics.agents.langgraph import thread_messages

        messages = thread_messages(graph, config, messages_key=messages_key, subgraphs=subgraphs)
        return cls(messages=messages, **fields)

    def __repr__(self) -> str:
        calls = ", ".join(call.call.render() for call in self.tool_calls)
        text = f"AgentSample(user_input={self.user_input!r:.60}, messages={len(self.messages)}, "
        return text + f"calls=[{calls:.120}])"


def normalised_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """An agent sample's fields with the messages and expected calls read from their form,
    the task and the final answer filled in. Raises :class:`MessageFormError`."""
    fields = dict(data)
    fields["messages"] = as_messages(fields.get("messages"), "messages")
    if fields.get("reference_tool_calls") is not None:
        if fields.get("reference_messages") is not None:
            raise MessageFormError(
                "reference_tool_calls",
                "and reference_messages are both given, which is ambiguous: give one",
            )
        groups = as_expected_calls(fields["reference_tool_calls"])
        fields["reference_tool_calls"] = [
            group[0] if len(group) == 1 else group for group in groups
        ]
    if fields.get("reference_messages") is not None:
        fields["reference_messages"] = as_messages(
            fields["reference_messages"], "reference_messages"
        )
    if fields.get("user_input") is None:
        fields["user_input"] = first_user_text(fields["messages"])
    if fields.get("response") is None:
        fields["response"] = final_answer(fields["messages"])
    return fields


def check_agent_sample(
    metric: str,
    value: Any,
    *,
    needs_expected: bool = False,
    max_chars: int = DEFAULT_MAX_INPUT_CHARS,
) -> AgentSample:
    """``value`` as an :class:`AgentSample` for ``metric``, refused before any request
    with :class:`InvalidSampleError` naming the field when a field is missing or cannot
    be read. With ``needs_expected``, the expected calls (``reference_tool_calls`` or
    ``reference_messages``) are required.

    ``value`` is an ``AgentSample``, a dict of its fields (an unknown key is refused, as a
    likely typo) or a dataset row the runner mapped (its other fields are ignored).
    """
    sample = check_messages_sample(
        AgentSample,
        metric,
        value,
        fields=AGENT_FIELDS,
        also=("response",),
        kind="an agent sample",
        holds="trajectory",
        read=lambda mapping: _from_mapping(metric, mapping, max_chars),
    )
    if needs_expected and sample.expected_tool_calls is None:
        raise InvalidSampleError(
            metric,
            "reference_tool_calls",
            "is required but missing (give the expected calls, or reference_messages)",
        )
    return sample


def _from_mapping(metric: str, value: Mapping[str, Any], max_chars: int) -> AgentSample:
    texts = {name: value.get(name) for name in ("user_input", "reference", "response")}
    if isinstance(value, RowFields):
        # What a mapping found: the response is the trajectory's own final answer, and a
        # task that is not text (an agent's input messages) gives way to the first human
        # message.
        texts["response"] = None
        if not isinstance(texts["user_input"], str):
            texts["user_input"] = None
    checked = to_sample(metric, texts, required=(), max_chars=max_chars)
    try:
        fields = normalised_fields(
            {
                "messages": value["messages"],
                "reference_tool_calls": value.get("reference_tool_calls"),
                "reference_messages": value.get("reference_messages"),
                "user_input": checked.user_input,
                "reference": checked.reference,
                "response": checked.response,
            }
        )
    except MessageFormError as error:
        raise InvalidSampleError(metric, error.path, error.problem) from None
    # Every field is read and checked above: built without reading the messages again.
    return AgentSample.model_construct(**fields)


def task_and_answer(fields: Mapping[str, Any]) -> dict[str, str]:
    """The task and the final answer of an agent's messages found in a row, for a record
    to show (nothing when the messages cannot be read: the metrics say why)."""
    try:
        messages = as_messages(fields.get("messages"))
    except MessageFormError:
        return {}
    found = {"user_input": first_user_text(messages), "response": final_answer(messages)}
    return {name: text for name, text in found.items() if text is not None}
