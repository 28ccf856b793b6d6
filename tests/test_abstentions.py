"""Abstentions ("I don't know", "В контексте нет ответа", "我不知道") make no claim: not a
hallucination. Faithfulness leaves them out (not applicable, counted) or scores them 1.0
(flagged); FactualCorrectness keeps recall 0. See docs/abstentions.md.
"""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from langsmith import Client, evaluate
from langsmith.schemas import Example
from pydantic import ValidationError
from support import answer_metrics, fact_judge

from langchain_answer_metrics import FactualCorrectness, Faithfulness
from langchain_answer_metrics.analysis.calibration import Judged, calibration_of
from langchain_answer_metrics.analysis.comparison import compare
from langchain_answer_metrics.checkpoints import metric_signature
from langchain_answer_metrics.cli.datasets import DatasetRow
from langchain_answer_metrics.cli.output.html_report import render_html
from langchain_answer_metrics.cli.output.printing import print_summary
from langchain_answer_metrics.cli.records import (
    metric_record,
    overview,
    read_records,
    record_line,
    sample_record,
)
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.core.sample import Sample
from langchain_answer_metrics.judging.panel import JudgesDisagreeError
from langchain_answer_metrics.run.runner import MetricError
from langchain_answer_metrics.run.summary import has_no_claims, summarize
from langchain_answer_metrics.testing.heuristic_judge import decompose, is_abstention
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

CONTEXT = "The Eiffel Tower was built in 1889 in Paris."
SAID = "The Eiffel Tower was built in 1889."  # supported by CONTEXT
ABSTENTIONS = {
    "en": "I cannot find this in the documents.",
    "ru": "В контексте нет ответа.",
    "zh": "上下文中没有答案。",
}


def chat(server: LocalOpenAIServer, model: str = "judge-a") -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.base_url, api_key="sk-test", model=model, use_responses_api=False
    )


# --------------------------------------------------------------------------- the toy judge


@pytest.mark.parametrize(
    "text",
    [
        "I don't know.",
        "I don’t know",
        "The answer is not in the provided context.",
        "Не знаю.",
        "Я не могу ответить на этот вопрос.",
        "我不知道。",
        *ABSTENTIONS.values(),
    ],
)
def test_the_toy_judge_finds_no_claims_in_an_abstention(text: str) -> None:
    assert is_abstention(text)
    assert decompose(text) == {"claims": []}


def test_the_toy_judge_keeps_the_claims_beside_an_abstention() -> None:
    assert decompose("I don't know. It opened in 1889.") == {"claims": ["It opened in 1889."]}
    for claim in (
        "The tower was built in 1889.",
        "Башня построена в 1889 году.",
        "铁塔建于1889年。",
    ):
        assert decompose(claim) == {"claims": [claim]}


# --------------------------------------------------------------------------- real HTTP


@pytest.mark.parametrize("language", list(ABSTENTIONS))
def test_an_abstention_is_not_applicable_by_default(
    language: str, server: LocalOpenAIServer
) -> None:
    metric = Faithfulness(llm=chat(server), threshold=0.7)
    result = metric.invoke({"response": ABSTENTIONS[language], "retrieved_contexts": [CONTEXT]})

    assert result.score is None and result.not_applicable == "no_claims"
    assert result.band is None and result.passed is None
    assert result.per_model == {}
    assert result.details["models"]["judge-a"]["no_claims"] == ["response"]
    assert "not applicable" in result.reason
    assert has_no_claims(result)
    assert server.chat_requests == 1  # decomposed; nothing to verify
    assert metric.score(response=ABSTENTIONS[language], retrieved_contexts=[CONTEXT]) is None
    # The result survives a JSON round trip as what it is.
    again = MetricResult.model_validate_json(result.model_dump_json())
    assert again.score is None and again.not_applicable == "no_claims"


@pytest.mark.parametrize("language", list(ABSTENTIONS))
def test_an_abstention_scores_one_flagged_under_score_1(
    language: str, server: LocalOpenAIServer
) -> None:
    metric = Faithfulness(llm=chat(server), no_claims="score_1", threshold=0.7)
    result = metric.invoke({"response": ABSTENTIONS[language], "retrieved_contexts": [CONTEXT]})

    assert result.score == 1.0 and result.not_applicable is None
    assert result.band == "excellent" and result.passed is True
    assert result.details["models"]["judge-a"]["no_claims"] == ["response"]
    assert "no_claims='score_1'" in result.reason
    assert has_no_claims(result)


