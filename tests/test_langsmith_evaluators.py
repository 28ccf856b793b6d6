"""The metrics as LangSmith evaluators, run through the real ``evaluate`` / ``aevaluate``.

Fully offline: the client recipe from the shared notes, lists of ``Example``s, and a guard
that fails any connection (or name lookup) that is not loopback.
"""

from __future__ import annotations

import socket
import sys
import uuid
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import BaseMessage
from langchain_core.tracers.context import collect_runs
from langchain_core.tracers.schemas import Run as TracedRun
from langsmith import Client, aevaluate, evaluate
from langsmith.evaluation.evaluator import EvaluationResult, RunEvaluator
from langsmith.schemas import Example
from support import year_reply

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    MetricEvaluator,
    SemanticSimilarity,
    evaluators,
)
from langchain_answer_metrics.adapters.langsmith.evaluators import (
    async_function_evaluator,
    function_evaluator,
)
from langchain_answer_metrics.testing.scripted import Reply, ScriptedChatModel, ScriptedEmbeddings

# --- offline guard ----------------------------------------------------------------------

pytestmark = pytest.mark.usefixtures("network_attempts")  # see conftest.py


def test_the_network_guard_catches_outside_access(network_attempts: list[Any]) -> None:
    with pytest.raises(AssertionError, match="non-loopback"):
        socket.getaddrinfo("api.smith.langchain.com", 443)
    with pytest.raises(AssertionError, match="non-loopback"):
        socket.create_connection(("192.0.2.1", 80), timeout=0.01)
    assert len(network_attempts) == 2
    network_attempts.clear()  # caught on purpose: let the fixture's final check pass


def offline_client() -> Client:
    return Client(
        api_key="offline",
        api_url="http://127.0.0.1:9",
        auto_batch_tracing=False,
        tracing_sampling_rate=0.0,
    )


# --- a scripted judge that decides from the prompt alone ---------------------------------


def reply(schema: str, messages: list[BaseMessage]) -> Reply:
    """The year judge (see support.py); a response saying BOOM breaks the judge."""
    if "BOOM" in str(messages[-1].content):
        raise RuntimeError("judge is down")
    return year_reply(schema, messages)


def judge() -> ScriptedChatModel:
    return ScriptedChatModel(responder=reply, model="judge-a")


QUESTIONS = {
    "When was the Eiffel Tower built?": {
        "answer": "The Eiffel Tower was built in 1889. It is in Berlin.",
        "contexts": [Document(page_content="The Eiffel Tower was built in 1889 in Paris.")],
    },
    "Where is the Eiffel Tower?": {
        "answer": "The Eiffel Tower is in Paris.",
        "contexts": ["The Eiffel Tower is in Paris, France."],
    },
    # The app forgot its contexts: Faithfulness cannot score this row.
    "Who built the Eiffel Tower?": {"answer": "Gustave Eiffel's company built it."},
}
REFERENCES = {
    "When was the Eiffel Tower built?": "The Eiffel Tower was built in 1889.",
    "Where is the Eiffel Tower?": "The Eiffel Tower is in Paris.",
    "Who built the Eiffel Tower?": "Gustave Eiffel's company built it.",
}


def app(inputs: dict[str, Any]) -> dict[str, Any]:
    return QUESTIONS[inputs["question"]]


async def async_app(inputs: dict[str, Any]) -> dict[str, Any]:
    return app(inputs)


def examples() -> list[Example]:
    return [
        Example(id=uuid.uuid4(), inputs={"question": question}, outputs={"answer": reference})
        for question, reference in REFERENCES.items()
    ]


def metrics() -> list[Any]:
    model = judge()
    return [
        FactualCorrectness(llm=model),
        Faithfulness(llm=model, threshold=0.7),
        AspectCritic(llm=model, name="has_date", criterion="The response gives a year."),
        SemanticSimilarity(embeddings=ScriptedEmbeddings()),
    ]


def feedback_by_row(rows: list[Any]) -> dict[str, dict[str, EvaluationResult]]:
    return {
        row["example"].inputs["question"]: {
            result.key: result for result in row["evaluation_results"]["results"]
        }
        for row in rows
    }


