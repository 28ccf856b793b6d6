"""What a :func:`~.driver.simulate` run would ask the user model, asking it nothing.

The app is driven with the moves the replay cache holds; a scenario stops at its first
move that the cache lacks. When every move replays the count is exact (0); otherwise each
such scenario gives a range, from one request (the goal reached at once) to every move
left, the final goal check included.

    >>> estimate_simulation(graph, scenarios, cache="simulated.json").requests_high
    0
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from langchain_answer_metrics.judging.sync import run_sync
from langchain_answer_metrics.simulation.driver import Simulation, WouldAsk
from langchain_answer_metrics.simulation.replay import ReplayCache
from langchain_answer_metrics.simulation.scenarios import Scenario, as_scenarios


class ScenarioEstimate(BaseModel):
    """What one scenario would ask the user model: nothing if every move replays; else
    from ``requests_low`` to ``requests_high`` requests, from the first move missing."""

    scenario: str
    replayed: int
    requests_low: int
    requests_high: int
    first_asked: int | None = None


class SimulationEstimate(BaseModel):
    """The user model's requests a :func:`simulate` run would send (:func:`estimate_simulation`).

    Attributes:
        scenarios: per scenario, the moves replayed and the requests it would send.
        requests_low: the fewest requests the run would send (exact when it equals
            ``requests_high``: 0 when every move replays from the cache).
        requests_high: the most.
    """

    scenarios: list[ScenarioEstimate]

    @property
    def requests_low(self) -> int:
        return sum(item.requests_low for item in self.scenarios)

    @property
    def requests_high(self) -> int:
        return sum(item.requests_high for item in self.scenarios)


async def aestimate_simulation(
    app: Any,
    scenarios: Iterable[Scenario | Mapping[str, Any]],
    *,
    max_turns: int = 6,
    seed: int = 0,
    cache: str | Path | None = None,
    stop_phrases: Sequence[str] = (),
) -> SimulationEstimate:
    """Async :func:`estimate_simulation`."""
    chosen = as_scenarios(scenarios)
    simulation = Simulation(
        app,
        None,
        max_turns=max_turns,
        seed=seed,
        cache=ReplayCache(cache),
        stop_phrases=stop_phrases,
    )
    estimates = []
    for scenario in chosen:
        try:
            conversation = await simulation.run(scenario)
        except WouldAsk as missing:
            # From the first move missing, every later move may be asked, the final goal
            # check included (turn max_turns + 1); the goal may also be reached at once.
            high = simulation.max_turns + 2 - missing.turn
            estimates.append(
                ScenarioEstimate(
                    scenario=scenario.name,
                    replayed=max(0, missing.turn - 1 - len(scenario.first_turns)),
                    requests_low=1,
                    requests_high=high,
                    first_asked=missing.turn,
                )
            )
            continue
        estimates.append(
            ScenarioEstimate(
                scenario=scenario.name,
                replayed=conversation.replayed,
                requests_low=0,
                requests_high=0,
            )
        )
    return SimulationEstimate(scenarios=estimates)


def estimate_simulation(
    app: Any,
    scenarios: Iterable[Scenario | Mapping[str, Any]],
    *,
    max_turns: int = 6,
    seed: int = 0,
    cache: str | Path | None = None,
    stop_phrases: Sequence[str] = (),
) -> SimulationEstimate:
    """The user model's requests :func:`simulate` would send, asking it nothing: the app
    is driven with the moves the cache holds, and a scenario stops at its first move that
    the cache lacks. Exact when every move replays (0 requests); else a range per
    scenario. The app itself is called, as the run would call it.

    Example:
        >>> estimate_simulation(graph, scenarios, cache="simulated.json").requests_high
        0
    """
    return run_sync(
        aestimate_simulation(
            app, scenarios, max_turns=max_turns, seed=seed, cache=cache, stop_phrases=stop_phrases
        )
    )
