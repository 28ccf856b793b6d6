"""``compare``'s tables on the terminal: per metric the paired difference, its CI and
counts, the most regressed samples, the gates; and the judged pairwise preference."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

from langchain_answer_metrics.analysis.comparison import COMPARISON_COLUMNS, Comparison
from langchain_answer_metrics.analysis.pairwise import PairsToJudge, PairwiseReport
from langchain_answer_metrics.cli.output.tables import print_table
from langchain_answer_metrics.cli.output.terminal import for_terminal
from langchain_answer_metrics.metrics.explain import counted


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


def _share(value: float) -> str:
    return f"{100 * value:.1f}%"


def print_pairwise(
    report: PairwiseReport, pairs: PairsToJudge, judges: Sequence[str], stream: TextIO
) -> None:
    print("", file=stream)
    title = (
        f"pairwise preference, candidate vs baseline (judges: {', '.join(judges)}; "
        "each pair in both orders):"
    )
    print(for_terminal(title), file=stream)
    print(
        f"  pairs judged: {report.judged}  candidate wins: {report.candidate_wins}  "
        f"losses: {report.candidate_losses}  ties: {report.ties}",
        file=stream,
    )
    if report.win_rate is not None:
        ci = (
            f"95% CI [{report.ci_low:.3f}, {report.ci_high:.3f}]"
            if report.ci_low is not None and report.ci_high is not None
            else "95% CI - (too few pairs)"
        )
        print(
            f"  candidate win rate: {report.win_rate:.3f}  {ci}  (a tie counts half)", file=stream
        )
    if report.position_bias:
        shares = ", ".join(f"{label} {_share(v)}" for label, v in report.position_bias.items())
        print(for_terminal(f"  position-biased pairs (a tie): {shares}"), file=stream)
    apart = {
        "unpaired ids": report.unpaired,
        "without a response": report.no_response,
        "judges failed": report.errors,
        "not judged (a limit)": report.not_run,
    }
    if any(apart.values()):
        listing = ", ".join(f"{name}: {count}" for name, count in apart.items() if count)
        print(f"  counted apart: {listing}", file=stream)
    if report.disagreements:
        print("", file=stream)
        print("preference against the score difference:", file=stream)
        for item in report.disagreements[:10]:
            line = (
                f"  {item.id}: the judges prefer the {item.preferred}; {item.metric} "
                f"{item.baseline_score:.2f} -> {item.candidate_score:.2f}"
            )
            print(for_terminal(line), file=stream)
        if len(report.disagreements) > 10:
            print(f"  ... and {len(report.disagreements) - 10} more (--json)", file=stream)
