"""A run in batch mode: the same :class:`~.engine.Run`, on batch copies of the metrics,
with the rounds (:mod:`~..judging.batch`) driving the judge requests.

    >>> rows = await BatchRun(samples, metrics, RunOptions(batch=True)).results()

Before any judge request: the metrics are copied onto batch stand-ins and each endpoint
is asked whether it has the Batch API (:mod:`.batch_panel`); then, when the run's requests
can be counted (a list of samples) and are fewer than ``batch_min_requests``, the run goes
live instead, saying so. In batch mode:

- the whole input is read ahead (``window``, default :data:`BATCH_WINDOW`), so the first
  round holds every sample's first requests;
- the budget and ``max_requests`` are checked before each round (``check_round``), against
  what the run spent so far (the batch lines answered, and what the members that run
  live, in a mixed panel, have spent as their replies came back) plus the round's
  estimate at batch prices; a round that would go past them is not sent, and the
  samples waiting for it are not run;
- the embedders' requests go out in the same rounds (``batch_embeddings=False``: live);
  an endpoint that refuses embeddings batches sends them live from then on, saying so,
  and they are priced live;
- a stop (budget, ``batch_wait`` exceeded, a batch that failed) halts the run: the
  samples done are kept (and checkpointed), the others are reported not run with the
  reason, and the batches stay at the provider and in the state file for a resume;
- the spend is priced at the batch price for the judges that went through batches.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import warnings
from collections import Counter
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, Sequence

from langchain_answer_metrics.core.result import TokenUsage
from langchain_answer_metrics.core.sample import SampleLike
from langchain_answer_metrics.judging.batch.lines import BatchLines, Group, Line
from langchain_answer_metrics.judging.batch.rounds import BatchRounds, BatchSettings
from langchain_answer_metrics.judging.scope import Halt
from langchain_answer_metrics.judging.token_estimate import estimate_tokens
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.run.batch_panel import BatchPanel
from langchain_answer_metrics.run.batch_watch import WatchedRun
from langchain_answer_metrics.run.engine import Run
from langchain_answer_metrics.run.options import RunOptions
from langchain_answer_metrics.run.records.batches import batch_state_for
from langchain_answer_metrics.run.results import (
    EvaluationResults,
    SampleResults,
    is_frame,
    run_stop,
)
from langchain_answer_metrics.run.spend import Pricing

__all__ = ["BATCH_WINDOW", "BatchRun", "batch_state_path", "cancel_batches", "check_batch"]

BATCH_WINDOW = 50_000
"""Samples read ahead in batch mode unless ``window`` says otherwise."""

# A reply's tokens before any has come back: a structured verdict or a few claims.
_FIRST_OUTPUT_TOKENS = 200

CountRequests = Callable[[Sequence[SampleLike], Sequence[AnswerMetric]], Awaitable[int]]
"""The requests a run of these samples would send (the dry-run estimate)."""


def batch_state_path(options: RunOptions) -> str | os.PathLike[str] | None:
    """Where the run's batches are kept: ``batch_state``, else in the checkpoint itself
    (its records stream: :mod:`~.records.batches`)."""
    if options.batch_state is not None:
        return options.batch_state
    return options.checkpoint


class BatchRun:
    """A run in batch mode (see the module doc); ``count_requests`` decides whether the
    run is large enough (the public functions pass the dry-run estimate)."""

    def __init__(
        self,
        samples: Iterable[SampleLike],
        metrics: Sequence[AnswerMetric],
        options: RunOptions,
        *,
        count_requests: CountRequests | None = None,
        live: Callable[[], Run] | None = None,
    ) -> None:
        self.samples = samples
        self.metrics = list(metrics)
        self.options = options
        self.count_requests = count_requests
        self.live = live or (lambda: Run(samples, metrics, options))
        self.lines = BatchLines()
        self.panel = BatchPanel(self.lines, embeddings=options.batch_embeddings)
        self.copies = self.panel.metrics(self.metrics)
        self.pricing = Pricing.of(self.metrics, prices=options.prices)
        self.rounds: BatchRounds | None = None
        self.run: WatchedRun | None = None

    async def _goes_live(self) -> bool:
        minimum = self.options.batch_min_requests
        samples = self.samples
        if minimum == 0 or self.count_requests is None or not isinstance(samples, Sequence):
            return False
        requests = await self.count_requests(samples, self.metrics)
        if requests >= minimum:
            return False
        warnings.warn(
            f"batch mode: about {requests} judge requests, fewer than batch_min_requests="
            f"{minimum}: running live (batch_min_requests=0 forces batch mode)",
            stacklevel=2,
        )
        return True

    async def stream(self) -> AsyncGenerator[SampleResults, None]:
        await self.panel.probe()  # refused here, before any judge request
        if await self._goes_live():
            run = self.live()
            self.pricing = run.pricing
            async for row in run.stream():
                yield row
            return
        options = self.options
        self._price()
        inner = dataclasses.replace(
            options, budget=None, max_requests=None, window=options.window or BATCH_WINDOW
        )
        self.run = run = WatchedRun(self.samples, self.copies, inner)
        run.pricing = self.pricing

        def stop(reason: str, message: str) -> None:
            if run.scope is not None:
                run.scope.stop(Halt(reason=reason, message=message, abort=True))

        self.rounds = rounds = BatchRounds(
            self.lines,
            batch_state_for(batch_state_path(options)),
            BatchSettings(
                poll_s=options.batch_poll_s,
                wait_s=options.batch_wait,  # type: ignore[arg-type]  # seconds once validated
                max_requests=options.batch_max_requests,
                max_bytes=options.batch_max_bytes,
                keep_files=options.batch_keep_files,
            ),
            stop=stop,
            check_round=self._check_round,
            on_status=options.on_batch_status,
            on_refused=self._refused,
            in_flight=run.in_flight,
        )
        driver = asyncio.get_running_loop().create_task(rounds.drive())
        try:
            async for row in run.stream():
                yield row
        finally:
            driver.cancel()
            await asyncio.gather(driver, return_exceptions=True)
        if run.scope is not None and run.scope.halt is None:
            _warn_unused(rounds)

    async def results(self) -> EvaluationResults:
        rows = [row async for row in self.stream()]
        return EvaluationResults(
            rows,
            inputs=self.samples if is_frame(self.samples) else None,
            stopped=run_stop(rows),
            pricing=self.pricing,
        )

    def _price(self) -> None:
        """The run's prices: the batch price for what goes through batches."""
        batched = [
            label for label, group in self.panel.batched.items() if group not in self.lines.refused
        ]
        self.pricing = Pricing.of(self.metrics, prices=self.options.prices, batch=batched)
        if self.run is not None:
            self.run.pricing = self.pricing

    def _refused(self, group: Group, reason: str) -> None:
        """An endpoint refused ``group``'s embeddings batch: live from now on, priced live."""
        warnings.warn(
            f"batch mode: {reason}; the embeddings of {group.label} are sent live from now "
            "on, at the live price (batch_embeddings=False / --no-batch-embeddings sends "
            "them live from the start)",
            stacklevel=2,
        )
        self._price()

    def _spent(self, batched: dict[str, Counter[str]]) -> tuple[float, float, int]:
        """USD and requests the run has spent so far (and the USD of it live): the batch
        lines answered, and what the members that run live have spent as their replies
        came back."""
        scope = self.run.scope if self.run is not None else None
        live = {
            label: usage
            for label, usage in (scope.spent if scope is not None else {}).items()
            if label not in self.panel.batched or self.panel.batched[label] in self.lines.refused
        }
        cost = sum(self.pricing.cost(label, _usage(t)) or 0.0 for label, t in batched.items())
        live_cost = sum(self.pricing.cost(label, usage) or 0.0 for label, usage in live.items())
        requests = sum(tally["requests"] for tally in batched.values())
        return cost + live_cost, live_cost, requests + sum(u.requests for u in live.values())

    def _check_round(self, lines: list[Line], spent: dict[str, Counter[str]]) -> str | None:
        """Why the round of ``lines`` must not be sent (budget, max_requests), or None."""
        budget, max_requests = self.options.budget, self.options.max_requests
        so_far, live_cost, requests_so_far = self._spent(spent)
        if max_requests is not None and requests_so_far + len(lines) > max_requests:
            return (
                f"max_requests {max_requests} reached: the next batch round of {len(lines)} "
                f"requests (after {requests_so_far} sent) was not submitted"
            )
        if budget is None:
            return None
        round_cost = sum(
            self.pricing.cost(line.group.label, _expected(line, spent)) or 0.0 for line in lines
        )
        if so_far + round_cost <= budget:
            return None
        return (
            f"budget ${budget:.4f} reached: the next batch round of {len(lines)} requests "
            f"(about ${round_cost:.4f} at batch prices, after ${so_far:.4f} spent, "
            f"${live_cost:.4f} of it live) was not submitted"
        )


