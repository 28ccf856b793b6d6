"""Per-sample records and the HTML report: claims, votes, errors, escaping, no external assets."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.cli.output.html_report import render_html
from langchain_answer_metrics.cli.records import (
    SCHEMA_VERSION,
    SampleRecord,
    metric_record,
    overview,
    read_records,
    record_line,
    sample_record,
)
from langchain_answer_metrics.core.result import MetricResult, ModelFailure
from langchain_answer_metrics.core.sample import Sample
from langchain_answer_metrics.run.runner import MetricError

XSS = "<script>alert(1)</script>"


def claim(text: str, verdict: str, reason: str = "because") -> dict[str, str]:
    return {"claim": text, "verdict": verdict, "reason": reason, "evidence": "quoted " + text}


def factual(score: float, *, response_claims: list[dict[str, str]]) -> MetricResult:
    return MetricResult(
        key="factual_correctness",
        score=score,
        band="moderate",
        reason=f"precision ... {XSS}",
        per_model={"judge-a": score},
        excluded=[
            ModelFailure(
                model="judge-b", step="verify_claims", error=f"timed out {XSS}", error_type="T"
            )
        ],
        details={
            "models": {
                "judge-a": {
                    "response_claims": response_claims,
                    "reference_claims": [claim("Paris is in France.", "supported")],
                }
            }
        },
    )


def aspect(verdict: str) -> MetricResult:
    return MetricResult(
        key="has_year",
        score=1.0 if verdict == "PASS" else 0.0,
        band="excellent" if verdict == "PASS" else "poor",
        reason=f"{verdict}: reason",
        per_model={"judge-a": 1.0 if verdict == "PASS" else 0.0},
        details={
            "models": {
                "judge-a": {
                    "verdict": verdict,
                    "votes": [verdict, "FAIL", verdict],
                    "reasons": ["r1", "r2", f"r3 {XSS}"],
                }
            }
        },
    )


def row(row_id: str, response: str) -> DatasetRow:
    sample = Sample(user_input=f"Q {XSS}?", response=response, reference="Paris is in France.")
    return DatasetRow(row_id, sample, "line 1")


def records() -> list[SampleRecord]:
    first = sample_record(
        row("a&b", f"Paris is in France. {XSS}"),
        {
            "factual_correctness": factual(
                0.5,
                response_claims=[
                    claim("Paris is in France.", "supported"),
                    claim(XSS, "neutral", reason=f"not in the source {XSS}"),
                    claim("Paris is in Spain.", "contradicted"),
                ],
            ),
            "has_year": aspect("PASS"),
        },
        {"factual_correctness": "sig-f", "has_year": "sig-a"},
    )
    second = sample_record(
        row("b", "Lyon."),
        {
            "factual_correctness": MetricError(
                key="factual_correctness", error_type="InvalidSampleError", message=f"bad {XSS}"
            ),
            "has_year": aspect("FAIL"),
        },
        {"factual_correctness": "sig-f", "has_year": "sig-a"},
    )
    return [first, second]


def test_record_keeps_claims_votes_errors_and_text() -> None:
    first, second = records()
    entry = first.metrics["factual_correctness"]
    assert entry.score == 0.5 and entry.band == "moderate" and entry.signature == "sig-f"
    assert [(c.side, c.verdict) for c in entry.claims] == [
        ("response", "supported"),
        ("response", "neutral"),
        ("response", "contradicted"),
        ("reference", "supported"),
    ]
    assert first.metrics["has_year"].votes[0].votes == ["PASS", "FAIL", "PASS"]
    assert first.response == f"Paris is in France. {XSS}"
    error = second.metrics["factual_correctness"].error
    assert error is not None and error.type == "InvalidSampleError"
    assert second.metrics["factual_correctness"].score is None
    # judge-b was excluded (timed out): redone on resume, unless degraded scores are kept
    assert not first.scored("factual_correctness", "sig-f")
    assert first.scored("factual_correctness", "sig-f", keep_degraded=True)
    assert not first.scored("factual_correctness", "other settings", keep_degraded=True)
    assert not second.scored("factual_correctness", "sig-f")


def test_answer_correctness_record_takes_the_factual_claims() -> None:
    fc = factual(0.5, response_claims=[claim("Paris is in France.", "supported")])
    result = MetricResult(
        key="answer_correctness",
        score=0.6,
        band="moderate",
        details={
            "factual_correctness": fc.model_dump(),
            "semantic_similarity": {"score": 0.9, "details": {}},
        },
    )
    entry = metric_record(result)
    assert entry.components == {"factual_correctness": 0.5, "semantic_similarity": 0.9}
    assert [c.claim for c in entry.claims] == ["Paris is in France.", "Paris is in France."]


def test_records_round_trip_and_the_last_line_of_an_id_wins(tmp_path: Path) -> None:
    first, second = records()
    newer = first.model_copy(update={"fingerprint": "new"})
    path = tmp_path / "out.jsonl"
    text = record_line(first) + record_line(second) + record_line(newer) + '{"id": "cut sh'
    path.write_text(text, encoding="utf-8")
    loaded, unreadable = read_records(path)
    assert unreadable == 1
    assert loaded["a&b"].fingerprint == "new"
    assert loaded["b"] == second


def test_overview_summarises_scores_models_and_errors() -> None:
    (item_f, item_a) = overview(records(), ["factual_correctness", "has_year"], {"has_year": 0.5})
    assert item_f.summary.mean == 0.5 and item_f.summary.error_count == 1
    assert item_f.per_model == {"judge-a": 0.5}
    assert item_a.summary.pass_rate == 0.5
    assert sum(item_a.histogram) == 2 and item_a.histogram[0] == 1 and item_a.histogram[9] == 1


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.urls += [value or "" for name, value in attrs if name in ("src", "href")]


def page() -> str:
    items = records()
    keys = ["factual_correctness", "has_year"]
    return render_html(
        items, overview(items, keys), source=f"data {XSS}.jsonl", fail_under={"has_year": 0.9}
    )


def test_report_escapes_all_dataset_and_judge_text() -> None:
    html = page()
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "a&amp;b" in html


def test_report_is_self_contained() -> None:
    html = page()
    collector = _Collector()
    collector.feed(html)
    assert "script" not in collector.tags and "link" not in collector.tags
    assert "img" not in collector.tags and "iframe" not in collector.tags
    # Only in-page anchors: nothing is fetched from anywhere.
    assert collector.urls and all(url.startswith("#") for url in collector.urls)
    assert "default-src 'none'" in html
    assert not re.search(r"url\(|@import|https?://", html)


def test_report_shows_summary_distributions_and_claims_by_verdict() -> None:
    html = page()
    assert html.index('id="summary"') < html.index('id="details"')
    assert html.count('class="card summary-card"') == 2
    assert html.count('<svg class="hist"') == 2
    assert "below --fail-under 0.90" in html
    for verdict in ("supported", "contradicted", "neutral"):
        assert f'class="claim v-{verdict}"' in html
    assert "not in the source &lt;script&gt;" in html  # each verdict's reason
    assert "Evidence:" in html
    assert html.count('class="sample-row"') == 2
    assert "InvalidSampleError" in html
    assert "excluded judge-b at verify_claims: timed out &lt;script&gt;" in html


def test_record_lines_carry_their_schema_version_and_each_metric_kind() -> None:
    first, second = records()
    line = json.loads(record_line(first))
    assert next(iter(line)) == "schema_version" and line["schema_version"] == SCHEMA_VERSION
    assert line["metrics"]["factual_correctness"]["kind"] == "factual_correctness"
    assert line["metrics"]["has_year"]["kind"] == "aspect_critic"
    assert second.metrics["factual_correctness"].kind is None  # an error


def test_records_of_earlier_versions_are_read(tmp_path: Path) -> None:
    first, _ = records()
    current = json.loads(record_line(first))
    version_1 = {key: value for key, value in current.items() if key != "schema_version"}
    for entry in version_1["metrics"].values():
        del entry["kind"]
    unversioned = {**version_1, "id": "no version"}
    lines = [
        json.dumps({**version_1, "version": 1}),
        json.dumps(unversioned),
        json.dumps({**current, "id": "newer", "schema_version": SCHEMA_VERSION + 1}),
        json.dumps({"id": "x", "user_input": "a dataset row", "response": "not a record"}),
        json.dumps({**version_1, "id": "other version", "version": 7}),
    ]
    path = tmp_path / "old.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    loaded, unreadable = read_records(path)
    assert sorted(loaded) == ["a&b", "no version"] and unreadable == 3
    old = loaded["a&b"]
    assert old.schema_version == SCHEMA_VERSION
    assert old.scored("factual_correctness", "sig-f", keep_degraded=True)
    assert old.metrics["factual_correctness"].kind is None
    assert old.metrics["factual_correctness"].claims == first.metrics["factual_correctness"].claims


def test_answer_correctness_claims_are_not_listed_twice() -> None:
    first = records()[0]
    claims_of = first.metrics["factual_correctness"]
    both = first.model_copy(
        update={
            "metrics": {
                "factual_correctness": claims_of,
                "answer_correctness": claims_of.model_copy(update={"kind": "answer_correctness"}),
            }
        }
    )
    keys = ["factual_correctness", "answer_correctness"]
    html = render_html([both], overview([both], keys), source="d.jsonl")
    alone = first.model_copy(update={"metrics": {"factual_correctness": claims_of}})
    html_alone = render_html([alone], overview([alone], keys[:1]), source="d.jsonl")
    # The claim lists (one per side) appear once, not twice.
    assert html.count('<ul class="claims">') == html_alone.count('<ul class="claims">') > 0
    assert 'claims: the same as <a href="#s-1-factual_correctness">factual_correctness</a>' in html
    assert 'id="s-1-factual_correctness"' in html


def test_the_header_lists_each_model_once() -> None:
    from langchain_answer_metrics.cli.output.html_report import model_name

    labels = [
        "judge-a",
        "factual_correctness/judge-a",
        "semantic_similarity/embed-a",
        "openai/gpt-4o",
    ]
    assert sorted({model_name(label) for label in labels}) == [
        "embed-a",
        "judge-a",
        "openai/gpt-4o",
    ]
