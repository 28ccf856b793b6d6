"""Embedding requests batched across samples and de-duplicated within one run.

Inside a :class:`~langchain_answer_metrics.judging.scope.RunScope`, texts that concurrent
samples ask an embedder for are gathered for a moment and sent together, up to the
embedder's ``batch_size`` texts a request; a text already embedded in the run is not
sent again. A batch is sent with the priority of the earliest sample it serves
(:func:`~langchain_answer_metrics.judging.scope.at_position`).

A caller that knows the texts its samples will ask for may :meth:`~EmbeddingBatcher.reserve`
them before starting the samples: they are queued (and full batches sent) at once, and
each sample then claims its texts as if it had been the one to queue them.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_answer_metrics.judging.futures import RecentFutures
from langchain_answer_metrics.judging.scope import at_position, current_position

# How long the first queued text waits for others: long enough for every sample task
# started in the same loop iteration to queue its texts, short next to a request.
LINGER_SECONDS = 0.002

# Sends one request; returns one vector per text, in order, or raises.
SendBatch = Callable[[list[str]], Awaitable[list[list[float]]]]
Vector = npt.NDArray[np.float64]


@dataclass
class _Reserved:
    future: asyncio.Future[Vector]
    left: int = 1  # claims still to come
    claimed: bool = False


class EmbeddingBatcher:
    """Collects texts for one embedder and sends them in shared, de-duplicated batches."""

    def __init__(self, send: SendBatch, *, batch_size: int, max_remembered: int = 2048) -> None:
        # 2048 finished vectors: a few MB at 256 dimensions, ~50 MB at 3072; enough to
        # embed a text repeated across a long stream once while it keeps recurring.
        self._send = send
        self._batch_size = batch_size
        self._vectors: RecentFutures[str, Vector] = RecentFutures(max_remembered)
        self._queue: list[tuple[str, asyncio.Future[Vector]]] = []
        self._positions: list[float] = []  # of the samples each queued text is for
        self._flush_handle: asyncio.TimerHandle | None = None
        # Reserved texts whose claims are not all in: their future, the claims still to
        # come, and whether one came already.
        self._reserved: dict[str, _Reserved] = {}
        self.requests = 0
        # The first text of each batch sent and not yet claimed: the request is counted
        # in the usage of the sample that was first to ask for that text.
        self._leads: set[str] = set()
        # What a batch run's rounds read (waits()): the futures callers await, the
        # batches being sent (kept referenced: the loop holds its tasks weakly).
        self._awaited: dict[asyncio.Future[None], list[asyncio.Future[Vector]]] = {}
        self._sending: set[asyncio.Task[None]] = set()

    def remembers(self, text: str) -> bool:
        """Whether ``text`` was asked for already in this run (sent, or being sent); a
        reserved text only from its first claim."""
        reserved = self._reserved.get(text)
        if reserved is not None:
            return reserved.claimed
        return self._vectors.get(text) is not None

    def reserve(self, texts: Sequence[str], positions: Sequence[float] | None = None) -> None:
        """Queue ``texts`` now, one entry per later :meth:`embed` call that will ask for
        it, as if those calls had been made in this order; the calls then claim them.
        ``positions``: the position of the sample each text is for (default: the current
        one). Call :meth:`release` with the same texts once the callers are done."""
        for at, text in enumerate(texts):
            reserved = self._reserved.get(text)
            if reserved is not None:
                reserved.left += 1
            elif self._vectors.get(text) is None:
                position = current_position() if positions is None else positions[at]
                self._reserved[text] = _Reserved(self._queued(text, position))
        self._schedule()

    def release(self, texts: Sequence[str]) -> None:
        """Forget the claims of ``texts`` that never came (a sample that failed first)."""
        for text in texts:
            self._reserved.pop(text, None)

    def waits(
        self,
    ) -> (
        tuple[dict[asyncio.Future[Any], list[asyncio.Future[Any]]], list[asyncio.Task[None]]] | None
    ):
        """What its callers wait on, for a batch run's rounds (:mod:`~.batch.settling`):
        each future they await with the vectors it waits for (and each such vector, which
        a batch being sent resolves), and the tasks sending those batches; None while
        texts are queued, not yet sent."""
        if self._queue:
            return None
        within: dict[asyncio.Future[Any], list[asyncio.Future[Any]]] = {}
        for all_done, vectors in self._awaited.items():
            within[all_done] = list(vectors)
            for vector in vectors:
                if not vector.done():
                    within.setdefault(vector, [])
        return within, list(self._sending)

    def claim_requests(self, firsts: Sequence[str]) -> int:
        """The requests to count for a caller that was first to ask for ``firsts``
        (once its vectors came): one per batch led by one of them. Each request is
        claimed once, so a run's samples add up to the requests it sent."""
        claimed = [text for text in firsts if text in self._leads]
        self._leads.difference_update(claimed)
        return len(claimed)

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        futures = []
        for text in texts:
            reserved = self._reserved.get(text)
            if reserved is not None:
                future = reserved.future
                reserved.claimed = True
                reserved.left -= 1
                if not reserved.left:
                    del self._reserved[text]
            else:
                future = self._vectors.get(text) or self._queued(text)
            futures.append(future)
        self._schedule()
        return await _results(futures, self._awaited)

    def _queued(self, text: str, position: float | None = None) -> asyncio.Future[Vector]:
        future: asyncio.Future[Vector] = asyncio.get_running_loop().create_future()
        self._vectors.put(text, future)
        self._queue.append((text, future))
        self._positions.append(current_position() if position is None else position)
        return future

    def _schedule(self) -> None:
        if len(self._queue) >= self._batch_size:
            self._flush()
        elif self._queue and self._flush_handle is None:
            loop = asyncio.get_running_loop()
            self._flush_handle = loop.call_later(LINGER_SECONDS, self._flush)

    def _flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        while self._queue:
            size = self._batch_size
            batch, self._queue = self._queue[:size], self._queue[size:]
            positions, self._positions = self._positions[:size], self._positions[size:]
            self.requests += 1
            self._leads.add(batch[0][0])
            task = asyncio.get_running_loop().create_task(self._send_batch(batch, min(positions)))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    async def _send_batch(
        self, batch: list[tuple[str, asyncio.Future[Vector]]], position: float
    ) -> None:
        at_position(position)  # this task's own context: the batch's request only
        try:
            vectors = await self._send([text for text, _ in batch])
        except Exception as error:
            self._leads.discard(batch[0][0])  # its callers fail: no usage to count it in
            for text, future in batch:
                # A failure is not remembered: a later call for the text tries again.
                self._vectors.discard(text, future)
                if not future.done():
                    future.set_exception(error)
                    future.exception()  # retrieved by the waiting callers
            return
        for (_, future), vector in zip(batch, vectors):
            if not future.done():
                # Kept as an array: a list of Python floats takes four times the memory,
                # and up to max_remembered vectors stay for the rest of the run.
                future.set_result(np.asarray(vector, dtype=np.float64))


