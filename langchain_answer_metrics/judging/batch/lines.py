"""The judge requests of a batch run, collected per round: each a line waiting for its reply.

A stand-in model (:mod:`.standin`) gives :meth:`BatchLines.submit` the request body the
real model built and awaits the reply. Identical bodies for the same endpoint and model
are one line, however many steps or samples wait for it; a body already out in a batch
waits for that batch rather than going out again. The rounds (:mod:`.rounds`) take what
is waiting once the run has settled (:mod:`.settling`: every sample in flight waits on
a line; or, short of that, nothing new for ``quiet`` seconds), send it, and
resolve each line with its reply, or put it back for the next round (a failed line,
within its attempts), or fail it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_answer_metrics.judging.batch.settling import InFlight, Settle, parked

# How often a run that has not settled is looked at again, within the bounded wait.
_LOOK_AGAIN_S = 0.005

__all__ = ["BatchLineError", "BatchLines", "BatchRefusedError", "Group", "Line", "line_key"]


class BatchLineError(RuntimeError):
    """A batch line that failed on every attempt the retry policy allows (a model failure
    of the samples waiting for it)."""


class BatchRefusedError(RuntimeError):
    """The endpoint refused to create a batch for this group's endpoint (an embeddings
    batch where the provider has none): its callers send the request live instead."""


@dataclass(frozen=True)
class Group:
    """Lines that may share a batch file: one model, at one endpoint, for one judge label.

    ``endpoint`` is the line's ``url`` and the batch's endpoint (``/v1/chat/completions``,
    ``/v1/embeddings``; on Azure OpenAI ``/chat/completions``, ``/embeddings``);
    ``deployment``: on Azure, the deployment every line names as its ``model``.
    ``provider`` is what sends them (:class:`~.provider.BatchProvider`); not compared.
    """

    label: str
    model: str
    base_url: str
    endpoint: str = "/v1/chat/completions"
    deployment: str | None = None
    provider: Any = field(default=None, compare=False, hash=False, repr=False)


def line_key(group: Group, body: Mapping[str, Any]) -> str:
    """The line's ``custom_id``: a digest of where it goes and its body. The same request
    gets the same key in a rerun, which is how a resumed run finds it in a saved batch."""
    text = json.dumps([group.base_url, group.endpoint, body], sort_keys=True, ensure_ascii=False)
    return "am-" + hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


@dataclass
class Line:
    """One request of the batch run and the callers waiting for its reply."""

    key: str
    group: Group
    body: dict[str, Any]
    max_attempts: int
    waiters: list[asyncio.Future[dict[str, Any]]] = field(default_factory=list)
    samples: set[int] = field(default_factory=set)
    attempts: int = 0
    last_problem: str = ""

    @property
    def wanted(self) -> bool:
        """Whether anyone still waits for it (a sample stopped by a halt does not)."""
        return any(not waiter.done() for waiter in self.waiters)

    def resolve(self, reply: dict[str, Any]) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_result(reply)

    def fail(self, error: BaseException) -> None:
        for waiter in self.waiters:
            if not waiter.done():
                waiter.set_exception(error)


class BatchLines:
    """Lines waiting for the next round, and lines out in a batch (see the module doc)."""

    def __init__(self) -> None:
        self.waiting: dict[str, Line] = {}
        self.out: dict[str, Line] = {}
        self.submitted = 0  # calls of submit(), ever: how the rounds see the run settle
        self.grew = asyncio.Event()
        self.refused: dict[Group, str] = {}  # groups whose endpoint refused a batch: why

    async def submit(
        self, group: Group, body: dict[str, Any], *, sample: int | None, max_attempts: int
    ) -> dict[str, Any]:
        """Wait for the reply to ``body`` (the response body of a successful line)."""
        if group in self.refused:
            raise BatchRefusedError(self.refused[group])
        key = line_key(group, body)
        line = self.out.get(key) or self.waiting.get(key)
        if line is None:
            line = Line(key, group, body, max_attempts)
            self.waiting[key] = line
        waiter: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        line.waiters.append(waiter)
        if sample is not None:
            line.samples.add(sample)
        self.submitted += 1
        self.grew.set()
        return await waiter

    def take(self) -> list[Line]:
        """The lines of the next round (those still wanted), now out."""
        lines = [line for line in self.waiting.values() if line.wanted]
        self.waiting.clear()
        for line in lines:
            self.out[line.key] = line
        return lines

    def answered(self, line: Line, reply: dict[str, Any]) -> None:
        self.out.pop(line.key, None)
        line.resolve(reply)

    def failed(self, line: Line, problem: str) -> bool:
        """A failed attempt of ``line``: back for the next round, or, with no attempt
        left, failed for its callers. Returns whether it goes again."""
        self.out.pop(line.key, None)
        line.attempts += 1
        line.last_problem = problem
        if line.attempts < line.max_attempts and line.wanted:
            self.waiting[line.key] = line
            self.grew.set()
            return True
        attempts = f"{line.attempts} attempt{'s' if line.attempts != 1 else ''}"
        line.fail(
            BatchLineError(f"{line.group.label}: batch line failed after {attempts}: {problem}")
        )
        return False

    def refuse(self, group: Group, lines: list[Line], reason: str) -> None:
        """The endpoint refused ``group``'s batch: its lines, and any later request of
        the group, are sent live by their callers (:class:`BatchRefusedError`)."""
        self.refused[group] = reason
        for line in lines:
            self.out.pop(line.key, None)
            line.fail(BatchRefusedError(reason))

    def abandon(self, error: BaseException) -> None:
        """Fail every line, waiting or out (the run stopped)."""
        for line in [*self.waiting.values(), *self.out.values()]:
            line.fail(error)
        self.waiting.clear()
        self.out.clear()

    async def settled(self, quiet: float, in_flight: InFlight | None = None) -> bool:
        """Return once lines wait and the run has settled (:mod:`.settling`): True as
        soon as every sample of ``in_flight`` is parked on lines; False once, short of
        that, nothing new was submitted for ``quiet`` seconds."""
        while True:
            if not self.waiting:
                self.grew.clear()
                await self.grew.wait()
            parked_now = await self._quiet(quiet, in_flight)
            if any(line.wanted for line in self.waiting.values()):
                return parked_now
            self.waiting = {k: v for k, v in self.waiting.items() if v.wanted}

    async def _quiet(self, quiet: float, in_flight: InFlight | None) -> bool:
        """Wait until every sample in flight is parked (True), or nothing new was
        submitted for ``quiet`` seconds (False)."""
        loop = asyncio.get_running_loop()
        seen, quiet_from, turn = self.submitted, loop.time(), 0
        while True:
            turn += 1
            looked = time.perf_counter()
            settle = self._settle(in_flight)
            if settle is Settle.PARKED:
                return True
            # Looking walks the samples' tasks: it takes at most a tenth of the wait.
            look_again = max(_LOOK_AGAIN_S, 10 * (time.perf_counter() - looked))
            if self.submitted != seen:
                seen, quiet_from = self.submitted, loop.time()
            left = quiet_from + quiet - loop.time()
            if turn <= 20 or (settle is Settle.RUNNING and left > 0):
                # Every task that can run reaches its next wait (20 turns of the loop at
                # least: a straggler a few steps behind), then look again.
                await asyncio.sleep(0)
            elif left > 0:
                await asyncio.sleep(min(left, look_again))
            else:
                return False

    def _settle(self, in_flight: InFlight | None) -> Settle:
        samples = in_flight() if in_flight is not None else None
        if samples is None:
            return Settle.ELSEWHERE
        lines = [*self.waiting.values(), *self.out.values()]
        return parked(samples, [waiter for line in lines for waiter in line.waiters])
