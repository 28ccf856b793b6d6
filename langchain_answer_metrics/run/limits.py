"""Limits on what a run may spend: a budget in USD and a cap on requests.

The runner asks :class:`Admission` before starting each sample. A sample is started
only if what the run has spent, plus what the samples in flight are expected to spend,
plus what this sample is expected to spend, stays within the limits. When it would not:

- while samples are in flight, the runner waits for them (their actual spend replaces
  their estimate, which may leave room);
- with none in flight, the run stops admitting: the samples left are reported as not
  run, and the run has spent less than its limit by at most about one sample.

A sample's expected spend is fitted to its text's length from the recent finished
samples (a fixed part plus a part growing with the text, plus the largest amount a
recent sample went over that fit); its expected requests are the most a recent sample of
at least half its length sent. Every attempt is a request: a retry after a 429, a 500
or a timeout counts (:mod:`~langchain_answer_metrics.judging.ledger`), so
``max_requests`` caps what reaches the endpoint, within about one sample's requests.

Until the first sample finishes there is nothing to fit, so one sample runs alone
first, expected to spend what the package's dry run (:func:`~.estimate.estimator.aestimate`,
which sends no request) estimates for it at most (``cost_high``, its requests): a budget
below one sample's estimated cost starts nothing, and the stop says so. After that, no
more samples are in flight than have finished: a run reaches full speed in a few rounds,
and no crowd of samples is started on an estimate from one or two.

    >>> rows = evaluate(samples, metrics, budget=2.00, prices={"judge-a": Price(...)})
    >>> rows.stopped  # None, or why the rest was not run

:class:`RunLimits` carries the limits across several runs of one job (the CLI's groups
of a resumed run, a Ray actor's batches): each run gets what is left of them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.core.sample import SampleLike
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONSECUTIVE_FAILURES
from langchain_answer_metrics.run.results import RunStop, SampleResults, StopReason, run_stop
from langchain_answer_metrics.run.spend import Pricing

_RECENT = 64  # finished samples kept to estimate the next one's spend


class Decision(Enum):
    ADMIT = "admit"
    WAIT = "wait"  # retry when a sample in flight finishes
    STOP = "stop"


def sample_size(sample: SampleLike) -> int:
    """Characters of a sample's text fields: what its prompts grow with."""
    if isinstance(sample, Mapping):
        values: Any = sample.values()
    else:
        values = [
            getattr(sample, name, None)
            for name in ("user_input", "response", "reference", "retrieved_contexts")
        ]
    size = 0
    for value in values:
        if isinstance(value, str):
            size += len(value)
        elif isinstance(value, (list, tuple)):
            size += sum(len(item) for item in value if isinstance(item, str))
    return max(size, 1)


class _Estimate:
    """A sample's expected spend from recent finished samples (sizes and spends).

    Spend grows with a sample's text on top of a fixed part (the prompts' instructions),
    so it is fitted as ``fixed + rate * size`` by least squares over the recent samples,
    plus the largest amount a recent sample was above the fit; or, if lower, the largest
    spend of the recent samples at least half as long, scaled up by how much longer the
    next text is (all there is with a single sample, or samples all of one size).
    With ``largest``, always the latter: no fit.
    """

    def __init__(self, *, largest: bool = False) -> None:
        self.recent: deque[tuple[int, float]] = deque(maxlen=_RECENT)
        self.largest = largest

    def add(self, size: int, spent: float) -> None:
        self.recent.append((size, spent))

    def __call__(self, size: int) -> float | None:
        if not self.recent:
            return None
        sizes = [float(seen) for seen, _ in self.recent]
        spends = [spent for _, spent in self.recent]
        mean_size = sum(sizes) / len(sizes)
        spread = sum((seen - mean_size) ** 2 for seen in sizes)
        # Scaled from samples at least half as long, when there are some: a short
        # sample's fixed part, scaled by length, would overstate a long one.
        alike = [(seen, spent) for seen, spent in self.recent if 2 * seen >= size]
        scaled = max(spent * max(1.0, size / seen) for seen, spent in alike or self.recent)
        if self.largest or len(self.recent) < 2 or spread == 0:
            return scaled
        mean_spend = sum(spends) / len(spends)
        rate = max(
            0.0,
            sum((seen - mean_size) * (spent - mean_spend) for seen, spent in self.recent) / spread,
        )
        fixed = mean_spend - rate * mean_size
        above = max(spent - (fixed + rate * seen) for seen, spent in self.recent)
        # Both are upper estimates; the scaled one is the tighter next to a sample of
        # about the same length, the fit elsewhere.
        return min(scaled, max(0.0, fixed + rate * size + max(0.0, above)))


