"""What an agent did, read from any of the three forms users have it in.

- LangChain messages: ``HumanMessage``, ``AIMessage`` (its ``tool_calls``, and its
  ``invalid_tool_calls``, whose arguments did not parse), ``ToolMessage``,
  ``SystemMessage``; also their dict forms (``messages_to_dict``'s ``{"type": "ai",
  "data": {...}}``, or ``{"type": "ai", "content": ...}``);
- OpenAI chat dicts: ``role``, ``content``, ``tool_calls`` with ``function.name`` and
  ``function.arguments`` as a JSON string, ``tool`` messages with ``tool_call_id``;
- a mapping with a ``messages`` key (a LangGraph state, the output of ``create_agent``).

Each becomes an :class:`AgentMessage`, each call a :class:`ToolCall`. Arguments that are
not a JSON object are kept as text (``ToolCall.arguments_text``), never a crash. What
cannot be read raises :class:`MessageFormError` naming where (``messages[2].tool_calls[0]``).

    >>> [message.role for message in as_messages({"messages": [
    ...     {"role": "user", "content": "Weather in Paris?"},
    ...     {"role": "assistant", "content": None, "tool_calls": [{"id": "c1",
    ...      "type": "function", "function": {"name": "get_weather",
    ...      "arguments": '{"city": "Paris"}'}}]},
    ...     {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]})]
    ['user', 'assistant', 'tool']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ConfigDict, TypeAdapter

from langchain_answer_metrics.agents.calls import (
    Fields,
    MessageFormError,
    ToolCall,
    as_list,
    call_fields,
    call_list,
    invalid_calls,
    kind_of,
)

Role = Literal["system", "user", "assistant", "tool"]

# The roles and LangChain message types of each form, as one of ours.
_ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "tool": "tool",
    "function": "tool",
}
_LANGCHAIN_CLASSES: dict[str, Role] = {
    "SystemMessage": "system",
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "AIMessageChunk": "assistant",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
}


class AgentMessage(BaseModel):
    """One message of a trajectory, whatever form it came in.

    Attributes:
        role: ``"system"``, ``"user"``, ``"assistant"`` or ``"tool"``.
        content: its text (the text parts of a multi-part content, joined).
        tool_calls: the calls an assistant message made (parallel calls: no order).
        tool_call_id: for a tool message, the call it answers.
        name: the tool's name on a tool message, if given.
    """

    model_config = ConfigDict(frozen=True)

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None


_MESSAGES = TypeAdapter(list[AgentMessage])


def _text(value: Any, path: str) -> str:
    if type(value) is str:
        return value
    if value is None:
        return ""
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        # Multi-part content: the text parts, in order (an image says nothing we compare).
        parts = [_part_text(part) for part in value]
        return "\n".join(part for part in parts if part is not None)
    raise MessageFormError(path, f"must be text or a list of content parts, got {kind_of(value)}")


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    text = part.get("text") if isinstance(part, Mapping) else None
    return text if isinstance(text, str) else None


def _from_fields(role: Role, fields: Mapping[str, Any], path: str) -> Fields:
    """A message's fields from its fields in LangChain's or OpenAI's names."""
    calls: list[ToolCall | Fields] = []
    if role == "assistant":
        calls = call_list(fields.get("tool_calls"), f"{path}.tool_calls")
        calls += invalid_calls(fields.get("invalid_tool_calls"), f"{path}.invalid_tool_calls")
        legacy = fields.get("function_call")  # OpenAI's one call before tool_calls
        if not calls and isinstance(legacy, Mapping):
            calls = [call_fields({"function": legacy}, f"{path}.function_call")]
    call_id, name = fields.get("tool_call_id"), fields.get("name")
    return {
        "role": role,
        "content": _text(fields.get("content"), f"{path}.content"),
        "tool_calls": calls,
        "tool_call_id": str(call_id) if call_id is not None else None,
        "name": name if isinstance(name, str) else None,
    }


def as_message(value: Any, path: str) -> AgentMessage:
    """One message in any of the forms (see the module's docstring)."""
    found = _message_fields(value, path)
    return found if isinstance(found, AgentMessage) else AgentMessage.model_validate(found)


def _message_fields(value: Any, path: str) -> AgentMessage | Fields:
    if type(value) is dict and type(value.get("role")) is str:  # OpenAI's, the commonest
        role = _ROLES.get(value["role"])
        if role is not None:
            return _from_fields(role, value, path)
    if isinstance(value, AgentMessage):
        return value
    if isinstance(value, BaseMessage):
        role = _LANGCHAIN_CLASSES.get(type(value).__name__) or _ROLES.get(
            str(getattr(value, "role", value.type))
        )
        if role is None:
            raise MessageFormError(path, f"is a {kind_of(value)}, which is not a chat message")
        return _from_fields(role, value.__dict__, path)
    if not isinstance(value, Mapping):
        raise MessageFormError(
            path, f"must be a message (a dict or LangChain message), got {kind_of(value)}"
        )
    if value.get("lc") == 1 and isinstance(value.get("kwargs"), Mapping):  # dumpd's form
        kind = (value.get("id") or [""])[-1]
        role = _LANGCHAIN_CLASSES.get(kind)
        if role is None:
            raise MessageFormError(path, f"is a serialised {kind or 'object'}, not a message")
        return _from_fields(role, value["kwargs"], path)
    if "role" in value:
        role = _ROLES.get(str(value["role"]))
        if role is None:
            raise MessageFormError(f"{path}.role", f"is {value['role']!r}, not a chat role")
        return _from_fields(role, value, path)
    if "type" in value:
        role = _ROLES.get(str(value["type"]))
        data = value.get("data")
        if role is None:
            raise MessageFormError(f"{path}.type", f"is {value['type']!r}, not a message type")
        return _from_fields(role, data if isinstance(data, Mapping) else value, path)
    raise MessageFormError(path, "must have a 'role' (OpenAI) or a 'type' (LangChain)")


def as_messages(value: Any, field: str = "messages") -> list[AgentMessage]:
    """A trajectory's messages from a list in any of the forms, or a mapping with a
    ``messages`` key. Raises :class:`MessageFormError` naming ``field`` and the position."""
    value = as_list(value)
    if isinstance(value, Mapping):
        if "messages" not in value:
            keys = ", ".join(map(str, value)) or "none"
            raise MessageFormError(field, f"is a mapping without a 'messages' key (keys: {keys})")
        value = as_list(value["messages"])
    if isinstance(value, (str, bytes, BaseMessage)) or not isinstance(value, Sequence):
        raise MessageFormError(field, f"must be a list of messages, got {kind_of(value)}")
    return _MESSAGES.validate_python(
        [_message_fields(item, f"{field}[{index}]") for index, item in enumerate(value)]
    )
