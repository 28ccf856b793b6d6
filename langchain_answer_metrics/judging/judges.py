"""Judge and embedding models as the metrics see them: a LangChain model plus how to call it.

Pass plain LangChain models to a metric, or wrap them to choose the structured-output
method, a retry policy or a display name::

    judge = Judge(model=ChatOpenAI(model="gpt-4o-mini"), method="function_calling")
    FactualCorrectness(llm=[judge, ChatAnthropic(model="claude-sonnet-4-5")])
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.messages import BaseMessage
from langchain_core.output_parsers import BaseOutputParser
from langchain_core.outputs import ChatGeneration
from langchain_core.rate_limiters import BaseRateLimiter
from langchain_core.runnables import (
    Runnable,
    RunnableBinding,
    RunnableConfig,
    RunnableSequence,
    RunnableWithFallbacks,
)
from langchain_core.runnables.base import RunnableBindingBase
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from langchain_answer_metrics.judging.retry import RetryPolicy
from langchain_answer_metrics.strict_options import reject_unknown_fields

StructuredMethod = Literal["function_calling", "json_schema", "json_mode"]

class RawAndParsed(Runnable[Any, dict[str, Any]]):
    """The bound model, then its parser, called directly: ``{raw, parsed, parsing_error}``.

    This is what ``with_structured_output(include_raw=True)`` returns, without the five
    runnables that wrapper adds around every call (three of them run in a thread pool):
    the model call stays a child run of the step, at a fraction of the CPU.
    """

    def __init__(self, model: Runnable[Any, Any], parser: Sequence[Runnable[Any, Any]]) -> None:
        self.model = model
        self.parser = list(parser)

    @classmethod
    def split(cls, structured: Runnable[Any, Any]) -> RawAndParsed | None:
        """From ``model.with_structured_output(schema)``: the bound model and parser steps."""
        if not isinstance(structured, RunnableSequence):
            return None
        first = structured.first
        model = first.bound if isinstance(first, RunnableBinding) else first
        if not isinstance(model, BaseLanguageModel):
            return None  # not the usual "bound model | parser" chain: keep include_raw
        if isinstance(first, RunnableBinding):
            first = _schema_converted_once(first)
        # A structured reply is parsed whole, and some OpenAI-compatible servers reject
        # stream=true, which LangChain would otherwise send under astream_events.
        return cls(first.bind(stream=False), structured.steps[1:])

    def _parse(self, raw: Any) -> dict[str, Any]:
        try:
            value = raw
            for step in self.parser:
                if isinstance(step, BaseOutputParser) and isinstance(value, BaseMessage):
                    value = step.parse_result([ChatGeneration(message=value)])
                else:
                    value = step.invoke(value)
        except Exception as error:  # as include_raw=True: a parse failure is reported
            return {"raw": raw, "parsed": None, "parsing_error": error}
        return {"raw": raw, "parsed": value, "parsing_error": None}

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return self._parse(self.model.invoke(input, config, **kwargs))

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return self._parse(await self.model.ainvoke(input, config, **kwargs))


def _schema_converted_once(bound: RunnableBinding[Any, Any]) -> Runnable[Any, Any]:
    """The binding with its tracing schema given as a tool dict rather than a class.

    Chat models convert ``ls_structured_output_format["schema"]`` to JSON schema on every
    call for the trace metadata: ~0.5 ms for a Pydantic class, ~1 µs for the equivalent
    tool dict, with the same result.
    """
    traced = bound.kwargs.get("ls_structured_output_format")
    if not isinstance(traced, dict) or isinstance(traced.get("schema"), dict):
        return bound
    try:
        schema = convert_to_openai_tool(traced["schema"])
    except Exception:  # unconvertible: leave it to the model, which skips it the same way
        return bound
    return bound.bind(ls_structured_output_format={**traced, "schema": schema})


def wrapped_model(runnable: Any) -> Any:
    """The model a wrapper calls first: through ``bind``, ``with_config``, ``with_retry``
    and ``with_fallbacks`` (its primary), or an embeddings wrapper's underlying model."""
    while True:
        if isinstance(runnable, RunnableWithFallbacks):
            runnable = runnable.runnable
        elif isinstance(runnable, RunnableBindingBase):
            runnable = runnable.bound
        elif isinstance(getattr(runnable, "underlying_embeddings", None), Embeddings):
            runnable = runnable.underlying_embeddings
        else:
            return runnable