def _warn_unused(rounds: BatchRounds) -> None:
    """Say which batches of an earlier run this complete run could not use (see
    :meth:`BatchRounds.unused`): they may still be running, and billed."""
    unused = rounds.unused()
    if unused:
        requests = sum(len(batch.custom_ids) for batch in unused)
        ids = ", ".join(batch.batch_id for batch in unused)
        warnings.warn(
            f"batch mode: {counted(len(unused), 'batch', 'batches')} of an earlier run "
            f"({ids}: {counted(requests, 'request')}) went unused: none of their requests "
            "is one this run sends (a judge's settings, such as its temperature, or a "
            "prompt differ from that run's), so this run sent its own. They may still be "
            "running, and billed, at the provider: --batch-cancel (cancel_batches in "
            "Python) cancels them",
            stacklevel=2,
        )


def _usage(tally: Counter[str]) -> TokenUsage:
    return TokenUsage(
        input_tokens=tally["input_tokens"],
        output_tokens=tally["output_tokens"],
        requests=tally["requests"],
    )


def _expected(line: Line, spent: dict[str, Counter[str]]) -> TokenUsage:
    """A line's expected usage: its prompt's estimated tokens in; out, the mean of the
    replies so far of its judge (else a typical structured reply), per choice. An
    embeddings line: its texts' tokens (or token ids) in, nothing out."""
    if line.group.endpoint.endswith("/embeddings"):
        inputs = line.body.get("input")
        flat = isinstance(inputs, list) and all(isinstance(item, int) for item in inputs)
        items = inputs if isinstance(inputs, list) and not flat else [inputs]
        tokens = sum(
            len(item) if isinstance(item, list) else estimate_tokens(str(item or ""))
            for item in items
        )
        return TokenUsage(input_tokens=tokens, requests=1)
    text = " ".join(
        str(message.get("content") or "") for message in line.body.get("messages") or []
    )
    tally = spent.get(line.group.label)
    per_reply = (
        tally["output_tokens"] / tally["requests"]
        if tally and tally["requests"]
        else _FIRST_OUTPUT_TOKENS
    )
    choices = int(line.body.get("n") or 1)
    tools = str(line.body.get("tools") or line.body.get("response_format") or "")
    return TokenUsage(
        input_tokens=estimate_tokens(text) + estimate_tokens(tools),
        output_tokens=round(per_reply * choices),
        requests=1,
    )


