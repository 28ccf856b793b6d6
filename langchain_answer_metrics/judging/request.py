"""The one way a request reaches a model: every chat and embedding request is sent here.

From the outside in, a request has:

- the retry policy: LangChain's ``RunnableRetry`` (:meth:`RetryPolicy.wrap`) around the
  leaf, so each attempt is a request of its own, and the backoff holds no place below;
- for a model with a known endpoint, the circuit breaker's layer
  (:class:`~.endpoints.EndpointRequest`): it sees each attempt's outcome, names endpoint
  failures after their endpoint, and counts them per endpoint;
- the rate limiter, for models that get one of ours (embedders; a chat model applies
  its own ``rate_limiter`` inside ``generate``);
- a place in the run's request budget (:func:`~.scope.request_slot`), held while the
  request is out;
- a deadline (``deadline`` seconds, :data:`DEFAULT_REQUEST_TIMEOUT` unless the judge or
  embedder says otherwise): past it the attempt fails with :class:`RequestDeadlineError`,
  a ``TimeoutError`` (retried as a timeout, counted by the circuit breaker);
- the model's sync interface on the sync surface, its async one on the async surface
  (:func:`~.sync.call_model`).

Every attempt is a request in the spend: one that fails at the endpoint (an HTTP error
reply such as a 429 or a 500, a connection error, a timeout) is recorded in the member's
ledger as a request with no tokens (:mod:`.ledger`), so ``max_requests`` and the spend
line count what was sent. Any other exception (a local model's) is not counted. For the
models a config builds, the HTTP requests the openai client's own retries send within one
attempt are counted too (their HTTP client notes each one, see :mod:`.deadline`).

What the deadline bounds: on the async surface, the attempt itself (the model's call is
cancelled). On the sync surface the model's blocking call runs in a worker thread, which
Python cannot stop: the attempt fails at the deadline, but the thread stays busy until
the model's own client gives up. The models a config builds carry an HTTP client that
enforces the same deadline and a cap on a reply's size
(:mod:`langchain_answer_metrics.config.http_limits`); for a model of your own, set its
``timeout=`` (and ``max_retries``) so its client gives up too. Nothing here limits the
size of a reply to your own model's client: only its time.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from langchain_core.exceptions import OutputParserException
from langchain_core.rate_limiters import BaseRateLimiter
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import ValidationError

from langchain_answer_metrics.judging import judge_health
from langchain_answer_metrics.judging.deadline import (
    RequestDeadlineError,
    RequestLimitError,
    counting_http_sends,
)
from langchain_answer_metrics.judging.endpoints import EndpointRequest, is_endpoint_failure
from langchain_answer_metrics.judging.ledger import record_failed_request
from langchain_answer_metrics.judging.limits import DEFAULT_REQUEST_TIMEOUT
from langchain_answer_metrics.judging.retry import RetryPolicy
from langchain_answer_metrics.judging.scope import current_scope, request_slot
from langchain_answer_metrics.judging.sync import call_model

# Replies that came back but did not parse (json_schema mode raises inside the call): the
# structured step records them as requests itself.
_COUNTED_BY_THE_STEP = (ValidationError, OutputParserException, json.JSONDecodeError)

# The deadline of our own layer is this much later than the HTTP client's, so that a
# model built with a limited client (see config.http_limits) fails with its own error,
# which says what happened at the HTTP level, rather than ours.
_DEADLINE_GRACE_SECONDS = 1.0


__all__ = [
    "DEFAULT_REQUEST_TIMEOUT",
    "ModelRequest",
    "RequestDeadlineError",
    "RequestLimitError",
    "model_request",
]

InT = TypeVar("InT")
OutT = TypeVar("OutT")

# How a model is called, given the request's input and its config (the model's run is
# made a child of that config's run).
Call = Callable[[InT, "RunnableConfig | None"], OutT]
AsyncCall = Callable[[InT, "RunnableConfig | None"], Awaitable[OutT]]


class ModelRequest(Runnable[InT, OutT]):
    """One request to a model, sent with ``ainvoke``: the leaf the retry policy wraps.

    It adds no run to traces: the model's run hangs off the caller's run (or the retry's,
    which tags each later attempt ``retry:attempt:N``).
    """

    def __init__(
        self,
        blocking: Call[InT, OutT],
        awaitable: AsyncCall[InT, OutT],
        *,
        rate_limiter: BaseRateLimiter | None = None,
        name: str | None = None,
        deadline: float | None = DEFAULT_REQUEST_TIMEOUT,
        judge: str | None = None,
    ) -> None:
        self.judge = judge
        self.blocking = blocking
        self.awaitable = awaitable
        self.rate_limiter = rate_limiter
        self.name = name
        self.deadline = deadline

    async def ainvoke(
        self, input: InT, config: RunnableConfig | None = None, **kwargs: Any
    ) -> OutT:
        if self.rate_limiter is not None:
            await self.rate_limiter.aacquire()
        # Checked once the request may go: it may have waited while the judge was found
        # broken. An excluded judge is sent nothing.
        judge = self.judge
        check = None if judge is None else functools.partial(judge_health.check_included, judge)
        async with request_slot(check):
            with counting_http_sends() as sends:
                try:
                    return await self._send(input, config)
                except _COUNTED_BY_THE_STEP:
                    raise  # a reply that did not parse: the structured step counts it
                except Exception as error:
                    if _was_sent(error):
                        # A request all the same (its tokens, if any, unknown).
                        record_failed_request()
                    raise
                finally:
                    _count_client_retries(sends.count - 1)

    async def _send(self, input: InT, config: RunnableConfig | None) -> OutT:
        call = call_model(
            functools.partial(self.blocking, input, config),
            functools.partial(self.awaitable, input, config),
        )
        if self.deadline is None:
            return await call
        deadline = asyncio.timeout(self.deadline + _DEADLINE_GRACE_SECONDS)
        try:
            async with deadline:
                return await call
        except TimeoutError:
            if not deadline.expired():
                raise  # the model's own timeout, not ours
            raise RequestDeadlineError(
                f"no complete reply within the request deadline of {self.deadline:g} s"
            ) from None

    def invoke(self, input: InT, config: RunnableConfig | None = None, **kwargs: Any) -> OutT:
        raise TypeError(
            "a ModelRequest is sent with ainvoke, which picks the model's sync or async "
            "interface for the surface it runs on"
        )


def _count_client_retries(retries: int) -> None:
    """The HTTP requests the model's own client sent before its last one (its retries,
    each after a failure) are requests too: in the spend and in the run's count."""
    if retries <= 0:
        return
    for _ in range(retries):
        record_failed_request()
    scope = current_scope()
    if scope is not None and scope.budget is not None:
        scope.budget.sent_within(retries)


