"""A planned run scored into its record store: the one write and resume path of
``evaluate``, ``demo`` and ``calibrate``.

The rows a resume plan says still lack a metric
(:func:`~langchain_answer_metrics.run.records.plan.plan_resume`) are read again from the
dataset, streamed through the runner
(:func:`~langchain_answer_metrics.cli.streaming.stream_rows`), and each record appended to
``--out`` as it arrives (:class:`~langchain_answer_metrics.cli.resume.RecordStore`: flushed
and fsynced, so a kill keeps every record written and the same command resumes). What
the command does with the records afterwards (a summary, a calibration) reads them back
from the store, in the rows' order:

    >>> with record_store(out, saved) as store:
    ...     if not score_plan(store, plan, rows, plans, saved, settings, limits):
    ...         return EXIT_INTERRUPTED   # Ctrl-C: what is saved has been said
    ...     for record in store.in_order(rows)(): ...
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_answer_metrics.checkpoints.judge_settings import judges_changed_notice
from langchain_answer_metrics.cli.group_options import BatchOptions
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.cli.limits import RunLimits
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.out_file import cannot_append
from langchain_answer_metrics.cli.output.printing import for_terminal
from langchain_answer_metrics.cli.plans import MetricPlans
from langchain_answer_metrics.cli.records import SampleRecord
from langchain_answer_metrics.cli.resume import RecordStore, ResumePlan, Rows, SavedRecords
from langchain_answer_metrics.cli.streaming import Group, StreamSettings, stream_rows
from langchain_answer_metrics.metrics.explain import counted

__all__ = ["record_store", "say_resuming", "score_plan"]


def say_resuming(plan: ResumePlan, plans: MetricPlans, out: Path | None) -> None:
    """What a resumed run says before any request: how many samples ``out`` already holds,
    and per metric the saved scores whose judges had other model ids or settings (scored
    again), with how to keep them."""
    if plan.pending < plan.rows:
        already = counted(plan.rows - plan.pending, "sample")
        print(f"resuming: {already} already scored in {out}", file=sys.stderr)
    for metric_plan in plans:
        if (key := metric_plan.metric.key) in plan.judged_otherwise:
            before = plan.saved_judges.get(key)
            changed = plan.judged_otherwise[key]
            notice = judges_changed_notice(key, changed, metric_plan.metric, before)
            print(for_terminal(notice), file=sys.stderr)


@contextlib.contextmanager
def record_store(out: Path | None, saved: SavedRecords) -> Iterator[RecordStore]:
    """The run's :class:`RecordStore` on ``out`` for the block, once the lines a killed run
    cut short are dropped from it (so the file is JSON Lines again); closed after."""
    CTRL_C.check()  # the last safe point before the first write
    try:
        saved.drop_torn_lines()
    except OSError as error:
        raise UsageError(f"--out {out}: cannot write it ({error.strerror})") from None
    with contextlib.closing(RecordStore(out, saved)) as store:
        yield store


def score_plan(
    store: RecordStore,
    plan: ResumePlan,
    rows: Rows,
    plans: MetricPlans,
    saved: SavedRecords,
    settings: StreamSettings,
    limits: RunLimits,
    *,
    batch: BatchOptions | None = None,
) -> bool:
    """Score what ``plan`` says each of ``rows`` lacks into ``store``, a record at a time.

    Returns:
        False when Ctrl-C stopped the run: what it kept, counted in ``--out``, is said
        (``batch``: and the batches left at the provider).
    """
    groups = [(m, plan.sizes[n], plan.rows_of(rows, m)) for m, n in plan.groups.items()]
    try:
        _score_into(store, groups, plans, saved, settings, limits, write=bool(plan.pending))
    except KeyboardInterrupt:
        store.close_out()
        _say_interrupted(store.appended(), store.out, batch or BatchOptions())
        return False
    finally:
        store.close_out()
    return True


def _score_into(
    store: RecordStore,
    groups: Sequence[Group],
    plans: MetricPlans,
    saved: SavedRecords,
    settings: StreamSettings,
    limits: RunLimits,
    *,
    write: bool,
) -> None:
    """Stream ``groups``, each record appended to ``store`` as it arrives (``write``:
    something is left to score, so ``--out`` is opened)."""
    out = store.out

    def save(record: SampleRecord, results: Mapping[str, Any]) -> None:
        try:
            store.append(record)
        except OSError as error:
            cannot_append(error, out)
        store.add_spent(results)

    if out is not None and write:
        try:
            store.open()  # a line cut short by a killed run is ended first
        except OSError as error:
            raise UsageError(f"--out {out}: cannot write it ({error.strerror})") from None
    stream_rows(groups, plans, saved.lookup, save, settings, limits)
    CTRL_C.check()  # pressed as the last sample finished


def _say_interrupted(appended: int, out: Path | None, batch: BatchOptions) -> None:
    """What Ctrl-C kept (counted in the file: what is there is what is kept)."""
    import langchain_answer_metrics.cli.batch as batch_mode

    kept = (
        f"{counted(appended, 'newly scored sample')} {'is' if appended == 1 else 'are'} saved "
        f"in {out}; rerun the same command to resume"
        if out is not None
        else "nothing was saved (pass --out FILE to keep results and resume)"
    )
    print(f"\ninterrupted: {kept}{batch_mode.interrupted_note(batch, out)}", file=sys.stderr)
