"""Judge and embedding models as the metrics see them: a LangChain model plus how to call it.

Pass plain LangChain models to a metric, or wrap them in a :class:`Judge` or :class:`Embedder`.
What a model object is (the model a wrapper calls, its label, its own timeout) is read in
:mod:`~langchain_answer_metrics.judging.model_facts`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult
from langchain_core.rate_limiters import BaseRateLimiter
from langchain_core.runnables import Runnable
from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_serializer,
    field_validator,
)

from langchain_answer_metrics.core.redaction import register_model_secrets, without_secrets
from langchain_answer_metrics.core.strict_options import reject_unknown_fields
from langchain_answer_metrics.judging.endpoints import endpoint_of
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_REASKS
from langchain_answer_metrics.judging.model_facts import (
    accepts_method,
    is_chat_runnable,
    own_deadline,
)
from langchain_answer_metrics.judging.model_facts import model_label as model_label
from langchain_answer_metrics.judging.model_facts import wrapped_model as wrapped_model
from langchain_answer_metrics.judging.portable import Rebuilt, given_fields
from langchain_answer_metrics.judging.request import DEFAULT_REQUEST_TIMEOUT, model_request
from langchain_answer_metrics.judging.retry import RetryPolicy
from langchain_answer_metrics.judging.structured_chain import structured_chat

StructuredMethod = Literal["function_calling", "json_schema", "json_mode"]
# A request for several choices: the messages, and generate's options (n, tools...).
ChoicesCall = tuple[list[BaseMessage], dict[str, Any]]


def request_deadline(member: PanelMember) -> float | None:
    """The deadline of each of ``member``'s requests: its ``timeout`` when given; else
    the model's own (:func:`~.model_facts.own_deadline`) when it has one; else
    :data:`DEFAULT_REQUEST_TIMEOUT`."""
    if "timeout" in member.model_fields_set:
        return member.timeout
    own = own_deadline(member.model)
    return member.timeout if own is None else own


class PanelMember(BaseModel):
    """What a judge and an embedder share: model, label, retry, deadline, endpoint, safe repr."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    _reject_unknown = reject_unknown_fields()

    model: Any
    name: str | None = Field(
        default=None,
        validation_alias=AliasChoices("label", "name"),
        description="The label in results (``label=`` or ``name=``); default: the model id.",
    )
    retry: RetryPolicy | None = None
    timeout: float | None = Field(
        default=DEFAULT_REQUEST_TIMEOUT,
        gt=0,
        description="Seconds each request (each attempt) may take, first byte to last "
        "(None: no deadline). A timeout like any other: retried, counted by the circuit "
        "breaker. Not given: the model's own timeout if it has one (times its client's "
        "attempts), else 120.",
    )

    @classmethod
    def _checked_model(cls, value: Any) -> Any:
        """``value`` if it is a model this member takes; else a TypeError naming why."""
        return value

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled for workers (joblib, multiprocessing, Spark): built again there from the
        # fields it was given, its model too (judging/portable.py); caches start afresh.
        return Rebuilt(type(self), given_fields(self)).__reduce__()

    @field_validator("model")
    @classmethod
    def _registered(cls, value: Any) -> Any:
        value = cls._checked_model(value)
        # Its key, for redaction: a provider may quote it back in an error message.
        register_model_secrets(wrapped_model(value))
        return value

    @property
    def label(self) -> str:
        return self.name or model_label(self.model)

    @property
    def endpoint(self) -> str | None:
        """``scheme://host:port`` the model's requests go to (None: not known)."""
        return endpoint_of(wrapped_model(self.model))

    def _repr_details(self) -> str:
        return ""

    def __repr__(self) -> str:
        # Not the model's own repr: it shows its base URL, credentials included.
        return (
            f"{type(self).__name__}(label={self.label!r}, "
            f"model={type(wrapped_model(self.model)).__name__}{self._repr_details()})"
        )

    def __str__(self) -> str:  # str() and f"{judge}": the same safe text as repr
        return repr(self)

    @field_serializer("model")
    def _model_without_secrets(self, model: Any) -> Any:
        # The model's own dump holds its base URL, credentials included.
        return without_secrets(model.model_dump() if isinstance(model, BaseModel) else model)