def _was_sent(error: BaseException) -> bool:
    """Whether a failed call went out to an endpoint: an HTTP error reply (a 429, a 401),
    or an endpoint failure (a connection error, a timeout, a 5xx). Any other exception
    (a local model's or test double's) is not known to have sent anything."""
    if is_endpoint_failure(error):
        return True
    status = getattr(error, "status_code", None)
    if status is None:
        status = getattr(getattr(error, "response", None), "status_code", None)
    return isinstance(status, int) and not isinstance(status, bool)


def model_request(
    blocking: Call[InT, OutT],
    awaitable: AsyncCall[InT, OutT],
    *,
    retry: RetryPolicy | None,
    rate_limiter: BaseRateLimiter | None = None,
    name: str | None = None,
    endpoint: str | None = None,
    deadline: float | None = DEFAULT_REQUEST_TIMEOUT,
    judge: str | None = None,
) -> Runnable[InT, OutT]:
    """A request calling ``blocking`` or ``awaitable``, each attempt within ``deadline``
    seconds (None: no deadline), retried per ``retry``; with an ``endpoint``
    (``scheme://host:port``, see :func:`~.endpoints.endpoint_of`), each attempt watched
    by the circuit breaker (per ``judge``, the judge's label, when it is a judge's).

    Build it once per model and kind of request; send it with ``ainvoke(input, config)``::

        request = model_request(model.invoke, model.ainvoke, retry=None, deadline=30)
        reply = await request.ainvoke(messages)
    """
    request: Runnable[InT, OutT] = ModelRequest(
        blocking,
        awaitable,
        rate_limiter=rate_limiter,
        name=name,
        deadline=deadline,
        judge=judge,
    )
    watched = request if endpoint is None else EndpointRequest(request, endpoint, judge)
    return watched if retry is None else retry.wrap(watched)
