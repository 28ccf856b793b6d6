"""Every metric the package offers, declared once.

    >>> entry = METRICS["aspect_critic"]
    >>> entry.needs_judge, entry.required_fields
    (True, ('response',))
    >>> entry.build(MetricModels(judges=judges), {"aspect": "harmlessness"}).key
    'harmlessness'

Per metric: its key and class (the class's ``metric_key`` and ``required_fields`` are
the facts; they are read here, not repeated), the models it needs (read from the class:
a judge panel for ``llm=``, embedding models for ``embeddings=``), the settings a user
may give it by name, with how to read each from text, and how to build it from the
models and those settings. The faces read this list instead of keeping their own: the
``answer-metrics`` command offers these metrics and turns each setting into a flag
(``aspect_name`` is ``--aspect-name``).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_answer_metrics.metrics import conversation_settings as conversation
from langchain_answer_metrics.metrics import trajectory_settings as trajectory
from langchain_answer_metrics.metrics.aspects import ASPECTS
from langchain_answer_metrics.metrics.entries import (
    MetricClassRef,
    MetricEntry,
    MetricModels,
    Settings,
)
from langchain_answer_metrics.metrics.settings import (
    ASPECT,
    ASPECT_NAME,
    CRITERION,
    MAX_TRAJECTORY_CHARS_SETTING,
    NOT_GIVEN,
    RESCALE_BASELINE,
    STRICTNESS,
    TOOL_RESULT_CHARS_SETTING,
    TRAJECTORY_OUTPUT_SETTING,
    MetricSetting,
    positive_int,
    unit_interval,
)

__all__ = [
    "METRICS",
    "METRIC_NAMES",
    "NOT_GIVEN",
    "MetricClassRef",
    "MetricEntry",
    "MetricModels",
    "MetricSetting",
    "metric_settings",
    "positive_int",
    "register",
    "unit_interval",
]

if TYPE_CHECKING:
    from langchain_answer_metrics.core.sample import SampleField
    from langchain_answer_metrics.metrics.base import AnswerMetric

TRAJECTORY_MODE = MetricSetting(**trajectory.TRAJECTORY_MODE)
TOOL_ARGS = MetricSetting(**trajectory.TOOL_ARGS)
TOOL_ARGS_OVERRIDES = MetricSetting(**trajectory.TOOL_ARGS_OVERRIDES)
TOPICS = MetricSetting(**conversation.TOPICS)
CONVERSATION_WINDOW = MetricSetting(**conversation.CONVERSATION_WINDOW)
TURN_METRIC = MetricSetting(**conversation.TURN_METRIC)
TURN_WINDOW = MetricSetting(**conversation.TURN_WINDOW)
_AGENT_JUDGE_SETTINGS = (STRICTNESS, TOOL_RESULT_CHARS_SETTING, MAX_TRAJECTORY_CHARS_SETTING)
_AGENT_JUDGE_SIGNATURE = {
    "strictness": "strictness",
    "tool_result_chars": "tool_result_chars",
    "max_trajectory_chars": "max_trajectory_chars",
}

# --------------------------------------------------------------------------- the list


def _named_aspect(settings: Settings) -> str | None:
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
            stacklevel=4,
        )
        return str(criterion)
    return None


def _builtin(
    key: str, name: str, *fields: SampleField, judge: bool = True, embed: bool = False
) -> MetricClassRef:
    """A built-in metric: its module is named after its key."""
    return MetricClassRef(
        f"langchain_answer_metrics.metrics.{key}:{name}", key, fields, judge, embed
    )


SEMANTIC_SIMILARITY = _builtin(
    "semantic_similarity", "SemanticSimilarity", "response", "reference", judge=False, embed=True
)
ANSWER_CORRECTNESS = _builtin(
    "answer_correctness", "AnswerCorrectness", "response", "reference", embed=True
)
ASPECT_CRITIC = _builtin("aspect_critic", "AspectCritic", "response")
TRAJECTORY_MATCH = _builtin("trajectory_match", "TrajectoryMatch", judge=False)
TOOL_CALL_F1 = _builtin("tool_call_f1", "ToolCallF1", judge=False)
AGENT_GOAL_ACCURACY = _builtin("agent_goal_accuracy", "AgentGoalAccuracy")
TRAJECTORY_JUDGE = _builtin("trajectory_judge", "TrajectoryJudge")
TOPIC_ADHERENCE = _builtin("topic_adherence", "TopicAdherence")
PER_TURN = _builtin("per_turn", "PerTurn", judge=False)


def _thread_metric(metric: MetricClassRef) -> MetricEntry:
    """A conversation metric's entry: its judges and its window."""
    return MetricEntry(
        metric,  # type: ignore[arg-type]
        lambda models, settings: metric.load()(
            llm=list(models.judges), window=settings.get("conversation_window")
        ),
        settings=(CONVERSATION_WINDOW,),
        signature={"window": "window"},
    )


