"""The local OpenAI-compatible server, driven through the real openai / langchain-openai clients.

These tests also pin how the clients react to each injected fault, which the metrics'
retry and re-ask logic relies on.
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import numpy as np
import openai
import pytest
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from langchain_answer_metrics.judging import prompts
from langchain_answer_metrics.judging.schemas import ClaimList, ClaimVerdicts
from langchain_answer_metrics.testing.openai_server import (
    FAULT_KINDS,
    Fault,
    FaultKind,
    LocalOpenAIServer,
    RequestInfo,
    embed_text,
    heuristic_responder,
    on_attempts,
    random_faults,
)

DECOMPOSE = [
    ("system", prompts.DECOMPOSE_SYSTEM),
    (
        "user",
        prompts.DECOMPOSE_USER.format(
            question="",
            text=prompts.tag("text", "Einstein was born in 1879. He won a Nobel Prize."),
        ),
    ),
]
CLAIMS = ["Einstein was born in 1879.", "Einstein was born in Spain."]
VERIFY = [
    ("system", prompts.VERIFY_SYSTEM),
    (
        "user",
        prompts.VERIFY_USER.format(
            count=2,
            question="",
            source=prompts.tag("source", "Einstein was born in Germany in 1879."),
            claims=prompts.tag("claims", prompts.number_claims(CLAIMS)),
        ),
    ),
]
StructuredMethod = Literal["function_calling", "json_schema", "json_mode"]
EXPECTED_CLAIMS = ["Einstein was born in 1879.", "He won a Nobel Prize."]


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LocalOpenAIServer]:
    """This module's server, with small vectors (conftest's ``server`` clears it per test)."""
    with LocalOpenAIServer(embedding_dim=64) as server:
        yield server


def chat(server: LocalOpenAIServer, **kwargs: Any) -> ChatOpenAI:
    options: dict[str, Any] = {
        "base_url": server.base_url,
        "api_key": "sk-test",
        "model": "judge-a",
        "use_responses_api": False,
        "max_retries": 0,
        **kwargs,
    }
    return ChatOpenAI(**options)


def create_chat(server: LocalOpenAIServer, **kwargs: Any) -> ChatCompletion:
    """A chat completion through the plain openai client (no retries)."""
    options: dict[str, Any] = {"model": "judge-a", **kwargs}
    completion: ChatCompletion = raw_client(server).chat.completions.create(**options)
    return completion


def raw_client(server: LocalOpenAIServer, max_retries: int = 0) -> openai.OpenAI:
    return _client(server.base_url, max_retries)


@functools.lru_cache(maxsize=8)
def _client(base_url: str, max_retries: int) -> openai.OpenAI:
    # Cached: building a client (httpx pool, SSL context) costs tens of milliseconds.
    return openai.OpenAI(base_url=base_url, api_key="sk-test", max_retries=max_retries)


# ------------------------------------------------------------------------- happy path


@pytest.mark.parametrize("method", ["function_calling", "json_schema", "json_mode"])
def test_structured_output_parses(server: LocalOpenAIServer, method: StructuredMethod) -> None:
    result = chat(server).with_structured_output(ClaimList, method=method).invoke(DECOMPOSE)
    assert isinstance(result, ClaimList)
    assert result.claims == EXPECTED_CLAIMS
    body = server.requests[-1].body
    if method == "function_calling":
        assert body["tool_choice"]["function"]["name"] == "ClaimList"
    else:
        assert "response_format" in body


def test_claim_verdicts_through_the_client(server: LocalOpenAIServer) -> None:
    result = chat(server).with_structured_output(ClaimVerdicts, method="function_calling")
    verdicts = result.invoke(VERIFY)
    assert isinstance(verdicts, ClaimVerdicts)
    assert [verdict.verdict for verdict in verdicts.verdicts] == ["supported", "contradicted"]


def test_reply_shape_and_usage(server: LocalOpenAIServer) -> None:
    completion = create_chat(
        server, model="judge-b", messages=[{"role": "user", "content": "Hello there"}]
    )
    assert completion.id.startswith("chatcmpl-")
    assert completion.object == "chat.completion"
    assert completion.model == "judge-b"
    assert completion.created > 0
    assert completion.choices[0].finish_reason == "stop"
    assert completion.choices[0].message.content == "OK"  # not a judge prompt
    assert completion.usage is not None
    assert completion.usage.prompt_tokens > 0
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )


async def test_async_client(server: LocalOpenAIServer) -> None:
    structured = chat(server).with_structured_output(ClaimList, method="function_calling")
    results = await structured.abatch([DECOMPOSE] * 4)
    assert all(isinstance(result, ClaimList) for result in results)
    assert server.chat_requests == 4


def test_n_choices(server: LocalOpenAIServer) -> None:
    result = chat(server, n=3).generate([[HumanMessage(content=DECOMPOSE[1][1])]])
    assert len(result.generations[0]) == 3
    assert server.requests[-1].body["n"] == 3
    assert server.chat_requests == 1


def test_custom_responder_sees_choice_index(server: LocalOpenAIServer) -> None:
    def vote(info: RequestInfo) -> dict[str, Any]:
        assert info.schema_name == "ClaimList"
        assert "Einstein" in info.sections["text"]
        return {"claims": [f"vote {info.choice_index}"]}

    server.responder = vote
    try:
        completion = create_chat(
            server,
            messages=[{"role": role, "content": content} for role, content in DECOMPOSE],
            n=3,
            tools=[{"type": "function", "function": {"name": "ClaimList", "parameters": {}}}],
            tool_choice={"type": "function", "function": {"name": "ClaimList"}},
        )
    finally:
        server.responder = heuristic_responder
    choices = completion.model_dump()["choices"]
    arguments = [choice["message"]["tool_calls"][0]["function"]["arguments"] for choice in choices]
    assert arguments == [f'{{"claims": ["vote {index}"]}}' for index in range(3)]
    assert {choice.finish_reason for choice in completion.choices} == {"tool_calls"}


def test_embeddings(server: LocalOpenAIServer) -> None:
    options: dict[str, Any] = {
        "base_url": server.base_url,
        "api_key": "sk-test",
        "model": "emb",
        "check_embedding_ctx_length": False,  # else it downloads tiktoken encodings
        "max_retries": 0,
    }
    embeddings = OpenAIEmbeddings(**options)
    texts = ["The cat sat on the mat.", "A cat sat on a mat.", "Quarterly revenue grew 4%."]
    vectors = np.array(embeddings.embed_documents(texts))
    assert vectors.shape == (3, 64)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert np.allclose(embeddings.embed_query(texts[0]), vectors[0])
    assert server.requests[0].body["encoding_format"] == "base64"
    assert server.embedding_requests == 2
    assert server.chat_requests == 0


def test_embeddings_float_and_dimensions(server: LocalOpenAIServer) -> None:
    client = raw_client(server)
    floats = client.embeddings.create(model="emb", input="你好世界", encoding_format="float")
    assert np.allclose(floats.data[0].embedding, embed_text("你好世界", 64))
    assert floats.usage.prompt_tokens >= 1
    sized = client.embeddings.create(model="emb", input=["a", "b"], dimensions=8)
    assert [len(item.embedding) for item in sized.data] == [8, 8]
    empty = client.embeddings.create(model="emb", input="", encoding_format="float")
    assert np.linalg.norm(empty.data[0].embedding) == pytest.approx(1.0)


def test_requests_are_served_concurrently(server: LocalOpenAIServer) -> None:
    # If the server handled one request at a time, the barrier would time out and the
    # responder would fail. No wall-clock assert needed.
    parties = 8
    barrier = threading.Barrier(parties, timeout=5)

    def wait_for_all(info: RequestInfo) -> str:
        barrier.wait()
        return "done"

    server.responder = wait_for_all
    server.latency = 0.05
    try:
        with ThreadPoolExecutor(parties) as pool:
            replies = list(
                pool.map(
                    lambda i: create_chat(server, messages=[{"role": "user", "content": f"{i}"}]),
                    range(parties),
                )
            )
    finally:
        server.responder = heuristic_responder
    assert [reply.choices[0].message.content for reply in replies] == ["done"] * parties


# ------------------------------------------------------------------------- faults


def test_429_raises_without_retries(server: LocalOpenAIServer) -> None:
    server.faults = Fault("429", retry_after=7)
    with pytest.raises(openai.RateLimitError) as caught:
        chat(server).invoke(DECOMPOSE)
    assert caught.value.response.headers["retry-after"] == "7"
    assert caught.value.response.headers["retry-after-ms"] == "7000"
    assert server.fault_counts == {"429": 1}


def test_429_on_first_attempt_is_retried(server: LocalOpenAIServer) -> None:
    server.faults = on_attempts(Fault("429", retry_after=0.01))
    structured = chat(server, max_retries=1).with_structured_output(
        ClaimList, method="function_calling"
    )
    result = structured.invoke(DECOMPOSE)
    assert isinstance(result, ClaimList)
    assert result.claims == EXPECTED_CLAIMS
    log = server.requests
    assert [(entry.attempt, entry.fault, entry.status) for entry in log] == [
        (0, "429", 429),
        (1, None, 200),
    ]
    assert log[1].headers["x-stainless-retry-count"] == "1"


def test_500(server: LocalOpenAIServer) -> None:
    server.faults = ["500"]
    with pytest.raises(openai.InternalServerError):
        chat(server).invoke(DECOMPOSE)
    server.faults = [Fault("500", status=503)]
    with pytest.raises(openai.InternalServerError) as caught:
        chat(server).invoke(DECOMPOSE)
    assert caught.value.status_code == 503


def test_slow_times_out(server: LocalOpenAIServer) -> None:
    server.faults = [Fault("slow", delay=3.0)]
    with pytest.raises(openai.APITimeoutError):
        chat(server, timeout=0.2).invoke(DECOMPOSE)
    assert server.requests[0].fault == "slow"


def test_malformed_json(server: LocalOpenAIServer) -> None:
    server.faults = "malformed_json"
    calling = chat(server).with_structured_output(ClaimList, method="function_calling")
    assert calling.invoke(DECOMPOSE) is None  # the bad call lands in invalid_tool_calls
    raw = chat(server).with_structured_output(
        ClaimList, method="function_calling", include_raw=True
    )
    assert raw.invoke(DECOMPOSE)["raw"].invalid_tool_calls
    with pytest.raises(ValidationError):
        chat(server).with_structured_output(ClaimList, method="json_schema").invoke(DECOMPOSE)


def test_wrong_shape_raises_validation_error(server: LocalOpenAIServer) -> None:
    server.faults = "wrong_shape"
    methods: list[StructuredMethod] = ["function_calling", "json_schema"]
    for method in methods:
        with pytest.raises(ValidationError):
            chat(server).with_structured_output(ClaimList, method=method).invoke(DECOMPOSE)


def test_truncated(server: LocalOpenAIServer) -> None:
    server.faults = "truncated"
    calling = chat(server).with_structured_output(ClaimList, method="function_calling")
    assert calling.invoke(DECOMPOSE) is None
    # With response_format, the openai client refuses a reply cut at the length limit.
    with pytest.raises(openai.LengthFinishReasonError):
        chat(server).with_structured_output(ClaimList, method="json_schema").invoke(DECOMPOSE)
    completion = create_chat(
        server,
        messages=[{"role": role, "content": content} for role, content in DECOMPOSE],
        response_format={"type": "json_object"},
    )
    assert completion.choices[0].finish_reason == "length"
    content = completion.choices[0].message.content or ""
    assert content.startswith('{"claims": ["Einstein')
    with pytest.raises(ValueError):
        json.loads(content)


def test_short_verdicts(server: LocalOpenAIServer) -> None:
    server.faults = "short_verdicts"
    verify = chat(server).with_structured_output(ClaimVerdicts, method="function_calling")
    result = verify.invoke(VERIFY)
    assert isinstance(result, ClaimVerdicts)
    assert [verdict.index for verdict in result.verdicts] == [1]
    # Not a ClaimVerdicts request: the fault does not apply and is not logged.
    decompose = chat(server).with_structured_output(ClaimList, method="function_calling")
    assert decompose.invoke(DECOMPOSE) == ClaimList(claims=EXPECTED_CLAIMS)
    assert [entry.fault for entry in server.requests] == ["short_verdicts", None]


def test_fault_list_is_consumed_in_order(server: LocalOpenAIServer) -> None:
    server.faults = ["500", None, "429"]
    client = raw_client(server)
    outcomes = []
    for _ in range(4):
        try:
            client.embeddings.create(model="emb", input="x")
            outcomes.append("ok")
        except openai.APIStatusError as error:
            outcomes.append(str(error.status_code))
    assert outcomes == ["500", "ok", "429", "ok"]


def test_content_faults_do_not_apply_to_embeddings(server: LocalOpenAIServer) -> None:
    server.faults = "malformed_json"
    result = raw_client(server).embeddings.create(model="emb", input="x")
    assert len(result.data) == 1
    assert server.requests[0].fault is None


def test_random_faults_are_reproducible(server: LocalOpenAIServer) -> None:
    kinds: list[FaultKind] = ["500", "wrong_shape", "short_verdicts"]

    def run() -> list[tuple[str, str | None]]:
        server.reset()
        server.faults = random_faults(rate=0.5, kinds=kinds, seed=3)
        for index in range(24):
            with contextlib.suppress(openai.InternalServerError):
                create_chat(server, messages=[{"role": "user", "content": f"q{index}"}])
        return [(entry.body["messages"][0]["content"], entry.fault) for entry in server.requests]

    first = run()
    assert run() == first
    applied = {fault for _, fault in first}
    assert applied <= {None, "500", "wrong_shape"}  # short_verdicts needs ClaimVerdicts
    assert None in applied
    assert len(applied) > 1
    with pytest.raises(ValueError):
        random_faults(rate=2)
    with pytest.raises(ValueError):
        Fault("teapot")  # type: ignore[arg-type]
    assert set(FAULT_KINDS) >= set(kinds)


def test_random_faults_max_attempt_lets_retries_through(server: LocalOpenAIServer) -> None:
    server.faults = random_faults(rate=1.0, kinds=["500"], max_attempt=0)
    reply = raw_client(server, max_retries=1).embeddings.create(model="emb", input="x")
    assert len(reply.data) == 1
    assert [entry.fault for entry in server.requests] == ["500", None]


def test_responder_errors_are_not_retried(server: LocalOpenAIServer) -> None:
    def broken(info: RequestInfo) -> str:
        raise RuntimeError("boom")

    server.responder = broken
    try:
        with pytest.raises(openai.InternalServerError, match="boom"):
            chat(server, max_retries=2).invoke(DECOMPOSE)
    finally:
        server.responder = heuristic_responder
    assert server.chat_requests == 1  # x-should-retry: false


# ------------------------------------------------------------------------- log


def test_log_counters_and_redaction(server: LocalOpenAIServer) -> None:
    chat(server).invoke(DECOMPOSE)
    chat(server, model="judge-b").invoke(DECOMPOSE)
    raw_client(server).embeddings.create(model="emb", input=["a", "b"])
    assert server.chat_requests == 2
    assert server.embedding_requests == 1
    assert server.model_counts == {"judge-a": 1, "judge-b": 1, "emb": 1}
    log = server.requests
    assert [entry.path for entry in log] == ["/v1/chat/completions"] * 2 + ["/v1/embeddings"]
    assert [entry.number for entry in log] == [0, 1, 2]
    assert log[0].headers["authorization"] == "<redacted>"
    assert "sk-test" not in repr(log)
    server.reset()
    assert server.requests == []
    assert server.chat_requests == server.embedding_requests == 0
    assert not server.model_counts


def test_unknown_route_and_bad_body() -> None:
    with LocalOpenAIServer(log_bodies=False) as server:
        client = raw_client(server)
        with pytest.raises(openai.NotFoundError):
            client.post("/nowhere", cast_to=object, body={})
        request = urllib.request.Request(
            f"{server.base_url}/chat/completions", data=b"{not json", method="POST"
        )
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=5)
        assert caught.value.code == 400
        caught.value.close()
        client.embeddings.create(model="emb", input="x")
        assert server.requests[0].body is None
        url = server.base_url
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    with pytest.raises(RuntimeError):
        _ = server.base_url
