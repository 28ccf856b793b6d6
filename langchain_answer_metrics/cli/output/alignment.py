"""``align``'s outputs: the before/after table on the terminal and what ``--json``
writes."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from langchain_answer_metrics.analysis.alignment import AlignmentResult
from langchain_answer_metrics.cli.output.terminal import for_terminal


def alignment_json(result: AlignmentResult) -> dict[str, Any]:
    """What ``--json`` writes: the gain, the fit (without the metric object), the cost."""
    return {
        "finding": result.gain.finding,
        "gain": result.gain.model_dump(mode="json"),
        "split": result.split,
        "fit": result.fit.model_dump(mode="json", exclude={"metric"}),
        "estimate": result.estimate,
        "spent": result.spent,
        "left_out": result.left_out,
        "aligned_metric": result.path,
    }


def print_alignment(result: AlignmentResult, stream: TextIO | None = None) -> None:
    """The before/after table, the finding, and what was fitted (on stdout by default,
    looked up when called: this module may be imported while stdout is redirected)."""
    stream = stream or sys.stdout

    def show(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    rows = [("statistic", "before", "after", "difference", "95% CI", "finding")]
    for name, stat in result.gain.statistics.items():
        rows.append(
            (
                name,
                show(stat.before),
                show(stat.after),
                show(stat.difference),
                f"[{show(stat.ci_low)}, {show(stat.ci_high)}]",
                stat.finding,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print(f"cost: {result.cost()}", file=stream)
    for number, row in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip(), file=stream)
        if number == 0:
            print("  ".join("-" * w for w in widths), file=stream)
    print(for_terminal(result.summary()), file=stream)
