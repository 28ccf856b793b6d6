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

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import langchain_answer_metrics.metrics.conversation_settings as conversation
import langchain_answer_metrics.metrics.trajectory_settings as trajectory
from langchain_answer_metrics.metrics.builders import (
    AGENT_JUDGE_SETTINGS,
    AGENT_JUDGE_SIGNATURE,
    agent_judge,
    aspect_critic,
    aspect_key,
    judges_only,
    thread_metric,
    trajectory_match,
    with_embeddings,
)
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
    NOT_GIVEN,
    RESCALE_BASELINE,
    STRICTNESS,
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
    "builtin_classes",
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
# --------------------------------------------------------------------------- the list


def _builtin(
    key: str,
    name: str,
    *fields: SampleField,
    judge: bool = True,
    embed: bool = False,
    aliases: tuple[str, ...] = (),
) -> MetricClassRef:
    """A built-in metric: its module is named after its key. The package root and
    :mod:`langchain_answer_metrics.metrics` export its class by ``name`` (and ``aliases``)."""
    return MetricClassRef(
        f"langchain_answer_metrics.metrics.{key}:{name}", key, fields, judge, embed, aliases
    )


Make = Callable[[type[Any], MetricModels, Settings], "AnswerMetric"]


def _line(metric: MetricClassRef, make: Make, **options: Any) -> MetricEntry:
    """One registry line: where the metric's class is, and how it is built from the class
    (imported on first build), the models and the settings; ``options`` as for
    :class:`MetricEntry` (settings, signature, key_from)."""
    return MetricEntry(
        metric,  # type: ignore[arg-type]
        lambda models, settings: make(metric.load(), models, settings),
        **options,
    )


def _per_turn(metric: type[Any], models: MetricModels, settings: Settings) -> AnswerMetric:
    from langchain_answer_metrics.metrics.per_turn import per_turn

    name = settings["turn_metric"]
    entry = METRICS.get(name)
    if entry is None or entry.key == "per_turn":
        raise ValueError(f"per_turn: {name!r} is not a single-turn metric ({', '.join(METRICS)})")
    return per_turn(entry.build(models, settings), window=settings["turn_window"])


def _per_turn_key(settings: Settings) -> str:
    name = settings.get("turn_metric") or "metric"
    entry = METRICS.get(name)
    return f"{entry.result_key(settings) if entry else name}_per_turn"


_BASELINE = {"settings": (RESCALE_BASELINE,), "signature": {"baseline": "rescale_baseline"}}
_THREAD = {"settings": (CONVERSATION_WINDOW,), "signature": {"window": "window"}}
_MATCH = {"mode": "mode", "tool_args": "tool_args", "overrides": "tool_args_overrides"}

# One line per metric: its class (where it is, its key, the fields it needs, its models)
# and how it is built. The package root exports each class by its name (metrics/exports.py).
_ENTRIES: tuple[MetricEntry, ...] = (
    _line(
        _builtin(
            "semantic_similarity",
            "SemanticSimilarity",
            "response",
            "reference",
            judge=False,
            embed=True,
        ),
        with_embeddings,
        **_BASELINE,
    ),
    _line(
        _builtin("factual_correctness", "FactualCorrectness", "response", "reference"), judges_only
    ),
    _line(
        _builtin("answer_correctness", "AnswerCorrectness", "response", "reference", embed=True),
        with_embeddings,
        **_BASELINE,
    ),
    _line(_builtin("faithfulness", "Faithfulness", "response", "retrieved_contexts"), judges_only),
    _line(
        _builtin("aspect_critic", "AspectCritic", "response"),
        aspect_critic,
        settings=(CRITERION, ASPECT, ASPECT_NAME, STRICTNESS),
        signature={"criterion": "criterion", "strictness": "strictness"},
        key_from=aspect_key,
    ),
    _line(
        _builtin("context_recall", "ContextRecall", "reference", "retrieved_contexts"), judges_only
    ),
    _line(
        _builtin(
            "context_precision", "ContextPrecision", "user_input", "retrieved_contexts", "reference"
        ),
        judges_only,
    ),
    _line(
        _builtin("context_relevance", "ContextRelevance", "user_input", "retrieved_contexts"),
        judges_only,
    ),
    _line(
        _builtin(
            "response_relevancy",
            "ResponseRelevance",
            "user_input",
            "response",
            aliases=("ResponseRelevancy",),  # RAGAS's name
        ),
        judges_only,
    ),
    _line(
        _builtin("trajectory_match", "TrajectoryMatch", judge=False),
        trajectory_match,
        settings=(TRAJECTORY_MODE, TOOL_ARGS, TOOL_ARGS_OVERRIDES),
        signature=_MATCH,
    ),
    _line(
        _builtin("tool_call_f1", "ToolCallF1", judge=False),
        trajectory_match,
        settings=(TOOL_ARGS, TOOL_ARGS_OVERRIDES),
        signature={key: value for key, value in _MATCH.items() if key != "mode"},
    ),
    _line(
        _builtin("agent_goal_accuracy", "AgentGoalAccuracy"),
        agent_judge,
        settings=AGENT_JUDGE_SETTINGS,
        signature=AGENT_JUDGE_SIGNATURE,
    ),
    _line(
        _builtin("trajectory_judge", "TrajectoryJudge"),
        agent_judge,
        settings=(*AGENT_JUDGE_SETTINGS, TRAJECTORY_OUTPUT_SETTING),
        signature={**AGENT_JUDGE_SIGNATURE, "output": "output"},
    ),
    _line(_builtin("knowledge_retention", "KnowledgeRetention"), thread_metric, **_THREAD),
    _line(
        _builtin("conversation_completeness", "ConversationCompleteness"), thread_metric, **_THREAD
    ),
    _line(_builtin("role_adherence", "RoleAdherence"), thread_metric, **_THREAD),
    _line(
        _builtin("topic_adherence", "TopicAdherence"),
        thread_metric,
        settings=(TOPICS, CONVERSATION_WINDOW),
        signature={"topics": "topics", "window": "window"},
    ),
    _line(
        _builtin("per_turn", "PerTurn", judge=False),
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


def builtin_classes() -> list[MetricClassRef]:
    """The classes of the package's own metrics (the entries above, not those added with
    :func:`register`), in order: what the package root exports, by name."""
    refs = (entry.class_ref for entry in _ENTRIES if METRICS.get(entry.key) is entry)
    return [ref for ref in refs if ref is not None]


def metric_settings() -> list[MetricSetting]:
    """Every metric's settings, each once (several metrics may share one), in order."""
    return list({item.name: item for entry in METRICS.values() for item in entry.settings}.values())
