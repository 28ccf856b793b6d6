"""``--batch``: the CLI's face of batch mode (docs/batch.md).

The options, what the runner is given for them, the progress line while batches run,
``--batch-cancel``, and what each ending of a batch run exits with:

- 0 / 1 / 3 as any run, once every batch answered;
- 6 ``--batch-wait`` exceeded: the batches keep running at the provider; the same
  command picks them up (nothing is sent twice);
- 7 a batch ended ``failed``: the provider's reason is printed; what was scored is kept;
- 5 the budget (``--max-cost``) or ``--max-requests`` refused the next round;
- 130 Ctrl-C while waiting: the batches keep running; the same command resumes, or
  ``--batch-cancel`` cancels them.

The batches of a run are kept beside ``--out``, in ``OUT.batches``, as soon as created.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_answer_metrics.judging.batch.rounds import (
    DEFAULT_BATCH_MIN_REQUESTS,
    RoundStatus,
    seconds_of,
)

if TYPE_CHECKING:
    from langchain_answer_metrics.metrics.base import AnswerMetric
    from langchain_answer_metrics.run.results import RunStop
    from langchain_answer_metrics.run.spend import Pricing

__all__ = [
    "BATCH_EXIT_CODES",
    "EXIT_BATCH_FAILED",
    "EXIT_BATCH_WAIT",
    "add_batch_arguments",
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


def _duration(text: str) -> float:
    return seconds_of(text)


def _poll(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise ValueError(f"{text!r} is not a number of seconds > 0")
    return value


def add_batch_arguments(parser: argparse.ArgumentParser, argument_type: Any) -> None:
    """The ``batch mode`` options of ``evaluate`` (``argument_type`` wraps a parser of
    one value into argparse's, naming the flag in its error)."""
    group = parser.add_argument_group("batch mode (OpenAI Batch API: half the price)")
    group.add_argument(
        "--batch",
        action="store_true",
        help="send the OpenAI judges' requests through the Batch API: half the price, replies "
        "in minutes to hours; resumable with --out (docs/batch.md)",
    )
    group.add_argument(
        "--batch-poll",
        type=argument_type(_poll),
        default=30.0,
        metavar="SECONDS",
        help="seconds between polls of the batches (default 30)",
    )
    group.add_argument(
        "--batch-wait",
        type=argument_type(_duration),
        metavar="DURATION",
        help="wait at most this long (e.g. 90m, 2h); then exit 6, resumable",
    )
    group.add_argument(
        "--batch-min-requests",
        type=int,
        default=DEFAULT_BATCH_MIN_REQUESTS,
        metavar="N",
        help=f"run live when fewer judge requests are expected (default "
        f"{DEFAULT_BATCH_MIN_REQUESTS}; 0: always batch)",
    )
    group.add_argument(
        "--batch-cancel",
        action="store_true",
        help="cancel the batches of this --out at the provider, then exit",
    )
    group.add_argument(
        "--batch-keep-files",
        action="store_true",
        help="keep the uploaded input files at the provider (default: deleted once done)",
    )
    group.add_argument(
        "--no-batch-embeddings",
        dest="batch_embeddings",
        action="store_false",
        help="send the embedding requests live, at the live price (default: through the "
        "Batch API too, where the endpoint takes embeddings batches)",
    )


def _state_path(args: argparse.Namespace) -> Path | None:
    """``OUT.batches`` beside a results file; None without one (``--out`` a device)."""
    out = getattr(args, "out", None)
    if out is None or (Path(out).exists() and not Path(out).is_file()):
        return None
    return Path(f"{out}.batches")


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


def batch_options(args: argparse.Namespace, pricing: Pricing | None = None) -> dict[str, Any]:
    """The ``RunOptions`` fields for ``args`` (none without ``--batch``); ``pricing``
    (the run's) is told of the models whose batches an endpoint refused, now paid live."""
    if not getattr(args, "batch", False):
        return {}

    def status(status: RoundStatus) -> None:
        if pricing is not None and status.refused:
            pricing.pay_live(status.refused)
        if not args.quiet and status.batches:
            _show(status)

    return {
        "batch": True,
        "batch_embeddings": getattr(args, "batch_embeddings", True),
        "batch_poll_s": args.batch_poll,
        "batch_wait": args.batch_wait,
        "batch_min_requests": args.batch_min_requests,
        "batch_keep_files": args.batch_keep_files,
        "batch_state": _state_path(args),
        "on_batch_status": status,
    }


def batch_stop_code(stop: RunStop | None) -> int | None:
    """The exit code of a batch run's stop (None: not a batch stop)."""
    if stop is None:
        return None
    return {"batch_wait": EXIT_BATCH_WAIT, "batch_failed": EXIT_BATCH_FAILED}.get(stop.reason)


def interrupted_note(args: argparse.Namespace) -> str:
    """What Ctrl-C during a batch run leaves behind, and how to go on."""
    state = _state_path(args)
    if not getattr(args, "batch", False) or state is None or not state.exists():
        return ""
    return (
        f"; the batches keep running at the provider (listed in {state}): rerun the same "
        "command to pick them up, or add --batch-cancel to cancel them"
    )


def cancel_batches(args: argparse.Namespace, metrics: Sequence[AnswerMetric]) -> int:
    """``--batch-cancel``: cancel this run's unfinished batches at the provider; exit 0."""
    from langchain_answer_metrics.run.runner import cancel_batches as cancel

    state = _state_path(args)
    for line in asyncio.run(cancel(metrics, state)) or [f"no running batch in {state}"]:
        print(f"--batch-cancel: {line}", file=sys.stderr)
    return 0


def settle_batch_mode(
    args: argparse.Namespace,
    metrics: Sequence[AnswerMetric],
    groups: Sequence[tuple[tuple[str, ...], Iterable[Any]]],
) -> None:
    """Before the run: refuse ``--batch`` as the run would, then, below
    ``--batch-min-requests`` expected requests (a dry run of the rows still to score in
    ``groups``: their metric keys and rows), say so and run live (``args.batch`` off),
    so the spend is priced as the run goes."""
    if not getattr(args, "batch", False):
        return
    from langchain_answer_metrics.costs import estimate
    from langchain_answer_metrics.run.runner import check_batch

    asyncio.run(check_batch(metrics, embeddings=getattr(args, "batch_embeddings", True)))
    minimum = args.batch_min_requests
    if minimum <= 0:
        return
    requests = sum(
        estimate(
            [row.input for row in rows], [m for m in metrics if m.key in missing]
        ).total.requests
        for missing, rows in groups
    )
    args.batch_min_requests = 0  # decided here, for every group of the run
    if requests < minimum:
        args.batch = False
        print(
            f"--batch: about {requests} judge requests, fewer than --batch-min-requests "
            f"{minimum}: running live (--batch-min-requests 0 forces batch mode)",
            file=sys.stderr,
        )
