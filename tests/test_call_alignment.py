"""The tool-call metrics' alignment, kept compact and built when read: a kept result holds
a handful of objects the garbage collector tracks (not three per call), and every form of
the details (dump, JSON, repr, the report's view, a record, a reload) is what the models
gave before.

The JSON below was written by the details as they were before (a list of models), on
hand-worked cases, and is checked byte for byte, key order included.
"""

from __future__ import annotations

import copy
import gc
import json
import pickle
import random
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest
from agent_forms import FORMS
from agent_forms import expected as expected_calls

from langchain_answer_metrics import (
    MetricResult,
    ToolCallF1,
    TrajectoryMatch,
    evaluate_dataset,
)
from langchain_answer_metrics.adapters.langsmith.results import feedback_detail
from langchain_answer_metrics.metrics.agent_calls import CallAlignment, CallRecord
from langchain_answer_metrics.metrics.call_alignment import CallAlignments, ExtraCalls
from langchain_answer_metrics.run.records.building import sample_record
from langchain_answer_metrics.run.records.format import record_line
from langchain_answer_metrics.run.tables import outcome_cells

SEARCH = ("search", {"q": "paris", "limit": 5})
PARIS, LYON = ("weather", {"city": "Paris"}), ("weather", {"city": "Lyon"})
MADE = [[SEARCH], [PARIS, LYON]]


def _record(position: int, group: int, name: str, args: Any, text: str | None = None) -> dict:
    return {
        "position": position,
        "group": group,
        "name": name,
        "args": args,
        "arguments_text": text,
    }


# Strict: the first expected call (Lyon) is not the first made (search); after that
# divergence, search keeps both orders (in_order), Lyon is matched out of order, the
# booking was not made and Paris is extra.
STRICT_JSON = {
    "alignment": [
        {
            "expected": _record(0, 0, "weather", {"city": "Lyon"}),
            "matched": _record(2, 1, "weather", {"city": "Lyon"}),
            "in_order": False,
        },
        {
            "expected": _record(1, 1, "search", {"q": "paris", "limit": 5}),
            "matched": _record(0, 0, "search", {"q": "paris", "limit": 5}),
            "in_order": True,
        },
        {"expected": _record(2, 2, "book", {"city": "Paris"}), "matched": None, "in_order": None},
    ],
    "extra": [_record(1, 1, "weather", {"city": "Paris"})],
    "kind": "trajectory_match",
    "mode": "strict",
    "tool_args": "exact",
    "overridden_tools": [],
    "calls_made": 3,
    "calls_expected": 3,
    "divergence": "call 1: expected `weather(city='Lyon')`, the agent called "
    "`search(q='paris', limit=5)`",
    "arguments_not_json": [],
}
STRICT_EXPECTED = [
    {"name": "weather", "args": {"city": "Lyon"}},
    {"name": "search", "args": {"q": "paris", "limit": 5}},
    {"name": "book", "args": {"city": "Paris"}},
]

# F1, superset arguments: weather(Paris, days=2) has every expected argument; the search's
# arguments are not JSON (kept as text, extra); the expected search is missing.
F1_MADE = [[("search", "{not json")], [("weather", {"city": "Paris", "days": 2})]]
F1_EXPECTED = [
    {"name": "weather", "args": {"city": "Paris"}},
    {"name": "search", "args": {"q": "x"}},
]
F1_JSON = {
    "alignment": [
        {
            "expected": _record(0, 0, "weather", {"city": "Paris"}),
            "matched": _record(1, 1, "weather", {"city": "Paris", "days": 2}),
            "in_order": None,
        },
        {"expected": _record(1, 1, "search", {"q": "x"}), "matched": None, "in_order": None},
    ],
    "extra": [_record(0, 0, "search", None, "{not json")],
    "kind": "tool_call_f1",
    "tool_args": "superset",
    "overridden_tools": [],
    "precision": 0.5,
    "recall": 0.5,
    "f1": 0.5,
    "matched": 1,
    "calls_made": 2,
    "calls_expected": 2,
    "arguments_not_json": [
        "agent's call 1 (search): arguments not a JSON object, compared as text"
    ],
}
EMPTY_JSON = {
    "alignment": [],
    "extra": [],
    "kind": "trajectory_match",
    "mode": "unordered",
    "tool_args": "exact",
    "overridden_tools": [],
    "calls_made": 0,
    "calls_expected": 0,
    "divergence": None,
    "arguments_not_json": [],
}


