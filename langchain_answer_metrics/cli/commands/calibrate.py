"""``answer-metrics calibrate``: score a labelled file, then set the scores against the labels.

    answer-metrics calibrate labelled.jsonl --metric factual_correctness --label-col human \\
        --base-url http://localhost:11434/v1 --model qwen2.5:7b --threshold 0.7 \\
        --out scores.jsonl --report calibration.html --json calibration.json

The scoring is ``evaluate``'s (same options, the same ``--out`` records and the same path,
:mod:`~langchain_answer_metrics.cli.scoring`, so it resumes and shares work); only the
labelled rows are scored, read again from the data file as they are needed. Each record
is appended to ``--out`` as it arrives, and the statistics
(:func:`langchain_answer_metrics.analysis.calibration.calibration_of`'s) are computed from
the records read back from it: a label and the scores are kept per sample, never a row or
a record, and the worst disagreements' texts are read again at the end.

Exit codes are ``evaluate``'s: 0 when every metric has statistics from every labelled
sample; 3 when some labelled samples have metric errors (left out of the statistics: the
count and the first error are printed; ``--allow-errors`` makes this 0, as for
``evaluate``), or when a metric could score no labelled sample at all (every one failed or
was not applicable: there are no statistics, whatever ``--allow-errors`` says); 5 stopped
early by a limit; 2 bad arguments or data, among them
``--fail-under`` and ``--summary-json``, which gate and summarise a metric's mean score
(``evaluate``'s job) and would mean nothing here: they are refused, never ignored.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import langchain_answer_metrics.cli.datasets as datasets
from langchain_answer_metrics.analysis.calibration import (
    CalibrationReport,
    Judged,
    MetricCalibration,
    calibration_of,
)
from langchain_answer_metrics.cli.command_options import CalibrateOptions
from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.cli.exits import EXIT_ERRORS, EXIT_INTERRUPTED, EXIT_OK, EXIT_STOPPED
from langchain_answer_metrics.cli.group_options import OutputOptions
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.cli.labels import read_labels
from langchain_answer_metrics.cli.limits import RunLimits, count_sent, run_limits
from langchain_answer_metrics.cli.options import LOADER_FLAGS, UsageError
from langchain_answer_metrics.cli.out_lock import out_locked
from langchain_answer_metrics.cli.output.analysis_html import render_calibration_html
from langchain_answer_metrics.cli.output.calibration import print_calibration
from langchain_answer_metrics.cli.output.files import write_output
from langchain_answer_metrics.cli.output.printing import for_terminal
from langchain_answer_metrics.cli.plans import build_metrics
from langchain_answer_metrics.cli.preflight import PREFLIGHT, preflight
from langchain_answer_metrics.cli.records import ErrorRecord, MetricRecord, SampleRecord
from langchain_answer_metrics.cli.resume import Rows, SavedRecords, Spent, plan_resume
from langchain_answer_metrics.cli.run_checks import (
    check_writable,
    chosen_metrics,
    metric_entries,
    metric_values,
    per_metric_values,
    result_keys,
)
from langchain_answer_metrics.cli.scoring import record_store, say_resuming, score_plan
from langchain_answer_metrics.cli.streaming import StreamSettings
from langchain_answer_metrics.core.sample import SampleField


def _claims(entry: MetricRecord) -> list[str]:
    lines = [f"{c.model}: [{c.verdict}] ({c.side}) {c.claim}" for c in entry.claims]
    return lines + [f"{v.model}: {v.verdict} ({', '.join(map(str, v.votes))})" for v in entry.votes]


@dataclass
class _Scored:
    """One metric's labelled samples as it scored them (numbers only: their texts stay
    in ``--out``), and its errors among them, with the first."""

    items: list[Judged] = field(default_factory=list)
    errors: int = 0
    first_error: ErrorRecord | None = None


def _scored(
    records: Iterable[SampleRecord], labels: Mapping[str, float | bool], keys: Sequence[str]
) -> dict[str, _Scored]:
    """Each metric's labelled samples, from their ``--out`` ``records`` read a line at a
    time: a label and the scores are kept of each, never the record."""
    scored = {key: _Scored() for key in keys}
    for record in records:
        if record.id not in labels:
            continue
        for key, metric in scored.items():
            entry = record.metrics.get(key)
            if entry is None:
                continue
            metric.items.append(
                Judged(
                    id=record.id,
                    label=labels[record.id],
                    score=entry.score,
                    not_applicable=entry.not_applicable is not None,
                    per_model=dict(entry.per_model),
                )
            )
            if entry.error is not None:
                metric.errors += 1
                metric.first_error = metric.first_error or entry.error
    return scored


def _with_texts(report: CalibrationReport, records: Iterable[SampleRecord]) -> None:
    """Give the worst disagreements of ``report`` their response, reason and claims, read
    again from their ``records`` (a few per metric)."""
    wanted = {item.id for metric in report.metrics.values() for item in metric.disagreements}
    if not wanted:
        return
    for record in records:
        if record.id not in wanted:
            continue
        for key, metric in report.metrics.items():
            entry = record.metrics.get(key)
            for item in metric.disagreements:
                if item.id == record.id and entry is not None:
                    item.response, item.reason = record.response, entry.reason
                    item.claims = _claims(entry)


def _refuse_evaluate_only_options(output: OutputOptions) -> None:
    """``--fail-under`` and ``--summary-json`` are about a metric's mean score: refused."""
    if output.fail_under:
        raise UsageError(
            "calibrate takes no --fail-under: it gates a metric's mean score, which is "
            "evaluate's job (answer-metrics evaluate DATA --fail-under X); calibrate reports "
            "how the scores agree with the labels (read them in --json)"
        )
    if output.summary_json is not None:
        raise UsageError(
            "calibrate takes no --summary-json (evaluate's summary of mean scores); "
            "pass --json FILE for the calibration statistics"
        )


