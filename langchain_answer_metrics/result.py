"""What every metric returns: a score with its explanation and per-model breakdown."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

Band = Literal["excellent", "good", "moderate", "poor"]
Verdict = Literal["supported", "contradicted", "neutral"]


def band_for(score: float) -> Band:
    """The spec's score bands: >= 0.9 excellent, >= 0.7 good, >= 0.5 moderate."""
    if score >= 0.9:
        return "excellent"
    if score >= 0.7:
        return "good"
    if score >= 0.5:
        return "moderate"
    return "poor"


class ModelFailure(BaseModel):
    """A judge or embedding model left out of the score, with where and why it failed."""

    model: str
    step: str
    error: str
    error_type: str


class TokenUsage(BaseModel):
    """What one model actually spent on one sample, where the model reports it.

    ``requests`` and the tokens count only what was sent: a reply served from LangChain's
    cache counts in ``cached`` instead, with no request and no tokens.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    requests: int = 0
    cached: int = 0

    def add(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            requests=self.requests + other.requests,
            cached=self.cached + other.cached,
        )


class ClaimVerdictDetail(BaseModel):
    """One claim and the verdict a judge gave it against a source text."""

    claim: str
    verdict: Verdict
    reason: str
    evidence: str = ""


class MetricResult(BaseModel):
    """The outcome of one metric on one sample.

    ``details`` holds the claim-level record: for claim metrics, per model, the claims of
    each side with one verdict each; for AspectCritic, every vote; for AnswerCorrectness,
    both component results.
    """

    key: str
    score: float = Field(ge=0.0, le=1.0)
    passed: bool | None = None
    threshold: float | None = None
    per_model: dict[str, float] = Field(default_factory=dict)
    excluded: list[ModelFailure] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    reason: str = ""
    band: Band
    usage: dict[str, TokenUsage] = Field(default_factory=dict)