def _per_turn(models: MetricModels, settings: Settings) -> AnswerMetric:
    from langchain_answer_metrics.metrics.per_turn import per_turn

    name = settings["turn_metric"]
    entry = METRICS.get(name)
    if entry is None or entry.key == PER_TURN.key:
        raise ValueError(f"per_turn: {name!r} is not a single-turn metric ({', '.join(METRICS)})")
    return per_turn(entry.build(models, settings), window=settings["turn_window"])


def _per_turn_key(settings: Settings) -> str:
    name = settings.get("turn_metric") or "metric"
    entry = METRICS.get(name)
    return f"{entry.result_key(settings) if entry else name}_per_turn"


def _aspect_key(settings: Settings) -> str:
    return settings.get("aspect_name") or _named_aspect(settings) or ASPECT_CRITIC.key


def _aspect_critic(models: MetricModels, settings: Settings) -> AnswerMetric:
    aspect = _named_aspect(settings)
    return ASPECT_CRITIC.load()(
        llm=list(models.judges),
        criterion=ASPECTS[aspect] if aspect is not None else settings["criterion"],
        name=settings.get("aspect_name") or aspect or ASPECT_CRITIC.key,
        strictness=settings["strictness"],
    )


def _baseline_of(models: MetricModels, settings: Settings) -> float | None:
    return settings.get("rescale_baseline", models.embedding_baseline)


def _judged(metric: MetricClassRef) -> MetricEntry:
    """The entry of a metric built with the judges alone, and no setting."""
    return MetricEntry(
        metric,  # type: ignore[arg-type]
        lambda models, settings: metric.load()(llm=list(models.judges)),
    )


