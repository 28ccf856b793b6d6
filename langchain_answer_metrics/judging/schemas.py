"""Pydantic schemas of what the judge models return, one per step."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class ClaimList(BaseModel):
    """Atomic, self-contained claims extracted from a text, in the text's language."""

    claims: list[str] = Field(
        description="Each claim states one fact and can be understood on its own."
    )


class ClaimVerdict(BaseModel):
    """The verdict on one numbered claim."""

    index: int = Field(description="The number of the claim this verdict is for (1-based).")
    verdict: Literal["supported", "contradicted", "neutral"]
    reason: str = Field(description="One sentence explaining the verdict.")
    evidence: str = Field(
        default="",
        description="A short quote from the source that decides the verdict, or empty.",
    )


class ClaimVerdicts(BaseModel):
    """Exactly one verdict per claim, in claim order."""

    verdicts: list[ClaimVerdict]


class AspectVerdict(BaseModel):
    """A PASS/FAIL judgement of a response against one criterion."""

    reason: str = Field(description="Why the response does or does not meet the criterion.")
    verdict: Literal["PASS", "FAIL"]
