"""A real LangGraph agent (a graph with a tool node running real Python tools, driven by a
scripted tool-calling chat model) is run, read back with AgentSample.from_langgraph from
its checkpointer, and scored."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from langchain_answer_metrics import AgentSample, ToolCallF1, TrajectoryMatch
from langchain_answer_metrics.agents.langgraph import ThreadNotReadableError

if TYPE_CHECKING:
    from langgraph.graph import MessagesState


@pytest.fixture(autouse=True)
def _needs_langgraph() -> Iterator[None]:
    # Imported by the tests, not while collecting: every test process collects this file
    # and langgraph costs it a third of a second.
    pytest.importorskip("langgraph")
    yield


FORECASTS = {"Paris": "sunny, 24 C", "Lyon": "rain, 17 C"}
BOOKINGS: list[tuple[str, int]] = []


@tool
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return FORECASTS.get(city, "unknown")


@tool
def book_hotel(city: str, nights: int) -> str:
    """Book a hotel."""
    BOOKINGS.append((city, nights))
    return f"booked {nights} nights in {city} (#{len(BOOKINGS)})"


class ScriptedToolCaller(BaseChatModel):
    """A chat model that calls tools as a script says: its n-th turn makes the
    script's n-th list of calls, made together (n: the AI messages with calls in its
    input, never the call order); after the script, it answers from the tool results."""

    script: list[list[dict[str, Any]]]

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-caller"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedToolCaller:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        turn = sum(isinstance(m, AIMessage) and bool(m.tool_calls) for m in messages)
        if turn < len(self.script):
            calls = [
                {"name": call["name"], "args": call["args"], "id": f"turn{turn}_{index}"}
                for index, call in enumerate(self.script[turn])
            ]
            reply = AIMessage("", tool_calls=calls)
        else:
            results = [m.content for m in messages if isinstance(m, ToolMessage)]
            reply = AIMessage("Done: " + "; ".join(map(str, results)))
        return ChatResult(generations=[ChatGeneration(message=reply)])


def agent_graph(script: list[list[dict[str, Any]]], checkpointer: Any = None) -> Any:
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    model = ScriptedToolCaller(script=script).bind_tools([get_weather, book_hotel])

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([get_weather, book_hotel]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer)


SCRIPT = [
    [
        {"name": "get_weather", "args": {"city": "Paris"}},
        {"name": "get_weather", "args": {"city": "Lyon"}},
    ],
    [{"name": "book_hotel", "args": {"city": "Paris", "nights": 2}}],
]
EXPECTED = [
    [
        {"name": "get_weather", "args": {"city": "Lyon"}},
        {"name": "get_weather", "args": {"city": "Paris"}},
    ],
    {"name": "book_hotel", "args": {"city": "Paris", "nights": 2}},
]


def test_a_real_agent_is_read_from_its_checkpointer_and_scored() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    graph = agent_graph(SCRIPT, checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "trip-1"}}
    before = len(BOOKINGS)
    graph.invoke(
        {"messages": [HumanMessage("Weather in Paris and Lyon, then book Paris.")]}, config
    )
    assert len(BOOKINGS) == before + 1  # the tool node ran the real tool

    sample = AgentSample.from_langgraph(graph, config, reference_tool_calls=EXPECTED)
    assert sample.user_input == "Weather in Paris and Lyon, then book Paris."
    assert [(c.call.render(), c.group, c.result) for c in sample.tool_calls] == [
        ("get_weather(city='Paris')", 0, "sunny, 24 C"),
        ("get_weather(city='Lyon')", 0, "rain, 17 C"),
        ("book_hotel(city='Paris', nights=2)", 1, f"booked 2 nights in Paris (#{before + 1})"),
    ]
    assert sample.final_answer is not None and sample.final_answer.startswith("Done: ")
    assert TrajectoryMatch(mode="strict").invoke(sample).score == 1.0
    assert ToolCallF1().invoke(sample).score == 1.0
    wrong = AgentSample.from_langgraph(
        graph,
        config,
        reference_tool_calls=[{"name": "book_hotel", "args": {"city": "Lyon", "nights": 2}}],
    )
    result = TrajectoryMatch(mode="superset").invoke(wrong)
    assert result.score == 0.0
    assert "book_hotel(city='Lyon', nights=2)" in result.reason


def test_a_subgraphs_calls_are_the_agents_calls_too() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    researcher = agent_graph([[{"name": "get_weather", "args": {"city": "Lyon"}}]])

    def research(state: MessagesState) -> dict[str, Any]:
        # The parent sees only the researcher's answer, not its calls.
        found = researcher.invoke({"messages": state["messages"]})
        return {"messages": [found["messages"][-1]]}

    booker = agent_graph([[{"name": "book_hotel", "args": {"city": "Lyon", "nights": 1}}]])

    def book(state: MessagesState) -> dict[str, Any]:
        return {"messages": [booker.invoke({"messages": state["messages"]})["messages"][-1]]}

    builder = StateGraph(MessagesState)
    builder.add_node("research", research)
    builder.add_node("book", book)
    builder.add_edge(START, "research")
    builder.add_edge("research", "book")
    builder.add_edge("book", END)
    parent = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "nested"}}
    parent.invoke({"messages": [HumanMessage("Is Lyon dry? Book a night.")]}, config)

    expected = [
        {"name": "get_weather", "args": {"city": "Lyon"}},
        {"name": "book_hotel", "args": {"city": "Lyon", "nights": 1}},
    ]
    sample = AgentSample.from_langgraph(parent, config, reference_tool_calls=expected)
    assert [c.call.name for c in sample.tool_calls] == ["get_weather", "book_hotel"]
    assert [c.result for c in sample.tool_calls] == [
        "rain, 17 C",
        f"booked 1 nights in Lyon (#{len(BOOKINGS)})",
    ]
    assert TrajectoryMatch(mode="strict").invoke(sample).score == 1.0
    alone = AgentSample.from_langgraph(
        parent, config, subgraphs=False, reference_tool_calls=expected
    )
    assert alone.tool_calls == []  # the parent's own state has only the answers
    assert TrajectoryMatch().invoke(alone).score == 0.0


def test_a_graph_without_a_checkpointer_or_a_thread_is_refused_clearly() -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    with pytest.raises(ThreadNotReadableError, match="no checkpointer"):
        AgentSample.from_langgraph(agent_graph(SCRIPT), {"configurable": {"thread_id": "x"}})
    graph = agent_graph(SCRIPT, checkpointer=InMemorySaver())
    with pytest.raises(ThreadNotReadableError, match="no thread id"):
        AgentSample.from_langgraph(graph, {})
    with pytest.raises(ThreadNotReadableError, match="has no messages"):
        AgentSample.from_langgraph(graph, {"configurable": {"thread_id": "never-ran"}})
