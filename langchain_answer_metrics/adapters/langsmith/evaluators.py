"""The metrics as LangSmith evaluators: per row, as functions, and as experiment summaries.

Examples: :func:`evaluators`, :class:`MetricEvaluator`. This face is thin: it maps run and
example fields onto a :class:`Sample` (see :mod:`langchain_answer_metrics.mapping`; keyword
arguments override single fields) and the :class:`MetricResult` onto feedback (shaped in
:mod:`~langchain_answer_metrics.adapters.langsmith.results`). The metric computes the
score.

Feedback, one per row and metric, under the metric's key (an AspectCritic's ``name``):

- ``score``: the metric's score; ``comment``: its reason;
- ``metadata`` (kept in the local results) and ``extra`` (uploaded with the feedback, so
  the LangSmith UI shows it): band, passed, threshold, per-model scores, excluded models,
  token usage, and ``details`` - the claims with their verdicts, or the votes.

A row the metric fails on gives feedback under the same key with ``score=None``, the
error in the comment and ``extra={"error": True, ...}``; the experiment carries on. A row
the metric does not apply to (a response with no claims under Faithfulness's default) gives
``score=None`` too - LangSmith takes feedback without a score - with the reason in the
comment and ``not_applicable`` (``"no_claims"``) in ``extra``, and no ``error``; summary
evaluators leave it out of the mean and count it.

The row logic (mapping -> Sample -> metric -> feedback) is written once, async, and runs
on the caller's loop for ``aevaluate``. The sync evaluators run that same logic with
:func:`~langchain_answer_metrics.judging.sync.run_sync`, whose private session makes the
metric call its models through their sync interface, as ``metric.invoke`` does.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig, RunnableLambda

# Cheap (~15 ms): langchain-core has already imported langsmith's client and schemas.
from langsmith.evaluation.evaluator import EvaluationResult, RunEvaluator
from langsmith.schemas import Example, Run

from langchain_answer_metrics.adapters.langsmith import feedback
from langchain_answer_metrics.adapters.langsmith.results import (
    EvaluatorResult,
    error_feedback,
    feedback_for,
    function_result,
    settled,
)
from langchain_answer_metrics.adapters.langsmith.results import (
    error_comment as error_comment,  # re-exported: it lived here
)
from langchain_answer_metrics.adapters.langsmith.summary import (
    MetricSummaryEvaluator,
    RowResults,
)
from langchain_answer_metrics.adapters.langsmith.summary import (
    summary_feedback as summary_feedback,  # re-exported: it lived here
)
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.sample import Sample
from langchain_answer_metrics.judging.sync import run_sync
from langchain_answer_metrics.mapping import FieldSpec, SampleMapping
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run.summary import MetricSummary


def _sources(inputs: Any, outputs: Any, reference_outputs: Any) -> dict[str, Any]:
    return {
        "inputs": {} if inputs is None else inputs,
        "outputs": {} if outputs is None else outputs,
        "reference_outputs": {} if reference_outputs is None else reference_outputs,
    }


def _mapping(mapping: SampleMapping | None, overrides: Mapping[str, FieldSpec]) -> SampleMapping:
    if mapping is not None and overrides:
        raise TypeError("pass either mapping= or field overrides, not both")
    return mapping or SampleMapping.for_langsmith(**overrides)


class MetricEvaluator(RunEvaluator):
    """A metric as a LangSmith ``RunEvaluator`` for ``evaluate`` and ``aevaluate``.

    Build it with ``metric.as_evaluator(**mapping)``. Each row runs as one traced run
    named after the key (the feedback's source run), with the metric's runs and its named
    steps (``decompose_claims``, ``verify_claims``, ``judge_aspect``, ``embed``) below it.

    Args:
        metric: the metric that scores each row; its key is the feedback key.
        mapping: where each Sample field is in a run and its example (default: common names).
        **overrides: instead of ``mapping``, a field's key or callable (``response="answer"``).

    Raises:
        TypeError: both ``mapping`` and field overrides.

    Example:
        >>> evaluator = Faithfulness(llm=judge).as_evaluator(retrieved_contexts="outputs.docs")
        >>> langsmith.evaluate(app, data="my-dataset", evaluators=[evaluator],
        ...                    summary_evaluators=[evaluator.summary_evaluator])
    """

    def __init__(
        self,
        metric: AnswerMetric,
        *,
        mapping: SampleMapping | None = None,
        **overrides: FieldSpec,
    ) -> None:
        self.metric = metric
        self.mapping = _mapping(mapping, overrides)
        self._scored = RowResults()

    @property
    def key(self) -> str:
        return self.metric.key

    @property
    def feedback_keys(self) -> list[str]:
        """The one feedback key, so LangSmith keys even its own error feedback right."""
        return [self.key]

    def __repr__(self) -> str:
        return f"<MetricEvaluator {self.key}>"

    def sample_for(self, run: Run, example: Example | None = None) -> Sample:
        """The Sample this evaluator scores for a run and its example."""
        return self.sample_from(self._row_sources(run, example), run=run, example=example)

    def sample_from(
        self, sources: Mapping[str, Any], *, run: Run | None = None, example: Example | None = None
    ) -> Sample:
        """The Sample for ``{"inputs": ..., "outputs": ..., "reference_outputs": ...}``."""
        if getattr(self.metric, "reads_agent_fields", False):
            # An agent metric reads the trajectory's forms itself (AgentSample), naming
            # the field and position at fault; it is given what the mapping found.
            return self.metric.check_sample(
                self.mapping.found_fields(
                    sources, metric=self.key, extras={"run": run, "example": example}
                )
            )
        return self.mapping.resolve(
            sources,
            required=self.metric.required_fields,
            metric=self.key,
            extras={"run": run, "example": example},
        )

    def _row_sources(self, run: Run, example: Example | None) -> dict[str, Any]:
        inputs = example.inputs if example is not None and example.inputs else run.inputs
        reference = example.outputs if example is not None else None
        return _sources(inputs, run.outputs, reference)

    async def _score(
        self,
        sources: Mapping[str, Any],
        config: RunnableConfig | None = None,
        *,
        run: Run | None = None,
        example: Example | None = None,
    ) -> MetricResult:
        """The row logic, written once: map the row onto a Sample, then score it.

        Async only: on the sync surface it runs under :func:`run_sync`, whose session makes
        the metric reach its models through their sync interface (see ``judging.sync``).
        """
        sample = self.sample_from(sources, run=run, example=example)
        return await self.metric.ainvoke(sample, config)

    def _traced(self, run: Run, example: Example | None) -> RunnableLambda[Any, MetricResult]:
        # One run per row, named after the key: the mapping happens inside it, so a row
        # whose fields cannot be found shows up as a failed evaluator run too.
        async def score(sources: dict[str, Any], config: RunnableConfig) -> MetricResult:
            return await self._score(sources, config, run=run, example=example)

        return RunnableLambda(score, name=self.key)

    def _config(self, run: Run, run_id: uuid.UUID) -> RunnableConfig:
        return {
            "run_id": run_id,
            "run_name": self.key,
            "metadata": {"target_run_id": str(run.id)},
        }

    def _finish(
        self, run: Run, run_id: uuid.UUID, outcome: MetricResult | BaseException
    ) -> EvaluationResult:
        if isinstance(outcome, MetricResult):
            self._scored.record(run.id, outcome)
            config = feedback.feedback_config(self.metric)  # a CustomJudge's categories
            return feedback_for(outcome, key=self.key, source_run_id=run_id, config=config)
        self._scored.record(run.id, None)
        return error_feedback(self.key, outcome, source_run_id=run_id)

    async def aevaluate_run(
        self,
        run: Run,
        example: Example | None = None,
        evaluator_run_id: uuid.UUID | None = None,
    ) -> EvaluationResult:
        """Score one row on the caller's event loop; never raises for a failing metric
        (see the module docs)."""
        run_id = evaluator_run_id or uuid.uuid4()
        outcome = await settled(
            self._traced(run, example).ainvoke(
                self._row_sources(run, example), self._config(run, run_id)
            )
        )
        return self._finish(run, run_id, outcome)

    def evaluate_run(
        self,
        run: Run,
        example: Example | None = None,
        evaluator_run_id: uuid.UUID | None = None,
    ) -> EvaluationResult:
        """Sync :meth:`aevaluate_run`: the same logic on a private loop, with the models
        called through their sync interface."""
        return run_sync(self.aevaluate_run(run, example, evaluator_run_id))

    def score_of(self, run: Run, example: Example | None = None) -> float | None:
        """This row's score (None if the metric failed or does not apply), scoring it if
        not done yet."""
        result = self.result_of(run, example)
        return None if result is None else result.score

    def result_of(self, run: Run, example: Example | None = None) -> MetricResult | None:
        """This row's result (None if the metric failed), scoring it if not done yet."""
        known, result = self._scored.get(run.id)
        if not known:
            self.evaluate_run(run, example)
            _, result = self._scored.get(run.id)
        return result

    @functools.cached_property
    def summary_evaluator(self) -> MetricSummaryEvaluator:
        """The summary evaluator that reuses this evaluator's row scores (one, kept)."""
        return MetricSummaryEvaluator(self)


class MetricEvaluators(list[MetricEvaluator]):
    """Evaluators for several metrics; ``.summary_evaluators`` holds their summaries."""

    @property
    def summary_evaluators(self) -> list[MetricSummaryEvaluator]:
        return [evaluator.summary_evaluator for evaluator in self]

    def summaries(self) -> dict[str, MetricSummary]:
        """The statistics its summary evaluators gave in the last experiment, by metric
        key: read offline, without LangSmith's private ``_summary_results``.

        Example:
            >>> evaluate(app, data=data, evaluators=evs, summary_evaluators=evs.summary_evaluators)
            >>> evs.summaries()["faithfulness"].describe()
            'faithfulness: mean 0.500 (95% CI 0.500–0.500), 2 scored'
        """
        found = {ev.key: ev.summary_evaluator.last_summary for ev in self}
        return {key: summary for key, summary in found.items() if summary is not None}


def evaluator(
    metric: AnswerMetric, *, mapping: SampleMapping | None = None, **overrides: FieldSpec
) -> MetricEvaluator:
    """``metric`` as a LangSmith row evaluator: the adapter wraps the metric
    (``metric.as_evaluator(...)`` is the same call).

    Args:
        metric: the metric that scores each row; its key is the feedback key.
        mapping: where each Sample field is in a run and its example (default: common names).
        **overrides: instead of ``mapping``, a field's key or callable (``response="answer"``).

    Raises:
        TypeError: both ``mapping`` and field overrides.

    Example:
        >>> row_evaluator = evaluator(Faithfulness(llm=judge), response="answer")
        >>> langsmith.evaluate(app, data="my-dataset", evaluators=[row_evaluator],
        ...                    summary_evaluators=[row_evaluator.summary_evaluator])
    """
    return MetricEvaluator(metric, mapping=mapping, **overrides)


def evaluators(
    metrics: Iterable[AnswerMetric],
    *,
    mapping: SampleMapping | None = None,
    **overrides: FieldSpec,
) -> MetricEvaluators:
    """Row evaluators for several metrics with one field mapping.

    Args:
        metrics: the metrics; each gives one feedback key.
        mapping: where each field is in a run and its example (default: common names).
        **overrides: a field's key path or callable, e.g. ``response="answer"``.

    Returns:
        Evaluators for LangSmith's ``evaluate``, with ``.summary_evaluators``.

    Raises:
        ValueError: two metrics share a key (their feedback would collide).

    Example:
        >>> evs = evaluators([Faithfulness(llm=judge)], response="answer")
        >>> evaluate(app, data=..., evaluators=evs, summary_evaluators=evs.summary_evaluators)
    """
    shared = _mapping(mapping, overrides)
    built = MetricEvaluators(MetricEvaluator(metric, mapping=shared) for metric in metrics)
    keys = [evaluator.key for evaluator in built]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise ValueError(
            f"several metrics share the feedback key(s) {', '.join(duplicates)}; "
            "give them distinct names (name=...)"
        )
    return built


FunctionEvaluator = Callable[..., EvaluatorResult]
"""An openevals-style evaluator: ``(inputs, outputs, reference_outputs) -> {key, score,
comment, metadata}``; see :func:`function_evaluator`."""
AsyncFunctionEvaluator = Callable[..., Awaitable[EvaluatorResult]]


def _function_scorer(
    metric: AnswerMetric, mapping: SampleMapping | None, overrides: Mapping[str, FieldSpec]
) -> Callable[[Mapping[str, Any]], Coroutine[Any, Any, EvaluatorResult]]:
    """A function evaluator's row logic, shared by the sync and the async one."""
    scorer = MetricEvaluator(metric, mapping=_mapping(mapping, overrides))

    async def score(sources: Mapping[str, Any]) -> EvaluatorResult:
        return function_result(metric.key, await settled(scorer._score(sources)))

    return score


def function_evaluator(
    metric: AnswerMetric, *, mapping: SampleMapping | None = None, **overrides: FieldSpec
) -> FunctionEvaluator:
    """``(inputs, outputs, reference_outputs) -> {key, score, comment, metadata}``.

    The openevals convention; LangSmith's ``evaluate`` takes it as is, and so can your
    own code or a pytest test. A failing metric returns ``score=None`` with the error as
    the comment instead of raising.
    """
    score = _function_scorer(metric, mapping, overrides)

    def evaluate(
        inputs: Mapping[str, Any] | None = None,
        outputs: Mapping[str, Any] | None = None,
        reference_outputs: Mapping[str, Any] | None = None,
    ) -> EvaluatorResult:
        return run_sync(score(_sources(inputs, outputs, reference_outputs)))

    evaluate.__name__ = evaluate.__qualname__ = metric.key
    return evaluate


def async_function_evaluator(
    metric: AnswerMetric, *, mapping: SampleMapping | None = None, **overrides: FieldSpec
) -> AsyncFunctionEvaluator:
    """Async :func:`function_evaluator`, for ``aevaluate``."""
    score = _function_scorer(metric, mapping, overrides)

    async def evaluate(
        inputs: Mapping[str, Any] | None = None,
        outputs: Mapping[str, Any] | None = None,
        reference_outputs: Mapping[str, Any] | None = None,
    ) -> EvaluatorResult:
        return await score(_sources(inputs, outputs, reference_outputs))

    evaluate.__name__ = evaluate.__qualname__ = metric.key
    return evaluate
