"""RetryPolicy: LangChain's retry with backoff, waiting at least what the provider asks."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import openai
import pytest
from langchain_core.runnables import RunnableLambda

from langchain_answer_metrics.judging.retry import RetryPolicy, requested_wait


def rate_limited(headers: dict[str, str]) -> openai.RateLimitError:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    response = httpx.Response(429, headers=headers, request=request)
    return openai.RateLimitError("slow down", response=response, body=None)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_requested_wait_reads_the_providers_headers(
    headers: dict[str, str], seconds: float | None
) -> None:
    assert requested_wait(rate_limited(headers)) == seconds


def test_requested_wait_ignores_errors_without_a_response() -> None:
    assert requested_wait(RuntimeError("no response")) is None
    assert requested_wait(None) is None


def recorded_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    waits: list[float] = []
    original = asyncio.sleep

    async def record(seconds: float, *args: Any, **kwargs: Any) -> Any:
        waits.append(seconds)
        return await original(0)

    monkeypatch.setattr(asyncio, "sleep", record)
    return waits


def flaky(failures: list[BaseException]) -> RunnableLambda[Any, str]:
    async def call(_: Any) -> str:
        if failures:
            raise failures.pop(0)
        return "ok"

    return RunnableLambda(call)


async def test_the_wait_is_at_least_what_the_provider_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waits = recorded_waits(monkeypatch)
    policy = RetryPolicy(retry_on=(openai.RateLimitError,), initial_delay=0.01, max_delay=30)
    retried = policy.wrap(flaky([rate_limited({"retry-after": "7"}), rate_limited({})]))

    assert await retried.ainvoke(None) == "ok"

    assert waits[0] == 7.0  # the provider's word, over the 0.01 s backoff
    assert waits[1] == pytest.approx(0.02)  # no header: plain exponential backoff


async def test_the_providers_wait_is_capped_by_max_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    waits = recorded_waits(monkeypatch)
    policy = RetryPolicy(retry_on=(openai.RateLimitError,), initial_delay=0.01, max_delay=3)
    retried = policy.wrap(flaky([rate_limited({"retry-after": "120"})]))

    assert await retried.ainvoke(None) == "ok"
    assert waits == [3.0]


async def test_other_errors_are_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    waits = recorded_waits(monkeypatch)
    policy = RetryPolicy(retry_on=(openai.RateLimitError,), initial_delay=0.01)
    retried = policy.wrap(flaky([ValueError("bad request")]))

    with pytest.raises(ValueError, match="bad request"):
        await retried.ainvoke(None)
    assert waits == []


def test_a_policy_needs_a_condition() -> None:
    with pytest.raises(ValueError, match="retry_on"):
        RetryPolicy()
