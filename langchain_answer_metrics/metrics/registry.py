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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_answer_metrics.judging.judges import Embedder, Judge
from langchain_answer_metrics.metrics import conversation_settings as conversation
from langchain_answer_metrics.metrics import trajectory_settings as trajectory
from langchain_answer_metrics.metrics.agent_goal_accuracy import AgentGoalAccuracy
from langchain_answer_metrics.metrics.answer_correctness import AnswerCorrectness
from langchain_answer_metrics.metrics.aspect_critic import ASPECTS, AspectCritic
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.metrics.context_precision import ContextPrecision
from langchain_answer_metrics.metrics.context_recall import ContextRecall
from langchain_answer_metrics.metrics.context_relevance import ContextRelevance
from langchain_answer_metrics.metrics.conversation_completeness import ConversationCompleteness
from langchain_answer_metrics.metrics.factual_correctness import FactualCorrectness
from langchain_answer_metrics.metrics.faithfulness import Faithfulness
from langchain_answer_metrics.metrics.judged_agents import (
    MAX_TRAJECTORY_CHARS_SETTING,
    TOOL_RESULT_CHARS_SETTING,
)
from langchain_answer_metrics.metrics.knowledge_retention import KnowledgeRetention
from langchain_answer_metrics.metrics.per_turn import PerTurn, per_turn
from langchain_answer_metrics.metrics.response_relevancy import ResponseRelevancy
from langchain_answer_metrics.metrics.role_adherence import RoleAdherence
from langchain_answer_metrics.metrics.semantic_similarity import SemanticSimilarity
from langchain_answer_metrics.metrics.settings import (
    NOT_GIVEN,
    MetricSetting,
    positive_int,
    unit_interval,
)
from langchain_answer_metrics.metrics.tool_call_f1 import ToolCallF1
from langchain_answer_metrics.metrics.topic_adherence import TopicAdherence
from langchain_answer_metrics.metrics.trajectory_judge import (
    TRAJECTORY_OUTPUT_SETTING,
    TrajectoryJudge,
)
from langchain_answer_metrics.metrics.trajectory_match import TrajectoryMatch
from langchain_answer_metrics.sample import SampleField

# --------------------------------------------------------------------------- settings as text


def _strictness(text: str) -> int:
    value = positive_int(text)
    if value > 5:
        raise ValueError(f"{text} must be between 1 and 5")
    return value


def _baseline(text: str) -> float | None:
    if text.lower() == "none":
        return None
    value = unit_interval(text)
    if value >= 1.0:
        raise ValueError("the baseline must be below 1")
    return value


RESCALE_BASELINE = MetricSetting(
    "rescale_baseline",
    help="semantic similarity baseline b in max(0, (cos - b) / (1 - b)); defaults to the "
    "local model's measured baseline, none for other embedding models",
    metavar="B|none",
    parse=_baseline,
    default=NOT_GIVEN,
)
CRITERION = MetricSetting(
    "criterion",
    help="aspect_critic's criterion, in your own words",
    metavar="TEXT",
    when_missing='needs {option} TEXT (e.g. {option} "The answer cites a year"), or a '
    f"built-in aspect: --aspect {'|'.join(ASPECTS)}",
    instead="aspect",
)


def _aspect(text: str) -> str:
    if text not in ASPECTS:
        raise ValueError(f"{text!r} is not a built-in aspect; choose from {', '.join(ASPECTS)}")
    return text


ASPECT = MetricSetting(
    "aspect",
    help=f"aspect_critic's built-in aspect instead of a criterion: {', '.join(ASPECTS)}",
    metavar="NAME",
    parse=_aspect,
)
ASPECT_NAME = MetricSetting("aspect_name", help="aspect_critic's result key", metavar="NAME")
STRICTNESS = MetricSetting(
    "strictness",
    help="votes per judge of aspect_critic, agent_goal_accuracy and trajectory_judge (1-5; "
    "use a temperature above 0)",
    metavar="N",
    parse=_strictness,
    default=1,
)


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


