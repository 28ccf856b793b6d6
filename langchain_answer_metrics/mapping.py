"""Find the fields of a :class:`Sample` in the data a metric is given.

A LangSmith run and example, a chain's output or a dataset row hold the question, answer,
reference and contexts under keys of their own choosing; a :class:`SampleMapping` says where
each field lives: a default *rule* per field (source and keys) that an *override* (a key
name or a callable) replaces. Values get the field's type on the way (a ``Document`` its
``page_content``, a message its text, one context a one-item list); a required field not
found raises :class:`MissingFieldError`, listing every key seen. Nothing here knows
LangSmith, so the CLI and dataset loaders map columns with the same code (``for_rows``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field, field_validator

from langchain_answer_metrics.sample import (
    SAMPLE_FIELDS,
    InvalidSampleError,
    Sample,
    SampleField,
)
from langchain_answer_metrics.sample import as_contexts as as_contexts
from langchain_answer_metrics.sample import as_text as as_text
from langchain_answer_metrics.strict_options import (
    check_options,
    closest_name,
    reject_unknown_fields,
)

FieldGetter = Callable[..., Any]
FieldSpec = str | FieldGetter
"""An override: a key name or a callable.

A key is looked up in the field's default source, unless it starts with a source's name
(``"outputs.docs"``); a dotted key that is not itself a key walks nested dicts and lists
(``"result.text"``, ``"documents.0"``). A callable's parameters are filled by name from
the sources (``inputs``, ``outputs``, ``reference_outputs``, ``row``) and extras (``run``,
``example``); a single parameter with another name receives the field's default source."""

ROW_SOURCE = "row"


class FieldRule(BaseModel):
    """Where a field is found by default: the first of ``keys`` present in ``source``.

    With ``single_value``, a source holding exactly one value (or a bare, non-dict value)
    gives that value when none of the keys is present. With ``exclusive``, two of the keys
    present with different values is an error (:class:`AmbiguousFieldError`); otherwise
    the first present wins.
    """

    model_config = ConfigDict(frozen=True)

    source: str
    keys: tuple[str, ...]
    single_value: bool = False
    exclusive: bool = False


LANGSMITH_RULES: dict[SampleField, FieldRule] = {
    "user_input": FieldRule(
        source="inputs", keys=("question", "input", "query", "user_input"), single_value=True
    ),
    "response": FieldRule(
        source="outputs", keys=("output", "answer", "response"), single_value=True
    ),
    "reference": FieldRule(
        source="reference_outputs", keys=("answer", "reference", "expected", "ground_truth")
    ),
    "retrieved_contexts": FieldRule(
        source="outputs", keys=("contexts", "retrieved_contexts", "documents", "context")
    ),
}
"""Defaults for a LangSmith run (``inputs``, ``outputs``) and example (``reference_outputs``)."""

# In one flat row (a chain's output dict, a CSV line) "answer" is the response, so the
# reference is looked up only under names that cannot mean the model's own answer. A row
# is data the user wrote: two columns for one field (``answer`` and ``response`` that
# differ) is a mistake to point out, not a choice to make silently.
ROW_RULES: dict[SampleField, FieldRule] = {
    field: FieldRule(source=ROW_SOURCE, keys=keys, single_value=field == "response",
                     exclusive=True)
    for field, keys in zip(SAMPLE_FIELDS, (  # user_input, response, reference, contexts
        ("user_input", "question", "input", "query"),
        ("response", "answer", "output"),
        ("reference", "ground_truth", "expected", "expected_answer"),
        ("retrieved_contexts", "contexts", "documents", "context"),
    ))
}  # fmt: skip
"""Defaults for one flat dict: a chain's output, or a row of a dataset, a DataFrame or
the runner's input. The one table of column names every face reads rows with."""


class MissingFieldError(InvalidSampleError):
    """A required field was not found; ``seen`` lists the keys of every source.

    Args:
        metric: the metric that needed the field.
        field: the :class:`Sample` field that was not found.
        looked_for: where it was looked for (kept as ``.looked_for``).
        seen: per source, the keys it holds (kept as ``.seen``).

    Example:
        >>> SampleMapping.for_rows().from_row({"answer": "A."}, required=["reference"])
        MissingFieldError: sample: field 'reference' was not found: looked for 'reference' or ...
    """

    def __init__(self, metric: str, field: str, looked_for: str, seen: dict[str, list[str]]):
        self.looked_for = looked_for
        self.seen = seen
        listing = "; ".join(f"{source}: {keys}" for source, keys in seen.items()) or "nothing"
        super().__init__(
            metric,
            field,
            f"was not found: looked for {looked_for}. Keys seen: {listing}. "
            f"Pass {field}=<key or callable> to say where it is.",
        )


