"""The alignment the tool-call metrics record, each expected call with the call matched to
it or none, and every extra call. It is kept compact, and its models are built when read.

A run keeps every result, and Python's cyclic garbage collector walks every object a
result holds, again and again as the heap grows. An alignment of 20 calls held as
:class:`CallAlignment` and :class:`CallRecord` models is about 190 such objects per
result (measured: the collector then took ~40% of a 10,000-trajectory run;
``benchmarks/agent_trajectories.py``). So the details keep the calls as they were read:
one flat tuple per side of ``(position, group, name, args, arguments_text)`` and the
pairs as indexes, a handful of objects. The models are built when read
(``details.alignment[0]``, iteration) and kept from then on, so the list reads as before.
A dump, a record, the report's view and LangSmith's feedback build none: they are written
from the fields as read, which are the models' dump (an option that leaves fields out,
such as ``exclude_none``, builds the models for the moment and applies their rules). The
dump, the JSON and the ``repr`` are the same as those of the models.

    >>> alignment = TrajectoryMatch(mode="unordered").invoke(sample).details.alignment
    >>> alignment[0].matched
    CallRecord(position=1, group=1, name='get_weather', args={'city': 'Paris'}, ...)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, TypeVar, overload

from pydantic import BaseModel, Field, GetCoreSchemaHandler, SerializationInfo, TypeAdapter
from pydantic_core import core_schema

from langchain_answer_metrics.agents import TrajectoryCall
from langchain_answer_metrics.agents.matching import Pairs
from langchain_answer_metrics.core.result import DetailsModel
from langchain_answer_metrics.metrics.trajectory_view import (
    TrajectoryView,
    render_call,
    side_by_side,
)


class CallRecord(DetailsModel):
    """One call in the details: its place, its name and arguments (or their text)."""

    position: int
    group: int
    name: str
    args: dict[str, Any] | None = None
    arguments_text: str | None = None

    @classmethod
    def of(cls, call: TrajectoryCall) -> CallRecord:
        return cls(
            position=call.position,
            group=call.group,
            name=call.call.name,
            args=call.call.args,
            arguments_text=call.call.arguments_text,
        )

    def render(self) -> str:
        """The call as people read it: ``get_weather(city='Paris')``."""
        return render_call(self.name, self.args, self.arguments_text)


class CallAlignment(DetailsModel):
    """An expected call and the call made that was matched to it (None: no match).
    ``in_order`` (strict mode): whether the pair keeps the order of both trajectories
    (the in-order match, or after its first divergence their longest common run)."""

    expected: CallRecord
    matched: CallRecord | None = None
    in_order: bool | None = None


_RECORD_FIELDS = tuple(CallRecord.model_fields)  # position, group, name, args, arguments_text
_WIDTH = len(_RECORD_FIELDS)
FlatCalls = tuple[Any, ...]
"""Calls side by side in one tuple, :data:`_WIDTH` items each, in :class:`CallRecord`'s
field order: one object for the collector to walk, not three per call."""


def flat_calls(calls: Sequence[TrajectoryCall]) -> FlatCalls:
    """``calls`` as :data:`FlatCalls` (their arguments are the same dicts, not copies)."""
    flat: list[Any] = []
    for call in calls:
        made = call.call
        flat += (call.position, call.group, made.name, made.args, made.arguments_text)
    return tuple(flat)


def _record_fields(calls: FlatCalls, index: int) -> dict[str, Any]:
    start = index * _WIDTH
    return dict(zip(_RECORD_FIELDS, calls[start : start + _WIDTH]))


_Model = TypeVar("_Model", bound=BaseModel)
_ALIGNMENT = TypeAdapter(list[CallAlignment])
_RECORDS = TypeAdapter(list[CallRecord])


def _has_options(info: SerializationInfo) -> bool:
    """Whether a dump asks for more than its mode (``include``, ``exclude``,
    ``exclude_none``, ``by_alias``, ...): the models' own serializer then writes it."""
    return bool(
        info.include
        or info.exclude
        or info.exclude_none
        or info.exclude_defaults
        or info.exclude_unset
        or info.by_alias
        or info.round_trip
    )


