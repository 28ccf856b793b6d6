"""The settings of the conversation metrics as a user gives them by name (the CLI's
``--topics "cooking;recipes"``, ``--conversation-window 4``, ``--turn-metric
faithfulness``), with how each is read from text.

    >>> topics("cooking; recipes;")
    ['cooking', 'recipes']
"""

from __future__ import annotations

from typing import Any

from langchain_answer_metrics.metrics.settings import positive_int


def topics(text: str) -> list[str]:
    """Topics separated by ``;`` (a topic may hold commas)."""
    found = [topic.strip() for topic in text.split(";") if topic.strip()]
    if not found:
        raise ValueError(f"{text!r} names no topic (separate topics with ';')")
    return found


def turn_window(text: str) -> int:
    """A number of earlier turns: 0, or a whole number of at least 1."""
    return 0 if text.strip() == "0" else positive_int(text)


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
    parse=positive_int,
    short="window",
)
TURN_METRIC: dict[str, Any] = dict(
    name="turn_metric",
    help="per_turn's single-turn metric, applied to every assistant turn (e.g. "
    "faithfulness, response_relevancy, aspect_critic)",
    metavar="METRIC",
    when_missing="needs {option} METRIC: the single-turn metric to apply per turn "
    "(e.g. {option} faithfulness)",
    short="metric",
)
TURN_WINDOW: dict[str, Any] = dict(
    name="turn_window",
    help="per_turn: how many previous turns go into each turn's question (default 0)",
    metavar="N",
    parse=turn_window,
    default=0,
    short="window",
)
