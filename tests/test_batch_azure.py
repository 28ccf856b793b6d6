"""Batch mode for Azure OpenAI judges: ``AzureChatOpenAI`` and ``AzureOpenAIEmbeddings``
pointed at the local server's Azure routes (``/openai/deployments/...``, ``/openai/files``,
``/openai/batches``, an ``api-version`` on each), through the real openai client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langchain_openai import AzureChatOpenAI, AzureOpenAIEmbeddings

from langchain_answer_metrics import (
    AnswerCorrectness,
    Faithfulness,
    SemanticSimilarity,
    aevaluate_dataset,
    evaluate_dataset,
)
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

pytestmark = pytest.mark.usefixtures("network_attempts")

API_VERSION = "2024-10-21"
SAMPLES: list[dict[str, Any]] = [
    {
        "question": "Who was Albert Einstein?",
        "answer": "Einstein was a physicist. He was born in Germany in 1879.",
        "ground_truth": "Albert Einstein was a German-born theoretical physicist, born in 1879.",
        "contexts": ["Albert Einstein, born 1879 in Ulm, Germany, was a theoretical physicist."],
    },
    {
        "question": "What is the capital of France?",
        "answer": "Paris is the capital of France. It lies on the Seine.",
        "ground_truth": "Paris is the capital of France.",
        "contexts": ["Paris, on the Seine, is the capital and largest city of France."],
    },
]
FAST = {"batch_poll_s": 0.02, "batch_min_requests": 0}


@pytest.fixture
def azure_server(server: LocalOpenAIServer) -> Iterator[LocalOpenAIServer]:
    # The deployments that exist: a line naming the model instead of the deployment
    # fails the batch, as on Azure.
    server.deployments = {"judge-dep", "embed-dep"}
    yield server
    server.deployments = None


def judge(server: LocalOpenAIServer) -> AzureChatOpenAI:
    return AzureChatOpenAI(
        azure_endpoint=server.url,
        azure_deployment="judge-dep",
        model="gpt-4o-mini",
        api_version=API_VERSION,
        api_key="sk-test",
        max_retries=0,
    )


def embedder(server: LocalOpenAIServer) -> AzureOpenAIEmbeddings:
    return AzureOpenAIEmbeddings(
        azure_endpoint=server.url,
        azure_deployment="embed-dep",
        model="text-embedding-3-small",
        api_version=API_VERSION,
        api_key="sk-test",
        check_embedding_ctx_length=False,
    )


def metrics(server: LocalOpenAIServer) -> list[AnswerMetric]:
    llm, embeddings = judge(server), embedder(server)
    return [
        Faithfulness(llm=llm),
        AnswerCorrectness(llm=llm, embeddings=embeddings),
        SemanticSimilarity(embeddings=embeddings),
    ]


def scores(rows: Any) -> list[dict[str, float | None]]:
    return [{key: result.score for key, result in row.results.items()} for row in rows]


def test_azure_judges_run_in_batches_as_they_score_live(azure_server: LocalOpenAIServer) -> None:
    live = evaluate_dataset(SAMPLES, metrics(azure_server))
    assert [row.errors for row in live] == [{}, {}]
    live_paths = {entry.path for entry in azure_server.requests}
    assert live_paths == {
        "/openai/deployments/judge-dep/chat/completions",
        "/openai/deployments/embed-dep/embeddings",
    }
    live_requests = azure_server.chat_requests + azure_server.embedding_requests
    azure_server.reset()

    batched = evaluate_dataset(
        SAMPLES, metrics(azure_server), batch=True, batch_keep_files=True, **FAST
    )
    assert [row.errors for row in batched] == [{}, {}]
    assert scores(batched) == [pytest.approx(row, abs=1e-9) for row in scores(live)]  # type: ignore[misc]
    assert azure_server.chat_requests == 0 and azure_server.embedding_requests == 0
    assert azure_server.batch.lines == live_requests
    # Azure's shape: endpoints without /v1, every line naming its deployment.
    jobs = list(azure_server.batch.jobs.values())
    assert {job.endpoint for job in jobs} == {"/chat/completions", "/embeddings"}
    assert {job.model for job in jobs} == {"judge-dep", "embed-dep"}
    for stored in azure_server.batch.files.values():
        if stored.purpose == "batch":
            for text in stored.data.decode().splitlines():
                line = json.loads(text)
                assert line["url"] in ("/chat/completions", "/embeddings")
                assert line["body"]["model"] in ("judge-dep", "embed-dep")


async def test_the_async_surface_runs_azure_batches(azure_server: LocalOpenAIServer) -> None:
    live = await aevaluate_dataset(SAMPLES, metrics(azure_server)[:1])
    azure_server.reset()
    batched = await aevaluate_dataset(SAMPLES, metrics(azure_server)[:1], batch=True, **FAST)
    assert scores(batched) == scores(live) and azure_server.chat_requests == 0


def test_the_local_server_answers_azures_routes_as_azure_does(
    azure_server: LocalOpenAIServer,
) -> None:
    headers = {"api-key": "sk-test"}
    body = {"messages": [{"role": "user", "content": "hi"}]}
    with httpx.Client(base_url=azure_server.url, headers=headers) as client:
        no_version = client.post("/openai/deployments/judge-dep/chat/completions", json=body)
        assert no_version.status_code == 404
        assert no_version.json()["error"]["message"] == "Resource not found"
        unknown = client.post(
            f"/openai/deployments/nope/chat/completions?api-version={API_VERSION}", json=body
        )
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == "DeploymentNotFound"
        query = {"api-version": API_VERSION}
        line = {"custom_id": "a", "method": "POST", "url": "/chat/completions", "body": body}
        files = {"file": ("in.jsonl", json.dumps({**line, "body": {**body, "model": "x"}}))}
        uploaded = client.post(
            "/openai/files", params=query, files=files, data={"purpose": "batch"}
        )
        assert uploaded.json()["status"] == "pending"
        file_id = uploaded.json()["id"]
        create = {
            "input_file_id": file_id,
            "endpoint": "/chat/completions",
            "completion_window": "24h",
        }
        early = client.post("/openai/batches", params=query, json=create)
        assert early.status_code == 400 and "not processed" in early.text
        assert client.get(f"/openai/files/{file_id}", params=query).json()["status"] == "pending"
        assert client.get(f"/openai/files/{file_id}", params=query).json()["status"] == "processed"
        v1 = client.post(
            "/openai/batches", params=query, json={**create, "endpoint": "/v1/chat/completions"}
        )
        assert v1.status_code == 400
        created = client.post("/openai/batches", params=query, json=create).json()
        ended = client.get(f"/openai/batches/{created['id']}", params=query).json()
        # Its line named a model that is not a deployment: the batch fails validation.
        assert ended["status"] == "failed"
        assert "deployment 'x'" in ended["errors"]["data"][0]["message"]


def test_azures_v1_routes_take_the_openai_shape(azure_server: LocalOpenAIServer) -> None:
    from langchain_openai import ChatOpenAI

    def v1() -> list[AnswerMetric]:
        llm = ChatOpenAI(
            model="judge-dep",  # on /openai/v1/, the deployment is the model
            base_url=f"{azure_server.url}/openai/v1",
            api_key="sk-test",
            use_responses_api=False,
            max_retries=0,
        )
        return [Faithfulness(llm=llm)]

    live = evaluate_dataset(SAMPLES, v1())
    assert {entry.path for entry in azure_server.requests} == {"/openai/v1/chat/completions"}
    azure_server.reset()
    batched = evaluate_dataset(SAMPLES, v1(), batch=True, **FAST)
    assert scores(batched) == scores(live) and azure_server.chat_requests == 0
    assert {job.endpoint for job in azure_server.batch.jobs.values()} == {"/v1/chat/completions"}
