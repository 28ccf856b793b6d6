"""Retries with backoff on chosen errors, through LangChain's ``RunnableRetry``.

One addition to LangChain's exponential backoff: when the provider says how long to wait
(``retry-after-ms`` or ``retry-after`` on a 429 or 503 reply), the wait is at least that,
still capped by ``max_delay``. Retrying sooner would only spend an attempt on another 429.

The package's own request deadline (:class:`~.deadline.RequestDeadlineError`) is a
timeout like the client's: a policy that retries client-side timeouts
(``openai.APITimeoutError`` or a class above it, ``TimeoutError``) retries it too.
"""

from __future__ import annotations

import inspect
import sys
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any

from langchain_core.runnables import Runnable
from langchain_core.runnables.retry import RunnableRetry
from pydantic import BaseModel, ConfigDict, Field, model_validator
from tenacity import RetryCallState, wait_exponential_jitter

from langchain_answer_metrics.judging.deadline import RequestDeadlineError
from langchain_answer_metrics.judging.limits import (
    DEFAULT_BACKOFF_MULTIPLIER,
    DEFAULT_INITIAL_DELAY,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_MAX_DELAY,
)

# tenacity renamed the first backoff delay from "initial" (now deprecated, one warning per
# retry-wrapped call) to "multiplier"; use the name the installed version takes.
_FIRST_DELAY_PARAM = (
    "multiplier"
    if "multiplier" in inspect.signature(wait_exponential_jitter).parameters
    else "initial"
)


def requested_wait(error: BaseException | None) -> float | None:
    """Seconds the provider asked us to wait before retrying, if its reply said so."""
    headers = getattr(getattr(error, "response", None), "headers", None)
    if not headers:
        return None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds:
        try:
            return max(0.0, float(milliseconds) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # an HTTP date
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _with_deadline(
    retry_on: tuple[type[BaseException], ...],
) -> tuple[type[BaseException], ...]:
    """``retry_on``, plus the package's deadline when it retries client-side timeouts."""
    timeouts: list[type[BaseException]] = [TimeoutError]
    openai = sys.modules.get("openai")
    if openai is not None:
        timeouts.append(openai.APITimeoutError)
    retries_timeouts = any(
        issubclass(timeout, listed) for timeout in timeouts for listed in retry_on
    )
    if retries_timeouts and not any(issubclass(RequestDeadlineError, c) for c in retry_on):
        return (*retry_on, RequestDeadlineError)
    return retry_on


# The pydantic mypy plugin trips over RunnableBinding having a field named "kwargs".
class _RetryAfterAware(RunnableRetry[Any, Any]):  # type: ignore[no-redef]
    """LangChain's retry with our backoff, waiting at least what the provider asked for."""

    initial_delay: float
    max_delay: float
    multiplier: float
    jitter: float

    @property
    def _kwargs_retrying(self) -> dict[str, Any]:
        options = dict(super()._kwargs_retrying)
        # Built here rather than through exponential_jitter_params: that TypedDict only
        # knows tenacity's deprecated "initial", and validation drops any other key.
        backoff = wait_exponential_jitter(
            max=self.max_delay,
            exp_base=self.multiplier,
            jitter=self.jitter,
            **{_FIRST_DELAY_PARAM: self.initial_delay},
        )

        def wait(state: RetryCallState) -> float:
            planned = float(backoff(state))
            outcome = state.outcome
            asked = requested_wait(outcome.exception() if outcome is not None else None)
            return planned if asked is None else min(max(planned, asked), self.max_delay)

        options["wait"] = wait
        return options


class RetryPolicy(BaseModel):
    """Retry with exponential backoff on the given exception types only.

    Use this *instead of* the provider client's own retries (set those to 0), so that
    retries come from one layer.

    Attributes:
        retry_on: exception classes to retry on (with their subclasses).
        retry_if: a predicate instead of classes, e.g. to retry on exact status codes.
        max_attempts: attempts in all, the first included.
        initial_delay: seconds before the first retry.
        max_delay: longest wait between attempts, in seconds (also caps ``retry-after``).
        multiplier: factor by which each wait grows.
        jitter: up to this many seconds added at random to each wait.

    Raises:
        pydantic.ValidationError: neither ``retry_on`` nor ``retry_if``, or a value out of range.

    Example:
        >>> import openai
        >>> judge = Judge(model=ChatOpenAI(model="gpt-4o-mini", max_retries=0),
        ...               retry=RetryPolicy(retry_on=(openai.RateLimitError,), max_attempts=4))
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    retry_on: tuple[type[BaseException], ...] = ()
    retry_if: Callable[[BaseException], bool] | None = Field(
        default=None,
        description="A predicate instead of classes, e.g. to retry on exact status codes.",
    )
    max_attempts: int = Field(default=DEFAULT_MAX_ATTEMPTS, ge=1)
    initial_delay: float = Field(default=DEFAULT_INITIAL_DELAY, ge=0)
    max_delay: float = Field(default=DEFAULT_MAX_DELAY, ge=0)
    multiplier: float = Field(default=DEFAULT_BACKOFF_MULTIPLIER, ge=1)
    jitter: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _has_condition(self) -> RetryPolicy:
        if not self.retry_on and self.retry_if is None:
            raise ValueError("RetryPolicy needs retry_on exception types or a retry_if predicate")
        return self

    def wrap(self, runnable: Runnable[Any, Any]) -> Runnable[Any, Any]:
        """``runnable`` retried per this policy (what ``runnable.with_retry`` builds)."""
        return _RetryAfterAware(
            bound=runnable,
            kwargs={},
            config={},
            retry_exception_types=self.retry_if or _with_deadline(self.retry_on),
            wait_exponential_jitter=False,
            max_attempt_number=self.max_attempts,
            initial_delay=self.initial_delay,
            max_delay=self.max_delay,
            multiplier=self.multiplier,
            jitter=self.jitter,
        )
