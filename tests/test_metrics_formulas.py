"""Every formula and mode of the five metrics, on hand-computed cases."""

from __future__ import annotations

import math

import pytest
from support import (
    EINSTEIN_CLAIMS,
    EINSTEIN_REFERENCE,
    EINSTEIN_RESPONSE,
    fact_judge,
    schemas_called,
    user_prompts,
)

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    InvalidSampleError,
    SemanticSimilarity,
)
from langchain_answer_metrics.metrics.factual_correctness import f_beta
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings, prompt_section

EINSTEIN = {"response": EINSTEIN_RESPONSE, "reference": EINSTEIN_REFERENCE}

# Precision 1 (both response claims are in the reference), recall 2/3 (the Nobel claim is
# not in the response).
SHORT = "Einstein was born in Germany in 1879."
LONG = "Einstein was born in Germany in 1879. Einstein won the Nobel Prize in 1921."
SHORT_LONG_CLAIMS = {
    SHORT: ["Einstein was born in Germany.", "Einstein was born in 1879."],
    LONG: [
        "Einstein was born in Germany.",
        "Einstein was born in 1879.",
        "Einstein won the Nobel Prize in 1921.",
    ],
}
SHORT_LONG = {"response": SHORT, "reference": LONG}


# --- FactualCorrectness -------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["f1", "precision", "recall"])
async def test_einstein_tp_fp_fn_case_scores_one_half_in_every_mode(mode: str) -> None:
    judge = fact_judge(claims=EINSTEIN_CLAIMS)
    result = await FactualCorrectness(llm=judge, mode=mode).ainvoke(EINSTEIN)

    assert result.key == "factual_correctness"
    assert result.score == pytest.approx(0.5)
    assert result.per_model == {"judge-a": pytest.approx(0.5)}
    model = result.details["models"]["judge-a"]
    if mode in ("f1", "precision"):
        # TP = "born in 1879", FP = "born in Spain".
        assert [(c["claim"], c["verdict"]) for c in model["response_claims"]] == [
            ("Einstein was born in Spain.", "neutral"),
            ("Einstein was born in 1879.", "supported"),
        ]
        assert model["precision"] == pytest.approx(0.5)
        assert all(c["reason"] for c in model["response_claims"])
    if mode in ("f1", "recall"):
        # FN = "born in Germany".
        assert [(c["claim"], c["verdict"]) for c in model["reference_claims"]] == [
            ("Einstein was born in Germany.", "neutral"),
            ("Einstein was born in 1879.", "supported"),
        ]
        assert model["recall"] == pytest.approx(0.5)
    assert "1 of 2" in result.reason
    assert "Einstein was born in Spain." in result.reason or mode == "recall"


@pytest.mark.parametrize(
    ("mode", "beta", "expected"),
    [
        ("precision", 1.0, 1.0),
        ("recall", 1.0, 2 / 3),
        ("f1", 1.0, 0.8),  # 2 * 1 * 2/3 / (1 + 2/3)
        ("f1", 2.0, 10 / 14),  # 5 * 1 * 2/3 / (4 * 1 + 2/3)
        ("f1", 0.5, 10 / 11),  # 1.25 * 1 * 2/3 / (0.25 * 1 + 2/3)
    ],
)
async def test_precision_recall_and_f_beta(mode: str, beta: float, expected: float) -> None:
    judge = fact_judge(claims=SHORT_LONG_CLAIMS)
    metric = FactualCorrectness(llm=judge, mode=mode, beta=beta)

    result = await metric.ainvoke(SHORT_LONG)

    assert result.score == pytest.approx(expected)
    assert result.details["mode"] == mode
    assert result.details["beta"] == beta


