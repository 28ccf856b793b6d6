"""How the registry's metrics are built from models and settings: one builder per kind
of metric, shared by the registry lines of that kind (:mod:`.registry`).

Each builder takes the metric's class (imported when the metric is first built), the
models and the settings given (with their defaults)::

    >>> metric = judges_only(FactualCorrectness, MetricModels(judges=[judge]), {})
    >>> agent_judge(TrajectoryJudge, models, {"strictness": 1, "tool_result_chars": 500,
    ...     "max_trajectory_chars": 20000, "trajectory_output": "pass_fail"}).key
    'trajectory_judge'
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import langchain_answer_metrics.metrics.trajectory_settings as trajectory
from langchain_answer_metrics.metrics.aspects import ASPECTS
from langchain_answer_metrics.metrics.entries import MetricModels, Settings
from langchain_answer_metrics.metrics.settings import (
    MAX_TRAJECTORY_CHARS_SETTING,
    STRICTNESS,
    TOOL_RESULT_CHARS_SETTING,
)

if TYPE_CHECKING:
    from langchain_answer_metrics.metrics.base import AnswerMetric

__all__ = [
    "AGENT_JUDGE_SETTINGS",
    "AGENT_JUDGE_SIGNATURE",
    "agent_judge",
    "aspect_critic",
    "aspect_key",
    "judges_only",
    "named_aspect",
    "thread_metric",
    "trajectory_match",
    "with_embeddings",
]

AGENT_JUDGE_SETTINGS = (STRICTNESS, TOOL_RESULT_CHARS_SETTING, MAX_TRAJECTORY_CHARS_SETTING)
AGENT_JUDGE_SIGNATURE = {
    "strictness": "strictness",
    "tool_result_chars": "tool_result_chars",
    "max_trajectory_chars": "max_trajectory_chars",
}


def named_aspect(settings: Settings) -> str | None:
    """The built-in aspect asked for: ``aspect``; or, deprecated, a ``criterion`` that is
    an aspect's name (``criterion`` is otherwise always the user's own text)."""
    aspect, criterion = settings.get("aspect"), settings.get("criterion")
    if aspect is not None:
        if criterion is not None and criterion.strip():
            raise ValueError(
                f"aspect_critic takes a built-in aspect ({aspect!r}) or a criterion of your "
                "own, not both"
            )
        return str(aspect)
    if criterion in ASPECTS:
        warnings.warn(
            f"criterion={criterion!r} as the name of a built-in aspect is deprecated and "
            f"will be read as your own text from 0.3.0: use aspect={criterion!r} "
            f"(--aspect {criterion})",
            DeprecationWarning,
            stacklevel=5,
        )
        return str(criterion)
    return None


def judges_only(metric: type[Any], models: MetricModels, settings: Settings) -> AnswerMetric:
    """A metric built with the judges alone, and no setting."""
    built: AnswerMetric = metric(llm=list(models.judges))
    return built


def with_embeddings(metric: type[Any], models: MetricModels, settings: Settings) -> AnswerMetric:
    """SemanticSimilarity or AnswerCorrectness: the embedders (and judges), the baseline."""
    judges = {"llm": list(models.judges)} if "llm" in metric.model_fields else {}
    baseline = settings.get("rescale_baseline", models.embedding_baseline)
    built: AnswerMetric = metric(
        **judges, embeddings=list(models.embedders), rescale_baseline=baseline
    )
    return built


def aspect_critic(metric: type[Any], models: MetricModels, settings: Settings) -> AnswerMetric:
    aspect = named_aspect(settings)
    built: AnswerMetric = metric(
        llm=list(models.judges),
        criterion=ASPECTS[aspect] if aspect is not None else settings["criterion"],
        name=settings.get("aspect_name") or aspect or "aspect_critic",
        strictness=settings["strictness"],
    )
    return built


def aspect_key(settings: Settings) -> str:
    return settings.get("aspect_name") or named_aspect(settings) or "aspect_critic"


def trajectory_match(metric: type[Any], models: MetricModels, settings: Settings) -> AnswerMetric:
    """TrajectoryMatch or ToolCallF1: no model, the matching's settings."""
    built: AnswerMetric = metric(**trajectory.options(settings))
    return built


def agent_judge(metric: type[Any], models: MetricModels, settings: Settings) -> AnswerMetric:
    """A judged agent metric: its judges, its votes and its trajectory's budget (and
    TrajectoryJudge's output kind)."""
    own = {"output": settings["trajectory_output"]} if "trajectory_output" in settings else {}
    agent = {item.name: settings[item.name] for item in AGENT_JUDGE_SETTINGS}
    built: AnswerMetric = metric(llm=list(models.judges), **agent, **own)
    return built


def thread_metric(metric: type[Any], models: MetricModels, settings: Settings) -> AnswerMetric:
    """A conversation metric: its judges, its window (and TopicAdherence's topics)."""
    own = {"topics": settings.get("topics")} if "topics" in metric.model_fields else {}
    window = settings.get("conversation_window")
    built: AnswerMetric = metric(llm=list(models.judges), window=window, **own)
    return built
