"""Embedding requests batched across samples and de-duplicated within one run.

Inside a :class:`~langchain_answer_metrics.judging.structured.RunScope`, texts that concurrent
samples ask an embedder for are gathered for a moment and sent together, up to the
embedder's ``batch_size`` texts a request; a text already embedded in the run is not
sent again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

import numpy as np
import numpy.typing as npt

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
        self._max_remembered = max_remembered
        self._vectors: OrderedDict[str, asyncio.Future[Vector]] = OrderedDict()
        self._queue: list[str] = []
        self._flush_handle: asyncio.TimerHandle | None = None
        self.requests = 0

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        loop = asyncio.get_running_loop()
        futures = []
        for text in texts:
            future = self._vectors.get(text)
            if future is None:
                future = loop.create_future()
                self._vectors[text] = future
                self._queue.append(text)
            else:
                self._vectors.move_to_end(text)
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
            batch, self._queue = self._queue[: self._batch_size], self._queue[self._batch_size :]
            self.requests += 1
            asyncio.get_running_loop().create_task(self._send_batch(batch))
        self._forget_oldest()

    async def _send_batch(self, batch: list[str]) -> None:
        try:
            vectors = await self._send(batch)
        except Exception as error:
            for text in batch:
                future = self._vectors.pop(text, None)
                if future is not None and not future.done():
                    future.set_exception(error)
                    future.exception()  # retrieved by the waiting callers
            return
        for text, vector in zip(batch, vectors):
            future = self._vectors.get(text)
            if future is not None and not future.done():
                # Kept as an array: a list of Python floats takes four times the memory,
                # and up to max_remembered vectors stay for the rest of the run.
                future.set_result(np.asarray(vector, dtype=np.float64))

    def _forget_oldest(self) -> None:
        while len(self._vectors) > self._max_remembered:
            text, future = next(iter(self._vectors.items()))
            if not future.done():
                break
            del self._vectors[text]
