"""Embedding requests batched across samples and de-duplicated within one run.

Inside a :class:`~langchain_answer_metrics.judging.scope.RunScope`, texts that concurrent
samples ask an embedder for are gathered for a moment and sent together, up to the
embedder's ``batch_size`` texts a request; a text already embedded in the run is not
sent again. A batch is sent with the priority of the earliest sample it serves
(:func:`~langchain_answer_metrics.judging.scope.at_position`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

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
        self.requests = 0

    def remembers(self, text: str) -> bool:
        """Whether ``text`` was asked for already in this run (sent, or being sent)."""
        return self._vectors.get(text) is not None

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        loop = asyncio.get_running_loop()
        futures = []
        for text in texts:
            future = self._vectors.get(text)
            if future is None:
                future = loop.create_future()
                self._vectors.put(text, future)
                self._queue.append((text, future))
                self._positions.append(current_position())
            futures.append(future)
        if len(self._queue) >= self._batch_size:
            self._flush()
        elif self._queue and self._flush_handle is None:
            self._flush_handle = loop.call_later(LINGER_SECONDS, self._flush)
        return list(await asyncio.gather(*(asyncio.shield(f) for f in futures)))

    def _flush(self) -> None:
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        while self._queue:
            size = self._batch_size
            batch, self._queue = self._queue[:size], self._queue[size:]
            positions, self._positions = self._positions[:size], self._positions[size:]
            self.requests += 1
            asyncio.get_running_loop().create_task(self._send_batch(batch, min(positions)))

    async def _send_batch(
        self, batch: list[tuple[str, asyncio.Future[Vector]]], position: float
    ) -> None:
        at_position(position)  # this task's own context: the batch's request only
        try:
            vectors = await self._send([text for text, _ in batch])
        except Exception as error:
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