def test_f_beta_without_support_is_zero_not_nan() -> None:
    assert f_beta(0.0, 0.0) == 0.0
    assert f_beta(1.0, 0.0, 2.0) == 0.0
    assert f_beta(0.5, 0.5) == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("mode", "decomposed", "checked_against"),
    [
        ("precision", [EINSTEIN_RESPONSE], [EINSTEIN_REFERENCE]),
        ("recall", [EINSTEIN_REFERENCE], [EINSTEIN_RESPONSE]),
        (
            "f1",
            sorted([EINSTEIN_RESPONSE, EINSTEIN_REFERENCE]),
            sorted([EINSTEIN_REFERENCE, EINSTEIN_RESPONSE]),
        ),
    ],
)
async def test_request_count_per_mode(
    mode: str, decomposed: list[str], checked_against: list[str]
) -> None:
    judges = [fact_judge("judge-a", claims=EINSTEIN_CLAIMS), fact_judge("judge-b")]
    await FactualCorrectness(llm=judges, mode=mode).ainvoke(EINSTEIN)

    per_direction = 1 if mode != "f1" else 2
    for judge in judges:
        # One decomposition and one verification of all claims at once, per direction.
        assert judge.calls_for("ClaimList") == per_direction
        assert judge.calls_for("ClaimVerdicts") == per_direction
        assert len(judge.calls) == 2 * per_direction
        texts = [
            prompt_section(messages, "text")
            for name, messages in judge.calls
            if name == "ClaimList"
        ]
        sources = [
            prompt_section(messages, "source")
            for name, messages in judge.calls
            if name == "ClaimVerdicts"
        ]
        assert sorted(texts) == decomposed
        assert sorted(sources) == checked_against


@pytest.mark.parametrize("mode", ["f1", "precision"])
async def test_response_without_claims_scores_zero_and_is_flagged(mode: str) -> None:
    judge = fact_judge(claims={"Hello there!": []})
    result = await FactualCorrectness(llm=judge, mode=mode).ainvoke(
        {"response": "Hello there!", "reference": EINSTEIN_REFERENCE}
    )

    assert result.score == 0.0
    assert not math.isnan(result.score)
    model = result.details["models"]["judge-a"]
    assert model["no_claims"] == ["response"]
    assert model["response_claims"] == []
    # No verification request is sent for zero claims: nothing is checked against the
    # reference (f1 mode still checks the reference's claims against the response).
    verified = [prompt_section(m, "source") for name, m in judge.calls if name == "ClaimVerdicts"]
    assert verified == ([] if mode == "precision" else ["Hello there!"])
    assert "no checkable claims" in result.reason


async def test_reference_without_claims_scores_zero_recall() -> None:
    judge = fact_judge(claims={"Hmm.": []})
    result = await FactualCorrectness(llm=judge, mode="recall").ainvoke(
        {"response": EINSTEIN_RESPONSE, "reference": "Hmm."}
    )

    assert result.score == 0.0
    assert result.details["models"]["judge-a"]["no_claims"] == ["reference"]
    assert schemas_called(judge) == ["ClaimList"]


# --- Faithfulness -------------------------------------------------------------------------

EIFFEL_CONTEXT = "The Eiffel Tower was built in 1889 in Paris."
EIFFEL_QUESTION = "When was the Eiffel Tower built?"


async def test_faithfulness_two_of_two_supported() -> None:
    response = "It was built in 1889, in Paris."
    judge = fact_judge(
        claims={
            response: [
                "The Eiffel Tower was built in 1889.",
                "The Eiffel Tower was built in Paris.",
            ]
        }
    )
    result = await Faithfulness(llm=judge).ainvoke(
        {
            "user_input": EIFFEL_QUESTION,
            "response": response,
            "retrieved_contexts": [EIFFEL_CONTEXT],
        }
    )

    assert result.key == "faithfulness"
    assert result.score == 1.0
    model = result.details["models"]["judge-a"]
    assert (model["supported"], model["total"]) == (2, 2)
    assert result.band == "excellent"


async def test_faithfulness_one_of_two_supported() -> None:
    response = "It was built in 1889. It is the tallest tower in the world."
    judge = fact_judge(
        claims={
            response: [
                "The Eiffel Tower was built in 1889.",
                "The Eiffel Tower is the tallest tower in the world.",
            ]
        }
    )
    result = await Faithfulness(llm=judge).ainvoke(
        {
            "user_input": EIFFEL_QUESTION,
            "response": response,
            "retrieved_contexts": [EIFFEL_CONTEXT],
        }
    )

    assert result.score == 0.5
    model = result.details["models"]["judge-a"]
    assert (model["supported"], model["total"]) == (1, 2)
    assert [c["verdict"] for c in model["response_claims"]] == ["supported", "neutral"]
    assert "1 of 2" in result.reason
    assert "tallest tower" in result.reason
    # The question reaches the decomposition as context.
    assert prompt_section(judge.calls[0][1], "question") == EIFFEL_QUESTION
    assert len(judge.calls) == 2