class _BuiltWhenRead(Sequence[_Model]):
    """A list of details models kept as the calls they come from, built when read.

    Reading an item or iterating builds the models once and keeps them (a list, from then
    on: the same objects each time, changes to them kept). Until then a dump writes the
    models' fields as read (:meth:`_fields`: the models' dump, which
    tests/test_call_alignment.py pins to theirs), and ``==`` and ``repr`` build the models
    for the moment only. Loaded from JSON or given as models, it holds the models from the
    start.
    """

    __slots__ = ("_models",)
    _models_type: ClassVar[Any]  # what it reads as: list[<the model>]
    _adapter: ClassVar[TypeAdapter[Any]]  # a TypeAdapter of _models_type

    def __init__(self, models: list[_Model] | None = None) -> None:
        self._models = models

    def _fields(self) -> list[dict[str, Any]]:
        """Each model's fields as plain values, from the calls (a subclass's compact
        form), key order included: what the models are built from, and their dump."""
        raise NotImplementedError

    def _count(self) -> int:
        raise NotImplementedError

    def _build(self) -> list[_Model]:
        return self._adapter.validate_python(self._fields())

    def _current(self) -> list[_Model]:
        return self._models if self._models is not None else self._build()

    def _kept(self) -> list[_Model]:
        if self._models is None:
            self._models = self._build()
        return self._models

    def _plain(self) -> list[dict[str, Any]]:
        """Each item's fields as plain values, read from the calls while the models are
        not built (a python dump's values, sharing the arguments' dicts: read them, do not
        change them)."""
        if self._models is None:
            return self._fields()
        return self._adapter.dump_python(self._models)

    @overload
    def __getitem__(self, index: int) -> _Model: ...

    @overload
    def __getitem__(self, index: slice) -> list[_Model]: ...

    def __getitem__(self, index: int | slice) -> _Model | list[_Model]:
        return self._kept()[index]

    def __iter__(self) -> Iterator[_Model]:
        return iter(self._kept())

    def __len__(self) -> int:
        return len(self._models) if self._models is not None else self._count()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _BuiltWhenRead):
            return self._current() == other._current()
        if isinstance(other, Sequence) and not isinstance(other, (str, bytes)):
            return self._current() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a list's: mutable, not hashable

    def __repr__(self) -> str:
        return repr(self._current())

    @classmethod
    def _validated(cls, value: Any, models: Callable[[Any], list[Any]]) -> Any:
        if isinstance(value, cls):
            return value
        return cls(models(value))

    @classmethod
    def _dumped(
        cls,
        value: Any,
        models: core_schema.SerializerFunctionWrapHandler,
        info: SerializationInfo,
    ) -> Any:
        """The models' dump: the fields as read while they are not built (no model made),
        unless the dump has options; else the models' (built for the moment if need be)."""
        if not isinstance(value, _BuiltWhenRead):
            return models(value)
        if value._models is None and not _has_options(info):
            # Written as plain values are: as the models write these fields (int, str,
            # None; the arguments as their `Any` field does).
            return value._fields()
        return models(value._current())

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """Validated as the list of models it reads as (kept as it is when it is one of
        these already), and dumped as that list: the same dump and JSON schema."""
        models = handler.generate_schema(cls._models_type)
        return core_schema.no_info_wrap_validator_function(
            cls._validated,
            models,
            serialization=core_schema.wrap_serializer_function_ser_schema(
                cls._dumped, schema=models, info_arg=True
            ),
        )


