"""A record built from a run's results, and a saved score given back as a result.

    >>> record = sample_record("q1", fingerprint, {"response": "..."}, results, signatures)
    >>> restored_result("faithfulness", record.metrics["faithfulness"])   # on a resume

Error messages and reasons are redacted: a provider's error may quote the API key, and a
record is written to disk, the report and the terminal.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from langchain_answer_metrics.core.redaction import redact
from langchain_answer_metrics.core.result import (
    AnswerCorrectnessDetails,
    DetailsModel,
    MetricDetails,
    MetricResult,
    ModelFailure,
)
from langchain_answer_metrics.metrics.agent_calls import AlignedDetails
from langchain_answer_metrics.metrics.judged_steps import JudgedSteps, judged_steps_of
from langchain_answer_metrics.run.records.format import (
    SCHEMA_VERSION,
    TEXT_FIELDS,
    ClaimRecord,
    ContextRecord,
    ErrorRecord,
    MetricRecord,
    SampleRecord,
    VoteRecord,
)
from langchain_answer_metrics.run.results import MetricError
from langchain_answer_metrics.run.summary import has_no_claims

__all__ = ["metric_record", "restored_result", "sample_record"]


def metric_record(
    outcome: MetricResult | MetricError, signature: str = "", *, whole: bool = False
) -> MetricRecord:
    """Flatten a metric's result (or error) into the record's shape; ``whole`` keeps the
    result itself too (``result``: what the runner's checkpoint gives back on a resume;
    the CLI, which gives back records, leaves it out, and its file half the size).

    Error messages and reasons are redacted
    (:func:`~langchain_answer_metrics.core.redaction.redact`): a provider's error may quote
    the API key, and the record is written to ``--out``, the report and the terminal.
    """
    if isinstance(outcome, MetricError):
        return MetricRecord(
            error=ErrorRecord(type=outcome.error_type, message=redact(outcome.message)),
            signature=signature,
            judges=_judges_of(signature),
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
        judges=_judges_of(signature),
        usage=outcome.usage,
        result=_redacted(outcome.model_dump(mode="json")) if whole else None,
    )


def _judges_of(signature: str) -> dict[str, dict[str, Any]]:
    """What the judges were, as the signature signed them (none for a plain text)."""
    return dict(getattr(signature, "judges", None) or {})


def _redacted_steps(steps: JudgedSteps | None) -> JudgedSteps | None:
    """The judges' reasons on the steps, redacted as the metric's reason is."""
    if steps is not None:
        for step in steps.outline:
            for fault in step.faults:
                fault.reason = redact(fault.reason)
    return steps


def _redacted(value: Any) -> Any:
    """``value`` (JSON) with every string redacted: a judge's error may quote a key."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value


def restored_result(key: str, record: MetricRecord) -> MetricResult:
    """The result a resumed run gives back for a saved score: ``record.result`` whole, or,
    in a record written before the one format (an ``--out`` line of an earlier version),
    the result rebuilt from the record's fields (score, reason, band, per-model scores,
    exclusions, usage; the details are not in such a line)."""
    if record.result is not None:
        return MetricResult.model_validate(record.result)
    return MetricResult(
        key=key,
        score=record.score,
        not_applicable=record.not_applicable,
        reason=record.reason,
        band=record.band,
        per_model=record.per_model,
        excluded=[ModelFailure(**failure) for failure in record.excluded],
        usage=record.usage,
    )


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
    sample_id: str,
    fingerprint: str,
    text: Mapping[str, Any],
    results: Mapping[str, MetricResult | MetricError],
    signatures: Mapping[str, str],
    previous: SampleRecord | None = None,
    *,
    whole: bool = False,
) -> SampleRecord:
    """The line of one sample: ``previous`` (its saved record, on a resume) updated with
    ``results``. ``text`` holds the sample's texts as scored (``user_input``,
    ``response``, ``reference``, ``retrieved_contexts``; other fields are left out);
    ``whole``: each result kept whole too (:func:`metric_record`)."""
    metrics = dict(previous.metrics) if previous is not None else {}
    for key, outcome in results.items():
        metrics[key] = metric_record(outcome, signatures.get(key, ""), whole=whole)
    return SampleRecord(
        schema_version=SCHEMA_VERSION,
        id=sample_id,
        fingerprint=fingerprint,
        **{name: text.get(name) for name in TEXT_FIELDS},
        metrics=metrics,
    )
