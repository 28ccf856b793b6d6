"""``answer-metrics calibrate``: score a labelled file, then set the scores against the labels.

    answer-metrics calibrate labelled.jsonl --metric factual_correctness --label-col human \\
        --base-url http://localhost:11434/v1 --model qwen2.5:7b --threshold 0.7 \\
        --out scores.jsonl --report calibration.html --json calibration.json

The scoring is ``evaluate``'s (same options, the same ``--out`` records, so it resumes and
shares work); only the labelled rows are scored. The statistics are
:func:`langchain_answer_metrics.analysis.calibration.calibration_of`'s.

Exit codes are ``evaluate``'s: 0 when every metric has statistics; 3 when a metric could
score no labelled sample (every one failed or was not applicable: the counts and the first
error are printed); 5 stopped early by a limit; 2 bad arguments or data, among them
``--fail-under`` and ``--summary-json``, which gate and summarise a metric's mean score
(``evaluate``'s job) and would mean nothing here: they are refused, never ignored.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence

from langchain_answer_metrics.analysis.calibration import (
    CalibrationReport,
    Judged,
    MetricCalibration,
    calibration_of,
)
from langchain_answer_metrics.cli.command_options import CalibrateOptions
from langchain_answer_metrics.cli.datasets import DatasetRow, load_rows
from langchain_answer_metrics.cli.exits import EXIT_ERRORS, EXIT_INTERRUPTED, EXIT_OK, EXIT_STOPPED
from langchain_answer_metrics.cli.group_options import OutputOptions
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.cli.labels import read_labels
from langchain_answer_metrics.cli.limits import RunLimits, run_limits
from langchain_answer_metrics.cli.listed_rows import plan_groups, previous_records, score_groups
from langchain_answer_metrics.cli.options import LOADER_FLAGS, UsageError
from langchain_answer_metrics.cli.out_file import close_out, open_out
from langchain_answer_metrics.cli.out_lock import out_locked
from langchain_answer_metrics.cli.output.analysis_html import render_calibration_html
from langchain_answer_metrics.cli.output.calibration import print_calibration
from langchain_answer_metrics.cli.output.files import write_output
from langchain_answer_metrics.cli.output.printing import for_terminal
from langchain_answer_metrics.cli.plans import build_metrics
from langchain_answer_metrics.cli.records import MetricRecord, SampleRecord
from langchain_answer_metrics.cli.run_checks import (
    check_writable,
    chosen_metrics,
    metric_entries,
    metric_values,
    per_metric_values,
    result_keys,
)
from langchain_answer_metrics.cli.streaming import StreamSettings
from langchain_answer_metrics.core.sample import SampleField
from langchain_answer_metrics.metrics.explain import counted


def _claims(entry: MetricRecord) -> list[str]:
    lines = [f"{c.model}: [{c.verdict}] ({c.side}) {c.claim}" for c in entry.claims]
    return lines + [f"{v.model}: {v.verdict} ({', '.join(map(str, v.votes))})" for v in entry.votes]


def judged(
    records: Sequence[SampleRecord], labels: Mapping[str, float | bool], key: str
) -> list[Judged]:
    """The labelled samples as a metric scored them, from their ``--out`` records."""
    items = []
    for record in records:
        entry = record.metrics.get(key)
        if record.id not in labels or entry is None:
            continue
        items.append(
            Judged(
                id=record.id,
                label=labels[record.id],
                score=entry.score,
                not_applicable=entry.not_applicable is not None,
                per_model=entry.per_model,
                reason=entry.reason,
                claims=_claims(entry),
                response=record.response,
            )
        )
    return items


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
    key: str, metric: MetricCalibration, counts: tuple[int, int], records: Sequence[SampleRecord]
) -> str | None:
    """Why ``metric`` has no statistics (rows and labelled ``counts``, errors in the
    labelled rows' ``records`` and the first of them), or None if it has."""
    if metric.aggregate.n:
        return None
    errors = [
        entry.error
        for record in records
        if (entry := record.metrics.get(key)) is not None and entry.error is not None
    ]
    first = f" (first: {errors[0].type}: {errors[0].message})" if errors else ""
    abstained = f", {metric.not_applicable} not applicable" if metric.not_applicable else ""
    return (
        f"no labelled sample could be scored for {key}: {counts[0]} rows, {counts[1]} "
        f"labelled, 0 scored, {len(errors)} errors{first}{abstained}"
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
    previous = previous_records(output.out, data)
    groups = plan_groups(rows, previous, {plan.metric.key: plan.signature for plan in plans})
    pending = sum(map(len, groups.values()))
    print(
        for_terminal(f"{data}: {len(rows)} labelled samples, metrics: {', '.join(keys)}"),
        file=sys.stderr,
    )
    if pending < len(rows):
        print(
            f"resuming: {counted(len(rows) - pending, 'sample')} already scored in {output.out}",
            file=sys.stderr,
        )
    records = dict(previous)
    limits = run_limits(options.limits, plans)  # the circuit breaker, --max-cost, --max-requests
    settings = StreamSettings(max_concurrency=options.limits.max_concurrency, quiet=output.quiet)
    out = open_out(output.out) if output.out is not None and pending else None
    try:
        with CTRL_C.deferred():  # Ctrl-C stops between two records, never mid-write
            score_groups(
                groups,
                plans,
                previous,
                records,
                out,
                out_path=output.out,
                settings=settings,
                limits=limits,
            )
    except KeyboardInterrupt:
        print("\ninterrupted: rerun the same command to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if out is not None:
            close_out(out)
    final = [records[row.id] for row in rows if row.id in records]
    report = CalibrationReport(unlabelled=unlabelled)
    for plan in plans:
        key = plan.metric.key
        threshold = thresholds.get(key, plan.metric.threshold)
        report.metrics[key] = calibration_of(key, judged(final, labels, key), threshold=threshold)
    return _report(options, report, limits, final, (unlabelled + len(rows), len(rows)))


def _labelled_rows(
    options: CalibrateOptions, labels: Mapping[str, float | bool], required: Sequence[SampleField]
) -> tuple[list[DatasetRow], int]:
    """The rows of the data file that have a label, and how many have none (said)."""
    assert options.data is not None
    rows = load_rows(
        options.data,
        options.columns.mapping(),
        format=options.columns.format,
        required=required,
        flags=LOADER_FLAGS,
    )
    unlabelled = sum(row.id not in labels for row in rows)
    if unlabelled:
        print(
            f"{options.data}: {unlabelled} rows have no label in {options.label_col!r}; left out",
            file=sys.stderr,
        )
    return [row for row in rows if row.id in labels], unlabelled


def _report(
    options: CalibrateOptions,
    report: CalibrationReport,
    limits: RunLimits,
    final: Sequence[SampleRecord],
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
        if (reason := _nothing_scored(key, metric, counts, final)) is not None
    ]
    for reason in reasons:
        print(for_terminal(f"answer-metrics: {reason}"), file=sys.stderr)
    return EXIT_ERRORS if reasons else EXIT_OK