class Judge(PanelMember):
    """A chat model on the judge panel, and how to call it.

    Attributes:
        model: a chat model, or a runnable wrapping one (``with_fallbacks``, ``bind`` ...).
        name: the label in results (``label=`` or ``name=``); default: the model id.
        method: the structured-output method; ``None`` picks one that suits the model.
        max_reasks: re-asks after a reply that cannot be read, before it counts as failed.
        supports_n: whether one request can return several choices (OpenAI's ``n``).
        retry: a :class:`RetryPolicy` (set the client's own retries to 0).
        timeout: seconds each attempt may take (``None``: none; default: the model's, else 120).

    Raises:
        TypeError: a runnable ``model`` wrapping no chat model, or an unknown option.

    Example:
        >>> Faithfulness(llm=[Judge(model=ChatOpenAI(model="gpt-4o-mini"), max_reasks=1), claude])
    """

    model: Runnable[Any, Any] = Field(
        description="A chat model, or any runnable wrapping one (with_fallbacks, "
        "with_retry, bind, with_config, init_chat_model(configurable_fields=...)).",
    )
    method: StructuredMethod | None = Field(
        default=None,
        description="Structured-output method; None picks one that suits the model.",
    )
    max_reasks: int = Field(default=DEFAULT_MAX_REASKS, ge=0)
    supports_n: bool | None = Field(
        default=None,
        description="Whether one request can return several choices (OpenAI's `n`).",
    )

    # Requests per schema (and the one for choices), built once: binding a schema
    # converts it to a tool definition, which is too slow to repeat on every request.
    _requests: dict[type[BaseModel] | str, Runnable[Any, Any]] = PrivateAttr(default_factory=dict)

    @classmethod
    def _checked_model(cls, value: Any) -> Any:
        if not is_chat_runnable(value):
            raise TypeError(
                f"model= takes a LangChain chat model or a runnable wrapping one, "
                f"got {type(value).__name__}"
            )
        return value

    def structured_request(self, schema: type[BaseModel]) -> Runnable[Any, dict[str, Any]]:
        """The request for ``schema``: messages in, ``{raw, parsed, parsing_error}`` out, as
        ``with_structured_output(schema, include_raw=True)`` gives; sent as every request
        is (:func:`~.request.model_request`: retry policy, request budget, interface)."""
        request = self._requests.get(schema)
        if request is None:
            method = self.structured_method
            options: dict[str, Any] = {} if method is None else {"method": method}
            chain = structured_chat(self.model, schema, options)
            request = model_request(
                chain.invoke,
                chain.ainvoke,
                retry=self.retry,
                name=chain.get_name(),
                endpoint=self.endpoint,
                deadline=request_deadline(self),
                judge=self.label,
            )
            self._requests[schema] = request
        return request

    def choices_request(self) -> Runnable[ChoicesCall, LLMResult]:
        """The request for several choices in one reply: ``generate`` on the bare chat
        model with the given options (``n``, the tool), sent as every request is."""
        request = self._requests.get("choices")
        if request is None:
            model = self.chat_model

            def through(generate: Callable[..., Any]) -> Callable[..., Any]:
                # Only the callbacks: they carry the parent run, its tags and metadata.
                return lambda call, config: generate(
                    [call[0]], callbacks=(config or {}).get("callbacks"), **call[1]
                )

            request = model_request(
                through(model.generate),
                through(model.agenerate),
                retry=self.retry,
                name="generate",
                endpoint=self.endpoint,
                deadline=request_deadline(self),
                judge=self.label,
            )
            self._requests["choices"] = request
        return request

    def _repr_details(self) -> str:
        return f", method={self.structured_method!r}, max_reasks={self.max_reasks}"

    @property
    def structured_method(self) -> StructuredMethod | None:
        """The method to pass to ``with_structured_output`` (None: the model's own default)."""
        if self.method is not None:
            return self.method
        model = wrapped_model(self.model)
        if isinstance(model, BaseChatModel) and accepts_method(model):
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


class Embedder(PanelMember):
    """An embedding model; ``label``, ``retry`` and ``timeout`` are as for :class:`Judge`.

    Attributes:
        model: a LangChain ``Embeddings``.
        batch_size: texts per ``embed_documents`` request.
        rate_limiter: a LangChain rate limiter every request waits for.
        chars_per_token: for estimates when the model has no tokenizer (default: the metric's).

    Example:
        >>> SemanticSimilarity(embeddings=Embedder(model=OpenAIEmbeddings(), batch_size=64))
    """

    model: Embeddings
    rate_limiter: BaseRateLimiter | None = None
    batch_size: int = Field(default=128, ge=1)
    chars_per_token: float | None = Field(
        default=None,
        gt=0,
        description="Characters per token for this model when it exposes no tokenizer "
        "(default: the metric's chars_per_token).",
    )

    _request: Runnable[list[str], list[list[float]]] | None = PrivateAttr(default=None)

    def request(self) -> Runnable[list[str], list[list[float]]]:
        """The request for vectors: texts in, one vector each out, sent as every request
        is (:func:`~.request.model_request`: retry, rate limiter, request budget)."""
        if self._request is None:
            model = self.model
            self._request = model_request(
                lambda texts, _: model.embed_documents(texts),
                lambda texts, _: model.aembed_documents(texts),
                retry=self.retry,
                rate_limiter=self.rate_limiter,
                name="embed_documents",
                endpoint=self.endpoint,
                deadline=request_deadline(self),
            )
        return self._request

    def _repr_details(self) -> str:
        return f", batch_size={self.batch_size}"


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
        llm,
        option="llm",
        wrapper=Judge,
        accepts=is_chat_runnable,
        kind="LangChain chat models (or runnables wrapping one)",
    )


def as_embedders(embeddings: EmbedderLike | Sequence[EmbedderLike] | None) -> list[Embedder]:
    """Normalise ``embeddings=`` into embedders with unique labels."""
    return _as_members(
        embeddings,
        option="embeddings",
        wrapper=Embedder,
        accepts=lambda item: isinstance(item, Embeddings),
        kind="LangChain Embeddings",
    )
