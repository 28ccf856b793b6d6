"""simulate: drive a conversation with the user's app, a simulated user on the other side.

Per scenario: the fixed ``first_turns`` are sent as written, then the simulated user (a
chat model asked through the one structured-output mechanism, step ``simulate_user``)
writes each next message, or says that its goal is reached. A conversation stops when the
goal is reached, at ``max_turns`` user messages, or when a stop phrase appears in either
side's message. The app is called once per user message:

- a LangGraph graph (with a checkpointer) gets the new user message on the scenario's
  thread (``{"messages": [message]}``, ``configurable.thread_id``); the thread's messages,
  tool calls and subgraphs' included, are read back from its checkpointer at the end;
- a Runnable or any callable gets the conversation so far as LangChain messages and
  returns an ``AIMessage``, a string, or a dict with ``messages`` (what it added) or an
  ``output`` / ``answer``.

Each scenario runs on a fresh thread whose id comes from the scenario's name and the seed
(with a counter, should a kept checkpointer already hold that thread). The simulated
user's moves are kept in the replay cache (:mod:`.replay`): a rerun whose app replies as
before asks the user model nothing; a changed reply re-asks only the turns after it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langchain_answer_metrics.conversations.sample import ConversationSample
from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.judging.judges import Judge, as_judges
from langchain_answer_metrics.judging.limits import DEFAULT_SCENARIOS_AT_ONCE
from langchain_answer_metrics.judging.prompt_set import DEFAULT_STEP_PROMPTS
from langchain_answer_metrics.judging.steps.simulated_user import (
    SIMULATE_USER,
    SimulatedUserTurn,
    render_so_far,
)
from langchain_answer_metrics.judging.structured import ask_structured
from langchain_answer_metrics.judging.sync import run_sync
from langchain_answer_metrics.simulation.apps import call_app, is_graph, thread_id_for
from langchain_answer_metrics.simulation.replay import ReplayCache, move_key
from langchain_answer_metrics.simulation.scenarios import Scenario, as_scenarios

Stopped = Literal["goal_reached", "max_turns", "stop_phrase"]


class SimulatedConversation(BaseModel):
    """One scenario's simulated conversation.

    Attributes:
        scenario: the scenario's name.
        thread_id: the app's thread it ran on.
        sample: the conversation, ready to score (its ``goal`` is the scenario's).
        stopped: why it ended: the goal reached, ``max_turns``, or a stop phrase.
        user_turns: the user messages sent (fixed first turns included).
        replayed: the simulated user's moves read from the replay cache.
        asked: the simulated user's moves asked of the user model.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    scenario: str
    thread_id: str
    sample: ConversationSample
    stopped: Stopped
    user_turns: int
    replayed: int = 0
    asked: int = 0


class SimulationResult(BaseModel):
    """What :func:`simulate` returns: a conversation per scenario, in scenario order.

    Example:
        >>> result = simulate(app, scenarios, user_llm=user_model, cache="sim.json")
        >>> result.turns_replayed, result.turns_asked
        (9, 0)
    """

    conversations: list[SimulatedConversation]
    usage: TokenUsage = Field(default_factory=TokenUsage)

    @property
    def samples(self) -> list[ConversationSample]:
        """The conversations as samples, ready to score."""
        return [conversation.sample for conversation in self.conversations]

    @property
    def turns_replayed(self) -> int:
        """The simulated user's moves replayed from the cache, over every scenario."""
        return sum(conversation.replayed for conversation in self.conversations)

    @property
    def turns_asked(self) -> int:
        """The simulated user's moves asked of the user model, over every scenario."""
        return sum(conversation.asked for conversation in self.conversations)


class WouldAsk(Exception):
    """A move the cache does not hold, met while only replaying."""

    def __init__(self, turn: int) -> None:
        self.turn = turn


class Simulation:
    """One simulate run's moves: the app, the user model (None: only replaying), the
    cache, and what was spent."""

    def __init__(
        self,
        app: Any,
        user: Judge | None,
        *,
        max_turns: int,
        seed: int,
        cache: ReplayCache,
        stop_phrases: Sequence[str],
    ) -> None:
        self.app, self.user, self.max_turns, self.seed = app, user, max_turns, seed
        self.cache, self.stop_phrases = cache, [phrase.lower() for phrase in stop_phrases]
        self.usage = TokenUsage()

    def _stops(self, text: str) -> bool:
        lowered = text.lower()
        return any(phrase in lowered for phrase in self.stop_phrases)

    async def _move(
        self, scenario: Scenario, turn: int, so_far: list[tuple[str, str]]
    ) -> tuple[SimulatedUserTurn, bool]:
        """The user's next move, and whether it was replayed."""
        key = move_key(
            name=scenario.name,
            persona=scenario.persona,
            goal=scenario.goal,
            seed=self.seed,
            turn=turn,
            so_far=so_far,
        )
        kept = self.cache.get(key)
        if kept is not None:
            return SimulatedUserTurn.model_validate(kept), True
        if self.user is None:  # only replaying, for an estimate
            raise WouldAsk(turn)
        values = {
            "persona": scenario.persona,
            "goal": scenario.goal,
            "conversation": render_so_far(so_far),
        }
        messages = DEFAULT_STEP_PROMPTS[SIMULATE_USER].messages(SIMULATE_USER, values)
        reply = await ask_structured(self.user, schema=SimulatedUserTurn, messages=messages)
        self.usage = self.usage.add(reply.usage)
        self.cache.put(key, reply.parsed.model_dump())
        return reply.parsed, False

    async def run(self, scenario: Scenario) -> SimulatedConversation:
        thread_id = thread_id_for(self.app, scenario, self.seed)
        so_far: list[tuple[str, str]] = []
        messages: list[Any] = []
        replayed = asked = 0
        stopped: Stopped = "max_turns"
        for turn in range(1, self.max_turns + 1):
            if turn <= len(scenario.first_turns):
                text = scenario.first_turns[turn - 1]
            else:
                move, was_replayed = await self._move(scenario, turn, so_far)
                replayed += was_replayed
                asked += not was_replayed
                if move.goal_reached or not move.message.strip():
                    stopped = "goal_reached"
                    break
                text = move.message
            reply, added = await call_app(self.app, messages, text, thread_id)
            messages += added
            so_far += [("user", text), ("assistant", reply)]
            if self._stops(text) or self._stops(reply):
                stopped = "stop_phrase"
                break
        else:
            # The goal check after the last reply: reached with the last allowed turn?
            move, was_replayed = await self._move(scenario, self.max_turns + 1, so_far)
            replayed += was_replayed
            asked += not was_replayed
            stopped = "goal_reached" if move.goal_reached else "max_turns"
        if is_graph(self.app):
            from langchain_answer_metrics.agents.langgraph import thread_messages

            messages = thread_messages(self.app, {"configurable": {"thread_id": thread_id}})
        sample = ConversationSample(messages=messages, goal=scenario.goal)
        return SimulatedConversation(
            scenario=scenario.name,
            thread_id=thread_id,
            sample=sample,
            stopped=stopped,
            user_turns=len(so_far) // 2,
            replayed=replayed,
            asked=asked,
        )


async def asimulate(
    app: Any,
    scenarios: Iterable[Scenario | Mapping[str, Any]],
    *,
    user_llm: Any,
    max_turns: int = 6,
    seed: int = 0,
    cache: str | Path | None = None,
    stop_phrases: Sequence[str] = (),
    max_concurrency: int = DEFAULT_SCENARIOS_AT_ONCE,
) -> SimulationResult:
    """Async :func:`simulate`."""
    if max_turns < 1:
        raise ValueError(f"simulate: max_turns must be at least 1, got {max_turns}")
    chosen = as_scenarios(scenarios)
    judges = as_judges(user_llm)
    if len(judges) != 1:
        raise ValueError("simulate: user_llm is one chat model (the simulated user)")
    simulation = Simulation(
        app,
        judges[0],
        max_turns=max_turns,
        seed=seed,
        cache=ReplayCache(cache),
        stop_phrases=stop_phrases,
    )
    slots = asyncio.Semaphore(max_concurrency)

    async def one(scenario: Scenario) -> SimulatedConversation:
        async with slots:
            return await simulation.run(scenario)

    conversations = await asyncio.gather(*(one(scenario) for scenario in chosen))
    return SimulationResult(conversations=list(conversations), usage=simulation.usage)


def simulate(
    app: Any,
    scenarios: Iterable[Scenario | Mapping[str, Any]],
    *,
    user_llm: Any,
    max_turns: int = 6,
    seed: int = 0,
    cache: str | Path | None = None,
    stop_phrases: Sequence[str] = (),
    max_concurrency: int = DEFAULT_SCENARIOS_AT_ONCE,
) -> SimulationResult:
    """Simulate a conversation with ``app`` per scenario, a chat model playing the user.

    Args:
        app: a compiled LangGraph graph with a checkpointer, a Runnable that takes
            messages, or any callable ``messages -> reply``.
        scenarios: :class:`Scenario` s or dicts (``name``, ``goal``, ``persona``,
            ``first_turns``).
        user_llm: the chat model that plays the user (a :class:`Judge` or a chat model).
        max_turns: the most user messages per conversation.
        seed: part of each thread id and of each replay key: another seed, other moves.
        cache: the replay cache file (None: nothing kept; a rerun asks again).
        stop_phrases: a conversation ends when either side writes one (any case).
        max_concurrency: scenarios simulated at once.

    Returns:
        A :class:`SimulationResult`: ``.samples`` to score, and the turns replayed and asked.

    Example:
        >>> result = simulate(graph, [{"name": "refund", "goal": "Get a refund"}],
        ...                   user_llm=ChatOpenAI(model="gpt-4o-mini"), cache="sim.json")
        >>> ConversationCompleteness(llm=judge).batch(result.samples)
    """
    return run_sync(
        asimulate(
            app,
            scenarios,
            user_llm=user_llm,
            max_turns=max_turns,
            seed=seed,
            cache=cache,
            stop_phrases=stop_phrases,
            max_concurrency=max_concurrency,
        ),
        max_concurrency=max_concurrency,
    )
