"""The user simulator (issue 29): a real LangGraph chat graph with a checkpointer, driven by
a simulated user (ChatOpenAI against the local server, whose toy judge plays the user),
three scenarios, then scored; the rerun replays with zero simulator requests counted at
the server, and a changed app reply re-asks only the later turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_openai import ChatOpenAI
from support import judge_for

from langchain_answer_metrics import (
    ConversationCompleteness,
    KnowledgeRetention,
    Scenario,
    simulate,
)
from langchain_answer_metrics.simulation import ScenarioError, load_scenarios
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

langgraph = pytest.importorskip("langgraph")
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402

SCENARIOS = [
    Scenario(name="booking", goal="Book a table for two at Il Margutta"),
    Scenario(
        name="vague",
        goal="Book a table at Il Margutta",
        first_turns=("Hi there",),
        persona="A hurried diner.",
    ),
    {"name": "weather", "goal": "What is the weather in Paris"},
]


def restaurant_graph(*, asks_for_party: str = "For how many people?") -> Any:
    """A chat graph with one node and a checkpointer: books tables, tells the weather."""

    def assistant(state: MessagesState) -> dict[str, Any]:
        asked = str(state["messages"][-1].content).lower()
        if "table" in asked and ("two" in asked or "2" in asked):
            reply = "Booked a table for two at Il Margutta at 8 pm."
        elif "table" in asked:
            reply = asks_for_party
        elif "weather" in asked:
            reply = "Sunny weather in Paris today."
        else:
            reply = "Hello! How can I help you today?"
        return {"messages": [AIMessage(reply)]}

    builder = StateGraph(MessagesState)
    builder.add_node("assistant", assistant)
    builder.add_edge(START, "assistant")
    return builder.compile(checkpointer=InMemorySaver())


def test_three_scenarios_are_simulated_scored_and_replayed(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    cache = tmp_path / "simulated.json"
    first = simulate(
        restaurant_graph(),
        SCENARIOS,
        user_llm=judge_for(server, "user-sim"),
        max_turns=4,
        cache=cache,
    )
    by_name = {conversation.scenario: conversation for conversation in first.conversations}
    assert by_name["booking"].stopped == "goal_reached" and by_name["booking"].user_turns == 1
    assert by_name["weather"].stopped == "goal_reached"
    assert by_name["vague"].stopped == "max_turns" and by_name["vague"].user_turns == 4
    assert by_name["vague"].sample.turns[0].user == "Hi there"  # the fixed first turn
    assert by_name["booking"].thread_id == "simulated-booking-seed0"
    assert [sample.goal for sample in first.samples] == [
        "Book a table for two at Il Margutta",
        "Book a table at Il Margutta",
        "What is the weather in Paris",
    ]
    # Every move of the simulated user was asked, each one request at the server.
    assert first.turns_replayed == 0
    assert first.turns_asked == server.chat_requests == 2 + 4 + 2
    assert first.usage.requests == first.turns_asked

    scored = ConversationCompleteness(llm=judge_for(server, "user-sim")).batch(first.samples)
    assert [result.score for result in scored] == pytest.approx([1.0, 0.0, 1.0], abs=0.01)
    retention = KnowledgeRetention(llm=judge_for(server, "user-sim")).invoke(first.samples[1])
    assert retention.score is not None

    # The rerun, on a fresh graph with the same replies, asks the user model nothing.
    server.reset()
    again = simulate(
        restaurant_graph(),
        SCENARIOS,
        user_llm=judge_for(server, "user-sim"),
        max_turns=4,
        cache=cache,
    )
    assert server.chat_requests == 0
    assert again.turns_asked == 0 and again.turns_replayed == first.turns_asked
    assert [c.sample.messages for c in again.conversations] == [
        c.sample.messages for c in first.conversations
    ]

    # A changed reply (the vague scenario's turn 2) re-asks only the moves after it.
    server.reset()
    changed = simulate(
        restaurant_graph(asks_for_party="How many guests?"),
        SCENARIOS,
        user_llm=judge_for(server, "user-sim"),
        max_turns=4,
        cache=cache,
    )
    vague = next(c for c in changed.conversations if c.scenario == "vague")
    # Moves 2 (after the greeting) replays; moves 3, 4 and the final goal check follow
    # the changed reply and are asked anew; the other scenarios replay whole.
    assert (vague.replayed, vague.asked) == (1, 3)
    assert changed.turns_asked == server.chat_requests == 3


def test_runnables_and_callables_are_apps_too(server: LocalOpenAIServer) -> None:
    def app(messages: list[Any]) -> str:
        assert isinstance(messages[-1], HumanMessage)
        return "Sunny weather in Paris today."

    result = simulate(
        app,
        [{"name": "weather", "goal": "What is the weather in Paris"}],
        user_llm=judge_for(server, "user-sim"),
    )
    sample = result.samples[0]
    assert [turn.reply for turn in sample.turns] == ["Sunny weather in Paris today."]
    assert result.conversations[0].stopped == "goal_reached"


def test_a_stop_phrase_ends_the_conversation(server: LocalOpenAIServer) -> None:
    def app(messages: list[Any]) -> str:
        return "Let me transfer you to a HUMAN AGENT."

    result = simulate(
        app,
        [{"name": "handoff", "goal": "Cancel my subscription"}],
        user_llm=judge_for(server, "user-sim"),
        stop_phrases=["human agent"],
        max_turns=5,
    )
    assert result.conversations[0].stopped == "stop_phrase"
    assert result.conversations[0].user_turns == 1


def test_scenarios_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"scenarios\[0\]\.goal"):
        simulate(lambda m: "x", [{"name": "a"}], user_llm=ChatOpenAI(model="m", api_key="x"))
    with pytest.raises(ScenarioError, match="unique: a repeat"):
        simulate(
            lambda m: "x",
            [{"name": "a", "goal": "g"}, {"name": "a", "goal": "h"}],
            user_llm=ChatOpenAI(model="m", api_key="x"),
        )
    path = tmp_path / "scenarios.yaml"
    path.write_text("scenarios:\n  - name: refund\n    goal: Get a refund\n", encoding="utf-8")
    assert load_scenarios(path) == [Scenario(name="refund", goal="Get a refund")]


APP_MODULE = """
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

