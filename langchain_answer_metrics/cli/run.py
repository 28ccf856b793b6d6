"""One run of the ``answer-metrics`` command, from parsed options to an exit code.

The metrics and their models are built from the options
(:mod:`langchain_answer_metrics.cli.plans`), the rows still to score are
planned against ``--out`` (resume), the samples are streamed through
:func:`langchain_answer_metrics.runner.stream_evaluate`, each row is appended to ``--out``
as it arrives, then the summary is printed, ``--report`` written and ``--fail-under``
applied. Scores come from the metrics, statistics from
:mod:`langchain_answer_metrics.summary` (through :mod:`langchain_answer_metrics.cli.records`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from langchain_answer_metrics.checkpoints import append_line, open_for_append
from langchain_answer_metrics.cli.datasets import DatasetRow, load_rows
from langchain_answer_metrics.cli.estimate import run_estimate
from langchain_answer_metrics.cli.html_report import write_report
from langchain_answer_metrics.cli.limits import RunLimits, run_limits
from langchain_answer_metrics.cli.options import LOADER_FLAGS, UsageError, column_mapping
from langchain_answer_metrics.cli.plans import (
    MetricPlan,
    build_metrics,
    chosen_metrics,
    result_keys,
)
from langchain_answer_metrics.cli.printing import ProgressBar, for_terminal, print_summary
from langchain_answer_metrics.cli.records import (
    MetricOverview,
    SampleRecord,
    overview,
    read_records,
    record_line,
    sample_record,
)
from langchain_answer_metrics.cli.spend_view import spend_lines, spend_of
from langchain_answer_metrics.cli.summary_json import write_summary_json
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.metrics.registry import METRICS
from langchain_answer_metrics.runner import Progress, stream_evaluate

EXIT_OK, EXIT_GATE, EXIT_USAGE, EXIT_ERRORS, EXIT_INTERNAL, EXIT_STOPPED = 0, 1, 2, 3, 4, 5
EXIT_INTERRUPTED = 130

__all__ = ["EXIT_ERRORS", "EXIT_GATE", "EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_OK",
           "EXIT_STOPPED", "EXIT_USAGE", "UsageError", "run"]  # fmt: skip


def _per_metric_values(
    values: Sequence[tuple[str | None, float]], keys: Sequence[str], flag: str
) -> dict[str, float]:
    """``--threshold 0.7 --threshold faithfulness=0.8`` -> a value per metric key.

    A value for one metric wins over a value for all; among equals, the last one wins.
    """
    result: dict[str, float] = {}
    for name, value in values:
        if name is None:
            result.update(dict.fromkeys(keys, value))
        elif name not in keys:
            raise UsageError(
                f"{flag} {name}={value}: {name!r} is not a chosen metric ({', '.join(keys)})"
            )
    result.update({name: value for name, value in values if name is not None})
    return result


# --------------------------------------------------------------------------- the run


def _check_writable(path: Path | None, flag: str) -> None:
    if path is not None and not path.expanduser().resolve().parent.is_dir():
        raise UsageError(f"{flag} {path}: the folder {path.parent} does not exist; create it")


def _open_out(path: Path) -> TextIO:
    try:
        # A line cut short by a killed run is ended, so it cannot swallow the next one.
        return open_for_append(path)  # type: ignore[return-value]
    except OSError as error:
        raise UsageError(f"--out {path}: cannot write it ({error.strerror})") from None


def _previous_results(out: Path | None, data: Path) -> dict[str, SampleRecord]:
    """The records already in ``--out``, refusing a file that is not a results file."""
    if out is None or (out.exists() and not out.is_file()):
        return {}  # a device or a pipe (--out /dev/stdout) holds no results to resume
    if out.exists() and data.exists() and out.resolve() == data.resolve():
        raise UsageError(f"--out {out} is the data file; write the results to another file")
    previous, unreadable = read_records(out)
    # One unreadable line is a run killed mid-write; more, and nothing else, is some other
    # file that appending results would spoil.
    if unreadable > 1 and not previous:
        raise UsageError(
            f"--out {out}: holds no answer-metrics results ({unreadable} other lines); "
            "choose a new file, or delete it to start over"
        )
    if unreadable:
        print(f"{out}: ignored {counted(unreadable, 'unreadable line')}", file=sys.stderr)
    return previous


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
        known = _saved(previous, row)
        missing = tuple(
            key
            for key in signatures
            if known is None
            or not known.scored(key, signatures[key], keep_degraded=keep_degraded)
        )
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
    """Stream every group through the runner, saving each row as it arrives (and adding
    its outcomes to ``spent``, for the run's spend). Rows the run stopped before (under
    ``limits``) are counted there, not saved.

    Returns how many rows were scored; raises KeyboardInterrupt on Ctrl-C after the rows
    scored so far are saved.
    """
    signatures = {plan.metric.key: plan.signature for plan in plans}
    bar = ProgressBar(sum(map(len, groups.values())), enabled=not args.quiet)
    limits = limits or RunLimits()
    written = 0
    try:
        for missing, rows in groups.items():
            if limits.stop is not None:  # a limit was reached in an earlier group
                limits.not_run += len(rows)
                continue
            offset = written

            def progress(state: Progress, offset: int = offset) -> None:
                bar(state.model_copy(update={"done": state.done + offset}))

            stream = stream_evaluate(
                [row.input for row in rows],  # a Sample, or what its metrics refuse
                [plan.metric for plan in plans if plan.metric.key in missing],
                max_concurrency=args.max_concurrency,
                on_progress=progress,
                **limits.options(),
            )
            try:
                for result in stream:
                    if result.not_run:
                        limits.skipped(result)
                        continue
                    limits.spent_on(result)
                    row = rows[result.index]
                    record = sample_record(
                        row, result.results, signatures, _saved(previous, row)
                    )
                    records[row.id] = record
                    if spent is not None:
                        spent.append(result.results)
                    if out is not None:
                        _append(out, record_line(record), args.out)
                    written += 1
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
    names = chosen_metrics(args.metric, default_metrics)
    keys = result_keys(args, names)
    thresholds = _per_metric_values(args.threshold, keys, "--threshold")
    gates = _per_metric_values(args.fail_under, keys, "--fail-under")
    _check_writable(args.out, "--out")
    _check_writable(args.report, "--report")
    _check_writable(getattr(args, "summary_json", None), "--summary-json")
    required = [field for name in names for field in METRICS[name].required_fields]
    rows = load_rows(
        data, column_mapping(args), format=getattr(args, "format", None), required=required,
        flags=LOADER_FLAGS,
    )  # fmt: skip
    plans = build_metrics(args, names)

    previous = _previous_results(args.out, data)
    groups = _plan_resume(
        rows, previous, {plan.metric.key: plan.signature for plan in plans},
        keep_degraded=getattr(args, "keep_degraded", False),
    )
    pending = sum(map(len, groups.values()))
    started = f"{title}: {len(rows)} samples, metrics: {', '.join(keys)}"
    print(for_terminal(started), file=sys.stderr)
    if pending < len(rows):
        print(
            f"resuming: {len(rows) - pending} samples already scored in {args.out}",
            file=sys.stderr,
        )
    if getattr(args, "estimate", False):
        return run_estimate(args, groups, plans)  # sends no request

    records = dict(previous)
    spent: list[Mapping[str, Any]] = []  # this run's outcomes, for its spend
    limits = run_limits(args, plans)
    out = _open_out(args.out) if args.out is not None and pending else None
    try:
        _score(groups, plans, previous, records, out, args, spent, limits)
    except KeyboardInterrupt as stop:
        written = stop.args[0] if stop.args else 0
        saved = (
            f"{written} newly scored samples are saved in {args.out}; rerun the same "
            "command to resume"
            if args.out is not None
            else "nothing was saved (pass --out FILE to keep results and resume)"
        )
        print(f"\ninterrupted: {saved}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if out is not None:
            _close(out)

    final = [records[row.id] for row in rows if row.id in records]
    overviews = overview(final, keys, thresholds)
    spend = spend_of(spent, limits.pricing)
    print_summary(overviews, final, gates, every_sample=args.command == "demo")
    print("\n".join(spend_lines(spend, "spend (this run)")), file=sys.stderr)
    if args.report is not None:
        write_report(args.report, final, overviews, data, gates, limits.pricing)
    if args.out is not None:
        print(f"per-sample results: {args.out}", file=sys.stderr)
    code = _gate(overviews, gates)
    failed, degraded = _outcomes(final, keys)
    if limits.stop is not None:
        resume = (
            f"rerun the same command to continue from {args.out}" if args.out is not None
            else "pass --out FILE to keep results and continue later"
        )
        print(
            f"answer-metrics: stopped early: {limits.stop.message}; "
            f"{counted(limits.not_run, 'sample')} not run ({resume})",
            file=sys.stderr,
        )
        code = code or EXIT_STOPPED
    if code == EXIT_OK and failed and not getattr(args, "allow_errors", False):
        print(
            f"answer-metrics: {counted(failed, 'sample')} {'has' if failed == 1 else 'have'} "
            "metric errors (--allow-errors to exit 0 anyway)",
            file=sys.stderr,
        )
        code = EXIT_ERRORS
    summary_json = getattr(args, "summary_json", None)
    if summary_json is not None:
        write_summary_json(
            summary_json, data=data, samples=len(rows), records=final, failed=failed,
            degraded=degraded, limits=limits, overviews=overviews, spent=spent, spend=spend,
            exit_code=code,
        )  # fmt: skip
    return code


def _outcomes(records: Sequence[SampleRecord], keys: Sequence[str]) -> tuple[int, int]:
    """Print how many samples have errors (and the commonest error) and how many were
    scored without a judge that failed; return both counts."""
    errors: dict[str, int] = {}
    failed = degraded = 0
    for record in records:
        entries = [record.metrics[key] for key in keys if key in record.metrics]
        kinds = {f"{e.error.type}: {e.error.message}" for e in entries if e.error is not None}
        for kind in kinds:
            errors[kind] = errors.get(kind, 0) + 1
        failed += bool(kinds)
        degraded += any(entry.excluded for entry in entries)
    if failed:
        commonest = max(errors, key=errors.__getitem__)
        print(
            for_terminal(
                f"samples with errors: {failed} of {len(records)}; commonest "
                f"({errors[commonest]}): {commonest}"
            ),
            file=sys.stderr,
        )
    if degraded:
        print(
            f"degraded samples: {degraded} of {len(records)} scored without a judge that "
            "failed (rerun to score them again; --keep-degraded keeps them)",
            file=sys.stderr,
        )
    return failed, degraded


def _gate(overviews: Sequence[MetricOverview], gates: Mapping[str, float]) -> int:
    failed = [
        item.summary.key
        for item in overviews
        if item.summary.key in gates
        and (item.summary.mean is None or item.summary.mean < gates[item.summary.key])
    ]
    if failed:
        print(f"answer-metrics: below --fail-under: {', '.join(failed)}", file=sys.stderr)
        return EXIT_GATE
    return EXIT_OK
