"""The run scope: work shared within one runner call or one ``batch`` call.

Identical structured calls are sent once (:func:`shared_call`), embedding batchers are
shared by the metrics on one model, and an optional request budget caps the model
requests in flight (:func:`request_slot`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

from langchain_answer_metrics.judging.futures import RecentFutures

T = TypeVar("T")


class RunScope:
    """Work shared within one runner call or one ``batch`` call.

    Every structured call is kept by its identity, finished or still in flight, so an
    identical call awaits the first one instead of being sent again. Finished entries
    are evicted least-recently-used past ``max_shared``, so memory stays flat on long
    streams. ``budget`` caps the model requests in flight across all metrics and models.
    """

    def __init__(
        self, *, max_concurrency: int | None = None, max_shared: int = 4096
    ) -> None:
        self.budget = asyncio.Semaphore(max_concurrency) if max_concurrency else None
        self.calls: RecentFutures[str, Any] = RecentFutures(max_shared)
        self.batchers: dict[tuple[int, ...], Any] = {}


_current_scope: ContextVar[RunScope | None] = ContextVar("answer_metrics_scope", default=None)


def current_scope() -> RunScope | None:
    return _current_scope.get()


def enter_scope(scope: RunScope) -> None:
    """Make ``scope`` current for the rest of this context (e.g. a fresh task context)."""
    _current_scope.set(scope)


@contextlib.contextmanager
def run_scope(scope: RunScope | None = None) -> Iterator[RunScope]:
    """Share identical calls (and optionally a request budget) for the code inside."""
    active = scope or RunScope()
    token = _current_scope.set(active)
    try:
        yield active
    finally:
        _current_scope.reset(token)


@contextlib.asynccontextmanager
async def request_slot() -> AsyncIterator[None]:
    """Hold one place of the run's request budget, if it has one, while a request is out."""
    scope = _current_scope.get()
    if scope is None or scope.budget is None:
        yield
        return
    async with scope.budget:
        yield


async def shared_call(key: str, compute: Callable[[], Awaitable[T]]) -> tuple[T, bool]:
    """Run ``compute()`` once per ``key`` within the current scope; later callers share it.

    Returns the value and whether this caller computed it (False: it was shared).
    """
    scope = _current_scope.get()
    if scope is None:
        return await compute(), True
    pending = scope.calls.get(key)
    if pending is not None:
        return await asyncio.shield(pending), False
    future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    scope.calls.put(key, future)
    try:
        value = await compute()
    except BaseException as error:
        future.set_exception(error)
        # Mark the exception retrieved: callers that share it re-raise it themselves.
        future.exception()
        # A failure is shared with the callers already waiting, not remembered: a later
        # identical call tries again.
        scope.calls.discard(key, future)
        raise
    future.set_result(value)
    return value, True