def assistant(state: MessagesState) -> dict:
    asked = state["messages"][-1].content.lower()
    if "table" in asked:
        reply = "Booked a table for two at Il Margutta."
    else:
        reply = "Hello! How can I help?"
    return {"messages": [AIMessage(reply)]}

builder = StateGraph(MessagesState)
builder.add_node("assistant", assistant)
builder.add_edge(START, "assistant")
graph = builder.compile(checkpointer=InMemorySaver())
"""


def test_the_cli_simulates_writes_threads_and_replays(
    server: LocalOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from langchain_answer_metrics.cli.command import main

    (tmp_path / "sim_app.py").write_text(APP_MODULE, encoding="utf-8")
    (tmp_path / "scenarios.yaml").write_text(
        "scenarios:\n"
        "  - name: booking\n    goal: Book a table for two at Il Margutta\n"
        "  - name: greeting-first\n    goal: Book a table at Il Margutta\n"
        "    first_turns: ['Hi!']\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    argv = [
        "simulate",
        "scenarios.yaml",
        "--app",
        "sim_app:graph",
        "--out",
        "threads.jsonl",
        "--cache",
        "sim.json",
        "--base-url",
        server.base_url,
        "--model",
        "user-sim",
    ]
    assert main(argv) == 0
    assert "2 conversations (2 goal reached)" in capsys.readouterr().err
    rows = [json.loads(line) for line in (tmp_path / "threads.jsonl").read_text().splitlines()]
    assert [row["scenario"] for row in rows] == ["booking", "greeting-first"]
    assert rows[1]["messages"][0] == {"role": "user", "content": "Hi!"}
    assert rows[0]["goal"] == "Book a table for two at Il Margutta"
    asked = server.chat_requests
    assert asked == 4
    # The rerun replays every move: nothing reaches the server.
    assert main(argv) == 0
    assert "0 moves asked, 4 replayed" in capsys.readouterr().err
    assert server.chat_requests == asked
    # A file that is not a simulate output is never overwritten.
    (tmp_path / "notes.txt").write_text("my notes\n", encoding="utf-8")
    assert main([*argv[:4], "--out", "notes.txt", *argv[6:]]) == 2
    assert "not overwritten" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "my notes\n"
    # The estimate replays the cache: exact, and nothing is sent.
    assert main([*argv[:4], "--estimate", *argv[6:]]) == 0
    assert "4 moves replay from the cache; 0 requests" in capsys.readouterr().out
    assert server.chat_requests == asked
    assert main([*argv[:4], "--estimate", "--seed", "7", *argv[6:]]) == 0
    assert "0 moves replay from the cache; 2-13 requests" in capsys.readouterr().out
    assert server.chat_requests == asked
    assert main(["simulate", "scenarios.yaml", "--app", "nope", "--out", "x.jsonl"]) == 2
    assert "expected MODULE:ATTRIBUTE" in capsys.readouterr().err