@dataclass(frozen=True)
class MetricModels:
    """The models a metric may be built with.

    ``embedding_baseline`` is the cosine the embedding models give unrelated texts, when
    it is known (the bundled local model's is measured): the default rescale baseline.
    """

    judges: Sequence[Judge] = ()
    embedders: Sequence[Embedder] = ()
    embedding_baseline: float | None = None


Settings = Mapping[str, Any]


@dataclass(frozen=True)
class MetricEntry:
    """One metric: its class, its settings, and how it is built and keyed.

    ``signature`` names the settings that change its scores (key in a run's fingerprint
    -> attribute of the built metric); with the models' labels they say whether a saved
    score can be reused.
    """

    metric_class: type[AnswerMetric]
    make: Callable[[MetricModels, Settings], AnswerMetric]
    settings: tuple[MetricSetting, ...] = ()
    signature: Mapping[str, str] = field(default_factory=dict)
    key_from: Callable[[Settings], str] | None = None

    @property
    def key(self) -> str:
        return self.metric_class.metric_key

    @property
    def required_fields(self) -> tuple[SampleField, ...]:
        return self.metric_class.required_fields

    @property
    def needs_judge(self) -> bool:
        return "llm" in self.metric_class.model_fields

    @property
    def needs_embeddings(self) -> bool:
        return "embeddings" in self.metric_class.model_fields

    def result_key(self, settings: Settings) -> str:
        """The key its results will have with these settings (an AspectCritic's name)."""
        return self.key_from(settings) if self.key_from is not None else self.key

    def missing_settings(self, settings: Settings) -> list[MetricSetting]:
        """The settings it cannot do without that ``settings`` lacks."""
        return [
            item
            for item in self.settings
            if item.lacks(settings.get(item.name))
            and not (item.instead is not None and settings.get(item.instead) is not None)
        ]

    def build(self, models: MetricModels, settings: Settings) -> AnswerMetric:
        """The metric, built with ``models`` and the settings given (others: their default).

        Raises ValueError when a setting it cannot do without is missing.
        """
        defaults = {item.name: item.default for item in self.settings}
        given = {
            name: value
            for name, value in {**defaults, **settings}.items()
            if value is not NOT_GIVEN
        }
        for item in self.missing_settings(given):
            raise ValueError(f"{self.key} {(item.when_missing or '').format(option=item.name)}")
        return self.make(models, given)


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


def _aspect_key(settings: Settings) -> str:
    return settings.get("aspect_name") or _named_aspect(settings) or AspectCritic.metric_key


def _aspect_critic(models: MetricModels, settings: Settings) -> AspectCritic:
    aspect = _named_aspect(settings)
    return AspectCritic(
        llm=list(models.judges),
        criterion=ASPECTS[aspect] if aspect is not None else settings["criterion"],
        name=settings.get("aspect_name") or aspect or AspectCritic.metric_key,
        strictness=settings["strictness"],
    )


def _baseline_of(models: MetricModels, settings: Settings) -> float | None:
    return settings.get("rescale_baseline", models.embedding_baseline)


def _thread_metric(
    metric_class: type[KnowledgeRetention | ConversationCompleteness | RoleAdherence],
) -> MetricEntry:
    """A conversation metric's entry: its judges and its window."""
    return MetricEntry(
        metric_class,
        lambda models, settings: metric_class(
            llm=list(models.judges), window=settings.get("conversation_window")
        ),
        settings=(CONVERSATION_WINDOW,),
        signature={"window": "window"},
    )


def _per_turn(models: MetricModels, settings: Settings) -> PerTurn:
    name = settings["turn_metric"]
    entry = METRICS.get(name)
    if entry is None or entry.metric_class is PerTurn:
        raise ValueError(f"per_turn: {name!r} is not a single-turn metric ({', '.join(METRICS)})")
    return per_turn(entry.build(models, settings), window=settings["turn_window"])


