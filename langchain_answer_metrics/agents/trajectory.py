"""The normalised view of a trajectory that the agent metrics read: the calls in order,
each with where it was made and what its tool returned, and the final answer.

    >>> calls = calls_made(as_messages([
    ...     {"role": "user", "content": "Weather in Paris and Lyon?"},
    ...     {"role": "assistant", "tool_calls": [
    ...         {"name": "get_weather", "args": {"city": "Paris"}, "id": "a"},
    ...         {"name": "get_weather", "args": {"city": "Lyon"}, "id": "b"}]},
    ...     {"role": "tool", "tool_call_id": "b", "content": "rain"},
    ...     {"role": "tool", "tool_call_id": "a", "content": "sun"}]))
    >>> [(call.position, call.group, call.call.render(), call.result) for call in calls]
    [(0, 0, "get_weather(city='Paris')", 'sun'), (1, 0, "get_weather(city='Lyon')", 'rain')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langchain_answer_metrics.agents.calls import ToolCall
from langchain_answer_metrics.agents.messages import AgentMessage


# A view computed from a sample, never read from outside or written: a plain frozen
# dataclass, a tenth of a pydantic model's cost (a trajectory has many calls).
@dataclass(frozen=True, slots=True)
class TrajectoryCall:
    """One call of a trajectory, where it was made, and its tool's result.

    Attributes:
        call: the call (name and arguments).
        position: its place among all the calls (0 is the first).
        message_index: the index in ``messages`` of the AI message that made it (for an
            expected call given as ``reference_tool_calls``: its index in that list).
        group: which parallel group it belongs to (the n-th AI message with calls, from
            0): calls of one group were made together and have no order among themselves.
        result: what its tool returned (the tool message answering it), if any.
    """

    call: ToolCall
    position: int
    message_index: int
    group: int
    result: str | None = None


def calls_made(messages: Sequence[AgentMessage]) -> list[TrajectoryCall]:
    """The calls of the AI messages, in order, each with its tool's result: the first
    later tool message naming its ``tool_call_id`` (an id used twice answers the earlier
    call first); a tool message without an id answers the earliest unanswered call."""
    made: list[tuple[ToolCall, int, int]] = []  # call, message index, group
    results: dict[int, str] = {}
    waiting: list[int] = []  # calls not yet answered, in order
    group = 0
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            for call in message.tool_calls:
                waiting.append(len(made))
                made.append((call, index, group))
            group += 1
        elif message.role == "tool" and waiting:
            answered = next(
                (
                    position
                    for position in waiting
                    if message.tool_call_id is None or made[position][0].id == message.tool_call_id
                ),
                None,
            )
            if answered is not None:
                waiting.remove(answered)
                results[answered] = message.content
    return [
        TrajectoryCall(
            call=call,
            position=position,
            message_index=index,
            group=group,
            result=results.get(position),
        )
        for position, (call, index, group) in enumerate(made)
    ]


def expected_calls(groups: Sequence[Sequence[ToolCall]]) -> list[TrajectoryCall]:
    """Expected calls given as groups (see ``as_expected_calls``), as a trajectory's."""
    calls: list[TrajectoryCall] = []
    for group, members in enumerate(groups):
        for call in members:
            calls.append(
                TrajectoryCall(call=call, position=len(calls), message_index=group, group=group)
            )
    return calls


def final_answer(messages: Sequence[AgentMessage]) -> str | None:
    """The text of the last AI message that made no call, when it is the last AI message
    (an agent that stopped on a call gave no final answer)."""
    for message in reversed(messages):
        if message.role == "assistant":
            return message.content if not message.tool_calls and message.content else None
    return None


def first_user_text(messages: Sequence[AgentMessage]) -> str | None:
    """The text of the first human message: the task, when none is given."""
    for message in messages:
        if message.role == "user" and message.content.strip():
            return message.content
    return None