def check_rows(by_row: dict[str, dict[str, EvaluationResult]]) -> None:
    keys = {"factual_correctness", "faithfulness", "has_date", "semantic_similarity"}
    assert all(set(feedback) == keys for feedback in by_row.values())

    when = by_row["When was the Eiffel Tower built?"]
    # "It is in Berlin." is in neither the contexts nor the reference.
    assert when["faithfulness"].score == pytest.approx(0.5)
    assert "1 of 2 response claims are supported" in (when["faithfulness"].comment or "")
    assert "It is in Berlin." in (when["faithfulness"].comment or "")
    assert when["factual_correctness"].score == pytest.approx(2 / 3)  # P 0.5, R 1.0
    assert when["has_date"].score == 1.0
    assert 0.0 <= (when["semantic_similarity"].score or 0.0) <= 1.0

    where = by_row["Where is the Eiffel Tower?"]
    assert where["faithfulness"].score == 1.0
    assert where["factual_correctness"].score == 1.0
    assert where["has_date"].score == 0.0
    assert where["semantic_similarity"].score == pytest.approx(1.0)

    # Claim-level detail rides along, in metadata and in the uploaded extra.
    detail = when["faithfulness"].metadata or {}
    assert detail == when["faithfulness"].extra
    claims = detail["details"]["models"]["judge-a"]["response_claims"]
    assert [(claim["claim"], claim["verdict"]) for claim in claims] == [
        ("The Eiffel Tower was built in 1889.", "supported"),
        ("It is in Berlin.", "neutral"),
    ]
    assert detail["per_model"] == {"judge-a": 0.5}
    assert detail["band"] == "moderate"
    assert detail["passed"] is False and detail["threshold"] == 0.7
    assert detail["excluded"] == []
    assert detail["usage"]["judge-a"]["requests"] == 2
    votes = (when["has_date"].metadata or {})["details"]["models"]["judge-a"]["votes"]
    assert votes == ["PASS"]
    assert when["faithfulness"].feedback_config == {"type": "continuous", "min": 0, "max": 1}

    # The row the metric cannot score: same key, no score, the error says what it saw.
    broken = by_row["Who built the Eiffel Tower?"]["faithfulness"]
    assert broken.score is None
    comment = broken.comment or ""
    assert comment.startswith("MissingFieldError: faithfulness: field 'retrieved_contexts'")
    assert "outputs: ['answer']" in comment and "inputs: ['question']" in comment
    assert broken.extra == {
        "error": True,
        "error_type": "MissingFieldError",
        "error_message": comment.removeprefix("MissingFieldError: "),
    }
    # The other metrics still scored that row.
    assert by_row["Who built the Eiffel Tower?"]["factual_correctness"].score == 1.0


def check_summary(summary: list[EvaluationResult]) -> None:
    by_key = {result.key: result for result in summary}
    assert {key for key in by_key if key.startswith("faithfulness_")} == {
        "faithfulness_mean",
        "faithfulness_pass_rate",
        "faithfulness_error_count",
        "faithfulness_ci_low",
        "faithfulness_ci_high",
        "faithfulness_tokens",  # no faithfulness_cost: the scripted judge has no price
    }
    # No threshold on FactualCorrectness: no pass rate.
    assert "factual_correctness_pass_rate" not in by_key
    assert by_key["faithfulness_mean"].score == pytest.approx(0.75)  # 0.5 and 1.0
    assert by_key["faithfulness_pass_rate"].score == pytest.approx(0.5)
    assert by_key["faithfulness_error_count"].score == 1
    low, high = by_key["faithfulness_ci_low"].score, by_key["faithfulness_ci_high"].score
    assert low is not None and high is not None and 0.5 <= low <= 0.75 <= high <= 1.0
    assert by_key["has_date_mean"].score == pytest.approx(1 / 3)
    assert by_key["factual_correctness_error_count"].score == 0
    assert (by_key["faithfulness_mean"].metadata or {})["count"] == 3
    assert by_key["faithfulness_mean"].comment == (
        f"faithfulness: mean 0.750 (95% CI {low:.3f}–{high:.3f}), "
        "pass rate 50% at >= 0.70, 2 scored, 1 error"
    )


def test_evaluate_gives_feedback_per_metric_and_summaries(network_attempts: list[Any]) -> None:
    evs = evaluators(metrics())
    results = evaluate(
        app,
        data=examples(),
        evaluators=evs,
        summary_evaluators=evs.summary_evaluators,
        client=offline_client(),
        upload_results=False,
    )
    rows = list(results)
    assert len(rows) == 3
    check_rows(feedback_by_row(rows))
    check_summary(results._summary_results["results"])
    assert network_attempts == []  # the recipe makes no connection at all


async def test_aevaluate_gives_the_same_feedback(network_attempts: list[Any]) -> None:
    evs = evaluators(metrics())
    results = await aevaluate(
        async_app,
        data=examples(),
        evaluators=evs,
        summary_evaluators=evs.summary_evaluators,
        client=offline_client(),
        upload_results=False,
        max_concurrency=3,
    )
    rows = [row async for row in results]
    assert len(rows) == 3
    check_rows(feedback_by_row(rows))
    check_summary(results._summary_results["results"])
    assert network_attempts == []