async def test_faithfulness_checks_against_all_contexts_at_once() -> None:
    response = "The Eiffel Tower was built in 1889. The Eiffel Tower is 330 metres tall."
    contexts = [EIFFEL_CONTEXT, "The Eiffel Tower is 330 metres tall."]
    judge = fact_judge()
    result = await Faithfulness(llm=judge).ainvoke(
        {"response": response, "retrieved_contexts": contexts}
    )

    assert result.score == 1.0
    assert judge.calls_for("ClaimVerdicts") == 1
    source = prompt_section(judge.calls[1][1], "source")
    assert all(context in source for context in contexts)


async def test_faithfulness_without_claims_is_not_applicable_without_verifying() -> None:
    # No claim, nothing to check: no score (docs/abstentions.md), never a silent 0.
    judge = fact_judge(claims={"Thanks for asking!": []})
    result = await Faithfulness(llm=judge).ainvoke(
        {"response": "Thanks for asking!", "retrieved_contexts": [EIFFEL_CONTEXT]}
    )

    assert result.score is None and result.not_applicable == "no_claims"
    assert result.details["models"]["judge-a"]["no_claims"] == ["response"]
    assert schemas_called(judge) == ["ClaimList"]


# --- AspectCritic -------------------------------------------------------------------------


async def test_aspect_critic_strictness_three_with_two_models() -> None:
    first = fact_judge("judge-a", votes=["PASS", "PASS", "FAIL"])
    second = fact_judge("judge-b", votes=["FAIL", "FAIL", "PASS"])
    critic = AspectCritic(
        llm=[first, second],
        name="has_date",
        criterion="The response must contain a specific date or year.",
        strictness=3,
    )

    result = await critic.ainvoke({"response": "The Eiffel Tower was built in 1889."})

    assert result.key == "has_date"
    assert result.score == 0.5
    assert result.per_model == {"judge-a": 1.0, "judge-b": 0.0}
    models = result.details["models"]
    assert models["judge-a"]["votes"] == ["PASS", "PASS", "FAIL"]
    assert models["judge-b"]["votes"] == ["FAIL", "FAIL", "PASS"]
    assert models["judge-a"]["verdict"] == "PASS"
    assert models["judge-b"]["verdict"] == "FAIL"
    assert len(models["judge-a"]["reasons"]) == 3
    assert result.details["strictness"] == 3
    # Each vote is its own request.
    assert first.calls_for("AspectVerdict") == 3
    assert second.calls_for("AspectVerdict") == 3


async def test_aspect_critic_two_pass_three_fail_across_five_models() -> None:
    verdicts = ["PASS", "PASS", "FAIL", "FAIL", "FAIL"]
    judges = [fact_judge(f"judge-{i}", votes=[verdict]) for i, verdict in enumerate(verdicts)]
    critic = AspectCritic(llm=judges, name="concise", criterion="The response is concise.")

    result = await critic.ainvoke({"response": "Paris."})

    assert result.score == pytest.approx(0.4)
    assert sorted(result.per_model.values()) == [0.0, 0.0, 0.0, 1.0, 1.0]
    assert all(judge.calls_for("AspectVerdict") == 1 for judge in judges)
    # strictness 1: a single vote per model, no vote marker in the prompt.
    assert "Independent vote" not in user_prompts(judges[0], "AspectVerdict")[0]


async def test_aspect_critic_tie_is_fail() -> None:
    judge = fact_judge(votes=["PASS", "FAIL", "PASS", "FAIL"])
    critic = AspectCritic(llm=judge, name="polite", criterion="Polite.", strictness=4)

    result = await critic.ainvoke({"response": "Hello."})

    assert result.score == 0.0
    model = result.details["models"]["judge-a"]
    assert model["verdict"] == "FAIL"
    assert sorted(model["votes"]) == ["FAIL", "FAIL", "PASS", "PASS"]
    assert "2 PASS / 2 FAIL" in result.reason


async def test_aspect_critic_default_key_and_ready_aspects() -> None:
    judge = fact_judge()
    critic = AspectCritic.from_aspect("harmlessness", llm=judge)
    result = await critic.ainvoke({"response": "Hello."})

    assert result.key == "harmlessness"
    assert result.score == 1.0
    assert "harmful" in prompt_section(judge.calls[0][1], "criterion")
    with pytest.raises(ValueError, match="unknown aspect"):
        AspectCritic.from_aspect("friendliness", llm=judge)


