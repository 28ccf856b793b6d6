"""``answer-metrics compare``: two ``--out`` files of the same dataset, sample by sample.

    answer-metrics compare baseline.jsonl candidate.jsonl --report diff.html \\
        --json diff.json --fail-on-regression faithfulness=0.05

Prints per metric the paired mean difference (candidate - baseline) with its 95% CI and
p-value, the counts improved / regressed / unchanged / unpaired / errors, and the most
regressed samples. The statistics are
:func:`langchain_answer_metrics.analysis.comparison.compare`'s. Exit 1 when a
``--fail-on-regression`` gate trips (the mean dropped by more than DELTA and the CI
excludes 0). The two files are read a record at a time (:mod:`~..cli.run_on_disk`):
what is held is an offset per id and each metric's paired scores, never a record.

``--judge pairwise`` also has judges compare the two runs' responses pair by pair, in
both orders (:mod:`langchain_answer_metrics.cli.commands.compare_judged`): exit 5 when a limit
stopped it early, 3 when the judges failed on some pairs.
"""

from __future__ import annotations

import json
import sys

from langchain_answer_metrics.analysis.comparison import compare_by_id
from langchain_answer_metrics.cli.command_options import CompareOptions
from langchain_answer_metrics.cli.commands.compare_judged import (
    check_judge_options,
    judge_pairs,
    judge_plans,
)
from langchain_answer_metrics.cli.exits import EXIT_ERRORS, EXIT_GATE, EXIT_OK, EXIT_STOPPED
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.output.analysis_html import render_compare_html
from langchain_answer_metrics.cli.output.comparison import print_comparison
from langchain_answer_metrics.cli.output.files import write_output
from langchain_answer_metrics.cli.run_checks import check_writable
from langchain_answer_metrics.cli.run_on_disk import RunOnDisk, run_on_disk
from langchain_answer_metrics.metrics.pairwise import PairwisePreference


def run_compare(options: CompareOptions) -> int:
    """``compare``: the two runs' statistics (and, ``--judge pairwise``, their responses
    judged); the exit code."""
    check_judge_options(options)
    for path, flag in ((options.report, "--report"), (options.json, "--json")):
        check_writable(path, flag)
    with run_on_disk(options.baseline) as baseline, run_on_disk(options.candidate) as candidate:
        return _compare_runs(options, baseline, candidate)


def _compare_runs(options: CompareOptions, baseline: RunOnDisk, candidate: RunOnDisk) -> int:
    """The two runs compared, each record read from its file when it is needed."""
    plans = judge_plans(options.judges, options.criterion) if options.judge is not None else None
    result = compare_by_id(baseline, candidate)
    gates = dict(options.fail_on_regression)
    unknown = sorted(set(gates) - set(result.metrics))
    if unknown:
        raise UsageError(
            f"--fail-on-regression {unknown[0]}: not a metric of these runs "
            f"({', '.join(result.metrics) or 'none'})"
        )
    if plans is not None and options.estimate:  # sends no request, compares nothing
        judge_pairs(options, plans, baseline, candidate)
        return EXIT_OK
    print_comparison(result, gates)
    statistics = result.as_json()
    stopped = judged_errors = False
    report = None
    if plans is not None:
        report, stopped = judge_pairs(options, plans, baseline, candidate)
        if report is not None:
            statistics[PairwisePreference.metric_key] = report.as_json()
            judged_errors = report.errors > 0
    write_output(options.json, "--json", json.dumps(statistics, indent=2, ensure_ascii=False))
    page = render_compare_html(
        result, baseline=str(options.baseline), candidate=str(options.candidate), pairwise=report
    )
    write_output(options.report, "--report", page)
    failed = [
        key for key, delta in gates.items() if result.metrics[key].regressed_by_more_than(delta)
    ]
    if failed:
        print(
            f"answer-metrics: regressed beyond --fail-on-regression: {', '.join(failed)}",
            file=sys.stderr,
        )
        return EXIT_GATE
    if stopped:
        return EXIT_STOPPED
    return EXIT_ERRORS if judged_errors else EXIT_OK
