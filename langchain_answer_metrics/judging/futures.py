"""Futures kept by key, in flight or finished, with a bound on the finished ones.

What the run scope (shared structured calls) and the embedding batcher (remembered
vectors) both keep: a caller that asks for a key already there awaits its future instead
of doing the work again.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

KeyT = TypeVar("KeyT", bound=Hashable)
ValueT = TypeVar("ValueT")


class RecentFutures(Generic[KeyT, ValueT]):
    """Futures by key, least recently used first.

    Past ``max_size`` entries the least recently used *finished* ones are dropped, so
    memory stays flat on long streams; one still in flight is never dropped (callers are
    waiting on it), so eviction stops at the oldest one that is.
    """

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self._futures: OrderedDict[KeyT, asyncio.Future[ValueT]] = OrderedDict()

    def get(self, key: KeyT) -> asyncio.Future[ValueT] | None:
        """The future for ``key``, marked as the most recently used; None if absent."""
        future = self._futures.get(key)
        if future is not None:
            self._futures.move_to_end(key)
        return future

    def put(self, key: KeyT, future: asyncio.Future[ValueT]) -> None:
        self._futures[key] = future
        while len(self._futures) > self.max_size:
            oldest_key, oldest = next(iter(self._futures.items()))
            if not oldest.done():
                break
            del self._futures[oldest_key]

    def discard(self, key: KeyT, future: asyncio.Future[ValueT]) -> None:
        """Forget ``key`` if it still holds ``future`` (a failure is not remembered)."""
        if self._futures.get(key) is future:
            del self._futures[key]

    def in_flight(self) -> list[asyncio.Future[ValueT]]:
        """The futures not done yet (someone is computing them)."""
        return [future for future in self._futures.values() if not future.done()]

    def __contains__(self, key: object) -> bool:
        return key in self._futures

    def __len__(self) -> int:
        return len(self._futures)