def _per_turn_key(settings: Settings) -> str:
    name = settings.get("turn_metric") or "metric"
    entry = METRICS.get(name)
    return f"{entry.result_key(settings) if entry else name}_per_turn"


_ENTRIES: tuple[MetricEntry, ...] = (
    MetricEntry(
        SemanticSimilarity,
        lambda models, settings: SemanticSimilarity(
            embeddings=list(models.embedders),
            rescale_baseline=_baseline_of(models, settings),
        ),
        settings=(RESCALE_BASELINE,),
        signature={"baseline": "rescale_baseline"},
    ),
    MetricEntry(
        FactualCorrectness,
        lambda models, settings: FactualCorrectness(llm=list(models.judges)),
    ),
    MetricEntry(
        AnswerCorrectness,
        lambda models, settings: AnswerCorrectness(
            llm=list(models.judges),
            embeddings=list(models.embedders),
            rescale_baseline=_baseline_of(models, settings),
        ),
        settings=(RESCALE_BASELINE,),
        signature={"baseline": "rescale_baseline"},
    ),
    MetricEntry(
        Faithfulness,
        lambda models, settings: Faithfulness(llm=list(models.judges)),
    ),
    MetricEntry(
        AspectCritic,
        _aspect_critic,
        settings=(CRITERION, ASPECT, ASPECT_NAME, STRICTNESS),
        signature={"criterion": "criterion", "strictness": "strictness"},
        key_from=_aspect_key,
    ),
    MetricEntry(ContextRecall, lambda models, settings: ContextRecall(llm=list(models.judges))),
    MetricEntry(
        ContextPrecision, lambda models, settings: ContextPrecision(llm=list(models.judges))
    ),
    MetricEntry(
        ContextRelevance, lambda models, settings: ContextRelevance(llm=list(models.judges))
    ),
    MetricEntry(
        ResponseRelevancy,
        lambda models, settings: ResponseRelevancy(llm=list(models.judges)),
    ),
    MetricEntry(
        TrajectoryMatch,
        lambda models, settings: TrajectoryMatch(**trajectory.options(settings)),
        settings=(TRAJECTORY_MODE, TOOL_ARGS, TOOL_ARGS_OVERRIDES),
        signature={"mode": "mode", "tool_args": "tool_args", "overrides": "tool_args_overrides"},
    ),
    MetricEntry(
        ToolCallF1,
        lambda models, settings: ToolCallF1(**trajectory.options(settings)),
        settings=(TOOL_ARGS, TOOL_ARGS_OVERRIDES),
        signature={"tool_args": "tool_args", "overrides": "tool_args_overrides"},
    ),
    MetricEntry(
        AgentGoalAccuracy,
        lambda models, settings: AgentGoalAccuracy(
            llm=list(models.judges),
            **{item.name: settings[item.name] for item in _AGENT_JUDGE_SETTINGS},
        ),
        settings=_AGENT_JUDGE_SETTINGS,
        signature=_AGENT_JUDGE_SIGNATURE,
    ),
    MetricEntry(
        TrajectoryJudge,
        lambda models, settings: TrajectoryJudge(
            llm=list(models.judges),
            output=settings["trajectory_output"],
            **{item.name: settings[item.name] for item in _AGENT_JUDGE_SETTINGS},
        ),
        settings=(*_AGENT_JUDGE_SETTINGS, TRAJECTORY_OUTPUT_SETTING),
        signature={**_AGENT_JUDGE_SIGNATURE, "output": "output"},
    ),
    _thread_metric(KnowledgeRetention),
    _thread_metric(ConversationCompleteness),
    _thread_metric(RoleAdherence),
    MetricEntry(
        TopicAdherence,
        lambda models, settings: TopicAdherence(
            llm=list(models.judges),
            topics=settings.get("topics"),
            window=settings.get("conversation_window"),
        ),
        settings=(TOPICS, CONVERSATION_WINDOW),
        signature={"topics": "topics", "window": "window"},
    ),
    MetricEntry(
        PerTurn,
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
