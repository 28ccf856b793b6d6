"""When a round may go: as soon as nothing more can join it.

A round takes every line waiting (:meth:`~.lines.BatchLines.take`). A request asked a
moment after the round went (a sample's next step, a sample still starting, a live
judge's reply that the budget check must count first) waits for the next round: minutes
to hours at a real provider, and a batch file split in two. So the rounds wait for the
run to settle, and no longer than that:

- at once, when every sample in flight is *parked* (:func:`parked`): each task it runs
  waits on a line's reply, or on what resolves once lines answer: other tasks parked
  (awaited, gathered, shielded), a shared call one of them computes, an embedding batch
  being sent as lines. None of them can ask anything more before a round answers;
- otherwise (a task waits on something else: a live judge's reply, a thread, a timer),
  once nothing new was asked for ``quiet`` seconds (``BatchSettings.quiet_s``): the
  bounded guard against a straggler it cannot see. It looks again every few
  milliseconds, so a sample that parks meanwhile ends the wait.

What a task waits on is read from CPython's asyncio (``Task._fut_waiter``,
``_GatheringFuture._children``, the inner future of a ``shield``); where one of them
cannot be read, nothing is parked and the bounded wait decides.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["InFlight", "Samples", "Settle", "parked"]


@dataclass(frozen=True)
class Samples:
    """The samples in flight: their tasks (and the tasks working for them), and the
    futures the run's own code resolves, each once the futures given with it are done
    (none given: one of the tasks resolves it): the shared calls one sample computes for
    others, what an embedding batch sends."""

    tasks: Collection[asyncio.Future[Any]]
    within: Mapping[asyncio.Future[Any], Collection[asyncio.Future[Any]]] = field(
        default_factory=dict
    )


InFlight = Callable[[], "Samples | None"]
"""The run's samples in flight, or None while more samples may start."""

_UNREADABLE: Any = object()
# The future asyncio.gather returns (its children are what it waits for).
_GATHERING: Any = getattr(asyncio.tasks, "_GatheringFuture", ())


class Settle(enum.Enum):
    """What the samples in flight are doing."""

    PARKED = "every task waits on a line"
    RUNNING = "a task can run now"
    ELSEWHERE = "a task waits on something else"


def parked(samples: Samples, line_waiters: Iterable[asyncio.Future[Any]]) -> Settle:
    """What the tasks of ``samples`` wait on: only on the replies of lines (their
    futures: ``line_waiters``), through the tasks they await or gather, a ``shield`` and
    the futures the run resolves itself (``samples.within``), or not.

    A future done whose waiter has not heard yet (its callbacks are queued) is a task
    about to run.

    Example:
        >>> parked(Samples(tasks=[]), [])
        <Settle.PARKED: 'every task waits on a line'>
    """
    within: dict[int, Collection[asyncio.Future[Any]]] = {
        id(future): sources for future, sources in samples.within.items()
    }
    within.update((id(waiter), ()) for waiter in line_waiters)
    seen: set[int] = set()
    stack: list[Any] = [task for task in samples.tasks if not task.done()]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if item is _UNREADABLE:
            return Settle.ELSEWHERE
        if item.done():
            continue  # a task, or what a gather or a run's future waits for, done
        if isinstance(item, asyncio.Task):
            waiter: Any = getattr(item, "_fut_waiter", _UNREADABLE)
            if waiter is None or (waiter is not _UNREADABLE and waiter.done()):
                return Settle.RUNNING  # started, or woken, and not yet run
            stack.append(waiter)
            continue
        sources = within.get(id(item))
        if sources is None and isinstance(item, _GATHERING):
            sources = getattr(item, "_children", None) or [_UNREADABLE]
        if sources is None and (inner := _shielded(item)) is not None:
            sources = [inner]
        if sources is None:  # a live request, a thread, a timer ...: not seen through
            return Settle.ELSEWHERE
        if _resolving(sources):
            return Settle.RUNNING
        stack.extend(sources)
    return Settle.PARKED


def _resolving(sources: Collection[Any]) -> bool:
    """Whether a future waiting for ``sources`` is about to be resolved: they are all
    done, or one failed (its callback is queued, or has run)."""
    done = [source for source in sources if source is not _UNREADABLE and source.done()]
    if sources and len(done) == len(sources):
        return True
    return any(source.cancelled() or source.exception() is not None for source in done)


def _shielded(future: Any) -> Any:
    """The future ``asyncio.shield`` returned ``future`` for, if it is such a future."""
    for callback, _ in getattr(future, "_callbacks", None) or ():
        code = getattr(callback, "__code__", None)
        if code is None or callback.__name__ != "_outer_done_callback":
            continue
        if "inner" in code.co_freevars and callback.__closure__ is not None:
            return callback.__closure__[code.co_freevars.index("inner")].cell_contents
    return None
