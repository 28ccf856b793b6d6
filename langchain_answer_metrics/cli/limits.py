"""``--max-cost`` and ``--max-requests``: what is left of them across a run's groups.

The runner enforces them on each stream (``budget=`` / ``max_requests=``); a CLI run may
stream several groups (a resumed run scoring different metrics for different rows), so
what each group spent is taken off before the next starts.

``--max-consecutive-failures`` (else the config file's ``retry.max_consecutive_failures``,
else 20) is the runner's circuit breaker, given to each stream as it is.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.plans import MetricPlans
from langchain_answer_metrics.judging.endpoints import (
    DEFAULT_MAX_CONSECUTIVE_FAILURES,
    MAX_CONSECUTIVE_FAILURES_SETTING,
)
from langchain_answer_metrics.prices import Price
from langchain_answer_metrics.run_results import RunStop, SampleResults, run_stop
from langchain_answer_metrics.spend import Pricing


@dataclass
class RunLimits:
    """``--max-cost`` / ``--max-requests`` across the groups of a run, and where they
    stopped it."""

    max_cost: float | None = None
    max_requests: int | None = None
    pricing: Pricing | None = None
    prices: dict[str, Price] = field(default_factory=dict)
    spent: float = 0.0
    requests: int = 0
    not_run: int = 0
    stop: RunStop | None = None
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES

    def options(self) -> dict[str, Any]:
        """What is left of the limits, for the next group's stream."""
        options: dict[str, Any] = {
            "prices": self.prices or None,
            "max_consecutive_failures": self.max_consecutive_failures,
        }
        if self.max_cost is not None:
            options["budget"] = max(0.0, self.max_cost - self.spent)
        if self.max_requests is not None:
            options["max_requests"] = max(0, self.max_requests - self.requests)
        return options

    def spent_on(self, result: SampleResults) -> None:
        pricing = self.pricing or Pricing()
        cost, requests = pricing.spent_on(result.results)
        self.requests += requests
        if self.pricing is not None:
            self.spent += cost

    def skipped(self, result: SampleResults) -> None:
        self.not_run += 1
        if self.stop is None:
            self.stop = run_stop([result])


def run_limits(args: argparse.Namespace, plans: MetricPlans) -> RunLimits:
    """The run's limits, with the configured prices; a budget without a price for every
    model is refused here, before any request."""
    prices: dict[str, Price] = dict(getattr(plans.panel, "prices", None) or {})
    max_cost = getattr(args, "max_cost", None)
    pricing = Pricing.of([plan.metric for plan in plans], prices=prices)
    if max_cost is not None:
        unpriced = pricing.unpriced()
        if unpriced:
            raise UsageError(
                f"--max-cost needs a price for every model; none for {', '.join(unpriced)}: "
                "add `price: {input_per_million: X, output_per_million: Y}` to the model in "
                "--config"
            )
    return RunLimits(
        max_cost=max_cost, max_requests=getattr(args, "max_requests", None),
        pricing=pricing, prices=prices, max_consecutive_failures=_breaker(args, plans),
    )  # fmt: skip


def _breaker(args: argparse.Namespace, plans: MetricPlans) -> int:
    """``--max-consecutive-failures``, else the config file's, else the default."""
    given = getattr(args, "max_consecutive_failures", None)
    if given is not None and given > MAX_CONSECUTIVE_FAILURES_SETTING:
        raise UsageError(
            f"--max-consecutive-failures must be at most {MAX_CONSECUTIVE_FAILURES_SETTING}, "
            f"got {given}"
        )
    configured = getattr(plans.panel, "max_consecutive_failures", None)
    return given or configured or DEFAULT_MAX_CONSECUTIVE_FAILURES
