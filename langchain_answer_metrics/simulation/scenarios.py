"""Scenarios for the user simulator: who the simulated user is and what they want.

>>> as_scenarios([{"name": "refund", "goal": "Get a refund for order 42"}])[0].persona
'A customer of the app, polite and brief.'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

DEFAULT_PERSONA = "A customer of the app, polite and brief."


class Scenario(BaseModel):
    """One conversation to simulate.

    Attributes:
        name: the scenario's name: its thread id, its rows and its cache entries say it.
        goal: what the simulated user wants from the app; it becomes the sample's ``goal``.
        persona: who the simulated user is and how they write (their language too).
        first_turns: fixed first user messages, sent as written before the simulated
            user takes over.

    Example:
        >>> Scenario(name="refund", goal="Get a refund for order 42",
        ...          persona="An angry customer who writes in French.")
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    goal: str = Field(min_length=1)
    persona: str = DEFAULT_PERSONA
    first_turns: tuple[str, ...] = ()

    @field_validator("name", "goal", "persona")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


class ScenarioError(ValueError):
    """A scenario that cannot be read; says which one and which field."""


def as_scenarios(value: Iterable[Scenario | Mapping[str, Any]]) -> list[Scenario]:
    """Scenarios from :class:`Scenario` s or plain dicts, checked, names unique."""
    scenarios: list[Scenario] = []
    for position, item in enumerate(value):
        if isinstance(item, Scenario):
            scenarios.append(item)
            continue
        if not isinstance(item, Mapping):
            raise ScenarioError(
                f"scenarios[{position}] must be a mapping, got {type(item).__name__}"
            )
        try:
            scenarios.append(Scenario.model_validate(dict(item)))
        except ValidationError as error:
            problem = error.errors()[0]
            where = ".".join(str(part) for part in problem["loc"])
            raise ScenarioError(f"scenarios[{position}].{where}: {problem['msg']}") from None
    names = [scenario.name for scenario in scenarios]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ScenarioError(f"scenario names must be unique: {', '.join(repeated)} repeat")
    if not scenarios:
        raise ScenarioError("no scenario given")
    return scenarios


def load_scenarios(path: str | Path) -> list[Scenario]:
    """Scenarios from a YAML (or JSON) file: a list of them, or ``{"scenarios": [...]}``."""
    import yaml

    text = Path(path).read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ScenarioError(f"{path}: not valid YAML ({error})") from None
    if isinstance(data, Mapping):
        data = data.get("scenarios")
    if not isinstance(data, list):
        raise ScenarioError(f"{path}: expected a list of scenarios (or a 'scenarios:' key)")
    return as_scenarios(data)