def _compact(value: dict[str, Any]) -> str:
    """``value`` as pydantic writes JSON: no spaces, keys in order, UTF-8 kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("form", FORMS)
def test_hand_worked_details_json_is_what_it_was(form: str) -> None:
    make = FORMS[form]
    strict = TrajectoryMatch(mode="strict").invoke(
        {"messages": make(MADE), "reference_tool_calls": STRICT_EXPECTED}
    )
    f1 = ToolCallF1(tool_args="superset").invoke(
        {"messages": make(F1_MADE), "reference_tool_calls": F1_EXPECTED}
    )
    empty = TrajectoryMatch(mode="unordered").invoke(
        {"messages": make([]), "reference_tool_calls": []}
    )
    for result, expected in ((strict, STRICT_JSON), (f1, F1_JSON), (empty, EMPTY_JSON)):
        assert result.details.model_dump_json() == _compact(expected)
        assert result.details.model_dump(mode="json") == expected
        assert result.details.model_dump() == expected  # python mode: the same values here
        assert result.details == expected  # reads like its dict, as before
    assert strict.score == 0.0 and f1.score == 0.5 and empty.score == 1.0
    assert [(pair.expected.render(), pair.in_order) for pair in strict.details.alignment] == [
        ("weather(city='Lyon')", False),
        ("search(q='paris', limit=5)", True),
        ("book(city='Paris')", None),
    ]
    assert [call.render() for call in f1.details.extra] == ["search(<not JSON: '{not json'>)"]


def _as_models(details: Any) -> Any:
    """The same details held as lists of models, as they were before (a reload)."""
    return type(details).model_validate(json.loads(details.model_dump_json()))


EXPECTED_VARIANTS = {
    "in order": [SEARCH, LYON, PARIS],
    "reordered": [PARIS, SEARCH, LYON],
    "fewer, other arguments": [("search", {"q": "paris"}), PARIS],
    "more": [SEARCH, PARIS, LYON, ("book", {"city": "Paris"})],
    "repeated": [PARIS, PARIS, ("search", "{bad")],
}
METRICS = [
    TrajectoryMatch(mode=mode, tool_args=args)
    for mode in ("strict", "unordered", "superset", "subset")
    for args in ("exact", "ignore", "superset", "subset")
] + [ToolCallF1(tool_args=args) for args in ("exact", "ignore", "superset", "subset")]


# The dump options a user may pass: the compact alignment hands them to the models.
OPTIONS: list[dict[str, Any]] = [
    {},
    {"exclude_none": True},
    {"exclude_defaults": True},
    {"exclude_unset": True},
    {"by_alias": True},
    {"round_trip": True},
    {"include": {"alignment": {0: {"expected"}, 1: True}, "extra": {0}}},
    {"exclude": {"alignment": {"__all__": {"matched": {"args"}}}, "extra": {"__all__": {"args"}}}},
]


def _written(result: MetricResult) -> dict[str, str]:
    """Every form the package writes a result's details in, as text (``repr`` keeps the
    python types and the key order)."""
    details = result.details
    lines = {
        whole: record_line(sample_record("id", "fp", {}, {result.key: result}, {}, whole=whole))
        for whole in (False, True)
    }
    forms = {
        "dump_json": details.model_dump_json(),
        "dump_json indent": details.model_dump_json(indent=2),
        "repr": repr(details),
        "view": repr(details.trajectory_view()),
        "view fields set": repr([cell.model_fields_set for cell in details.trajectory_view().made]),
        "--out record": lines[False],
        "checkpoint record": lines[True],
        "LangSmith feedback": repr(feedback_detail(result)),
        "DataFrame cells": repr(outcome_cells(result.key, result)),
        "reload": MetricResult.model_validate_json(result.model_dump_json()).model_dump_json(),
    }
    for index, option in enumerate(OPTIONS):
        for mode in ("python", "json"):
            forms[f"dump {mode} {index}"] = repr(details.model_dump(mode=mode, **option))
    return forms


def _pinned(result: MetricResult) -> None:
    """The compact details, written without their models, read as the models write them:
    a copy of the same details whose models were built by reading them."""
    details = result.details
    models = copy.deepcopy(details)  # the same values (a date stays a date, a NaN a NaN)
    assert list(models.alignment) == models.alignment and list(models.extra) == models.extra
    # read: built and kept, so written through the models' own serializer
    assert models.alignment._models is not None and details.alignment._models is None
    as_models = result.model_copy(update={"details": models})
    assert _written(result) == _written(as_models)
    assert details == models


@pytest.mark.parametrize("variant", EXPECTED_VARIANTS)
def test_compact_details_dump_like_the_models(variant: str) -> None:
    """Every mode and argument mode, on hand-picked variants: the compact details and the
    same details as models give the same dumps, JSON, repr, view, records, feedback,
    DataFrame cells and reload."""
    expected = expected_calls(*EXPECTED_VARIANTS[variant])
    made = [*MADE, [PARIS, ("search", "{bad")]]
    for metric in METRICS:
        result = metric.invoke(
            {"messages": FORMS["openai"](made), "reference_tool_calls": expected}
        )
        _pinned(result)
        reloaded = MetricResult.model_validate_json(result.model_dump_json())
        assert reloaded == result
        assert reloaded.model_dump_json() == result.model_dump_json()


def _value(rng: random.Random, python: bool) -> Any:
    """An argument value: JSON's kinds, and (``python``) values JSON has not."""
    kinds: list[Callable[[], Any]] = [
        lambda: rng.randint(-3, 3),
        lambda: rng.choice([0.5, -1e300, 1e-7]),
        lambda: rng.choice([True, False, None]),
        lambda: rng.choice(["paris", "Zürich ✓", "", 'a\nb "q"', "日本"]),
        lambda: [rng.randint(0, 2), "x"],
        lambda: {"nested": {"k": rng.randint(0, 2)}},
    ]
    if python:
        kinds += [
            lambda: (1, "two"),
            lambda: date(2026, 11, rng.randint(1, 28)),
            lambda: float("nan"),
            lambda: {1, 2},
        ]
    return rng.choice(kinds)()


