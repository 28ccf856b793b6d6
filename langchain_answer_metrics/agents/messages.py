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

import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ConfigDict

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


class MessageFormError(ValueError):
    """A message or tool call that cannot be read: ``path`` says where (the field and its
    position, ``messages[2].tool_calls[0].function.name``), ``problem`` what is wrong."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path} {problem}")


class ToolCall(BaseModel):
    """One tool call: the tool's name and its arguments.

    Attributes:
        name: the tool called.
        args: the arguments, a JSON object; None when what was given was not one (not
            valid JSON, or JSON that is not an object), which ``arguments_text`` then holds.
        arguments_text: the arguments as given, when they are not a JSON object (they are
            then compared as text).
        id: the call's id, which the tool's reply names (``tool_call_id``).

    Example:
        >>> ToolCall(name="get_weather", args={"city": "Paris"}).render()
        "get_weather(city='Paris')"
    """

    model_config = ConfigDict(frozen=True)

    name: str
    args: dict[str, Any] | None = None
    arguments_text: str | None = None
    id: str | None = None

    @property
    def invalid_arguments(self) -> bool:
        """Whether the arguments were not a JSON object (kept as text, flagged)."""
        return self.args is None

    def render(self) -> str:
        """The call as people read it: ``get_weather(city='Paris')``."""
        if self.args is None:
            return f"{self.name or '<unnamed>'}(<not JSON: {self.arguments_text or ''!r}>)"
        arguments = ", ".join(f"{key}={value!r}" for key, value in self.args.items())
        return f"{self.name or '<unnamed>'}({arguments})"


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


def arguments_of(value: Any, path: str) -> tuple[dict[str, Any] | None, str | None]:
    """``(args, None)`` for a JSON object (or its text); ``(None, text)`` for text that is
    not one. Anything else (a number, a list) is not arguments: :class:`MessageFormError`."""
    if value is None:
        return {}, None
    if isinstance(value, Mapping):
        return {str(key): item for key, item in value.items()}, None
    if isinstance(value, str):
        if not value.strip():
            return {}, None  # OpenAI sends "" for a call without arguments
        try:
            parsed = json.loads(value)
        except ValueError:
            return None, value
        return (
            ({str(key): item for key, item in parsed.items()}, None)
            if isinstance(parsed, dict)
            else (None, value)
        )
    raise MessageFormError(path, f"must be a JSON object or its text, got {_kind(value)}")


def _kind(value: Any) -> str:
    return type(value).__name__


def _text(value: Any, path: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        # Multi-part content: the text parts, in order (an image says nothing we compare).
        parts = [_part_text(part) for part in value]
        return "\n".join(part for part in parts if part is not None)
    raise MessageFormError(path, f"must be text or a list of content parts, got {_kind(value)}")


def _part_text(part: Any) -> str | None:
    if isinstance(part, str):
        return part
    text = part.get("text") if isinstance(part, Mapping) else None
    return text if isinstance(text, str) else None


def _name(value: Any, path: str) -> str:
    if isinstance(value, str) and value.strip():
        return value
    raise MessageFormError(path, "must be the tool's name (a non-empty string)")


def tool_call(value: Any, path: str) -> ToolCall:
    """One call from ``{"name", "args"}`` (LangChain; ``args`` may be JSON text, as
    ``arguments`` may), OpenAI's ``{"function": {"name", "arguments"}}``, or a
    :class:`ToolCall`."""
    if isinstance(value, ToolCall):
        return value
    if not isinstance(value, Mapping):
        raise MessageFormError(path, f"must be a tool call (a dict), got {_kind(value)}")
    call_id = value.get("id")
    if isinstance(value.get("function"), Mapping):
        function = value["function"]
        name = _name(function.get("name"), f"{path}.function.name")
        args, text = arguments_of(function.get("arguments"), f"{path}.function.arguments")
    elif "name" in value:
        name = _name(value.get("name"), f"{path}.name")
        key = "args" if "args" in value else "arguments"
        # A ToolCall as dumped: its text is where arguments that were not JSON went.
        kept = value.get("arguments_text") if value.get(key) is None else None
        args, text = arguments_of(
            kept if isinstance(kept, str) else value.get(key), f"{path}.{key}"
        )
    else:
        raise MessageFormError(
            path, "must have a 'name' (and 'args') or a 'function' with a 'name' and 'arguments'"
        )
    return ToolCall(
        name=name, args=args, arguments_text=text, id=call_id if isinstance(call_id, str) else None
    )


def as_list(value: Any) -> Any:
    """A table's list cell as a list: a NumPy array (pandas' cells) or a JSON text of one."""
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return value.tolist()
    if isinstance(value, str) and value.lstrip()[:1] in ("[", "{"):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _calls(value: Any, path: str) -> list[ToolCall]:
    value = as_list(value)
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise MessageFormError(path, f"must be a list of tool calls, got {_kind(value)}")
    return [tool_call(item, f"{path}[{index}]") for index, item in enumerate(value)]


def _invalid_calls(value: Any, path: str) -> list[ToolCall]:
    """LangChain's ``invalid_tool_calls``: their arguments did not parse; kept as text."""
    calls = []
    for index, item in enumerate(value or ()):
        if not isinstance(item, Mapping):
            raise MessageFormError(f"{path}[{index}]", f"must be a dict, got {_kind(item)}")
        args = item.get("args")
        calls.append(
            ToolCall(
                name=item.get("name") or "",
                args=None,
                arguments_text=args if isinstance(args, str) else json.dumps(args, default=str),
                id=item.get("id") if isinstance(item.get("id"), str) else None,
            )
        )
    return calls


