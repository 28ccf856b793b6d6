"""``answer-metrics compare``: two ``--out`` files of the same dataset, sample by sample.

    answer-metrics compare baseline.jsonl candidate.jsonl --report diff.html \\
        --json diff.json --fail-on-regression faithfulness=0.05

Prints per metric the paired mean difference (candidate - baseline) with its 95% CI and
p-value, the counts improved / regressed / unchanged / unpaired / errors, and the most
regressed samples. The statistics are
:func:`langchain_answer_metrics.analysis.comparison.compare`'s. Exit 1 when a
``--fail-on-regression`` gate trips (the mean dropped by more than DELTA and the CI
excludes 0).

``--judge pairwise`` also has judges compare the two runs' responses pair by pair, in
both orders (:mod:`langchain_answer_metrics.cli.commands.compare_judged`): exit 5 when a limit
stopped it early, 3 when the judges failed on some pairs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TextIO

from langchain_answer_metrics.analysis.comparison import COMPARISON_COLUMNS, Comparison, compare
from langchain_answer_metrics.cli.analysis_html import render_compare_html
from langchain_answer_metrics.cli.command_options import CompareOptions
from langchain_answer_metrics.cli.commands.compare_judged import (
    check_judge_options,
    judge_pairs,
    judge_plans,
)
from langchain_answer_metrics.cli.exits import EXIT_ERRORS, EXIT_GATE, EXIT_OK, EXIT_STOPPED
from langchain_answer_metrics.cli.options import UsageError
from langchain_answer_metrics.cli.output.files import write_output
from langchain_answer_metrics.cli.output.tables import print_table
from langchain_answer_metrics.cli.printing import for_terminal
from langchain_answer_metrics.cli.records import SampleRecord, read_records
from langchain_answer_metrics.cli.run_checks import check_writable
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.metrics.pairwise import PairwisePreference


def load_run(path: Path) -> list[SampleRecord]:
    if not path.is_file():
        raise UsageError(f"{path}: no such file; pass two --out files of answer-metrics")
    records, unreadable = read_records(path)
    if not records:
        raise UsageError(f"{path}: holds no answer-metrics results ({unreadable} other lines)")
    if unreadable:
        print(f"{path}: ignored {counted(unreadable, 'unreadable line')}", file=sys.stderr)
    return list(records.values())


def run_compare(options: CompareOptions) -> int:
    """``compare``: the two runs' statistics (and, ``--judge pairwise``, their responses
    judged); the exit code."""
    check_judge_options(options)
    for path, flag in ((options.report, "--report"), (options.json, "--json")):
        check_writable(path, flag)
    baseline, candidate = load_run(options.baseline), load_run(options.candidate)
    plans = judge_plans(options.judges, options.criterion) if options.judge is not None else None
    result = compare(baseline, candidate)
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


def _num(value: float | None, pattern: str = "{:.3f}") -> str:
    return "-" if value is None else pattern.format(value)


def print_comparison(
    result: Comparison, gates: Mapping[str, float] | None = None, stream: TextIO | None = None
) -> None:
    stream = stream or sys.stdout  # the one of the call (bound at import, it may be gone)
    table: list[tuple[str, ...]] = [COMPARISON_COLUMNS]
    for key, m in result.metrics.items():
        ci = f"{m.ci_low:+.3f},{m.ci_high:+.3f}" if m.ci_low is not None else "-"
        table.append(
            (
                key,
                str(m.n_paired),
                _num(m.mean_baseline),
                _num(m.mean_candidate),
                _num(m.mean_diff, "{:+.3f}"),
                ci,
                _num(m.p_value),
                str(m.improved),
                str(m.regressed),
                str(m.unchanged),
                str(m.unpaired),
                str(m.errors),
            )
        )
    print_table(table, stream)
    for key, m in result.metrics.items():
        if m.not_applicable_baseline or m.not_applicable_candidate:
            line = (
                f"{key}: not applicable (no claims: abstentions), left out of the pairs: "
                f"{m.not_applicable_baseline} in the baseline, "
                f"{m.not_applicable_candidate} in the candidate"
            )
            print(for_terminal(line), file=stream)
    if result.only_baseline or result.only_candidate:
        print(
            f"unpaired: {counted(len(result.only_baseline), 'sample')} only in the baseline, "
            f"{len(result.only_candidate)} only in the candidate",
            file=stream,
        )
    if result.other_inputs:
        warning = (
            f"warning: {counted(len(result.other_inputs), 'paired sample')} "
            f"{'has' if len(result.other_inputs) == 1 else 'have'} another question or "
            f"reference in the candidate (e.g. {result.other_inputs[0]}): are both files of "
            "the same dataset?"
        )
        print(for_terminal(warning), file=stream)
    for key, m in result.metrics.items():
        if m.most_regressed:
            print("", file=stream)
            print(for_terminal(f"most regressed on {key}:"), file=stream)
            for item in m.most_regressed:
                line = (
                    f"  {item.id}: {item.baseline_score:.2f} -> {item.candidate_score:.2f} "
                    f"({item.diff:+.2f}): {item.candidate_reason}"
                )
                print(for_terminal(line[:200]), file=stream)
    for key, delta in (gates or {}).items():
        m = result.metrics[key]
        verdict = "FAIL" if m.regressed_by_more_than(delta) else "ok"
        print(
            for_terminal(
                f"--fail-on-regression {key}: diff {_num(m.mean_diff, '{:+.3f}')} "
                f"vs -{delta:.3f}: {verdict}"
            ),
            file=stream,
        )