class Admission:
    """Whether the next sample may start under ``budget`` (USD) and ``max_requests``."""

    def __init__(
        self,
        *,
        budget: float | None,
        max_requests: int | None,
        pricing: Pricing,
    ) -> None:
        if budget is not None and not budget >= 0:
            raise ValueError(f"budget must be a number of USD >= 0, got {budget!r}")
        if max_requests is not None and max_requests < 0:
            raise ValueError(f"max_requests must be >= 0, got {max_requests!r}")
        self.budget = budget
        self.max_requests = max_requests
        self.pricing = pricing
        self.spent = 0.0  # by finished samples
        self._cost = _Estimate()
        # Requests vary with retries, not with a text's length: a fit would expect the
        # average sample, and the samples in flight near the cap would all overshoot it.
        self._requests = _Estimate(largest=True)
        self._in_flight: dict[int, tuple[int, float, float]] = {}  # index: size, cost, requests
        self._blocked_by: StopReason | None = None
        self._finished = 0
        self._expected: tuple[float | None, float] | None = None  # before any finished

    @property
    def active(self) -> bool:
        return self.budget is not None or self.max_requests is not None

    def check_prices(self) -> None:
        """Refuse a budget when a model of the run has no price (before any request)."""
        if self.budget is None:
            return
        unpriced = self.pricing.unpriced()
        if unpriced:
            raise ValueError(
                f"budget= needs a price for every model; none for {', '.join(unpriced)}: "
                "pass prices={label or model id: Price(input_per_million=..., "
                "output_per_million=...)} (or `price:` on the model in the config file)"
            )

    def wants_estimate(self) -> bool:
        """Whether the next sample's spend must come from a dry run: nothing has finished
        to fit, and no sample is in flight (else the next one waits for it anyway)."""
        return (
            self.active
            and not self._in_flight
            and not self._cost.recent
            and not self._requests.recent
        )

    def expect(self, cost: float | None, requests: int) -> None:
        """The dry-run estimate of the next sample: its cost (USD, None if unpriced) and
        requests, used until a sample has finished."""
        self._expected = (cost, float(requests))

    def _estimates(self, size: int) -> tuple[float | None, float | None]:
        cost, requests = self._cost(size), self._requests(size)
        if cost is None and requests is None and self._expected is not None:
            return self._expected
        return cost, requests

    def decide(self, size: int, requests_sent: int) -> Decision:
        """Whether a sample of ``size`` characters may start now, given the requests the
        run has sent so far (finished and in flight)."""
        if not self.active:
            return Decision.ADMIT
        if self._in_flight and not self._cost.recent and not self._requests.recent:
            return Decision.WAIT  # nothing to estimate from yet: one sample at a time
        if len(self._in_flight) > self._finished:
            # No more in flight than have finished: estimates from a few samples may be
            # low (retries are uneven), and a hundred samples started on them would all
            # go past the limit together. The run reaches full speed in a few rounds.
            return Decision.WAIT
        # Before any sample finished its spend is unknown, but not nothing: a limit
        # already reached (a budget of 0, max_requests=0) starts no sample at all.
        cost, requests = self._estimates(size)
        cost = 1e-9 if cost is None else cost
        requests = 1.0 if requests is None else requests
        committed_cost = self.spent + sum(item[1] for item in self._in_flight.values())
        # The requests sent include those of the samples in flight; their estimates
        # count what they may still send (an over-estimate, relieved as they finish).
        committed_requests = requests_sent + sum(item[2] for item in self._in_flight.values())
        self._blocked_by = None
        if self.budget is not None and committed_cost + cost > self.budget + 1e-12:
            self._blocked_by = "budget"
        elif self.max_requests is not None and committed_requests + requests > self.max_requests:
            self._blocked_by = "max_requests"
        else:
            return Decision.ADMIT
        return Decision.WAIT if self._in_flight else Decision.STOP

    def started(self, index: int, size: int) -> None:
        if self.active:
            cost, requests = self._estimates(size)
            self._in_flight[index] = (size, cost or 0.0, requests or 0.0)
            self._expected = None  # each sample before the first finished is estimated

    def finished(self, index: int, results: Mapping[str, Any]) -> None:
        """A started sample is done: its actual spend replaces its estimate."""
        entry = self._in_flight.pop(index, None)
        if entry is None:
            return
        size = entry[0]
        self._finished += 1
        cost, requests = self.pricing.spent_on(results)
        self.spent += cost
        self._cost.add(size, cost)
        self._requests.add(size, float(requests))

    def abandoned(self, index: int) -> None:
        """A started sample was cancelled: its spend is unknown, its estimate dropped."""
        self._in_flight.pop(index, None)

    def stop(self, requests_sent: int) -> RunStop:
        """Why the next sample was not started."""
        first = self._expected
        if first is not None and not self._finished and not self._in_flight:
            if self._blocked_by == "budget" and first[0] is not None:
                return RunStop(
                    reason="budget",
                    message=f"budget ${self.budget:.4f} is below one sample's estimated cost "
                    f"${first[0]:.4f} (dry run): no sample started",
                )
            if self._blocked_by == "max_requests":
                return RunStop(
                    reason="max_requests",
                    message=f"max_requests {self.max_requests} is below one sample's "
                    f"estimated {first[1]:.0f} requests (dry run): no sample started",
                )
        if self._blocked_by == "budget":
            return RunStop(
                reason="budget",
                message=f"budget ${self.budget:.4f} reached: spent ${self.spent:.4f}, and the "
                "next sample would go past it",
            )
        return RunStop(
            reason="max_requests",
            message=f"max_requests {self.max_requests} reached: {requests_sent} sent, and "
            "the next sample would go past it",
        )


