"""The rounds of a batch run: send what is waiting, wait for it, resolve it, again.

A round starts when the run has settled (:meth:`~.lines.BatchLines.settled`): every
sample in flight is waiting for a line, so everything ready goes out together and a run
needs as many rounds as its deepest chain of dependent steps. Then, per round:

1. each line is looked up in the run's saved batches (:mod:`.state`): one still running
   is waited for, one that answered it resolves it; only the others are new;
2. the budget check (``check_round``) sees the new lines before anything is sent;
3. new lines are split per group (one model at one endpoint) and limits (requests and
   bytes per file), uploaded, and each batch is kept in the state once created;
4. every batch of the round is polled every ``poll_s`` seconds (the whole wait bounded
   by ``wait_s``), then its output and error files are read: a line that answered
   resolves its callers; a failed one (an ``error`` object, a non-200 response, or no
   line at all in an expired or cancelled batch) goes back for the next round within
   its attempts (:meth:`~.lines.BatchLines.failed`). A batch that ends ``failed`` stops
   the run with the provider's reason. The input file is deleted once its batch ended
   (``keep_files`` keeps it).

A stop (budget, wait exceeded, failed batch, or the Files or Batches API itself failing)
is handed to ``stop(reason, message)``, and no line is left waiting;
the batches already created stay at the provider and in the state, so the same command
resumes them.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from langchain_answer_metrics.core.redaction import redact
from langchain_answer_metrics.judging.batch.lines import (
    BatchLineError,
    BatchLines,
    BatchRefusedError,
    Group,
    Line,
)
from langchain_answer_metrics.judging.batch.provider import LineOutcome, ProviderBatch
from langchain_answer_metrics.judging.batch.settling import InFlight
from langchain_answer_metrics.judging.batch.state import BatchState, SavedBatch

__all__ = ["BatchRounds", "BatchSettings", "BatchStop", "RoundStatus", "seconds_of"]

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def seconds_of(value: float | str) -> float:
    """Seconds in ``value``: a number, or a duration such as ``"90s"``, ``"30m"``, ``"2h"``.

    Raises:
        ValueError: not a positive duration.

    Example:
        >>> seconds_of("2h")
        7200.0
    """
    text = str(value).strip().lower()
    unit = _UNITS.get(text[-1:]) if text else None
    try:
        seconds = float(text[:-1]) * unit if unit else float(text)
    except ValueError:
        raise ValueError(f"not a duration: {value!r} (seconds, or e.g. 90m, 2h)") from None
    if not seconds > 0:
        raise ValueError(f"a duration must be positive, got {value!r}")
    return seconds


# Smaller runs gain too little from waiting: they run live (batch_min_requests).
DEFAULT_BATCH_MIN_REQUESTS = 100
OPENAI_MAX_REQUESTS = 50_000
OPENAI_MAX_BYTES = 200 * 1024 * 1024


@dataclass(frozen=True)
class BatchSettings:
    """How a batch run goes (the run options ``batch_*``)."""

    poll_s: float = 30.0
    wait_s: float | None = None
    max_requests: int = OPENAI_MAX_REQUESTS
    max_bytes: int = OPENAI_MAX_BYTES
    keep_files: bool = False
    quiet_s: float = 0.25
    """The bounded wait for a straggler, when a sample in flight waits on something the
    rounds cannot see through (:mod:`.settling`): a round goes once nothing new was
    asked for this long. Not a run option: a round goes at once when every sample
    waits on a line, and longer only delays a round that has a straggler still out."""


@dataclass
class RoundStatus:
    """What a poll found: for progress reports."""

    round: int
    batches: list[ProviderBatch]
    elapsed: float
    lines: int
    refused: dict[str, str] = field(default_factory=dict)
    """Labels whose endpoint refused their (embeddings) batches, now sent live: why."""


class BatchStop(Exception):
    """Why the rounds stopped the run."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


CheckRound = Callable[[list[Line], dict[str, Counter[str]]], "str | None"]


