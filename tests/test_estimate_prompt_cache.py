"""The estimate counts a provider's prompt caching: a repeated static prefix of 1,024+
tokens is served from the cache (cost_low), never in cost_high; default prompts are below
that size, so they get no discount.

Checked against the local server, which reports ``cached_tokens`` for every request whose
static prefix is that long (as if the cache were always warm): the run's cached tokens
exceed the estimate's by exactly the first request of each distinct prefix.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from langchain_answer_metrics import FactualCorrectness, MetricResult
from langchain_answer_metrics.core.prices import Price
from langchain_answer_metrics.costs import estimate
from langchain_answer_metrics.run import runner
from langchain_answer_metrics.run.estimate.estimator import cache_served_tokens
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.prompt_reading import message_text
from langchain_answer_metrics.testing.replies import approx_tokens

SAMPLES = [
    {
        "user_input": f"Question {n}?",
        "response": f"Answer number {n} is right. It is {n}.",
        "reference": f"Answer number {n} is right.",
    }
    for n in range(1, 5)
]
PRICE = Price(input_per_million=2.0, output_per_million=8.0, cached_input_per_million=0.5)
# About 1,500 tokens of static instructions by the server's chars/4 rule.
LONG_RULES = "Be careful and precise about every claim and its source. " * 100


def judge(server: LocalOpenAIServer) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=server.base_url,
        api_key="sk-test",
        model="judge-a",  # type: ignore[arg-type]
        use_responses_api=False,
        max_retries=0,
    )


def server_rule(text: str) -> int:
    return approx_tokens(text)


def test_cache_served_tokens_follows_openais_rule() -> None:
    assert cache_served_tokens(0) == 0
    assert cache_served_tokens(1023) == 0
    assert cache_served_tokens(1024) == 1024
    assert cache_served_tokens(1151) == 1024
    assert cache_served_tokens(1152) == 1152


def test_default_prompts_are_below_the_cache_minimum(server: LocalOpenAIServer) -> None:
    plan = estimate(
        SAMPLES,
        [FactualCorrectness(llm=judge(server))],
        prices={"judge-a": PRICE},
        token_counter=server_rule,
    )
    model = plan.models["judge-a"]
    assert model.requests > 0 and model.cached_input_tokens == 0
    assert plan.as_dict()["total"]["cached_input_tokens"] == 0


def test_a_long_static_prefix_is_estimated_as_cached_after_its_first_request(
    server: LocalOpenAIServer,
) -> None:
    metric = FactualCorrectness(
        llm=judge(server),
        prompts={"decompose_claims": LONG_RULES, "verify_claims": LONG_RULES},
    )
    plan = estimate(
        SAMPLES, [metric], prices={"judge-a": PRICE}, token_counter=server_rule, count_schema=False
    )
    assert server.requests == []
    model = plan.models["judge-a"]
    assert model.cached_input_tokens > 0
    assert model.cost_low is not None and model.cost_high is not None
    without_cache = PRICE.cost(model.prompt_tokens, model.completion_tokens_low)
    assert model.cost_low < without_cache
    assert model.cost_high == pytest.approx(
        PRICE.cost(model.prompt_tokens, model.completion_tokens_high)
    )
    assert plan.total.cached_input_tokens == model.cached_input_tokens

    rows = runner.evaluate(SAMPLES, [metric])
    reported = sum(
        usage.cached_input_tokens
        for row in rows
        for outcome in row.results.values()
        if isinstance(outcome, MetricResult)
        for usage in outcome.usage.values()
    )
    # The server serves every long prefix from its (always warm) cache; the estimate
    # counts each distinct prefix's first request at the full price.
    first_of_each: dict[tuple[str, ...], int] = {}
    for entry in server.requests:
        messages: list[dict[str, Any]] = entry.body["messages"]
        prefix = tuple(message_text(m) for m in messages[:-1])
        tokens = sum(approx_tokens(text) + 4 for text in prefix)
        first_of_each.setdefault(prefix, cache_served_tokens(tokens))
    assert server.chat_requests == model.requests
    assert reported - model.cached_input_tokens == sum(first_of_each.values())
