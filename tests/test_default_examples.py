"""The default few-shot examples, short references decomposed with their question, and
the provider's prompt cache counted and priced.

- The claim steps send their default examples (English, Russian, Chinese) between the
  system message and the data; a user's examples or prompt for a step replace them.
- Everything before the data message is the same for every request of a step, so a
  provider's automatic prompt caching can serve it.
- The reference is decomposed with the question: "Paris" for "What is the capital of
  France?" can become a claim; the same question and reference are still decomposed once.
- ``cached_input_tokens`` comes from the reply's ``input_token_details.cache_read`` and is
  priced at the cached-input price.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langchain_openai import ChatOpenAI
from support import fact_responder, prompt_section, user_prompts

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    SemanticSimilarity,
)
from langchain_answer_metrics.config.schema import ChatPrice
from langchain_answer_metrics.core.prices import BUILTIN_PRICES, Price
from langchain_answer_metrics.judging.default_examples import DEFAULT_EXAMPLES
from langchain_answer_metrics.judging.prompt_set import DEFAULT_STEP_PROMPTS
from langchain_answer_metrics.judging.prompts import DEFAULT_PROMPTS
from langchain_answer_metrics.run.runner import evaluate
from langchain_answer_metrics.run.spend import Pricing, tally
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.scripted import ScriptedChatModel, ScriptedEmbeddings

CJK = re.compile(r"[\u4e00-\u9fff]")
CYRILLIC = re.compile(r"[\u0400-\u04ff]")

QUESTION = "What is the capital of France?"
SHORT = {
    "user_input": QUESTION,
    "response": "The capital of France is Paris.",
    "reference": "Paris",
    "retrieved_contexts": ["Paris is the capital of France."],
}


def short_answer_responder() -> Any:
    """The scripted judge, except that a short text with a question becomes the claim it
    answers (what the default prompt asks a real judge to do; the toy judge does not)."""
    facts = fact_responder()

    def reply(schema: str, messages: list[BaseMessage]) -> Any:
        if schema == "ClaimList" and prompt_section(messages[-1:], "text") == "Paris":
            assert prompt_section(messages[-1:], "question") == QUESTION
            return {"claims": ["The capital of France is Paris."]}
        return facts(schema, messages)

    return reply


def examples_sent(messages: list[BaseMessage]) -> list[str]:
    return [str(m.content) for m in messages[1:-1]]


# --------------------------------------------------------------------------- examples


def test_claim_steps_send_short_default_examples_in_three_languages() -> None:
    judge = ScriptedChatModel(responder=fact_responder())
    evaluate([SHORT], [FactualCorrectness(llm=judge), AspectCritic(llm=judge, criterion="c")])
    for schema, step in (("ClaimList", "decompose_claims"), ("ClaimVerdicts", "verify_claims")):
        [messages, *_] = [messages for name, messages in judge.calls if name == schema]
        shown = examples_sent(messages)
        assert [m.type for m in messages] == ["system"] + ["human", "ai"] * (len(shown) // 2) + [
            "human"
        ]
        assert len(shown) == 2 * len(DEFAULT_EXAMPLES[step])
        assert all(text.startswith("Example input:") for text in shown[::2])
        joined = "\n".join(shown)
        assert re.search("[A-Za-z]{4}", joined) and CYRILLIC.search(joined) and CJK.search(joined)
        assert len(joined) < 600  # short: they go with every request of the step
    [aspect] = [messages for name, messages in judge.calls if name == "AspectVerdict"]
    assert len(aspect) == 2  # no default examples for the aspect verdict


def test_user_examples_or_prompt_replace_the_defaults() -> None:
    mine = {"input": {"text": "A b c."}, "output": {"claims": ["A b c."]}}
    judge = ScriptedChatModel(responder=fact_responder())
    replaced = FactualCorrectness(llm=judge, examples={"decompose_claims": [mine]})
    none = FactualCorrectness(llm=judge, examples={"decompose_claims": [], "verify_claims": []})
    own_prompt = FactualCorrectness(llm=judge, prompts={"verify_claims": "Check claims."})

    assert len(replaced._step_prompts()["decompose_claims"].examples) == 1
    assert replaced._step_prompts()["verify_claims"].examples  # the other step keeps them
    assert not any(prompt.examples for prompt in none._step_prompts().values())
    assert not own_prompt._step_prompts()["verify_claims"].examples
    assert own_prompt._step_prompts()["decompose_claims"].examples

    judge.calls.clear()
    evaluate([SHORT], [none])
    assert {len(messages) for _, messages in judge.calls} == {2}


def test_examples_come_before_the_data_so_the_prefix_is_static() -> None:
    judge = ScriptedChatModel(responder=fact_responder())
    other = {
        "user_input": "Когда основан Санкт-Петербург?",
        "response": "В 1703 году.",
        "reference": "Санкт-Петербург основан в 1703 году.",
        "retrieved_contexts": ["Город основан в 1703 году."],
    }
    evaluate([SHORT, other], [FactualCorrectness(llm=judge), Faithfulness(llm=judge)])
    for schema in ("ClaimList", "ClaimVerdicts"):
        prefixes = {
            json.dumps([str(m.content) for m in messages[:-1]])
            for name, messages in judge.calls
            if name == schema
        }
        assert len(prefixes) == 1, schema  # the data is only in the last message
    decompose = DEFAULT_STEP_PROMPTS["decompose_claims"].messages("decompose_claims", {"text": "x"})
    assert decompose[0].content == DEFAULT_PROMPTS["decompose_claims"].messages[0].content


def test_the_toy_judge_reads_the_data_not_an_example(server: LocalOpenAIServer) -> None:
    llm = ChatOpenAI(
        base_url=server.base_url, api_key="sk-test", model="judge-a", use_responses_api=False
    )
    result = FactualCorrectness(llm=llm, mode="precision").invoke(
        {
            "response": "The Louvre is in Paris. It opened in 1793.",
            "reference": "The Louvre, in Paris, opened in 1793.",
        }
    )
    claims = [v.claim for v in result.details.models["judge-a"].response_claims]
    assert claims == ["The Louvre is in Paris.", "It opened in 1793."]
    [verify] = [
        e
        for e in server.requests
        if e.body.get("tool_choice", {}).get("function", {}).get("name") == "ClaimVerdicts"
    ]
    assert len(verify.body["messages"]) == 2 + 2 * len(DEFAULT_EXAMPLES["verify_claims"])


# --------------------------------------------------------------------------- short references


def test_a_short_reference_is_decomposed_with_its_question() -> None:
    judge = ScriptedChatModel(responder=short_answer_responder())
    [row] = evaluate([SHORT], [FactualCorrectness(llm=judge, mode="recall")])
    result = row.results["factual_correctness"]
    assert result.score == pytest.approx(1.0)
    [prompt] = user_prompts(judge, "ClaimList")
    assert f"<question>\n{QUESTION}\n</question>" in prompt
    assert "<text>\nParis\n</text>" in prompt


def test_one_reference_decomposition_for_factual_and_answer_correctness() -> None:
    judge, embeddings = ScriptedChatModel(responder=short_answer_responder()), ScriptedEmbeddings()
    rows = evaluate(
        [SHORT],
        [FactualCorrectness(llm=judge), AnswerCorrectness(llm=judge, embeddings=embeddings)],
    )
    assert not rows[0].errors
    references = [p for p in user_prompts(judge, "ClaimList") if "<text>\nParis\n</text>" in p]
    assert len(references) == 1
    # Recall credits the perfect answer (precision checks the response against "Paris"
    # alone, without the question: the scripted judge calls that neutral).
    [details] = rows[0].results["factual_correctness"].details.models.values()
    assert details.recall == pytest.approx(1.0)


def test_five_metrics_stay_at_six_requests_per_sample_with_short_references() -> None:
    judge, embeddings = ScriptedChatModel(responder=short_answer_responder()), ScriptedEmbeddings()
    samples = [SHORT, {**SHORT, "user_input": "Name the capital of France."}]
    metrics = [
        FactualCorrectness(llm=judge),
        AnswerCorrectness(llm=judge, embeddings=embeddings),
        Faithfulness(llm=judge),
        SemanticSimilarity(embeddings=embeddings),
        AspectCritic(llm=judge, name="direct", criterion="It answers directly."),
    ]
    # The second sample's question differs: its short reference is decomposed again.
    rows = evaluate(samples[:1], metrics)
    assert not rows[0].errors
    assert len(judge.calls) == 6
    assert judge.calls_for("ClaimList") == 2 and judge.calls_for("ClaimVerdicts") == 3


# --------------------------------------------------------------------------- prompt cache


@pytest.fixture
def cache_server() -> Iterator[LocalOpenAIServer]:
    with LocalOpenAIServer() as server:
        yield server


def test_cached_input_tokens_are_counted_and_priced(cache_server: LocalOpenAIServer) -> None:
    llm = ChatOpenAI(
        base_url=cache_server.base_url,
        api_key="sk-test",
        model="gpt-4o-mini",
        use_responses_api=False,
    )
    # Examples long enough for a cacheable prefix (the server reports prefixes of 1,024+
    # tokens as read from the cache, in steps of 128, as OpenAI does once warm).
    long = {"input": {"text": "Paris is large. " * 300}, "output": {"claims": ["Paris is large."]}}
    metric = FactualCorrectness(llm=llm, mode="precision", examples={"decompose_claims": [long]})
    [row] = evaluate([SHORT], [metric])
    usage = row.results["factual_correctness"].usage["gpt-4o-mini"]
    reported = [
        entry.body
        for entry in cache_server.requests
        if entry.body.get("tool_choice", {}).get("function", {}).get("name") == "ClaimList"
    ]
    assert len(reported) == 1
    assert usage.cached_input_tokens >= 1024 and usage.cached_input_tokens % 128 == 0
    assert usage.cached_input_tokens < usage.input_tokens

    price = BUILTIN_PRICES["gpt-4o-mini"]
    assert price.cached_input_per_million is not None
    assert price.cached_input_per_million < price.input_per_million
    pricing = Pricing({"gpt-4o-mini": "gpt-4o-mini"})
    expected = (
        (usage.input_tokens - usage.cached_input_tokens) * price.input_per_million
        + usage.cached_input_tokens * price.cached_input_per_million
        + usage.output_tokens * price.output_per_million
    ) / 1e6
    assert pricing.cost("gpt-4o-mini", usage) == pytest.approx(expected, rel=1e-9)
    spend = tally([{"factual_correctness": row.results["factual_correctness"]}], pricing)
    assert spend.models["gpt-4o-mini"].cached_input_tokens == usage.cached_input_tokens
    assert "from the provider's cache" in spend.describe()


def test_a_price_without_a_cached_rate_bills_cached_input_as_input() -> None:
    assert Price(input_per_million=2.0).cost(1000, cached_input_tokens=400) == pytest.approx(0.002)
    assert Price(input_per_million=2.0, cached_input_per_million=0.5).cost(
        1000, 10, cached_input_tokens=400
    ) == pytest.approx((600 * 2.0 + 400 * 0.5) / 1e6)
    assert BUILTIN_PRICES["gpt-3.5-turbo"].cached_input_per_million is None
    assert ChatPrice(input_per_million=1, output_per_million=2, cached_input_per_million=0.25)
    with pytest.raises(ValueError, match="cached_input_per_million"):
        ChatPrice(input_per_million=1, output_per_million=2, cached_input_per_million=-1)
