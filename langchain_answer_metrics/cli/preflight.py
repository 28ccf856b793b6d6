"""The CLI's check of its judges before a large run (``--no-preflight`` turns it off).

Above :data:`~langchain_answer_metrics.judging.preflight.PREFLIGHT_ABOVE` samples to
score, each judge of the run answers one short judging request through its own
structured-output method (:mod:`langchain_answer_metrics.judging.preflight`). A judge
that cannot is refused before any sample is sent, one line per judge with what to try:
exit 2, as for any unusable model. What the check spent is part of the run's spend.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_answer_metrics.cli.options import UsageError

__all__ = ["PREFLIGHT", "preflight", "spent_by_check"]

PREFLIGHT = "preflight"
"""The check's key in the run's spend, beside the metrics' keys."""


def _judges(plans: Iterable[Any]) -> list[Any]:
    """The run's judges, each once (by label), in the order the metrics give them."""
    from langchain_answer_metrics.judging.judges import Judge

    found: dict[str, Any] = {}
    for plan in plans:
        for member in getattr(plan.metric, "llm", None) or ():
            if isinstance(member, Judge):
                found.setdefault(member.label, member)
    return list(found.values())


def preflight(plans: Iterable[Any], pending: int, *, enabled: bool = True) -> dict[str, Any]:
    """Check the run's judges when ``pending`` samples are more than the threshold
    (``enabled`` False: ``--no-preflight``); what the check spent by judge label
    (``{label: TokenUsage}``, empty when not checked), for the run's spend.

    Raises:
        UsageError: naming each judge that could not answer, and what to try.
    """
    from langchain_answer_metrics.judging.preflight import PREFLIGHT_ABOVE, check_judges_sync

    if pending <= PREFLIGHT_ABOVE or not enabled:
        return {}
    judges = _judges(plans)
    if not judges:
        return {}
    problems, usage = check_judges_sync(judges)
    if problems:
        listing = "\n".join(f"  {problem}" for problem in problems)
        raise UsageError(
            f"checked each judge with one request before scoring {pending} samples; "
            f"{len(problems)} cannot judge:\n{listing}\n(--no-preflight skips this check)"
        )
    return usage


def spent_by_check(spent: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """What the check spent before the samples, among a run's ``spent`` rows (none when it
    did not run): within ``--max-requests`` and ``--max-cost``, in the spend and report."""
    return [row for row in spent if PREFLIGHT in row]
