"""Find the fields of a :class:`Sample` in the data a metric is given.

A LangSmith run and example, a chain's output or a dataset row hold the question, answer,
reference and contexts under keys of their own choosing; a :class:`SampleMapping` says where
each field lives: a default *rule* per field (source and keys) that an *override* (a key
name or a callable) replaces. Values get the field's type on the way, one reading for every face
(:mod:`~langchain_answer_metrics.mapping.cells`: a ``Document`` its ``page_content``, a
message its text, one context a one-item list, a text holding a JSON list that list); a
required field not found raises :class:`MissingFieldError`, listing every key seen.
Nothing here knows LangSmith, so the CLI and dataset loaders map columns with the same
code (``for_rows``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from langchain_answer_metrics.core.sample import (
    SAMPLE_FIELDS,
    InvalidSampleError,
    RowFields,
    Sample,
    SampleField,
)
from langchain_answer_metrics.core.sample import as_contexts as as_contexts
from langchain_answer_metrics.core.sample import as_text as as_text
from langchain_answer_metrics.core.strict_options import (
    check_options,
    closest_name,
    reject_unknown_fields,
)
from langchain_answer_metrics.mapping.cells import JSONTooDeepError, as_field_type, cell_value
from langchain_answer_metrics.mapping.lookup import (
    AGENT_LANGSMITH_RULES,
    AGENT_ROW_FIELDS,
    AGENT_ROW_RULES,
    LANGSMITH_RULES,
    PAIR_FIELDS,
    PAIR_ROW_RULES,
    ROW_FIELDS,
    ROW_RULES,
    ROW_SOURCE,
    Ambiguous,
    FieldGetter,
    FieldRule,
    FieldSpec,
    NotFound,
    RowField,
    by_key,
    by_rule,
    call_getter,
    keys_of,
)

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable


def _rules(rules: Mapping[SampleField, FieldRule]) -> dict[RowField, FieldRule]:
    return {**{field: rule for field, rule in rules.items()}, **AGENT_LANGSMITH_RULES}


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

    rules: dict[RowField, FieldRule] = Field(default_factory=lambda: _rules(LANGSMITH_RULES))
    overrides: dict[RowField, FieldSpec] = Field(default_factory=dict)

    @field_validator("overrides", mode="before")
    @classmethod
    def _known_fields(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            unknown = sorted(str(name) for name in value if name not in ROW_FIELDS)
            if unknown:
                meant = closest_name(unknown[0], ROW_FIELDS)
                raise ValueError(
                    f"unknown sample field(s) {', '.join(unknown)}: "
                    f"map one of {', '.join(ROW_FIELDS)}"
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
        fields = (*SAMPLE_FIELDS, *AGENT_ROW_FIELDS)
        check_options(f"{cls.__name__}.for_langsmith", overrides, fields)
        return cls(rules=_rules(LANGSMITH_RULES), overrides=overrides)

    @classmethod
    def for_rows(cls, **overrides: FieldSpec) -> SampleMapping:
        """Defaults for one flat dict (see :data:`ROW_RULES`, and :data:`PAIR_ROW_RULES`
        for a pair's ``response_a`` and ``response_b``) with ``overrides``."""
        check_options(f"{cls.__name__}.for_rows", overrides, ROW_FIELDS)
        return cls(rules={**ROW_RULES, **PAIR_ROW_RULES, **AGENT_ROW_RULES}, overrides=overrides)

    def resolve(
        self,
        sources: Mapping[str, Any],
        *,
        required: Iterable[RowField] = (),
        metric: str = "sample",
        extras: Mapping[str, Any] | None = None,
        model: type[Sample] = Sample,
    ) -> Sample:
        """Build a :class:`Sample` (or ``model``, a subclass such as a
        :class:`~langchain_answer_metrics.metrics.pairwise.PairSample`) from ``sources``
        (source name -> dict or value).

        A ``required`` field (and a field ``model`` requires) that is missing or of the
        wrong kind raises :class:`MissingFieldError` / :class:`InvalidSampleError` naming
        ``metric``; other fields are filled when they can be and left empty otherwise, so
        an unusual input the metric does not need never fails the row. ``extras`` (e.g.
        LangSmith's ``run`` and ``example``) are handed to callables that name them, never
        searched or listed.
        """
        needed: set[RowField] = set(required)
        needed.update(f for f in ROW_FIELDS if (i := model.model_fields.get(f)) and i.is_required())
        values = self._found(sources, needed, metric, extras or {}, keep_raw=False)
        return model(**values)

    def fields_of(self, row: Any, *, coerce: bool = True, metric: str = "sample") -> RowFields:
        """The fields found in one flat dict, under their :class:`Sample` names (and a
        pair's ``response_a`` and ``response_b``), for every metric of a run: each reads
        the ones it scores (see :class:`~langchain_answer_metrics.core.sample.RowFields`).

        Each value is read as its field's type, as by :meth:`from_row` (a number is text,
        one context a list of one, a text holding a JSON list that list); one that cannot
        be is kept as found, so the metric that needs it refuses the row naming the field
        and what it holds ("holds a number, expected texts"): where a value is found, and
        how it is read, is the mapping's job; whether it will do, the metric's. With
        ``coerce=False`` every value is kept as found.

        Raises:
            AmbiguousFieldError: the row holds a field under two names, with different values.
            InvalidSampleError: a value holds JSON nested too deeply to read.
        """
        return self.found_fields({ROW_SOURCE: row}, coerce=coerce, metric=metric)

    def agent_fields(self, row: Any) -> dict[str, Any] | None:
        """An agent's messages and expected calls in one flat dict, as found (None: no
        such field): what the CLI's rows carry beside their :class:`Sample`."""
        found = self.fields_of(row)
        return {name: found[name] for name in AGENT_ROW_FIELDS if name in found} or None

    def found_fields(
        self,
        sources: Mapping[str, Any],
        *,
        coerce: bool = True,
        metric: str = "sample",
        extras: Mapping[str, Any] | None = None,
    ) -> RowFields:
        """:meth:`fields_of` on any sources (a LangSmith run's ``outputs`` and its
        example's): what a metric that reads more than a :class:`Sample`'s fields (an
        agent's ``messages``) checks itself."""
        found = self._found(sources, set(), metric, extras or {}, keep_raw=True, coerce=coerce)
        return RowFields({str(field): value for field, value in found.items()})

    def read_row(self, row: Any, *, metric: str = "sample") -> tuple[Sample, dict[str, Any]]:
        """One flat dict as :meth:`fields_of` reads it, split in two: the :class:`Sample`
        of the fields that could be read, and the fields found that could not be (as
        found), for a metric that needs one to refuse the row naming what it holds.

        Example:
            >>> SampleMapping.for_rows().read_row({"answer": "A.", "contexts": 5})
            (Sample(user_input=None, response='A.', ...), {'retrieved_contexts': 5})
        """
        unreadable: dict[str, Any] = {}
        found = self._found(
            {ROW_SOURCE: row}, set(), metric, {}, keep_raw=False, unreadable=unreadable
        )
        sample = Sample(**{name: found[name] for name in SAMPLE_FIELDS if name in found})
        return sample, unreadable

    def _found(
        self,
        sources: Mapping[str, Any],
        required: set[RowField],
        metric: str,
        extras: Mapping[str, Any],
        *,
        keep_raw: bool,
        coerce: bool = True,
        unreadable: dict[str, Any] | None = None,
    ) -> dict[RowField, Any]:
        values: dict[RowField, Any] = {}
        for field in ROW_FIELDS:
            try:
                raw = self._raw_value(field, sources, extras)
            except NotFound as missing:
                if field in required:
                    seen = {name: keys_of(value) for name, value in sources.items()}
                    raise MissingFieldError(metric, field, missing.looked_for, seen) from None
                continue
            except Ambiguous as ambiguous:
                raise AmbiguousFieldError(metric, field, ambiguous.keys) from None
            if raw is None:
                if field in required:
                    raise InvalidSampleError(metric, field, "is required but its value is None")
                continue
            if not coerce:
                values[field] = raw
                continue
            try:
                raw = cell_value(field, raw)  # a text holding a JSON list is that list
            except JSONTooDeepError as error:
                raise InvalidSampleError(metric, field, f"holds {error}") from None
            try:
                values[field] = as_field_type(field, raw)
            except TypeError as error:
                if field in required:
                    raise InvalidSampleError(metric, field, str(error)) from None
                if keep_raw:
                    values[field] = raw
                if unreadable is not None:
                    unreadable[field] = raw
        return values

    def from_row(
        self,
        row: Any,
        *,
        required: Iterable[RowField] = (),
        metric: str = "sample",
        model: type[Sample] = Sample,
    ) -> Sample:
        """:meth:`resolve` on one flat dict (the source named ``row``).

        Example:
            >>> SampleMapping.for_rows(response_a="gpt", response_b="claude").from_row(
            ...     {"question": "2+2?", "gpt": "4", "claude": "5"}, model=PairSample)
            PairSample(user_input='2+2?', response_a='4', response_b='5', reference=None)
        """
        return self.resolve({ROW_SOURCE: row}, required=required, metric=metric, model=model)

    def as_runnable(
        self, *, required: Iterable[SampleField] = (), name: str = "to_sample"
    ) -> Runnable[Any, Sample]:
        """A Runnable from a chain's output to a Sample: ``chain | to_sample | metric``.

        A :class:`Sample` passes through unchanged; anything else is read as one row.
        """
        from langchain_core.runnables import RunnableLambda  # loaded only for chains

        required = tuple(required)

        def to_sample(value: Any) -> Sample:
            if isinstance(value, Sample):
                return value
            return self.from_row(value, required=required)

        return RunnableLambda(to_sample, name=name)

    def _raw_value(
        self, field: RowField, sources: Mapping[str, Any], extras: Mapping[str, Any]
    ) -> Any:
        rule = self.rules.get(field)
        spec = self.overrides.get(field)
        if spec is not None:
            default_source = rule.source if rule is not None else None
            if callable(spec):
                return call_getter(spec, {**extras, **sources}, default_source)
            return by_key(spec, sources, default_source)
        if rule is None:
            raise NotFound("nothing (no rule or override for this field)")
        return by_rule(rule, sources)


__all__ = [
    "LANGSMITH_RULES",
    "PAIR_FIELDS",
    "PAIR_ROW_RULES",
    "ROW_FIELDS",
    "ROW_RULES",
    "ROW_SOURCE",
    "AmbiguousFieldError",
    "FieldGetter",
    "FieldRule",
    "FieldSpec",
    "MissingFieldError",
    "SampleMapping",
    "as_contexts",
    "as_text",
]
