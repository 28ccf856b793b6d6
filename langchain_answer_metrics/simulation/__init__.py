"""A user simulator that replays: conversations with your app, ready to score, that a CI
gate can rerun without flicker (:func:`simulate`, :class:`Scenario`).

    >>> result = simulate(app, [Scenario(name="refund", goal="Get a refund")],
    ...                   user_llm=user_model, cache="simulated.json")
    >>> result.samples[0].goal
    'Get a refund'
"""

from langchain_answer_metrics.simulation.driver import (
    SimulatedConversation,
    SimulationResult,
    asimulate,
    simulate,
)
from langchain_answer_metrics.simulation.scenarios import (
    Scenario,
    ScenarioError,
    as_scenarios,
    load_scenarios,
)

__all__ = [
    "Scenario",
    "ScenarioError",
    "SimulatedConversation",
    "SimulationResult",
    "as_scenarios",
    "asimulate",
    "load_scenarios",
    "simulate",
]
