"""AnswerCorrectness: a weighted sum of FactualCorrectness (F-beta) and SemanticSimilarity.

score = w_f * factual + w_s * semantic, with the weights normalised to sum to 1
(0.75 / 0.25 by default). It makes no requests beyond those of its two components, which
are built once (again only when a setting they are built from changes) and score the
sample this metric has validated, without validating it again.

A component may be given ready-made (``factual=FactualCorrectness(...)``,
``semantic=SemanticSimilarity(...)``), with its own judges, mode, embeddings, threshold
and prompts; the settings that would build it (``llm``, ``beta``; ``embeddings``,
``long_text``...) are then refused, since they would not apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig
from pydantic import Field, PrivateAttr, model_validator

from langchain_answer_metrics.core.result import (
    AnswerCorrectnessDetails,
    ComponentWeights,
    MetricResult,
)
from langchain_answer_metrics.core.sample import Sample, SampleField
from langchain_answer_metrics.core.strict_options import check_options, field_names
from langchain_answer_metrics.judging.chunking import DEFAULT_CHARS_PER_TOKEN, LongTextMode
from langchain_answer_metrics.judging.judges import Embedder, Judge, as_embedders, as_judges
from langchain_answer_metrics.judging.sync import gather_settled
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.metrics.factual_correctness import FactualCorrectness
from langchain_answer_metrics.metrics.semantic_similarity import SemanticSimilarity

# The settings each component is built from; a change to any of them rebuilds it.
FACTUAL_SETTINGS = ("llm", "beta", "aggregation", "tolerance")
SEMANTIC_SETTINGS = (
    "embeddings",
    "aggregation",
    "tolerance",
    "long_text",
    "max_tokens",
    "chars_per_token",
    "rescale_baseline",
)

PRESETS: dict[str, tuple[float, float]] = {
    "default": (0.75, 0.25),
    "equal_weights": (0.5, 0.5),
    "factual_focused": (0.9, 0.1),
    "semantic_focused": (0.1, 0.9),
}


@dataclass(frozen=True, eq=False)
class _Components:
    """The two metrics combined, with the settings they were built from (none yet: ``()``)."""

    settings: tuple[Any, ...] = ()
    factual: FactualCorrectness | None = None
    semantic: SemanticSimilarity | None = None

    def __eq__(self, other: object) -> bool:
        # Built or not yet, the components never make two metrics unequal: settings do.
        return isinstance(other, _Components)


class AnswerCorrectness(AnswerMetric):
    """Weighted factual and semantic agreement with the reference.

    Attributes:
        llm: the judges of the factual part (:class:`FactualCorrectness`).
        embeddings: the embedding models of the semantic part (:class:`SemanticSimilarity`).
        factual: a configured FactualCorrectness to use instead of ``llm`` and ``beta``.
        semantic: a configured SemanticSimilarity to use instead of ``embeddings`` ...
        factual_weight: the factual part's weight (weights are normalised to sum 1).
        semantic_weight: the semantic part's weight.
        beta: the factual part's F-beta weight: above 1 favours recall.
        long_text: the semantic part's ``long_text`` (see :class:`SemanticSimilarity`).
        max_tokens: the semantic part's ``max_tokens``.
        chars_per_token: the semantic part's ``chars_per_token``.
        rescale_baseline: the semantic part's ``rescale_baseline``.

    Other options (``threshold``, ``aggregation`` ...) are every metric's (:class:`AnswerMetric`).

    Raises:
        InvalidSampleError: from ``invoke``: no ``response`` or ``reference``.
        pydantic.ValidationError: neither ``llm=`` nor ``factual=`` (or ``embeddings=`` /
            ``semantic=``), a setting beside its configured part, or weights summing to 0.

    Example:
        >>> metric = AnswerCorrectness(llm=ChatOpenAI(model="gpt-4o-mini"),
        ...                            embeddings=OpenAIEmbeddings())
        >>> result = metric.invoke({"response": "Moscow is the capital of Russia.",
        ...                         "reference": "Moscow is the capital of Russia."})
        >>> result.details["factual_correctness"]["score"], result.score
        (1.0, 0.99...)
        >>> AnswerCorrectness.factual_focused(llm=..., embeddings=...)  # 0.9 / 0.1
    """

    metric_key: ClassVar[str] = "answer_correctness"
    required_fields: ClassVar[tuple[SampleField, ...]] = ("response", "reference")

    llm: list[Judge] = Field(default_factory=list)
    embeddings: list[Embedder] = Field(default_factory=list)
    given_factual: FactualCorrectness | None = Field(
        default=None, alias="factual", description="A configured FactualCorrectness to use."
    )
    given_semantic: SemanticSimilarity | None = Field(
        default=None, alias="semantic", description="A configured SemanticSimilarity to use."
    )
    factual_weight: float = Field(default=0.75, ge=0.0)
    semantic_weight: float = Field(default=0.25, ge=0.0)
    beta: float = Field(default=1.0, gt=0)
    long_text: LongTextMode = Field(
        default="chunk",
        description="The semantic component's long_text (see SemanticSimilarity): 'fail_fast' "
        "refuses only a text the embedding model's own tokenizer counts over max_tokens; "
        "with only the chars_per_token estimate it is sent as it is (limit_checked=False).",
    )
    max_tokens: int = Field(default=512, ge=1)
    chars_per_token: float = Field(default=DEFAULT_CHARS_PER_TOKEN, gt=0)
    rescale_baseline: float | None = Field(default=None, ge=0.0, lt=1.0)

    # Replaced, never changed in place: a copy may share it until its settings differ.
    _built: _Components = PrivateAttr(default_factory=_Components)

    @model_validator(mode="before")
    @classmethod
    def _models(cls, data: Any) -> Any:
        if isinstance(data, dict):
            check_options(cls.__name__, data, field_names(cls))  # a typo first, named
            data = dict(data)
            for component, settings, models in (
                ("factual", FACTUAL_SETTINGS, "llm"),
                ("semantic", SEMANTIC_SETTINGS, "embeddings"),
            ):
                if data.get(component) is None:
                    if data.get(models) is None:
                        raise ValueError(
                            f"AnswerCorrectness: give {models}= or a configured "
                            f"{component}= component"
                        )
                    continue
                shared = ("aggregation", "tolerance")
                both = data.get("factual") is not None and data.get("semantic") is not None
                for name in settings:
                    if name in data and (name not in shared or both):
                        raise ValueError(
                            f"AnswerCorrectness: {name}= does not apply with a configured "
                            f"{component}= component; set it on the component"
                        )
            if data.get("llm") is not None:
                data["llm"] = as_judges(data["llm"])
            if data.get("embeddings") is not None:
                data["embeddings"] = as_embedders(data["embeddings"])
        return data

    @model_validator(mode="after")
    def _weights_sum(self) -> AnswerCorrectness:
        if self.factual_weight + self.semantic_weight <= 0:
            raise ValueError("AnswerCorrectness: factual_weight + semantic_weight must be > 0")
        return self

    @classmethod
    def _preset(cls, preset: str, **options: Any) -> AnswerCorrectness:
        factual, semantic = PRESETS[preset]
        check_options(f"{cls.__name__}.{preset}", options, field_names(cls))
        return cls(factual_weight=factual, semantic_weight=semantic, **options)

    @classmethod
    def default(cls, **options: Any) -> AnswerCorrectness:
        """0.75 factual, 0.25 semantic."""
        return cls._preset("default", **options)

    @classmethod
    def equal_weights(cls, **options: Any) -> AnswerCorrectness:
        """0.5 factual, 0.5 semantic."""
        return cls._preset("equal_weights", **options)

    @classmethod
    def factual_focused(cls, **options: Any) -> AnswerCorrectness:
        """0.9 factual, 0.1 semantic."""
        return cls._preset("factual_focused", **options)

    @classmethod
    def semantic_focused(cls, **options: Any) -> AnswerCorrectness:
        """0.1 factual, 0.9 semantic."""
        return cls._preset("semantic_focused", **options)

    @property
    def weights(self) -> tuple[float, float]:
        """The normalised (factual, semantic) weights."""
        total = self.factual_weight + self.semantic_weight
        return self.factual_weight / total, self.semantic_weight / total

    @property
    def factual(self) -> FactualCorrectness:
        """The FactualCorrectness (F-beta) component."""
        return self._components()[0]

    @property
    def semantic(self) -> SemanticSimilarity:
        """The SemanticSimilarity component."""
        return self._components()[1]

    def _components(self) -> tuple[FactualCorrectness, SemanticSimilarity]:
        """The components, built on first use and again only after a setting they are
        built from changed (by assignment or ``model_copy(update=...)``)."""
        names = (*FACTUAL_SETTINGS, *SEMANTIC_SETTINGS, "given_factual", "given_semantic")
        settings = tuple(
            tuple(value) if isinstance(value, list) else value
            for value in (getattr(self, name) for name in names)
        )
        built = self._built
        if built.factual is not None and built.semantic is not None and built.settings == settings:
            return built.factual, built.semantic
        factual = self.given_factual or FactualCorrectness(
            mode="f1", **{name: getattr(self, name) for name in FACTUAL_SETTINGS}
        )
        semantic = self.given_semantic or SemanticSimilarity(
            **{name: getattr(self, name) for name in SEMANTIC_SETTINGS}
        )
        self._built = _Components(settings, factual, semantic)
        return factual, semantic

    def check_sample(self, value: Any) -> Sample:
        """Validated once, with this metric's limits, for both components."""
        return self.semantic._refuse_long_texts(super().check_sample(value))

    async def _evaluate(self, sample: Sample, config: RunnableConfig) -> MetricResult:
        factual_metric, semantic_metric = self._components()
        factual, semantic = await gather_settled(
            factual_metric._ainvoke_checked(sample, config),
            semantic_metric._ainvoke_checked(sample, config),
        )
        factual_weight, semantic_weight = self.weights
        # Neither component is ever not applicable: an abstention's recall against a
        # reference is 0 (docs/abstentions.md).
        assert factual.score is not None and semantic.score is not None
        score = factual_weight * factual.score + semantic_weight * semantic.score
        per_model = {
            f"{component.key}/{label}": model_score
            for component in (factual, semantic)
            for label, model_score in component.per_model.items()
        }
        excluded = [
            failure.model_copy(update={"model": f"{component.key}/{failure.model}"})
            for component in (factual, semantic)
            for failure in component.excluded
        ]
        return self._result(
            score=score,
            per_model=per_model,
            excluded=excluded,
            details=AnswerCorrectnessDetails(
                weights=ComponentWeights(factual=factual_weight, semantic=semantic_weight),
                factual_correctness=factual,
                semantic_similarity=semantic,
            ),
            reason=(
                f"{score:.2f} = {factual_weight:.2f} × factual {factual.score:.2f} + "
                f"{semantic_weight:.2f} × semantic {semantic.score:.2f}. "
                f"Factual {factual.reason}"
            ),
            usage={
                f"{component.key}/{label}": spent
                for component in (factual, semantic)
                for label, spent in component.usage.items()
            },
            # The larger disagreement of the two panels.
            spread=max(factual.spread, semantic.spread),
        )
