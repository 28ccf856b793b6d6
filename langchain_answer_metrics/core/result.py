"""What every metric returns: a score with its explanation, per-model breakdown and details.

``MetricResult.details`` is typed, one model per metric, told apart by its ``kind``::

    match result.details:
        case FactualCorrectnessDetails(models=models):
            claims = models["gpt-4o-mini"].response_claims   # list[ClaimVerdictDetail]
        case AspectCriticDetails(models=models): ...

Kinds are open: a details model with a ``kind`` (``kind: Literal["my_metric"] =
"my_metric"``) is registered when its class is defined, so a metric of your own keeps its
details model in its own module and its results still load from JSON. The built-in
metrics' details live here because the summary, the records and the report read them.
Details of no registered kind stay a plain dict. What keeps 0.1.0's data readable (dict
reading, details without a ``kind``) is in :mod:`~langchain_answer_metrics.core.compat`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    Tag,
    ValidationError,
    model_serializer,
    model_validator,
)

from langchain_answer_metrics.core.compat import ReadsLikeDict, infer_kind

Band = Literal["excellent", "good", "moderate", "poor"]
Verdict = Literal["supported", "contradicted", "neutral"]
ClaimSide = Literal["response", "reference"]
Vote = Literal["PASS", "FAIL"]
NotApplicable = Literal["no_claims", "single_turn"]  # why no score: docs/abstentions.md


def band_for(score: float) -> Band:
    """The spec's score bands: >= 0.9 excellent, >= 0.7 good, >= 0.5 moderate."""
    if score >= 0.9:
        return "excellent"
    if score >= 0.7:
        return "good"
    if score >= 0.5:
        return "moderate"
    return "poor"


DETAILS_BY_KIND: dict[str, type[DetailsModel]] = {}
"""Every details model by its ``kind``, filled as each is defined (here or in your module)."""


class DetailsModel(ReadsLikeDict):
    """Base of the details models. A field named in ``absent_when_none`` is left out of the
    dump and of the keys while it is None, as it was absent from the dicts of earlier
    versions; every other field is always there."""

    model_config = ConfigDict(extra="forbid")
    absent_when_none: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass with a ``kind`` default is the details model of that kind."""
        super().__pydantic_init_subclass__(**kwargs)
        field = cls.model_fields.get("kind")
        if field is None or not isinstance(field.default, str):
            return
        known = DETAILS_BY_KIND.get(field.default)
        if known is not None and (known.__module__, known.__qualname__) != (
            cls.__module__,
            cls.__qualname__,
        ):
            raise TypeError(
                f"{cls.__qualname__}: details kind {field.default!r} is already "
                f"{known.__module__}.{known.__qualname__}'s"
            )
        DETAILS_BY_KIND[field.default] = cls

    @model_serializer(mode="wrap")
    def _leave_out_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in self.absent_when_none:
            if data.get(name, 0) is None:
                del data[name]
        return data

    def _as_dict(self) -> dict[str, Any]:
        return {
            name: getattr(self, name)
            for name in type(self).model_fields
            if not (name in self.absent_when_none and getattr(self, name) is None)
        }


class ModelFailure(BaseModel):
    """A judge or embedding model left out of the score, with where and why it failed.

    Attributes:
        model: the model's label.
        step: the step it failed at, e.g. ``"verify_claims"``.
        error: the error's message (secrets redacted).
        error_type: the error's class name, e.g. ``"RateLimitError"``.
        usage: what the model spent on the sample before it failed.

    Example:
        >>> [(failure.model, failure.step, failure.error_type) for failure in result.excluded]
    """

    model: str
    step: str
    error: str
    error_type: str
    usage: TokenUsage | None = Field(
        default=None, description="What the model spent on the sample before it failed."
    )


class TokenUsage(BaseModel):
    """What one model actually spent on one sample, where the model reports it.

    Attributes:
        input_tokens: prompt tokens sent.
        output_tokens: completion tokens received.
        total_tokens: both together.
        requests: requests sent; these and the tokens count only what was sent.
        cached: replies served from LangChain's cache instead (no request, no tokens).
        cached_input_tokens: the part of ``input_tokens`` read from the provider's prompt cache.

    Example:
        >>> metric.invoke(sample).usage["gpt-4o-mini"].input_tokens  # by model label
    """

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    requests: int = 0
    cached: int = 0
    cached_input_tokens: int = 0

    def add(self, other: TokenUsage) -> TokenUsage:
        fields = type(self).model_fields  # every field is a count
        return TokenUsage(**{name: getattr(self, name) + getattr(other, name) for name in fields})


class ClaimVerdictDetail(DetailsModel):
    """One claim and the verdict a judge gave it against a source text."""

    absent_when_none = frozenset({"taken_in_order"})
    claim: str
    verdict: Verdict
    reason: str
    evidence: str = ""
    taken_in_order: bool | None = None  # True: the judge's numbering was wrong, see verify_claims


# --------------------------------------------------------------------------- per model


class FactualCorrectnessModelDetails(DetailsModel):
    """One judge's claims, each side checked against the other, and the two ratios.

    A side the mode does not check (``reference_*`` in precision mode, ``response_*`` in
    recall mode) is None and absent from the dump.
    """

    absent_when_none = frozenset({"response_claims", "precision", "reference_claims", "recall"})

    no_claims: list[ClaimSide] = Field(
        default_factory=list, description="The sides with no checkable claim (ratio 0.0)."
    )
    response_claims: list[ClaimVerdictDetail] | None = None
    precision: float | None = None
    reference_claims: list[ClaimVerdictDetail] | None = None
    recall: float | None = None

    def claims_by_side(self) -> dict[ClaimSide, list[ClaimVerdictDetail]]:
        sides: dict[ClaimSide, list[ClaimVerdictDetail] | None] = {
            "response": self.response_claims,
            "reference": self.reference_claims,
        }
        return {side: claims for side, claims in sides.items() if claims is not None}


class FaithfulnessModelDetails(DetailsModel):
    """One judge's response claims checked against the retrieved contexts."""

    response_claims: list[ClaimVerdictDetail] = Field(default_factory=list)
    supported: int = 0
    total: int = 0
    no_claims: list[Literal["response"]] = Field(default_factory=list)

    def claims_by_side(self) -> dict[ClaimSide, list[ClaimVerdictDetail]]:
        return {"response": self.response_claims}


