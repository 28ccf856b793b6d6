"""Which judges of a run are broken, and the rule that leaves one out for the rest of it.

A judge that will never answer (a wrong model name, a revoked key, a model that cannot
produce the structured output) must not be asked once per sample: at 10,000 rows that
is 10,000 to 40,000 wasted, possibly billed, requests. Within a runner's scope (one
with ``max_consecutive_failures``), each judge, by its label, is watched on its own,
whatever endpoint it shares with others:

- failures that will not fix themselves, in a row (:data:`EXCLUDE_AFTER`): an HTTP 400,
  401, 403 or 404 answer, or a reply still unusable after the re-asks; a usable reply
  resets the count;
- the same error on a judge's first samples: while it has never answered, its first
  :data:`EXCLUDE_AFTER` failed samples all failed with the same error;
- connection errors, timeouts and 5xx, every attempt counted, retries included: the
  circuit breaker's count (:mod:`.endpoints`), kept per judge.

A transient 429 or 5xx is still retried as the retry policy says: only a judge failing
past these limits is excluded. An excluded judge is sent nothing more: its requests
fail at once with :class:`JudgeExcludedError`, which the panel records as its failure
(the other judges carry the score). When every judge the run has used is excluded, the
run stops (``circuit_breaker``), naming each judge and why.

    >>> from langchain_answer_metrics.judging.scope import RunScope, run_scope
    >>> with run_scope(RunScope(max_consecutive_failures=20)) as scope:
    ...     for _ in range(EXCLUDE_AFTER):
    ...         refused("judge-b", "NotFoundError: model_not_found")
    ...     print(excluded_reason("judge-b"))
    3 failures in a row that will not fix themselves; last: NotFoundError: model_not_found
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_answer_metrics.judging.scope import Halt, RunScope, current_scope

__all__ = [
    "EXCLUDE_AFTER",
    "PERMANENT_STATUSES",
    "JudgeExcludedError",
    "JudgeHealth",
    "answered",
    "check_included",
    "exclude",
    "excluded_reason",
    "is_permanent",
    "refused",
    "sample_failed",
    "uses",
]

EXCLUDE_AFTER = 3
"""Failures in a row that will not fix themselves (or identical first failures) after
which a judge is excluded for the rest of the run."""

PERMANENT_STATUSES = frozenset({400, 401, 403, 404})
"""HTTP answers a retry cannot change: a bad request, a wrong key, no access, no model."""


class JudgeExcludedError(RuntimeError):
    """A judge found broken earlier in the run: nothing more is sent to it.

    Args:
        judge: the judge's label (kept as ``.judge``).
        reason: why it was excluded (kept as ``.reason``).

    Example:
        >>> str(JudgeExcludedError("judge-b", "3 requests answered 404"))
        'judge-b was excluded for the rest of the run: 3 requests answered 404'
    """

    def __init__(self, judge: str, reason: str) -> None:
        self.judge = judge
        self.reason = reason
        super().__init__(f"{judge} was excluded for the rest of the run: {reason}")


@dataclass
class JudgeHealth:
    """What a run knows of one judge.

    Attributes:
        refusals: failures in a row that will not fix themselves.
        answered: whether it ever gave a usable reply in this run.
        first_errors: the errors of its failed samples while it never answered.
        excluded: why it was excluded ("" while it is not).
    """

    refusals: int = 0
    answered: bool = False
    first_errors: list[str] = field(default_factory=list)
    excluded: str = ""


def _watched(judge: str) -> tuple[RunScope, JudgeHealth] | None:
    scope = current_scope()
    if scope is None or scope.max_consecutive_failures is None:
        return None  # only a runner's scope excludes judges (metric.batch reports each)
    # setdefault, atomic for the sync runner's threads, once per judge: not a new
    # JudgeHealth built and thrown away on every request.
    health = scope.judge_health.get(judge) or scope.judge_health.setdefault(judge, JudgeHealth())
    return scope, health


def uses(judge: str) -> None:
    """The run uses ``judge`` (the panel says so before scoring with it)."""
    _watched(judge)


def excluded_reason(judge: str) -> str:
    """Why ``judge`` was excluded from the current run ("" if it was not)."""
    watched = _watched(judge)
    return watched[1].excluded if watched else ""


def check_included(judge: str) -> None:
    """Raise :class:`JudgeExcludedError` if ``judge`` was excluded from the current run."""
    reason = excluded_reason(judge)
    if reason:
        raise JudgeExcludedError(judge, reason)


def answered(judge: str) -> None:
    """``judge`` gave a usable reply: its failures in a row start again from zero."""
    watched = _watched(judge)
    if watched:
        watched[1].refusals = 0
        watched[1].answered = True


def is_permanent(error: BaseException) -> bool:
    """Whether ``error`` is an HTTP answer a retry cannot change (:data:`PERMANENT_STATUSES`)."""
    status = getattr(error, "status_code", None)
    if status is None:
        status = getattr(getattr(error, "response", None), "status_code", None)
    return isinstance(status, int) and status in PERMANENT_STATUSES


def refused(judge: str, error: str) -> None:
    """``judge`` failed in a way that will not fix itself (``error`` says how)."""
    watched = _watched(judge)
    if watched is None:
        return
    health = watched[1]
    health.refusals += 1
    if health.refusals >= EXCLUDE_AFTER:
        reason = f"{health.refusals} failures in a row that will not fix themselves"
        exclude(judge, f"{reason}; last: {error}")


def sample_failed(judge: str, error: str) -> None:
    """A sample failed for ``judge`` with ``error``: the same error on its first samples,
    before it ever answered, excludes it."""
    watched = _watched(judge)
    if watched is None or watched[1].answered or watched[1].excluded:
        return
    health = watched[1]
    health.first_errors.append(error)
    if len(health.first_errors) >= EXCLUDE_AFTER and len(set(health.first_errors)) == 1:
        exclude(judge, f"its first {len(health.first_errors)} samples all failed: {error}")


def exclude(judge: str, reason: str, *, abort: bool = False) -> None:
    """Exclude ``judge`` for the rest of the run; stop the run if no judge is left.

    ``abort`` cancels the samples in flight when the run stops (the circuit breaker's
    way: their requests may wait a whole deadline on a silent endpoint); otherwise they
    finish, at once, since nothing more is sent to an excluded judge.
    """
    watched = _watched(judge)
    if watched is None or watched[1].excluded:
        return
    scope, health = watched
    health.excluded = reason
    judges = scope.judge_health
    if all(other.excluded for other in judges.values()):
        if len(judges) == 1:
            # The breaker's reason names the endpoint; any other names the judge.
            breaker = reason.startswith("circuit breaker")
            message = reason if breaker else f"{judge} is broken: {reason}"
        else:
            message = "every judge is broken: " + "; ".join(
                f"{name}: {other.excluded}" for name, other in judges.items()
            )
        scope.stop(Halt(reason="circuit_breaker", message=message, abort=abort))