def _descendants(run: TracedRun) -> list[TracedRun]:
    found = []
    for child in run.child_runs:
        found += [child, *_descendants(child)]
    return found


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_steps_are_traced_under_the_evaluator_run(mode: str) -> None:
    model = judge()
    all_metrics = [
        Faithfulness(llm=model),
        AspectCritic(llm=model, name="has_date", criterion="The response gives a year."),
        AnswerCorrectness(llm=model, embeddings=ScriptedEmbeddings()),
    ]
    evs = evaluators(all_metrics)
    data = examples()[:1]
    with collect_runs() as collected:
        if mode == "sync":
            rows = list(
                evaluate(
                    app, data=data, evaluators=evs, client=offline_client(), upload_results=False
                )
            )
        else:
            results = await aevaluate(
                async_app, data=data, evaluators=evs, client=offline_client(), upload_results=False
            )
            rows = [row async for row in results]
    feedback = {r.key: r for r in rows[0]["evaluation_results"]["results"]}
    roots = {run.id: run for run in collected.traced_runs}
    expected_steps = {
        "faithfulness": {"decompose_claims", "verify_claims"},
        "has_date": {"judge_aspect"},
        "answer_correctness": {"decompose_claims", "verify_claims", "embed"},
    }
    for key, steps in expected_steps.items():
        # The feedback points at the evaluator's run, which is named after the key.
        evaluator_run = roots[feedback[key].source_run_id]  # type: ignore[index]
        assert evaluator_run.name == key
        assert evaluator_run.metadata["target_run_id"] == str(rows[0]["run"].id)
        names = {run.name for run in _descendants(evaluator_run)}
        assert steps <= names
        assert "judge-a" in names  # the panel's per-model run
    embed_runs = [
        run
        for run in _descendants(roots[feedback["answer_correctness"].source_run_id])  # type: ignore[index]
        if run.name == "embed"
    ]
    assert embed_runs and embed_runs[0].outputs is not None


def test_a_failing_judge_gives_error_feedback_with_the_failures() -> None:
    data = [Example(id=uuid.uuid4(), inputs={"question": "q"}, outputs={"answer": "r"})]
    rows = list(
        evaluate(
            lambda inputs: {"answer": "BOOM goes the judge.", "contexts": ["BOOM."]},
            data=data,
            evaluators=[Faithfulness(llm=judge(), name="grounded").as_evaluator()],
            client=offline_client(),
            upload_results=False,
        )
    )
    (result,) = rows[0]["evaluation_results"]["results"]
    assert result.key == "grounded"
    assert result.score is None
    assert (result.comment or "").startswith("AllModelsFailedError: grounded: every model failed")
    assert result.extra is not None and result.extra["error"] is True
    assert result.extra["excluded"] == [
        {
            "model": "judge-a",
            "step": "decompose_claims",
            "error": "judge is down",
            "error_type": "RuntimeError",
        }
    ]


