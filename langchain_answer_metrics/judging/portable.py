"""Models that travel: a judge or embedding model pickled as what it was built from.

A chat model holds an HTTP client (locks, sockets), which cannot be pickled, so a metric
could not be sent to joblib, multiprocessing or Spark workers. A model that does not
pickle as it is travels as its class and the fields it was given, and is built again on
the other side, where it makes a client of its own. Its fields travel as they are held:
a key the model holds (a ``SecretStr``) travels with it, and nothing else is added.

    >>> clone = pickle.loads(pickle.dumps(Judge(model=ChatOpenAI(model="gpt-4o-mini"))))
    >>> clone.model.model_name
    'gpt-4o-mini'
"""

from __future__ import annotations

import pickle
from typing import Any

from langchain_core.rate_limiters import InMemoryRateLimiter
from pydantic import AliasChoices, BaseModel


def portable(value: Any) -> Any:
    """``value`` if it pickles as it is; else a stand-in that pickles as the recipe to
    build it again (a pydantic model: its class and the fields it was given), applied to
    the items of a list, tuple or dict.

    Raises:
        TypeError: ``value`` neither pickles nor is a pydantic model (naming its type).
    """
    try:
        pickle.dumps(value)
    except Exception:  # any failure to pickle means: build it again instead
        pass
    else:
        return value
    if isinstance(value, BaseModel):
        return Rebuilt(type(value), given_fields(value))
    if isinstance(value, InMemoryRateLimiter):  # its lock: a fresh limiter with its pace
        pace = ("requests_per_second", "check_every_n_seconds", "max_bucket_size")
        return Rebuilt(type(value), {name: getattr(value, name) for name in pace})
    if isinstance(value, (list, tuple)):
        return type(value)(portable(item) for item in value)
    if isinstance(value, dict):
        return {key: portable(item) for key, item in value.items()}
    raise TypeError(
        f"cannot pickle a {type(value).__name__} (it is not a pydantic model that can be "
        "built again from its fields); give the metric a model that pickles"
    )


def given_fields(model: BaseModel) -> dict[str, Any]:
    """The keyword arguments that build ``model`` again: the fields it was given, made
    portable. A field that cannot travel (a client the model made for itself) is left
    out: the model makes it again."""
    fields = type(model).model_fields
    populate_by_name = bool(type(model).model_config.get("populate_by_name"))
    given: dict[str, Any] = {}
    for name in sorted(model.model_fields_set):
        field = fields.get(name)
        if field is None:
            continue
        try:
            value = portable(getattr(model, name))
        except TypeError:
            continue
        given[name if populate_by_name else _keyword(name, field.alias, field.validation_alias)] = (
            value
        )
    return given


def _keyword(name: str, alias: str | None, validation_alias: Any) -> str:
    """The keyword the model's constructor takes for field ``name``."""
    if isinstance(validation_alias, str):
        return validation_alias
    if isinstance(validation_alias, AliasChoices):
        choices = [choice for choice in validation_alias.choices if isinstance(choice, str)]
        return name if name in choices else (choices[0] if choices else name)
    return alias or name


class Rebuilt:
    """What :func:`portable` puts in a pickle for a model: unpickled, the model itself,
    built again from its class and the fields it was given."""

    def __init__(self, cls: type[Any], fields: dict[str, Any]) -> None:
        self.cls = cls
        self.fields = fields

    def __reduce__(self) -> tuple[Any, ...]:
        return (_build, (self.cls, self.fields))


def _build(cls: type[Any], fields: dict[str, Any]) -> Any:
    return cls(**fields)
