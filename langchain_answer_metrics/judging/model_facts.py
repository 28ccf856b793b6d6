"""What a model object is, read without calling it: the model a wrapper calls first, its
readable label, whether it is a chat model, whether its ``with_structured_output`` takes
``method=``, and how long its own client may take over one request. :class:`~.judges.Judge`
and :class:`~.judges.Embedder` ask these; so do the spend and the cost estimate.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableWithFallbacks
from langchain_core.runnables.base import RunnableBindingBase
from pydantic import BaseModel


def wrapped_model(runnable: Any) -> Any:
    """The model a wrapper calls first: through ``bind``, ``with_config``, ``with_retry``
    and ``with_fallbacks`` (its primary), or an embeddings wrapper's underlying model."""
    while True:
        if isinstance(runnable, RunnableWithFallbacks):
            runnable = runnable.runnable
        elif isinstance(runnable, RunnableBindingBase):
            runnable = runnable.bound
        elif isinstance(optional_attribute(runnable, "underlying_embeddings"), Embeddings):
            runnable = runnable.underlying_embeddings
        else:
            return runnable


def optional_attribute(value: Any, name: str) -> Any:
    """``getattr(value, name, None)``, without paying for the miss on a pydantic model.

    A pydantic model (every LangChain model is one) answers a name it lacks from a
    Python-level ``__getattr__`` that builds, raises and loses an ``AttributeError``. The
    request path asks models for names most of them lack (``underlying_embeddings``,
    ``model_name`` ...) some sixty times per sample, so a plain pydantic model's absent
    name is answered from where pydantic itself would look: the instance, its class, its
    private and its extra attributes.

    Example:
        >>> from langchain_openai import ChatOpenAI
        >>> optional_attribute(ChatOpenAI(model="gpt-4o-mini", api_key="sk-x"), "no_such")
    """
    if (
        isinstance(value, BaseModel)
        and name not in value.__dict__
        and _answers_only_declared_names(type(value), name)
        and name not in (value.__pydantic_private__ or ())
        and name not in (value.__pydantic_extra__ or ())
    ):
        return None
    return getattr(value, name, None)


@functools.lru_cache(maxsize=1024)
def _answers_only_declared_names(model_class: type[BaseModel], name: str) -> bool:
    """Whether ``model_class`` neither declares ``name`` nor answers names of its own
    (a ``__getattr__`` other than pydantic's)."""
    declared = any(name in vars(base) for base in model_class.__mro__)
    return not declared and model_class.__getattr__ is BaseModel.__getattr__  # type: ignore[attr-defined]


def model_label(model: Any) -> str:
    """A readable name for a model: its model id when it has one, else its class.

    Wrappers are looked through (see :func:`wrapped_model`); a model that
    ``init_chat_model`` builds per call is named by its configured model id.
    """
    model = wrapped_model(model)
    for attribute in ("model_name", "model", "model_id", "deployment_name"):
        value = optional_attribute(model, attribute)
        if isinstance(value, str) and value:
            return value
    configured = optional_attribute(model, "_default_config")
    if isinstance(configured, dict) and isinstance(configured.get("model"), str):
        return str(configured["model"])
    return type(model).__name__


def is_chat_runnable(value: Any) -> bool:
    """A chat model, or a runnable wrapping one (fallbacks, bindings, configurable)."""
    model = wrapped_model(value)
    return isinstance(model, BaseChatModel) or (
        isinstance(model, Runnable) and callable(getattr(model, "with_structured_output", None))
    )


def accepts_method(model: BaseChatModel) -> bool:
    """Whether ``model.with_structured_output`` takes ``method=``."""
    return _class_accepts_method(type(model))


@functools.lru_cache(maxsize=256)
def _class_accepts_method(model_class: type[BaseChatModel]) -> bool:
    # Once per class: structured_method is read on every request, and inspecting a
    # signature costs more than the rest of building the request's identity.
    parameters = inspect.signature(model_class.with_structured_output).parameters
    return "method" in parameters


# What the openai client waits between its own retries, at most (without retry-after).
_CLIENT_BACKOFF_SECONDS = 10.0


def own_deadline(model: Any) -> float | None:
    """The longest one request may take by the model's own settings: its timeout
    (``ChatOpenAI(timeout=600)``, a slow model's) for each attempt its client makes, plus
    10 s of backoff per retry; None when it sets no timeout."""
    model = wrapped_model(model)
    own = _number(getattr(model, "request_timeout", None))
    if own is None:
        own = _number(getattr(model, "default_request_timeout", None))  # ChatAnthropic
    if own is None:
        return None
    # An openai client's max_retries of None means its default, 2 retries.
    given = getattr(model, "max_retries", 0)
    retries = 2.0 if given is None else _number(given) or 0.0
    return own * (1 + retries) + _CLIENT_BACKOFF_SECONDS * retries


def _number(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None
