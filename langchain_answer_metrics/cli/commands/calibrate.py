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
from typing import TextIO

from langchain_answer_metrics.analysis.calibration import (
    CalibrationReport,
    JudgeCalibration,
    Judged,
    MetricCalibration,
    calibration_of,
)
from langchain_answer_metrics.cli.analysis_html import render_calibration_html
from langchain_answer_metrics.cli.command_options import CalibrateOptions, OutputOptions
from langchain_answer_metrics.cli.datasets import DatasetRow, load_rows
from langchain_answer_metrics.cli.interrupts import CTRL_C
from langchain_answer_metrics.cli.labels import read_labels
from langchain_answer_metrics.cli.limits import RunLimits, run_limits
from langchain_answer_metrics.cli.options import LOADER_FLAGS, UsageError
from langchain_answer_metrics.cli.out_lock import out_locked
from langchain_answer_metrics.cli.output.files import write_output
from langchain_answer_metrics.cli.output.tables import print_table
from langchain_answer_metrics.cli.plans import build_metrics
from langchain_answer_metrics.cli.printing import for_terminal
from langchain_answer_metrics.cli.records import MetricRecord, SampleRecord
from langchain_answer_metrics.cli.run import (
    EXIT_ERRORS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_STOPPED,
    StreamSettings,
    _close,
    _open_out,
    _plan_resume,
    _previous_results,
    _score,
)
from langchain_answer_metrics.cli.run_checks import (
    check_writable,
    chosen_metrics,
    metric_entries,
    metric_values,
    per_metric_values,
    result_keys,
)
from langchain_answer_metrics.sample import SampleField

BINARY_COLUMNS = (
    "accuracy",
    "precision",
    "recall",
    "f1",
    "cohen_kappa",
    "roc_auc",
    "best_threshold_f1",
    "best_threshold_youden",
)
CONTINUOUS_COLUMNS = ("pearson", "spearman", "kendall", "mae")


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
    previous = _previous_results(output.out, data)
    groups = _plan_resume(rows, previous, {plan.metric.key: plan.signature for plan in plans})
    pending = sum(map(len, groups.values()))
    print(
        for_terminal(f"{data}: {len(rows)} labelled samples, metrics: {', '.join(keys)}"),
        file=sys.stderr,
    )
    if pending < len(rows):
        print(
            f"resuming: {len(rows) - pending} samples already scored in {output.out}",
            file=sys.stderr,
        )
    records = dict(previous)
    limits = run_limits(options.limits, plans)  # the circuit breaker, --max-cost, --max-requests
    settings = StreamSettings(max_concurrency=options.limits.max_concurrency, quiet=output.quiet)
    out = _open_out(output.out) if output.out is not None and pending else None
    try:
        with CTRL_C.deferred():  # Ctrl-C stops between two records, never mid-write
            _score(
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
            _close(out)
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


# --------------------------------------------------------------------------- the table


def _cell(judge: JudgeCalibration, name: str) -> str:
    estimate = judge.statistics.get(name)
    if estimate is None or estimate.value is None:
        return "-"
    if estimate.ci_low is None or estimate.ci_high is None:
        return f"{estimate.value:.2f}"
    return f"{estimate.value:.2f} [{estimate.ci_low:.2f},{estimate.ci_high:.2f}]"


def print_calibration(report: CalibrationReport, stream: TextIO | None = None) -> None:
    """Per metric: a row per judge (the aggregate first), the statistics with 95% CIs;
    to ``stream``, else standard output as it is when called."""
    stream = stream or sys.stdout
    for key, metric in report.metrics.items():
        columns = BINARY_COLUMNS if metric.label_type == "binary" else CONTINUOUS_COLUMNS
        print(
            for_terminal(
                f"{key} ({metric.label_type} labels, threshold "
                f"{metric.threshold:.2f}; 95% CI in brackets)"
            ),
            file=stream,
        )
        judges: dict[str, JudgeCalibration] = {"aggregate": metric.aggregate, **metric.judges}
        print_table(
            [("judge", "n", *columns)]
            + [
                (label, str(judge.n), *(_cell(judge, name) for name in columns))
                for label, judge in judges.items()
            ],
            stream,
        )
        _print_details(metric, stream)
        print("", file=stream)


def _print_details(metric: MetricCalibration, stream: TextIO) -> None:
    table = metric.aggregate.confusion
    if table is not None:
        print(
            f"confusion at {table.threshold:.2f}: TP {table.tp}  FP {table.fp}  "
            f"FN {table.fn}  TN {table.tn}",
            file=stream,
        )
    agreement = metric.agreement
    if len(agreement.judges) >= 2:

        def show(value: float | None) -> str:
            return "-" if value is None else f"{value:.2f}"

        kappas = ", ".join(f"{pair} {show(v)}" for pair, v in agreement.pairwise_kappa.items())
        print(
            for_terminal(
                f"panel agreement: Krippendorff's alpha {show(agreement.alpha_interval)} (scores), "
                f"{show(agreement.alpha_nominal)} (verdicts); Cohen's kappa {kappas}"
            ),
            file=stream,
        )
    if metric.errors:
        print(f"{metric.errors} labelled samples failed and are left out", file=stream)
    if metric.not_applicable:
        print(
            f"{metric.not_applicable} labelled samples are not applicable (no claims: "
            "abstentions) and are left out",
            file=stream,
        )
    if metric.disagreements:
        print("worst disagreements (human label vs score):", file=stream)
        for item in metric.disagreements:
            line = f"  {item.id}: label {item.label:.2f}, score {item.score:.2f}: {item.reason}"
            print(for_terminal(line[:200]), file=stream)
