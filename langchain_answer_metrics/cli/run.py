"""One scoring run of ``evaluate`` or ``demo``, from its typed options
(:class:`~langchain_answer_metrics.cli.command_options.EvaluateOptions`) to an exit code;
the streaming of rows through the runner, which ``calibrate`` shares.

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

import contextlib
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TextIO

import langchain_answer_metrics.cli.batch as batch_mode
from langchain_answer_metrics.checkpoints import append_line, open_for_append
from langchain_answer_metrics.cli.command_options import (
    BatchOptions,
    EvaluateOptions,
    OutputOptions,
)
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
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.cli.limits import RunLimits, run_limits
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.out_lock import out_locked
from langchain_answer_metrics.cli.outcomes import gate, outcomes
from langchain_answer_metrics.cli.output.html_report import write_report
from langchain_answer_metrics.cli.output.printing import ProgressBar, for_terminal, print_summary
from langchain_answer_metrics.cli.output.spend_view import spend_lines, spend_of
from langchain_answer_metrics.cli.output.summary_json import write_summary_json
from langchain_answer_metrics.cli.plans import MetricPlan, MetricPlans, build_metrics
from langchain_answer_metrics.cli.preflight import PREFLIGHT, preflight
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
from langchain_answer_metrics.cli.run_checks import CheckedRun
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.run.records.identity import own_record
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
    "StreamSettings",
    "UsageError",
    "run_checked",
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
    return own_record(previous.get(row.id), row.id, row.fingerprint, row.earlier_fingerprints)


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
    *,
    out_path: Path | None,
    settings: StreamSettings,
    limits: RunLimits | None = None,
) -> int:
    """:func:`_stream` over rows held in lists (``calibrate``): each record is kept in
    ``records`` and appended to ``out`` (the file ``out_path``)."""

    def save(record: SampleRecord, results: Mapping[str, Any]) -> None:
        records[record.id] = record
        if out is not None and out_path is not None:
            _append(out, record_line(record), out_path)

    return _stream(
        [(missing, len(rows), rows) for missing, rows in groups.items()],
        plans,
        lambda row: _saved(previous, row),
        save,
        settings,
        limits,
    )


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


def _stream(
    groups: Sequence[tuple[tuple[str, ...], int, Iterable[DatasetRow]]],
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


def _append(out: TextIO, line: str, path: Path) -> None:
    """Write one record, flushed and fsynced (so Ctrl-C or a kill loses nothing scored); a
    full disk or a file-size limit is the user's to fix, not a crash."""
    try:
        append_line(out, line)
    except OSError as error:
        _cannot_append(error, path)


def _cannot_append(error: OSError, path: Path | None) -> NoReturn:
    raise UsageError(
        f"--out {path}: cannot write it ({error.strerror or error}); the samples "
        "written before are kept: fix that and rerun the same command to resume"
    ) from None


def _close(out: TextIO) -> None:
    # After a failed write the buffer still holds the line, and closing retries it: the
    # failure has been reported already.
    with contextlib.suppress(OSError):
        out.close()


def run_checked(options: EvaluateOptions, checked: CheckedRun, *, title: str) -> int:
    """Score ``options.data`` once :func:`~.run_checks.check_run` found nothing wrong with
    the options and data: plan the resume, stream, write, summarise, gate."""
    CTRL_C.starting_run()
    with out_locked(None if options.estimate else options.output.out):
        return _run_checked(options, checked, title=title)


def _run_checked(options: EvaluateOptions, checked: CheckedRun, *, title: str) -> int:
    assert options.data is not None
    out, rows = options.output.out, checked.rows
    plans = build_metrics(checked.names, metrics=options.metrics, judges=options.judges)
    CTRL_C.check()
    if options.batch.batch_cancel:
        return batch_mode.cancel_batches(out, [p.metric for p in plans])
    saved = SavedRecords.load(out, options.data)
    plan = plan_resume(
        rows,
        saved.lookup,
        {p.metric.key: p.signature for p in plans},
        keep_degraded=options.output.keep_degraded,
    )
    print(
        for_terminal(f"{title}: {plan.rows} samples, metrics: {', '.join(checked.keys)}"),
        file=sys.stderr,
    )
    if plan.pending < plan.rows:
        print(
            f"resuming: {plan.rows - plan.pending} samples already scored in {out}", file=sys.stderr
        )
    if options.estimate:  # sends no request
        groups = {m: plan.rows_of(rows, m) for m in plan.groups}
        return run_estimate(
            groups,
            plans,
            path=options.estimate_json,
            max_concurrency=options.limits.max_concurrency,
            batch_embeddings=options.batch.batch_embeddings,
        )
    # each judge answers once before a large run
    check_spent = preflight(plans, plan.pending, enabled=options.limits.preflight)
    CTRL_C.check()  # the last safe point before the first write
    try:
        saved.drop_torn_lines()  # a line cut short by a kill, so the file is JSON Lines again
    except OSError as error:
        raise UsageError(f"--out {out}: cannot write it ({error.strerror})") from None
    with contextlib.closing(RecordStore(out, saved)) as store:
        if check_spent:  # the check's requests are this run's too, in its spend and report
            store.add_spent({PREFLIGHT: Spent(check_spent)})
        return _run_and_report(options, checked, plan, plans, saved, store)


