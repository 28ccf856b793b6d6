"""What an entry of the registry is: a metric's class (or where it is), how it is built,
its settings and its signature (:class:`MetricEntry`), and the models it is built with.

The list itself is :mod:`langchain_answer_metrics.metrics.registry`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_answer_metrics.metrics.settings import NOT_GIVEN, MetricSetting

if TYPE_CHECKING:
    from langchain_answer_metrics.core.sample import SampleField
    from langchain_answer_metrics.judging.judges import Embedder, Judge
    from langchain_answer_metrics.metrics.base import AnswerMetric


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
class MetricClassRef:
    """A built-in metric class named by where it is, imported the first time it is used.

    The facts the command line reads before any metric runs (the key, the fields a sample
    needs, the models) are stated here, so ``answer-metrics --help`` and its one-line
    errors load no metric (and no LangChain Runnable machinery); tests/test_registry.py
    checks them against the class.
    """

    path: str
    """``module:Class``"""
    key: str
    required_fields: tuple[SampleField, ...]
    needs_judge: bool = True
    needs_embeddings: bool = False
    aliases: tuple[str, ...] = ()
    """Other names of the class in its module (``ResponseRelevancy``), exported beside it."""

    @property
    def module(self) -> str:
        return self.path.partition(":")[0]

    @property
    def name(self) -> str:
        """The class's name, as the package root exports it."""
        return self.path.partition(":")[2]

    def load(self) -> type[AnswerMetric]:
        module, _, name = self.path.partition(":")
        loaded: type[AnswerMetric] = getattr(importlib.import_module(module), name)
        return loaded


class _ClassOnUse:
    """``MetricEntry.metric_class``: the class, a :class:`MetricClassRef` imported on
    first read."""

    slot = "_metric_class_source"

    def __get__(self, entry: Any, owner: type | None = None) -> Any:
        if entry is None:
            raise AttributeError(self.slot)  # no class-level default for the dataclass
        source = entry.__dict__[self.slot]
        if isinstance(source, MetricClassRef):
            source = source.load()
            entry.__dict__[self.slot] = source
        return source

    def __set__(self, entry: Any, value: Any) -> None:
        entry.__dict__[self.slot] = value
        if isinstance(value, MetricClassRef):
            entry.__dict__["_facts"] = value


@dataclass(frozen=True)
class MetricEntry:
    """One metric: its class, its settings, and how it is built and keyed.

    ``metric_class`` may be given as a :class:`MetricClassRef` (the built-in metrics
    are): it is imported when first read, and until then the reference's facts answer
    :attr:`key`, :attr:`required_fields` and the models it needs.

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
    def class_ref(self) -> MetricClassRef | None:
        """Where its class is, when it was given as a :class:`MetricClassRef`."""
        return self.__dict__.get("_facts")

    @property
    def key(self) -> str:
        facts = self.class_ref
        return facts.key if facts is not None else self.metric_class.metric_key

    @property
    def required_fields(self) -> tuple[SampleField, ...]:
        facts = self.class_ref
        return facts.required_fields if facts is not None else self.metric_class.required_fields

    @property
    def needs_judge(self) -> bool:
        facts = self.class_ref
        return facts.needs_judge if facts is not None else "llm" in self.metric_class.model_fields

    @property
    def needs_embeddings(self) -> bool:
        facts = self.class_ref
        if facts is not None:
            return facts.needs_embeddings
        return "embeddings" in self.metric_class.model_fields

    def result_key(self, settings: Settings) -> str:
        """The key its results will have with these settings (an AspectCritic's name)."""
        return self.key_from(settings) if self.key_from is not None else self.key

    def setting_named(self, name: str) -> MetricSetting | None:
        """The setting a config file's entry of this metric names ``name``: by its own name
        or its short one (``mode`` for ``trajectory_mode``), else None."""
        for item in self.settings:
            if name in (item.name, item.short):
                return item
        return None

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


# After the dataclass is made: a class attribute in its body would be taken for a default.
MetricEntry.metric_class = _ClassOnUse()  # type: ignore[assignment]
