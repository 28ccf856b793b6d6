"""The judge panel: aggregation, failing models, re-asks of malformed output, usage."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from pydantic import ValidationError
from support import (
    EINSTEIN_CLAIMS,
    EINSTEIN_REFERENCE,
    EINSTEIN_RESPONSE,
    REASK_MARK,
    fact_judge,
    fact_responder,
    is_reask,
)

from langchain_answer_metrics import (
    AllModelsFailedError,
    AnswerCorrectness,
    AnswerMetric,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    Judge,
    SemanticSimilarity,
)
from langchain_answer_metrics.judging.panel import aggregate
from langchain_answer_metrics.testing.scripted import (
    Reply,
    Responder,
    ScriptedChatModel,
    ScriptedEmbeddings,
    numbered_claims,
)

EINSTEIN = {"response": EINSTEIN_RESPONSE, "reference": EINSTEIN_REFERENCE}
ERROR = "judge exploded"


def failing_at(schema: str, **script: Any) -> Responder:
    """Answer like a fact judge, but raise on every request for ``schema``."""
    good = fact_responder(**script)

    def reply(name: str, messages: list[BaseMessage]) -> Reply:
        return RuntimeError(ERROR) if name == schema else good(name, messages)

    return reply


def until_reasked(
    schema: str, bad: Callable[[list[BaseMessage]], Reply], **script: Any
) -> Responder:
    """Give the ``bad`` reply to ``schema`` until the request is a re-ask."""
    good = fact_responder(**script)

    def reply(name: str, messages: list[BaseMessage]) -> Reply:
        if name == schema and not is_reask(messages):
            return bad(messages)
        return good(name, messages)

    return reply


def always(schema: str, bad: Callable[[list[BaseMessage]], Reply], **script: Any) -> Responder:
    good = fact_responder(**script)

    def reply(name: str, messages: list[BaseMessage]) -> Reply:
        return bad(messages) if name == schema else good(name, messages)

    return reply


def not_json(_: list[BaseMessage]) -> Reply:
    return '{"claims": ["unterminated'


def model(responder: Responder, name: str, **options: Any) -> ScriptedChatModel:
    return ScriptedChatModel(responder=responder, model=name, **options)


# --- aggregation --------------------------------------------------------------------------

FOUR_FACTS = "Fact one holds. Fact two holds. Fact three holds. Fact four holds."
FOUR_CLAIMS = ["Fact one holds.", "Fact two holds.", "Fact three holds.", "Fact four holds."]


def supports_first(count: int, name: str) -> ScriptedChatModel:
    """A judge that supports only the first ``count`` of the four claims."""
    return fact_judge(name, verdicts={claim: "neutral" for claim in FOUR_CLAIMS[count:]})


@pytest.mark.parametrize(
    ("aggregation", "expected"),
    [("mean", (1.0 + 0.25 + 0.5) / 3), ("median", 0.5), ("min", 0.25), ("max", 1.0)],
)
async def test_aggregation_across_judges(aggregation: str, expected: float) -> None:
    judges = [
        supports_first(4, "judge-a"),
        supports_first(1, "judge-b"),
        supports_first(2, "judge-c"),
    ]
    metric = Faithfulness(llm=judges, aggregation=aggregation)

    result = await metric.ainvoke({"response": FOUR_FACTS, "retrieved_contexts": [FOUR_FACTS]})

    assert result.per_model == {"judge-a": 1.0, "judge-b": 0.25, "judge-c": 0.5}
    assert result.score == pytest.approx(expected)
    assert "per model: judge-a=1.00, judge-b=0.25, judge-c=0.50" in result.reason


@pytest.mark.parametrize(
    ("aggregation", "expected"),
    [("mean", 0.6), ("median", 0.6), ("min", 0.2), ("max", 1.0)],
)
async def test_aggregation_across_embedding_models(aggregation: str, expected: float) -> None:
    text_a, text_b = "first", "second"
    embeddings = [
        ScriptedEmbeddings({text_a: [1.0, 0.0], text_b: [x, (1 - x * x) ** 0.5]}, model=f"emb-{x}")
        for x in (0.2, 0.6, 1.0)
    ]
    metric = SemanticSimilarity(embeddings=embeddings, aggregation=aggregation)

    result = await metric.ainvoke({"response": text_a, "reference": text_b})

    assert result.score == pytest.approx(expected)


def test_default_aggregation_is_mean() -> None:
    assert FactualCorrectness(llm=fact_judge()).aggregation == "mean"


@pytest.mark.parametrize(
    "build",
    [
        lambda how: FactualCorrectness(llm=fact_judge(), aggregation=how),
        lambda how: AspectCritic(llm=fact_judge(), criterion="c", aggregation=how),
        lambda how: SemanticSimilarity(embeddings=ScriptedEmbeddings(), aggregation=how),
    ],
)
def test_invalid_aggregation_is_rejected(build: Callable[[str], AnswerMetric]) -> None:
    with pytest.raises(ValidationError, match="aggregation"):
        build("average")


def test_aggregate_rejects_unknown_strategy() -> None:
    with pytest.raises(ValueError, match="aggregation must be one of"):
        aggregate([0.5], "mode")  # type: ignore[arg-type]


# --- failing models -----------------------------------------------------------------------


def _factual(judges: list[ScriptedChatModel]) -> AnswerMetric:
    return FactualCorrectness(llm=judges, mode="precision")


def _aspect(judges: list[ScriptedChatModel]) -> AnswerMetric:
    return AspectCritic(llm=judges, name="polite", criterion="The response is polite.")


@pytest.mark.parametrize(
    ("build", "schema", "step", "good_score"),
    [
        (_factual, "ClaimList", "decompose_claims", 0.5),
        (_factual, "ClaimVerdicts", "verify_claims", 0.5),
        (_aspect, "AspectVerdict", "judge_aspect", 1.0),
    ],
)
async def test_failing_judge_is_excluded_with_its_step(
    build: Callable[[list[ScriptedChatModel]], AnswerMetric],
    schema: str,
    step: str,
    good_score: float,
) -> None:
    good = fact_judge("good", claims=EINSTEIN_CLAIMS)
    bad = model(failing_at(schema, claims=EINSTEIN_CLAIMS), "bad")

    result = await build([good, bad]).ainvoke(EINSTEIN)

    assert result.score == good_score
    assert result.per_model == {"good": good_score}
    assert [(f.model, f.step, f.error_type) for f in result.excluded] == [
        ("bad", step, "RuntimeError")
    ]
    assert ERROR in result.excluded[0].error
    assert bad.calls_for(schema) >= 1
    # What the failing judge spent before it failed (its replies, not the failed call)
    # is still counted; a judge that failed at its first call spent nothing.
    answered = len(bad.calls) - bad.calls_for(schema)
    assert set(result.usage) == ({"good", "bad"} if answered else {"good"})
    if answered:
        assert result.usage["bad"].requests == result.excluded[0].usage.requests == answered


async def test_judge_failing_to_decompose_is_left_out_of_verification() -> None:
    good = fact_judge("good", claims=EINSTEIN_CLAIMS)
    bad = model(failing_at("ClaimList"), "bad")

    await FactualCorrectness(llm=[good, bad], mode="precision").ainvoke(EINSTEIN)

    assert bad.calls_for("ClaimList") == 1
    assert bad.calls_for("ClaimVerdicts") == 0


async def test_failing_embedding_model_is_excluded_at_embed() -> None:
    good = ScriptedEmbeddings({"a": [1.0, 0.0], "b": [0.6, 0.8]}, model="emb-good")
    bad = ScriptedEmbeddings(model="emb-bad", fail_with=RuntimeError("quota exhausted"))

    result = await SemanticSimilarity(embeddings=[good, bad]).ainvoke(
        {"response": "a", "reference": "b"}
    )

    assert result.score == pytest.approx(0.6)
    assert result.per_model == {"emb-good": pytest.approx(0.6)}
    assert [(f.model, f.step, f.error_type, f.error) for f in result.excluded] == [
        ("emb-bad", "embed", "RuntimeError", "quota exhausted")
    ]


async def test_answer_correctness_reports_failures_of_either_component() -> None:
    judges = [fact_judge("good", claims=EINSTEIN_CLAIMS), model(failing_at("ClaimList"), "bad")]
    embeddings = [
        ScriptedEmbeddings(
            {EINSTEIN_RESPONSE: [1.0, 0.0], EINSTEIN_REFERENCE: [0.6, 0.8]}, model="emb-good"
        ),
        ScriptedEmbeddings(model="emb-bad", fail_with=RuntimeError("down")),
    ]
    result = await AnswerCorrectness(llm=judges, embeddings=embeddings).ainvoke(EINSTEIN)

    assert result.score == pytest.approx(0.75 * 0.5 + 0.25 * 0.6)
    assert sorted((f.model, f.step) for f in result.excluded) == [
        ("factual_correctness/bad", "decompose_claims"),
        ("semantic_similarity/emb-bad", "embed"),
    ]


async def test_every_judge_failing_raises_with_each_failure() -> None:
    first = model(failing_at("ClaimList"), "bad-a")
    second = model(failing_at("ClaimVerdicts"), "bad-b")

    with pytest.raises(AllModelsFailedError) as caught:
        await FactualCorrectness(llm=[first, second], mode="precision").ainvoke(EINSTEIN)

    error = caught.value
    assert error.metric == "factual_correctness"
    assert [(f.model, f.step) for f in error.failures] == [
        ("bad-a", "decompose_claims"),
        ("bad-b", "verify_claims"),
    ]
    message = str(error)
    assert "bad-a failed at decompose_claims" in message
    assert "bad-b failed at verify_claims" in message
    assert ERROR in message


def test_every_embedding_model_failing_raises_from_sync_invoke() -> None:
    embeddings = [
        ScriptedEmbeddings(model="emb-a", fail_with=RuntimeError("a down")),
        ScriptedEmbeddings(model="emb-b", fail_with=ConnectionError("b down")),
    ]
    with pytest.raises(AllModelsFailedError) as caught:
        SemanticSimilarity(embeddings=embeddings).invoke({"response": "x", "reference": "y"})

    assert [(f.model, f.step, f.error_type) for f in caught.value.failures] == [
        ("emb-a", "embed", "RuntimeError"),
        ("emb-b", "embed", "ConnectionError"),
    ]


# --- malformed output and re-asks ---------------------------------------------------------


def _short_verdicts(messages: list[BaseMessage]) -> Reply:
    return {"verdicts": [{"index": 1, "verdict": "supported", "reason": "only one"}]}


def _missing_fields(messages: list[BaseMessage]) -> Reply:
    return {"verdicts": [{"index": i} for i, _ in enumerate(numbered_claims(messages), 1)]}


@pytest.mark.parametrize(
    ("schema", "bad", "problem"),
    [
        ("ClaimList", not_json, "no valid ClaimList"),
        ("ClaimList", lambda _: {"statements": ["Einstein was born."]}, "no valid ClaimList"),
        ("ClaimVerdicts", not_json, "no valid ClaimVerdicts"),
        ("ClaimVerdicts", _missing_fields, "no valid ClaimVerdicts"),
        ("ClaimVerdicts", _short_verdicts, "there are 2 claims"),
    ],
)
async def test_malformed_reply_is_reasked_then_succeeds(
    schema: str, bad: Callable[[list[BaseMessage]], Reply], problem: str
) -> None:
    # Response claims: supported first, so trimming to one verdict would score 1.0.
    claims = {EINSTEIN_RESPONSE: ["Einstein was born in 1879.", "Einstein was born in Spain."]}
    judge = model(until_reasked(schema, bad, claims=claims), "judge-a")

    result = await FactualCorrectness(llm=judge, mode="precision").ainvoke(EINSTEIN)

    assert result.score == 0.5
    assert judge.calls_for(schema) == 2
    first, second = [messages for name, messages in judge.calls if name == schema]
    # The re-ask repeats the original prompt and says what was wrong.
    assert second[: len(first)] == first
    assert len(second) == len(first) + 1
    assert REASK_MARK in str(second[-1].content)
    assert problem in str(second[-1].content)
    assert result.usage["judge-a"].requests == 3


# One verdict per claim but numbered wrong ([1, 1], [2, 3]) is taken in order, not
# re-asked: tests/test_tolerant_replies.py.
@pytest.mark.parametrize("verdict_indices", [[1], [1, 2, 3], []], ids=str)
async def test_verdicts_not_lining_up_with_claims_are_reasked(verdict_indices: list[int]) -> None:
    def bad(_: list[BaseMessage]) -> Reply:
        return {
            "verdicts": [
                {"index": i, "verdict": "supported", "reason": "r"} for i in verdict_indices
            ]
        }

    judge = model(until_reasked("ClaimVerdicts", bad, claims=EINSTEIN_CLAIMS), "judge-a")
    result = await FactualCorrectness(llm=judge, mode="precision").ainvoke(EINSTEIN)

    assert result.score == 0.5
    assert judge.calls_for("ClaimVerdicts") == 2
    reask = str(judge.calls[-1][1][-1].content)
    assert "Give exactly one verdict per claim" in reask


async def test_invalid_aspect_verdict_is_reasked() -> None:
    def bad(_: list[BaseMessage]) -> Reply:
        return {"verdict": "MAYBE", "reason": "unsure"}

    judge = model(until_reasked("AspectVerdict", bad), "judge-a")
    result = await AspectCritic(llm=judge, criterion="Polite.").ainvoke({"response": "Hi."})

    assert result.score == 1.0
    assert judge.calls_for("AspectVerdict") == 2
    assert REASK_MARK in str(judge.calls[-1][1][-1].content)


@pytest.mark.parametrize("max_reasks", [0, 1, 3])
async def test_persistent_malformed_output_fails_after_max_reasks_plus_one(
    max_reasks: int,
) -> None:
    chat = model(always("ClaimList", not_json), "judge-a")
    judge = Judge(model=chat, max_reasks=max_reasks)

    with pytest.raises(AllModelsFailedError) as caught:
        await FactualCorrectness(llm=judge, mode="precision").ainvoke(EINSTEIN)

    assert chat.calls_for("ClaimList") == max_reasks + 1
    assert chat.calls_for("ClaimVerdicts") == 0
    (failure,) = caught.value.failures
    assert (failure.model, failure.step, failure.error_type) == (
        "judge-a",
        "decompose_claims",
        "StructuredOutputError",
    )
    assert f"after {max_reasks + 1} attempts" in failure.error


async def test_default_judge_makes_three_attempts() -> None:
    chat = model(always("AspectVerdict", not_json), "judge-a")
    with pytest.raises(AllModelsFailedError):
        await AspectCritic(llm=chat, criterion="Polite.").ainvoke({"response": "Hi."})
    assert chat.calls_for("AspectVerdict") == 3


async def test_persistently_short_verdict_list_is_never_trimmed() -> None:
    claims = {EINSTEIN_RESPONSE: ["Einstein was born in 1879.", "Einstein was born in Spain."]}
    trimming = model(always("ClaimVerdicts", _short_verdicts, claims=claims), "short")
    good = fact_judge("good", claims=claims, verdicts={"Einstein was born in Spain.": "neutral"})

    result = await FactualCorrectness(llm=[good, trimming], mode="precision").ainvoke(EINSTEIN)

    # The short judge would score 1.0 on its one verdict; it is excluded instead.
    assert result.per_model == {"good": 0.5}
    assert result.score == 0.5
    assert [(f.model, f.step, f.error_type) for f in result.excluded] == [
        ("short", "verify_claims", "StructuredOutputError")
    ]
    assert trimming.calls_for("ClaimVerdicts") == 3


# --- usage and concurrency ----------------------------------------------------------------


def _prompt_tokens(messages: list[BaseMessage]) -> int:
    return sum(len(str(message.content)) for message in messages) // 4


async def test_usage_is_recorded_per_model() -> None:
    first = fact_judge("judge-a", claims=EINSTEIN_CLAIMS)
    second = ScriptedChatModel(
        responder=fact_responder(claims=EINSTEIN_CLAIMS), model="judge-b", tokens_per_reply=7
    )
    result = await FactualCorrectness(llm=[first, second], mode="precision").ainvoke(EINSTEIN)

    for chat, per_reply in ((first, 10), (second, 7)):
        usage = result.usage[chat.model]
        expected_input = sum(_prompt_tokens(messages) for _, messages in chat.calls)
        assert usage.requests == 2
        assert usage.output_tokens == 2 * per_reply
        assert usage.input_tokens == expected_input > 0
        assert usage.total_tokens == expected_input + 2 * per_reply


async def test_models_and_votes_run_concurrently() -> None:
    shared = fact_judge("judge-a", latency=0.02, votes=["PASS", "FAIL", "PASS"])
    critic = AspectCritic(llm=[shared, shared], criterion="Polite.", strictness=3)

    result = await critic.ainvoke({"response": "Hi."})

    # The same model twice gets unique labels; 2 models x 3 votes all in flight at once.
    assert set(result.per_model) == {"judge-a", "judge-a#2"}
    assert shared.max_in_flight == 6


async def test_f1_runs_both_directions_concurrently() -> None:
    judge = fact_judge(claims=EINSTEIN_CLAIMS, latency=0.02)
    await FactualCorrectness(llm=judge, mode="f1").ainvoke(EINSTEIN)
    assert judge.max_in_flight == 2


class DropsAVector(ScriptedEmbeddings):
    """Returns one vector fewer than it was given texts."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return super().embed_documents(texts)[:-1]


@pytest.mark.parametrize("batched", [False, True])
def test_an_embedder_returning_too_few_vectors_is_excluded(batched: bool) -> None:
    good, bad = ScriptedEmbeddings(model="good-emb"), DropsAVector(model="bad-emb")
    metric = SemanticSimilarity(embeddings=[good, bad])
    sample = {"response": "A cat.", "reference": "A dog."}

    result = metric.batch([sample])[0] if batched else metric.invoke(sample)

    assert list(result.per_model) == ["good-emb"]
    [failure] = result.excluded
    assert (failure.model, failure.step) == ("bad-emb", "embed")
    assert "returned 1 vectors for 2 texts" in failure.error
