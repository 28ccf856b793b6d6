"""Copies of metrics whose models are replaced by stand-ins: the one mechanism behind the
cost estimate's dry run (:mod:`~langchain_answer_metrics.run.estimate.dry_run`) and batch mode
(:mod:`~langchain_answer_metrics.run.batch_panel`).

A subclass says what stands in for a chat model (:meth:`StandIns.chat_stand_in`) and for
an embedding model (:meth:`StandIns.embeddings_stand_in`), and how a judge or embedder is
copied around it; this class does the rest, the same way for both:

- one stand-in per real model and judge label, however many metrics, judges or wrappers
  hold it, so requests shared in the real run stay shared (and the embedder's batching);
- a chat model is found through its wrappers (``bind``, ``with_fallbacks``): only the
  model at the end is replaced, so the real bindings still build the request;
- the metrics a metric holds (AnswerCorrectness's components) are copied the same way.

    >>> copies = MyStandIns().metrics(metrics)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableWithFallbacks
from langchain_core.runnables.base import RunnableBindingBase

from langchain_answer_metrics.judging.judges import Embedder, Judge
from langchain_answer_metrics.metrics.base import AnswerMetric

__all__ = ["StandIns"]


class StandIns:
    """Copies of metrics on stand-in models (see the module doc).

    Attributes:
        strict: refuse a metric holding a model in a field this class does not copy (a
            copy would keep the real model and send its requests).
    """

    strict = False
    who = "a copy"  # who refuses, under strict ("estimate")

    def __init__(self) -> None:
        self._models: dict[tuple[int, str], Any] = {}
        self._judges: dict[int, Judge] = {}
        self._embedders: dict[int, Embedder] = {}
        self._keep: list[Any] = []  # the real objects keyed by id() stay alive

    # ------------------------------------------------------------------ what stands in

    def chat_stand_in(self, model: Any, judge: Judge) -> Any:
        """What replaces ``model`` (a runnable at the end of ``judge``'s wrappers); the
        model itself keeps it. Called once per model and judge label."""
        return model

    def embeddings_stand_in(self, model: Any, embedder: Embedder) -> Any:
        """What replaces ``embedder``'s model; the model itself keeps it. Called once per
        model."""
        return model

    def judge_copy(self, judge: Judge) -> Judge:
        """``judge`` on its stand-in model (:meth:`swap_chat`); default: the judge."""
        return judge

    def embedder_copy(self, embedder: Embedder) -> Embedder:
        """``embedder`` on its stand-in model (:meth:`swap_embeddings`); default: it."""
        return embedder

    # ------------------------------------------------------------------ the copying

    def swap_chat(self, runnable: Any, judge: Judge) -> Any:
        """``runnable`` with its chat model(s) replaced, through wrappers."""
        if isinstance(runnable, RunnableWithFallbacks):
            return runnable.model_copy(
                update={
                    "runnable": self.swap_chat(runnable.runnable, judge),
                    "fallbacks": [self.swap_chat(f, judge) for f in runnable.fallbacks],
                }
            )
        if isinstance(runnable, RunnableBindingBase):
            return runnable.model_copy(update={"bound": self.swap_chat(runnable.bound, judge)})
        key = (id(runnable), judge.label)
        if key not in self._models:
            self._keep.append(runnable)
            self._models[key] = self.chat_stand_in(runnable, judge)
        return self._models[key]

    def swap_embeddings(self, embedder: Embedder) -> Any:
        """The stand-in for ``embedder``'s model, one per model."""
        model = embedder.model
        key = (id(model), "")
        if key not in self._models:
            self._keep.append(model)
            self._models[key] = self.embeddings_stand_in(model, embedder)
        return self._models[key]

    def judge(self, judge: Judge) -> Judge:
        if id(judge) not in self._judges:
            self._keep.append(judge)
            self._judges[id(judge)] = self.judge_copy(judge)
        return self._judges[id(judge)]

    def embedder(self, embedder: Embedder) -> Embedder:
        if id(embedder) not in self._embedders:
            self._keep.append(embedder)
            self._embedders[id(embedder)] = self.embedder_copy(embedder)
        return self._embedders[id(embedder)]

    def metric(self, metric: AnswerMetric) -> AnswerMetric:
        """A copy of ``metric`` on stand-ins: its judges, its embedders, and the metrics
        it holds (AnswerCorrectness's configured components), each copied the same way.

        Raises:
            TypeError: under :attr:`strict`, a model in a field the copy would keep.
        """
        update: dict[str, Any] = {}
        for name in type(metric).model_fields:
            value = getattr(metric, name, None)
            if isinstance(value, AnswerMetric):
                update[name] = self.metric(value)
            elif isinstance(value, list) and value and all(isinstance(v, Judge) for v in value):
                update[name] = [self.judge(judge) for judge in value]
            elif isinstance(value, list) and value and all(isinstance(v, Embedder) for v in value):
                update[name] = [self.embedder(embedder) for embedder in value]
            elif self.strict and _holds_a_model(value):
                raise TypeError(
                    f"{self.who} cannot replace the models in {type(metric).__name__}.{name}"
                )
        return metric.model_copy(update=update)

    def metrics(self, metrics: Sequence[AnswerMetric]) -> list[AnswerMetric]:
        return [self.metric(metric) for metric in metrics]


def _holds_a_model(value: Any) -> bool:
    values = value if isinstance(value, (list, tuple)) else [value]
    return any(isinstance(v, (Judge, Embedder, BaseChatModel, Embeddings)) for v in values)
