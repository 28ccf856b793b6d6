"""Where a conversation comes from besides a list of messages: a LangGraph thread (its
checkpointer) or a LangSmith thread (the root runs that share a thread id).

A LangSmith thread is the root runs of one project whose metadata name the thread
(``session_id``, ``thread_id`` or ``conversation_id``: LangSmith's thread keys), in
start order. Each run's input messages and output messages are read in any of the
message forms; a side that repeats the thread so far (a chat app sends the whole history;
a graph returns its whole state) adds only what is new, so the thread is neither doubled
nor cut.

    >>> sample = ConversationSample.from_langsmith_thread(
    ...     client, project_name="support-bot", thread_id="t-42")
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_answer_metrics.agents.messages import AgentMessage, as_messages

THREAD_KEYS = ("session_id", "thread_id", "conversation_id")
"""The metadata keys LangSmith groups a thread's runs by."""


def thread_filter(thread_id: str) -> str:
    """LangSmith's filter for the runs of one thread."""
    keys = ", ".join(f'"{key}"' for key in THREAD_KEYS)
    quoted = thread_id.replace("\\", "\\\\").replace('"', '\\"')
    return f'and(in(metadata_key, [{keys}]), eq(metadata_value, "{quoted}"))'


def _side(value: Any, where: str) -> list[AgentMessage]:
    """The messages of a run's inputs or outputs: a ``messages`` list, a single message
    (``output``), or plain text (``input`` / ``question``, ``output`` / ``answer``)."""
    if not isinstance(value, Mapping):
        return []
    if "messages" in value:
        messages = value["messages"]
        # A chat model's run nests its messages one level down: [[...]].
        if isinstance(messages, Sequence) and messages and isinstance(messages[0], list):
            messages = messages[0]
        return as_messages(messages, f"{where}.messages")
    for key, role in (
        ("input", "user"),
        ("question", "user"),
        ("output", "assistant"),
        ("answer", "assistant"),
    ):
        item = value.get(key)
        if isinstance(item, str):
            return [AgentMessage(role=role, content=item)]
        if isinstance(item, Mapping):
            return as_messages([item], f"{where}.{key}")
    return []


def _same(a: AgentMessage, b: AgentMessage) -> bool:
    return (a.role, a.content, a.tool_calls) == (b.role, b.content, b.tool_calls)


def messages_from_runs(runs: Iterable[Any]) -> list[AgentMessage]:
    """A thread's messages from its runs (LangSmith ``Run`` objects or dicts with
    ``inputs``, ``outputs`` and ``start_time``), in start order."""
    ordered = sorted(runs, key=lambda run: str(_field(run, "start_time") or ""))
    thread: list[AgentMessage] = []
    for number, run in enumerate(ordered):
        for side in ("inputs", "outputs"):
            read = _side(_field(run, side), f"runs[{number}].{side}")
            # A side that repeats the thread so far (a chat app's history in its inputs,
            # a graph's whole state in its outputs) adds only what is new; one that does
            # not is new as a whole (a user may well say the same thing twice).
            repeats = len(read) >= len(thread) and all(map(_same, thread, read))
            overlap = len(thread) if repeats else 0
            thread += read[overlap:]
    return thread


def _field(run: Any, name: str) -> Any:
    return run.get(name) if isinstance(run, Mapping) else getattr(run, name, None)


def langsmith_thread_runs(client: Any, *, project_name: str, thread_id: str) -> list[Any]:
    """The root runs of one LangSmith thread, read with the LangSmith client."""
    return list(
        client.list_runs(project_name=project_name, filter=thread_filter(thread_id), is_root=True)
    )


def openai_messages(messages: Iterable[AgentMessage]) -> list[dict[str, Any]]:
    """Messages as OpenAI chat dicts (``tool_calls`` with JSON ``arguments``): the form a
    JSONL file of threads keeps, and every face reads back.

    Example:
        >>> openai_messages([AgentMessage(role="user", content="Hi")])
        [{'role': 'user', 'content': 'Hi'}]
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        item: dict[str, Any] = {"role": message.role, "content": message.content}
        if message.tool_calls:
            item["tool_calls"] = [
                {
                    "id": call.id or f"call_{position}",
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.arguments_text
                        if call.args is None
                        else json.dumps(call.args, ensure_ascii=False),
                    },
                }
                for position, call in enumerate(message.tool_calls)
            ]
        if message.tool_call_id is not None:
            item["tool_call_id"] = message.tool_call_id
        if message.name is not None:
            item["name"] = message.name
        out.append(item)
    return out
