"""What every metric shares: input checks, the Runnable surface, and result assembly.

A metric implements ``_evaluate(sample, config)`` once, async; ``invoke``, ``batch`` and
``score`` are derived from it. What the runner asks a metric is in ``run_hooks.py``, the
traced async call in ``calls.py``; the LangSmith evaluators are imported by the methods
that return them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from pydantic import ConfigDict, Field, field_validator, model_validator

from langchain_answer_metrics.agents.sample import TRAJECTORY_FIELDS
from langchain_answer_metrics.core.result import (
    MetricDetails,
    MetricResult,
    ModelFailure,
    NotApplicable,
    TokenUsage,
    band_for,
)
from langchain_answer_metrics.core.sample import (
    DEFAULT_MAX_CONTEXTS,
    DEFAULT_MAX_INPUT_CHARS,
    SAMPLE_FIELDS,
    Sample,
    SampleField,
    SampleLike,
    to_sample,
)
from langchain_answer_metrics.core.strict_options import check_options, reject_unknown_fields
from langchain_answer_metrics.judging.judges import Embedder, Judge, as_embedders, as_judges
from langchain_answer_metrics.judging.panel import (
    DEFAULT_TOLERANCE,
    Aggregation,
    ModelOutcome,
    check_aggregation,
    check_weights,
    run_panel,
)
from langchain_answer_metrics.judging.prompt_set import FewShotExample, StepPrompt, step_prompts
from langchain_answer_metrics.judging.scope import RunScope, current_scope, run_scope
from langchain_answer_metrics.judging.sync import run_sync
from langchain_answer_metrics.metrics.calls import acall_traced
from langchain_answer_metrics.metrics.explain import with_exclusions, with_model_scores
from langchain_answer_metrics.metrics.run_hooks import RunnerHooks

if TYPE_CHECKING:
    # Named through the public face (the package root), never the adapter's module: the
    # metrics import nothing above them, not even for types (docs/architecture.md).
    from langchain_answer_metrics import (
        FunctionEvaluator,
        MetricEvaluator,
        MetricSummaryEvaluator,
    )

# What as_evaluator(**mapping) takes: a SampleMapping, or where single fields are.
MAPPING_OPTIONS: tuple[str, ...] = ("mapping", *SAMPLE_FIELDS, *TRAJECTORY_FIELDS)


class AnswerMetric(RunnableSerializable[SampleLike, MetricResult], RunnerHooks):
    """Base of the five metrics: a Runnable from a :class:`Sample` (or dict) to a result.

    A metric is invoked, batched and traced as any LangChain Runnable; :meth:`score` gives
    the score alone and :meth:`as_evaluator` a LangSmith evaluator. Options are keywords.

    Attributes:
        name: the result and feedback key; default: the metric's kind (``faithfulness``).
        threshold: pass mark in [0, 1] (results get ``passed``); ``None``: no pass/fail.
        aggregation: how the models' scores combine: ``"mean"``, ``"median"``, ``"min"``,
            ``"max"``, ``"consensus"`` (the mean when max - min <= ``tolerance``, else
            :class:`JudgesDisagreeError`), or a callable ``list[float] -> float`` in [0, 1].
        tolerance: largest spread of the models' scores that ``"consensus"`` accepts.
        max_input_chars: longest text accepted in one field (each context on its own).
        max_contexts: most ``retrieved_contexts`` accepted for one sample.

    Raises:
        InvalidSampleError: from ``invoke``, before any model call: a required field
            missing, empty, of the wrong type or too long.
        AllModelsFailedError: from ``invoke``: every model on the panel failed.
        JudgesDisagreeError: from ``invoke``, under ``aggregation="consensus"``.
        UnknownOptionError: a misspelt option (a ``TypeError``), naming the closest one.

    Example:
        >>> metrics: list[AnswerMetric] = [Faithfulness(llm=judge), AspectCritic(
        ...     llm=judge, name="polite", criterion="The response is polite.")]
        >>> [metric.key for metric in metrics]
        ['faithfulness', 'polite']
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    # An unknown keyword (``treshold=``) raises, naming the closest field.
    _reject_unknown = reject_unknown_fields()

    metric_key: ClassVar[str]
    required_fields: ClassVar[tuple[SampleField, ...]]

    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    aggregation: Aggregation = Field(
        default="mean",
        description="How the models' scores combine: mean, median, min, max, consensus "
        "(the mean when max - min <= tolerance, else JudgesDisagreeError), or a callable "
        "(scores: list[float]) -> float returning a number in [0, 1].",
    )
    tolerance: float = Field(
        default=DEFAULT_TOLERANCE,
        ge=0.0,
        le=1.0,
        description="Largest spread of the models' scores that aggregation='consensus' accepts.",
    )
    max_input_chars: int = Field(
        default=DEFAULT_MAX_INPUT_CHARS,
        ge=1,
        description="Longest text accepted in one field (each context on its own); a "
        "longer one is refused before any request (InvalidSampleError).",
    )
    max_contexts: int = Field(
        default=DEFAULT_MAX_CONTEXTS,
        ge=1,
        description="Most retrieved_contexts accepted for one sample.",
    )

    @field_validator("aggregation", mode="before")
    @classmethod
    def _known_aggregation(cls, value: Any) -> Aggregation:
        return check_aggregation(value)

    @property
    def key(self) -> str:
        """The result and feedback key: the metric's ``name`` if set, else its kind."""
        return self.name or self.metric_key

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """Runs of this metric are named by its key (``faithfulness``, an AspectCritic's name)."""
        return super().get_name(suffix, name=name or self.key)

    def _panel_members(self) -> Sequence[Judge | Embedder]:
        """The models that each score the sample (judges or embedders)."""
        raise NotImplementedError

    async def _score_with(
        self, member: Any, sample: Sample, config: RunnableConfig
    ) -> ModelOutcome:
        """One model's score on one sample."""
        raise NotImplementedError

    def _panel_weights(self) -> dict[str, float] | None:
        """Per-model weights of the aggregate (a judged metric's ``judge_weights``)."""
        return None

    def _details(self, models: dict[str, dict[str, Any]]) -> MetricDetails:
        """The result's details: each model's (as its ``_score_with`` gave them) with the
        metric's settings beside them, in the metric's details model. A metric of your own
        may keep this plain dict."""
        return {"models": models}

    async def _evaluate(self, sample: Sample, config: RunnableConfig) -> MetricResult:
        """Score one validated sample with every model, then aggregate those that scored:
        if none did (each found no claims), the result is not applicable."""
        panel = await run_panel(
            self.key,
            self._panel_members(),
            lambda member: member.label,
            lambda member, child: self._score_with(member, sample, child),
            config,
        )
        outcomes, per_model = panel.outcomes, panel.scores  # the models that scored
        score = (
            panel.aggregate(
                self.aggregation,
                tolerance=self.tolerance,
                metric=self.key,
                weights=self._panel_weights(),
            )
            if per_model
            else None
        )
        representative = panel.representative(score)
        every_model = {label: outcome.score for label, outcome in outcomes.items()}
        return self._result(
            # A model scores None only when it finds no claims (Faithfulness's default).
            score=score,
            not_applicable=None if per_model else "no_claims",
            per_model=per_model,
            excluded=panel.excluded,
            details=self._details({label: outcome.details for label, outcome in outcomes.items()}),
            reason=with_exclusions(
                with_model_scores(outcomes[representative].reason, every_model, representative),
                panel.excluded,
            ),
            # A judge left out still spent what it sent before failing.
            usage={
                **{failure.model: failure.usage for failure in panel.excluded if failure.usage},
                **{label: outcome.usage for label, outcome in outcomes.items()},
            },
            spread=panel.spread,
        )

    def check_sample(self, value: Any) -> Sample:
        """Validate ``value`` for this metric, raising before any model is called."""
        return to_sample(
            self.key,
            value,
            required=self.required_fields,
            max_chars=self.max_input_chars,
            max_contexts=self.max_contexts,
        )

    async def _run(
        self,
        value: SampleLike,
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> MetricResult:
        return await self._evaluate(self.check_sample(value), config)

    def _run_blocking(
        self,
        value: SampleLike,
        run_manager: CallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> MetricResult:
        return run_sync(self._evaluate(self.check_sample(value), config))

    async def _ainvoke_checked(
        self, sample: Sample, config: RunnableConfig | None = None
    ) -> MetricResult:
        """:meth:`ainvoke` on a sample already validated for this metric (by a metric that
        combines it with others): the same run, without checking the sample again."""
        return await acall_traced(self, self._run_checked, sample, config)

    async def _run_checked(
        self,
        sample: SampleLike,
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
    ) -> MetricResult:
        assert isinstance(sample, Sample)  # validated by the caller
        return await self._evaluate(sample, config)

    def invoke(
        self, input: SampleLike, config: RunnableConfig | None = None, **kwargs: Any
    ) -> MetricResult:
        return self._call_with_config(self._run_blocking, input, config, run_type="chain")

    async def ainvoke(
        self, input: SampleLike, config: RunnableConfig | None = None, **kwargs: Any
    ) -> MetricResult:
        return await acall_traced(self, self._run, input, config)

    async def abatch(
        self,
        inputs: list[SampleLike],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        """Score many samples; identical model calls across them are made once."""
        with run_scope(current_scope() or RunScope()):
            return await super().abatch(
                inputs, config, return_exceptions=return_exceptions, **kwargs
            )

    def batch(
        self,
        inputs: list[SampleLike],
        config: RunnableConfig | list[RunnableConfig] | None = None,
        *,
        return_exceptions: bool = False,
        **kwargs: Any,
    ) -> list[Any]:
        # max_concurrency caps the samples in flight, so it also bounds the model threads.
        first = (config[0] if config else None) if isinstance(config, list) else config
        return run_sync(
            self.abatch(inputs, config, return_exceptions=return_exceptions, **kwargs),
            max_concurrency=(first or {}).get("max_concurrency"),
        )

    def score(self, sample: SampleLike | None = None, /, **fields: Any) -> float | None:
        """The score alone: ``metric.score(response=..., reference=...)``; None when the
        metric does not apply (``MetricResult.not_applicable``)."""
        return self.invoke(sample if sample is not None else fields).score

    async def ascore(self, sample: SampleLike | None = None, /, **fields: Any) -> float | None:
        """Async :meth:`score`."""
        return (await self.ainvoke(sample if sample is not None else fields)).score

    def as_evaluator(self, **mapping: Any) -> MetricEvaluator:
        """This metric as a LangSmith evaluator: ``evaluate(..., evaluators=[m.as_evaluator()])``.

        ``mapping`` says where Sample fields are (``response="answer"``, or a callable).
        """
        check_options(f"{type(self).__name__}.as_evaluator", mapping, MAPPING_OPTIONS)
        # A convenience for langchain_answer_metrics.evaluator(self): the adapter wraps the
        # metric. Reached through the public face at call time, so the metrics import no
        # layer above them and importing them loads no LangSmith evaluator code.
        import langchain_answer_metrics

        return langchain_answer_metrics.evaluator(self, **mapping)

    def as_function_evaluator(self, **mapping: Any) -> FunctionEvaluator:
        """An ``(inputs, outputs, reference_outputs) -> dict`` evaluator (openevals style)."""
        owner = f"{type(self).__name__}.as_function_evaluator"
        check_options(owner, mapping, MAPPING_OPTIONS)
        import langchain_answer_metrics  # the public face, as in as_evaluator

        return langchain_answer_metrics.function_evaluator(self, **mapping)

    def as_summary_evaluator(self, **mapping: Any) -> MetricSummaryEvaluator:
        """A LangSmith summary evaluator: mean, pass rate, error count, 95% CI."""
        return self.as_evaluator(**mapping).summary_evaluator

    def _result(
        self,
        *,
        score: float | None,
        not_applicable: NotApplicable | None = None,
        per_model: dict[str, float],
        excluded: Sequence[ModelFailure] = (),
        details: MetricDetails,
        reason: str,
        usage: dict[str, TokenUsage] | None = None,
        spread: float = 0.0,
    ) -> MetricResult:
        score = None if score is None else min(1.0, max(0.0, score))
        return MetricResult(
            key=self.key,
            score=score,
            not_applicable=not_applicable,
            passed=None if self.threshold is None or score is None else score >= self.threshold,
            threshold=self.threshold,
            per_model=per_model,
            excluded=list(excluded),
            details=details,
            reason=reason,
            band=None if score is None else band_for(score),
            usage=usage or {},
            spread=spread,
        )


class JudgedMetric(AnswerMetric):
    """A metric scored by a panel of chat models (``llm=``).

    ``prompts={step: template or system instructions}`` replaces a step's prompt and
    ``examples={step: [{"input": {...}, "output": {...}}]}`` adds few-shot examples (see
    :mod:`~langchain_answer_metrics.judging.prompt_set`); ``metric.prompts`` shows every
    step's template in effect.
    """

    # The judge steps this metric runs, in order: the keys of ``prompts`` and ``examples``.
    prompt_steps: ClassVar[tuple[str, ...]] = ()

    llm: list[Judge] = Field(min_length=1)
    prompts: dict[str, ChatPromptTemplate] = Field(default_factory=dict)
    examples: dict[str, list[FewShotExample]] = Field(default_factory=dict)
    # Per judge label, its weight (> 0) in a weighted mean (aggregation="mean" only).
    judge_weights: dict[str, float] | None = None

    @model_validator(mode="after")
    def _weights_checked(self) -> JudgedMetric:
        labels, owner = [judge.label for judge in self.llm], type(self).__name__
        weights = check_weights(self.judge_weights, labels, self.aggregation, owner=owner)
        self.judge_weights = weights
        return self

    def _panel_weights(self) -> dict[str, float] | None:
        return self.judge_weights

    @field_validator("llm", mode="before")
    @classmethod
    def _judges(cls, value: Any) -> list[Judge]:
        return as_judges(value)

    @model_validator(mode="before")
    @classmethod
    def _prompts_checked(cls, data: Any) -> Any:
        """Every step's template (the user's, checked, or the default) and its examples."""
        if isinstance(data, dict):
            data = dict(data)
            checked = step_prompts(
                cls.__name__, cls.prompt_steps, data.get("prompts"), data.get("examples")
            )
            data["prompts"] = {step: prompt.template for step, prompt in checked.items()}
            data["examples"] = {
                step: list(prompt.examples) for step, prompt in checked.items() if prompt.examples
            }
        return data

    def _step_prompts(self) -> dict[str, StepPrompt]:
        """What each step sends: its template and its examples."""
        return {
            step: StepPrompt(template, tuple(self.examples.get(step, ())))
            for step, template in self.prompts.items()
        }

    def _panel_members(self) -> Sequence[Judge]:
        return self.llm


class EmbeddingMetric(AnswerMetric):
    """A metric scored by a panel of embedding models (``embeddings=``)."""

    embeddings: list[Embedder] = Field(min_length=1)

    @field_validator("embeddings", mode="before")
    @classmethod
    def _embedders(cls, value: Any) -> list[Embedder]:
        return as_embedders(value)

    def _panel_members(self) -> Sequence[Embedder]:
        return self.embeddings
