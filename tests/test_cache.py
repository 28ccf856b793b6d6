"""Reuse across runs goes through LangChain's cache, keyed by the model and its parameters.

With ``set_llm_cache(InMemoryCache())`` a rerun makes no requests at all, and two models
that differ only in their name never get each other's answers (RAGAS served a gpt-4o
answer from its cache to gpt-4o-mini). LangChain caches chat generations itself; embedding
vectors are kept in the same cache by ``embedding_cache``.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import fact_judge
from langchain_core.messages import BaseMessage
from langchain_openai import ChatOpenAI

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    SemanticSimilarity,
)
from langchain_answer_metrics.run.runner import evaluate
from langchain_answer_metrics.testing.heuristic_judge import respond
from langchain_answer_metrics.testing.openai_server import (
    LocalOpenAIServer,
    RequestInfo,
    heuristic_responder,
)
from langchain_answer_metrics.testing.scripted import ScriptedChatModel, ScriptedEmbeddings

# A fresh LangChain cache for every test here (the fixture is in conftest.py).
pytestmark = pytest.mark.usefixtures("llm_cache")

SAMPLES = [
    {
        "user_input": f"When did event {index} happen?",
        "response": f"Event {index} happened in {1800 + index}. It was sunny.",
        "reference": f"Event {index} happened in {1800 + index}.",
        "retrieved_contexts": [f"Event {index} is dated {1800 + index}."],
    }
    for index in range(4)
]
SAMPLE = SAMPLES[0]


def judged_metrics(llm: Any, *, strictness: int = 1) -> list[Any]:
    return [
        FactualCorrectness(llm=llm),
        Faithfulness(llm=llm),
        AspectCritic(llm=llm, name="has_year", criterion="It gives a year.", strictness=strictness),
    ]


def scores(rows: list[Any]) -> list[dict[str, float]]:
    return [{key: outcome.score for key, outcome in row.results.items()} for row in rows]


def test_a_rerun_with_a_cache_makes_no_chat_requests() -> None:
    judge = fact_judge(votes=("PASS", "FAIL", "PASS"))
    metrics = judged_metrics(judge, strictness=3)

    first = evaluate(SAMPLES, metrics)
    sent = len(judge.calls)
    again = evaluate(SAMPLES, metrics)

    assert sent > 0
    assert len(judge.calls) == sent
    assert scores(again) == scores(first)


def test_a_rerun_of_the_five_metric_suite_makes_no_requests() -> None:
    judge, embeddings = fact_judge(), ScriptedEmbeddings()
    metrics = [
        *judged_metrics(judge),
        AnswerCorrectness(llm=judge, embeddings=embeddings),
        SemanticSimilarity(embeddings=embeddings),
    ]

    first = evaluate(SAMPLES, metrics)
    sent, embedded = len(judge.calls), len(embeddings.requests)
    again = evaluate(SAMPLES, metrics)

    assert embedded > 0
    assert len(judge.calls) == sent
    assert len(embeddings.requests) == embedded
    assert scores(again) == scores(first)


def test_only_uncached_texts_are_embedded() -> None:
    embeddings = ScriptedEmbeddings()
    metric = SemanticSimilarity(embeddings=embeddings)
    metric.invoke({"response": "A cat.", "reference": "A dog."})

    metric.invoke({"response": "A cat.", "reference": "A bird."})

    assert embeddings.requests == [["A cat.", "A dog."], ["A bird."]]


def test_embedding_models_differing_in_settings_do_not_share_vectors() -> None:
    first = ScriptedEmbeddings(vectors={"A cat.": [1.0, 0.0], "A dog.": [1.0, 0.0]})
    second = ScriptedEmbeddings(
        vectors={"A cat.": [1.0, 0.0], "A dog.": [0.0, 1.0]}, model="other-embeddings"
    )
    sample = {"response": "A cat.", "reference": "A dog."}

    assert SemanticSimilarity(embeddings=first).score(sample) == 1.0
    assert SemanticSimilarity(embeddings=second).score(sample) == 0.0
    assert len(second.requests) == 1


def test_single_calls_are_cached_too() -> None:
    judge = fact_judge()
    metric = FactualCorrectness(llm=judge)

    first = metric.invoke(SAMPLE)
    sent = len(judge.calls)
    again = metric.invoke(SAMPLE)

    assert len(judge.calls) == sent
    assert again.score == first.score


def test_scripted_models_differing_only_in_name_do_not_share_cache_entries() -> None:
    def claims_by(prefix: str) -> Any:
        def reply(schema: str, messages: list[BaseMessage]) -> dict[str, Any]:
            if schema == "ClaimList":
                return {"claims": [f"{prefix} claim"]}
            plain = [{"role": "user", "content": str(message.content)} for message in messages]
            return respond(schema, plain)

        return reply

    big = ScriptedChatModel(responder=claims_by("big"), model="gpt-4o")
    mini = ScriptedChatModel(responder=claims_by("mini"), model="gpt-4o-mini")

    from_big = FactualCorrectness(llm=big).invoke(SAMPLE)
    from_mini = FactualCorrectness(llm=mini).invoke(SAMPLE)

    assert len(mini.calls) == len(big.calls) == 4
    claims = from_mini.details["models"]["gpt-4o-mini"]["response_claims"]
    assert [claim["claim"] for claim in claims] == ["mini claim"]
    assert from_big.details["models"]["gpt-4o"]["response_claims"][0]["claim"] == "big claim"


def test_openai_models_differing_only_in_name_do_not_share_cache_entries() -> None:
    def respond_by_model(info: RequestInfo) -> Any:
        if info.schema_name == "ClaimList":
            return {"claims": [f"claim from {info.model}"]}
        return heuristic_responder(info)

    with LocalOpenAIServer(responder=respond_by_model) as server:

        def judge(model: str) -> ChatOpenAI:
            return ChatOpenAI(
                model=model,
                base_url=server.base_url,
                api_key="sk-test",
                use_responses_api=False,
                max_retries=0,
            )

        from_big = evaluate([SAMPLE], judged_metrics(judge("gpt-4o")))
        big_requests = server.model_counts["gpt-4o"]
        from_mini = evaluate([SAMPLE], judged_metrics(judge("gpt-4o-mini")))
        rerun_big = evaluate([SAMPLE], judged_metrics(judge("gpt-4o")))

        assert big_requests > 0
        assert server.model_counts["gpt-4o-mini"] == big_requests
        assert server.model_counts["gpt-4o"] == big_requests  # the rerun was all cache hits
        assert set(server.model_counts) == {"gpt-4o", "gpt-4o-mini"}

    def first_claim(rows: list[Any], model: str) -> str:
        details = rows[0].results["faithfulness"].details["models"][model]
        return str(details["response_claims"][0]["claim"])

    assert first_claim(from_big, "gpt-4o") == "claim from gpt-4o"
    assert first_claim(from_mini, "gpt-4o-mini") == "claim from gpt-4o-mini"
    assert scores(rerun_big) == scores(from_big)


def test_model_parameters_are_part_of_the_cache_key() -> None:
    cold = ScriptedChatModel(responder=fact_judge().responder, model="m", temperature=0.0)
    warm = ScriptedChatModel(responder=fact_judge().responder, model="m", temperature=0.7)

    FactualCorrectness(llm=cold).invoke(SAMPLE)
    FactualCorrectness(llm=warm).invoke(SAMPLE)

    assert len(cold.calls) == len(warm.calls) == 4


def test_n_sampled_votes_are_cached_with_their_n() -> None:
    def vote(info: RequestInfo) -> dict[str, Any]:
        verdict = "PASS" if info.choice_index != 1 else "FAIL"
        return {"reason": f"choice {info.choice_index}", "verdict": verdict}

    with LocalOpenAIServer(responder=vote) as server:
        llm = ChatOpenAI(
            model="judge-a",
            base_url=server.base_url,
            api_key="sk-test",
            use_responses_api=False,
            max_retries=0,
            temperature=0.9,
        )

        def critic(strictness: int) -> AspectCritic:
            return AspectCritic(llm=llm, name="x", criterion="c", strictness=strictness)

        first = critic(3).invoke(SAMPLE)
        again = critic(3).invoke(SAMPLE)
        requests_for_three = server.chat_requests
        five = critic(5).invoke(SAMPLE)

        assert requests_for_three == 1
        assert server.chat_requests == 2  # n=5 is another request, not n=3's answer
        assert server.requests[-1].body["n"] == 5

    votes = first.details["models"]["judge-a"]["votes"]
    assert votes == ["PASS", "FAIL", "PASS"]
    assert again.details["models"]["judge-a"]["votes"] == votes
    assert len(five.details["models"]["judge-a"]["votes"]) == 5


def test_embedding_cache_identity_names_the_model_and_never_the_key() -> None:
    from langchain_openai import OpenAIEmbeddings

    from langchain_answer_metrics.judging.embedding_cache import cache_identity

    def build(model: str, dimensions: int) -> OpenAIEmbeddings:
        return OpenAIEmbeddings(
            model=model,
            dimensions=dimensions,
            api_key="sk-test-SECRET-abc123",
            base_url="http://127.0.0.1:9/v1",
            check_embedding_ctx_length=False,
        )

    identity = cache_identity(build("text-embedding-3-small", 256))

    assert "text-embedding-3-small" in identity and "256" in identity
    assert "SECRET" not in identity
    assert identity == cache_identity(build("text-embedding-3-small", 256))
    assert identity != cache_identity(build("text-embedding-3-large", 256))
    assert identity != cache_identity(build("text-embedding-3-small", 512))


def openai_embeddings(**settings: Any) -> Any:
    from langchain_openai import OpenAIEmbeddings

    options: dict[str, Any] = {
        "model": "text-embedding-3-small",
        "api_key": "sk-test-SECRET-abc123",
        "base_url": "http://127.0.0.1:9/v1",
        "check_embedding_ctx_length": False,
    }
    return OpenAIEmbeddings(**{**options, **settings})


@pytest.mark.parametrize(
    ("setting", "first", "second"),
    [
        ("model_kwargs", {"user": "a"}, {"user": "b"}),
        ("default_headers", {"X-Model-Variant": "fast"}, {"X-Model-Variant": "accurate"}),
        ("default_query", {"api-version": "2024-02-01"}, {"api-version": "2025-01-01"}),
    ],
)
def test_dict_settings_are_part_of_the_embedding_cache_key(
    setting: str, first: dict[str, Any], second: dict[str, Any]
) -> None:
    from langchain_answer_metrics.judging.embedding_cache import cache_identity

    plain = cache_identity(openai_embeddings())
    one = cache_identity(openai_embeddings(**{setting: first}))
    other = cache_identity(openai_embeddings(**{setting: second}))
    assert len({plain, one, other}) == 3  # two set-ups never share vectors


def test_nested_settings_are_keyed_whatever_their_order() -> None:
    from langchain_core.embeddings import Embeddings
    from pydantic import BaseModel

    from langchain_answer_metrics.judging.embedding_cache import cache_identity

    class SentenceEmbeddings(BaseModel, Embeddings):
        """Shaped like HuggingFaceEmbeddings: the options live in dicts."""

        model_name: str = "intfloat/multilingual-e5-small"
        encode_kwargs: dict[str, Any] = {}
        model_kwargs: dict[str, Any] = {}

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise NotImplementedError

        def embed_query(self, text: str) -> list[float]:
            raise NotImplementedError

    normalized = cache_identity(
        SentenceEmbeddings(encode_kwargs={"normalize_embeddings": True, "batch_size": 8})
    )
    assert normalized == cache_identity(
        SentenceEmbeddings(encode_kwargs={"batch_size": 8, "normalize_embeddings": True})
    )
    assert normalized != cache_identity(
        SentenceEmbeddings(encode_kwargs={"normalize_embeddings": False, "batch_size": 8})
    )
    assert normalized != cache_identity(
        SentenceEmbeddings(
            encode_kwargs={"normalize_embeddings": True, "batch_size": 8},
            model_kwargs={"prompts": {"query": "query: ", "passage": ["passage: "]}},
        )
    )


def test_credentials_stay_out_of_the_embedding_cache_key() -> None:
    from langchain_answer_metrics.judging.embedding_cache import cache_identity

    secret = "sk-test-SECRET-abc123"
    with_credentials = cache_identity(
        openai_embeddings(
            base_url=f"http://user:{secret}@127.0.0.1:9/v1",
            default_headers={"Authorization": f"Bearer {secret}", "X-Api-Key": secret},
            default_query={"api_key": secret},
            model_kwargs={"access_token": secret},
        )
    )
    assert "SECRET" not in with_credentials and "user:" not in with_credentials
    assert "http://127.0.0.1:9/v1" in with_credentials
    # Credentials do not change the vectors: the same set-up with another key shares them.
    rotated = cache_identity(
        openai_embeddings(
            api_key="sk-test-OTHER-KEY-0000",
            base_url="http://user:sk-test-OTHER-KEY-0000@127.0.0.1:9/v1",
            default_headers={
                "Authorization": "Bearer sk-test-OTHER-KEY-0000",
                "X-Api-Key": "sk-test-OTHER-KEY-0000",
            },
            default_query={"api_key": "sk-test-OTHER-KEY-0000"},
            model_kwargs={"access_token": "sk-test-OTHER-KEY-0000"},
        )
    )
    assert rotated == with_credentials
