"""When a round may go: as soon as nothing more can join it.

A round takes every line waiting (:meth:`~.lines.BatchLines.take`). A request asked a
moment after the round went (a sample's next step, a sample still starting, a live
judge's reply that the budget check must count first) waits for the next round: minutes
to hours at a real provider, and a batch file split in two. So the rounds wait for the
run to settle, and no longer than that:

- at once, when every sample in flight is *parked* (:func:`parked`): each task it runs
  waits on a line's reply, or on other tasks that do (a task awaited, tasks gathered, a
  shared call another of its tasks computes). None of them can ask anything more before
  a round answers;
- otherwise (a task waits on something else: a live judge's reply, a thread, a timer,
  an embedding batch, which this check does not see through), once nothing new was
  asked for ``quiet`` seconds (``BatchSettings.quiet_s``): the bounded guard against a
  straggler it cannot see. It looks again every few milliseconds, so a sample that parks
  meanwhile ends the wait.

What a task waits on is read from CPython's asyncio (``Task._fut_waiter``,
``_GatheringFuture._children``, the inner future of a ``shield``); where one of them
cannot be read, nothing is parked and the bounded wait decides.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["InFlight", "Samples", "Settle", "parked"]


@dataclass(frozen=True)
class Samples:
    """The samples in flight: their tasks, and the futures their tasks resolve
    themselves (the shared calls one of them computes for the others)."""

    tasks: Collection[asyncio.Future[Any]]
    shared: Collection[asyncio.Future[Any]] = field(default=())


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
    futures: ``line_waiters``), through the tasks they await or gather and the shared
    calls they compute, or not.

    Example:
        >>> parked(Samples(tasks=[]), [])
        <Settle.PARKED: 'every task waits on a line'>
    """
    within = {id(future) for future in (*line_waiters, *samples.shared)}
    seen: set[int] = set()
    stack: list[Any] = [task for task in samples.tasks if not task.done()]
    while stack:
        item = stack.pop()
        if id(item) in seen or id(item) in within:
            continue
        seen.add(id(item))
        if isinstance(item, asyncio.Task):
            if item.done():
                continue
            waiter: Any = getattr(item, "_fut_waiter", _UNREADABLE)
            if waiter is None or (waiter is not _UNREADABLE and waiter.done()):
                return Settle.RUNNING  # started, or woken, and not yet run
            stack.append(waiter)
        elif isinstance(item, _GATHERING):
            stack.extend(getattr(item, "_children", None) or [_UNREADABLE])
        elif isinstance(item, asyncio.Future) and item.done():
            continue  # gathered, already done
        elif (inner := _shielded(item)) is not None:
            stack.append(inner)
        else:  # a live request, a thread, a timer, an embedding batch ...: not seen through
            return Settle.ELSEWHERE
    return Settle.PARKED


def _shielded(future: Any) -> Any:
    """The future ``asyncio.shield`` returned ``future`` for, if it is such a future."""
    for callback, _ in getattr(future, "_callbacks", None) or ():
        code = getattr(callback, "__code__", None)
        if code is None or callback.__name__ != "_outer_done_callback":
            continue
        if "inner" in code.co_freevars and callback.__closure__ is not None:
            return callback.__closure__[code.co_freevars.index("inner")].cell_contents
    return None
