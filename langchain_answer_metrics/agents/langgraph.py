"""A LangGraph thread's messages, read from the graph's checkpointer: what
``AgentSample.from_langgraph`` scores.

    >>> messages = thread_messages(graph, {"configurable": {"thread_id": "1"}})

The thread's messages are the graph's state (``messages``) at the checkpoint ``config``
names (its latest by default). With ``subgraphs=True`` (the default), the messages of the
subgraphs that ran in the thread (each in a checkpoint namespace of its own) are merged in
where they happened: a subgraph's calls, which its parent often never sees (it gets the
subgraph's answer only), are the agent's calls too. A message is placed by when it first
appeared in the thread's checkpoints, and the graph's own messages keep their order.

Nothing of LangGraph is imported: the graph is read through its ``get_state`` and its
``checkpointer.list``, so this module costs nothing to import.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langgraph.graph.state import CompiledStateGraph


class ThreadNotReadableError(ValueError):
    """The graph or thread cannot give a trajectory: no checkpointer, no thread id, or no
    messages in the thread."""


def _id(message: Any) -> str | None:
    value = message.get("id") if isinstance(message, Mapping) else getattr(message, "id", None)
    return value if isinstance(value, str) else None


def _messages(values: Any, key: str) -> list[Any]:
    found = values.get(key) if isinstance(values, Mapping) else None
    return list(found) if isinstance(found, Sequence) and not isinstance(found, str) else []


def _first_seen(
    checkpointer: Any, thread_id: str, key: str, until: str | None
) -> tuple[dict[str, int], dict[str, Any]]:
    """Per message id, the order in which it first appeared in the thread's checkpoints
    (every namespace), and the messages first seen in a subgraph's namespace."""
    tuples = [
        item
        for item in checkpointer.list({"configurable": {"thread_id": thread_id}})
        if until is None or str(item.checkpoint.get("ts", "")) <= until
    ]
    tuples.sort(key=lambda item: (str(item.checkpoint.get("ts", "")), str(item.checkpoint["id"])))
    order: dict[str, int] = {}
    from_subgraphs: dict[str, Any] = {}
    for item in tuples:
        namespace = item.config.get("configurable", {}).get("checkpoint_ns", "")
        for message in _messages(item.checkpoint.get("channel_values"), key):
            message_id = _id(message)
            if message_id is not None and message_id not in order:
                order[message_id] = len(order)
                if namespace:
                    from_subgraphs[message_id] = message
    return order, from_subgraphs


def thread_messages(
    graph: CompiledStateGraph,
    config: Mapping[str, Any],
    *,
    messages_key: str = "messages",
    subgraphs: bool = True,
) -> list[Any]:
    """The thread's messages (see the module's docstring), as LangGraph holds them.

    Raises:
        ThreadNotReadableError: no checkpointer, no ``thread_id`` in ``config``, or a
            thread without messages.
    """
    checkpointer = getattr(graph, "checkpointer", None)
    if checkpointer is None or isinstance(checkpointer, bool):
        raise ThreadNotReadableError(
            "the graph has no checkpointer, so its threads are not kept: compile it with "
            "one (graph.compile(checkpointer=InMemorySaver()))"
        )
    thread_id = (config.get("configurable") or {}).get("thread_id")
    if thread_id is None:
        raise ThreadNotReadableError(
            'config has no thread id: pass {"configurable": {"thread_id": ...}}'
        )
    snapshot = graph.get_state(dict(config))  # type: ignore[arg-type]
    own = _messages(snapshot.values, messages_key)
    if not subgraphs:
        merged = own
    else:
        order, from_subgraphs = _first_seen(
            checkpointer, str(thread_id), messages_key, snapshot.created_at
        )
        own_ids = {_id(message) for message in own}
        pending = sorted(
            (order[message_id], message)
            for message_id, message in from_subgraphs.items()
            if message_id not in own_ids
        )
        merged, index = [], 0
        for message in own:
            rank = order.get(_id(message) or "", -1)
            while index < len(pending) and rank >= 0 and pending[index][0] < rank:
                merged.append(pending[index][1])
                index += 1
            merged.append(message)
        merged += [message for _, message in pending[index:]]
    if not merged:
        raise ThreadNotReadableError(
            f"thread {thread_id!r} has no messages under {messages_key!r} (has it run?)"
        )
    return merged