def _call(rng: random.Random, python: bool) -> tuple[str, Any]:
    name = rng.choice(["search", "weather", "book", "convert"])
    if rng.random() < 0.1:
        return name, rng.choice(["{not json", "[1, 2]", ""])  # arguments that are not JSON
    keys = rng.sample(["city", "q", "limit", "flag", "to"], rng.randint(0, 3))
    return name, {key: _value(rng, python) for key in keys}


def _generated_sample(rng: random.Random) -> dict[str, Any]:
    """A trajectory in one of the message forms and expected calls made from it by random
    changes: calls dropped, added, swapped, an argument changed; parallel groups."""
    form = rng.choice(sorted(FORMS))
    python = form != "openai"  # the OpenAI form holds JSON text
    calls = [_call(rng, python) for _ in range(rng.choice([0, 1, 2, 4, 7]))]
    wanted = list(calls)
    for _ in range(rng.randint(0, 3)):
        change = rng.choice(["drop", "add", "swap", "argument"])
        if change == "add" or not wanted:
            wanted.insert(rng.randint(0, len(wanted)), _call(rng, python=False))
        elif change == "drop":
            wanted.pop(rng.randrange(len(wanted)))
        elif change == "swap":
            first, second = rng.randrange(len(wanted)), rng.randrange(len(wanted))
            wanted[first], wanted[second] = wanted[second], wanted[first]
        else:
            at = rng.randrange(len(wanted))
            wanted[at] = (wanted[at][0], {"city": _value(rng, python=False)})
    groups: list[list[tuple[str, Any]]] = []
    for call in calls:  # one to three parallel calls per AI message
        if groups and len(groups[-1]) < 3 and rng.random() < 0.4:
            groups[-1].append(call)
        else:
            groups.append([call])
    return {"messages": FORMS[form](groups), "reference_tool_calls": expected_calls(*wanted)}


