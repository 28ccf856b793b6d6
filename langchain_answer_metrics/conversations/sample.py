"""ConversationSample: a thread to score, cut into assistant turns, with what the
assistant should keep to (its role, the topics) and what the user came for (the goal).

    >>> sample = ConversationSample(messages=[
    ...     {"role": "system", "content": "You are a cooking assistant."},
    ...     {"role": "user", "content": "I'm allergic to nuts. A dessert idea?"},
    ...     {"role": "assistant", "content": "A lemon sorbet: no nuts at all."},
    ...     {"role": "user", "content": "And a cake?"},
    ...     {"role": "assistant", "content": "A nut-free carrot cake."}])
    >>> len(sample.turns), sample.role
    (2, 'You are a cooking assistant.')

:func:`check_conversation_sample` is how a conversation metric reads its input (a
``ConversationSample``, a dict of its fields or a dataset row), refusing a missing or
malformed field before any request with
:class:`~langchain_answer_metrics.core.sample.InvalidSampleError` naming the metric and the
field (``messages[3].role``, ``turn_contexts``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import model_validator

from langchain_answer_metrics.agents.messages import (
    AgentMessage,
    MessageFormError,
    as_list,
    as_messages,
)
from langchain_answer_metrics.conversations.sources import langsmith_thread_runs, messages_from_runs
from langchain_answer_metrics.conversations.turns import Thread, Turn, split_turns
from langchain_answer_metrics.core.sample import (
    DEFAULT_MAX_INPUT_CHARS,
    InvalidSampleError,
    RowFields,
    Sample,
    as_context,
    check_messages_sample,
    to_sample,
)

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph

CONVERSATION_FIELDS = ("messages", "turn_contexts", "role", "goal", "topics", "reference")
"""The fields of a :class:`ConversationSample` a dict may give."""


class ConversationSample(Sample):
    """One conversation to score: its messages and, optionally, per-turn contexts, the
    assistant's role, the user's goal, the topics to keep to and the expected outcome.

    A :class:`~langchain_answer_metrics.core.sample.Sample` (the runner takes it as one) whose
    ``user_input`` is the first user message and ``response`` the last reply.

    Attributes:
        messages: the thread: LangChain messages, OpenAI chat dicts, or a mapping with a
            ``messages`` key (a LangGraph state). Tool calls and results may be in it.
        turn_contexts: per assistant turn, the contexts retrieved for it (a list aligned
            with :attr:`turns`; an item may be None: that turn's tool results are used).
        role: the assistant's role or instructions; default: the system messages' text.
        goal: what the user came to get done.
        topics: the topics the assistant should keep to (``TopicAdherence``).
        reference: the expected outcome, in words.

    Raises:
        pydantic.ValidationError: a message that cannot be read, or ``turn_contexts`` not
            aligned with the assistant turns.

    Example:
        >>> ConversationSample(messages=[HumanMessage("Hi"), AIMessage("Hello!")]).turns[0].reply
        'Hello!'
    """

    messages: list[AgentMessage]
    turn_contexts: list[list[str] | None] | None = None
    role: str | None = None
    goal: str | None = None
    topics: list[str] | None = None

    @model_validator(mode="before")
    @classmethod
    def _normalised(cls, data: Any) -> Any:
        return conversation_fields(data) if isinstance(data, Mapping) else data

    @functools.cached_property
    def thread(self) -> Thread:
        """The thread cut into assistant turns (:func:`~.turns.split_turns`)."""
        return split_turns(self.messages)

    @property
    def turns(self) -> tuple[Turn, ...]:
        """The assistant turns, in order (index from 1)."""
        return self.thread.turns

    def contexts_of(self, turn: Turn) -> list[str]:
        """A turn's contexts: its ``turn_contexts`` entry if given, else its tool results."""
        if self.turn_contexts is not None:
            given = self.turn_contexts[turn.index - 1]
            if given is not None:
                return list(given)
        return list(turn.tool_results)

    @classmethod
    def from_langgraph(
        cls, graph: CompiledStateGraph, config: Mapping[str, Any], **fields: Any
    ) -> ConversationSample:
        """The thread of a compiled LangGraph graph, read from its checkpointer (the
        ``messages`` of its state; subgraphs' messages included where the graph keeps
        them), with ``fields`` (``goal=``, ``topics=`` ...) beside it.

        Example:
            >>> sample = ConversationSample.from_langgraph(
            ...     graph, {"configurable": {"thread_id": "t1"}}, goal="Book a table")
        """
        from langchain_answer_metrics.agents.langgraph import thread_messages

        return cls.model_validate({"messages": thread_messages(graph, config), **fields})

    @classmethod
    def from_langsmith_thread(
        cls, client: Any, *, project_name: str, thread_id: str, **fields: Any
    ) -> ConversationSample:
        """A LangSmith thread: the root runs of ``project_name`` whose metadata name
        ``thread_id`` (``session_id``, ``thread_id`` or ``conversation_id``), read with
        ``client`` (a ``langsmith.Client``), in start order (see :mod:`.sources`).

        Example:
            >>> sample = ConversationSample.from_langsmith_thread(
            ...     Client(), project_name="support-bot", thread_id="t-42")
        """
        return cls.from_langsmith_runs(
            langsmith_thread_runs(client, project_name=project_name, thread_id=thread_id),
            **fields,
        )

    @classmethod
    def from_langsmith_runs(cls, runs: Iterable[Any], **fields: Any) -> ConversationSample:
        """A thread from its LangSmith runs (``Run`` objects or their dicts), however they
        were fetched: their input and output messages in start order, each message once."""
        return cls.model_validate({"messages": messages_from_runs(runs), **fields})

    def __repr__(self) -> str:
        return (
            f"ConversationSample(turns={len(self.turns)}, messages={len(self.messages)}, "
            f"goal={self.goal!r:.60})"
        )


def conversation_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """A conversation's fields read from their forms, the defaults filled in, the
    per-turn contexts checked against the turns. Raises :class:`MessageFormError`."""
    fields = dict(data)
    messages = as_messages(fields.get("messages"), "messages")
    fields["messages"] = messages
    thread = split_turns(messages)
    if not thread.turns:
        raise MessageFormError(
            "messages", "holds no assistant turn (a user message and a reply to it)"
        )
    if fields.get("turn_contexts") is not None:
        fields["turn_contexts"] = _turn_contexts(fields["turn_contexts"], len(thread.turns))
    if fields.get("topics") is not None:
        fields["topics"] = _texts(fields["topics"], "topics")
    if fields.get("role") is None:
        fields["role"] = thread.system
    if fields.get("user_input") is None:
        fields["user_input"] = thread.turns[0].user
    if fields.get("response") is None:
        fields["response"] = thread.turns[-1].reply
    return fields


def _texts(value: Any, field: str) -> list[str]:
    value = as_list(value)
    if isinstance(value, str):
        return [value]
    if not isinstance(value, Sequence) or not all(isinstance(item, str) for item in value):
        raise MessageFormError(field, f"must be a list of texts, got {type(value).__name__}")
    return list(value)


def _turn_contexts(value: Any, turns: int) -> list[list[str] | None]:
    value = as_list(value)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise MessageFormError(
            "turn_contexts",
            f"must be a list with one entry per assistant turn, got {type(value).__name__}",
        )
    if len(value) != turns:
        raise MessageFormError(
            "turn_contexts",
            f"has {len(value)} entries for {turns} assistant turns (one per turn, None "
            "where a turn has none)",
        )
    contexts: list[list[str] | None] = []
    for index, item in enumerate(value):
        item = as_list(item)
        if item is None:
            contexts.append(None)
        elif isinstance(item, str):
            contexts.append([item])
        elif isinstance(item, Sequence):
            try:
                contexts.append([as_context(context) for context in item])
            except TypeError as error:
                raise MessageFormError(f"turn_contexts[{index}]", str(error)) from None
        else:
            raise MessageFormError(
                f"turn_contexts[{index}]", f"must be a list of texts, got {type(item).__name__}"
            )
    return contexts


def check_conversation_sample(
    metric: str,
    value: Any,
    *,
    needs: Sequence[str] = (),
    max_chars: int = DEFAULT_MAX_INPUT_CHARS,
) -> ConversationSample:
    """``value`` as a :class:`ConversationSample` for ``metric``, refused before any
    request with :class:`InvalidSampleError` naming the field when a field is missing or
    cannot be read, or one of ``needs`` (``"goal"``, ``"topics"`` ...) is absent.

    ``value`` is a ``ConversationSample``, a dict of its fields (an unknown key is
    refused, as a likely typo) or a dataset row the runner mapped.
    """
    sample = check_messages_sample(
        ConversationSample,
        metric,
        value,
        fields=CONVERSATION_FIELDS,
        also=("user_input", "response"),
        kind="a conversation sample",
        holds="thread",
        read=lambda mapping: _from_mapping(metric, mapping, max_chars),
    )
    for field in needs:
        if not getattr(sample, field):
            raise InvalidSampleError(metric, field, "is required but missing")
    return sample


def _from_mapping(metric: str, value: Mapping[str, Any], max_chars: int) -> ConversationSample:
    # A dataset row's or a run's user_input and response are a mapping's guesses (the
    # run's messages, say): a thread's own are its first user message and its last reply.
    given = (
        ("reference",) if isinstance(value, RowFields) else ("user_input", "reference", "response")
    )
    texts = {name: value.get(name) for name in given}
    checked = to_sample(metric, texts, required=(), max_chars=max_chars)
    for name in ("role", "goal"):
        if value.get(name) is not None and not isinstance(value.get(name), str):
            raise InvalidSampleError(
                metric, name, f"holds a {type(value.get(name)).__name__}, expected a text"
            )
    try:
        fields = conversation_fields(
            {
                **{name: value.get(name) for name in CONVERSATION_FIELDS},
                "user_input": checked.user_input,
                "reference": checked.reference,
                "response": checked.response,
            }
        )
    except MessageFormError as error:
        raise InvalidSampleError(metric, error.path, error.problem) from None
    for turn in split_turns(fields["messages"]).turns:
        if len(turn.user) > max_chars or len(turn.reply or "") > max_chars:
            raise InvalidSampleError(
                metric,
                f"messages (turn {turn.index})",
                f"is longer than {max_chars} characters (max_input_chars)",
            )
    return ConversationSample.model_validate(fields)
