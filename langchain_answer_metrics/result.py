"""What every metric returns: a score with its explanation, per-model breakdown and details.

``MetricResult.details`` is typed, one model per metric, told apart by its ``kind``::

    match result.details:
        case FactualCorrectnessDetails(models=models):
            claims = models["gpt-4o-mini"].response_claims   # list[ClaimVerdictDetail]
        case AspectCriticDetails(models=models): ...

The details models also read like the dicts they replace (``details["models"][m]
["response_claims"][0]["verdict"]``) and dump to the same JSON, plus ``kind``. Details
recorded before they were typed (no ``kind``) are recognised by their own keys or the
result's key (:func:`infer_kind`); what fits no metric's details stays a plain dict.
"""

from __future__ import annotations

from collections.abc import ItemsView, KeysView, Mapping, ValuesView
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    ValidationError,
    model_serializer,
    model_validator,
)

Band = Literal["excellent", "good", "moderate", "poor"]
Verdict = Literal["supported", "contradicted", "neutral"]
ClaimSide = Literal["response", "reference"]
Vote = Literal["PASS", "FAIL"]
NotApplicable = Literal["no_claims"]  # why a result has no score: docs/abstentions.md
MetricKind = Literal[
    "factual_correctness", "faithfulness", "aspect_critic", "semantic_similarity",
    "answer_correctness",
]  # fmt: skip
METRIC_KINDS: tuple[MetricKind, ...] = get_args(MetricKind)


def band_for(score: float) -> Band:
    """The spec's score bands: >= 0.9 excellent, >= 0.7 good, >= 0.5 moderate."""
    if score >= 0.9:
        return "excellent"
    if score >= 0.7:
        return "good"
    if score >= 0.5:
        return "moderate"
    return "poor"


class ReadsLikeDict(BaseModel):
    """A model that also reads like the dict it dumps to: ``model["field"]``, ``get``,
    ``in``, ``keys``/``values``/``items``, ``len`` and equality with such a dict."""

    def keys(self) -> KeysView[str]:
        return self._as_dict().keys()

    def values(self) -> ValuesView[Any]:
        return self._as_dict().values()

    def items(self) -> ItemsView[str, Any]:
        return self._as_dict().items()

    def get(self, key: str, default: Any = None) -> Any:
        return self._as_dict().get(key, default)

    def __getitem__(self, key: str) -> Any:
        return self._as_dict()[key]

    def __contains__(self, key: object) -> bool:
        return key in self._as_dict()

    def __len__(self) -> int:
        return len(self._as_dict())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._as_dict() == dict(other)
        return super().__eq__(other)

    def _as_dict(self) -> dict[str, Any]:
        """The fields (typed values, not dumped) under the keys the dump has."""
        return {name: getattr(self, name) for name in type(self).model_fields}


class DetailsModel(ReadsLikeDict):
    """Base of the details models. A field named in ``absent_when_none`` is left out of the
    dump and of the keys while it is None, as it was absent from the dicts of earlier
    versions; every other field is always there."""

    model_config = ConfigDict(extra="forbid")
    absent_when_none: ClassVar[frozenset[str]] = frozenset()

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
    """A judge or embedding model left out of the score, with where and why it failed."""

    model: str
    step: str
    error: str
    error_type: str
    usage: TokenUsage | None = Field(
        default=None, description="What the model spent on the sample before it failed."
    )


class TokenUsage(BaseModel):
    """What one model actually spent on one sample, where the model reports it.

    ``requests`` and the tokens count only what was sent: a reply served from LangChain's
    cache counts in ``cached`` instead, with no request and no tokens.
    ``cached_input_tokens``: the part of ``input_tokens`` read from the provider's prompt cache.
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
            "response": self.response_claims, "reference": self.reference_claims,
        }  # fmt: skip
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


DETAILS_BY_KIND: dict[str, type[DetailsModel]] = {
    "factual_correctness": FactualCorrectnessDetails,
    "faithfulness": FaithfulnessDetails,
    "aspect_critic": AspectCriticDetails,
    "semantic_similarity": SemanticSimilarityDetails,
    "answer_correctness": AnswerCorrectnessDetails,
}

# Keys that only one metric's details (or its models' details) have, most telling first.
_MARKS: tuple[tuple[MetricKind, frozenset[str]], ...] = (
    ("answer_correctness", frozenset({"factual_correctness", "semantic_similarity", "weights"})),
    ("aspect_critic", frozenset({"criterion", "strictness", "votes", "verdict"})),
    ("semantic_similarity", frozenset({"long_text", "rescale_baseline", "cosine"})),
    ("factual_correctness", frozenset({"mode", "beta", "reference_claims", "precision", "recall"})),
    ("faithfulness", frozenset({"supported", "total"})),
)


def infer_kind(details: Mapping[str, Any], key: object = None) -> MetricKind | None:
    """Which metric made ``details`` that carry no ``kind``: by the keys only one metric's
    details have (theirs or their models'), else by the result's ``key`` when it names a
    metric, else claims of the response alone read as Faithfulness's."""
    if isinstance(details.get("kind"), str) and details["kind"] in METRIC_KINDS:
        return details["kind"]
    names = set(details)
    models = details.get("models")
    if isinstance(models, Mapping):
        for model_details in models.values():
            if isinstance(model_details, Mapping):
                names.update(model_details)
    for kind, marks in _MARKS:
        if names & marks:
            return kind
    by_key = next((kind for kind in METRIC_KINDS if kind == key), None)
    return by_key or ("faithfulness" if "response_claims" in names else None)


def _details_tag(value: Any) -> str:
    if isinstance(value, DetailsModel):
        return str(getattr(value, "kind", "untyped"))
    if isinstance(value, Mapping) and value.get("kind") in METRIC_KINDS:
        return str(value["kind"])
    return "untyped"


MetricDetails = Annotated[
    Annotated[FactualCorrectnessDetails, Tag("factual_correctness")]
    | Annotated[FaithfulnessDetails, Tag("faithfulness")]
    | Annotated[AspectCriticDetails, Tag("aspect_critic")]
    | Annotated[SemanticSimilarityDetails, Tag("semantic_similarity")]
    | Annotated[AnswerCorrectnessDetails, Tag("answer_correctness")]
    | Annotated[dict[str, Any], Tag("untyped")],
    Discriminator(_details_tag),
]
"""A metric's details, told apart by ``kind``; a plain dict for details of no known shape
(those of a metric of your own, or ``{}``)."""


class MetricResult(ReadsLikeDict):
    """The outcome of one metric on one sample.

    ``details`` holds the claim-level record (see :data:`MetricDetails`): for claim
    metrics, per model, the claims of each side with one verdict each; for AspectCritic,
    every vote; for SemanticSimilarity, each cosine; for AnswerCorrectness, both component
    results. A result also reads like its dict (``result["score"]``), as a component of
    AnswerCorrectness's details did when it was one.
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
    band: Band | None
    usage: dict[str, TokenUsage] = Field(default_factory=dict)
    spread: float = Field(
        default=0.0, ge=0.0, le=1.0,
        description="How far the panel's models disagree: max - min of their scores.",
    )  # fmt: skip

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


AnswerCorrectnessDetails.model_rebuild()
MetricResult.model_rebuild()
