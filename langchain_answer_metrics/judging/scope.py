"""The run scope: work shared within one runner call or one ``batch`` call.

Identical structured calls are sent once (:func:`shared_call`), embedding batchers are
shared by the metrics on one model, and an optional request budget caps the model
requests in flight (:func:`request_slot`). A free place of the budget goes to the
request of the earliest sample waiting (:func:`at_position`), so a run with many samples
in flight still finishes them in input order.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_answer_metrics.judging.futures import RecentFutures

T = TypeVar("T")


class RequestBudget:
    """A semaphore whose free places go to the waiter of the lowest position first.

    Waiters of equal position are served first come, first served; a waiter with no
    position (``math.inf``) comes after every positioned one.
    """

    def __init__(self, places: int) -> None:
        self.free = places
        self.granted = 0  # places handed out so far (requests sent)
        self.returned = 0  # places given back (requests finished, well or not)
        self._waiting: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()

    async def acquire(self, position: float = math.inf) -> None:
        # A place is only ever free when nobody waits: release hands it to a waiter first.
        if self.free > 0:
            self.free -= 1
            self.granted += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiting, (position, next(self._order), future))
        try:
            await future
            self.granted += 1
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()  # granted, then cancelled before it could run: hand it on
            raise

    def sent_within(self, count: int) -> None:
        """``count`` more requests went out, and came back, within a place already held
        (a client's own retries): counted as sent and finished, taking no place."""
        self.granted += count
        self.returned += count

    def unsent(self) -> None:
        """A place granted, then not used to send anything: given back uncounted."""
        self.granted -= 1
        self.release()
        self.returned -= 1

    def release(self) -> None:
        self.returned += 1
        while self._waiting:
            _, _, future = heapq.heappop(self._waiting)
            if not future.done():  # a cancelled waiter is skipped
                future.set_result(None)
                return
        self.free += 1


@dataclass(frozen=True)
class Halt:
    """Why a run admits no more samples.

    ``abort``: the samples in flight are cancelled too (their endpoint is failing, so
    waiting on their retries would only delay the exit); otherwise they finish.
    """

    reason: str  # e.g. "circuit_breaker", "budget", "max_requests"
    message: str
    abort: bool = False


@dataclass
class EndpointHealth:
    """What the circuit breaker knows of one endpoint within a scope.

    Attributes:
        failures: failed attempts in a row (a reply of any kind resets it).
        timeouts: among them, the timeouts that saw no reply from the endpoint while
            they waited.
        last_reply: when the endpoint last replied (``time.monotonic()``), or None.
    """

    failures: int = 0
    timeouts: int = 0
    last_reply: float | None = None


class RunScope:
    """Work shared within one runner call or one ``batch`` call.

    Every structured call is kept by its identity, finished or still in flight, so an
    identical call awaits the first one instead of being sent again. Finished entries
    are evicted least-recently-used past ``max_shared``, so memory stays flat on long
    streams. ``budget`` caps the model requests in flight across all metrics and models.

    ``endpoint_health`` holds each endpoint's (or judge's) failures in a row; at
    ``max_consecutive_failures`` (None: never) the circuit breaker stops the scope (see
    :mod:`.endpoints`). Only the runner sets it: nothing else acts on a stopped scope.
    """

    def __init__(
        self,
        *,
        max_concurrency: int | None = None,
        max_shared: int = 4096,
        max_consecutive_failures: int | None = None,
    ) -> None:
        if max_consecutive_failures is not None and max_consecutive_failures < 1:
            raise ValueError("max_consecutive_failures must be at least 1 (or None: never stop)")
        self.max_consecutive_failures = max_consecutive_failures
        self.endpoint_health: dict[str, EndpointHealth] = {}
        # Each judge's health by label (judge_health.JudgeHealth): which are excluded.
        self.judge_health: dict[str, Any] = {}
        self.budget = RequestBudget(max_concurrency) if max_concurrency else None
        self.calls: RecentFutures[str, Any] = RecentFutures(max_shared)
        self.batchers: dict[tuple[int, ...], Any] = {}
        # What each member (by label) has spent so far, as replies come back (ledger.py).
        self.spent: dict[str, Any] = {}
        self.halt: Halt | None = None
        self._halted: asyncio.Event | None = None

    def stop(self, halt: Halt) -> None:
        """Admit no more samples into this run (the first reason given is kept)."""
        if self.halt is None:
            self.halt = halt
            self.halted().set()

    def halted(self) -> asyncio.Event:
        """Set once :meth:`stop` is called; made in the run's own event loop."""
        if self._halted is None:
            self._halted = asyncio.Event()
            if self.halt is not None:
                self._halted.set()
        return self._halted


_current_scope: ContextVar[RunScope | None] = ContextVar("answer_metrics_scope", default=None)
_position: ContextVar[float] = ContextVar("answer_metrics_sample_position", default=math.inf)


def current_scope() -> RunScope | None:
    return _current_scope.get()


def at_position(position: float) -> None:
    """Give the requests made from here on (in this context) the priority of a sample at
    ``position`` in its run: the budget serves lower positions first."""
    _position.set(position)


def current_position() -> float:
    """The position of the sample the current code works for (``math.inf`` if none)."""
    return _position.get()


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
async def request_slot(check: Callable[[], None] | None = None) -> AsyncIterator[None]:
    """Hold one place of the run's request budget, if it has one, while a request is out.

    ``check`` runs once the request may go (it may have waited): if it raises, nothing
    is sent and the place is not counted as a request.
    """
    scope = _current_scope.get()
    if scope is None or scope.budget is None:
        if check is not None:
            check()
        yield
        return
    budget = scope.budget
    await budget.acquire(_position.get())
    if check is not None:
        try:
            check()
        except BaseException:
            budget.unsent()
            raise
    try:
        yield
    finally:
        budget.release()


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