async def _results(
    futures: list[asyncio.Future[Vector]],
    awaited: dict[asyncio.Future[None], list[asyncio.Future[Vector]]],
) -> list[Vector]:
    """The results of the shared ``futures``, in order; the first failure is raised as
    soon as it comes. What ``gather(*map(shield, futures))`` gives (a caller cancelled
    while waiting leaves the futures alone), with one future and one callback a text
    instead of a shield, a gathering future and two callbacks each, every callback with
    its own copy of the context: a sample waits on its texts with a quarter of the
    objects, which the garbage collector walks while thousands of samples wait."""
    failed = [future for future in futures if future.done() and _failed(future)]
    waiting = [] if failed else [future for future in futures if not future.done()]
    if waiting:
        all_done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        left = len(waiting)

        def one_done(future: asyncio.Future[Vector]) -> None:
            nonlocal left
            left -= 1
            if all_done.done():
                return
            if _failed(future):
                failed.append(future)
                all_done.set_result(None)
            elif not left:
                all_done.set_result(None)

        context = contextvars.Context()  # the callback reads no context variable
        for future in waiting:
            future.add_done_callback(one_done, context=context)
        awaited[all_done] = waiting
        try:
            await all_done
        finally:
            del awaited[all_done]
            if all_done.cancelled():
                for future in waiting:
                    future.remove_done_callback(one_done)
    if failed:
        failed[0].result()  # raises its error (or CancelledError)
    return [future.result() for future in futures]


def _failed(future: asyncio.Future[Vector]) -> bool:
    return future.cancelled() or future.exception() is not None