def test_langsmith_keys_its_own_error_feedback_with_our_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Should the adapter itself ever raise, LangSmith still files the error under our key."""

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("adapter bug")

    # Patch the module through sys.modules, where the evaluator looks the function up.
    module = sys.modules["langchain_answer_metrics.adapters.langsmith.evaluators"]
    monkeypatch.setattr(module, "feedback_for", broken)
    evaluator = AspectCritic(llm=judge(), name="has_date", criterion="A year.").as_evaluator()
    assert evaluator.feedback_keys == ["has_date"]
    rows = list(
        evaluate(
            app,
            data=examples()[:1],
            evaluators=[evaluator],
            client=offline_client(),
            upload_results=False,
        )
    )
    (result,) = rows[0]["evaluation_results"]["results"]
    assert (result.key, result.score) == ("has_date", None)
    assert "adapter bug" in (result.comment or "")


def test_mapping_overrides_reach_the_sample() -> None:
    evaluator = Faithfulness(llm=judge()).as_evaluator(
        response=lambda outputs: outputs["result"]["text"],
        retrieved_contexts="outputs.sources",
        user_input="topic",
    )
    data = [Example(id=uuid.uuid4(), inputs={"topic": "towers"}, outputs={})]
    rows = list(
        evaluate(
            lambda inputs: {
                "result": {"text": "The tower is tall."},
                "sources": [Document(page_content="The tower is tall and old.")],
            },
            data=data,
            evaluators=[evaluator],
            client=offline_client(),
            upload_results=False,
        )
    )
    (result,) = rows[0]["evaluation_results"]["results"]
    assert result.score == 1.0
    sample = evaluator.sample_for(rows[0]["run"], rows[0]["example"])
    assert sample.user_input == "towers"
    assert sample.response == "The tower is tall."
    assert sample.retrieved_contexts == ["The tower is tall and old."]


def test_function_evaluators_follow_the_openevals_convention() -> None:
    metric = FactualCorrectness(llm=judge(), threshold=0.5)
    evaluate_fn = metric.as_function_evaluator()
    result = evaluate_fn(
        inputs={"question": "Where?"},
        outputs={"answer": "The Eiffel Tower is in Paris."},
        reference_outputs={"answer": "The Eiffel Tower is in Paris."},
    )
    assert result["key"] == "factual_correctness"
    assert result["score"] == 1.0
    assert result["metadata"]["passed"] is True
    assert "supported" in result["comment"]

    missing = evaluate_fn(inputs={"question": "Where?"}, outputs={"answer": "Paris."})
    assert missing["key"] == "factual_correctness" and missing["score"] is None
    assert "reference_outputs: []" in missing["comment"]


async def test_async_function_evaluator_directly() -> None:
    evaluate_fn = async_function_evaluator(
        AspectCritic(llm=judge(), name="has_date", criterion="A year.")
    )
    result = await evaluate_fn(outputs={"answer": "Built in 1889."})
    assert (result["key"], result["score"]) == ("has_date", 1.0)


async def test_function_evaluators_in_evaluate_and_aevaluate() -> None:
    sync_rows = list(
        evaluate(
            app,
            data=examples(),
            evaluators=[function_evaluator(Faithfulness(llm=judge()))],
            client=offline_client(),
            upload_results=False,
        )
    )
    async_results = await aevaluate(
        async_app,
        data=examples(),
        evaluators=[async_function_evaluator(Faithfulness(llm=judge()))],
        client=offline_client(),
        upload_results=False,
    )
    async_rows = [row async for row in async_results]
    for rows in (sync_rows, async_rows):
        by_row = feedback_by_row(rows)
        assert by_row["When was the Eiffel Tower built?"]["faithfulness"].score == 0.5
        assert by_row["Where is the Eiffel Tower?"]["faithfulness"].score == 1.0
        broken = by_row["Who built the Eiffel Tower?"]["faithfulness"]
        assert broken.score is None and "MissingFieldError" in (broken.comment or "")


def test_a_summary_evaluator_on_its_own_scores_the_rows_itself() -> None:
    metric = Faithfulness(llm=judge(), threshold=0.7)
    results = evaluate(
        app,
        data=examples(),
        summary_evaluators=[metric.as_summary_evaluator()],
        client=offline_client(),
        upload_results=False,
    )
    list(results)
    by_key = {result.key: result.score for result in results._summary_results["results"]}
    assert by_key["faithfulness_mean"] == pytest.approx(0.75)
    assert by_key["faithfulness_pass_rate"] == pytest.approx(0.5)
    assert by_key["faithfulness_error_count"] == 1


async def test_a_summary_evaluator_on_its_own_in_aevaluate() -> None:
    results = await aevaluate(
        async_app,
        data=examples(),
        summary_evaluators=[Faithfulness(llm=judge()).as_summary_evaluator()],
        client=offline_client(),
        upload_results=False,
    )
    assert len([row async for row in results]) == 3
    by_key = {result.key: result.score for result in results._summary_results["results"]}
    assert by_key["faithfulness_mean"] == pytest.approx(0.75)
    assert "faithfulness_pass_rate" not in by_key  # no threshold


def test_paired_summary_reuses_row_scores() -> None:
    model = judge()
    evaluator = Faithfulness(llm=model).as_evaluator()
    results = evaluate(
        app,
        data=examples(),
        evaluators=[evaluator],
        summary_evaluators=[evaluator.summary_evaluator],
        client=offline_client(),
        upload_results=False,
    )
    list(results)
    assert results._summary_results["results"][0].score == pytest.approx(0.75)
    # Two rows scored, two requests each: the summary asked the judge nothing more.
    assert len(model.calls) == 4


def test_evaluator_surface() -> None:
    evaluator = Faithfulness(llm=judge()).as_evaluator()
    assert isinstance(evaluator, RunEvaluator) and isinstance(evaluator, MetricEvaluator)
    assert evaluator.feedback_keys == ["faithfulness"]
    assert repr(evaluator) == "<MetricEvaluator faithfulness>"
    assert evaluator.summary_evaluator.__name__ == "faithfulness_summary"
    with pytest.raises(ValueError, match="share the feedback key"):
        evaluators([Faithfulness(llm=judge()), Faithfulness(llm=judge())])
    with pytest.raises(TypeError, match="unexpected keyword argument 'answer'"):
        Faithfulness(llm=judge()).as_evaluator(answer="x")