async def test_an_answer_is_scored_as_before(server: LocalOpenAIServer) -> None:
    for option in ("not_applicable", "score_1"):
        result = await Faithfulness(llm=chat(server), no_claims=option).ainvoke(
            {"response": f"I don't know. {SAID}", "retrieved_contexts": [CONTEXT]}
        )
        assert result.score == 1.0 and result.not_applicable is None
        assert not has_no_claims(result)


def test_a_bad_option_is_refused_naming_the_metric_and_option() -> None:
    with pytest.raises(ValidationError, match=r"(?s)Faithfulness.*no_claims.*score_1"):
        Faithfulness(llm=fact_judge(), no_claims="one")


def test_a_result_is_scored_or_not_applicable_never_both_or_neither() -> None:
    with pytest.raises(ValidationError, match="not_applicable"):
        MetricResult(key="faithfulness", score=None, band=None)
    with pytest.raises(ValidationError, match="not_applicable"):
        MetricResult(key="faithfulness", score=0.0, not_applicable="no_claims", band="poor")


# --------------------------------------------------------------------------- a panel

PANEL_SAMPLE = {"response": SAID, "retrieved_contexts": [CONTEXT]}


async def test_a_judge_finding_no_claims_is_left_out_of_the_panel() -> None:
    finds = fact_judge("judge-a")  # the claim is supported
    finds_none = fact_judge("judge-b", claims={SAID: []})

    result = await Faithfulness(llm=[finds, finds_none]).ainvoke(PANEL_SAMPLE)

    assert result.score == 1.0 and result.not_applicable is None
    assert result.per_model == {"judge-a": 1.0} and result.spread == 0.0
    assert result.details["models"]["judge-b"]["no_claims"] == ["response"]
    assert "judge-b=n/a (no claims)" in result.reason
    assert not has_no_claims(result)
    # Consensus is checked among the judges that scored.
    agreed = await Faithfulness(llm=[finds, finds_none], aggregation="consensus").ainvoke(
        PANEL_SAMPLE
    )
    assert agreed.score == 1.0


async def test_a_panel_with_no_claims_anywhere_is_not_applicable() -> None:
    judges = [fact_judge("judge-a", claims={SAID: []}), fact_judge("judge-b", claims={SAID: []})]
    result = await Faithfulness(llm=judges, aggregation="min").ainvoke(PANEL_SAMPLE)
    assert result.score is None and result.not_applicable == "no_claims"
    assert has_no_claims(result)


async def test_under_score_1_a_judge_with_no_claims_counts_as_one() -> None:
    wrong = fact_judge("judge-a", verdicts={SAID: "contradicted"})
    finds_none = fact_judge("judge-b", claims={SAID: []})
    result = await Faithfulness(llm=[wrong, finds_none], no_claims="score_1").ainvoke(PANEL_SAMPLE)
    assert result.per_model == {"judge-a": 0.0, "judge-b": 1.0}
    assert result.score == pytest.approx(0.5)
    with pytest.raises(JudgesDisagreeError):
        await Faithfulness(
            llm=[wrong, finds_none], no_claims="score_1", aggregation="consensus"
        ).ainvoke(PANEL_SAMPLE)


# --------------------------------------------------------------------------- FactualCorrectness


def test_factual_correctness_keeps_recall_zero_for_an_abstention(
    server: LocalOpenAIServer,
) -> None:
    sample = {"response": "I don't know.", "reference": "The tower was built in 1889."}
    result = FactualCorrectness(llm=chat(server)).invoke(sample)
    model = result.details["models"]["judge-a"]
    assert result.score == 0.0 and result.not_applicable is None
    assert model["recall"] == 0.0 and model["precision"] == 0.0
    assert model["no_claims"] == ["response"]
    precision = FactualCorrectness(llm=chat(server), mode="precision").invoke(sample)
    assert precision.score == 0.0 and precision.not_applicable is None


# --------------------------------------------------------------------------- summaries


def _results() -> list[Any]:
    judge = fact_judge(claims={"I don't know.": []})
    metric = Faithfulness(llm=judge, threshold=0.7)
    samples = [
        {"response": SAID, "retrieved_contexts": [CONTEXT]},
        {"response": f"{SAID} It is in Berlin.", "retrieved_contexts": [CONTEXT]},
        {"response": "I don't know.", "retrieved_contexts": [CONTEXT]},
    ]
    return [*metric.batch(samples), RuntimeError("judge down")]