@pytest.mark.parametrize("seed", range(3))
def test_generated_details_are_written_as_the_models_write_them(seed: int) -> None:
    """The one dump written without models (the fields as read) pinned to the models' own
    serializer: every metric setting on generated trajectories (the three message forms,
    arguments that are not JSON, a tuple, a set, a date, a NaN, non-ASCII text, no call at
    all), in every written form and under every dump option."""
    rng = random.Random(seed)
    samples = [_generated_sample(rng) for _ in range(8)]
    for sample in samples:
        for metric in METRICS:
            _pinned(metric.invoke(sample))


def test_include_and_exclude_reach_inside_the_alignment() -> None:
    """``include``/``exclude`` inside the alignment are the models' (they were ignored
    while the alignment was dumped from its compact form through a fixed schema)."""
    details = (
        TrajectoryMatch(mode="strict")
        .invoke({"messages": FORMS["openai"](MADE), "reference_tool_calls": STRICT_EXPECTED})
        .details
    )
    dumped = details.model_dump(exclude={"alignment": {"__all__": {"matched", "in_order"}}})
    assert dumped["alignment"] == [
        {"expected": pair["expected"]} for pair in STRICT_JSON["alignment"]
    ]
    only = details.model_dump(include={"alignment": {1: {"expected": {"name"}}}, "extra": True})
    assert only == {"alignment": [{"expected": {"name": "search"}}], "extra": STRICT_JSON["extra"]}
    assert details.model_dump(exclude_none=True)["alignment"][2] == {
        "expected": {"position": 2, "group": 2, "name": "book", "args": {"city": "Paris"}}
    }


def test_arguments_keep_their_python_values_in_a_python_dump() -> None:
    """Arguments are kept as read (the same values, not a JSON copy): a tuple stays a
    tuple in a python dump and becomes a list in JSON, as with the models."""
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    messages = [
        HumanMessage("hi"),
        AIMessage("", tool_calls=[{"name": "f", "args": {"t": (1, 2), "n": 1.5}, "id": "1"}]),
        ToolMessage("x", tool_call_id="1"),
        AIMessage("done"),
    ]
    details = (
        TrajectoryMatch()
        .invoke({"messages": messages, "reference_tool_calls": [{"name": "g", "args": {}}]})
        .details
    )
    assert details.model_dump()["extra"][0]["args"] == {"t": (1, 2), "n": 1.5}
    assert json.loads(details.model_dump_json())["extra"][0]["args"] == {"t": [1, 2], "n": 1.5}
    assert repr(details.model_dump()) == repr(_as_models(details).model_dump()).replace(
        "[1, 2]", "(1, 2)"
    )


def test_the_alignment_reads_as_a_list_of_models() -> None:
    details = (
        TrajectoryMatch(mode="strict")
        .invoke({"messages": FORMS["openai"](MADE), "reference_tool_calls": STRICT_EXPECTED})
        .details
    )
    assert len(details.alignment) == 3 and len(details.extra) == 1  # counted, not built
    first = details.alignment[0]
    assert isinstance(first, CallAlignment) and isinstance(details.extra[0], CallRecord)
    assert details.alignment[0] is first  # built once, then kept
    assert [pair.expected.name for pair in details.alignment[1:]] == ["search", "book"]
    assert details.alignment == list(details.alignment) and details.alignment != []
    assert details["alignment"] == STRICT_JSON["alignment"]  # reads like its dict
    first.in_order = True  # a change to a model read is kept, and dumped
    assert details.model_dump()["alignment"][0]["in_order"] is True
    assert isinstance(details.alignment, CallAlignments) and isinstance(details.extra, ExtraCalls)


