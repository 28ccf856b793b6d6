"""AgentSample: the three message forms read alike, the normalised view, and bad input
refused naming the metric and the field."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import (
    AIMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)
from pydantic import ValidationError

from langchain_answer_metrics import AgentSample, InvalidSampleError
from langchain_answer_metrics.agents import ToolCall, check_agent_sample
from langchain_answer_metrics.core.sample import RowFields


def langchain_trajectory() -> list:
    return [
        SystemMessage("You are a travel agent."),
        HumanMessage("Weather in Paris and Lyon, then book Paris?"),
        AIMessage(
            "",
            tool_calls=[
                {"name": "get_weather", "args": {"city": "Paris"}, "id": "a"},
                {"name": "get_weather", "args": {"city": "Lyon"}, "id": "b"},
            ],
        ),
        ToolMessage("rain", tool_call_id="b"),
        ToolMessage("sun", tool_call_id="a"),
        AIMessage("", tool_calls=[{"name": "book", "args": {"city": "Paris", "n": 2}, "id": "c"}]),
        ToolMessage("booked", tool_call_id="c"),
        AIMessage("Paris is sunny; booked for two."),
    ]


def openai_trajectory() -> list[dict]:
    def call(call_id: str, name: str, args: dict) -> dict:
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }

    return [
        {"role": "system", "content": "You are a travel agent."},
        {"role": "user", "content": "Weather in Paris and Lyon, then book Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("a", "get_weather", {"city": "Paris"}),
                call("b", "get_weather", {"city": "Lyon"}),
            ],
        },
        {"role": "tool", "tool_call_id": "b", "content": "rain"},
        {"role": "tool", "tool_call_id": "a", "content": "sun"},
        {"role": "assistant", "tool_calls": [call("c", "book", {"city": "Paris", "n": 2})]},
        {"role": "tool", "tool_call_id": "c", "content": "booked"},
        {"role": "assistant", "content": "Paris is sunny; booked for two."},
    ]


FORMS = {
    "langchain": langchain_trajectory,
    "openai": openai_trajectory,
    "state": lambda: {"messages": langchain_trajectory(), "remaining_steps": 3},
    "langchain_dicts": lambda: messages_to_dict(langchain_trajectory()),
}


@pytest.mark.parametrize("form", FORMS)
def test_every_form_gives_the_same_view(form: str) -> None:
    sample = AgentSample(messages=FORMS[form]())
    view = [
        (c.position, c.message_index, c.group, c.call.name, c.call.args, c.result)
        for c in sample.tool_calls
    ]
    assert view == [
        (0, 2, 0, "get_weather", {"city": "Paris"}, "sun"),
        (1, 2, 0, "get_weather", {"city": "Lyon"}, "rain"),
        (2, 5, 1, "book", {"city": "Paris", "n": 2}, "booked"),
    ]
    assert sample.user_input == "Weather in Paris and Lyon, then book Paris?"
    assert sample.final_answer == sample.response == "Paris is sunny; booked for two."
    assert [m.role for m in sample.messages][:3] == ["system", "user", "assistant"]


def test_reference_calls_in_both_call_forms_and_parallel_groups() -> None:
    sample = AgentSample(
        messages=[],
        reference_tool_calls=[
            {"name": "search", "args": {"q": "x"}},
            [
                {"type": "function", "function": {"name": "a", "arguments": '{"k": 1}'}},
                {"name": "b", "args": '{"k": 2}'},
            ],
        ],
    )
    expected = sample.expected_tool_calls
    assert expected is not None
    assert [(c.call.name, c.call.args, c.group) for c in expected] == [
        ("search", {"q": "x"}, 0),
        ("a", {"k": 1}, 1),
        ("b", {"k": 2}, 1),
    ]
    assert sample.tool_calls == [] and sample.final_answer is None


def test_reference_messages_give_the_expected_calls() -> None:
    sample = AgentSample(messages=openai_trajectory(), reference_messages=langchain_trajectory())
    assert sample.expected_tool_calls is not None
    assert [c.call for c in sample.expected_tool_calls] == [
        ToolCall(name=c.call.name, args=c.call.args, id=c.call.id) for c in sample.tool_calls
    ]


def test_invalid_json_arguments_are_kept_as_text_never_a_crash() -> None:
    openai = [
        {
            "role": "assistant",
            "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": "{city: Paris"}}],
        },
        {
            "role": "assistant",
            "tool_calls": [{"id": "y", "function": {"name": "g", "arguments": "[1, 2]"}}],
        },
    ]
    calls = [c.call for c in AgentSample(messages=openai).tool_calls]
    assert [(c.name, c.args, c.arguments_text, c.invalid_arguments) for c in calls] == [
        ("f", None, "{city: Paris", True),
        ("g", None, "[1, 2]", True),
    ]
    # LangChain puts calls whose arguments did not parse in invalid_tool_calls: kept too.
    broken = AIMessage(
        "",
        invalid_tool_calls=[
            {"name": "f", "args": "{bad", "id": "z", "error": None, "type": "invalid_tool_call"}
        ],
    )
    (call,) = AgentSample(messages=[broken]).tool_calls
    assert (call.call.name, call.call.arguments_text) == ("f", "{bad")
    assert "not JSON" in call.call.render()


def test_a_sample_round_trips_through_json() -> None:
    sample = AgentSample(
        messages=langchain_trajectory(),
        reference_tool_calls=[{"name": "f", "args": "{bad"}, [{"name": "g"}, {"name": "h"}]],
    )
    again = AgentSample.model_validate_json(sample.model_dump_json())
    assert again == sample
    assert again.expected_tool_calls == sample.expected_tool_calls


def test_a_table_cell_as_json_text_or_array_is_read() -> None:
    numpy = pytest.importorskip("numpy")
    cell = json.dumps(openai_trajectory())
    calls = numpy.array([{"name": "book", "args": {"city": "Paris"}}], dtype=object)
    sample = check_agent_sample(
        "trajectory_match", RowFields(messages=cell, reference_tool_calls=calls, response="x")
    )
    assert len(sample.tool_calls) == 3 and sample.expected_tool_calls is not None


@pytest.mark.parametrize(
    ("value", "field", "problem"),
    [
        ({"reference_tool_calls": []}, "messages", "is required but missing"),
        ({"messages": "hello"}, "messages", "must be a list of messages"),
        ({"messages": [{"content": "x"}]}, "messages[0]", "must have a 'role'"),
        ({"messages": [{"role": "robot"}]}, "messages[0].role", "not a chat role"),
        (
            {
                "messages": [
                    {"role": "assistant", "tool_calls": [{"function": {"arguments": "{}"}}]}
                ]
            },
            "messages[0].tool_calls[0].function.name",
            "must be the tool's name",
        ),
        (
            {"messages": [], "reference_tool_calls": [{"name": "f", "args": 3}]},
            "reference_tool_calls[0].args",
            "must be a JSON object",
        ),
        (
            {"messages": [], "reference_tool_calls": [], "reference_messages": []},
            "reference_tool_calls",
            "ambiguous",
        ),
        ({"messages": []}, "reference_tool_calls", "is required but missing"),
        ({"messages": [], "referense_tool_calls": []}, "referense_tool_calls", "not a field"),
        ({"messages": [], "reference_tool_calls": [], "user_input": 3}, "user_input", "a number"),
    ],
)
def test_bad_input_is_refused_naming_the_metric_and_the_field(
    value: dict, field: str, problem: str
) -> None:
    with pytest.raises(InvalidSampleError) as caught:
        check_agent_sample("trajectory_match", value, needs_expected=True)
    assert (caught.value.metric, caught.value.field) == ("trajectory_match", field)
    assert problem in caught.value.problem


def test_a_plain_sample_has_no_trajectory() -> None:
    from langchain_answer_metrics import Sample

    with pytest.raises(InvalidSampleError, match="field 'messages'"):
        check_agent_sample("tool_call_f1", Sample(response="x"))


def test_building_a_bad_sample_directly_is_a_validation_error() -> None:
    with pytest.raises(ValidationError, match="ambiguous"):
        AgentSample(messages=[], reference_tool_calls=[], reference_messages=[])
