"""One trajectory in each of the three message forms an agent sample takes.

Import as ``from agent_forms import ...`` (pytest puts this folder on ``sys.path``).
A trajectory is given as its AI messages' calls: a list of groups, each group the calls
of one AI message (parallel calls), each call ``(name, args)`` where ``args`` is a dict or
a text that is not JSON. Every call gets a tool reply (``result of <id>``), and the agent
ends with a final answer.

    >>> FORMS["openai"]([[("search", {"q": "paris"})]])[1]["tool_calls"][0]["function"]
    {'name': 'search', 'arguments': '{"q": "paris"}'}
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

Call = tuple[str, "dict[str, Any] | str"]
Groups = list[list[Call]]

TASK = "Plan a day in Paris."
ANSWER = "Here is your day in Paris."


def _ids(groups: Groups) -> list[list[str]]:
    counter = iter(range(1_000_000))
    return [[f"call_{next(counter)}" for _ in group] for group in groups]


def langchain_messages(groups: Groups) -> list[BaseMessage]:
    messages: list[BaseMessage] = [HumanMessage(TASK)]
    for group, ids in zip(groups, _ids(groups)):
        valid = [
            {"name": name, "args": args, "id": call_id, "type": "tool_call"}
            for (name, args), call_id in zip(group, ids)
            if isinstance(args, dict)
        ]
        invalid = [
            {"name": name, "args": args, "id": call_id, "error": None, "type": "invalid_tool_call"}
            for (name, args), call_id in zip(group, ids)
            if isinstance(args, str)
        ]
        messages.append(AIMessage("", tool_calls=valid, invalid_tool_calls=invalid))
        messages += [ToolMessage(f"result of {call_id}", tool_call_id=call_id) for call_id in ids]
    return [*messages, AIMessage(ANSWER)]


def openai_messages(groups: Groups) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for group, ids in zip(groups, _ids(groups)):
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": name,
                            "arguments": args if isinstance(args, str) else json.dumps(args),
                        },
                    }
                    for (name, args), call_id in zip(group, ids)
                ],
            }
        )
        messages += [
            {"role": "tool", "tool_call_id": call_id, "content": f"result of {call_id}"}
            for call_id in ids
        ]
    return [*messages, {"role": "assistant", "content": ANSWER}]


def graph_state(groups: Groups) -> dict[str, Any]:
    """What a LangGraph agent returns: its state, the messages under ``messages``."""
    return {"messages": langchain_messages(groups), "remaining_steps": 10}


FORMS: dict[str, Callable[[Groups], Any]] = {
    "langchain": langchain_messages,
    "openai": openai_messages,
    "state": graph_state,
}


def expected(*calls: Call | list[Call]) -> list[Any]:
    """Expected calls as ``reference_tool_calls``; a list is a parallel group."""
    return [
        [{"name": name, "args": args} for name, args in item]
        if isinstance(item, list)
        else {"name": item[0], "args": item[1]}
        for item in calls
    ]
