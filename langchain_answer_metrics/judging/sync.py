"""One event-loop story: the metric logic is written once, async; only the model call differs.

- **Async surface** (``ainvoke``, ``abatch``, ``aevaluate``...): the logic runs in the
  caller's event loop and reaches models through ``ainvoke`` / ``aembed_documents``.
- **Sync surface** (``invoke``, ``batch``, ``score``, ``evaluate``, the CLI...): the logic
  runs on a private event loop in a thread of its own, made for that call, and reaches
  models only through their *sync* interface (``invoke`` / ``embed_documents``) in a
  bounded pool of worker threads, as LangChain's own ``Runnable.batch`` does.

So the package never binds a model's async HTTP client to an event loop of its own:
langchain-openai shares one async client per base URL across the process, and a client
used from our loop would break the user's own ``await judge.ainvoke(...)`` afterwards.
Sync calls also work while another loop runs in the calling thread (Jupyter).

Leaf model calls go through :func:`call_model`, which picks the interface.

**When a sync call ends early** (the circuit breaker, a ``budget`` or ``max_requests``
stop, Ctrl-C, a deadline), it returns or raises at once, and what it left in the model
threads is settled so:

- model calls queued and not started are cancelled (their futures cancelled, nothing
  sent): the session shuts its threads down with ``cancel_futures=True`` before it
  cancels the loop's tasks, so no thread picks one up meanwhile; nothing waits on them;
- calls already in flight cannot be stopped safely from another thread: they finish in
  the background, in daemon threads (which never hold up the interpreter's exit). Their
  results are dropped: the tasks that awaited them are cancelled and their loop closed,
  so nothing they return reaches the run's results, its ledger and spend, or its
  checkpoint, all of which are written in the loop. A model built on the package's HTTP
  clients (:func:`~langchain_answer_metrics.config.http_limits.limited_http_clients`: the
  CLI's and a config's judges) sends nothing more for such a call: its client's retries
  are refused (:class:`~.deadline.RequestAbandoned`). A model with an HTTP client of its
  own may still retry a call in flight up to its ``max_retries``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import queue
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

from langchain_answer_metrics.judging.interruption import interrupt_requested
from langchain_answer_metrics.judging.limits import DEFAULT_MAX_CONCURRENCY

T = TypeVar("T")


# How long an interrupted sync call waits for its cancelled work to unwind.
_CANCEL_GRACE_SECONDS = 5.0

# How often a sync wait looks for a Ctrl-C that the CLI's handler did not raise
# (judging/interruption.py).
_INTERRUPT_POLL_SECONDS = 0.05


def _wait(finished: threading.Event, timeout: float | None) -> bool:
    """Wait for ``finished``; an interrupt requested meanwhile raises KeyboardInterrupt.
    A wait with a ``timeout`` (clean-up, which must finish) is never interrupted."""
    if timeout is not None:
        return finished.wait(timeout)
    while not finished.wait(_INTERRUPT_POLL_SECONDS):
        if interrupt_requested():
            raise KeyboardInterrupt
    return True


# Set (in the task's context only) while a sync call runs: where its model calls go.
_model_threads: contextvars.ContextVar[Executor | None] = contextvars.ContextVar(
    "answer_metrics_model_threads", default=None
)


async def call_model(blocking: Callable[[], T], awaitable: Callable[[], Awaitable[T]]) -> T:
    """Call a model through its sync interface on the sync surface, else its async one.

    ``blocking`` runs in the sync call's worker pool, in a copy of the current context
    (so tracing parents and the run scope carry over); ``awaitable`` runs in the loop.
    """
    pool = _model_threads.get()
    if pool is None:
        return await awaitable()
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(
        pool, functools.partial(context.run, blocking)
    )


class ModelThreads(Executor):
    """At most ``max_workers`` daemon threads for the sync surface's model calls.

    Daemon, unlike ``ThreadPoolExecutor``'s workers, which the interpreter joins at exit:
    a request still out when the user presses Ctrl-C must not hold the process open
    until its HTTP timeout. Threads start on demand and are reused while work queues.
    """

    def __init__(self, max_workers: int) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self._max_workers = max_workers
        self._work: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._idle = threading.Semaphore(0)
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("the sync call that owned these threads has finished")
            self._work.put((future, functools.partial(fn, *args, **kwargs)))
            if not self._idle.acquire(blocking=False) and len(self._threads) < self._max_workers:
                thread = threading.Thread(
                    target=self._serve,
                    name=f"answer-metrics-model-{len(self._threads)}",
                    daemon=True,
                )
                thread.start()
                self._threads.append(thread)
        return future

    def _serve(self) -> None:
        while True:
            item = self._work.get()
            if item is None:
                return
            future, call = item
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as error:
                    future.set_exception(error)
            del item, future, call  # drop references before waiting for more work
            self._idle.release()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Take no more work; the threads end once the work queued before has ended.

        As :meth:`concurrent.futures.Executor.shutdown`: with ``cancel_futures``, the calls
        not started yet are cancelled (and never run) instead; ``wait`` joins the threads
        (the calls in flight end first)."""
        with self._lock:
            self._closed = True
            threads = list(self._threads)
            if cancel_futures:
                # Under the lock: no submit() queues behind the sentinels meanwhile.
                while True:
                    try:
                        item = self._work.get_nowait()
                    except queue.Empty:
                        break
                    if item is not None:
                        item[0].cancel()
        for _ in threads:
            self._work.put(None)
        if wait:
            for thread in threads:
                thread.join()


