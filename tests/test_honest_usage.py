"""Usage reports what was actually sent, and traces tell every step apart.

- With LangChain's cache set, a rerun sends nothing; its results say so (0 requests,
  0 tokens, ``cached`` counts the replies that came from the cache). Checked through the
  real HTTP path: ChatOpenAI and OpenAIEmbeddings against the local server.
- A metric's root run is named by its key; FactualCorrectness's two directions are
  tagged with their side (``side:response`` / ``side:reference``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.caches import InMemoryCache
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.tracers.schemas import Run
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from support import fact_judge

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    SemanticSimilarity,
)
from langchain_answer_metrics.core.result import MetricResult, TokenUsage
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

pytestmark = pytest.mark.usefixtures("network_attempts")

SAMPLE = {
    "user_input": "When was the Eiffel Tower built?",
    "response": "The Eiffel Tower was built in 1889. It is in Paris.",
    "reference": "The Eiffel Tower was completed in 1889 in Paris.",
    "retrieved_contexts": ["The Eiffel Tower was built in 1889 in Paris."],
}


def _judge(server: LocalOpenAIServer) -> ChatOpenAI:
    return ChatOpenAI(
        model="judge-a",
        base_url=server.base_url,
        api_key="sk-test",  # type: ignore[arg-type]
        use_responses_api=False,
        max_retries=0,
        temperature=0,
    )


def _embeddings(server: LocalOpenAIServer) -> OpenAIEmbeddings:
    return OpenAIEmbeddings(
        model="embed-a",
        base_url=server.base_url,
        api_key="sk-test",  # type: ignore[arg-type]
        check_embedding_ctx_length=False,
        max_retries=0,
    )


def _total(result: MetricResult) -> TokenUsage:
    total = TokenUsage()
    for spent in result.usage.values():
        total = total.add(spent)
    return total


def _suite(server: LocalOpenAIServer) -> list[Any]:
    judge, embeddings = _judge(server), _embeddings(server)
    return [
        FactualCorrectness(llm=judge),
        Faithfulness(llm=judge),
        AspectCritic(llm=judge, name="has_year", criterion="It gives a year."),
        SemanticSimilarity(embeddings=embeddings),
        AnswerCorrectness(llm=judge, embeddings=embeddings),
    ]


@pytest.mark.parametrize("surface", ["sync", "async"])
async def test_a_cached_rerun_reports_no_requests_and_no_tokens(
    server: LocalOpenAIServer, llm_cache: InMemoryCache, surface: str
) -> None:
    metrics = _suite(server)

    async def run_all() -> list[MetricResult]:
        if surface == "sync":
            return [metric.invoke(SAMPLE) for metric in metrics]
        return [await metric.ainvoke(SAMPLE) for metric in metrics]

    first = await run_all()
    sent = len(server.requests)
    again = await run_all()

    assert sent > 0
    assert len(server.requests) == sent  # the rerun sent nothing
    # The first pass reports exactly the requests the server received: a decomposition
    # FactualCorrectness already made reaches Faithfulness from the cache, not the server.
    assert sum(_total(result).requests for result in first) == sent
    for before, after in zip(first, again):
        assert after.score == before.score
        spent_after = _total(after)
        assert (spent_after.requests, spent_after.input_tokens, spent_after.total_tokens) == (
            0,
            0,
            0,
        ), after.key
        assert spent_after.cached > 0, after.key
    # The first metric sent its requests itself; the server's token counts came back.
    assert _total(first[0]).input_tokens > 0 and _total(first[0]).cached == 0


def test_a_partly_cached_sample_counts_only_what_was_sent(
    server: LocalOpenAIServer, llm_cache: InMemoryCache
) -> None:
    metric = FactualCorrectness(llm=_judge(server), mode="precision")
    metric.invoke(SAMPLE)
    server.reset()

    # Same response, another reference: the decomposition is cached, the check is not.
    result = metric.invoke({**SAMPLE, "reference": "The tower is in Paris."})

    spent = _total(result)
    assert (spent.requests, spent.cached) == (1, 1)
    assert len(server.requests) == 1


def _runs(root: Run) -> Iterator[Run]:
    yield root
    for child in root.child_runs:
        yield from _runs(child)


@pytest.mark.parametrize("surface", ["sync", "async"])
async def test_the_two_directions_of_factual_correctness_are_tagged_by_side(
    surface: str,
) -> None:
    collector = RunCollectorCallbackHandler()
    metric = FactualCorrectness(llm=[fact_judge("judge-a"), fact_judge("judge-b")])
    sample = {"response": "Paris is in France.", "reference": "Paris is in France."}
    config: Any = {"callbacks": [collector]}
    if surface == "sync":
        metric.invoke(sample, config)
    else:
        await metric.ainvoke(sample, config)

    (root,) = collector.traced_runs
    assert root.name == "factual_correctness"
    steps = [run for run in _runs(root) if run.name in {"decompose_claims", "verify_claims"}]
    sides = sorted(
        (run.name, run.extra.get("metadata", {}).get("side"), tuple(run.tags or ()))
        for run in steps
    )
    expected = sorted(
        (step, side, (f"side:{side}",))
        for step in ("decompose_claims", "verify_claims")
        for side in ("response", "reference")
        for _ in ("judge-a", "judge-b")
    )
    assert sides == expected
    # The model calls below a step inherit its side.
    model_runs = [run for run in _runs(root) if run.run_type == "llm"]
    assert model_runs and all(
        any(tag.startswith("side:") for tag in run.tags or ()) for run in model_runs
    )


def test_a_metric_root_run_is_named_by_its_key() -> None:
    collector = RunCollectorCallbackHandler()
    critic = AspectCritic(llm=fact_judge(), name="has_year", criterion="It gives a year.")
    faithfulness = Faithfulness(llm=fact_judge())

    critic.invoke({"response": "Built in 1889."}, {"callbacks": [collector]})
    faithfulness.invoke(
        {"response": "Built in 1889.", "retrieved_contexts": ["Built in 1889."]},
        {"callbacks": [collector]},
    )

    assert [run.name for run in collector.traced_runs] == ["has_year", "faithfulness"]
    # An explicit run name still wins.
    collector = RunCollectorCallbackHandler()
    critic.invoke({"response": "Built in 1889."}, {"callbacks": [collector], "run_name": "mine"})
    assert [run.name for run in collector.traced_runs] == ["mine"]