@dataclass
class BatchRounds:
    """Drives the rounds of one run (see the module doc)."""

    lines: BatchLines
    state: BatchState
    settings: BatchSettings
    stop: Callable[[str, str], None]
    check_round: CheckRound | None = None
    on_status: Callable[[RoundStatus], None] | None = None
    on_refused: Callable[[Group, str], None] | None = None
    in_flight: InFlight | None = None
    round: int = 0
    created: list[str] = field(default_factory=list)
    waited: set[str] = field(default_factory=set)
    """Saved batches (of an earlier run) this run waited for."""
    spent: dict[str, Counter[str]] = field(default_factory=dict)
    _outcomes: dict[str, dict[str, LineOutcome]] = field(default_factory=dict)
    _started: float = field(default_factory=time.monotonic)

    async def drive(self) -> None:
        """Run rounds until cancelled (the run ended) or stopped."""
        try:
            while True:
                await self.lines.settled(self.settings.quiet_s, self.in_flight)
                lines = self.lines.take()
                if lines:
                    await self.run_round(lines)
        except BatchStop as stop:
            await self._stopped(stop)
        except Exception as error:  # the provider's API failed: stop, never leave lines waiting
            detail = redact(f"{type(error).__name__}: {error}")
            await self._stopped(BatchStop("batch_failed", f"the Batch API failed: {detail}"))

    async def _stopped(self, stop: BatchStop) -> None:
        self.stop(stop.reason, stop.message)
        for _ in range(5):  # let the halt cancel the samples waiting
            await asyncio.sleep(0)
        self.lines.abandon(BatchLineError(stop.message))

    async def run_round(self, lines: list[Line]) -> None:
        self.round += 1
        watched: dict[str, list[Line]] = {}
        new: list[Line] = []
        for line in lines:
            saved = await self._saved_answer(line)
            if isinstance(saved, str):
                watched.setdefault(saved, []).append(line)
            elif saved is None:
                new.append(line)
        if new and self.check_round is not None:
            refusal = self.check_round(new, self.spent)
            if refusal:
                raise BatchStop("budget", refusal)
        for group, chunk in self._chunks(new):
            if group in self.lines.refused:  # refused earlier this round: live
                self.lines.refuse(group, chunk, self.lines.refused[group])
                continue
            batch_id = await self._send(group, chunk)
            if batch_id is not None:
                watched[batch_id] = chunk
        await self._wait(watched)

    def unused(self) -> list[SavedBatch]:
        """Saved batches of an earlier run, not known to have ended, that this run
        neither created nor waited for: none of their lines is a request it sends."""
        mine = {*self.created, *self.waited}
        return [batch for batch in self.state.unfinished() if batch.batch_id not in mine]

    async def _saved_answer(self, line: Line) -> str | bool | None:
        """A saved batch for ``line``: its id if it may still answer (not ended); True if
        one answered it (resolved now); None: it must go out."""
        for saved in reversed(self.state.saved_for(line.key)):
            if saved.status not in ("completed", "expired", "cancelled", "failed"):
                self.waited.add(saved.batch_id)
                return saved.batch_id
            outcome = (await self._read(saved, line.group)).get(line.key)
            if outcome is not None and outcome.reply is not None:
                self._answered(line, outcome.reply)
                return True
            break  # it failed there: the newest attempt decides
        return None

    def _chunks(self, lines: list[Line]) -> Iterator[tuple[Group, list[Line]]]:
        by_group: dict[Group, list[Line]] = {}
        for line in lines:
            by_group.setdefault(line.group, []).append(line)
        for group, members in by_group.items():
            chunk: list[Line] = []
            size = 0
            for line in members:
                length = len(_encoded(line)) + 1
                if chunk and (
                    len(chunk) >= self.settings.max_requests
                    or size + length > self.settings.max_bytes
                ):
                    yield group, chunk
                    chunk, size = [], 0
                chunk.append(line)
                size += length
            if chunk:
                yield group, chunk

    async def _send(self, group: Group, chunk: list[Line]) -> str | None:
        """The id of the batch created for ``chunk``; None if the endpoint refused a
        batch of this kind (embeddings): the lines go live (:meth:`BatchLines.refuse`)."""
        data = b"".join(_encoded(line) + b"\n" for line in chunk)
        provider = group.provider
        file_id = await provider.upload(data, f"answer-metrics-round-{self.round}.jsonl")
        metadata = {"answer_metrics_round": str(self.round), "judge": group.label[:64]}
        try:
            batch_id = await provider.create(file_id, group.endpoint, metadata)
        except BatchRefusedError as refused:
            await provider.delete(file_id)
            self.lines.refuse(group, chunk, str(refused))
            if self.on_refused is not None:
                self.on_refused(group, str(refused))
            if self.on_status is not None:
                elapsed = time.monotonic() - self._started
                self.on_status(RoundStatus(self.round, [], elapsed, 0, self._refused()))
            return None
        self.created.append(batch_id)
        self.state.created(
            SavedBatch(
                batch_id=batch_id,
                input_file_id=file_id,
                label=group.label,
                model=group.model,
                base_url=group.base_url,
                endpoint=group.endpoint,
                round=self.round,
                custom_ids=[line.key for line in chunk],
                samples={line.key: sorted(line.samples) for line in chunk if line.samples},
            )
        )
        return batch_id

    def _refused(self) -> dict[str, str]:
        return {group.label: why for group, why in self.lines.refused.items()}

    async def _wait(self, watched: dict[str, list[Line]]) -> None:
        pending = dict(watched)
        total = sum(len(lines) for lines in watched.values())
        while pending:
            seen: list[ProviderBatch] = []
            for batch_id, lines in list(pending.items()):
                info = await lines[0].group.provider.retrieve(batch_id)
                seen.append(info)
                if info.ended:
                    del pending[batch_id]
                    await self._finish(info, lines)
            elapsed = time.monotonic() - self._started
            if self.on_status is not None:
                self.on_status(RoundStatus(self.round, seen, elapsed, total, self._refused()))
            if not pending:
                return
            wait_s = self.settings.wait_s
            if wait_s is not None and elapsed + self.settings.poll_s > wait_s:
                ids = ", ".join(pending)
                raise BatchStop(
                    "batch_wait",
                    f"batch wait of {wait_s:g} s exceeded with batches still running "
                    f"({ids}); they continue at the provider: rerun the same command to "
                    "pick them up",
                )
            await asyncio.sleep(self.settings.poll_s)

    async def _finish(self, info: ProviderBatch, lines: list[Line]) -> None:
        saved = self.state.batches.get(info.id)
        self.state.ended(info.id, info.status, info.reason)
        if info.status == "failed":
            label = lines[0].group.label
            raise BatchStop(
                "batch_failed",
                f"batch {info.id} of judge {label} failed at the provider: "
                f"{info.reason or 'no reason given'}",
            )
        group = lines[0].group
        outcomes = await self._read(saved, group) if saved else {}
        if saved is not None and not self.settings.keep_files:
            # Before the lines resolve: the run may end as soon as they do.
            await group.provider.delete(saved.input_file_id)
        for line in lines:
            outcome = outcomes.get(line.key)
            if outcome is not None and outcome.reply is not None:
                self._answered(line, outcome.reply)
            else:
                problem = outcome.problem if outcome else f"not run (the batch {info.status})"
                self.lines.failed(line, problem)

    async def _read(self, saved: SavedBatch, group: Group) -> dict[str, LineOutcome]:
        """The output and error lines of an ended batch, read once."""
        if saved.batch_id not in self._outcomes:
            info = await group.provider.retrieve(saved.batch_id)
            outcomes = await group.provider.outcomes(info.error_file_id)
            outcomes.update(await group.provider.outcomes(info.output_file_id))
            self._outcomes[saved.batch_id] = outcomes
        return self._outcomes[saved.batch_id]

    def _answered(self, line: Line, reply: dict[str, object]) -> None:
        usage = reply.get("usage")
        tally = self.spent.setdefault(line.group.label, Counter())
        if isinstance(usage, dict):
            tally["input_tokens"] += int(usage.get("prompt_tokens") or 0)
            tally["output_tokens"] += int(usage.get("completion_tokens") or 0)
        tally["requests"] += 1
        self.lines.answered(line, dict(reply))


def _encoded(line: Line) -> bytes:
    record = {"custom_id": line.key, "method": "POST", "url": line.group.endpoint}
    return json.dumps({**record, "body": line.body}, ensure_ascii=False).encode("utf-8")