def test_the_summary_leaves_not_applicable_out_and_counts_it() -> None:
    summary = summarize("faithfulness", _results())
    assert summary.mean == pytest.approx(0.75)  # 1.0 and 0.5, not the abstention
    assert (summary.count, summary.scored, summary.error_count) == (4, 2, 1)
    assert summary.not_applicable == 1 and summary.no_claims == 1
    assert summary.pass_rate == pytest.approx(0.5)
    assert "2 scored, 1 not applicable, 1 with no claims (abstentions), 1 error" in (
        summary.describe()
    )


def test_under_score_1_the_summary_scores_and_still_counts_abstentions() -> None:
    judge = fact_judge(claims={"I don't know.": []})
    metric = Faithfulness(llm=judge, no_claims="score_1")
    results = metric.batch(
        [{"response": r, "retrieved_contexts": [CONTEXT]} for r in (SAID, "I don't know.")]
    )
    summary = summarize("faithfulness", results)
    assert summary.mean == 1.0 and summary.scored == 2
    assert summary.not_applicable == 0 and summary.no_claims == 1


def _records(results: list[Any]) -> list[Any]:
    rows = []
    for index, outcome in enumerate(results):
        if isinstance(outcome, BaseException):
            outcome = MetricError(
                key="faithfulness", error_type="RuntimeError", message=str(outcome)
            )
        sample = Sample(response=f"response {index}", retrieved_contexts=[CONTEXT])
        row = DatasetRow(f"s{index}", sample, f"line {index}")
        rows.append(sample_record(row, {"faithfulness": outcome}, {"faithfulness": "sig"}))
    return rows


def test_records_round_trip_and_resume_keeps_not_applicable(tmp_path: Path) -> None:
    results = _results()
    entry = metric_record(results[2])
    assert entry.score is None and entry.error is None
    assert entry.not_applicable == "no_claims" and entry.no_claims
    path = tmp_path / "out.jsonl"
    path.write_text("".join(record_line(record) for record in _records(results)), "utf-8")
    read, unreadable = read_records(path)
    assert unreadable == 0 and read["s2"].metrics["faithfulness"] == entry.model_copy(
        update={"signature": "sig"}
    )
    assert read["s2"].scored("faithfulness", "sig")  # a resume does not score it again
    assert not read["s3"].scored("faithfulness", "sig")  # the error is redone

    (item,) = overview(list(read.values()), ["faithfulness"], {"faithfulness": 0.7})
    summary = item.summary
    assert summary.mean == pytest.approx(0.75) and summary.not_applicable == 1
    assert summary.no_claims == 1 and summary.error_count == 1 and summary.count == 4


def test_the_table_and_the_report_show_not_applicable() -> None:
    records = _records(_results())
    overviews = overview(records, ["faithfulness"])
    stream = io.StringIO()
    print_summary(overviews, records, {}, every_sample=True, stream=stream)
    text = stream.getvalue()
    assert "faithfulness: 1 not applicable, left out of the mean; 1 response with no claims" in text
    assert "n/a (no claims)" in text

    page = render_html(records, overviews, source="qa.jsonl")
    assert page.count("n/a — no claims (abstention)") == 2  # the index and the sample
    assert "1 not applicable (left out of the mean)" in page
    assert "1 response with no claims (abstentions)" in page


def test_calibration_leaves_not_applicable_out_with_a_count() -> None:
    items = [
        Judged(id="a", label=True, score=0.9, per_model={"judge-a": 0.9}),
        Judged(id="b", label=False, score=0.2, per_model={"judge-a": 0.2}),
        Judged(id="c", label=True, score=None, not_applicable=True),
        Judged(id="d", label=False, score=None),
    ]
    calibration = calibration_of("faithfulness", items)
    assert calibration.aggregate.n == 2
    assert calibration.not_applicable == 1 and calibration.errors == 1
    assert calibration.as_json()["not_applicable"] == 1


