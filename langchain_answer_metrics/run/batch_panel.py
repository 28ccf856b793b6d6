"""The metrics of a batch run: copies whose OpenAI judges are batch stand-ins.

Which judges can go through batches is read from the model object (an OpenAI-style chat
model: it builds chat-completions payloads and has an openai client), then asked of its
endpoint (:meth:`~..judging.batch.provider.BatchProvider.probe`), never looked up in a
list of providers. A judge that cannot stays live when another judge of the panel can
(a mixed panel); when none can, batch mode is refused before any judge request.

    >>> panel = BatchPanel(BatchLines())
    >>> copies = [panel.metric(metric) for metric in metrics]
    >>> await panel.probe()
"""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

from langchain_core.runnables import RunnableWithFallbacks
from langchain_core.runnables.base import RunnableBindingBase

from langchain_answer_metrics.judging.batch.lines import BatchLines, Group
from langchain_answer_metrics.judging.batch.provider import BatchProvider, BatchUnavailableError
from langchain_answer_metrics.judging.batch.standin import (
    BatchChatModel,
    BatchJudge,
    is_openai_chat_model,
)
from langchain_answer_metrics.judging.judges import Judge, wrapped_model
from langchain_answer_metrics.judging.limits import DEFAULT_CLIENT_RETRIES
from langchain_answer_metrics.metrics.base import AnswerMetric

__all__ = ["BatchPanel", "is_openai_chat_model"]


def _attempts(judge: Judge, real: Any) -> int:
    """A line's attempts: the judge's retry policy, else its client's retries plus one."""
    if judge.retry is not None:
        return judge.retry.max_attempts
    retries = getattr(real, "max_retries", None)
    return (retries if isinstance(retries, int) else DEFAULT_CLIENT_RETRIES) + 1


class BatchPanel:
    """Batch copies of metrics, one stand-in per real model and judge label, so requests
    shared in a live run stay shared; the providers to probe, one per endpoint and model."""

    def __init__(self, lines: BatchLines) -> None:
        self.lines = lines
        self.batched: dict[str, Group] = {}  # judge label: its group
        self.live: list[str] = []  # judge labels that stay live
        self._judges: dict[int, Judge] = {}
        self._models: dict[tuple[int, str], BatchChatModel] = {}
        self._keep: list[Any] = []  # the originals keyed by id() stay alive

    def _stand_in(self, runnable: Any, judge: Judge) -> Any:
        """``runnable`` with its OpenAI chat models replaced, through wrappers."""
        if isinstance(runnable, RunnableWithFallbacks):
            return runnable.model_copy(
                update={
                    "runnable": self._stand_in(runnable.runnable, judge),
                    "fallbacks": [self._stand_in(f, judge) for f in runnable.fallbacks],
                }
            )
        if isinstance(runnable, RunnableBindingBase):
            return runnable.model_copy(update={"bound": self._stand_in(runnable.bound, judge)})
        if not is_openai_chat_model(runnable):
            return runnable
        key = (id(runnable), judge.label)
        if key not in self._models:
            self._keep.append(runnable)
            group = Group(
                label=judge.label,
                model=str(getattr(runnable, "model_name", "") or ""),
                base_url=str(runnable.root_client.base_url),
                provider=BatchProvider(runnable, judge.label),
            )
            self.batched.setdefault(judge.label, group)
            self._models[key] = BatchChatModel(
                real=runnable,
                group=group,
                lines=self.lines,
                max_attempts=_attempts(judge, runnable),
                cache=runnable.cache,
            )
        return self._models[key]

    def judge(self, judge: Judge) -> Judge:
        if id(judge) in self._judges:
            return self._judges[id(judge)]
        self._keep.append(judge)
        copy: Judge = judge
        if is_openai_chat_model(wrapped_model(judge.model)):
            copy = BatchJudge(
                model=self._stand_in(judge.model, judge),
                label=judge.label,
                method=judge.structured_method,
                max_reasks=judge.max_reasks,
                supports_n=judge.can_sample_n,
                timeout=None,
            )
        elif judge.label not in self.live:
            self.live.append(judge.label)
        self._judges[id(judge)] = copy
        return copy

    def metric(self, metric: AnswerMetric) -> AnswerMetric:
        """A copy of ``metric`` with batch judges (and of the metrics it holds)."""
        update: dict[str, Any] = {}
        for name in type(metric).model_fields:
            value = getattr(metric, name, None)
            if isinstance(value, AnswerMetric):
                update[name] = self.metric(value)
            elif isinstance(value, list) and value and all(isinstance(v, Judge) for v in value):
                update[name] = [self.judge(judge) for judge in value]
        return metric.model_copy(update=update)

    def check(self) -> None:
        """Refuse batch mode when no judge can use it; say which judges stay live.

        Raises:
            BatchUnavailableError: naming the judges, suggesting the live mode.
        """
        if not self.batched and self.live:
            raise BatchUnavailableError(
                f"batch mode needs an OpenAI chat model (ChatOpenAI or an OpenAI-compatible "
                f"endpoint); judge {', '.join(self.live)} is not one: run it live (without "
                "--batch / batch=True)"
            )
        if self.live:
            warnings.warn(
                f"batch mode: judge {', '.join(self.live)} is not an OpenAI chat model and "
                "runs live; the others go through the Batch API",
                stacklevel=3,
            )

    async def probe(self) -> None:
        """Ask each endpoint whether it has the Files and Batches API (before any judge
        request).

        Raises:
            BatchUnavailableError: an endpoint answered 404, naming its judge.
        """
        self.check()
        providers = {group.base_url: group.provider for group in self.batched.values()}
        await asyncio.gather(*(provider.probe() for provider in providers.values()))
