"""Consensus and custom aggregation, the panel's spread on every result, and
AnswerCorrectness composed of configured components."""

from __future__ import annotations

import statistics

import pytest
from support import EINSTEIN_CLAIMS, EINSTEIN_REFERENCE, EINSTEIN_RESPONSE, fact_judge

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    JudgesDisagreeError,
    MetricError,
    SemanticSimilarity,
    evaluate,
)
from langchain_answer_metrics.judging.panel import aggregate
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

EINSTEIN = {"response": EINSTEIN_RESPONSE, "reference": EINSTEIN_REFERENCE}


def critic(*votes: str, **options: object) -> AspectCritic:
    judges = [fact_judge(f"judge-{i}", votes=[vote]) for i, vote in enumerate(votes, 1)]
    return AspectCritic(llm=judges, criterion="Polite.", **options)  # type: ignore[arg-type]


def test_consensus_within_tolerance_is_the_mean() -> None:
    assert aggregate([0.8, 0.85, 0.9], "consensus", tolerance=0.1) == pytest.approx(0.85)
    assert aggregate([0.5, 0.6], "consensus", tolerance=0.1) == pytest.approx(0.55)
    result = critic("PASS", "PASS", aggregation="consensus").invoke({"response": "Thanks!"})
    assert result.score == 1.0 and result.spread == 0.0


def test_consensus_beyond_tolerance_is_an_error_naming_the_scores() -> None:
    with pytest.raises(JudgesDisagreeError) as caught:
        aggregate({"a": 0.8, "b": 0.95}, "consensus", tolerance=0.1, metric="m")
    assert "a 0.80, b 0.95" in str(caught.value) and "tolerance 0.10" in str(caught.value)
    assert caught.value.scores == {"a": 0.8, "b": 0.95}
    metric = critic("PASS", "FAIL", aggregation="consensus")
    with pytest.raises(JudgesDisagreeError, match=r"judge-1 1\.00, judge-2 0\.00"):
        metric.invoke({"response": "Thanks!"})
    # In a run, the sample gets a metric error, never a silent mean.
    [row] = evaluate([{"response": "Thanks!"}], [metric])
    error = row.results["aspect_critic"]
    assert isinstance(error, MetricError) and error.error_type == "JudgesDisagreeError"
    # A wider tolerance accepts the same panel.
    loose = critic("PASS", "FAIL", aggregation="consensus", tolerance=1.0)
    assert loose.invoke({"response": "Thanks!"}).score == 0.5


def test_a_callable_aggregates_and_is_checked() -> None:
    result = critic("PASS", "FAIL", "FAIL", aggregation=statistics.median).invoke(
        {"response": "Hi"}
    )
    assert result.score == 0.0 and result.spread == 1.0
    with pytest.raises(ValueError, match="outside"):
        critic("PASS", aggregation=lambda scores: 2.0)
    with pytest.raises(TypeError, match="not a number"):
        critic("PASS", aggregation=lambda scores: "high")
    with pytest.raises(ValueError, match="consensus or a callable"):
        critic("PASS", aggregation="average")
    # Accepted at construction, wrong on a real panel: refused there too.
    odd = critic("PASS", "FAIL", aggregation=lambda s: sum(s) if s != [1.0, 0.0] else -1)
    with pytest.raises(ValueError, match="outside"):
        odd.invoke({"response": "Hi"})


def test_every_result_records_the_spread() -> None:
    assert critic("PASS").invoke({"response": "Hi"}).spread == 0.0
    assert critic("PASS", "FAIL", "PASS").invoke({"response": "Hi"}).spread == 1.0
    combined = AnswerCorrectness(
        llm=[fact_judge("a", claims=EINSTEIN_CLAIMS), fact_judge("b", claims=EINSTEIN_CLAIMS)],
        embeddings=ScriptedEmbeddings(),
    ).invoke(EINSTEIN)
    parts = combined.details["factual_correctness"], combined.details["semantic_similarity"]
    assert combined.spread == max(part.spread for part in parts)


def test_answer_correctness_takes_configured_components() -> None:
    precise = fact_judge("precise", claims=EINSTEIN_CLAIMS)
    factual = FactualCorrectness(llm=precise, mode="precision")
    semantic = SemanticSimilarity(embeddings=ScriptedEmbeddings(), threshold=0.5)
    metric = AnswerCorrectness(
        factual=factual, semantic=semantic, factual_weight=0.5, semantic_weight=0.5
    )
    assert metric.factual is factual and metric.semantic is semantic  # used as given
    result = metric.invoke(EINSTEIN)
    details = result.details
    assert details["factual_correctness"].details["mode"] == "precision"
    assert details["semantic_similarity"].score in (0.0, 1.0)  # its threshold applies
    assert result.score == pytest.approx(
        0.5 * details["factual_correctness"].score + 0.5 * details["semantic_similarity"].score
    )
    assert "factual_correctness/precise" in result.per_model
    assert all(
        key.startswith(("factual_correctness/", "semantic_similarity/")) for key in result.per_model
    )
    # Mixed: a configured factual component, the semantic one built from embeddings=.
    mixed = AnswerCorrectness(factual=factual, embeddings=ScriptedEmbeddings(), max_tokens=64)
    assert mixed.factual is factual and mixed.semantic.max_tokens == 64
    assert mixed.semantic is mixed.semantic  # built once


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"beta": 2.0}, "beta= does not apply with a configured factual="),
        ({"llm": "x"}, "llm= does not apply"),
        ({}, "give embeddings= or a configured semantic="),
    ],
)
def test_conflicting_settings_are_refused(options: dict[str, object], message: str) -> None:
    factual = FactualCorrectness(llm=fact_judge())
    with pytest.raises(ValueError, match=message):
        AnswerCorrectness(factual=factual, **options)  # type: ignore[arg-type]