async def cancel_batches(
    metrics: Sequence[AnswerMetric], state: str | os.PathLike[str] | None
) -> list[str]:
    """Cancel the unfinished batches kept in ``state`` (a run's checkpoint or ``--out``,
    or the ``.batches`` side file of an earlier version), through the judges of
    ``metrics``; one line per batch saying what became of it."""
    saved = batch_state_for(state)
    panel = BatchPanel(BatchLines())
    panel.metrics(metrics)
    said = []
    for batch in saved.unfinished():
        group = panel.batched.get(batch.label)
        if group is None:
            said.append(
                f"{batch.batch_id}: model {batch.label} is not in this run; cancel it "
                "at the provider"
            )
            continue
        ended = await group.provider.cancel(batch.batch_id)
        saved.ended(batch.batch_id, ended.status, "cancelled on request")
        said.append(f"{batch.batch_id} {ended.status}")
    return said


async def check_batch(metrics: Sequence[AnswerMetric], *, embeddings: bool = True) -> None:
    """Refuse batch mode for ``metrics`` as a batch run would, before any judge request:
    no OpenAI model, or an endpoint without the Batch API (``BatchUnavailableError``);
    ``embeddings``: as ``batch_embeddings``."""
    panel = BatchPanel(BatchLines(), embeddings=embeddings)
    panel.metrics(metrics)
    await panel.probe()
