"""Pydantic schemas of what the judge models return, one per step.

Reasoning first: in every schema the reason (and evidence) come before the verdict, since
models write the fields in the order the schema gives them.

They accept what a careful reader accepts from a real model, and nothing it would have to
guess: a label in any case, with surrounding spaces or a trailing full stop
("Supported.", "PASS"); a claim given as ``{"claim": ...}`` or ``{"text": ...}``; a
verdict without its ``index`` (:func:`~.steps.claims.verify_claims` then takes the
verdicts in claim order, and says so). "supported or neutral" is no label::

    >>> ClaimVerdict.model_validate({"reason": "r", "verdict": " Supported. "}).verdict
    'supported'
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# What a claim given as an object holds its text under.
CLAIM_TEXT_KEYS = ("claim", "text")


def _label(value: Any, *, upper: bool) -> Any:
    """A label as the schema spells it: case, surrounding spaces and one final "." aside."""
    if not isinstance(value, str):
        return value
    label = value.strip()
    label = label[:-1].rstrip() if label.endswith(".") else label
    return label.upper() if upper else label.lower()


def _claim_text(value: Any) -> Any:
    """``{"claim": "..."}`` or ``{"text": "..."}`` as its string; anything else as given."""
    if not isinstance(value, dict):
        return value
    texts = [value[key] for key in CLAIM_TEXT_KEYS if isinstance(value.get(key), str)]
    # Both keys with different texts: which one is the claim is a guess; refuse it.
    return texts[0] if len(set(texts)) == 1 else value


class ClaimList(BaseModel):
    """The text's atomic claims, in its language."""

    claims: list[str] = Field(description="One self-contained fact each.")

    @field_validator("claims", mode="before")
    @classmethod
    def _claims_as_text(cls, value: Any) -> Any:
        return [_claim_text(item) for item in value] if isinstance(value, list) else value


def _index_asked_for(schema: dict[str, Any]) -> None:
    # Shown to the model as a required integer; a reply without it is still read.
    schema["properties"]["index"] = {
        "type": "integer",
        "title": "Index",
        "description": "The claim's number (1-based).",
    }
    schema["required"] = ["index", *schema.get("required", [])]


class ClaimVerdict(BaseModel):
    """The verdict on one numbered claim."""

    model_config = ConfigDict(json_schema_extra=_index_asked_for)

    index: int | None = Field(default=None, description="The claim's number (1-based).")
    reason: str = Field(description="One sentence on why.")
    evidence: str = Field(
        default="",
        description="The source's deciding words, or empty.",
    )
    verdict: Literal["supported", "contradicted", "neutral"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict_label(cls, value: Any) -> Any:
        return _label(value, upper=False)


class ClaimVerdicts(BaseModel):
    """One verdict per claim, in claim order."""

    verdicts: list[ClaimVerdict]


class AspectVerdict(BaseModel):
    """PASS or FAIL on the criterion."""

    reason: str = Field(description="Why it does or does not meet it.")
    verdict: Literal["PASS", "FAIL"]

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict_label(cls, value: Any) -> Any:
        return _label(value, upper=True)
