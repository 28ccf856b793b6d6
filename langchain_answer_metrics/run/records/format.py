"""The one record of a run: a line per finished sample, written by the CLI's ``--out`` and
the runner's ``checkpoint=`` alike, and read back by a resume, a report, ``compare`` and
``calibrate``; and the line of a batch run's batch, kept in the same stream.

    >>> record = sample_record("q1", fingerprint, sample_text, results, signatures)
    >>> Path("results.jsonl").write_text(record_line(record))
    >>> records, unreadable = read_records(Path("results.jsonl"))

A :class:`SampleRecord` keeps the sample's text, each metric's score, band, reason,
per-model scores, claim verdicts (or votes, or context verdicts), any error and the whole
result as JSON (``result``: what a resumed run gives back), so a report can be rebuilt
from the file alone and a resumed run knows what is already scored. The format is
versioned (``schema_version``) and documented in docs/records.md. A record is built from
results in :mod:`.building` and read back in :mod:`.reading` (which reads the lines of
earlier versions too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langchain_answer_metrics.checkpoints import json_line
from langchain_answer_metrics.checkpoints.fingerprints import same_judged_metric
from langchain_answer_metrics.core.result import (
    ClaimSide,
    ClaimVerdictDetail,
    DetailsModel,
    TokenUsage,
)
from langchain_answer_metrics.metrics.agent_calls import TrajectoryView
from langchain_answer_metrics.metrics.judged_steps import JudgedSteps

# 1: the first format, whose version field was named ``version``; 2: ``schema_version``
# and each metric's ``kind``. See docs/records.md.
SCHEMA_VERSION = 2


class ClaimRecord(ClaimVerdictDetail):
    """One claim a judge checked (the result's :class:`ClaimVerdictDetail`), with the
    model and the side it came from."""

    model_config = ConfigDict(extra="ignore")
    model: str
    side: ClaimSide
    reason: str = ""  # absent from some lines written by hand


class VoteRecord(BaseModel):
    """A voting judge's verdict with every vote and its reason, with the model that voted:
    AspectCritic's PASS/FAIL (the result's :class:`AspectCriticModelDetails`), a
    CustomJudge's label, scale level or value."""

    model_config = ConfigDict(extra="ignore")
    model: str
    verdict: str | int | float
    votes: list[str | int | float] = Field(default_factory=list)
    reasons: list[str] = Field(default_factory=list)


class ContextRecord(DetailsModel):
    """One retrieved context a judge gave a verdict on (ContextPrecision's useful or not,
    ContextRelevance's relevant or not), with the model; the context's text is the
    sample's ``retrieved_contexts[rank - 1]``."""

    model_config = ConfigDict(extra="ignore")
    absent_when_none = frozenset({"taken_in_order"})
    model: str
    rank: int = Field(description="1 = retrieved first.")
    verdict: str
    reason: str = ""
    taken_in_order: bool | None = None  # True: the judge's numbering was wrong


class ErrorRecord(BaseModel):
    type: str
    message: str


class MetricRecord(BaseModel):
    """One metric's outcome on one sample: a score with its explanation, or an error."""

    kind: str | None = Field(
        default=None,
        description="Which metric scored (``aspect_critic`` for a criterion keyed by its "
        "name); None for an error, or a record of version 1.",
    )
    score: float | None = None
    not_applicable: str | None = Field(
        default=None, description="Why there is no score though nothing failed ('no_claims')."
    )
    no_claims: bool = Field(default=False, description="The response made no claim.")
    band: str | None = None
    reason: str = ""
    per_model: dict[str, float] = Field(default_factory=dict)
    components: dict[str, float] = Field(default_factory=dict)
    claims: list[ClaimRecord] = Field(default_factory=list)
    votes: list[VoteRecord] = Field(default_factory=list)
    contexts: list[ContextRecord] = Field(
        default_factory=list,
        description="Each judge's verdict on each context; empty for other metrics, and "
        "in a record written before they were kept.",
    )
    excluded: list[dict[str, str]] = Field(default_factory=list)
    trajectory: TrajectoryView | None = None  # a tool-call metric's calls, side by side
    judged_steps: JudgedSteps | None = None  # a judged agent metric's faulted steps
    error: ErrorRecord | None = None
    signature: str = Field(
        default="", description="The metric's settings; a resume re-scores on a change."
    )
    judges: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Each judge's model id and sampling settings, by label, as signed "
        "(the signature's part after its dot): what a resume names when they differ. "
        "Empty in a record written before they were kept.",
    )
    usage: dict[str, TokenUsage] = Field(
        default_factory=dict,
        description="What each model spent on this score, or before the metric failed "
        "(by usage label); empty in a record written before usage was kept.",
    )
    result: dict[str, Any] | None = Field(
        default=None,
        description="The whole MetricResult as JSON (secrets redacted): what a resumed run "
        "gives back for this score, details included. None for an error, and in a record "
        "written before the one format (a resume then rebuilds the result from the "
        "fields above: :func:`restored_result`).",
    )


class SampleRecord(BaseModel):
    """One line of the ``--out`` file."""

    # Required, so that a line of some other JSONL file (a dataset) is never taken for one.
    schema_version: Literal[2]
    id: str
    fingerprint: str = ""
    user_input: str | None = None
    response: str | None = None
    reference: str | None = None
    retrieved_contexts: list[str] | None = None
    metrics: dict[str, MetricRecord] = Field(default_factory=dict)

    def scored(self, key: str, signature: str, *, keep_degraded: bool = False) -> bool:
        """Whether ``key`` already has a score made with the same settings (and, unless
        ``keep_degraded``, by every judge: one excluded by a transient failure is redone)."""
        record = self.metrics.get(key)
        return (
            record is not None
            and record.error is None
            and same_judged_metric(record.signature, signature)
            and (keep_degraded or not record.excluded)
        )


TEXT_FIELDS = ("user_input", "response", "reference", "retrieved_contexts")
"""The sample's texts a record keeps."""


BATCH_KINDS = ("batch", "ended")
"""The ``kind`` of a batch's line: created (its id and what each of its lines is for), or
ended (its status and the provider's reason)."""


def is_batch_line(value: Any) -> bool:
    """Whether a line's JSON value is a batch's line of the records stream."""
    return (
        isinstance(value, dict) and "schema_version" in value and value.get("kind") in BATCH_KINDS
    )


def batch_line(fields: Mapping[str, Any]) -> str:
    """A batch's line of the records stream: ``fields`` (``kind`` first) after the version."""
    return json_line({"schema_version": SCHEMA_VERSION, **fields})


def record_line(record: SampleRecord) -> str:
    """One JSON line, keeping non-ASCII text readable (a lone surrogate, which UTF-8
    cannot hold, becomes U+FFFD)."""
    return json_line(record.model_dump(mode="json"))