_ENTRIES: tuple[MetricEntry, ...] = (
    MetricEntry(
        SEMANTIC_SIMILARITY,  # type: ignore[arg-type]
        lambda models, settings: SEMANTIC_SIMILARITY.load()(
            embeddings=list(models.embedders),
            rescale_baseline=_baseline_of(models, settings),
        ),
        settings=(RESCALE_BASELINE,),
        signature={"baseline": "rescale_baseline"},
    ),
    _judged(_builtin("factual_correctness", "FactualCorrectness", "response", "reference")),
    MetricEntry(
        ANSWER_CORRECTNESS,  # type: ignore[arg-type]
        lambda models, settings: ANSWER_CORRECTNESS.load()(
            llm=list(models.judges),
            embeddings=list(models.embedders),
            rescale_baseline=_baseline_of(models, settings),
        ),
        settings=(RESCALE_BASELINE,),
        signature={"baseline": "rescale_baseline"},
    ),
    _judged(_builtin("faithfulness", "Faithfulness", "response", "retrieved_contexts")),
    MetricEntry(
        ASPECT_CRITIC,  # type: ignore[arg-type]
        _aspect_critic,
        settings=(CRITERION, ASPECT, ASPECT_NAME, STRICTNESS),
        signature={"criterion": "criterion", "strictness": "strictness"},
        key_from=_aspect_key,
    ),
    _judged(_builtin("context_recall", "ContextRecall", "reference", "retrieved_contexts")),
    _judged(
        _builtin(
            "context_precision", "ContextPrecision", "user_input", "retrieved_contexts", "reference"
        )
    ),
    _judged(_builtin("context_relevance", "ContextRelevance", "user_input", "retrieved_contexts")),
    _judged(_builtin("response_relevancy", "ResponseRelevance", "user_input", "response")),
    MetricEntry(
        TRAJECTORY_MATCH,  # type: ignore[arg-type]
        lambda models, settings: TRAJECTORY_MATCH.load()(**trajectory.options(settings)),
        settings=(TRAJECTORY_MODE, TOOL_ARGS, TOOL_ARGS_OVERRIDES),
        signature={"mode": "mode", "tool_args": "tool_args", "overrides": "tool_args_overrides"},
    ),
    MetricEntry(
        TOOL_CALL_F1,  # type: ignore[arg-type]
        lambda models, settings: TOOL_CALL_F1.load()(**trajectory.options(settings)),
        settings=(TOOL_ARGS, TOOL_ARGS_OVERRIDES),
        signature={"tool_args": "tool_args", "overrides": "tool_args_overrides"},
    ),
    MetricEntry(
        AGENT_GOAL_ACCURACY,  # type: ignore[arg-type]
        lambda models, settings: AGENT_GOAL_ACCURACY.load()(
            llm=list(models.judges),
            **{item.name: settings[item.name] for item in _AGENT_JUDGE_SETTINGS},
        ),
        settings=_AGENT_JUDGE_SETTINGS,
        signature=_AGENT_JUDGE_SIGNATURE,
    ),
    MetricEntry(
        TRAJECTORY_JUDGE,  # type: ignore[arg-type]
        lambda models, settings: TRAJECTORY_JUDGE.load()(
            llm=list(models.judges),
            output=settings["trajectory_output"],
            **{item.name: settings[item.name] for item in _AGENT_JUDGE_SETTINGS},
        ),
        settings=(*_AGENT_JUDGE_SETTINGS, TRAJECTORY_OUTPUT_SETTING),
        signature={**_AGENT_JUDGE_SIGNATURE, "output": "output"},
    ),
    _thread_metric(_builtin("knowledge_retention", "KnowledgeRetention")),
    _thread_metric(_builtin("conversation_completeness", "ConversationCompleteness")),
    _thread_metric(_builtin("role_adherence", "RoleAdherence")),
    MetricEntry(
        TOPIC_ADHERENCE,  # type: ignore[arg-type]
        lambda models, settings: TOPIC_ADHERENCE.load()(
            llm=list(models.judges),
            topics=settings.get("topics"),
            window=settings.get("conversation_window"),
        ),
        settings=(TOPICS, CONVERSATION_WINDOW),
        signature={"topics": "topics", "window": "window"},
    ),
    MetricEntry(
        PER_TURN,  # type: ignore[arg-type]
        _per_turn,
        settings=(TURN_METRIC, TURN_WINDOW),
        # Unsigned here: the wrapped metric and the window are signed as a wrapper's
        # settings (the wrapped metric by its own signature).
        key_from=_per_turn_key,
    ),
)

METRICS: dict[str, MetricEntry] = {entry.key: entry for entry in _ENTRIES}
"""Every metric, by key, in the order they are offered (the built-in ones, then those
added with :func:`register`)."""


class _MetricNames(Sequence[str]):
    """The keys of :data:`METRICS` as they are now (a metric registered later included)."""

    def __getitem__(self, index: Any) -> Any:
        return tuple(METRICS)[index]

    def __len__(self) -> int:
        return len(METRICS)

    def __eq__(self, other: object) -> bool:
        return tuple(METRICS) == other if isinstance(other, tuple) else NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(tuple(METRICS))


METRIC_NAMES: Sequence[str] = _MetricNames()


def register(entry: MetricEntry) -> MetricEntry:
    """Offer a metric of your own everywhere the built-in ones are: the CLI's ``--metric``
    and its settings' flags, the Ray adapter, resume fingerprints. Its module is then all
    the rest: the class (with ``metric_key`` and ``required_fields``) and, if it has one,
    its details model (a ``kind`` is registered when the class is defined)::

        register(MetricEntry(Politeness, lambda models, settings: Politeness(
            llm=list(models.judges))))

    Raises ValueError if the key is taken by another class.
    """
    known = METRICS.get(entry.key)
    if known is not None and known.metric_class is not entry.metric_class:
        raise ValueError(
            f"metric {entry.key!r} is already registered ({known.metric_class.__name__})"
        )
    METRICS[entry.key] = entry
    return entry


def metric_settings() -> list[MetricSetting]:
    """Every metric's settings, each once (several metrics may share one), in order."""
    return list({item.name: item for entry in METRICS.values() for item in entry.settings}.values())
