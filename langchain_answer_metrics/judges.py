"""Judge and embedding models as the metrics see them: a LangChain model plus how to call it.

Pass plain LangChain models to a metric, or wrap them to choose the structured-output
method, a retry policy or a display name::

    judge = Judge(model=ChatOpenAI(model="gpt-4o-mini"), method="function_calling")
    FactualCorrectness(llm=[judge, ChatAnthropic(model="claude-sonnet-4-5")])
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel, BaseLanguageModel
from langchain_core.messages import BaseMessage
from langchain_core.output_parsers import BaseOutputParser
from langchain_core.outputs import ChatGeneration
from langchain_core.rate_limiters import BaseRateLimiter
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig, RunnableSequence
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from langchain_answer_metrics.retry import RetryPolicy

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
        return cls(first, structured.steps[1:])

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


def model_label(model: Any) -> str:
    """A readable name for a model: its model id when it has one, else its class."""
    for attribute in ("model_name", "model", "model_id", "deployment_name"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


class Judge(BaseModel):
    """A chat model on the judge panel."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: BaseChatModel
    name: str | None = None
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

    def structured_runnable(self, schema: type[BaseModel]) -> Runnable[Any, Any]:
        """``with_structured_output(schema, include_raw=True)``'s output, plus the retry policy.

        Built as :class:`RawAndParsed` where the model's structured chain allows it.
        """
        runnable = self._structured.get(schema)
        if runnable is None:
            method = self.structured_method
            options: dict[str, Any] = {} if method is None else {"method": method}
            runnable = RawAndParsed.split(
                self.model.with_structured_output(schema, **options)
            ) or self.model.with_structured_output(schema, include_raw=True, **options)
            if self.retry is not None:
                runnable = self.retry.wrap(runnable)
            self._structured[schema] = runnable
        return runnable

    @property
    def label(self) -> str:
        return self.name or model_label(self.model)

    @property
    def structured_method(self) -> StructuredMethod | None:
        """The method to pass to ``with_structured_output`` (None: the model's own default)."""
        if self.method is not None:
            return self.method
        if _accepts_method(self.model):
            # Tool calling is what OpenAI-compatible gateways and non-OpenAI models
            # handle most reliably; strict json_schema fails on many of them.
            return "function_calling"
        return None

    @property
    def can_sample_n(self) -> bool:
        if self.supports_n is not None:
            return self.supports_n
        return "n" in type(self.model).model_fields


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

    model: Embeddings
    name: str | None = None
    retry: RetryPolicy | None = None
    rate_limiter: BaseRateLimiter | None = None
    batch_size: int = Field(default=128, ge=1)

    @property
    def label(self) -> str:
        return self.name or model_label(self.model)


JudgeLike = BaseChatModel | Judge
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
    value: Any, *, option: str, wrapper: type[MemberT], model_type: type, kind: str
) -> list[MemberT]:
    if value is None:
        return []
    if isinstance(value, (model_type, wrapper)):
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
        elif isinstance(item, model_type):
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
        llm, option="llm", wrapper=Judge, model_type=BaseChatModel,
        kind="LangChain chat models",
    )


def as_embedders(embeddings: EmbedderLike | Sequence[EmbedderLike] | None) -> list[Embedder]:
    """Normalise ``embeddings=`` into embedders with unique labels."""
    return _as_members(
        embeddings, option="embeddings", wrapper=Embedder, model_type=Embeddings,
        kind="LangChain Embeddings",
    )