def _nothing_scored(
    key: str, metric: MetricCalibration, counts: tuple[int, int], scored: _Scored
) -> str | None:
    """Why ``metric`` has no statistics (rows and labelled ``counts``, the errors of its
    labelled samples and the first of them), or None if it has."""
    if metric.aggregate.n:
        return None
    first = scored.first_error
    said = f" (first: {first.type}: {first.message})" if first is not None else ""
    abstained = f", {metric.not_applicable} not applicable" if metric.not_applicable else ""
    return (
        f"no labelled sample could be scored for {key}: {counts[0]} rows, {counts[1]} "
        f"labelled, 0 scored, {scored.errors} errors{said}{abstained}"
    )


def run_calibrate(options: CalibrateOptions) -> int:
    """``calibrate``: score the labelled rows, then report the agreement; the exit code."""
    CTRL_C.starting_run()
    with out_locked(options.output.out):  # one run at a time on --out
        return _run_calibrate(options)


def _run_calibrate(options: CalibrateOptions) -> int:
    assert options.data is not None
    data, output = options.data, options.output
    _refuse_evaluate_only_options(output)
    entries = metric_entries(options.metrics, options.judges)  # with the config's judges
    names = chosen_metrics(metric_values(options.metrics), [], entries)
    keys = result_keys(names, entries, options.metrics.settings, config=options.judges.config)
    thresholds = per_metric_values(options.metrics.threshold, keys, "--threshold")
    for path, flag in (
        (output.out, "--out"),
        (output.report, "--report"),
        (options.json, "--json"),
    ):
        check_writable(path, flag)
    labels = read_labels(data, options.columns, options.label_col)
    required = [field for name in names for field in entries[name].required_fields]
    rows, unlabelled = _labelled_rows(options, labels, required)
    plans = build_metrics(names, metrics=options.metrics, judges=options.judges)
    saved = SavedRecords.load(output.out, data)
    resume = plan_resume(
        rows,
        saved.lookup,
        {plan.metric.key: plan.signature for plan in plans},
        keep_degraded=output.keep_degraded,
    )
    print(
        for_terminal(f"{data}: {resume.rows} labelled samples, metrics: {', '.join(keys)}"),
        file=sys.stderr,
    )
    say_resuming(resume, plans, output.out)
    # Each judge answers once before a large run, as for evaluate; within the limits.
    check_spent = preflight(plans, resume.pending, enabled=options.limits.preflight)
    limits = run_limits(options.limits, plans)  # the circuit breaker, --max-cost, --max-requests
    count_sent(limits, {PREFLIGHT: Spent(check_spent)})
    settings = StreamSettings(max_concurrency=options.limits.max_concurrency, quiet=output.quiet)
    with record_store(output.out, saved) as store:
        if not score_plan(store, resume, rows, plans, saved, settings, limits):
            return EXIT_INTERRUPTED
        # The records are read back from --out (or the store's temporary file), in order.
        records = store.in_order(rows)
        scored = _scored(records(), labels, [plan.metric.key for plan in plans])
        report = CalibrationReport(unlabelled=unlabelled)
        for plan in plans:
            key = plan.metric.key
            threshold = thresholds.get(key, plan.metric.threshold)
            report.metrics[key] = calibration_of(key, scored[key].items, threshold=threshold)
        _with_texts(report, records())
    return _report(options, report, limits, scored, (unlabelled + resume.rows, resume.rows))


