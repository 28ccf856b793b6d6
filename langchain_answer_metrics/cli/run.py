"""One run of the ``answer-metrics`` command, from parsed options to an exit code.

The metrics and their models are built from the options
(:mod:`langchain_answer_metrics.cli.plans`), the rows still to score are
planned against ``--out`` (resume), the samples are streamed through
:func:`langchain_answer_metrics.run.runner.stream_evaluate`, each row is appended to ``--out``
as it arrives, then the summary is printed, ``--report`` written and ``--fail-under``
applied. Rows are read from the dataset as they are needed, and records read back from
``--out`` (:mod:`langchain_answer_metrics.cli.resume`): memory stays flat however many
rows the dataset has. Scores come from the metrics, statistics from
:mod:`langchain_answer_metrics.run.summary` (through :mod:`langchain_answer_metrics.cli.records`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

import langchain_answer_metrics.cli.batch as batch_mode
from langchain_answer_metrics.checkpoints import append_line, open_for_append
from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.cli.estimate import run_estimate
from langchain_answer_metrics.cli.exits import (
    EXIT_ERRORS,
    EXIT_GATE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STOPPED,
    EXIT_USAGE,
)
from langchain_answer_metrics.cli.html_report import write_report
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.cli.limits import RunLimits, run_limits
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.out_lock import out_locked
from langchain_answer_metrics.cli.outcomes import gate, outcomes
from langchain_answer_metrics.cli.plans import MetricPlan, MetricPlans, build_metrics
from langchain_answer_metrics.cli.preflight import PREFLIGHT, preflight
from langchain_answer_metrics.cli.printing import ProgressBar, for_terminal, print_summary
from langchain_answer_metrics.cli.records import (
    RECORD_STARTS,
    SampleRecord,
    overview,
    record_line,
    sample_record,
)
from langchain_answer_metrics.cli.resume import (
    RecordStore,
    ResumePlan,
    SavedRecords,
    Spent,
    plan_resume,
)
from langchain_answer_metrics.cli.run_checks import (
    CheckedRun,
    check_run,
)
from langchain_answer_metrics.cli.spend_view import spend_lines, spend_of
from langchain_answer_metrics.cli.summary_json import write_summary_json
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.run.records.plan import still_to_score
from langchain_answer_metrics.run.runner import Progress, RunOptions, stream_evaluate
from langchain_answer_metrics.run.spend import Pricing

__all__ = [
    "EXIT_ERRORS",
    "EXIT_GATE",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_STOPPED",
    "EXIT_USAGE",
    "UsageError",
    "run",
]


# --------------------------------------------------------------------------- the run


def _open_out(path: Path) -> TextIO:
    try:
        # A line cut short by a killed run is ended, so it cannot swallow the next one.
        return open_for_append(path, ours=RECORD_STARTS)  # type: ignore[return-value]
    except OSError as error:
        raise UsageError(f"--out {path}: cannot write it ({error.strerror})") from None


def _previous_results(out: Path | None, data: Path) -> dict[str, SampleRecord]:
    """The records already in ``--out``, refusing a file that is not a results file."""
    return SavedRecords.load(out, data).records()


def _saved(previous: Mapping[str, SampleRecord], row: DatasetRow) -> SampleRecord | None:
    """The saved record of ``row``, unless the row's text changed since."""
    known = previous.get(row.id)
    return known if known is not None and known.fingerprint == row.fingerprint else None


def _plan_resume(
    rows: Sequence[DatasetRow],
    previous: Mapping[str, SampleRecord],
    signatures: Mapping[str, str],
    *,
    keep_degraded: bool = False,
) -> dict[tuple[str, ...], list[DatasetRow]]:
    """The rows still to score, grouped by the metrics each one lacks.

    A resumed row with one metric already scored is not scored again for it. Usually
    there is a single group: every metric for the rows not yet in ``--out``. A score
    from which a judge was excluded (a transient failure) is redone unless
    ``keep_degraded``.
    """
    groups: dict[tuple[str, ...], list[DatasetRow]] = {}
    for row in rows:
        saved = _saved(previous, row)
        missing = still_to_score(saved, row.fingerprint, signatures, keep_degraded=keep_degraded)
        if missing:
            groups.setdefault(missing, []).append(row)
    return groups


