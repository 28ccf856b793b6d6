"""How a bad model config is reported: one :class:`ConfigError` naming every key path.

Pydantic's errors become ``(key path, message)`` pairs such as
``chat_models.list[0].options.temprature: unknown key (did you mean temperature?)``.
Input values are never quoted: a key pasted into the wrong field must not be echoed.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ValidationError

from langchain_answer_metrics.config.schema import ModelsConfig
from langchain_answer_metrics.core.strict_options import closest_name

__all__ = ["ConfigError", "config_error", "located", "validation_problems"]


class ConfigError(ValueError):
    """The model config is unusable; the message names each offending key path.

    ``problems`` holds ``(key_path, message)`` pairs for programmatic use.
    """

    def __init__(self, message: str, problems: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


def config_error(source: str, problems: Sequence[tuple[str, str]]) -> ConfigError:
    """One error listing every ``(key path, message)`` problem found in ``source``."""
    lines = [f"{path}: {message}" if path else message for path, message in problems]
    if len(lines) == 1:
        return ConfigError(f"{source}: {lines[0]}", problems)
    listing = "\n".join(f"  {line}" for line in lines)
    return ConfigError(f"{source}: {len(lines)} problems:\n{listing}", problems)


def located(
    problems: Sequence[tuple[str, str]], lines: dict[str, int], *, section: str = "metrics"
) -> list[tuple[str, str]]:
    """``problems`` with the YAML line of each path under ``section`` (``metrics.tone.output
    (line 7)``): its own key's line, else its nearest parent's."""
    found = []
    for path, message in problems:
        path = path.removesuffix(".[key]")  # a bad name: the name's own line
        where = path
        while where and where not in lines:
            where = where.rpartition("[")[0] if where.endswith("]") else where.rpartition(".")[0]
        in_section = path == section or path.startswith((f"{section}.", f"{section}["))
        found.append((f"{path} (line {lines[where]})" if in_section and where else path, message))
    return found


def validation_problems(error: ValidationError) -> list[tuple[str, str]]:
    """Pydantic's errors as ``(key path, message)`` pairs, in the YAML file's words."""
    problems = []
    # include_input=False: inputs are never shown, whatever field a key was pasted into.
    for item in error.errors(include_input=False, include_url=False):
        loc = item["loc"]
        problems.append((_dotted(loc), _message(item, loc)))
    return problems


def _dotted(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path


def _message(item: Any, loc: tuple[int | str, ...]) -> str:
    kind = item["type"]
    if kind == "extra_forbidden":
        return "unknown key" + _suggestion(str(loc[-1]), _known_keys(loc[:-1]))
    if kind == "missing":
        return "required key is missing"
    if kind == "literal_error":
        expected = item.get("ctx", {}).get("expected", "")
        return f"must be one of {expected}".replace("'", "")
    if kind in ("model_type", "dict_type"):
        return "must be a mapping (key: value)"
    if kind == "list_type":
        return "must be a list"
    message = str(item["msg"])
    if message.startswith("Value error, "):
        return message.removeprefix("Value error, ")
    return message.replace("Input should be", "must be")


def _suggestion(key: str, known: list[str]) -> str:
    if key == "api_key":
        return " (put the key in an environment variable and name it in api_key_env)"
    meant = closest_name(key, known)
    return f" (did you mean {meant}?)" if meant else ""


def _known_keys(loc: tuple[int | str, ...]) -> list[str]:
    """The keys allowed at ``loc``, found by walking the schema's annotations."""
    annotation: Any = ModelsConfig
    for part in loc:
        annotation = _unwrap(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = _field_by_key(annotation, str(part))
            if field is None:
                return []
            annotation = field
        elif typing.get_origin(annotation) in (list, dict):
            annotation = typing.get_args(annotation)[-1]
        else:
            return []
    annotation = _unwrap(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [info.alias or name for name, info in annotation.model_fields.items()]
    return []


def _field_by_key(model: type[BaseModel], key: str) -> Any:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info.annotation
    return None


def _unwrap(annotation: Any) -> Any:
    """Strip ``Optional``/``Annotated`` down to the type that holds the fields."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
            if len(args) != 1:
                return annotation
            annotation = args[0]
        else:
            return annotation