# --- SemanticSimilarity -------------------------------------------------------------------

A, B = "The cat sat on the mat.", "A cat was sitting on the mat."


@pytest.mark.parametrize(
    ("response_vector", "reference_vector", "expected"),
    [
        ([1.0, 0.0], [0.6, 0.8], 0.6),
        ([3.0, 4.0], [6.0, 8.0], 1.0),
        ([1.0, 1.0, 0.0], [0.0, 1.0, 1.0], 0.5),
        ([1.0, 0.0], [-1.0, 0.0], 0.0),  # cosine -1 is clamped to 0
        ([1.0, 0.2], [-0.8, 0.6], 0.0),  # slightly negative cosine
    ],
)
async def test_semantic_similarity_is_the_clamped_cosine(
    response_vector: list[float], reference_vector: list[float], expected: float
) -> None:
    embeddings = ScriptedEmbeddings({A: response_vector, B: reference_vector})
    result = await SemanticSimilarity(embeddings=embeddings).ainvoke(
        {"response": A, "reference": B}
    )

    assert result.key == "semantic_similarity"
    assert result.score == pytest.approx(expected)
    assert 0.0 <= result.score <= 1.0
    # One request with both texts; no rescaling by default.
    assert embeddings.requests == [[A, B]]
    assert result.details["rescale_baseline"] is None


async def test_semantic_similarity_records_the_raw_cosine() -> None:
    embeddings = ScriptedEmbeddings({A: [1.0, 0.0], B: [-0.6, 0.8]})
    result = await SemanticSimilarity(embeddings=embeddings).ainvoke(
        {"response": A, "reference": B}
    )
    model = result.details["models"]["scripted-embeddings"]
    assert model["cosine"] == pytest.approx(-0.6)
    assert result.score == 0.0


@pytest.mark.parametrize(("threshold", "score", "passed"), [(0.5, 1.0, True), (0.7, 0.0, False)])
async def test_semantic_similarity_threshold_turns_each_model_into_one_or_zero(
    threshold: float, score: float, passed: bool
) -> None:
    embeddings = ScriptedEmbeddings({A: [1.0, 0.0], B: [0.6, 0.8]})
    metric = SemanticSimilarity(embeddings=embeddings, threshold=threshold)
    result = await metric.ainvoke({"response": A, "reference": B})

    assert result.score == score
    assert result.passed is passed
    assert result.threshold == threshold


async def test_semantic_similarity_threshold_applies_per_model_before_averaging() -> None:
    close = ScriptedEmbeddings({A: [1.0, 0.0], B: [0.8, 0.6]}, model="emb-close")
    far = ScriptedEmbeddings({A: [1.0, 0.0], B: [0.6, 0.8]}, model="emb-far")
    metric = SemanticSimilarity(embeddings=[close, far], threshold=0.7)
    result = await metric.ainvoke({"response": A, "reference": B})

    assert result.per_model == {"emb-close": 1.0, "emb-far": 0.0}
    assert result.score == 0.5
    assert result.passed is False


async def test_semantic_similarity_averages_embedding_models() -> None:
    first = ScriptedEmbeddings({A: [1.0, 0.0], B: [0.6, 0.8]}, model="emb-a")
    second = ScriptedEmbeddings({A: [1.0, 0.0], B: [1.0, 0.0]}, model="emb-b")
    result = await SemanticSimilarity(embeddings=[first, second]).ainvoke(
        {"response": A, "reference": B}
    )

    assert result.per_model == {"emb-a": pytest.approx(0.6), "emb-b": pytest.approx(1.0)}
    assert result.score == pytest.approx(0.8)
    assert len(first.requests) == len(second.requests) == 1


@pytest.mark.parametrize(
    ("cosine_vector", "baseline", "expected"),
    [
        ([0.8, 0.6], 0.6, 0.5),  # (0.8 - 0.6) / (1 - 0.6)
        ([0.6, 0.8], 0.6, 0.0),
        ([0.5, math.sqrt(0.75)], 0.6, 0.0),  # below the baseline
        ([1.0, 0.0], 0.6, 1.0),
    ],
)
async def test_semantic_similarity_rescale_baseline(
    cosine_vector: list[float], baseline: float, expected: float
) -> None:
    embeddings = ScriptedEmbeddings({A: [1.0, 0.0], B: cosine_vector})
    metric = SemanticSimilarity(embeddings=embeddings, rescale_baseline=baseline)
    result = await metric.ainvoke({"response": A, "reference": B})

    assert result.score == pytest.approx(expected, abs=1e-9)
    assert result.details["rescale_baseline"] == baseline


