"""The input every metric scores: one question, answer, reference and contexts.

>>> Sample(response="Paris is the capital of France.", reference="Paris.")
Sample(user_input=None, response='Paris is the capital of France.', ...)
"""

from __future__ import annotations

import re
import sys
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, field_validator

SampleField = Literal["user_input", "response", "reference", "retrieved_contexts"]
SAMPLE_FIELDS: tuple[SampleField, ...] = (
    "user_input",
    "response",
    "reference",
    "retrieved_contexts",
)


class Sample(BaseModel):
    """One row to score. Which fields are required depends on the metric.

    A metric also takes a plain dict with these keys; ``retrieved_contexts`` may hold
    LangChain ``Document``s (their ``page_content`` is used). A missing, empty or wrongly
    typed field is refused with :class:`InvalidSampleError` before any model call.

    Attributes:
        user_input: the question asked.
        response: the answer to score.
        reference: the expected answer.
        retrieved_contexts: the passages the answer should rest on (texts or ``Document``s).

    Raises:
        pydantic.ValidationError: a field of the wrong type (e.g. a number as ``response``).

    Example:
        >>> Sample(user_input="When was the Eiffel Tower built?",
        ...        response="It was built in 1889.",
        ...        retrieved_contexts=["The Eiffel Tower was built in 1889 in Paris."])
    """

    model_config = ConfigDict(frozen=True)

    user_input: str | None = None
    response: str | None = None
    reference: str | None = None
    retrieved_contexts: list[str] | None = None

    @field_validator("retrieved_contexts", mode="before")
    @classmethod
    def _documents_as_text(cls, value: Any) -> Any:
        # What a retriever returns: its page_content is the context (metadata is not sent).
        if isinstance(value, (list, tuple)):
            return [as_context(item) for item in value]
        return value

    def __repr__(self) -> str:
        # Long judged texts would flood logs and tracebacks; keep the repr short.
        def short(value: Any) -> str:
            text = repr(value)
            return text if len(text) <= 80 else text[:77] + "...'"

        fields = ", ".join(f"{name}={short(getattr(self, name))}" for name in SAMPLE_FIELDS)
        return f"Sample({fields})"


SampleLike = Sample | Mapping[str, Any]


class RowFields(dict[str, Any]):
    """A dataset row's fields as a mapping found them (``SampleMapping.fields_of``), for
    every metric of a run: each metric checks the fields it reads and ignores the others
    (a pair's ``response_a`` for Faithfulness, ``response`` for PairwisePreference), where
    a dict given to ``invoke`` has an unknown key refused, as a likely typo.

        >>> to_sample("m", RowFields(response="A.", response_a="B."), required=["response"])
        Sample(user_input=None, response='A.', ...)
    """


def _is_langchain(value: Any, module: str, name: str) -> bool:
    """Whether ``value`` is an instance of LangChain's ``module.name``, read without
    importing it: none can exist before its module is loaded, so plain text and lists (a
    data file's rows, the command line's one-line errors) load no LangChain."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(value, getattr(loaded, name))


def _is_message(value: Any) -> bool:
    return _is_langchain(value, "langchain_core.messages.base", "BaseMessage")


def page_content(value: Any) -> str | None:
    """The text of a LangChain ``Document`` (or of one serialised to a dict), else None."""
    if _is_langchain(value, "langchain_core.documents.base", "Document"):
        return value.page_content
    if isinstance(value, Mapping) and isinstance(value.get("page_content"), str):
        return str(value["page_content"])
    return None


_KINDS: tuple[tuple[Any, str], ...] = (
    (bool, "a boolean"),
    ((int, float), "a number"),
    (str, "a string"),
    (bytes, "bytes"),
    (Mapping, "a dict"),
    ((list, tuple), "a list"),
    (AbstractSet, "a set"),
)
TEXTS = "texts (a list of strings or Documents)"


def kind_of(value: Any) -> str:
    """What a value is, in a user's words, for an error: ``kind_of(3)`` is ``"a number"``."""
    if _is_langchain(value, "langchain_core.documents.base", "Document"):
        return "a Document"
    found = (name for kinds, name in _KINDS if isinstance(value, kinds))
    return next(found, f"a {type(value).__name__}")


