"""The report's view of a tool-call metric's alignment: the expected calls and the calls
made, each in order, side by side, each marked matched, out of order or unmatched.

It is built from the alignment's fields as plain values (each call's ``position``,
``group``, ``name``, ``args`` and ``arguments_text``), what the compact alignment holds,
so writing a record or a report builds none of the alignment's models
(:mod:`~langchain_answer_metrics.metrics.call_alignment`).

    >>> view = TrajectoryMatch(mode="unordered").invoke(sample).details.trajectory_view()
    >>> [(cell.call, cell.status, cell.partner) for cell in view.made]
    [("search(q='paris')", 'unmatched', None), ("get_weather(city='Paris')", 'matched', 1)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

CallStatus = Literal["matched", "out_of_order", "unmatched"]


class CallCell(BaseModel):
    """One call of a trajectory shown beside the other: ``status`` says whether it was
    matched (``out_of_order``: matched, but not in the in-order match of strict mode),
    ``partner`` the 1-based position of its match on the other side."""

    call: str
    group: int
    status: CallStatus
    partner: int | None = None


class TrajectoryView(BaseModel):
    """The expected calls and the calls made, each in order, side by side: what the report
    shows for a tool-call metric (``--out`` records keep it)."""

    expected: list[CallCell] = Field(default_factory=list)
    made: list[CallCell] = Field(default_factory=list)


def render_call(name: str, args: dict[str, Any] | None, arguments_text: str | None) -> str:
    """A call as people read it: ``get_weather(city='Paris')``, or its arguments' text
    when they were not a JSON object.

    Example:
        >>> render_call("get_weather", {"city": "Paris"}, None)
        "get_weather(city='Paris')"
    """
    if args is None:
        return f"{name}(<not JSON: {arguments_text or ''!r}>)"
    return f"{name}({', '.join(f'{key}={value!r}' for key, value in args.items())})"


def _rendered(call: Mapping[str, Any]) -> str:
    return render_call(call["name"], call["args"], call["arguments_text"])


def _status(pair: Mapping[str, Any]) -> CallStatus:
    if pair["matched"] is None:
        return "unmatched"
    return "out_of_order" if pair["in_order"] is False else "matched"


def side_by_side(
    pairs: Sequence[Mapping[str, Any]], extra: Sequence[Mapping[str, Any]]
) -> TrajectoryView:
    """The view of an alignment given as plain fields: ``pairs`` as
    :class:`~langchain_answer_metrics.metrics.call_alignment.CallAlignment` dumps
    (``expected``, ``matched``, ``in_order``), ``extra`` as ``CallRecord`` dumps.

    Example:
        >>> call = {"position": 0, "group": 0, "name": "f", "args": {}, "arguments_text": None}
        >>> side_by_side([], [call]).made[0].status
        'unmatched'
    """
    expected = [
        {
            "call": _rendered(pair["expected"]),
            "group": pair["expected"]["group"],
            "status": _status(pair),
            "partner": None if pair["matched"] is None else pair["matched"]["position"] + 1,
        }
        for pair in pairs
    ]
    made = [
        (
            pair["matched"]["position"],
            {
                "call": _rendered(pair["matched"]),
                "group": pair["matched"]["group"],
                "status": _status(pair),
                "partner": pair["expected"]["position"] + 1,
            },
        )
        for pair in pairs
        if pair["matched"] is not None
    ]
    # An extra call has no partner: the field is left unset, as it always was.
    made += [
        (call["position"], {"call": _rendered(call), "group": call["group"], "status": "unmatched"})
        for call in extra
    ]
    made.sort(key=lambda item: item[0])
    return TrajectoryView.model_validate({"expected": expected, "made": [cell for _, cell in made]})
