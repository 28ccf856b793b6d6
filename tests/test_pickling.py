"""Metrics pickle, so joblib, multiprocessing and Spark users can send them to workers.

A chat model's HTTP client cannot be pickled: a judge travels as what it was built from
and is built again in the worker (judging/portable.py). The worker here is a real
``multiprocessing`` pool (spawned processes) scoring against the local server over HTTP.
"""

from __future__ import annotations

import multiprocessing
import pickle
from typing import Any

import pytest
from langchain_core.rate_limiters import InMemoryRateLimiter
from langchain_openai import ChatOpenAI, OpenAIEmbeddings

from langchain_answer_metrics import AnswerMetric, CustomJudge, Faithfulness
from langchain_answer_metrics.judging.judges import Judge, as_embedders, as_judges
from langchain_answer_metrics.metrics.registry import METRICS, MetricModels
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

KEY = "sk-pickle-test-4242424242"
OTHER_SECRET = "sk-not-the-judges-9999999999"

SAMPLE = {
    "user_input": "Where is the Eiffel Tower?",
    "response": "The Eiffel Tower is in Paris.",
    "reference": "The Eiffel Tower is in Paris, France.",
    "retrieved_contexts": ["The Eiffel Tower stands in Paris, France."],
}
AGENT_SAMPLE = {
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
    ],
    "reference_tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}],
}


def chat(server: LocalOpenAIServer, model: str = "judge", **options: Any) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.base_url, api_key=KEY, model=model, use_responses_api=False, **options
    )


def models(server: LocalOpenAIServer) -> MetricModels:
    limiter = InMemoryRateLimiter(requests_per_second=500, check_every_n_seconds=0.01)
    embeddings = OpenAIEmbeddings(
        base_url=server.base_url, api_key=KEY, model="embed", check_embedding_ctx_length=False
    )
    return MetricModels(
        judges=as_judges(
            [chat(server, rate_limiter=limiter), chat(server, "judge-b").with_retry()]
        ),
        embedders=as_embedders(embeddings),
    )


SETTINGS = {"criterion": "It names a city.", "turn_metric": "faithfulness"}
SCORED_HERE = {
    "semantic_similarity",
    "factual_correctness",
    "answer_correctness",
    "faithfulness",
    "names_city",
    "context_recall",
    "context_precision",
    "context_relevance",
    "response_relevancy",
    "trajectory_match",
    "tool_call_f1",
}
"""The metrics scored on SAMPLE or AGENT_SAMPLE here (the others are pickled only)."""


def every_metric(server: LocalOpenAIServer) -> list[AnswerMetric]:
    built = [entry.build(models(server), SETTINGS) for entry in METRICS.values()]
    return [*built, CustomJudge(llm=chat(server), name="names_city", criterion="It names a city.")]


def scored_here(server: LocalOpenAIServer) -> list[AnswerMetric]:
    return [metric for metric in every_metric(server) if metric.key in SCORED_HERE]


def score(metric: AnswerMetric, sample: dict[str, Any]) -> tuple[str, float | None, str]:
    """In the worker: the metric's score of ``sample``, with the class of its first judge."""
    result = metric.invoke(sample)
    judges = getattr(metric, "llm", None) or []
    return result.key, result.score, type(judges[0].model).__name__ if judges else "-"


def sample_for(metric: AnswerMetric) -> dict[str, Any]:
    return AGENT_SAMPLE if metric.key in ("trajectory_match", "tool_call_f1") else SAMPLE


def test_every_metric_and_custom_judge_pickles_and_scores_the_same(
    server: LocalOpenAIServer,
) -> None:
    for metric in every_metric(server):
        clone = pickle.loads(pickle.dumps(metric))
        assert type(clone) is type(metric) and clone.key == metric.key
        if metric.key not in SCORED_HERE:
            continue
        assert clone.invoke(sample_for(clone)).score == pytest.approx(
            metric.invoke(sample_for(metric)).score, abs=1e-6
        ), metric.key


def test_the_rebuilt_judge_keeps_its_settings_and_not_the_client(
    server: LocalOpenAIServer,
) -> None:
    metric = Faithfulness(
        llm=[Judge(model=chat(server, temperature=0.3, max_retries=1), max_reasks=1, label="a")]
    )
    clone = pickle.loads(pickle.dumps(metric))
    judge = clone.llm[0]
    assert (judge.label, judge.max_reasks) == ("a", 1)
    assert (judge.model.model_name, judge.model.temperature, judge.model.max_retries) == (
        "judge",
        0.3,
        1,
    )
    assert judge.model.client is not metric.llm[0].model.client
    assert judge.model.openai_api_key.get_secret_value() == KEY


def test_the_pickle_holds_no_secret_beyond_the_judges_own(
    server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", OTHER_SECRET)
    from langchain_answer_metrics.core.redaction import register_secret

    register_secret(OTHER_SECRET)
    data = pickle.dumps(Faithfulness(llm=chat(server)))
    assert OTHER_SECRET.encode() not in data
    assert data.count(KEY.encode()) <= 1  # the judge's own key, held as it holds it


@pytest.mark.slow  # a pool of worker processes
def test_a_multiprocessing_pool_scores_with_pickled_metrics(server: LocalOpenAIServer) -> None:
    metrics = scored_here(server)
    assert len(metrics) >= 11
    expected = [score(metric, sample_for(metric)) for metric in metrics]
    served = server.chat_requests
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        scored = pool.starmap(score, [(metric, sample_for(metric)) for metric in metrics])
    assert [key for key, _, _ in scored] == [key for key, _, _ in expected]
    for (key, got, judge), (_, want, original) in zip(scored, expected, strict=True):
        assert judge == original, key
        assert got == pytest.approx(want, abs=1e-6), key
    assert server.chat_requests > served  # the workers asked the server themselves
