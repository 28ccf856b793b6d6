"""The settings of the conversation metrics as a user gives them by name (the CLI's
``--topics "cooking;recipes"``, ``--conversation-window 4``, ``--turn-metric
faithfulness``), with how each is read from text.

    >>> topics("cooking; recipes;")
    ['cooking', 'recipes']
"""

from __future__ import annotations

from typing import Any


def topics(text: str) -> list[str]:
    """Topics separated by ``;`` (a topic may hold commas)."""
    found = [topic.strip() for topic in text.split(";") if topic.strip()]
    if not found:
        raise ValueError(f"{text!r} names no topic (separate topics with ';')")
    return found


def window(text: str) -> int:
    """A number of turns, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise ValueError(f"{text} must be at least 1")
    return value


def turn_window(text: str) -> int:
    """A number of earlier turns, at least 0."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise ValueError(f"{text} must be at least 0")
    return value


# The registry's MetricSetting arguments (the registry builds them: it imports this module).
TOPICS: dict[str, Any] = dict(
    name="topics",
    help="topic_adherence's topics, separated by ';' (a sample's own topics win)",
    metavar="TOPIC[;TOPIC...]",
    parse=topics,
)
CONVERSATION_WINDOW: dict[str, Any] = dict(
    name="conversation_window",
    help="the conversation metrics judge only the last N assistant turns (the earlier "
    "ones are shown in part); default: the whole thread",
    metavar="N",
    parse=window,
)
TURN_METRIC: dict[str, Any] = dict(
    name="turn_metric",
    help="per_turn's single-turn metric, applied to every assistant turn (e.g. "
    "faithfulness, response_relevancy, aspect_critic)",
    metavar="METRIC",
    when_missing="needs {option} METRIC: the single-turn metric to apply per turn "
    "(e.g. {option} faithfulness)",
)
TURN_WINDOW: dict[str, Any] = dict(
    name="turn_window",
    help="per_turn: how many previous turns go into each turn's question (default 0)",
    metavar="N",
    parse=turn_window,
    default=0,
)