def test_copies_and_pickles_keep_the_same_details() -> None:
    result = ToolCallF1().invoke(
        {"messages": FORMS["langchain"](F1_MADE), "reference_tool_calls": F1_EXPECTED}
    )
    for copied in (
        pickle.loads(pickle.dumps(result)),
        copy.deepcopy(result),
        result.model_copy(deep=True),
    ):
        assert copied == result
        assert copied.model_dump_json() == result.model_dump_json()


def _tracked_per_result(make: Callable[[list[Any]], list[Any]], samples: list[Any]) -> float:
    """How many more objects the garbage collector tracks per result kept by ``make``."""
    make(samples[:2])  # warm: caches, validators
    gc.collect()
    before = len(gc.get_objects())
    kept = make(samples)
    gc.collect()  # also lets it untrack tuples of plain values, as its first pass does
    grown = len(gc.get_objects()) - before
    assert len(kept) == len(samples)
    return grown / len(samples)


def _trajectories(calls: int, count: int) -> list[dict[str, Any]]:
    made = [[("search", {"q": f"city {index}", "limit": index})] for index in range(calls)]
    expected = [{"name": "search", "args": {"q": f"city {index}"}} for index in range(calls)]
    expected[-1]["name"] = "lookup"  # one missing, one extra: a full alignment either way
    return [
        {"messages": FORMS["openai"](made), "reference_tool_calls": expected} for _ in range(count)
    ]


def test_a_kept_result_holds_few_tracked_objects() -> None:
    """A result's alignment of 20 calls was ~190 tracked objects (three per model); it is
    a handful now, whatever the number of calls, through ``invoke`` and the runner."""
    few, many = _trajectories(5, 60), _trajectories(40, 60)
    for metric in (TrajectoryMatch(mode="strict"), TrajectoryMatch(mode="unordered"), ToolCallF1()):

        def invoked(samples: list[Any], metric: Any = metric) -> list[Any]:
            return [metric.invoke(sample) for sample in samples]

        counts = [_tracked_per_result(invoked, samples) for samples in (few, many)]
        assert max(counts) <= 16 and abs(counts[1] - counts[0]) < 1, counts  # none per call
    metric = TrajectoryMatch(mode="unordered")
    rows = _tracked_per_result(
        lambda samples: list(evaluate_dataset(samples, metrics=[metric])), many
    )
    assert rows <= 24, rows  # the row, the result, its details: nothing per call
    results = [metric.invoke(sample) for sample in many]
    gc.collect()
    before = len(gc.get_objects())
    for result in results:  # what the records, the report and LangSmith do
        result.model_dump_json()
        result.model_dump(mode="json")
        result.details.trajectory_view()
    gc.collect()
    assert len(gc.get_objects()) - before < 50  # dumping keeps nothing


@pytest.mark.parametrize("mode", ["strict", "unordered", "superset", "subset"])
def test_scoring_leaves_no_reference_cycles(mode: str) -> None:
    """What a score allocates is freed as it goes: no reference cycle left for the
    collector to find (the matching's recursive closure once left ~20 objects a call)."""
    samples = _trajectories(20, 20)
    metrics = (TrajectoryMatch(mode=mode, tool_args="superset"), ToolCallF1(tool_args="subset"))
    for metric in metrics:
        metric.invoke(samples[0])  # warm
    gc.collect()
    gc.disable()
    try:
        for sample in samples:
            for metric in metrics:
                metric.invoke(sample)
        left = gc.collect()
    finally:
        gc.enable()
    assert left < 10, left
