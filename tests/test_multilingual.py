"""Russian and Chinese texts flow through every step unchanged and stay in their language."""

from __future__ import annotations

import pytest
from support import fact_judge, user_prompts

from langchain_answer_metrics import (
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    SemanticSimilarity,
)
from langchain_answer_metrics.testing.scripted import (
    ScriptedChatModel,
    ScriptedEmbeddings,
    numbered_claims,
    prompt_section,
)

RU_QUESTION = "Где и когда родился Эйнштейн?"
RU_REFERENCE = "Эйнштейн родился в Германии в 1879 году."
RU_RESPONSE = "Эйнштейн родился в Испании в 1879 году. Он получил Нобелевскую премию."
RU_CLAIMS = {
    RU_RESPONSE: [
        "Эйнштейн родился в Испании.",
        "Эйнштейн родился в 1879 году.",
        "Эйнштейн получил Нобелевскую премию.",  # "Он" resolved to the entity
    ],
    RU_REFERENCE: ["Эйнштейн родился в Германии.", "Эйнштейн родился в 1879 году."],
}

ZH_QUESTION = "爱因斯坦是在哪里、什么时候出生的？"
ZH_REFERENCE = "爱因斯坦于1879年出生在德国。"
ZH_RESPONSE = "爱因斯坦于1879年出生在西班牙。他获得了诺贝尔奖。"
ZH_CLAIMS = {
    ZH_RESPONSE: ["爱因斯坦出生在西班牙。", "爱因斯坦于1879年出生。", "爱因斯坦获得了诺贝尔奖。"],
    ZH_REFERENCE: ["爱因斯坦出生在德国。", "爱因斯坦于1879年出生。"],
}

LANGUAGES = {
    "ru": (RU_QUESTION, RU_RESPONSE, RU_REFERENCE, RU_CLAIMS),
    "zh": (ZH_QUESTION, ZH_RESPONSE, ZH_REFERENCE, ZH_CLAIMS),
}


def _texts(judge: ScriptedChatModel, schema: str, section: str) -> list[str]:
    return [prompt_section(messages, section) for name, messages in judge.calls if name == schema]


@pytest.mark.parametrize("language", list(LANGUAGES))
async def test_factual_correctness_keeps_texts_and_claims_in_their_language(
    language: str,
) -> None:
    question, response, reference, claims = LANGUAGES[language]
    judge = fact_judge(claims=claims)

    result = await FactualCorrectness(llm=judge).ainvoke(
        {"user_input": question, "response": response, "reference": reference}
    )

    # precision 1/3, recall 1/2 -> F1 = 2 * 1/6 / (5/6) = 0.4
    model = result.details["models"]["judge-a"]
    assert model["precision"] == pytest.approx(1 / 3)
    assert model["recall"] == pytest.approx(1 / 2)
    assert result.score == pytest.approx(0.4)

    # The exact original texts reach the model, word for word.
    decompose_prompts = user_prompts(judge, "ClaimList")
    assert any(response in prompt for prompt in decompose_prompts)
    assert any(reference in prompt for prompt in decompose_prompts)
    assert sorted(_texts(judge, "ClaimList", "text")) == sorted([response, reference])
    assert question in _texts(judge, "ClaimList", "question")
    assert sorted(_texts(judge, "ClaimVerdicts", "source")) == sorted([reference, response])
    verified = [
        numbered_claims(messages) for name, messages in judge.calls if name == "ClaimVerdicts"
    ]
    assert sorted(verified) == sorted([claims[response], claims[reference]])

    # The claims stay in the original language in the details and the reason.
    assert [c["claim"] for c in model["response_claims"]] == claims[response]
    assert [c["claim"] for c in model["reference_claims"]] == claims[reference]
    assert [c["verdict"] for c in model["response_claims"]] == ["neutral", "supported", "neutral"]
    assert claims[response][0] in result.reason


@pytest.mark.parametrize("language", list(LANGUAGES))
async def test_faithfulness_passes_every_context_unchanged(language: str) -> None:
    question, response, reference, claims = LANGUAGES[language]
    extra_context = "Он был физиком." if language == "ru" else "他是一位物理学家。"
    judge = fact_judge(claims=claims)

    result = await Faithfulness(llm=judge).ainvoke(
        {
            "user_input": question,
            "response": response,
            "retrieved_contexts": [reference, extra_context],
        }
    )

    assert result.score == pytest.approx(1 / 3)
    (source,) = _texts(judge, "ClaimVerdicts", "source")
    assert reference in source and extra_context in source
    assert [c["claim"] for c in result.details["models"]["judge-a"]["response_claims"]] == (
        claims[response]
    )


@pytest.mark.parametrize(
    ("criterion", "response"),
    [
        ("Ответ должен содержать конкретный год.", RU_RESPONSE),
        ("回答必须包含具体的年份。", ZH_RESPONSE),
    ],
)
async def test_aspect_critic_sends_criterion_and_response_unchanged(
    criterion: str, response: str
) -> None:
    judge = fact_judge(votes=["PASS", "FAIL", "PASS"])
    critic = AspectCritic(llm=judge, name="год", criterion=criterion, strictness=3)

    result = await critic.ainvoke({"response": response})

    assert result.key == "год"
    assert result.score == 1.0
    for _, messages in judge.calls:
        assert prompt_section(messages, "criterion") == criterion
        assert prompt_section(messages, "response") == response
        assert response in str(messages[-1].content)


async def test_semantic_similarity_embeds_the_exact_texts() -> None:
    embeddings = ScriptedEmbeddings({RU_RESPONSE: [1.0, 0.0], ZH_RESPONSE: [0.6, 0.8]})
    result = await SemanticSimilarity(embeddings=embeddings).ainvoke(
        {"response": RU_RESPONSE, "reference": ZH_RESPONSE}
    )
    assert embeddings.requests == [[RU_RESPONSE, ZH_RESPONSE]]
    assert result.score == pytest.approx(0.6)


async def test_long_chinese_text_is_chunked_on_sentence_boundaries() -> None:
    sentences = ["爱因斯坦出生在德国。", "他获得了诺贝尔奖。", "他后来移居美国。"]
    text = "".join(sentences)
    embeddings = ScriptedEmbeddings(
        {
            sentences[0]: [1.0, 0.0],
            sentences[1]: [0.0, 1.0],
            sentences[2]: [1.0, 1.0],
            "短。": [1.0, 0.5],
        }
    )
    # 8 to 10 characters a sentence: a token each (the estimate's CJK rule, as real
    # tokenizers count them, not 3 a token); two sentences would be over 10.
    metric = SemanticSimilarity(embeddings=embeddings, max_tokens=10)

    result = await metric.ainvoke({"response": text, "reference": "短。"})

    (request,) = embeddings.requests
    assert request[:-1] == sentences
    # mean of the chunk vectors = [2/3, 2/3], parallel to [1, 1] -> cosine with [1, .5]
    assert result.score == pytest.approx(1.5 / (2**0.5 * 1.25**0.5))