class BlockingSession:
    """A private event loop in a daemon thread, plus the model threads, for sync callers.

    One per sync call (:func:`run_sync`), or one per sync stream, whose successive
    ``next()`` calls must resume work on the same loop. ``max_concurrency`` sizes the
    model thread pool; it is the run's request budget.
    """

    def __init__(self, max_concurrency: int | None = None) -> None:
        self._threads = ModelThreads(max_concurrency or DEFAULT_MAX_CONCURRENCY)
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(
            target=self._loop.run_forever, name="answer-metrics-sync", daemon=True
        )
        self._loop_thread.start()
        self._closed = False

    def run(self, coroutine: Coroutine[Any, Any, T], *, timeout: float | None = None) -> T:
        """Run ``coroutine`` to completion on this session's loop, keeping context vars.

        With ``timeout``, work still running after that many seconds is cancelled and
        :class:`TimeoutError` raised (used for clean-up, which must never hang).
        """
        if threading.current_thread() is self._loop_thread:
            coroutine.close()
            raise RuntimeError("a sync call was made from inside its own event loop")
        context = contextvars.copy_context()
        context.run(_model_threads.set, self._threads)
        finished = threading.Event()
        outcome: dict[str, Any] = {}
        task: asyncio.Task[T] | None = None

        def record(done: asyncio.Task[T]) -> None:
            if done.cancelled():
                outcome["error"] = asyncio.CancelledError()
            elif done.exception() is not None:
                outcome["error"] = done.exception()
            else:
                outcome["value"] = done.result()
            finished.set()

        def start() -> None:
            nonlocal task
            task = context.run(self._loop.create_task, coroutine)
            task.add_done_callback(record)

        self._loop.call_soon_threadsafe(start)
        try:
            if not _wait(finished, timeout):
                raise TimeoutError(f"gave up after {timeout} s")
        except BaseException:
            # Ctrl-C in the caller: cancel the work and let its finally blocks run (bounded)
            # before the interrupt propagates. Requests already out finish in daemon
            # threads, which never hold up the interpreter's exit.
            self._loop.call_soon_threadsafe(lambda: task is not None and task.cancel())
            finished.wait(timeout=_CANCEL_GRACE_SECONDS)
            raise
        if "error" in outcome:
            raise outcome["error"]
        value: T = outcome["value"]
        return value

    def close(self) -> None:
        """Cancel what is left, stop the loop and release the threads; never hangs."""
        if self._closed:
            return
        self._closed = True
        if sys.is_finalizing():
            # At interpreter exit the daemon threads are frozen: nothing to wait for, and
            # the process is about to release everything anyway.
            return
        # First, so that no thread starts a queued call while the tasks unwind: the calls
        # not started are cancelled, and a task that would queue one now gets an error.
        self._threads.shutdown(wait=False, cancel_futures=True)
        with contextlib.suppress(Exception):
            self.run(_cancel_remaining(), timeout=_CANCEL_GRACE_SECONDS)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop_thread.join(timeout=_CANCEL_GRACE_SECONDS)
        if not self._loop_thread.is_alive() and not self._loop.is_running():
            self._loop.close()

    def __enter__(self) -> BlockingSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


async def _cancel_remaining() -> None:
    """Cancel the loop's other tasks (an abandoned stream's samples), then its generators."""
    current = asyncio.current_task()
    remaining = [task for task in asyncio.all_tasks() if task is not current]
    for task in remaining:
        task.cancel()
    await asyncio.gather(*remaining, return_exceptions=True)
    await asyncio.get_running_loop().shutdown_asyncgens()


def run_sync(coroutine: Coroutine[Any, Any, T], *, max_concurrency: int | None = None) -> T:
    """Run ``coroutine`` from sync code: private loop, models called through sync methods."""
    with BlockingSession(max_concurrency) as session:
        return session.run(coroutine)


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
