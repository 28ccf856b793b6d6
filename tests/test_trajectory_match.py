"""TrajectoryMatch and ToolCallF1 on hand-worked trajectories, in all three message forms.

The matrix: one trajectory the agent made, and expected trajectories that differ from it
in structure (the same calls in order, reordered, fewer, more) and in one call's arguments
(the same, fewer, more, other). Which trajectory modes each structure passes, and which
argument modes each argument variant passes, were worked out by hand (the tables below);
a case passes when both do, since every other call is the same in every mode.
"""

from __future__ import annotations

import asyncio
import math

import pytest
from agent_forms import FORMS, expected

from langchain_answer_metrics import AgentSample, InvalidSampleError, ToolCallF1, TrajectoryMatch
from langchain_answer_metrics.agents.matching import json_equal

MODES = ("strict", "unordered", "superset", "subset")
ARG_MODES = ("exact", "ignore", "superset", "subset")

SEARCH = ("search", {"q": "paris", "limit": 5})
PARIS, LYON = ("weather", {"city": "Paris"}), ("weather", {"city": "Lyon"})
BOOK = ("book", {"city": "Paris"})
# The agent searched, then asked for two cities' weather at once (one AI message).
MADE = [[SEARCH], [PARIS, LYON]]

SEARCH_VARIANTS = {  # the expected search call, and the argument modes under which it matches
    "same": (("search", {"q": "paris", "limit": 5}), {"exact", "ignore", "superset", "subset"}),
    "fewer": (("search", {"q": "paris"}), {"ignore", "superset"}),
    "more": (("search", {"q": "paris", "limit": 5, "lang": "fr"}), {"ignore", "subset"}),
    "other": (("search", {"q": "lyon", "limit": 5}), {"ignore"}),
}


def structures(search: tuple) -> dict[str, tuple[list, set[str]]]:
    """Expected trajectories, and the trajectory modes the agent's passes against each."""
    return {
        # Lyon before Paris: they were parallel calls, so any order of the two is in order.
        "in order": ([search, LYON, PARIS], {"strict", "unordered", "superset", "subset"}),
        "reordered": ([PARIS, search, LYON], {"unordered", "superset", "subset"}),
        "fewer": ([search, PARIS], {"superset"}),
        "more": ([search, PARIS, LYON, BOOK], {"subset"}),
    }


