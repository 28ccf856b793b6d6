"""Human-readable reasons built from claim verdicts and votes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_answer_metrics.core.result import ClaimVerdictDetail, ModelFailure

_MAX_LISTED = 3


def _quote(claim: str, limit: int = 120) -> str:
    text = claim if len(claim) <= limit else claim[: limit - 1] + "…"
    return f"“{text}”"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and ``noun``, in the singular for exactly one: '1 claim', '2 claims',
    '0 errors'. ``plural`` when adding an 's' is not it."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def claims_summary(
    verdicts: Sequence[ClaimVerdictDetail], *, claims_of: str, checked_against: str
) -> str:
    """E.g. '2 of 3 response claims are supported by the reference; unsupported: “…”',
    '0 of 1 response claim is supported by the reference'."""
    if not verdicts:
        return f"no checkable claims were found in the {claims_of}"
    supported = sum(verdict.verdict == "supported" for verdict in verdicts)
    total = len(verdicts)
    verb = "is" if total == 1 else "are"  # agrees with 'of 1 claim' / 'of 3 claims'
    summary = (
        f"{supported} of {counted(total, f'{claims_of} claim')} {verb} supported by "
        f"{checked_against}"
    )
    unsupported = [verdict for verdict in verdicts if verdict.verdict != "supported"]
    if unsupported:
        listed = ", ".join(
            f"{_quote(verdict.claim)} ({verdict.verdict})" for verdict in unsupported[:_MAX_LISTED]
        )
        more = len(unsupported) - _MAX_LISTED
        summary += f"; unsupported: {listed}" + (f" and {more} more" if more > 0 else "")
    return summary


def with_model_scores(reason: str, scores: Mapping[str, float | None], representative: str) -> str:
    """Prefix the representative model's reason when several models scored (None: the
    model found no claims, and was left out of the score)."""
    if len(scores) < 2:
        return reason
    listing = ", ".join(
        f"{label}={'n/a (no claims)' if score is None else f'{score:.2f}'}"
        for label, score in scores.items()
    )
    return f"{reason} [explained by {representative}; per model: {listing}]"


def with_exclusions(reason: str, excluded: Sequence[ModelFailure]) -> str:
    """Say which models were left out, so a score carried by fewer judges is not mistaken."""
    if not excluded:
        return reason
    listing = ", ".join(
        f"{failure.model} (failed at {failure.step}: {failure.error_type})" for failure in excluded
    )
    return f"{reason} [left out: {listing}]"