class AmbiguousFieldError(InvalidSampleError):
    """A row holds one field under two of its names, with different values."""

    def __init__(self, metric: str, field: str, keys: Sequence[str]) -> None:
        self.keys = tuple(keys)
        named = " and ".join(repr(key) for key in keys)
        super().__init__(
            metric,
            field,
            f"is ambiguous: the row has both {named}, with different values; keep one, "
            f"or say which holds it ({field}=<key>)",
        )


def _coerce(field: SampleField, value: Any) -> Any:
    return as_contexts(value) if field == "retrieved_contexts" else as_text(value)


class _NotFound(Exception):
    def __init__(self, looked_for: str) -> None:
        self.looked_for = looked_for


class _Ambiguous(Exception):
    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = keys


def _lookup(container: Any, key: str) -> Any:
    """``container[key]``, else a dotted path into nested dicts and lists
    (``"result.answer"``, ``"documents.0"``)."""
    if not isinstance(container, Mapping):
        raise KeyError(key)
    if key in container:
        return container[key]
    value: Any = container
    for part in key.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, Sequence) and not isinstance(value, str):
            try:
                value = value[int(part)]
            except (ValueError, IndexError):
                raise KeyError(key) from None
        else:
            raise KeyError(key)
    return value


def _keys_of(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [str(key) for key in value]
    if value is None:
        return []
    return [f"<{type(value).__name__} value>"]


class SampleMapping(BaseModel):
    """Where each :class:`Sample` field lives in a set of named sources.

    Build one with :meth:`for_langsmith` (sources ``inputs``, ``outputs``,
    ``reference_outputs``) or :meth:`for_rows` (one flat dict, source ``row``).

    Attributes:
        rules: per field, where it is found by default (a ``FieldRule``).
        overrides: per field, a key name or a callable (``FieldSpec``) replacing its rule.

    Raises:
        pydantic.ValidationError: an override for an unknown field, or neither key nor callable.

    Example:
        >>> mapping = SampleMapping.for_langsmith(response=lambda outputs: outputs["msgs"][-1])
        >>> mapping.resolve({"outputs": {"msgs": ["Hi", "A."]}}, required=["response"]).response
        'A.'
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    _reject_unknown = reject_unknown_fields()

    rules: dict[SampleField, FieldRule] = Field(default_factory=lambda: dict(LANGSMITH_RULES))
    overrides: dict[SampleField, FieldSpec] = Field(default_factory=dict)

    @field_validator("overrides", mode="before")
    @classmethod
    def _known_fields(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            unknown = sorted(str(name) for name in value if name not in SAMPLE_FIELDS)
            if unknown:
                meant = closest_name(unknown[0], SAMPLE_FIELDS)
                raise ValueError(
                    f"unknown sample field(s) {', '.join(unknown)}: "
                    f"map one of {', '.join(SAMPLE_FIELDS)}"
                    + (f" (did you mean {meant}?)" if meant else "")
                )
            for name, spec in value.items():
                if not (isinstance(spec, str) and spec) and not callable(spec):
                    raise ValueError(
                        f"{name}= must be a key name or a callable, got {type(spec).__name__}"
                    )
        return value

    @classmethod
    def for_langsmith(cls, **overrides: FieldSpec) -> SampleMapping:
        """The LangSmith defaults (see :data:`LANGSMITH_RULES`) with ``overrides``."""
        check_options(f"{cls.__name__}.for_langsmith", overrides, SAMPLE_FIELDS)
        return cls(rules=dict(LANGSMITH_RULES), overrides=overrides)

    @classmethod
    def for_rows(cls, **overrides: FieldSpec) -> SampleMapping:
        """Defaults for one flat dict (see :data:`ROW_RULES`) with ``overrides``."""
        check_options(f"{cls.__name__}.for_rows", overrides, SAMPLE_FIELDS)
        return cls(rules=dict(ROW_RULES), overrides=overrides)

    def resolve(
        self,
        sources: Mapping[str, Any],
        *,
        required: Iterable[SampleField] = (),
        metric: str = "sample",
        extras: Mapping[str, Any] | None = None,
    ) -> Sample:
        """Build a :class:`Sample` from ``sources`` (source name -> dict or value).

        A ``required`` field that is missing or of the wrong kind raises
        :class:`MissingFieldError` / :class:`InvalidSampleError` naming ``metric``; other
        fields are filled when they can be and left empty otherwise, so an unusual input
        the metric does not need never fails the row. ``extras`` (e.g. LangSmith's ``run``
        and ``example``) are handed to callables that name them, never searched or listed.
        """
        values = self._found(sources, set(required), metric, extras or {}, keep_raw=False)
        return Sample(**values)

    def fields_of(
        self, row: Any, *, coerce: bool = False, metric: str = "sample"
    ) -> dict[str, Any]:
        """The fields found in one flat dict, under their :class:`Sample` names.

        Values are kept as they are, for the metric that scores the row to check (as a dict
        given to ``invoke``); with ``coerce``, each is first turned into its type where it
        can be, as by :meth:`from_row` (a table cell: a number, one context as text), but
        one that cannot be is kept, so the metric refuses it naming the field: where a value
        is found is the mapping's job, what it holds the metric's.
        """
        found = self._found({ROW_SOURCE: row}, set(), metric, {}, keep_raw=True, coerce=coerce)
        return {str(field): value for field, value in found.items()}

    def _found(
        self,
        sources: Mapping[str, Any],
        required: set[SampleField],
        metric: str,
        extras: Mapping[str, Any],
        *,
        keep_raw: bool,
        coerce: bool = True,
    ) -> dict[SampleField, Any]:
        values: dict[SampleField, Any] = {}
        for field in SAMPLE_FIELDS:
            try:
                raw = self._raw_value(field, sources, extras)
            except _NotFound as missing:
                if field in required:
                    seen = {name: _keys_of(value) for name, value in sources.items()}
                    raise MissingFieldError(metric, field, missing.looked_for, seen) from None
                continue
            except _Ambiguous as ambiguous:
                raise AmbiguousFieldError(metric, field, ambiguous.keys) from None
            if raw is None:
                if field in required:
                    raise InvalidSampleError(metric, field, "is required but its value is None")
                continue
            if not coerce:
                values[field] = raw
                continue
            try:
                values[field] = _coerce(field, raw)
            except TypeError as error:
                if field in required:
                    raise InvalidSampleError(metric, field, str(error)) from None
                if keep_raw:
                    values[field] = raw
        return values

    def from_row(
        self, row: Any, *, required: Iterable[SampleField] = (), metric: str = "sample"
    ) -> Sample:
        """:meth:`resolve` on one flat dict (the source named ``row``)."""
        return self.resolve({ROW_SOURCE: row}, required=required, metric=metric)

    def as_runnable(
        self, *, required: Iterable[SampleField] = (), name: str = "to_sample"
    ) -> Runnable[Any, Sample]:
        """A Runnable from a chain's output to a Sample: ``chain | to_sample | metric``.

        A :class:`Sample` passes through unchanged; anything else is read as one row.
        """
        required = tuple(required)

        def to_sample(value: Any) -> Sample:
            if isinstance(value, Sample):
                return value
            return self.from_row(value, required=required)

        return RunnableLambda(to_sample, name=name)

    def _raw_value(
        self, field: SampleField, sources: Mapping[str, Any], extras: Mapping[str, Any]
    ) -> Any:
        rule = self.rules.get(field)
        spec = self.overrides.get(field)
        if spec is not None:
            default_source = rule.source if rule is not None else None
            if callable(spec):
                return _call_getter(spec, {**extras, **sources}, default_source)
            return _by_key(spec, sources, default_source)
        if rule is None:
            raise _NotFound("nothing (no rule or override for this field)")
        return _by_rule(rule, sources)


def _by_rule(rule: FieldRule, sources: Mapping[str, Any]) -> Any:
    container = sources.get(rule.source)
    if isinstance(container, Mapping):
        present = [key for key in rule.keys if key in container]
        first = container[present[0]] if present else None
        if rule.exclusive and any(_differ(container[key], first) for key in present):
            raise _Ambiguous(present)
        if present:
            return container[present[0]]
        if rule.single_value and len(container) == 1:
            return next(iter(container.values()))
    elif container is not None and rule.single_value:
        # A bare value (a chain that returns a string) is the field itself.
        return container
    keys = " or ".join(repr(key) for key in rule.keys)
    single = ", or its single value" if rule.single_value else ""
    raise _NotFound(f"{keys} in {rule.source}{single}")


def _differ(first: Any, second: Any) -> bool:
    try:
        return bool(first != second)
    except Exception:  # an array's comparison has no single truth value
        return first is not second


def _by_key(spec: str, sources: Mapping[str, Any], default_source: str | None) -> Any:
    # "outputs.answer" names its source; a plain key is looked up in the field's default one.
    prefix, _, rest = spec.partition(".")
    if rest and prefix in sources:
        source, key = prefix, rest
    elif default_source is not None:
        source, key = default_source, spec
    else:
        raise _NotFound(f"key {spec!r} (name its source, e.g. 'outputs.{spec}')")
    try:
        return _lookup(sources.get(source), key)
    except KeyError:
        raise _NotFound(f"key {key!r} in {source}") from None


def _call_getter(
    getter: FieldGetter, sources: Mapping[str, Any], default_source: str | None
) -> Any:
    try:
        parameters = list(inspect.signature(getter).parameters.values())
    except (TypeError, ValueError):  # builtins without a signature get the default source
        parameters = []
    named = {p.name: sources.get(p.name) for p in parameters if p.name in sources}
    try:
        if named:
            return getter(**named)
        return getter(sources.get(default_source) if default_source else dict(sources))
    except Exception as error:
        # A getter that cannot read this row (KeyError, IndexError ...) is a missing field.
        raise _NotFound(f"a value from the callable, which raised {error!r}") from error