def _labelled_rows(
    options: CalibrateOptions, labels: Mapping[str, float | bool], required: Sequence[SampleField]
) -> tuple[Rows, int]:
    """The rows of the data file that have a label, read again from the file at each call
    (kept nowhere), and how many have none (said). Every row is checked here, before any
    model is built."""
    assert options.data is not None
    data, columns = options.data, options.columns

    def every_row() -> Iterator[DatasetRow]:
        return datasets.iter_rows(
            data, columns.mapping(), format=columns.format, required=required, flags=LOADER_FLAGS
        )

    unlabelled = sum(row.id not in labels for row in CTRL_C.between(every_row()))
    if unlabelled:
        print(
            f"{data}: {unlabelled} rows have no label in {options.label_col!r}; left out",
            file=sys.stderr,
        )

    def rows() -> Iterator[DatasetRow]:
        return (row for row in every_row() if row.id in labels)

    return rows, unlabelled


def _report(
    options: CalibrateOptions,
    report: CalibrationReport,
    limits: RunLimits,
    scored: Mapping[str, _Scored],
    counts: tuple[int, int],
) -> int:
    """Print and write the calibration; the exit code."""
    print_calibration(report)
    write_output(options.json, "--json", json.dumps(report.as_json(), indent=2, ensure_ascii=False))
    page = render_calibration_html(report, source=str(options.data))
    write_output(options.output.report, "--report", page)
    if limits.stop is not None:
        print(
            f"answer-metrics: stopped early: {limits.stop.message}; {limits.not_run} "
            "sample(s) not run and left out (rerun the same command, with --out, to continue)",
            file=sys.stderr,
        )
        return EXIT_STOPPED
    reasons = [
        reason
        for key, metric in report.metrics.items()
        if (reason := _nothing_scored(key, metric, counts, scored[key])) is not None
    ]
    if not options.output.allow_errors:
        reasons += [
            reason
            for key, metric in report.metrics.items()
            if (reason := _some_failed(key, metric, counts[1], scored[key])) is not None
        ]
    for reason in reasons:
        print(for_terminal(f"answer-metrics: {reason}"), file=sys.stderr)
    return EXIT_ERRORS if reasons else EXIT_OK


def _some_failed(key: str, metric: MetricCalibration, labelled: int, scored: _Scored) -> str | None:
    """Why the statistics of ``metric`` leave out labelled samples that failed (evaluate's
    exit 3, which ``--allow-errors`` lifts), or None when none failed or it has none."""
    first = scored.first_error
    if not metric.aggregate.n or not scored.errors or first is None:
        return None
    return (
        f"{key}: {scored.errors} of {labelled} labelled samples have metric errors and are "
        f"left out of its statistics (first: {first.type}: {first.message}); "
        "--allow-errors to exit 0 anyway"
    )