CASES = [
    (structure, variant, mode, args)
    for structure in ("in order", "reordered", "fewer", "more")
    for variant in SEARCH_VARIANTS
    for mode in MODES
    for args in ARG_MODES
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(("structure", "variant", "mode", "args"), CASES)
def test_every_mode_and_argument_mode(
    form: str, structure: str, variant: str, mode: str, args: str
) -> None:
    search, matches_under = SEARCH_VARIANTS[variant]
    calls, passes_in = structures(search)[structure]
    sample = {"messages": FORMS[form](MADE), "reference_tool_calls": expected(*calls)}
    result = TrajectoryMatch(mode=mode, tool_args=args).invoke(sample)
    assert result.score == (1.0 if mode in passes_in and args in matches_under else 0.0)
    assert (result.details.divergence is None) == (result.score == 1.0)


def score(metric, made, *calls, form: str = "openai") -> float:
    return metric.invoke({"messages": FORMS[form](made), "reference_tool_calls": expected(*calls)})


@pytest.mark.parametrize("form", FORMS)
def test_repeated_calls_to_one_tool_are_counted_one_to_one(form: str) -> None:
    one, two = ("f", {"x": 1}), ("f", {"x": 2})
    made = [[one], [two], [one]]  # spread over three AI messages
    assert score(TrajectoryMatch(mode="strict"), made, one, two, one, form=form).score == 1.0
    assert score(TrajectoryMatch(mode="strict"), made, one, one, two, form=form).score == 0.0
    assert score(TrajectoryMatch(mode="unordered"), made, one, one, two, form=form).score == 1.0
    # Two calls f(x=1) made, one expected: unordered fails, superset passes, subset fails.
    assert score(TrajectoryMatch(mode="unordered"), made, one, two, form=form).score == 0.0
    assert score(TrajectoryMatch(mode="superset"), made, one, two, form=form).score == 1.0
    assert score(TrajectoryMatch(mode="subset"), made, one, two, form=form).score == 0.0
    # Three f(x=1) expected, two made: the one-to-one matching leaves one over.
    assert score(TrajectoryMatch(mode="subset"), made, one, one, one, form=form).score == 0.0
    f1 = score(ToolCallF1(), made, one, one, one, form=form)
    assert (f1.details.precision, f1.details.recall) == (2 / 3, 2 / 3)


@pytest.mark.parametrize("form", FORMS)
def test_the_matching_is_the_largest_not_greedy(form: str) -> None:
    # Under tool_args="superset", the first call made fits both expected calls; a greedy
    # pass gives it to the first and leaves the second without a match.
    made = [[("f", {"a": 1, "b": 2})], [("f", {"a": 1})]]
    calls = (("f", {"a": 1}), ("f", {"a": 1, "b": 2}))
    result = score(TrajectoryMatch(mode="unordered", tool_args="superset"), made, *calls, form=form)
    assert result.score == 1.0
    pairs = [(a.expected.position, a.matched.position) for a in result.details.alignment]
    assert pairs == [(0, 1), (1, 0)]
    assert score(ToolCallF1(tool_args="superset"), made, *calls, form=form).score == 1.0
    # In order, the first expected call f(a=1) meets f(a=1, b=2) first: fine; the second
    # expected call needs b=2 and meets f(a=1): no.
    strict = score(TrajectoryMatch(tool_args="superset"), made, *calls, form=form)
    assert strict.score == 0.0
    assert strict.reason.startswith("call 2: expected `f(a=1, b=2)`, the agent called `f(a=1)`")


@pytest.mark.parametrize("form", FORMS)
def test_parallel_calls_have_no_order_and_separate_ones_do(form: str) -> None:
    at_once, one_by_one = [[PARIS, LYON]], [[PARIS], [LYON]]
    strict = TrajectoryMatch(mode="strict")
    assert score(strict, at_once, LYON, PARIS, form=form).score == 1.0
    assert score(strict, one_by_one, LYON, PARIS, form=form).score == 0.0
    # An expected parallel group (a nested list) takes the calls in either order.
    assert score(strict, one_by_one, [LYON, PARIS], form=form).score == 1.0
    # Grouping alone does not matter: the same calls in the same order.
    assert score(strict, one_by_one, PARIS, LYON, form=form).score == 1.0
    assert score(strict, at_once, [PARIS, LYON], form=form).score == 1.0


@pytest.mark.parametrize("form", FORMS)
def test_arguments_that_are_not_json_are_compared_as_text(form: str) -> None:
    made = [[("f", "{city: Paris")]]
    same_text = score(TrajectoryMatch(), made, ("f", "{city: Paris"), form=form)
    assert same_text.score == 1.0
    assert same_text.details.arguments_not_json[0].startswith("agent's call 1 (f)")
    assert "compared as text" in same_text.reason
    assert score(TrajectoryMatch(), made, ("f", {"city": "Paris"}), form=form).score == 0.0
    assert score(TrajectoryMatch(tool_args="ignore"), made, ("f", {}), form=form).score == 1.0
    assert score(ToolCallF1(), made, ("f", {"city": "Paris"}), form=form).score == 0.0


@pytest.mark.parametrize("form", FORMS)
def test_an_empty_trajectory(form: str) -> None:
    nothing: list = []
    for mode in MODES:
        assert score(TrajectoryMatch(mode=mode), nothing, form=form).score == 1.0
    assert score(ToolCallF1(), nothing, form=form).score == 1.0
    wanted = {"strict": 0.0, "unordered": 0.0, "superset": 0.0, "subset": 1.0}
    for mode, value in wanted.items():
        assert score(TrajectoryMatch(mode=mode), nothing, BOOK, form=form).score == value
    unwanted = {"strict": 0.0, "unordered": 0.0, "superset": 1.0, "subset": 0.0}
    for mode, value in unwanted.items():
        assert score(TrajectoryMatch(mode=mode), [[BOOK]], form=form).score == value
    missing = score(ToolCallF1(), nothing, BOOK, form=form)
    assert (missing.score, missing.details.precision, missing.details.recall) == (0.0, 0.0, 0.0)
    assert score(TrajectoryMatch(), nothing, BOOK, form=form).reason.startswith(
        "call 1: expected `book(city='Paris')`, the agent made no more calls"
    )


def test_top_level_arguments_are_compared_as_json_values() -> None:
    made = [[("f", {"n": 1, "flag": True, "obj": {"x": 1, "y": [1, 2.0]}})]]
    assert (
        score(
            TrajectoryMatch(),
            made,
            ("f", {"obj": {"y": [1.0, 2], "x": 1.0}, "flag": True, "n": 1.0}),
        ).score
        == 1.0
    )
    assert (
        score(
            TrajectoryMatch(), made, ("f", {"n": 1, "flag": 1, "obj": {"x": 1, "y": [1, 2]}})
        ).score
        == 0.0
    )
    # A nested value is compared whole, even under tool_args="superset".
    assert score(TrajectoryMatch(tool_args="superset"), made, ("f", {"obj": {"x": 1}})).score == 0.0
    assert json_equal([True], [True]) and not json_equal([True], [1]) and not json_equal(0, False)
    assert not json_equal(None, 0) and not json_equal("1", 1) and json_equal({}, {})


def test_overrides_a_callable_or_the_argument_names() -> None:
    made = [[("search", {"query": "PARIS", "limit": 3})], [("book", {"city": "Paris", "n": 2})]]
    calls = (("search", {"query": "paris", "limit": 10}), ("book", {"city": "Paris", "n": 3}))
    assert score(TrajectoryMatch(), made, *calls).score == 0.0
    overrides = {
        "search": lambda actual, wanted: actual["query"].lower() == wanted["query"].lower(),
        "book": ["city"],
    }
    result = score(TrajectoryMatch(tool_args_overrides=overrides), made, *calls)
    assert result.score == 1.0 and result.details.overridden_tools == ["book", "search"]
    only_search = score(TrajectoryMatch(tool_args_overrides={"book": ["city", "n"]}), made, *calls)
    assert only_search.score == 0.0

    def broken(actual: dict, wanted: dict) -> bool:
        raise KeyError("query")

    with pytest.raises(ValueError, match=r"tool_args_overrides\['search'\] raised KeyError"):
        score(TrajectoryMatch(tool_args_overrides={"search": broken}), made, *calls)
    with pytest.raises(ValueError, match="list of argument names"):
        TrajectoryMatch(tool_args_overrides={"search": "query"})


def test_the_reason_names_the_first_divergence_and_the_details_hold_the_alignment() -> None:
    made = [[("get_weather", {"city": "Lyon"})], [BOOK], [("email", {"to": "me"})]]
    calls = (("get_weather", {"city": "Paris"}), BOOK)
    strict = score(TrajectoryMatch(), made, *calls)
    assert strict.reason.startswith(
        "call 1: expected `get_weather(city='Paris')`, the agent called `get_weather(city='Lyon')`"
    )
    unordered = score(TrajectoryMatch(mode="unordered"), made, *calls)
    assert unordered.details.divergence == (
        "call 1: expected `get_weather(city='Paris')`, the agent called `get_weather(city='Lyon')`"
    )
    aligned = [
        (a.expected.render(), a.matched and a.matched.render()) for a in unordered.details.alignment
    ]
    assert aligned == [
        ("get_weather(city='Paris')", None),
        ("book(city='Paris')", "book(city='Paris')"),
    ]
    assert [call.render() for call in unordered.details.extra] == [
        "get_weather(city='Lyon')",
        "email(to='me')",
    ]
    subset = score(TrajectoryMatch(mode="subset"), [[BOOK], [("email", {"to": "me"})]], *calls)
    assert (
        subset.details.divergence
        == "call 2: the agent called `email(to='me')`, which was not expected"
    )
    assert (
        "expected call 1 `get_weather(city='Paris')` was not made"
        in score(ToolCallF1(), [[BOOK]], *calls).reason
    )


def test_tool_call_f1_precision_recall_and_f1() -> None:
    made = [[SEARCH], [PARIS, LYON], [("email", {"to": "me"})]]
    result = score(ToolCallF1(), made, SEARCH, PARIS, BOOK)
    precision, recall = 2 / 4, 2 / 3
    assert (result.details.precision, result.details.recall) == (precision, recall)
    assert math.isclose(result.score, 2 * precision * recall / (precision + recall))
    assert result.details.matched == 2 and len(result.details.extra) == 2
    assert math.isclose(
        score(ToolCallF1(tool_args="ignore"), made, SEARCH, BOOK).score, 2 * 0.25 * 0.5 / 0.75
    )


def test_reference_messages_and_the_async_and_batch_surfaces() -> None:
    made = FORMS["langchain"](MADE)
    sample = AgentSample(messages=FORMS["openai"](MADE), reference_messages=made)
    assert TrajectoryMatch().invoke(sample).score == 1.0
    assert asyncio.run(ToolCallF1().ainvoke(sample)).score == 1.0
    results = TrajectoryMatch(mode="superset").batch(
        [sample, {"messages": made}, {"messages": made, "reference_tool_calls": []}],
        return_exceptions=True,
    )
    assert results[0].score == 1.0 and results[2].score == 1.0
    assert isinstance(results[1], InvalidSampleError) and results[1].field == "reference_tool_calls"
    assert (
        TrajectoryMatch().score(messages=made, reference_tool_calls=expected(SEARCH, LYON, PARIS))
        == 1.0
    )