def _run_and_report(
    options: EvaluateOptions,
    checked: CheckedRun,
    plan: ResumePlan,
    plans: MetricPlans,
    saved: SavedRecords,
    store: RecordStore,
) -> int:
    """Score what ``plan`` lacks into ``store``, then summarise, report and gate."""
    rows = checked.rows
    pending = [(missing, plan.rows_of(rows, missing)) for missing in plan.groups]
    batch = batch_mode.settle_batch_mode(options.batch, [each.metric for each in plans], pending)
    limits = run_limits(options.limits, plans, batch=batch.batch, embeddings=batch.batch_embeddings)
    for check in _checks(store):  # sent before the samples: within --max-requests, --max-cost
        cost, sent = (limits.pricing or Pricing()).spent_on(check)
        limits.requests, limits.spent = limits.requests + sent, limits.spent + cost
    out, quiet = options.output.out, options.output.quiet
    settings = StreamSettings(
        max_concurrency=options.limits.max_concurrency,
        quiet=quiet,
        batch=batch_mode.batch_options(batch, out=out, quiet=quiet, pricing=limits.pricing),
    )
    groups = [(m, plan.sizes[n], plan.rows_of(rows, m)) for m, n in plan.groups.items()]
    try:
        _score_into(store, groups, plans, saved, settings, limits, write=bool(plan.pending))
    except KeyboardInterrupt:
        store.close_out()
        _say_interrupted(store.appended(), options.output.out, batch)
        return EXIT_INTERRUPTED
    finally:
        store.close_out()
    return _report(options, checked, plan, plans, store, limits)


def _checks(store: RecordStore) -> list[Mapping[str, Any]]:
    """What the judges' check spent before the samples (none when it did not run)."""
    return [row for row in store.spent() if PREFLIGHT in row]


def _score_into(
    store: RecordStore,
    groups: Sequence[tuple[tuple[str, ...], int, Iterable[DatasetRow]]],
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
            _cannot_append(error, out)
        store.add_spent(results)

    if out is not None and write:
        try:
            store.open()  # a line cut short by a killed run is ended first
        except OSError as error:
            raise UsageError(f"--out {out}: cannot write it ({error.strerror})") from None
    _stream(groups, plans, saved.lookup, save, settings, limits)
    CTRL_C.check()  # pressed as the last sample finished


def _say_interrupted(appended: int, out: Path | None, batch: BatchOptions) -> None:
    """What Ctrl-C kept (counted in the file: what is there is what is kept)."""
    kept = (
        f"{counted(appended, 'newly scored sample')} {'is' if appended == 1 else 'are'} saved "
        f"in {out}; rerun the same command to resume"
        if out is not None
        else "nothing was saved (pass --out FILE to keep results and resume)"
    )
    print(f"\ninterrupted: {kept}{batch_mode.interrupted_note(batch, out)}", file=sys.stderr)


def _report(
    options: EvaluateOptions,
    checked: CheckedRun,
    plan: ResumePlan,
    plans: MetricPlans,
    store: RecordStore,
    limits: RunLimits,
) -> int:
    """Summarise, write the report and the summary JSON, gate: the exit code."""
    assert options.data is not None
    output, keys, gates = options.output, checked.keys, checked.gates
    # A metric's own threshold (a judge declared in --config) unless --threshold gives one.
    own = {p.metric.key: p.metric.threshold for p in plans if p.metric.threshold is not None}
    thresholds = {**own, **checked.thresholds}
    final = store.in_order(checked.rows)  # the run's records, read back from disk at each call
    overviews = overview(final(), keys, thresholds)
    spend = spend_of(store.spent(), limits.pricing)
    print_summary(overviews, final(), gates, every_sample=options.demo)
    if not output.quiet:  # the summary table and errors only
        print("\n".join(spend_lines(spend, "spend (this run)")), file=sys.stderr)
    if output.report is not None:
        write_report(
            output.report,
            final,
            overviews,
            options.data,
            gates,
            limits.pricing,
            checks=_checks(store),
        )
    if output.out is not None:
        print(f"per-sample results: {output.out}", file=sys.stderr)
    scored, failed, degraded = outcomes(final(), keys)
    code = _exit_code(gate(overviews, gates), failed, limits, output)
    if output.summary_json is not None:
        write_summary_json(
            output.summary_json,
            data=options.data,
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


def _exit_code(gate_failed: bool, failed: int, limits: RunLimits, output: OutputOptions) -> int:
    """The run's exit code, saying why when it is not 0: a gate, a stop, metric errors."""
    code = EXIT_GATE if gate_failed else EXIT_OK
    if limits.stop is not None:
        resume = (
            f"rerun the same command to continue from {output.out}"
            if output.out is not None
            else "pass --out FILE to keep results and continue later"
        )
        print(
            f"answer-metrics: stopped early: {limits.stop.message}; "
            f"{counted(limits.not_run, 'sample')} not run ({resume})",
            file=sys.stderr,
        )
        code = code or batch_mode.batch_stop_code(limits.stop) or EXIT_STOPPED
    if code == EXIT_OK and failed and not output.allow_errors:
        print(
            f"answer-metrics: {counted(failed, 'sample')} {'has' if failed == 1 else 'have'} "
            "metric errors (--allow-errors to exit 0 anyway)",
            file=sys.stderr,
        )
        code = EXIT_ERRORS
    return CTRL_C.exit_code(code)  # pressed while the summary or the report was written
