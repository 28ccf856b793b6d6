"""``--max-cost`` and ``--max-requests`` read into the one limits object,
:class:`~langchain_answer_metrics.run.limits.RunLimits`.

The runner enforces them on each stream (``budget=`` / ``max_requests=``); a CLI run may
stream several groups (a resumed run scoring different metrics for different rows), so
what each group spent is taken off before the next starts (``RunLimits.left``).

``--max-consecutive-failures`` (else the config file's ``retry.max_consecutive_failures``,
else 20) is the runner's circuit breaker, given to each stream as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_answer_metrics.cli.group_options import LimitOptions
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.plans import MetricPlans
from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.judging.endpoints import MAX_CONSECUTIVE_FAILURES_SETTING
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONSECUTIVE_FAILURES
from langchain_answer_metrics.run.limits import RunLimits
from langchain_answer_metrics.run.spend import Pricing, batch_labels

__all__ = ["RunLimits", "count_sent", "run_limits"]


def run_limits(
    limits: LimitOptions, plans: MetricPlans, *, batch: bool = False, embeddings: bool = True
) -> RunLimits:
    """The run's limits, with the configured prices (``batch``: the OpenAI judges, and
    with ``embeddings`` the embedders, at their batch price); a budget without a price for
    every model is refused here, before any request."""
    prices: dict[str, Price] = dict(getattr(plans.panel, "prices", None) or {})
    max_cost = limits.max_cost
    metrics = [plan.metric for plan in plans]
    # --batch: the OpenAI judges (and embedders) are paid at the batch price (docs/batch.md).
    batched = batch_labels(metrics, embeddings=embeddings) if batch else []
    pricing = Pricing.of(metrics, prices=prices, batch=batched)
    if max_cost is not None:
        unpriced = pricing.unpriced()
        if unpriced:
            raise UsageError(
                f"--max-cost needs a price for every model; none for {', '.join(unpriced)}: "
                "add `price: {input_per_million: X, output_per_million: Y}` to the model in "
                "--config"
            )
    return RunLimits(
        max_cost=max_cost,
        max_requests=limits.max_requests,
        pricing=pricing,
        prices=prices,
        max_consecutive_failures=_breaker(limits.max_consecutive_failures, plans),
    )


def _breaker(given: int | None, plans: MetricPlans) -> int:
    """``--max-consecutive-failures``, else the config file's, else the default."""
    if given is not None and given > MAX_CONSECUTIVE_FAILURES_SETTING:
        raise UsageError(
            f"--max-consecutive-failures must be at most {MAX_CONSECUTIVE_FAILURES_SETTING}, "
            f"got {given}"
        )
    configured = getattr(plans.panel, "max_consecutive_failures", None)
    return given or configured or DEFAULT_MAX_CONSECUTIVE_FAILURES


def count_sent(limits: RunLimits, outcomes: Mapping[str, Any]) -> None:
    """Count what was sent before the samples (``outcomes``: by key, each with its
    ``usage``; the judges' check) within ``--max-requests`` and ``--max-cost``."""
    cost, sent = (limits.pricing or Pricing()).spent_on(outcomes)
    limits.requests, limits.spent = limits.requests + sent, limits.spent + cost
