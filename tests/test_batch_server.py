"""The local server's Files and Batches API, through the real ``openai`` client."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

pytestmark = pytest.mark.usefixtures("network_attempts")

QUESTION = "<question>What is the capital of France?</question>"


@pytest.fixture
def batch_server(server: LocalOpenAIServer) -> Iterator[LocalOpenAIServer]:
    batch = server.batch
    yield server
    batch.enabled, batch.delay, batch.line_faults, batch.outcome = True, 0.0, None, None
    batch.release()


def client(server: LocalOpenAIServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0)


def chat_line(custom_id: str, text: str, model: str = "judge-a") -> dict[str, Any]:
    return {
        "custom_id": custom_id,
        "method": "POST",
        "url": "/v1/chat/completions",
        "body": {"model": model, "messages": [{"role": "user", "content": text}]},
    }


def upload(api: openai.OpenAI, lines: list[dict[str, Any]]) -> str:
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return api.files.create(file=("input.jsonl", io.BytesIO(data)), purpose="batch").id


def wait(api: openai.OpenAI, batch_id: str) -> Any:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        batch = api.batches.retrieve(batch_id)
        if batch.status in ("completed", "failed", "expired", "cancelled"):
            return batch
        time.sleep(0.02)
    raise AssertionError(f"batch {batch_id} did not end")


def lines_of(api: openai.OpenAI, file_id: str | None) -> dict[str, dict[str, Any]]:
    if file_id is None:
        return {}
    text = api.files.content(file_id).text
    return {row["custom_id"]: row for row in map(json.loads, text.splitlines())}


def test_files_upload_retrieve_content_delete(batch_server: LocalOpenAIServer) -> None:
    api = client(batch_server)
    lines = [chat_line("a", "hello")]
    file_id = upload(api, lines)
    described = api.files.retrieve(file_id)
    assert described.purpose == "batch" and described.bytes > 0
    assert json.loads(api.files.content(file_id).text) == lines[0]
    assert api.files.delete(file_id).deleted
    with pytest.raises(openai.NotFoundError):
        api.files.retrieve(file_id)


def test_a_batch_is_answered_by_the_live_judge_logic_and_counted_apart(
    batch_server: LocalOpenAIServer,
) -> None:
    api = client(batch_server)
    live = api.chat.completions.create(
        model="judge-a", messages=[{"role": "user", "content": QUESTION}]
    )
    batch_server.reset()
    batch_server.batch.delay = 0.1
    batch = api.batches.create(
        input_file_id=upload(api, [chat_line("q1", QUESTION), chat_line("q2", "hi")]),
        endpoint="/v1/chat/completions",
        completion_window="24h",
    )
    assert api.batches.retrieve(batch.id).status == "in_progress"
    ended = wait(api, batch.id)
    assert ended.status == "completed"
    assert ended.request_counts.total == 2 and ended.request_counts.completed == 2
    output = lines_of(api, ended.output_file_id)
    assert set(output) == {"q1", "q2"}
    reply = output["q1"]["response"]
    assert reply["status_code"] == 200 and output["q1"]["error"] is None
    assert reply["body"]["choices"][0]["message"]["content"] == live.choices[0].message.content
    assert batch_server.chat_requests == 0  # lines are not live requests
    assert batch_server.batch.lines == 2
    usage = batch_server.batch.usage["judge-a"]
    assert usage["requests"] == 2 and usage["prompt_tokens"] > 0
    listed = api.batches.list()
    assert [item.id for item in listed.data] == [batch.id]


def test_embeddings_batch(batch_server: LocalOpenAIServer) -> None:
    api = client(batch_server)
    line = {
        "custom_id": "e1",
        "method": "POST",
        "url": "/v1/embeddings",
        "body": {"model": "embed-a", "input": ["a cat", "a dog"]},
    }
    batch = api.batches.create(
        input_file_id=upload(api, [line]), endpoint="/v1/embeddings", completion_window="24h"
    )
    ended = wait(api, batch.id)
    vectors = lines_of(api, ended.output_file_id)["e1"]["response"]["body"]["data"]
    assert len(vectors) == 2 and len(vectors[0]["embedding"]) == batch_server.embedding_dim


def test_failed_lines_in_both_forms_then_answered_on_the_next_attempt(
    batch_server: LocalOpenAIServer,
) -> None:
    api = client(batch_server)
    kinds = {"a": "error", "b": "status"}
    batch_server.batch.line_faults = lambda line: (
        kinds.get(line.custom_id) if line.attempt == 0 else None
    )
    lines = [chat_line("a", "one"), chat_line("b", "two"), chat_line("c", "three")]
    first = wait(
        api,
        api.batches.create(
            input_file_id=upload(api, lines),
            endpoint="/v1/chat/completions",
            completion_window="24h",
        ).id,
    )
    assert first.status == "completed"
    assert (first.request_counts.completed, first.request_counts.failed) == (1, 2)
    errors = lines_of(api, first.error_file_id)
    assert errors["a"]["response"] is None and errors["a"]["error"]["code"] == "server_error"
    assert errors["b"]["error"] is None and errors["b"]["response"]["status_code"] == 500
    again = wait(
        api,
        api.batches.create(
            input_file_id=upload(api, lines[:2]),
            endpoint="/v1/chat/completions",
            completion_window="24h",
        ).id,
    )
    assert set(lines_of(api, again.output_file_id)) == {"a", "b"}


def test_expired_failed_and_cancelled_batches(batch_server: LocalOpenAIServer) -> None:
    api = client(batch_server)
    batch_server.batch.line_faults = lambda line: "expired" if line.custom_id == "b" else None
    lines = [chat_line("a", "one"), chat_line("b", "two")]
    expired = wait(
        api,
        api.batches.create(
            input_file_id=upload(api, lines),
            endpoint="/v1/chat/completions",
            completion_window="24h",
        ).id,
    )
    assert expired.status == "expired"
    assert set(lines_of(api, expired.output_file_id)) == {"a"}
    assert lines_of(api, expired.error_file_id)["b"]["error"]["code"] == "batch_expired"

    batch_server.batch.line_faults = None
    batch_server.batch.outcome = lambda job: "failed"
    failed = wait(
        api,
        api.batches.create(
            input_file_id=upload(api, lines),
            endpoint="/v1/chat/completions",
            completion_window="24h",
        ).id,
    )
    assert failed.status == "failed" and failed.errors is not None
    assert failed.errors.data[0].message == "The batch failed (injected)."

    batch_server.batch.outcome = None
    batch_server.batch.hold()
    held = api.batches.create(
        input_file_id=upload(api, lines),
        endpoint="/v1/chat/completions",
        completion_window="24h",
    )
    assert api.batches.retrieve(held.id).status == "in_progress"
    assert api.batches.cancel(held.id).status == "cancelled"
    batch_server.batch.release()
    assert api.batches.retrieve(held.id).status == "cancelled"


def test_invalid_input_fails_validation_with_the_reason(batch_server: LocalOpenAIServer) -> None:
    api = client(batch_server)
    mixed = [chat_line("a", "one", model="judge-a"), chat_line("b", "two", model="judge-b")]
    batch = wait(
        api,
        api.batches.create(
            input_file_id=upload(api, mixed),
            endpoint="/v1/chat/completions",
            completion_window="24h",
        ).id,
    )
    assert batch.status == "failed" and batch.errors is not None
    assert "one model per batch file" in (batch.errors.data[0].message or "")
    with pytest.raises(openai.BadRequestError):
        api.batches.create(
            input_file_id=upload(api, mixed),
            endpoint="/v1/responses",  # type: ignore[arg-type]
            completion_window="24h",
        )


def test_a_server_without_the_batch_api_answers_404(batch_server: LocalOpenAIServer) -> None:
    batch_server.batch.enabled = False
    api = client(batch_server)
    with pytest.raises(openai.NotFoundError):
        api.batches.list()
    with pytest.raises(openai.NotFoundError):
        upload(api, [chat_line("a", "one")])
