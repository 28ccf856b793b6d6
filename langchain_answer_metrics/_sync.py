"""Run the async metric logic from synchronous code on one long-lived event loop.

Each metric is written once, async-first. Sync calls are submitted to a background loop
rather than ``asyncio.run``: async HTTP clients (httpx, behind ChatOpenAI) keep connection
pools bound to the loop that opened them, and a fresh loop per call breaks those pools.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# How long an interrupted sync call waits for its cancelled work to unwind.
_CANCEL_GRACE_SECONDS = 5.0

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop, _thread
    with _lock:
        if _loop is None or _thread is None or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="answer-metrics-loop", daemon=True
            )
            thread.start()
            _loop, _thread = loop, thread
        return _loop


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion from sync code, keeping the caller's context vars."""
    loop = _background_loop()
    if threading.current_thread() is _thread:
        coroutine.close()
        raise RuntimeError(
            "A metric's sync method was called from inside its own event loop; "
            "use ainvoke/abatch/ascore there."
        )
    context = contextvars.copy_context()
    done: asyncio.Future[T] | None = None
    finished = threading.Event()
    outcome: dict[str, Any] = {}

    def start() -> None:
        nonlocal done
        task = context.run(loop.create_task, coroutine)
        done = task

        def record(finished_task: asyncio.Task[T]) -> None:
            if finished_task.cancelled():
                outcome["error"] = asyncio.CancelledError()
            elif finished_task.exception() is not None:
                outcome["error"] = finished_task.exception()
            else:
                outcome["value"] = finished_task.result()
            finished.set()

        task.add_done_callback(record)

    loop.call_soon_threadsafe(start)
    try:
        finished.wait()
    except BaseException:
        # Ctrl-C in the caller: stop the work, and let it unwind (its finally blocks run)
        # before the interrupt propagates, so nothing is left half-closed behind us.
        if done is not None:
            loop.call_soon_threadsafe(done.cancel)
            finished.wait(timeout=_CANCEL_GRACE_SECONDS)
        raise
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


async def gather_settled(*awaitables: Awaitable[T]) -> list[T]:
    """Like ``asyncio.gather``, but on a failure wait for the others, then raise the first.

    Plain ``gather`` raises at the first failure and leaves the others running unobserved,
    so a metric that has already failed would go on sending requests in the background
    (outside any request budget). Cancelling them instead is unsafe: an identical call
    shared with another sample would see the cancellation. The failure raised is the
    first in argument order, so the reported step does not depend on timing.
    """
    outcomes = await asyncio.gather(*awaitables, return_exceptions=True)
    values: list[T] = []
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome
        values.append(outcome)
    return values