def _score(
    groups: Mapping[tuple[str, ...], Sequence[DatasetRow]],
    plans: Sequence[MetricPlan],
    previous: Mapping[str, SampleRecord],
    records: dict[str, SampleRecord],
    out: TextIO | None,
    args: argparse.Namespace,
    spent: list[Mapping[str, Any]] | None = None,
    limits: RunLimits | None = None,
) -> int:
    """:func:`_stream` over rows held in lists (``calibrate``): each record is kept in
    ``records``, appended to ``out`` and its outcomes to ``spent``."""

    def save(record: SampleRecord, results: Mapping[str, Any]) -> None:
        records[record.id] = record
        if spent is not None:
            spent.append(results)
        if out is not None:
            _append(out, record_line(record), args.out)

    return _stream(
        [(missing, len(rows), rows) for missing, rows in groups.items()],
        plans,
        lambda row: _saved(previous, row),
        save,
        args,
        limits,
    )


def _stream(
    groups: Sequence[tuple[tuple[str, ...], int, Iterable[DatasetRow]]],
    plans: Sequence[MetricPlan],
    previous: Callable[[DatasetRow], SampleRecord | None],
    save: Callable[[SampleRecord, Mapping[str, Any]], None],
    args: argparse.Namespace,
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
    bar = ProgressBar(sum(size for _, size, _ in groups), enabled=not args.quiet)
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
                max_concurrency=args.max_concurrency,
                on_progress=progress,
                **limits.left(),
                **batch_mode.batch_options(args, limits.pricing),
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


def _append(out: TextIO, line: str, path: Path) -> None:
    """Write one record, flushed and fsynced (so Ctrl-C or a kill loses nothing scored); a
    full disk or a file-size limit is the user's to fix, not a crash."""
    try:
        append_line(out, line)
    except OSError as error:
        _cannot_append(error, path)


def _cannot_append(error: OSError, path: Path) -> NoReturn:
    raise UsageError(
        f"--out {path}: cannot write it ({error.strerror or error}); the samples "
        "written before are kept: fix that and rerun the same command to resume"
    ) from None


def _close(out: TextIO) -> None:
    # After a failed write the buffer still holds the line, and closing retries it: the
    # failure has been reported already.
    with contextlib.suppress(OSError):
        out.close()


def run(args: argparse.Namespace, data: Path, *, title: str, default_metrics: Sequence[str]) -> int:
    """Score ``data``: check, plan the resume, stream, write, summarise, gate."""
    CTRL_C.starting_run()
    return run_checked(args, data, check_run(args, data, default_metrics), title=title)


def run_checked(args: argparse.Namespace, data: Path, checked: CheckedRun, *, title: str) -> int:
    """:func:`run` once :func:`check_run` found nothing wrong with the options and data."""
    CTRL_C.starting_run()
    with out_locked(args):
        return _run_checked(args, data, checked, title=title)


def _run_checked(args: argparse.Namespace, data: Path, checked: CheckedRun, *, title: str) -> int:
    names, keys, rows = checked.names, checked.keys, checked.rows
    thresholds, gates = checked.thresholds, checked.gates
    plans = build_metrics(args, names)
    CTRL_C.check()
    if getattr(args, "batch_cancel", False):
        return batch_mode.cancel_batches(args, [p.metric for p in plans])
    # A metric's own threshold (a judge declared in --config) unless --threshold gives one.
    own = {p.metric.key: p.metric.threshold for p in plans if p.metric.threshold is not None}
    thresholds = {**own, **thresholds}
    saved = SavedRecords.load(args.out, data)
    plan = plan_resume(
        rows,
        saved.lookup,
        {p.metric.key: p.signature for p in plans},
        keep_degraded=getattr(args, "keep_degraded", False),
    )
    print(
        for_terminal(f"{title}: {plan.rows} samples, metrics: {', '.join(keys)}"), file=sys.stderr
    )
    if plan.pending < plan.rows:
        print(
            f"resuming: {plan.rows - plan.pending} samples already scored in {args.out}",
            file=sys.stderr,
        )
    if getattr(args, "estimate", False):  # sends no request
        return run_estimate(args, {m: plan.rows_of(rows, m) for m in plan.groups}, plans)
    check_spent = preflight(args, plans, plan.pending)  # each judge answers once: a large run
    CTRL_C.check()  # the last safe point before the first write
    try:
        saved.drop_torn_lines()  # a line cut short by a kill, so the file is JSON Lines again
    except OSError as error:
        raise UsageError(f"--out {args.out}: cannot write it ({error.strerror})") from None
    with contextlib.closing(RecordStore(args.out, saved)) as store:
        if check_spent:  # the check's requests are this run's too, in its spend and report
            store.add_spent({PREFLIGHT: Spent(check_spent)})
        return _run_and_report(args, data, rows, plan, plans, saved, store, keys, thresholds, gates)


def _run_and_report(
    args: argparse.Namespace,
    data: Path,
    rows: Callable[[], Iterable[DatasetRow]],
    plan: ResumePlan,
    plans: MetricPlans,
    saved: SavedRecords,
    store: RecordStore,
    keys: Sequence[str],
    thresholds: Mapping[str, float],
    gates: Mapping[str, float],
) -> int:
    """Score what ``plan`` lacks into ``store``, then summarise, report and gate."""
    pending = [(missing, plan.rows_of(rows, missing)) for missing in plan.groups]
    batch_mode.settle_batch_mode(args, [each.metric for each in plans], pending)
    limits = run_limits(args, plans)
    checks = [row for row in store.spent() if PREFLIGHT in row]  # the judges' check
    for check in checks:  # sent before the samples: within --max-requests and --max-cost
        cost, sent = (limits.pricing or Pricing()).spent_on(check)
        limits.requests, limits.spent = limits.requests + sent, limits.spent + cost

    def save(record: SampleRecord, results: Mapping[str, Any]) -> None:
        try:
            store.append(record)
        except OSError as error:
            _cannot_append(error, args.out)
        store.add_spent(results)

    try:
        if args.out is not None and plan.pending:
            try:
                store.open()  # a line cut short by a killed run is ended first
            except OSError as error:
                raise UsageError(f"--out {args.out}: cannot write it ({error.strerror})") from None
        groups = [(m, plan.sizes[n], plan.rows_of(rows, m)) for m, n in plan.groups.items()]
        _stream(groups, plans, saved.lookup, save, args, limits)
        CTRL_C.check()  # pressed as the last sample finished
    except KeyboardInterrupt:
        store.close_out()
        appended = store.appended()  # counted in the file: what is there is what is kept
        kept = (
            f"{counted(appended, 'newly scored sample')} {'is' if appended == 1 else 'are'} saved "
            f"in {args.out}; rerun the same command to resume"
            if args.out is not None
            else "nothing was saved (pass --out FILE to keep results and resume)"
        )
        print(f"\ninterrupted: {kept}{batch_mode.interrupted_note(args)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        store.close_out()

    final = store.in_order(rows)  # the run's records, read back from disk at each call
    overviews = overview(final(), keys, thresholds)
    spend = spend_of(store.spent(), limits.pricing)
    print_summary(overviews, final(), gates, every_sample=args.command == "demo")
    if not args.quiet:  # the summary table and errors only
        print("\n".join(spend_lines(spend, "spend (this run)")), file=sys.stderr)
    if args.report is not None:
        write_report(args.report, final, overviews, data, gates, limits.pricing, checks=checks)
    if args.out is not None:
        print(f"per-sample results: {args.out}", file=sys.stderr)
    code = EXIT_GATE if gate(overviews, gates) else EXIT_OK
    scored, failed, degraded = outcomes(final(), keys)
    if limits.stop is not None:
        resume = (
            f"rerun the same command to continue from {args.out}"
            if args.out is not None
            else "pass --out FILE to keep results and continue later"
        )
        print(
            f"answer-metrics: stopped early: {limits.stop.message}; "
            f"{counted(limits.not_run, 'sample')} not run ({resume})",
            file=sys.stderr,
        )
        code = code or batch_mode.batch_stop_code(limits.stop) or EXIT_STOPPED
    if code == EXIT_OK and failed and not getattr(args, "allow_errors", False):
        print(
            f"answer-metrics: {counted(failed, 'sample')} {'has' if failed == 1 else 'have'} "
            "metric errors (--allow-errors to exit 0 anyway)",
            file=sys.stderr,
        )
        code = EXIT_ERRORS
    code = CTRL_C.exit_code(code)  # pressed while the summary or the report was written
    summary_json = getattr(args, "summary_json", None)
    if summary_json is not None:
        write_summary_json(
            summary_json,
            data=data,
            samples=plan.rows,
            scored=scored,
            failed=failed,
            degraded=degraded,
            limits=limits,
            overviews=overviews,
            spent=store.spent(),
            spend=spend,
            exit_code=code,
        )
    return code
