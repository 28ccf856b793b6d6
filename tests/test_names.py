"""The public names: one style per family, the other spellings as aliases that work.

- ``ResponseRelevance`` is the metric's name (the ``-Relevance`` style of
  ``ContextRelevance``); ``ResponseRelevancy``, RAGAS's name, is the same class, without a
  warning, and its results keep the key ``response_relevancy``.
- ``summarize`` takes scores and results; ``summarize_results`` warns (tests/test_summary.py).
- ``astream_evaluate``, documented, is exported at the root and streams rows in order.
"""

from __future__ import annotations

import warnings

from langchain_openai import ChatOpenAI

import langchain_answer_metrics
import langchain_answer_metrics.metrics as metrics_package
from langchain_answer_metrics import (
    ContextRelevance,
    Faithfulness,
    ResponseRelevance,
    ResponseRelevancy,
    astream_evaluate,
    stream_evaluate,
)
from langchain_answer_metrics.metrics.registry import METRICS
from langchain_answer_metrics.run.runner import astream_evaluate as runners_astream_evaluate
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

QUESTION = "When was the Eiffel Tower built?"


def toy_judge(server: LocalOpenAIServer) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.base_url,
        api_key="sk-test",  # type: ignore[arg-type]
        model="gpt-4o-mini",
        use_responses_api=False,
        max_retries=0,
    )


def test_the_relevance_metrics_share_one_naming_style() -> None:
    names = [name for name in langchain_answer_metrics.__all__ if "Relevan" in name]
    assert sorted(names) == ["ContextRelevance", "ResponseRelevance"]
    assert METRICS["response_relevancy"].metric_class is ResponseRelevance
    assert METRICS["context_relevance"].metric_class is ContextRelevance


def test_response_relevancy_is_the_same_class_without_a_warning(
    server: LocalOpenAIServer,
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from langchain_answer_metrics import ResponseRelevancy as from_root

        assert from_root is ResponseRelevancy is ResponseRelevance
        assert metrics_package.ResponseRelevancy is ResponseRelevance
        metric = ResponseRelevancy(llm=toy_judge(server))
        result = metric.invoke({"user_input": QUESTION, "response": "It was built in 1889."})
    assert isinstance(metric, ResponseRelevance)
    assert result.key == "response_relevancy" and result.score == 1.0
    # One name in the listings: the alias is importable, not listed twice.
    assert "ResponseRelevancy" not in langchain_answer_metrics.__all__
    assert "ResponseRelevancy" not in metrics_package.__all__
    assert "ResponseRelevancy" in dir(langchain_answer_metrics)


async def test_astream_evaluate_is_exported_and_streams_rows_in_order(
    server: LocalOpenAIServer,
) -> None:
    assert astream_evaluate is runners_astream_evaluate
    assert "astream_evaluate" in langchain_answer_metrics.__all__
    samples = [
        {"user_input": QUESTION, "response": "It was built in 1889.", "contexts": ["Built 1889."]},
        {"user_input": QUESTION, "response": "It is in Paris."},  # no contexts: an error
        {"user_input": QUESTION, "response": "It opened in 1889.", "contexts": ["Opened 1889."]},
    ]
    metric = Faithfulness(llm=toy_judge(server))
    rows = [row async for row in astream_evaluate(iter(samples), [metric], window=2)]
    assert [row.index for row in rows] == [0, 1, 2]
    assert [sorted(row.errors) for row in rows] == [[], ["faithfulness"], []]
    streamed = [row.results["faithfulness"].score for row in rows]
    assert streamed[0] is not None and streamed[1] is None
    # The sync stream gives the same rows.
    again = [row.results["faithfulness"].score for row in stream_evaluate(samples, [metric])]
    assert again == streamed