def as_text(value: Any) -> str:
    """A text field's value as a string.

    Accepts a string, a number, a ``Document``, a chat message (its text) or a list of
    messages (the last one's text: an agent's final answer). Raises ``TypeError`` else.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if _is_message(value):
        return str(value.text)
    page = page_content(value)
    if page is not None:
        return page
    if isinstance(value, Sequence) and value and _is_message(value[-1]):
        return str(value[-1].text)
    raise TypeError(f"holds {kind_of(value)}, expected text")


def as_contexts(value: Any) -> list[str]:
    """Retrieved contexts as a list of strings.

    Accepts a string or a ``Document`` (one context), or a list of strings, ``Document``
    objects or serialised Documents. Raises ``TypeError`` for anything else.
    """
    if isinstance(value, str):
        return [value]
    page = page_content(value)
    if page is not None:
        return [page]
    if isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        contexts: list[str] = []
        for item in value:
            text = item if isinstance(item, str) else page_content(item)
            if text is None:
                raise TypeError(
                    f"holds {kind_of(item)} at position {len(contexts)}, expected {TEXTS}"
                )
            contexts.append(text)
        return contexts
    raise TypeError(f"holds {kind_of(value)}, expected {TEXTS}")


def as_context(item: Any) -> Any:
    """One retrieved context as its text: a ``Document`` gives its ``page_content`` (its
    metadata never reaches a prompt); anything else is returned as it is, to be checked.

        >>> as_context(Document(page_content="Paris is the capital.", metadata={"p": 3}))
        'Paris is the capital.'
    """
    text = page_content(item)
    return item if text is None else text


class InvalidSampleError(ValueError):
    """A sample field is missing, empty or of the wrong type for a metric; raised before
    any model call, with ``.metric``, ``.field`` and ``.problem``.

    Args:
        metric: the name of the metric that refused the sample.
        field: the sample field at fault, e.g. ``"retrieved_contexts"``.
        problem: what is wrong with it, completing "field '<field>' ...".

    Example:
        >>> Faithfulness(llm=judge).invoke({"response": "It opened in 1889."})
        InvalidSampleError: faithfulness: field 'retrieved_contexts' is required but missing
    """

    def __init__(self, metric: str, field: str, problem: str) -> None:
        self.metric = metric
        self.field = field
        self.problem = problem
        super().__init__(f"{metric}: field '{field}' {problem}")


DEFAULT_MAX_INPUT_CHARS = 500_000
"""Longest text accepted in one field (each context on its own): about 125k tokens, the
most a large judge's context window takes. A 1 MB response is refused."""

DEFAULT_MAX_CONTEXTS = 1_000
"""Most contexts accepted in ``retrieved_contexts``; retrieval returns far fewer."""

