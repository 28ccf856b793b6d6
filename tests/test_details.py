"""Typed details: one model per metric told apart by ``kind``, read like the dicts they
replace, dumped to the same JSON plus ``kind``, and read back from older dumps."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support import EINSTEIN_CLAIMS, EINSTEIN_REFERENCE, EINSTEIN_RESPONSE, fact_judge, year_judge

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    MetricResult,
    SemanticSimilarity,
)
from langchain_answer_metrics.core.result import (
    AnswerCorrectnessDetails,
    AspectCriticDetails,
    ClaimVerdictDetail,
    FactualCorrectnessDetails,
    FactualCorrectnessModelDetails,
    FaithfulnessDetails,
    SemanticSimilarityDetails,
    infer_kind,
)
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings

EINSTEIN = {"response": EINSTEIN_RESPONSE, "reference": EINSTEIN_REFERENCE}
EMBEDDINGS = {EINSTEIN_RESPONSE: [1.0, 0.0], EINSTEIN_REFERENCE: [0.6, 0.8]}


def without_kind(value: Any) -> Any:
    """``value`` with every ``kind`` key of details removed: the dump of earlier versions."""
    if isinstance(value, dict):
        return {key: without_kind(item) for key, item in value.items() if key != "kind"}
    if isinstance(value, list):
        return [without_kind(item) for item in value]
    return value


async def results() -> dict[str, MetricResult]:
    judge = fact_judge(claims=EINSTEIN_CLAIMS)
    embeddings = ScriptedEmbeddings(EMBEDDINGS, model="emb-a")
    contexts = {**EINSTEIN, "retrieved_contexts": [EINSTEIN_REFERENCE]}
    return {
        "factual_correctness": await FactualCorrectness(llm=judge).ainvoke(EINSTEIN),
        "faithfulness": await Faithfulness(llm=judge).ainvoke(contexts),
        "aspect_critic": await AspectCritic(
            llm=year_judge(), name="has_year", criterion="Has a year.", strictness=3
        ).ainvoke(EINSTEIN),
        "semantic_similarity": await SemanticSimilarity(embeddings=embeddings).ainvoke(EINSTEIN),
        "answer_correctness": await AnswerCorrectness(llm=judge, embeddings=embeddings).ainvoke(
            EINSTEIN
        ),
    }


async def test_each_metric_has_its_details_model() -> None:
    outcomes = await results()
    expected = {
        "factual_correctness": FactualCorrectnessDetails,
        "faithfulness": FaithfulnessDetails,
        "aspect_critic": AspectCriticDetails,
        "semantic_similarity": SemanticSimilarityDetails,
        "answer_correctness": AnswerCorrectnessDetails,
    }
    for kind, result in outcomes.items():
        assert type(result.details) is expected[kind]
        assert result.details.kind == kind  # type: ignore[union-attr]
        assert result.model_dump()["details"]["kind"] == kind

    factual = outcomes["factual_correctness"].details
    assert isinstance(factual, FactualCorrectnessDetails)
    claims = factual.models["judge-a"].response_claims
    assert claims is not None and all(isinstance(claim, ClaimVerdictDetail) for claim in claims)
    votes = outcomes["aspect_critic"].details
    assert isinstance(votes, AspectCriticDetails)
    assert votes.models["judge-a"].votes == ["PASS", "PASS", "PASS"]
    both = outcomes["answer_correctness"].details
    assert isinstance(both, AnswerCorrectnessDetails)
    assert isinstance(both.factual_correctness.details, FactualCorrectnessDetails)
    assert isinstance(both.semantic_similarity.details, SemanticSimilarityDetails)


async def test_details_dump_to_the_keys_of_earlier_versions_plus_kind() -> None:
    outcomes = await results()
    shapes = {kind: list(result.model_dump()["details"]) for kind, result in outcomes.items()}
    assert shapes == {
        "factual_correctness": ["kind", "mode", "beta", "models"],
        "faithfulness": ["kind", "models"],
        "aspect_critic": ["kind", "criterion", "strictness", "models"],
        "semantic_similarity": ["kind", "threshold", "rescale_baseline", "long_text", "models"],
        "answer_correctness": ["kind", "weights", "factual_correctness", "semantic_similarity"],
    }
    per_model = {
        kind: list(result.model_dump()["details"].get("models", {}).get("judge-a", {}))
        for kind, result in outcomes.items()
    }
    assert per_model["factual_correctness"] == [
        "no_claims",
        "response_claims",
        "precision",
        "reference_claims",
        "recall",
    ]
    assert per_model["faithfulness"] == ["response_claims", "supported", "total", "no_claims"]
    assert per_model["aspect_critic"] == ["verdict", "votes", "reasons"]
    # plus how each text was embedded: pieces per text, chunked or not, how tokens counted
    assert list(outcomes["semantic_similarity"].model_dump()["details"]["models"]["emb-a"]) == [
        "cosine",
        "similarity",
        "pieces",
        "chunked",
        "token_count",
    ]


@pytest.mark.parametrize(("mode", "absent"), [("precision", "reference"), ("recall", "response")])
async def test_a_side_a_mode_does_not_check_is_absent(mode: str, absent: str) -> None:
    result = await FactualCorrectness(llm=fact_judge(claims=EINSTEIN_CLAIMS), mode=mode).ainvoke(
        EINSTEIN
    )
    model = result.details["models"]["judge-a"]
    assert f"{absent}_claims" not in model
    assert f"{absent}_claims" not in result.model_dump()["details"]["models"]["judge-a"]
    with pytest.raises(KeyError):
        model[f"{absent}_claims"]
    assert model.get(f"{absent}_claims", []) == []


async def test_details_read_like_dicts() -> None:
    outcomes = await results()
    factual = outcomes["factual_correctness"].details
    model = factual["models"]["judge-a"]
    assert [claim["verdict"] for claim in model["response_claims"]] == ["neutral", "supported"]
    assert model["precision"] == pytest.approx(0.5)
    assert "no_claims" in model and "votes" not in model
    assert dict(model["response_claims"][0]) == model["response_claims"][0].model_dump()
    assert factual.get("models") is factual.models and factual.get("nothing", 1) == 1
    both = outcomes["answer_correctness"].details
    assert both["factual_correctness"]["details"]["mode"] == "f1"
    assert both["weights"] == {"factual": 0.75, "semantic": 0.25}
    # Equal to the dict it dumps to, either way round.
    dumped = outcomes["aspect_critic"].model_dump()["details"]
    details = outcomes["aspect_critic"].details
    assert details == dumped and dumped == details


async def test_results_read_back_with_and_without_kind() -> None:
    for result in (await results()).values():
        line = result.model_dump_json()
        assert MetricResult.model_validate_json(line) == result
        older = without_kind(json.loads(line))
        read = MetricResult.model_validate(older)
        assert type(read.details) is type(result.details)
        assert read == result


def test_older_details_are_typed_by_their_keys_before_the_result_key() -> None:
    votes = {"models": {"j": {"verdict": "PASS", "votes": ["PASS"], "reasons": ["r"]}}}
    # An AspectCritic may be named like another metric: its details' keys decide.
    named = MetricResult(key="faithfulness", score=1.0, band="excellent", details=votes)
    assert isinstance(named.details, AspectCriticDetails)
    claims = {"models": {"j": {"response_claims": []}}}
    assert infer_kind(claims, "factual_correctness") == "factual_correctness"
    assert infer_kind(claims, "faithfulness") == "faithfulness"
    assert infer_kind(claims, "my_metric") == "faithfulness"
    assert infer_kind({"models": {"j": {"my_number": 3}}}, "my_metric") is None


def test_details_of_no_known_shape_stay_a_dict() -> None:
    own = {"models": {"j": {"my_number": 3}}, "setting": "x"}
    result = MetricResult(key="my_metric", score=0.5, band="moderate", details=own)
    assert result.details == own and type(result.details) is dict
    assert MetricResult(key="faithfulness", score=0.5, band="moderate").details == {}
    assert MetricResult.model_validate_json(result.model_dump_json()).details == own


def test_details_with_a_kind_are_checked() -> None:
    with pytest.raises(ValueError, match="verdict"):
        MetricResult(
            key="has_year",
            score=1.0,
            band="excellent",
            details={"kind": "aspect_critic", "models": {"j": {"votes": ["PASS"]}}},
        )


def test_a_bare_component_gets_its_key_and_band() -> None:
    details = AnswerCorrectnessDetails.model_validate(
        {"factual_correctness": {"score": 0.5}, "semantic_similarity": {"score": 0.9}}
    )
    assert details.semantic_similarity.key == "semantic_similarity"
    assert details.semantic_similarity.band == "excellent"
    assert "weights" not in details and "weights" not in details.model_dump()


def test_per_model_details_build_like_the_dicts_they_replace() -> None:
    model = FactualCorrectnessModelDetails(no_claims=["reference"], reference_claims=[], recall=0.0)
    assert dict(model) == {"no_claims": ["reference"], "reference_claims": [], "recall": 0.0}
    assert model.claims_by_side() == {"reference": []}
