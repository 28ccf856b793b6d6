"""Counts read as English: "1 claim", "2 claims"; "is" and "are" accordingly.

Through the real functions: the claims summary of a reason (and a metric's reason, with a
scripted judge), the progress bar, the first-error lines, the report and the summary.
"""

from __future__ import annotations

import io

from support import year_judge

from langchain_answer_metrics import Faithfulness
from langchain_answer_metrics.cli.output.html_report import render_html
from langchain_answer_metrics.cli.output.printing import ProgressBar, print_summary
from langchain_answer_metrics.cli.records import SampleRecord, overview
from langchain_answer_metrics.core.result import ClaimVerdictDetail
from langchain_answer_metrics.metrics.explain import claims_summary, counted
from langchain_answer_metrics.run.runner import Progress
from langchain_answer_metrics.run.summary import summarize


def verdicts(*kinds: str) -> list[ClaimVerdictDetail]:
    return [
        ClaimVerdictDetail(claim=f"Claim {index}.", verdict=kind, reason="")
        for index, kind in enumerate(kinds, 1)
    ]


def summary_of(*kinds: str) -> str:
    return claims_summary(verdicts(*kinds), claims_of="response", checked_against="the reference")


def test_counted() -> None:
    assert counted(0, "claim") == "0 claims"
    assert counted(1, "claim") == "1 claim"
    assert counted(2, "claim") == "2 claims"
    assert counted(1, "reference claim") == "1 reference claim"
    assert counted(3, "child", "children") == "3 children"


def test_one_claim_is_singular() -> None:
    assert summary_of("supported") == ("1 of 1 response claim is supported by the reference")
    assert summary_of("contradicted").startswith(
        "0 of 1 response claim is supported by the reference; unsupported: “Claim 1.”"
    )
    assert "claims" not in summary_of("supported")


def test_several_claims_are_plural() -> None:
    assert summary_of("supported", "neutral").startswith(
        "1 of 2 response claims are supported by the reference"
    )
    assert summary_of("supported", "supported", "supported") == (
        "3 of 3 response claims are supported by the reference"
    )


def test_a_metric_reason_says_1_claim() -> None:
    metric = Faithfulness(llm=year_judge())
    one = metric.invoke(
        {"response": "Paris is in France.", "retrieved_contexts": ["Paris is in France."]}
    )
    assert one.reason == "1 of 1 response claim is supported by the retrieved contexts"

    two = metric.invoke(
        {
            "response": "Paris is in France. Paris is large.",
            "retrieved_contexts": ["Paris is in France."],
        }
    )
    assert two.reason.startswith("1 of 2 response claims are supported by the retrieved")


def bar_line(total: int) -> str:
    stream = io.StringIO()
    bar = ProgressBar(total, stream, clock=lambda: 0.0)
    bar(Progress(done=1, errors=0, total=total, elapsed=1.0))
    return stream.getvalue()


def test_the_progress_bar_counts_samples() -> None:
    assert "1/1 sample ·" in bar_line(1)
    assert "1/2 samples ·" in bar_line(2)


def record(index: int, *, error: bool) -> SampleRecord:
    outcome = (
        {"error": {"type": "ValueError", "message": "bad sample"}}
        if error
        else {"score": 1.0, "reason": "fine"}
    )
    return SampleRecord.model_validate(
        {"schema_version": 2, "id": f"s{index}", "response": "r", "metrics": {"m": outcome}}
    )


def report(records: list[SampleRecord]) -> str:
    return render_html(records, overview(records, ["m"]), source="data.jsonl")


def printed(records: list[SampleRecord]) -> str:
    stream = io.StringIO()
    print_summary(overview(records, ["m"]), records, {}, stream=stream)
    return stream.getvalue()


def test_the_summary_counts_errors() -> None:
    assert summarize("m", [None]).describe() == "m: no scores, 1 error"
    assert summarize("m", [None, None]).describe() == "m: no scores, 2 errors"


def test_the_report_counts_samples_and_errors() -> None:
    one = report([record(0, error=True)])
    assert "1 sample from" in one and "0 scored · 1 error" in one
    assert "1 samples" not in one and "1 errors" not in one
    two = report([record(0, error=True), record(1, error=True), record(2, error=False)])
    assert "3 samples from" in two and "1 scored · 2 errors" in two


def test_the_first_error_line_counts_errors() -> None:
    assert "m: 1 error, first on s0" in printed([record(0, error=True)])
    assert "m: 2 errors, first on s0" in printed([record(0, error=True), record(1, error=True)])