# A text made only of characters of these categories has nothing a judge could read:
# separators (spaces, line and paragraph separators), controls, and format characters
# (zero-width spaces and joiners, direction marks and overrides, soft hyphens, BOM).
_BLANK_CATEGORIES = frozenset({"Zs", "Zl", "Zp", "Cc", "Cf"})
_SURROGATE = re.compile("[\ud800-\udfff]")


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, so it can be written as UTF-8."""
    return _SURROGATE.sub("\ufffd", text)


def _is_blank(text: str) -> bool:
    # Stops at the first visible character: O(1) for ordinary text.
    return all(unicodedata.category(char) in _BLANK_CATEGORIES for char in text)


def _check_content(metric: str, field: str, value: str, max_chars: int) -> str:
    """Refuse a text too long to send, or one that is not valid Unicode."""
    if len(value) > max_chars:
        raise InvalidSampleError(
            metric,
            field,
            f"is {len(value):,} characters long, over the limit of {max_chars:,} "
            "(max_input_chars); shorten it, or raise max_input_chars on the metric",
        )
    found = _SURROGATE.search(value)
    if found is not None:
        raise InvalidSampleError(
            metric,
            field,
            f"has a lone surrogate (U+{ord(found.group()):04X} at character {found.start()}), "
            "which is not valid Unicode; fix how the text was decoded",
        )
    return value


def _check_text(metric: str, field: str, value: Any, max_chars: int) -> str:
    if value is None:
        raise InvalidSampleError(metric, field, "is required but missing")
    if not isinstance(value, str):
        raise InvalidSampleError(metric, field, f"holds {kind_of(value)}, expected text")
    _check_content(metric, field, value, max_chars)
    if _is_blank(value):
        raise InvalidSampleError(
            metric, field, "is empty or has only whitespace or invisible characters"
        )
    return value


def _context_list(metric: str, value: Any, max_contexts: int) -> list[Any]:
    # A dict's keys or a set's arbitrary order would silently become the contexts.
    if isinstance(value, (str, bytes, Mapping, AbstractSet, BaseModel)) or not isinstance(
        value, Iterable
    ):
        kind = kind_of(value)
        hint = "; put one context in a list" if kind in ("a string", "a Document") else ""
        problem = f"holds {kind}, expected {TEXTS}{hint}"
        raise InvalidSampleError(metric, "retrieved_contexts", problem)
    contexts = [as_context(item) for item in value]
    if len(contexts) > max_contexts:
        raise InvalidSampleError(
            metric,
            "retrieved_contexts",
            f"has {len(contexts):,} contexts, over the limit of {max_contexts:,} "
            "(max_contexts); pass the ones retrieved for this answer, or raise max_contexts",
        )
    return contexts


def _check_contexts(metric: str, value: Any, max_chars: int, max_contexts: int) -> list[str]:
    field = "retrieved_contexts"
    if value is None:
        raise InvalidSampleError(metric, field, "is required but missing")
    contexts = _context_list(metric, value, max_contexts)
    if not contexts:
        raise InvalidSampleError(metric, field, "is an empty list")
    for position, context in enumerate(contexts):
        _check_text(metric, f"{field}[{position}]", context, max_chars)
    return contexts


def to_sample(
    metric: str,
    value: Any,
    *,
    required: Iterable[SampleField],
    max_chars: int = DEFAULT_MAX_INPUT_CHARS,
    max_contexts: int = DEFAULT_MAX_CONTEXTS,
) -> Sample:
    """Validate ``value`` for ``metric`` and return a :class:`Sample`.

    Every text given (required or not) must be valid Unicode and at most ``max_chars``
    long; a required one must also have something visible. ``retrieved_contexts`` must
    be a list (not a dict or a set) of at most ``max_contexts`` texts or LangChain
    ``Document`` objects (what a retriever returns: their ``page_content`` is the context).

    Raises :class:`InvalidSampleError` naming the metric and the field, before any model
    is called.
    """
    if isinstance(value, Sample):
        raw: dict[str, Any] = {name: getattr(value, name) for name in SAMPLE_FIELDS}
    elif isinstance(value, Mapping):
        unknown = (
            []
            if isinstance(value, RowFields)
            else sorted(str(key) for key in value if key not in SAMPLE_FIELDS)
        )
        if unknown:
            raise InvalidSampleError(
                metric,
                unknown[0],
                f"is not a sample field (expected one of {', '.join(SAMPLE_FIELDS)}); "
                "for a chain's output or a row named otherwise (question, answer, context "
                "...), put SampleMapping.for_rows().as_runnable() before the metric: "
                "chain | SampleMapping.for_rows().as_runnable() | metric",
            )
        raw = {name: value.get(name) for name in SAMPLE_FIELDS}
    else:
        raise InvalidSampleError(
            metric,
            "sample",
            f"must be a Sample or a dict, got {type(value).__name__}",
        )

    required = set(required)
    checked: dict[str, Any] = {}
    for name in SAMPLE_FIELDS:
        field_value = raw[name]
        if name not in required and field_value is None:
            continue
        if name == "retrieved_contexts":
            if name in required:
                checked[name] = _check_contexts(metric, field_value, max_chars, max_contexts)
            elif field_value is not None:
                # Not used by this metric: only a string or a scalar is refused (a string
                # would otherwise become one context per character).
                checked[name] = [
                    _check_content(metric, f"{name}[{position}]", str(context), max_chars)
                    for position, context in enumerate(
                        _context_list(metric, field_value, max_contexts)
                    )
                ]
        elif name in required:
            checked[name] = _check_text(metric, name, field_value, max_chars)
        elif isinstance(field_value, str):
            checked[name] = _check_content(metric, name, field_value, max_chars)
        else:
            raise InvalidSampleError(metric, name, f"holds {kind_of(field_value)}, expected text")
    return Sample(**checked)


MessagesSample = TypeVar("MessagesSample", bound=Sample)


def check_messages_sample(
    sample_class: type[MessagesSample],
    metric: str,
    value: Any,
    *,
    fields: Sequence[str],
    also: Sequence[str] = (),
    kind: str,
    holds: str,
    read: Callable[[Mapping[str, Any]], MessagesSample],
) -> MessagesSample:
    """``value`` as a sample read from messages (an ``AgentSample``, a
    ``ConversationSample``) for ``metric``, refused before any request with
    :class:`InvalidSampleError` naming the field.

    ``value`` is a ``sample_class``, a dict of its ``fields`` (``also``: other keys it
    accepts; any other key is refused, as a likely typo) or a dataset row the runner
    mapped (:class:`RowFields`: its other fields are ignored). A mapping needs
    ``messages``; ``read`` makes the sample of it. ``kind`` names the sample in words
    ("an agent sample"), ``holds`` what a plain :class:`Sample` lacks ("trajectory").

    Example:
        >>> check_messages_sample(AgentSample, "trajectory_match", {"mesages": []},
        ...     fields=AGENT_FIELDS, kind="an agent sample", holds="trajectory", read=read)
        InvalidSampleError: trajectory_match: field 'mesages' is not a field of an agent sample ...
    """
    if isinstance(value, sample_class):
        return value
    name = sample_class.__name__
    article = "an" if name[:1] in "AEIOU" else "a"
    if isinstance(value, Mapping):
        if not isinstance(value, RowFields):
            unknown = sorted(str(key) for key in value if key not in (*fields, *also))
            if unknown:
                raise InvalidSampleError(
                    metric,
                    unknown[0],
                    f"is not a field of {kind} (expected one of {', '.join(fields)})",
                )
        if value.get("messages") is None:
            raise InvalidSampleError(metric, "messages", "is required but missing")
        return read(value)
    if isinstance(value, Sample):
        raise InvalidSampleError(
            metric,
            "messages",
            f"is required but missing (a Sample has no {holds}; give {article} {name} or a "
            "dict with messages)",
        )
    raise InvalidSampleError(
        metric, "sample", f"must be {article} {name} or a dict, got {type(value).__name__}"
    )
