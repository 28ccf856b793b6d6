"""How the simulator calls the user's app: a LangGraph graph on its thread, a Runnable or
any callable on the conversation so far, and how its reply is read.

    >>> reply_text("It is sunny.", 1)[0]
    'It is sunny.'
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from langchain_answer_metrics.agents.messages import as_messages
from langchain_answer_metrics.judging.sync import call_model
from langchain_answer_metrics.simulation.scenarios import Scenario


def is_graph(app: Any) -> bool:
    """A compiled LangGraph graph with a checkpointer (its threads are kept)."""
    return hasattr(app, "get_state") and hasattr(app, "checkpointer")


def thread_id_for(app: Any, scenario: Scenario, seed: int) -> str:
    """The scenario's thread: from its name and the seed, with a counter should a kept
    checkpointer already hold that thread."""
    base = f"simulated-{scenario.name}-seed{seed}"
    if not is_graph(app):
        return base
    candidate, number = base, 1
    while app.get_state({"configurable": {"thread_id": candidate}}).values:
        number += 1
        candidate = f"{base}-{number}"
    return candidate


def reply_text(output: Any, sent: int) -> tuple[str, list[Any]]:
    """The app's reply text and the messages it added, from whatever it returned."""
    if isinstance(output, str):
        return output, [AIMessage(output)]
    if isinstance(output, BaseMessage):
        return output.text, [output]
    if isinstance(output, Mapping):
        if "messages" in output:
            added = list(output["messages"])[sent:] or list(output["messages"])[-1:]
            read = as_messages(added, "the app's messages")
            replies = [m.content for m in read if m.role == "assistant" and m.content.strip()]
            return (replies[-1] if replies else ""), added
        for key in ("output", "answer", "response", "content"):
            if isinstance(output.get(key), str):
                return output[key], [AIMessage(output[key])]
    raise TypeError(
        "the app returned a "
        f"{type(output).__name__}; return an AIMessage, a string, or a dict with "
        "'messages' or 'output'"
    )


async def call_app(app: Any, so_far: list[Any], text: str, thread_id: str) -> tuple[str, list[Any]]:
    message = HumanMessage(text)
    if is_graph(app):
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        state = await call_model(
            lambda: app.invoke({"messages": [message]}, config),
            lambda: app.ainvoke({"messages": [message]}, config),
        )
        reply, _ = reply_text({"messages": state.get("messages", [])[-1:]}, 0)
        return reply, []
    history = [*so_far, message]
    if hasattr(app, "ainvoke") and hasattr(app, "invoke"):
        output = await call_model(lambda: app.invoke(history), lambda: app.ainvoke(history))
    elif inspect.iscoroutinefunction(app):
        output = await app(history)
    elif callable(app):
        output = await call_model(lambda: app(history), lambda: asyncio.to_thread(app, history))
    else:
        raise TypeError(
            f"the app must be a graph, a Runnable or a callable, got {type(app).__name__}"
        )
    reply, added = reply_text(output, len(history))
    return reply, [message, *added]