class AspectCriticModelDetails(DetailsModel):
    """One judge's majority verdict, every vote, and the reason given with each vote."""

    verdict: Vote
    votes: list[Vote] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)


class SemanticSimilarityModelDetails(DetailsModel):
    """One embedding model's raw cosine and its similarity (clamped, maybe rescaled)."""

    absent_when_none = frozenset({"limit_checked"})
    cosine: float
    similarity: float
    # How many pieces each text was embedded in (more than 1: it was chunked), and how
    # its tokens were counted ("tokenizer" or "chars_per_token").
    pieces: dict[str, int] = Field(default_factory=dict)
    chunked: bool = False
    token_count: str | None = None
    # fail_fast only: False when no tokenizer counted, so the texts were sent unchecked.
    limit_checked: bool | None = None


# --------------------------------------------------------------------------- per metric
# The settings beside ``models`` may be missing from details recorded by hand or by an
# earlier version; those absent then are None and left out of the dump.


class FactualCorrectnessDetails(DetailsModel):
    absent_when_none = frozenset({"mode", "beta"})

    kind: Literal["factual_correctness"] = "factual_correctness"
    mode: str | None = None
    beta: float | None = None
    models: dict[str, FactualCorrectnessModelDetails] = Field(default_factory=dict)


class FaithfulnessDetails(DetailsModel):
    kind: Literal["faithfulness"] = "faithfulness"
    models: dict[str, FaithfulnessModelDetails] = Field(default_factory=dict)


class AspectCriticDetails(DetailsModel):
    absent_when_none = frozenset({"criterion", "strictness"})

    kind: Literal["aspect_critic"] = "aspect_critic"
    criterion: str | None = None
    strictness: int | None = None
    models: dict[str, AspectCriticModelDetails] = Field(default_factory=dict)


class SemanticSimilarityDetails(DetailsModel):
    absent_when_none = frozenset({"long_text"})

    kind: Literal["semantic_similarity"] = "semantic_similarity"
    threshold: float | None = None
    rescale_baseline: float | None = None
    long_text: str | None = None
    models: dict[str, SemanticSimilarityModelDetails] = Field(default_factory=dict)


class ComponentWeights(DetailsModel):
    """AnswerCorrectness's normalised weights (they sum to 1)."""

    factual: float
    semantic: float


class AnswerCorrectnessDetails(DetailsModel):
    """The weights and both component results, each with its own details."""

    absent_when_none = frozenset({"weights"})

    kind: Literal["answer_correctness"] = "answer_correctness"
    weights: ComponentWeights | None = None
    factual_correctness: MetricResult
    semantic_similarity: MetricResult

    @model_validator(mode="before")
    @classmethod
    def _component_keys(cls, data: Any) -> Any:
        """A component given as a bare ``{"score": ...}`` gets its key and band."""
        if isinstance(data, Mapping):
            data = dict(data)
            for name in ("factual_correctness", "semantic_similarity"):
                part = data.get(name)
                if isinstance(part, Mapping):
                    part = {"key": name, **part}
                    if "band" not in part and isinstance(part.get("score"), (int, float)):
                        part["band"] = band_for(part["score"])
                    data[name] = part
        return data


