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
from langchain_answer_metrics.simulation.estimate import (
    ScenarioEstimate,
    SimulationEstimate,
    aestimate_simulation,
    estimate_simulation,
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
    "ScenarioEstimate",
    "SimulatedConversation",
    "SimulationEstimate",
    "SimulationResult",
    "aestimate_simulation",
    "as_scenarios",
    "asimulate",
    "estimate_simulation",
    "load_scenarios",
    "simulate",
]