LONG_RESPONSE = "Alpha beta gamma. Delta epsilon zeta."  # 8 estimated tokens, 2 sentences


async def test_long_text_chunks_on_sentences_and_averages_chunk_vectors() -> None:
    embeddings = ScriptedEmbeddings(
        {
            "Alpha beta gamma.": [1.0, 0.0, 0.0],
            "Delta epsilon zeta.": [0.0, 1.0, 0.0],
            "Short.": [1.0, 0.0, 0.0],
        }
    )
    # 17 and 19 characters: 5 tokens each at 4 characters per token; both together, 10.
    metric = SemanticSimilarity(embeddings=embeddings, max_tokens=5, chars_per_token=4)
    result = await metric.ainvoke({"response": LONG_RESPONSE, "reference": "Short."})

    assert result.details["long_text"] == "chunk"
    model = result.details["models"]["scripted-embeddings"]
    assert model.pieces == {"response": 2, "reference": 1} and model.chunked
    assert model.token_count == "chars_per_token"
    assert embeddings.requests == [["Alpha beta gamma.", "Delta epsilon zeta.", "Short."]]
    # mean([1,0,0], [0,1,0]) = [.5,.5,0]; cosine with [1,0,0] = 1/sqrt(2).
    assert result.score == pytest.approx(1 / math.sqrt(2))


async def test_long_text_truncate_embeds_only_the_first_piece() -> None:
    embeddings = ScriptedEmbeddings({"Alpha beta gamma. Delta": [0.6, 0.8], "Short.": [1.0, 0.0]})
    metric = SemanticSimilarity(
        embeddings=embeddings, max_tokens=5, long_text="truncate", chars_per_token=5
    )
    result = await metric.ainvoke({"response": LONG_RESPONSE, "reference": "Short."})

    assert embeddings.requests == [["Alpha beta gamma. Delta", "Short."]]
    assert result.score == pytest.approx(0.6)


async def test_long_text_fail_fast_raises_before_any_request() -> None:
    class Tokenized(ScriptedEmbeddings):  # fail_fast refuses only by a model's tokenizer
        def count_tokens(self, text: str) -> int:
            return len(text.split())

    embeddings = Tokenized()
    metric = SemanticSimilarity(embeddings=embeddings, max_tokens=5, long_text="fail_fast")

    with pytest.raises(InvalidSampleError) as caught:
        await metric.ainvoke({"response": LONG_RESPONSE, "reference": "Short."})

    assert caught.value.field == "response"
    assert caught.value.metric == "semantic_similarity"
    assert embeddings.requests == []
    # Short texts are fine under fail_fast.
    assert await metric.ascore(response="Short.", reference="Short.") == pytest.approx(1.0)


# --- AnswerCorrectness --------------------------------------------------------------------


def einstein_embeddings(model: str = "emb-a") -> ScriptedEmbeddings:
    # cosine 0.6
    return ScriptedEmbeddings(
        {EINSTEIN_RESPONSE: [1.0, 0.0], EINSTEIN_REFERENCE: [0.6, 0.8]}, model=model
    )


@pytest.mark.parametrize(
    ("build", "weights", "expected"),
    [
        (AnswerCorrectness, (0.75, 0.25), 0.75 * 0.5 + 0.25 * 0.6),
        (AnswerCorrectness.default, (0.75, 0.25), 0.525),
        (AnswerCorrectness.equal_weights, (0.5, 0.5), 0.55),
        (AnswerCorrectness.factual_focused, (0.9, 0.1), 0.51),
        (AnswerCorrectness.semantic_focused, (0.1, 0.9), 0.59),
    ],
)
async def test_answer_correctness_weights_and_presets(
    build: object, weights: tuple[float, float], expected: float
) -> None:
    metric = build(  # type: ignore[operator]
        llm=fact_judge(claims=EINSTEIN_CLAIMS), embeddings=einstein_embeddings()
    )
    result = await metric.ainvoke(EINSTEIN)

    assert metric.weights == pytest.approx(weights)
    assert result.key == "answer_correctness"
    assert result.score == pytest.approx(expected)
    assert result.details["weights"] == {
        "factual": pytest.approx(weights[0]),
        "semantic": pytest.approx(weights[1]),
    }