def test_compare_counts_not_applicable_apart_from_errors() -> None:
    def row(row_id: str, entry: dict[str, Any]) -> dict[str, Any]:
        return {"id": row_id, "metrics": {"faithfulness": entry}}

    scored = {"score": 0.5}
    abstained = {"score": None, "not_applicable": "no_claims", "no_claims": True}
    failed = {"score": None, "error": {"type": "E", "message": "m"}}
    baseline = [row("a", scored), row("b", scored), row("c", scored), row("d", scored)]
    candidate = [
        row("a", {"score": 1.0}),
        row("b", abstained),
        row("c", abstained),
        row("d", failed),
    ]
    metric = compare(baseline, candidate).metrics["faithfulness"]
    assert metric.n_paired == 1 and metric.errors == 1
    assert (metric.not_applicable_baseline, metric.not_applicable_candidate) == (0, 2)


# --------------------------------------------------------------------------- LangSmith


def _offline_client() -> Client:
    return Client(
        api_key="offline",
        api_url="http://127.0.0.1:9",
        auto_batch_tracing=False,
        tracing_sampling_rate=0.0,
    )


@pytest.mark.usefixtures("network_attempts")
def test_langsmith_feedback_has_no_score_and_the_summary_counts_it() -> None:
    answers = {"q1": SAID, "q2": f"{SAID} It is in Berlin.", "q3": "我不知道。"}
    data = [
        Example(id=uuid.uuid4(), inputs={"question": q}, outputs={"answer": "r"}) for q in answers
    ]
    evaluator = Faithfulness(llm=fact_judge(claims={"我不知道。": []})).as_evaluator()
    results = evaluate(
        lambda inputs: {"answer": answers[inputs["question"]], "contexts": [CONTEXT]},
        data=data,
        evaluators=[evaluator],
        summary_evaluators=[evaluator.summary_evaluator],
        client=_offline_client(),
        upload_results=False,
    )
    rows = {
        row["example"].inputs["question"]: row["evaluation_results"]["results"][0]
        for row in results
    }
    abstained = rows["q3"]
    assert abstained.score is None
    assert "not applicable" in (abstained.comment or "")
    assert abstained.extra is not None and abstained.extra["not_applicable"] == "no_claims"
    assert "error" not in abstained.extra
    summary = {result.key: result.score for result in results._summary_results["results"]}
    assert summary["faithfulness_mean"] == pytest.approx(0.75)
    assert summary["faithfulness_error_count"] == 0
    assert summary["faithfulness_not_applicable"] == 1 and summary["faithfulness_no_claims"] == 1


# --------------------------------------------------------------------------- the CLI


def test_the_cli_counts_abstentions_in_the_summary_json_report_and_resume(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    data = tmp_path / "qa.jsonl"
    rows = [
        {"id": "answer", "question": "When?", "answer": SAID, "contexts": [CONTEXT]},
        *(
            {"id": language, "question": "When?", "answer": text, "contexts": [CONTEXT]}
            for language, text in ABSTENTIONS.items()
        ),
    ]
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    out, report, summary_json = tmp_path / "out.jsonl", tmp_path / "r.html", tmp_path / "s.json"
    args = [
        "evaluate",
        str(data),
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--out",
        str(out),
        "--report",
        str(report),
        "--summary-json",
        str(summary_json),
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    first = answer_metrics(*args, env=env)  # in this process
    assert first.returncode == 0, first.stderr
    assert "3 not applicable, left out of the mean" in first.stdout

    metrics = json.loads(summary_json.read_text("utf-8"))["metrics"]["faithfulness"]
    assert metrics["mean"] == 1.0 and metrics["scored"] == 1 and metrics["error_count"] == 0
    assert metrics["not_applicable"] == 3 and metrics["no_claims"] == 3
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    abstained = [line["metrics"]["faithfulness"] for line in lines if line["id"] != "answer"]
    assert all(m["score"] is None and m["not_applicable"] == "no_claims" for m in abstained)
    assert report.read_text("utf-8").count("n/a — no claims (abstention)") == 6

    requests = server.chat_requests
    again = answer_metrics(*args, env=env)
    assert again.returncode == 0, again.stderr
    assert server.chat_requests == requests  # the abstentions were kept, not re-scored
    assert "resuming: 4 samples already scored" in again.stderr
    assert json.loads(summary_json.read_text("utf-8"))["metrics"]["faithfulness"] == metrics


def test_a_resume_rescores_when_the_option_changes() -> None:
    default = metric_signature(Faithfulness(llm=fact_judge()))
    assert metric_signature(Faithfulness(llm=fact_judge(), no_claims="not_applicable")) == default
    assert metric_signature(Faithfulness(llm=fact_judge(), no_claims="score_1")) != default
