"""A thread cut into assistant turns: what the user asked, what the assistant did, what
it replied.

An assistant turn is everything from one user message to the next. Its ``user`` text is
that user message (consecutive user messages, with no assistant message between them,
are one request, joined). Its ``reply`` is the last AI message with text in the span; AI
messages that only call tools, and the tools' results, belong to the turn, and the
results are the turn's contexts. Messages before the first user message (a system
prompt, an assistant's greeting) open the thread and are no turn; a user message left
without any assistant message after it is kept as ``unanswered``, not dropped.

    >>> thread = split_turns(as_messages([
    ...     {"role": "system", "content": "You are a travel agent."},
    ...     {"role": "user", "content": "I'm vegetarian. Find me a hotel in Rome."},
    ...     {"role": "assistant", "content": "Hotel Roma has a vegetarian menu."},
    ...     {"role": "user", "content": "And a restaurant?"},
    ...     {"role": "assistant", "content": "Try Il Margutta, all vegetarian."}]))
    >>> [(turn.index, turn.user, turn.reply) for turn in thread.turns][1]
    (2, 'And a restaurant?', 'Try Il Margutta, all vegetarian.')
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from langchain_answer_metrics.agents.messages import AgentMessage
from langchain_answer_metrics.agents.trajectory import TrajectoryCall, calls_made


class Turn(BaseModel):
    """One assistant turn of a thread.

    Attributes:
        index: its number among the assistant turns, from 1.
        user: what the user said to open it.
        reply: the assistant's reply: the last AI message with text in the turn; None
            when the assistant only called tools.
        tool_calls: the calls the assistant made in the turn, in order, each with its
            tool's result.
        tool_results: what the tools returned in the turn, in order: the turn's contexts.
        messages: the turn's messages, the user's first.
    """

    model_config = ConfigDict(frozen=True)

    index: int
    user: str
    reply: str | None
    tool_calls: tuple[TrajectoryCall, ...] = ()
    tool_results: tuple[str, ...] = ()
    messages: tuple[AgentMessage, ...] = ()


class Thread(BaseModel):
    """A thread's turns, and what stands outside them.

    Attributes:
        turns: the assistant turns, in order.
        system: the text of the system messages, joined (the assistant's instructions).
        opening: the messages before the first user message (the system's included).
        unanswered: the text of user messages no assistant message followed (at the end).
    """

    model_config = ConfigDict(frozen=True)

    turns: tuple[Turn, ...]
    system: str | None = None
    opening: tuple[AgentMessage, ...] = ()
    unanswered: str | None = None


def split_turns(messages: Sequence[AgentMessage]) -> Thread:
    """Cut ``messages`` into assistant turns (see the module's docstring)."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content.strip())
    first_user = next((i for i, m in enumerate(messages) if m.role == "user"), len(messages))
    opening = tuple(messages[:first_user])
    spans: list[tuple[list[AgentMessage], list[AgentMessage]]] = []  # (user part, the rest)
    for message in messages[first_user:]:
        if message.role == "system":
            continue  # instructions, read above; not part of a turn's exchange
        if message.role == "user":
            if spans and not spans[-1][1]:
                spans[-1][0].append(message)  # the user said more before any reply
            else:
                spans.append(([message], []))
        else:
            spans[-1][1].append(message)
    unanswered = None
    if spans and not spans[-1][1]:
        unanswered = "\n".join(m.content for m in spans.pop()[0])
    turns = tuple(_turn(index, asked, rest) for index, (asked, rest) in enumerate(spans, start=1))
    return Thread(turns=turns, system=system or None, opening=opening, unanswered=unanswered)


def _turn(index: int, asked: list[AgentMessage], rest: list[AgentMessage]) -> Turn:
    replies = [m.content for m in rest if m.role == "assistant" and m.content.strip()]
    return Turn(
        index=index,
        user="\n".join(m.content for m in asked),
        reply=replies[-1] if replies else None,
        tool_calls=tuple(calls_made(rest)),
        tool_results=tuple(m.content for m in rest if m.role == "tool" and m.content.strip()),
        messages=(*asked, *rest),
    )
