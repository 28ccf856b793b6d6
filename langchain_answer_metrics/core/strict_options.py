"""Reject unknown keyword options by name, suggesting the closest known one.

``Faithfulness(llm=judge, treshold=0.7)`` would otherwise build with ``threshold=None``:
pydantic ignores keys it does not know. Here it raises::

    UnknownOptionError: Faithfulness() got an unexpected keyword argument 'treshold'
    (did you mean threshold?)

- pydantic models: put ``_reject_unknown = reject_unknown_fields()`` in the class body;
- functions: decorate them with ``@rejects_unknown_keywords()`` (with
  ``forwards_to=`` when they pass ``**options`` on to another function);
- anything else: :func:`check_options`, or :func:`closest_name` for the suggestion alone.

The check runs before any validation, so nothing is built and no model is called.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ParamSpec, TypeVar, cast

from pydantic import AliasChoices, BaseModel, model_validator

__all__ = [
    "UnknownOptionError",
    "check_options",
    "closest_name",
    "field_names",
    "reject_unknown_fields",
    "rejects_unknown_keywords",
    "unknown_option_error",
]

P = ParamSpec("P")
R = TypeVar("R")


class UnknownOptionError(TypeError):
    """A keyword option ``key`` that ``owner`` does not take; ``suggestion`` is the closest
    known name, or None.

    A TypeError, as Python raises for an unexpected keyword argument (and not a
    ValueError: pydantic would wrap that in a ValidationError, burying the message).
    """

    def __init__(self, owner: str, key: str, known: Iterable[str], suggestion: str | None) -> None:
        self.owner = owner
        self.key = key
        self.known = tuple(known)
        self.suggestion = suggestion
        if suggestion is not None:
            hint = f" (did you mean {suggestion}?)"
        elif self.known:
            hint = f" (known options: {', '.join(sorted(self.known))})"
        else:
            hint = ""
        super().__init__(f"{owner}() got an unexpected keyword argument {key!r}{hint}")


def closest_name(key: str, known: Iterable[str]) -> str | None:
    """The known name ``key`` was most likely meant to be (``-`` read as ``_``), or None."""
    matches = difflib.get_close_matches(key.replace("-", "_"), list(known), n=1, cutoff=0.6)
    return matches[0] if matches else None


def unknown_option_error(owner: str, key: str, known: Iterable[str]) -> UnknownOptionError:
    """The error for ``owner`` given ``key``, which is not one of ``known``."""
    known = tuple(known)
    return UnknownOptionError(owner, key, known, closest_name(key, known))


def check_options(owner: str, given: Iterable[str], known: Iterable[str]) -> None:
    """Raise :class:`UnknownOptionError` for the first name in ``given`` not in ``known``."""
    known = tuple(known)
    for key in given:
        if key not in known:
            raise unknown_option_error(owner, str(key), known)


def field_names(model: type[BaseModel]) -> tuple[str, ...]:
    """The keyword names a pydantic model takes: its field names and their string aliases."""
    names: list[str] = []
    for name, info in model.model_fields.items():
        names.append(name)
        aliases: list[Any] = [info.alias, info.validation_alias]
        if isinstance(info.validation_alias, AliasChoices):
            aliases += info.validation_alias.choices
        for alias in aliases:
            if isinstance(alias, str) and alias not in names:
                names.append(alias)
    return tuple(names)


def reject_unknown_fields() -> Any:
    """A before-validator for a pydantic model's class body that rejects unknown keys::

        class Judge(BaseModel):
            _reject_unknown = reject_unknown_fields()

    Subclasses inherit it and check against their own fields. Only a mapping input is
    checked (a model instance passed to ``model_validate`` is left alone).
    """

    def reject(cls: type[BaseModel], data: Any) -> Any:
        if isinstance(data, Mapping):
            check_options(cls.__name__, data, field_names(cls))
        return data

    return model_validator(mode="before")(reject)


def _keyword_names(function: Callable[..., Any]) -> tuple[list[str], bool]:
    parameters = inspect.signature(function).parameters.values()
    names = [
        p.name
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)
    return names, takes_any


def rejects_unknown_keywords(
    *, forwards_to: Callable[..., Any] | None = None
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate a function so an unknown keyword raises :class:`UnknownOptionError`.

    A function taking ``**options`` must name the function it passes them on to in
    ``forwards_to``; that function's keywords are then known too. The check runs when the
    function is called (for a coroutine function, when it is awaited), before its body.
    """

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        known, takes_any = _keyword_names(function)
        if takes_any:
            if forwards_to is None:
                raise ValueError(
                    f"{function.__qualname__} takes **kwargs: pass forwards_to= to say "
                    "which function receives them"
                )
            known += [name for name in _keyword_names(forwards_to)[0] if name not in known]
        owner = function.__qualname__

        if inspect.iscoroutinefunction(function):

            async def checked_async(*args: Any, **kwargs: Any) -> Any:
                check_options(owner, kwargs, known)
                return await cast(Any, function)(*args, **kwargs)

            return cast(Callable[P, R], functools.wraps(function)(checked_async))

        @functools.wraps(function)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            check_options(owner, kwargs, known)
            return function(*args, **kwargs)

        return checked

    return decorate