def model_label(model: Any) -> str:
    """A readable name for a model: its model id when it has one, else its class.

    Wrappers are looked through (see :func:`wrapped_model`); a model that
    ``init_chat_model`` builds per call is named by its configured model id.
    """
    model = wrapped_model(model)
    for attribute in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    configured = getattr(model, "_default_config", None)
    if isinstance(configured, dict) and isinstance(configured.get("model"), str):
        return str(configured["model"])
    return type(model).__name__


def structured_chat(
    runnable: Runnable[Any, Any], schema: type[BaseModel], options: dict[str, Any]
) -> Runnable[Any, dict[str, Any]]:
    """``runnable`` asked for ``schema``: a runnable returning ``{raw, parsed, parsing_error}``.

    The schema is bound through wrappers, so every fallback of ``with_fallbacks`` gets it
    in its own model's format, and ``bind`` / ``with_config`` / ``with_retry`` keep
    applying around it. Chat models are called without streaming (see :class:`RawAndParsed`).
    """
    if isinstance(runnable, BaseChatModel):
        split = RawAndParsed.split(runnable.with_structured_output(schema, **options))
        if split is not None:
            return split
        with_raw: Runnable[Any, Any] = runnable.with_structured_output(
            schema, include_raw=True, **options
        )
        return with_raw
    if isinstance(runnable, RunnableWithFallbacks):
        return runnable.model_copy(
            update={
                "runnable": structured_chat(runnable.runnable, schema, options),
                "fallbacks": [
                    structured_chat(fallback, schema, options) for fallback in runnable.fallbacks
                ],
            }
        )
    if isinstance(runnable, RunnableBindingBase):
        return runnable.model_copy(
            update={"bound": structured_chat(runnable.bound, schema, options)}
        )
    # A model built per call (init_chat_model with configurable fields) queues this.
    structured: Runnable[Any, dict[str, Any]] = runnable.with_structured_output(  # type: ignore[attr-defined]
        schema, include_raw=True, **options
    )
    return structured


def is_chat_runnable(value: Any) -> bool:
    """A chat model, or a runnable wrapping one (fallbacks, bindings, configurable)."""
    model = wrapped_model(value)
    return isinstance(model, BaseChatModel) or (
        isinstance(model, Runnable) and callable(getattr(model, "with_structured_output", None))
    )