class CallAlignments(_BuiltWhenRead[CallAlignment]):
    """``details.alignment``: each expected call with the call matched to it (or None), in
    the expected order. Reads as a ``list[CallAlignment]`` (index, iterate, ``len``,
    ``==`` with a list); the models are built when first read.

    Example:
        >>> details = TrajectoryMatch(mode="strict").invoke(sample).details
        >>> [(pair.expected.render(), pair.in_order) for pair in details.alignment]
        [("get_weather(city='Paris')", False), ("get_weather(city='Lyon')", True)]
        >>> details.alignment == [pair.model_dump() for pair in details.alignment]
        True
    """

    __slots__ = ("_expected", "_in_order", "_made", "_matched")
    _models_type = list[CallAlignment]
    _adapter = _ALIGNMENT

    def __init__(
        self,
        models: list[CallAlignment] | None = None,
        *,
        expected: FlatCalls = (),
        made: FlatCalls = (),
        matched: tuple[int | None, ...] = (),
        in_order: tuple[bool | None, ...] | None = None,
    ) -> None:
        super().__init__(models)
        self._expected, self._made = expected, made
        self._matched, self._in_order = matched, in_order

    def _count(self) -> int:
        return len(self._matched)

    def _fields(self) -> list[dict[str, Any]]:
        made, in_order = self._made, self._in_order
        return [
            {
                "expected": _record_fields(self._expected, index),
                "matched": None if partner is None else _record_fields(made, partner),
                "in_order": None if in_order is None or partner is None else in_order[index],
            }
            for index, partner in enumerate(self._matched)
        ]


class ExtraCalls(_BuiltWhenRead[CallRecord]):
    """``details.extra``: the calls made that were matched to no expected call, in the
    order they were made. Reads as a ``list[CallRecord]``; built when first read.

    Example:
        >>> [call.render() for call in ToolCallF1().invoke(sample).details.extra]
        ["search(query='hotels in Paris')"]
    """

    __slots__ = ("_made", "_matched")
    _models_type = list[CallRecord]
    _adapter = _RECORDS

    def __init__(
        self,
        models: list[CallRecord] | None = None,
        *,
        made: FlatCalls = (),
        matched: tuple[int | None, ...] = (),
    ) -> None:
        super().__init__(models)
        self._made, self._matched = made, matched

    def _unmatched(self) -> list[int]:
        used = set(self._matched)
        return [index for index in range(len(self._made) // _WIDTH) if index not in used]

    def _count(self) -> int:
        return len(self._unmatched())

    def _fields(self) -> list[dict[str, Any]]:
        return [_record_fields(self._made, index) for index in self._unmatched()]


def aligned_calls(
    actual: Sequence[TrajectoryCall],
    expected: Sequence[TrajectoryCall],
    pairs: Pairs,
    in_order: set[int] | None = None,
) -> dict[str, Any]:
    """The details' ``alignment`` (each expected call with its match, or none) and
    ``extra`` (the calls made matched to none), as fields of an :class:`AlignedDetails`;
    ``in_order``: the expected calls whose pair keeps both orders (strict mode)."""
    made, wanted = flat_calls(actual), flat_calls(expected)
    matched = tuple(pairs.get(index) for index in range(len(expected)))
    ordered = (
        None if in_order is None else tuple(index in in_order for index in range(len(expected)))
    )
    return {
        "alignment": CallAlignments(expected=wanted, made=made, matched=matched, in_order=ordered),
        "extra": ExtraCalls(made=made, matched=matched),
    }


def _plain_of(value: Any, adapter: TypeAdapter[Any]) -> list[dict[str, Any]]:
    """An alignment's or extra calls' fields as plain values (a list of models set on the
    details by hand is dumped)."""
    if isinstance(value, _BuiltWhenRead):
        return value._plain()
    return adapter.dump_python(value)


class AlignedDetails(DetailsModel):
    """What the tool-call metrics' details share: the alignment and the extra calls.

    Attributes:
        alignment: each expected call with the call matched to it, or None
            (:class:`CallAlignments`, read as a ``list[CallAlignment]``).
        extra: the calls made matched to none (:class:`ExtraCalls`, read as a
            ``list[CallRecord]``).
    """

    alignment: CallAlignments = Field(default_factory=CallAlignments)
    extra: ExtraCalls = Field(default_factory=ExtraCalls)

    def trajectory_view(self) -> TrajectoryView:
        """Both trajectories side by side, each call marked matched or not (built from
        the calls as read: no model of the alignment is made)."""
        return side_by_side(_plain_of(self.alignment, _ALIGNMENT), _plain_of(self.extra, _RECORDS))
