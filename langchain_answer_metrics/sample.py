"""The input every metric scores: one question, answer, reference and contexts.

    >>> Sample(response="Paris is the capital of France.", reference="Paris.")
    Sample(user_input=None, response='Paris is the capital of France.', ...)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

SampleField = Literal["user_input", "response", "reference", "retrieved_contexts"]
SAMPLE_FIELDS: tuple[SampleField, ...] = (
    "user_input",
    "response",
    "reference",
    "retrieved_contexts",
)


class Sample(BaseModel):
    """One row to score. Which fields are required depends on the metric."""

    model_config = ConfigDict(frozen=True)

    user_input: str | None = None
    response: str | None = None
    reference: str | None = None
    retrieved_contexts: list[str] | None = None

    def __repr__(self) -> str:
        # Long judged texts would flood logs and tracebacks; keep the repr short.
        def short(value: Any) -> str:
            text = repr(value)
            return text if len(text) <= 80 else text[:77] + "...'"

        fields = ", ".join(f"{name}={short(getattr(self, name))}" for name in SAMPLE_FIELDS)
        return f"Sample({fields})"


SampleLike = Sample | Mapping[str, Any]


class InvalidSampleError(ValueError):
    """A sample field is missing, empty or of the wrong type for a metric."""

    def __init__(self, metric: str, field: str, problem: str) -> None:
        self.metric = metric
        self.field = field
        self.problem = problem
        super().__init__(f"{metric}: field '{field}' {problem}")


# Whitespace plus the zero-width characters str.strip() keeps: a text of only these has
# nothing a judge could read.
_INVISIBLE = "".join(
    chr(code) for code in range(0x110000) if chr(code).isspace()
) + "\u200b\u200c\u200d\u2060\ufeff"


def _check_text(metric: str, field: str, value: Any) -> str:
    if value is None:
        raise InvalidSampleError(metric, field, "is required but missing")
    if not isinstance(value, str):
        raise InvalidSampleError(
            metric, field, f"must be a string, got {type(value).__name__}"
        )
    if not value.strip(_INVISIBLE):
        raise InvalidSampleError(metric, field, "is empty or has only whitespace")
    return value


def _context_list(metric: str, value: Any) -> list[Any]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InvalidSampleError(
            metric, "retrieved_contexts", f"must be a list of strings, got {type(value).__name__}"
        )
    return list(value)


def _check_contexts(metric: str, value: Any) -> list[str]:
    field = "retrieved_contexts"
    if value is None:
        raise InvalidSampleError(metric, field, "is required but missing")
    contexts = _context_list(metric, value)
    if not contexts:
        raise InvalidSampleError(metric, field, "is an empty list")
    for position, context in enumerate(contexts):
        _check_text(metric, f"{field}[{position}]", context)
    return contexts


def to_sample(
    metric: str,
    value: Any,
    *,
    required: Iterable[SampleField],
) -> Sample:
    """Validate ``value`` for ``metric`` and return a :class:`Sample`.

    Raises :class:`InvalidSampleError` naming the metric and the field, before any model
    is called.
    """
    if isinstance(value, Sample):
        raw: dict[str, Any] = {name: getattr(value, name) for name in SAMPLE_FIELDS}
    elif isinstance(value, Mapping):
        unknown = sorted(str(key) for key in value if key not in SAMPLE_FIELDS)
        if unknown:
            raise InvalidSampleError(
                metric,
                unknown[0],
                f"is not a sample field (expected one of {', '.join(SAMPLE_FIELDS)})",
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
                checked[name] = _check_contexts(metric, field_value)
            elif field_value is not None:
                # Not used by this metric: only a string or a scalar is refused (a string
                # would otherwise become one context per character).
                checked[name] = [str(context) for context in _context_list(metric, field_value)]
        elif name in required:
            checked[name] = _check_text(metric, name, field_value)
        elif isinstance(field_value, str):
            checked[name] = field_value
        else:
            raise InvalidSampleError(
                metric, name, f"must be a string, got {type(field_value).__name__}"
            )
    return Sample(**checked)
