"""``--batch``: the CLI's face of batch mode (docs/batch.md).

The options (declared in :mod:`~langchain_answer_metrics.cli.option_groups`), what the
runner is given for them, the progress line while batches run,
``--batch-cancel``, and what each ending of a batch run exits with:

- 0 / 1 / 3 as any run, once every batch answered;
- 6 ``--batch-wait`` exceeded: the batches keep running at the provider; the same
  command picks them up (nothing is sent twice);
- 7 a batch ended ``failed``: the provider's reason is printed; what was scored is kept;
- 5 the budget (``--max-cost``) or ``--max-requests`` refused the next round;
- 130 Ctrl-C while waiting: the batches keep running; the same command resumes, or
  ``--batch-cancel`` cancels them.

The batches of a run are kept in ``--out`` itself, between its records, as soon as created
(``OUT.batches``, where an earlier version kept them, is still read).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_answer_metrics.cli.group_options import BatchOptions
from langchain_answer_metrics.judging.batch.rounds import RoundStatus

if TYPE_CHECKING:
    from langchain_answer_metrics.metrics.base import AnswerMetric
    from langchain_answer_metrics.run.results import RunStop
    from langchain_answer_metrics.run.spend import Pricing

__all__ = [
    "BATCH_EXIT_CODES",
    "EXIT_BATCH_FAILED",
    "EXIT_BATCH_WAIT",
    "batch_options",
    "batch_stop_code",
    "cancel_batches",
    "interrupted_note",
    "settle_batch_mode",
]

EXIT_BATCH_WAIT, EXIT_BATCH_FAILED = 6, 7
BATCH_EXIT_CODES = (
    " 6 --batch-wait exceeded (the batches keep running; rerun the same command to pick "
    "them up); 7 a batch failed at the provider (its reason is printed; rerun to retry)."
)


def _state_path(out: Path | None) -> Path | None:
    """Where the batches are kept: the ``--out`` records file itself; None without one
    (``--out`` a device)."""
    if out is None or (Path(out).exists() and not Path(out).is_file()):
        return None
    return Path(out)


def _show(status: RoundStatus) -> None:
    states: dict[str, int] = {}
    for batch in status.batches:
        states[batch.status] = states.get(batch.status, 0) + 1
    done = sum(batch.completed for batch in status.batches)
    failed = sum(batch.failed for batch in status.batches)
    shown = ", ".join(f"{count} {state}" for state, count in sorted(states.items()))
    print(
        f"batch round {status.round}: {shown}; {done}/{status.lines} lines done, "
        f"{failed} failed; {status.elapsed:.0f} s",
        file=sys.stderr,
    )


def batch_options(
    batch: BatchOptions, *, out: Path | None, quiet: bool, pricing: Pricing | None = None
) -> dict[str, Any]:
    """The ``RunOptions`` fields for ``batch`` (none without ``--batch``); ``pricing``
    (the run's) is told of the models whose batches an endpoint refused, now paid live."""
    if not batch.batch:
        return {}

    def status(status: RoundStatus) -> None:
        if pricing is not None and status.refused:
            pricing.pay_live(status.refused)
        if not quiet and status.batches:
            _show(status)

    return {
        "batch": True,
        "batch_embeddings": batch.batch_embeddings,
        "batch_poll_s": batch.batch_poll,
        "batch_wait": batch.batch_wait,
        "batch_min_requests": batch.batch_min_requests,
        "batch_keep_files": batch.batch_keep_files,
        "batch_state": _state_path(out),
        "on_batch_status": status,
    }


def batch_stop_code(stop: RunStop | None) -> int | None:
    """The exit code of a batch run's stop (None: not a batch stop)."""
    if stop is None:
        return None
    return {"batch_wait": EXIT_BATCH_WAIT, "batch_failed": EXIT_BATCH_FAILED}.get(stop.reason)


def interrupted_note(batch: BatchOptions, out: Path | None) -> str:
    """What Ctrl-C during a batch run leaves behind, and how to go on."""
    state = _state_path(out)
    if not batch.batch or state is None or not _has_batches(state):
        return ""
    return (
        f"; the batches keep running at the provider (listed in {state}): rerun the same "
        "command to pick them up, or add --batch-cancel to cancel them"
    )


def _has_batches(state: Path) -> bool:
    from langchain_answer_metrics.run.records.batches import batch_state_for

    return state.exists() and bool(batch_state_for(state).batches)


def cancel_batches(out: Path | None, metrics: Sequence[AnswerMetric]) -> int:
    """``--batch-cancel``: cancel this run's unfinished batches at the provider; exit 0."""
    from langchain_answer_metrics.run.runner import cancel_batches as cancel

    state = _state_path(out)
    for line in asyncio.run(cancel(metrics, state)) or [f"no running batch in {state}"]:
        print(f"--batch-cancel: {line}", file=sys.stderr)
    return 0


def settle_batch_mode(
    batch: BatchOptions,
    metrics: Sequence[AnswerMetric],
    groups: Sequence[tuple[tuple[str, ...], Iterable[Any]]],
) -> BatchOptions:
    """Before the run: refuse ``--batch`` as the run would, then, below
    ``--batch-min-requests`` expected requests (a dry run of the rows still to score in
    ``groups``: their metric keys and rows), say so and run live, so the spend is priced
    as the run goes. Returns the batch options the run goes with (decided here for every
    group of the run: ``batch_min_requests`` 0)."""
    if not batch.batch:
        return batch
    from langchain_answer_metrics.costs import estimate
    from langchain_answer_metrics.run.runner import check_batch

    asyncio.run(check_batch(metrics, embeddings=batch.batch_embeddings))
    minimum = batch.batch_min_requests
    if minimum <= 0:
        return batch
    requests = sum(
        estimate(
            [row.input for row in rows], [m for m in metrics if m.key in missing]
        ).total.requests
        for missing, rows in groups
    )
    if requests >= minimum:
        return replace(batch, batch_min_requests=0)
    print(
        f"--batch: about {requests} judge requests, fewer than --batch-min-requests "
        f"{minimum}: running live (--batch-min-requests 0 forces batch mode)",
        file=sys.stderr,
    )
    return replace(batch, batch=False, batch_min_requests=0)