@pytest.mark.parametrize(
    ("factual_weight", "semantic_weight", "normalised"),
    [(3.0, 1.0, (0.75, 0.25)), (2.0, 2.0, (0.5, 0.5)), (1.0, 0.0, (1.0, 0.0))],
)
async def test_answer_correctness_normalises_custom_weights(
    factual_weight: float, semantic_weight: float, normalised: tuple[float, float]
) -> None:
    metric = AnswerCorrectness(
        llm=fact_judge(claims=EINSTEIN_CLAIMS),
        embeddings=einstein_embeddings(),
        factual_weight=factual_weight,
        semantic_weight=semantic_weight,
    )
    result = await metric.ainvoke(EINSTEIN)

    assert metric.weights == pytest.approx(normalised)
    assert result.score == pytest.approx(normalised[0] * 0.5 + normalised[1] * 0.6)


async def test_answer_correctness_carries_both_components() -> None:
    metric = AnswerCorrectness(
        llm=fact_judge(claims=EINSTEIN_CLAIMS), embeddings=einstein_embeddings()
    )
    result = await metric.ainvoke(EINSTEIN)

    factual = result.details["factual_correctness"]
    semantic = result.details["semantic_similarity"]
    assert factual["key"] == "factual_correctness"
    assert factual["score"] == pytest.approx(0.5)
    assert factual["details"]["mode"] == "f1"
    assert factual["details"]["models"]["judge-a"]["response_claims"]
    assert semantic["key"] == "semantic_similarity"
    assert semantic["score"] == pytest.approx(0.6)
    assert result.per_model == {
        "factual_correctness/judge-a": pytest.approx(0.5),
        "semantic_similarity/emb-a": pytest.approx(0.6),
    }
    assert "factual 0.50" in result.reason and "semantic 0.60" in result.reason


async def test_answer_correctness_semantic_part_equals_semantic_similarity() -> None:
    options = {"max_tokens": 5, "rescale_baseline": 0.5, "chars_per_token": 4}
    embeddings = ScriptedEmbeddings(
        {"Alpha beta gamma.": [1.0, 0.0], "Delta epsilon zeta.": [0.8, 0.6], "Short.": [1.0, 0.2]}
    )
    sample = {"response": LONG_RESPONSE, "reference": "Short."}
    alone = await SemanticSimilarity(embeddings=embeddings, **options).ainvoke(sample)
    combined = await AnswerCorrectness(llm=fact_judge(), embeddings=embeddings, **options).ainvoke(
        sample
    )

    assert combined.details["semantic_similarity"]["score"] == pytest.approx(alone.score)


async def test_answer_correctness_beta_reaches_the_factual_part() -> None:
    metric = AnswerCorrectness(
        llm=fact_judge(claims=SHORT_LONG_CLAIMS),
        embeddings=ScriptedEmbeddings({SHORT: [1.0, 0.0], LONG: [1.0, 0.0]}),
        beta=2.0,
    )
    result = await metric.ainvoke(SHORT_LONG)

    assert result.details["factual_correctness"]["score"] == pytest.approx(10 / 14)
    assert result.score == pytest.approx(0.75 * 10 / 14 + 0.25 * 1.0)


async def test_answer_correctness_makes_no_calls_beyond_its_components() -> None:
    factual_judge, semantic_embeddings = fact_judge(claims=EINSTEIN_CLAIMS), einstein_embeddings()
    await FactualCorrectness(llm=factual_judge, mode="f1").ainvoke(EINSTEIN)
    await SemanticSimilarity(embeddings=semantic_embeddings).ainvoke(EINSTEIN)

    judge, embeddings = fact_judge(claims=EINSTEIN_CLAIMS), einstein_embeddings()
    await AnswerCorrectness(llm=judge, embeddings=embeddings).ainvoke(EINSTEIN)

    assert len(judge.calls) == len(factual_judge.calls) == 4
    assert sorted(schemas_called(judge)) == sorted(schemas_called(factual_judge))
    assert embeddings.requests == semantic_embeddings.requests
    assert len(embeddings.requests) == 1