@dataclass
class RunLimits:
    """A budget and a request cap across the runs of one job, and where they stopped it.

    Example:
        >>> limits = RunLimits(max_cost=1.0, pricing=Pricing.of(metrics))
        >>> for row in stream_evaluate(samples, metrics, **limits.left()):
        ...     limits.count(row)
    """

    max_cost: float | None = None
    max_requests: int | None = None
    pricing: Pricing | None = None
    prices: dict[str, Price] = field(default_factory=dict)
    spent: float = 0.0
    requests: int = 0
    not_run: int = 0
    stop: RunStop | None = None
    max_consecutive_failures: int | None = DEFAULT_MAX_CONSECUTIVE_FAILURES

    def left(self) -> dict[str, Any]:
        """What is left of the limits: the next run's options (``RunOptions`` fields)."""
        options: dict[str, Any] = {
            "prices": self.prices or None,
            "max_consecutive_failures": self.max_consecutive_failures,
        }
        if self.max_cost is not None:
            options["budget"] = max(0.0, self.max_cost - self.spent)
        if self.max_requests is not None:
            options["max_requests"] = max(0, self.max_requests - self.requests)
        return options

    def count(self, row: SampleResults) -> None:
        """A row the run gave back: its spend taken off, or counted as not run."""
        if row.not_run:
            self.skipped(row)
        else:
            self.spent_on(row)

    def spent_on(self, row: SampleResults) -> None:
        cost, requests = (self.pricing or Pricing()).spent_on(row.results)
        self.requests += requests
        if self.pricing is not None:
            self.spent += cost

    def skipped(self, row: SampleResults) -> None:
        self.not_run += 1
        if self.stop is None:
            self.stop = run_stop([row])
