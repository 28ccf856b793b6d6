"""One tool call, read from any of its forms: LangChain's ``{"name", "args"}``, OpenAI's
``{"function": {"name", "arguments"}}`` (arguments as JSON text), or a :class:`ToolCall`;
and expected calls given as a list (a nested list: parallel calls).

Arguments that are not a JSON object are kept as text (``ToolCall.arguments_text``),
never a crash. What cannot be read raises :class:`MessageFormError` naming where.

    >>> tool_call({"function": {"name": "f", "arguments": "{bad"}}, "calls[0]").arguments_text
    '{bad'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter


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


_CALL_GROUPS = TypeAdapter(list[list[ToolCall]])


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
    raise MessageFormError(path, f"must be a JSON object or its text, got {kind_of(value)}")


def kind_of(value: Any) -> str:
    return type(value).__name__


def _name(value: Any, path: str) -> str:
    if isinstance(value, str) and value.strip():
        return value
    raise MessageFormError(path, "must be the tool's name (a non-empty string)")


def tool_call(value: Any, path: str) -> ToolCall:
    """One call from ``{"name", "args"}`` (LangChain; ``args`` may be JSON text, as
    ``arguments`` may), OpenAI's ``{"function": {"name", "arguments"}}``, or a
    :class:`ToolCall`."""
    found = call_fields(value, path)
    return found if isinstance(found, ToolCall) else ToolCall.model_validate(found)


# What is read is gathered as plain fields and validated once per list (one call into
# pydantic's core for a whole trajectory, not one per message and call: a third of the time).
Fields = dict[str, Any]


def call_fields(value: Any, path: str) -> ToolCall | Fields:
    if isinstance(value, ToolCall):
        return value
    if type(value) is not dict and not isinstance(value, Mapping):
        raise MessageFormError(path, f"must be a tool call (a dict), got {kind_of(value)}")
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
    return {
        "name": name,
        "args": args,
        "arguments_text": text,
        "id": call_id if isinstance(call_id, str) else None,
    }


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


def call_list(value: Any, path: str) -> list[ToolCall | Fields]:
    value = as_list(value)
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise MessageFormError(path, f"must be a list of tool calls, got {kind_of(value)}")
    return [call_fields(item, f"{path}[{index}]") for index, item in enumerate(value)]


def invalid_calls(value: Any, path: str) -> list[ToolCall | Fields]:
    """LangChain's ``invalid_tool_calls``: their arguments did not parse; kept as text."""
    calls: list[ToolCall | Fields] = []
    for index, item in enumerate(value or ()):
        if not isinstance(item, Mapping):
            raise MessageFormError(f"{path}[{index}]", f"must be a dict, got {kind_of(item)}")
        args = item.get("args")
        calls.append(
            {
                "name": str(item.get("name") or ""),
                "args": None,
                "arguments_text": args if isinstance(args, str) else json.dumps(args, default=str),
                "id": item.get("id") if isinstance(item.get("id"), str) else None,
            }
        )
    return calls


def as_expected_calls(value: Any, field: str = "reference_tool_calls") -> list[list[ToolCall]]:
    """Expected calls as groups: each item is one call (``{"name", "args"}`` or OpenAI's
    ``function`` form), made after the one before; an item that is itself a list is a
    group of parallel calls, in no order among themselves."""
    value = as_list(value)
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Sequence):
        raise MessageFormError(field, f"must be a list of tool calls, got {kind_of(value)}")
    groups = []
    for index, item in enumerate(value):
        path, item = f"{field}[{index}]", as_list(item)
        if isinstance(item, Sequence) and not isinstance(item, (str, bytes)):
            groups.append(call_list(item, path))
        else:
            groups.append([call_fields(item, path)])
    return _CALL_GROUPS.validate_python([group for group in groups if group])