def _from_fields(role: Role, fields: Mapping[str, Any], path: str) -> AgentMessage:
    """A message from its fields, in LangChain's or OpenAI's names."""
    calls: list[ToolCall] = []
    if role == "assistant":
        calls = _calls(fields.get("tool_calls"), f"{path}.tool_calls")
        calls += _invalid_calls(fields.get("invalid_tool_calls"), f"{path}.invalid_tool_calls")
        legacy = fields.get("function_call")  # OpenAI's one call before tool_calls
        if not calls and isinstance(legacy, Mapping):
            calls = [tool_call({"function": legacy}, f"{path}.function_call")]
    call_id, name = fields.get("tool_call_id"), fields.get("name")
    return AgentMessage(
        role=role,
        content=_text(fields.get("content"), f"{path}.content"),
        tool_calls=tuple(calls),
        tool_call_id=str(call_id) if call_id is not None else None,
        name=name if isinstance(name, str) else None,
    )


def as_message(value: Any, path: str) -> AgentMessage:
    """One message in any of the forms (see the module's docstring)."""
    if isinstance(value, AgentMessage):
        return value
    if isinstance(value, BaseMessage):
        role = _LANGCHAIN_CLASSES.get(type(value).__name__) or _ROLES.get(
            str(getattr(value, "role", value.type))
        )
        if role is None:
            raise MessageFormError(path, f"is a {_kind(value)}, which is not a chat message")
        return _from_fields(role, value.__dict__, path)
    if not isinstance(value, Mapping):
        raise MessageFormError(
            path, f"must be a message (a dict or LangChain message), got {_kind(value)}"
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
        raise MessageFormError(field, f"must be a list of messages, got {_kind(value)}")
    return [as_message(item, f"{field}[{index}]") for index, item in enumerate(value)]


def as_expected_calls(value: Any, field: str = "reference_tool_calls") -> list[list[ToolCall]]:
    """Expected calls as groups: each item is one call (``{"name", "args"}`` or OpenAI's
    ``function`` form), made after the one before; an item that is itself a list is a
    group of parallel calls, in no order among themselves."""
    value = as_list(value)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise MessageFormError(field, f"must be a list of tool calls, got {_kind(value)}")
    groups = []
    for index, item in enumerate(value):
        path, item = f"{field}[{index}]", as_list(item)
        if isinstance(item, Sequence) and not isinstance(item, (str, bytes)):
            groups.append(_calls(item, path))
        else:
            groups.append([tool_call(item, path)])
    return [group for group in groups if group]
