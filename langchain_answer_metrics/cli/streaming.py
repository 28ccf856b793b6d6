"""Dataset rows streamed through the runner, each saved as it arrives (``evaluate``,
``demo`` and ``calibrate`` share it).

A group is the metrics some rows lack (a resume scores only what is missing), its size
and its rows, read lazily: only the runner's window of rows is held at once.
:func:`stream_rows` builds the run's :class:`~langchain_answer_metrics.run.options.RunOptions`
from :class:`StreamSettings` and the limits left, and calls
:func:`langchain_answer_metrics.run.runner.stream_evaluate` once per group.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.cli.limits import RunLimits
from langchain_answer_metrics.cli.output.printing import ProgressBar
from langchain_answer_metrics.cli.plans import MetricPlan
from langchain_answer_metrics.cli.records import SampleRecord, sample_record
from langchain_answer_metrics.run.runner import Progress, RunOptions, stream_evaluate

__all__ = ["Group", "StreamSettings", "stream_rows"]

Group = tuple[tuple[str, ...], int, Iterable[DatasetRow]]
"""The metrics some rows lack, how many rows, and the rows (read lazily)."""


@dataclass(frozen=True, kw_only=True)
class StreamSettings:
    """How a CLI run streams its samples through the runner.

    Attributes:
        max_concurrency: model requests in flight (``--max-concurrency``).
        quiet: no progress bar (``--quiet``).
        batch: the runner's batch-mode options (``batch_mode.batch_options``; none: live).
    """

    max_concurrency: int
    quiet: bool = False
    batch: Mapping[str, Any] = field(default_factory=dict)


def stream_rows(
    groups: Sequence[Group],
    plans: Sequence[MetricPlan],
    previous: Callable[[DatasetRow], SampleRecord | None],
    save: Callable[[SampleRecord, Mapping[str, Any]], None],
    settings: StreamSettings,
    limits: RunLimits | None = None,
) -> int:
    """Stream every group (the metrics it lacks, its size, its rows, read lazily) through
    the runner, saving each row as it arrives. Rows the run stopped before (under
    ``limits``) are counted there, not saved.

    Returns how many rows were scored; raises KeyboardInterrupt on Ctrl-C after the rows
    scored so far are saved (Ctrl-C lands only between two records or while the run waits
    for the models: :mod:`~langchain_answer_metrics.cli.interrupts`).
    """
    signatures = {plan.metric.key: plan.signature for plan in plans}
    bar = ProgressBar(sum(size for _, size, _ in groups), enabled=not settings.quiet)
    limits = limits or RunLimits()
    written = 0
    try:
        for missing, size, rows in groups:
            if limits.stop is not None:  # a limit was reached in an earlier group
                limits.not_run += size
                continue
            offset = written

            def progress(state: Progress, offset: int = offset) -> None:
                bar(state.model_copy(update={"done": state.done + offset}))

            # The rows the runner has read and not yet answered for (its window), by
            # position: the rest are still in the file.
            started: dict[int, DatasetRow] = {}

            def samples(
                rows: Iterable[DatasetRow] = rows, started: dict[int, DatasetRow] = started
            ) -> Iterator[Any]:
                for index, row in enumerate(rows):
                    started[index] = row
                    yield row.input  # the sample, or what its metrics refuse (DatasetRow.input)

            options = RunOptions(
                max_concurrency=settings.max_concurrency,
                on_progress=progress,
                **limits.left(),
                **settings.batch,
            )
            stream = stream_evaluate(
                list(samples()) if options.batch else samples(),  # batch: counted, read ahead
                [plan.metric for plan in plans if plan.metric.key in missing],
                **vars(options),
            )
            try:
                for result in stream:
                    row = started.pop(result.index)
                    if result.not_run:
                        limits.skipped(result)
                        continue
                    limits.spent_on(result)
                    record = sample_record(row, result.results, signatures, previous(row))
                    save(record, result.results)
                    written += 1
                    CTRL_C.check()  # between two records: a safe point to stop at
            except BaseException:
                # Stop the rest of the run now, in this thread, whatever went wrong: left
                # to the garbage collector, the stream would be closed at interpreter exit.
                with contextlib.suppress(Exception):
                    _close_stream(stream)
                raise
            _close_stream(stream)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(written) from None
    finally:
        bar.close()
    return written


def _close_stream(stream: Iterator[Any]) -> None:
    close = getattr(stream, "close", None)  # a generator: closing it stops its work
    if close is not None:
        close()
