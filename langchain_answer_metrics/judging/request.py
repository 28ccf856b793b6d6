"""The one way a request reaches a model: every chat and embedding request is sent here.

From the outside in, a request has:

- for a model with a known endpoint, the circuit breaker's layer
  (:class:`~.endpoints.EndpointRequest`): it sees each request's outcome after its
  retries, names endpoint failures after their endpoint, and counts them per endpoint;
- the retry policy: LangChain's ``RunnableRetry`` (:meth:`RetryPolicy.wrap`) around the
  leaf, so each attempt is a request of its own, and the backoff holds no place below;
- the rate limiter, for models that get one of ours (embedders; a chat model applies
  its own ``rate_limiter`` inside ``generate``);
- a place in the run's request budget (:func:`~.scope.request_slot`), held while the
  request is out;
- the model's sync interface on the sync surface, its async one on the async surface
  (:func:`~.sync.call_model`).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from langchain_core.rate_limiters import BaseRateLimiter
from langchain_core.runnables import Runnable, RunnableConfig

from langchain_answer_metrics.judging.endpoints import EndpointRequest
from langchain_answer_metrics.judging.retry import RetryPolicy
from langchain_answer_metrics.judging.scope import request_slot
from langchain_answer_metrics.judging.sync import call_model

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
    ) -> None:
        self.blocking = blocking
        self.awaitable = awaitable
        self.rate_limiter = rate_limiter
        self.name = name

    async def ainvoke(
        self, input: InT, config: RunnableConfig | None = None, **kwargs: Any
    ) -> OutT:
        if self.rate_limiter is not None:
            await self.rate_limiter.aacquire()
        async with request_slot():
            return await call_model(
                functools.partial(self.blocking, input, config),
                functools.partial(self.awaitable, input, config),
            )

    def invoke(self, input: InT, config: RunnableConfig | None = None, **kwargs: Any) -> OutT:
        raise TypeError(
            "a ModelRequest is sent with ainvoke, which picks the model's sync or async "
            "interface for the surface it runs on"
        )


def model_request(
    blocking: Call[InT, OutT],
    awaitable: AsyncCall[InT, OutT],
    *,
    retry: RetryPolicy | None,
    rate_limiter: BaseRateLimiter | None = None,
    name: str | None = None,
    endpoint: str | None = None,
) -> Runnable[InT, OutT]:
    """A request calling ``blocking`` or ``awaitable``, retried per ``retry``; with an
    ``endpoint`` (``scheme://host:port``, see :func:`~.endpoints.endpoint_of`), watched by
    the circuit breaker.

    Build it once per model and kind of request; send it with ``ainvoke(input, config)``.
    """
    request: Runnable[InT, OutT] = ModelRequest(
        blocking, awaitable, rate_limiter=rate_limiter, name=name
    )
    retried = request if retry is None else retry.wrap(request)
    return retried if endpoint is None else EndpointRequest(retried, endpoint)
