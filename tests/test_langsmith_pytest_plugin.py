"""The metrics inside LangSmith's pytest plugin: tests marked ``@pytest.mark.langsmith``.

``LANGSMITH_TEST_TRACKING=false`` turns the plugin's logging into no-ops, so these run
offline; a guard fails any connection that is not loopback.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langsmith import testing as t

from langchain_answer_metrics import AspectCritic, Faithfulness
from langchain_answer_metrics.langsmith_evaluators import async_function_evaluator
from langchain_answer_metrics.testing.scripted import (
    ScriptedChatModel,
    numbered_claims,
    prompt_section,
)


def _is_loopback(host: Any) -> bool:
    if host in {"localhost", None, ""}:
        return True
    try:
        return ipaddress.ip_address(str(host)).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """Tracking off, and a record of every connection or lookup: only loopback may appear."""
    monkeypatch.setenv("LANGSMITH_TEST_TRACKING", "false")
    attempts: list[Any] = []
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(sock: socket.socket, address: Any) -> Any:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            attempts.append(address[0])
        return real_connect(sock, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        attempts.append(host)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield attempts
    assert [host for host in attempts if not _is_loopback(host)] == []


@pytest.fixture
def test_item(request: pytest.FixtureRequest) -> pytest.Item:
    # A langsmith-marked test must not take `request` itself: the plugin's wrapper keeps it.
    assert isinstance(request.node, pytest.Item)
    return request.node


def reply(schema: str, messages: list[BaseMessage]) -> dict[str, Any]:
    """Sentences are claims, supported when the source contains them; years pass aspects."""
    if schema == "ClaimList":
        text = prompt_section(messages, "text")
        return {"claims": [part.strip() + "." for part in text.split(".") if part.strip()]}
    if schema == "ClaimVerdicts":
        source = prompt_section(messages, "source")
        return {
            "verdicts": [
                {"index": index, "verdict": "supported" if claim in source else "neutral",
                 "reason": "substring check"}
                for index, claim in enumerate(numbered_claims(messages), 1)
            ]
        }
    has_year = re.search(r"\b\d{4}\b", prompt_section(messages, "response"))
    return {"verdict": "PASS" if has_year else "FAIL", "reason": "year check"}


def judge() -> ScriptedChatModel:
    return ScriptedChatModel(responder=reply, model="judge-a")


def rag_app(question: str) -> dict[str, Any]:
    return {
        "answer": "The Eiffel Tower was built in 1889.",
        "contexts": ["The Eiffel Tower was built in 1889. It stands in Paris."],
    }


def _wrapped_by_the_plugin(item: pytest.Item) -> bool:
    """Whether the test function runs inside langsmith's test wrapper.

    The plugin swaps ``item.obj`` for that wrapper (pytest-asyncio may wrap it again):
    look for a function defined in langsmith along the ``__wrapped__`` chain.
    """
    function = getattr(item, "obj", None)
    while function is not None:
        code = getattr(function, "__code__", None)
        if code is not None and f"langsmith{os.sep}testing" in code.co_filename:
            return True
        function = getattr(function, "__wrapped__", None)
    return False


@pytest.mark.langsmith
def test_answer_is_grounded(test_item: pytest.Item) -> None:
    assert _wrapped_by_the_plugin(test_item)
    question = "When was the Eiffel Tower built?"
    outputs = rag_app(question)
    t.log_inputs({"question": question})
    t.log_outputs(outputs)

    result = Faithfulness(llm=judge(), threshold=0.9).invoke(
        {"user_input": question, "response": outputs["answer"],
         "retrieved_contexts": outputs["contexts"]}
    )
    t.log_feedback(key=result.key, score=result.score, comment=result.reason)
    assert result.passed, result.reason


@pytest.mark.langsmith
async def test_answer_gives_a_date_async(test_item: pytest.Item) -> None:
    assert _wrapped_by_the_plugin(test_item)
    has_date = async_function_evaluator(
        AspectCritic(llm=judge(), name="has_date", criterion="The answer gives a year.")
    )
    feedback = await has_date(
        inputs={"question": "When?"}, outputs=rag_app("When?"), reference_outputs={}
    )
    t.log_feedback(key=feedback["key"], score=feedback["score"], comment=feedback["comment"])
    assert feedback == {
        "key": "has_date",
        "score": 1.0,
        "comment": "PASS: year check",
        "metadata": feedback["metadata"],
    }
    assert feedback["metadata"]["details"]["models"]["judge-a"]["votes"] == ["PASS"]


@pytest.mark.langsmith
def test_function_evaluator_with_a_failing_row(test_item: pytest.Item) -> None:
    assert _wrapped_by_the_plugin(test_item)
    grounded = Faithfulness(llm=judge()).as_function_evaluator()
    feedback = grounded(inputs={"question": "When?"}, outputs={"answer": "In 1889."})
    t.log_feedback(key=feedback["key"], score=feedback["score"], comment=feedback["comment"])
    # No contexts: the metric cannot score, and says so instead of raising.
    assert feedback["key"] == "faithfulness" and feedback["score"] is None
    assert "retrieved_contexts" in feedback["comment"]