class Judge(BaseModel):
    """A chat model on the judge panel."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    _reject_unknown = reject_unknown_fields()

    model: Runnable[Any, Any] = Field(
        description="A chat model, or any runnable wrapping one (with_fallbacks, "
        "with_retry, bind, with_config, init_chat_model(configurable_fields=...)).",
    )
    name: str | None = Field(
        default=None,
        validation_alias=AliasChoices("label", "name"),
        description="The label in results (``label=`` or ``name=``); default: the model id.",
    )
    method: StructuredMethod | None = Field(
        default=None,
        description="Structured-output method; None picks one that suits the model.",
    )
    retry: RetryPolicy | None = None
    max_reasks: int = Field(default=2, ge=0)
    supports_n: bool | None = Field(
        default=None,
        description="Whether one request can return several choices (OpenAI's `n`).",
    )

    # Structured-output runnables per schema, built once: binding a schema converts it
    # to a tool definition, which is too slow to repeat on every request.
    _structured: dict[type[BaseModel], Runnable[Any, Any]] = PrivateAttr(default_factory=dict)

    @field_validator("model")
    @classmethod
    def _chat_runnable(cls, value: Runnable[Any, Any]) -> Runnable[Any, Any]:
        if not is_chat_runnable(value):
            raise TypeError(
                f"model= takes a LangChain chat model or a runnable wrapping one, "
                f"got {type(value).__name__}"
            )
        return value

    def structured_runnable(self, schema: type[BaseModel]) -> Runnable[Any, Any]:
        """``with_structured_output(schema, include_raw=True)``'s output, plus the retry policy.

        Built as :class:`RawAndParsed` where the model's structured chain allows it.
        """
        runnable = self._structured.get(schema)
        if runnable is None:
            method = self.structured_method
            options: dict[str, Any] = {} if method is None else {"method": method}
            runnable = structured_chat(self.model, schema, options)
            if self.retry is not None:
                runnable = self.retry.wrap(runnable)
            self._structured[schema] = runnable
        return runnable

    @property
    def label(self) -> str:
        return self.name or model_label(self.model)

    def __repr__(self) -> str:
        # Not the model's own repr: it shows its base URL, credentials included.
        return (
            f"Judge(label={self.label!r}, model={type(wrapped_model(self.model)).__name__}, "
            f"method={self.structured_method!r}, max_reasks={self.max_reasks})"
        )

    @property
    def structured_method(self) -> StructuredMethod | None:
        """The method to pass to ``with_structured_output`` (None: the model's own default)."""
        if self.method is not None:
            return self.method
        model = wrapped_model(self.model)
        if isinstance(model, BaseChatModel) and _accepts_method(model):
            # Tool calling is what OpenAI-compatible gateways and non-OpenAI models
            # handle most reliably; strict json_schema fails on many of them.
            return "function_calling"
        return None

    @property
    def can_sample_n(self) -> bool:
        if self.supports_n is not None:
            return self.supports_n
        # Only a bare chat model: a wrapper's fallbacks may not sample n choices.
        return isinstance(self.model, BaseChatModel) and "n" in type(self.model).model_fields

    @property
    def chat_model(self) -> BaseChatModel:
        """The bare chat model, for requests that sample ``n`` choices."""
        if not isinstance(self.model, BaseChatModel):
            raise TypeError(f"{self.label} is a {type(self.model).__name__}, not a chat model")
        return self.model


def _accepts_method(model: BaseChatModel) -> bool:
    return _class_accepts_method(type(model))


@functools.lru_cache(maxsize=256)
def _class_accepts_method(model_class: type[BaseChatModel]) -> bool:
    # Once per class: structured_method is read on every request, and inspecting a
    # signature costs more than the rest of building the request's identity.
    parameters = inspect.signature(model_class.with_structured_output).parameters
    return "method" in parameters


class Embedder(BaseModel):
    """An embedding model for SemanticSimilarity and AnswerCorrectness."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    _reject_unknown = reject_unknown_fields()

    model: Embeddings
    name: str | None = Field(
        default=None,
        validation_alias=AliasChoices("label", "name"),
        description="The label in results (``label=`` or ``name=``); default: the model id.",
    )
    retry: RetryPolicy | None = None
    rate_limiter: BaseRateLimiter | None = None
    batch_size: int = Field(default=128, ge=1)

    @property
    def label(self) -> str:
        return self.name or model_label(self.model)

    def __repr__(self) -> str:
        # Not the model's own repr: it shows its base URL, credentials included.
        return (
            f"Embedder(label={self.label!r}, model={type(wrapped_model(self.model)).__name__}, "
            f"batch_size={self.batch_size})"
        )


JudgeLike = BaseChatModel | Runnable[Any, Any] | Judge
EmbedderLike = Embeddings | Embedder


def _unique_labels(labels: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        count = seen.get(label, 0) + 1
        seen[label] = count
        unique.append(label if count == 1 else f"{label}#{count}")
    return unique


MemberT = TypeVar("MemberT", Judge, Embedder)


def _as_members(
    value: Any, *, option: str, wrapper: type[MemberT], accepts: Callable[[Any], bool], kind: str
) -> list[MemberT]:
    if value is None:
        return []
    if isinstance(value, wrapper) or accepts(value):
        items = [value]
    elif isinstance(value, Sequence) and not isinstance(value, str):
        items = list(value)
    else:
        raise TypeError(
            f"{option}= takes {kind} or {wrapper.__name__} objects (one or a list), "
            f"got {type(value).__name__}"
        )
    members: list[MemberT] = []
    for item in items:
        if isinstance(item, wrapper):
            members.append(item)
        elif accepts(item):
            members.append(wrapper(model=item))
        else:
            raise TypeError(
                f"{option}= takes {kind} or {wrapper.__name__} objects, got {type(item).__name__}"
            )
    labels = _unique_labels([member.label for member in members])
    return [
        member if member.label == label else member.model_copy(update={"name": label})
        for member, label in zip(members, labels)
    ]


def as_judges(llm: JudgeLike | Sequence[JudgeLike] | None) -> list[Judge]:
    """Normalise ``llm=`` into judges with unique labels."""
    return _as_members(
        llm, option="llm", wrapper=Judge, accepts=is_chat_runnable,
        kind="LangChain chat models (or runnables wrapping one)",
    )


def as_embedders(embeddings: EmbedderLike | Sequence[EmbedderLike] | None) -> list[Embedder]:
    """Normalise ``embeddings=`` into embedders with unique labels."""
    return _as_members(
        embeddings, option="embeddings", wrapper=Embedder,
        accepts=lambda item: isinstance(item, Embeddings), kind="LangChain Embeddings",
    )