def details_model(kind: str) -> type[DetailsModel] | None:
    """The details model registered for ``kind``, if any."""
    return DETAILS_BY_KIND.get(kind)


def _typed(value: Any) -> Any:
    """Details given as a dict of a registered kind, as that kind's model."""
    if isinstance(value, Mapping) and isinstance(value.get("kind"), str):
        model = DETAILS_BY_KIND.get(value["kind"])
        if model is not None:
            return model.model_validate(value)
    return value


def _details_tag(value: Any) -> str:
    return "typed" if isinstance(value, DetailsModel) else "untyped"


MetricDetails = Annotated[
    Annotated[SerializeAsAny[DetailsModel], Tag("typed")]
    | Annotated[dict[str, Any], Tag("untyped")],
    Discriminator(_details_tag),
    BeforeValidator(_typed),
]
"""A metric's details: the model of its ``kind`` (any registered one), or a plain dict
for details of no known shape (``{}``, or a kind no module has registered)."""


class MetricResult(ReadsLikeDict):
    """The outcome of one metric on one sample.

    ``details`` holds the claim-level record (see :data:`MetricDetails`): for claim metrics, per
    model, the claims of each side with one verdict each; for AspectCritic, every vote; for
    SemanticSimilarity, each cosine; for AnswerCorrectness, both component results. A result
    also reads like its dict (``result["score"]``), as a component of AnswerCorrectness's
    details did when it was one.

    Attributes:
        key: the metric's key, e.g. ``"faithfulness"``.
        score: in [0, 1]; ``None`` only when ``not_applicable`` says why.
        not_applicable: why there is no score (``"no_claims"``): not an error.
        passed: ``score >= threshold``; ``None`` without a threshold.
        threshold: the metric's pass mark, if any.
        per_model: each model's score, by label.
        excluded: the models left out of the score (:class:`ModelFailure`).
        details: the claim-level record above.
        reason: the explanation, for people.
        band: ``"excellent"``, ``"good"``, ``"moderate"``, ``"poor"`` (or a CustomJudge's own).
        usage: what each model spent on the sample (:class:`TokenUsage`), by label.
        spread: how far the panel's models disagree: max - min of their scores.

    Example:
        >>> result = Faithfulness(llm=judge, threshold=0.8).invoke(sample)
        >>> result.score, result.passed, result.band, list(result.per_model)
        (1.0, True, 'excellent', ['gpt-4o-mini'])
    """

    key: str
    score: float | None = Field(ge=0.0, le=1.0)  # None only with not_applicable
    not_applicable: NotApplicable | None = None  # why no score (nor band): not an error
    passed: bool | None = None
    threshold: float | None = None
    per_model: dict[str, float] = Field(default_factory=dict)
    excluded: list[ModelFailure] = Field(default_factory=list)
    details: MetricDetails = Field(default_factory=dict)
    reason: str = ""
    band: Band | str | None  # str: a CustomJudge's own bands; None with no score
    usage: dict[str, TokenUsage] = Field(default_factory=dict)
    spread: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="How far the panel's models disagree: max - min of their scores.",
    )

    @model_validator(mode="before")
    @classmethod
    def _kind_of_untyped_details(cls, data: Any) -> Any:
        """Details without a ``kind`` (an older record, a dict built by hand) are typed
        when they fit the details of the metric they look like; else kept as they are."""
        if isinstance(data, Mapping):
            details = data.get("details")
            if isinstance(details, Mapping) and details and "kind" not in details:
                kind = infer_kind(details, data.get("key"))
                if kind is not None:
                    try:
                        typed = DETAILS_BY_KIND[kind].model_validate(details)
                    except ValidationError:
                        return data
                    return {**data, "details": typed}
        return data

    @model_validator(mode="after")
    def _scored_or_not_applicable(self) -> MetricResult:
        if (self.score is None) == (self.not_applicable is None):
            raise ValueError(f"{self.key}: a score, or why none (not_applicable); not both")
        return self

    @property
    def ok(self) -> bool:
        """True: the metric ran (``score`` is None only when not applicable). A dataset
        run's ``MetricError`` has ``ok`` False, so a loop can test either the same way."""
        return True


AnswerCorrectnessDetails.model_rebuild()
MetricResult.model_rebuild()
