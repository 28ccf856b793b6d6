"""The per-sample record of a run (one line of ``--out``) and the statistics over records.

    >>> record = sample_record(row, results, signatures)       # one JSON line of --out
    >>> Path("results.jsonl").write_text(record_line(record))
    >>> records, unreadable = read_records(Path("results.jsonl"))
    >>> overviews = overview(list(records.values()), ["faithfulness"], {"faithfulness": 0.7})

A :class:`SampleRecord` keeps the sample's text, each metric's score, band, reason,
per-model scores, claim verdicts (or votes, or context verdicts) and any error, so a
report can be rebuilt from the ``--out`` file alone and a resumed run knows what is
already scored. The format is versioned (``schema_version``) and documented in
docs/records.md; :func:`read_records` reads the current version and the lines of earlier
versions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from langchain_answer_metrics.agents.sample import task_and_answer
from langchain_answer_metrics.checkpoints import json_line, read_lines
from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.core.compat import record_in_current_shape
from langchain_answer_metrics.core.redaction import redact
from langchain_answer_metrics.core.result import (
    AnswerCorrectnessDetails,
    ClaimSide,
    ClaimVerdictDetail,
    DetailsModel,
    MetricDetails,
    MetricResult,
    TokenUsage,
)
from langchain_answer_metrics.metrics.agent_calls import AlignedDetails, TrajectoryView
from langchain_answer_metrics.metrics.judged_steps import JudgedSteps, judged_steps_of
from langchain_answer_metrics.run.runner import MetricError
from langchain_answer_metrics.run.summary import MetricSummary, has_no_claims, summarize

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
    usage: dict[str, TokenUsage] = Field(
        default_factory=dict,
        description="What each model spent on this score, or before the metric failed "
        "(by usage label); empty in a record written before usage was kept.",
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
            and record.signature == signature
            and (keep_degraded or not record.excluded)
        )


def metric_record(outcome: MetricResult | MetricError, signature: str = "") -> MetricRecord:
    """Flatten a metric's result (or error) into the record's shape.

    Error messages and reasons are redacted
    (:func:`~langchain_answer_metrics.core.redaction.redact`): a provider's error may quote
    the API key, and the record is written to ``--out``, the report and the terminal.
    """
    if isinstance(outcome, MetricError):
        return MetricRecord(
            error=ErrorRecord(type=outcome.error_type, message=redact(outcome.message)),
            signature=signature,
            usage=outcome.usage,  # what the judges spent before they failed
        )
    details = outcome.details
    components: dict[str, float] = {}
    if isinstance(details, AnswerCorrectnessDetails):
        # AnswerCorrectness: the claims are those of its factual component.
        parts = {
            "factual_correctness": details.factual_correctness,
            "semantic_similarity": details.semantic_similarity,
        }
        components = {name: p.score for name, p in parts.items() if p.score is not None}
    return MetricRecord(
        kind=None if isinstance(details, dict) else getattr(details, "kind", None),
        score=outcome.score,
        not_applicable=outcome.not_applicable,
        no_claims=has_no_claims(outcome),
        band=outcome.band,
        reason=redact(outcome.reason),
        per_model=outcome.per_model,
        components=components,
        claims=list(_claims(details)),
        votes=list(_votes(details)),
        contexts=list(_contexts(details)),
        trajectory=details.trajectory_view() if isinstance(details, AlignedDetails) else None,
        judged_steps=_redacted_steps(judged_steps_of(details)),
        excluded=[
            {"model": failure.model, "step": failure.step, "error": redact(failure.error)}
            for failure in outcome.excluded
        ],
        signature=signature,
        usage=outcome.usage,
    )


def _redacted_steps(steps: JudgedSteps | None) -> JudgedSteps | None:
    """The judges' reasons on the steps, redacted as the metric's reason is."""
    if steps is not None:
        for step in steps.outline:
            for fault in step.faults:
                fault.reason = redact(fault.reason)
    return steps


def _claims(details: MetricDetails) -> Iterator[ClaimRecord]:
    """The claims of each model whose details say them by side (``claims_by_side()``:
    FactualCorrectness's, Faithfulness's, a metric of your own's); AnswerCorrectness's are
    those of its factual component."""
    if isinstance(details, AnswerCorrectnessDetails):
        yield from _claims(details.factual_correctness.details)
        return
    models = getattr(details, "models", None) if isinstance(details, DetailsModel) else None
    for model, model_details in (models or {}).items():
        by_side = getattr(model_details, "claims_by_side", None)
        for side, claims in (by_side() if callable(by_side) else {}).items():
            for claim in claims:
                yield ClaimRecord(model=model, side=side, **claim.model_dump())


def _votes(details: MetricDetails) -> Iterator[VoteRecord]:
    """Each judge's votes, for a metric whose judges vote on a verdict (a label, level or
    value per vote, with a reason each)."""
    models = getattr(details, "models", None) if isinstance(details, DetailsModel) else None
    for model, model_details in (models or {}).items():
        verdict = getattr(model_details, "verdict", None)
        votes = getattr(model_details, "votes", None)
        if verdict is None or not isinstance(votes, list):
            continue
        if all(isinstance(vote, (str, int, float)) for vote in votes):
            reasons = list(getattr(model_details, "reasons", None) or [])
            yield VoteRecord(model=model, verdict=verdict, votes=votes, reasons=reasons)


def _contexts(details: MetricDetails) -> Iterator[ContextRecord]:
    """The verdict of each model on each context, for a metric whose details say them
    (``contexts_judged()``: ContextPrecision's, ContextRelevance's, a metric of your own's)."""
    models = getattr(details, "models", None) if isinstance(details, DetailsModel) else None
    for model, model_details in (models or {}).items():
        judged = getattr(model_details, "contexts_judged", None)
        for item in judged() if callable(judged) else ():
            yield ContextRecord(
                model=model,
                rank=item.rank,
                verdict=item.verdict,
                reason=getattr(item, "reason", ""),
                taken_in_order=getattr(item, "taken_in_order", None),
            )


def sample_record(
    row: DatasetRow,
    results: Mapping[str, MetricResult | MetricError],
    signatures: Mapping[str, str],
    previous: SampleRecord | None = None,
) -> SampleRecord:
    """The ``--out`` line for ``row``: ``previous`` (a resumed row) updated with ``results``."""
    metrics = dict(previous.metrics) if previous is not None else {}
    for key, outcome in results.items():
        metrics[key] = metric_record(outcome, signatures.get(key, ""))
    return SampleRecord(
        schema_version=SCHEMA_VERSION,
        id=row.id,
        fingerprint=row.fingerprint,
        **{**row.sample.model_dump(), **(task_and_answer(row.agent) if row.agent else {})},
        metrics=metrics,
    )


def read_records(path: Path) -> tuple[dict[str, SampleRecord], int]:
    """The records of an ``--out`` file by id (the last line of an id wins), and the count
    of unreadable lines (a line cut short when a run was killed, a line of a newer version,
    or one that is not a record at all)."""
    records: dict[str, SampleRecord] = {}
    # A line cut short, even inside a multi-byte character, is unreadable, not a crash.
    values, unreadable = read_lines(path)
    for value in values:
        record = as_record(value)
        if record is None:
            unreadable += 1
        else:
            records[record.id] = record
    return records, unreadable


def as_record(value: Any) -> SampleRecord | None:
    """The record a line's JSON value holds (of any version), or None if it holds none."""
    try:
        return SampleRecord.model_validate(record_in_current_shape(value, SCHEMA_VERSION))
    except (ValueError, ValidationError):
        return None


RECORD_STARTS = (b'{"schema_version": ', b'{"version": ')
"""How a record's line begins (``record_line``; ``version`` in the first format): a line
cut short by a kill that begins so is ours to drop, any other line is not."""


def is_record_value(value: Any) -> bool:
    """Whether a line's JSON value is a record: readable (:func:`as_record`), or of a
    newer version (it has ``schema_version``), which is kept and ignored."""
    return (isinstance(value, dict) and "schema_version" in value) or as_record(value) is not None


def record_line(record: SampleRecord) -> str:
    """One JSON line, keeping non-ASCII text readable (a lone surrogate, which UTF-8
    cannot hold, becomes U+FFFD)."""
    return json_line(record.model_dump(mode="json"))


# --------------------------------------------------------------------------- statistics


class MetricOverview(BaseModel):
    """What the table and the report show for one metric."""

    summary: MetricSummary
    per_model: dict[str, float | None] = Field(default_factory=dict)
    histogram: list[int] = Field(default_factory=list, description="Scores in 10 bins of 0.1.")


def overview(
    records: Iterable[SampleRecord],
    keys: Sequence[str],
    thresholds: Mapping[str, float] | None = None,
) -> list[MetricOverview]:
    """Per metric: the summary statistics, the mean per model and the score histogram.

    ``records`` is read once, and only the scores are kept: a run of any length can be
    summarised from its ``--out`` file.
    """
    thresholds = thresholds or {}
    scores: dict[str, list[float | None]] = {key: [] for key in keys}
    by_model: dict[str, dict[str, list[float | None]]] = {key: {} for key in keys}
    histograms = {key: [0] * 10 for key in keys}
    # Not applicable (no score, no error: not a failed sample) and no claims (abstentions).
    not_applicable, no_claims = dict.fromkeys(keys, 0), dict.fromkeys(keys, 0)
    for record in records:
        for key in keys:
            entry = record.metrics.get(key)
            if entry is None:
                continue
            no_claims[key] += entry.no_claims
            if entry.not_applicable is not None:
                not_applicable[key] += 1
                continue
            scores[key].append(entry.score)
            for model, model_score in entry.per_model.items():
                by_model[key].setdefault(model, []).append(model_score)
            if entry.score is not None and math.isfinite(entry.score):
                histograms[key][min(9, int(entry.score * 10))] += 1
    return [
        MetricOverview(
            summary=summarize(
                key,
                scores[key],
                threshold=thresholds.get(key),
                not_applicable=not_applicable[key],
                no_claims=no_claims[key],
            ),
            per_model={
                model: summarize(model, values).mean for model, values in by_model[key].items()
            },
            histogram=histograms[key],
        )
        for key in keys
    ]
