"""SemanticSimilarity.abatch queues its samples' texts before starting the samples.

Behaviour only (no timings): the same requests and results as embedding each sample's
texts when it runs, requests that leave before every sample has started, usage carried
by the first sample asking for a text, and a failed batch never sent again per sample.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler

from langchain_answer_metrics import SemanticSimilarity
from langchain_answer_metrics.judging.batching import EmbeddingBatcher
from langchain_answer_metrics.judging.judges import Embedder
from langchain_answer_metrics.judging.scope import RunScope, run_scope
from langchain_answer_metrics.metrics import semantic_similarity
from langchain_answer_metrics.testing.scripted import ScriptedEmbeddings


def sample(index: int) -> dict[str, str]:
    return {
        "response": f"Event {index} happened in {1800 + index}.",
        "reference": f"Event {index} took place in {1800 + index}.",
    }


class Recorded(ScriptedEmbeddings):
    """Scripted embeddings (each request's texts in ``requests``) that also record how
    many samples had started when each request was sent."""

    def __init__(self, started: list[int], **options: Any) -> None:
        super().__init__(**options)
        self.started_when_sent: list[int] = []
        self.started = started

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        self.started_when_sent.append(self.started[0])
        return await super().aembed_documents(texts)


def counting_starts(monkeypatch: Any) -> list[int]:
    """Counts the samples whose scoring has begun (their ``ainvoke`` called)."""
    started = [0]
    original = SemanticSimilarity.ainvoke

    async def ainvoke(self: SemanticSimilarity, *args: Any, **kwargs: Any) -> Any:
        started[0] += 1
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(SemanticSimilarity, "ainvoke", ainvoke)
    return started


async def test_abatch_sends_full_batches_before_every_sample_has_started(
    monkeypatch: Any,
) -> None:
    started = counting_starts(monkeypatch)
    embeddings = Recorded(started, latency=0.01)
    metric = SemanticSimilarity(embeddings=[Embedder(model=embeddings, batch_size=8)])
    samples = [sample(i) for i in range(40)]

    results = await metric.abatch(samples, {"max_concurrency": 2})

    # The same requests as when each sample queues its own texts: full, in sample order.
    texts = [text for each in samples for text in (each["response"], each["reference"])]
    assert embeddings.requests == [texts[start : start + 8] for start in range(0, 80, 8)]
    # The first requests left while most samples had not started yet.
    assert embeddings.started_when_sent[0] < len(samples) // 2
    # Scores as if each sample were scored alone.
    alone = [metric.invoke(each) for each in samples[:3]]
    assert [result.score for result in results[:3]] == [result.score for result in alone]


async def test_usage_is_carried_by_the_first_sample_asking_for_a_text() -> None:
    embeddings = ScriptedEmbeddings()
    metric = SemanticSimilarity(embeddings=[Embedder(model=embeddings, batch_size=8)])
    shared = "The reference every sample shares."
    samples = [{"response": f"Answer {i}.", "reference": shared} for i in range(5)]

    results = await metric.abatch(samples)

    tokens = [result.usage[metric.embeddings[0].label].input_tokens for result in results]
    alone = SemanticSimilarity(embeddings=[Embedder(model=embeddings, batch_size=8)])
    first = alone.invoke(samples[0]).usage[alone.embeddings[0].label].input_tokens
    only_response = alone.invoke({"response": "Answer 1.", "reference": "Answer 1."})
    assert tokens[0] == first  # its response and the shared reference
    assert tokens[1:] == [only_response.usage[alone.embeddings[0].label].input_tokens] * 4


async def test_a_failed_reserved_batch_is_not_sent_again_by_each_sample() -> None:
    embeddings = ScriptedEmbeddings(fail_with=ConnectionError("endpoint down"))
    metric = SemanticSimilarity(embeddings=[Embedder(model=embeddings, batch_size=8)])

    results = await metric.abatch([sample(i) for i in range(12)], return_exceptions=True)

    assert all(isinstance(result, Exception) for result in results)
    assert len(embeddings.requests) == 3  # 24 texts in batches of 8, each sent once


async def test_invalid_samples_reserve_nothing_and_reservations_are_released() -> None:
    embeddings = Recorded([0])
    metric = SemanticSimilarity(embeddings=[Embedder(model=embeddings, batch_size=8)])
    scope = RunScope()
    with run_scope(scope):
        results = await metric.abatch(
            [sample(1), {"response": "no reference"}, sample(2)], return_exceptions=True
        )

    assert isinstance(results[1], Exception)
    assert embeddings.requests == [
        [
            sample(1)["response"],
            sample(1)["reference"],
            sample(2)["response"],
            sample(2)["reference"],
        ]
    ]
    (batcher,) = scope.batchers.values()
    assert isinstance(batcher, EmbeddingBatcher)
    assert not batcher._reserved  # every claim came, or was released


async def test_a_cancelled_abatch_stops_its_samples(monkeypatch: Any) -> None:
    monkeypatch.setattr(semantic_similarity, "START_SLICE", 2)
    embeddings = ScriptedEmbeddings(latency=10.0)
    metric = SemanticSimilarity(embeddings=[Embedder(model=embeddings, batch_size=8)])
    before = asyncio.all_tasks()

    scoring = asyncio.ensure_future(metric.abatch([sample(i) for i in range(10)]))
    await asyncio.sleep(0.05)
    scoring.cancel()
    await asyncio.gather(scoring, return_exceptions=True)
    await asyncio.sleep(0)

    assert scoring.cancelled()
    # The samples are stopped (a batch already sent is the batcher's, shared, and ends
    # on its own, as before).
    left = {task.get_coro().__qualname__ for task in asyncio.all_tasks() - before}
    assert left <= {
        "EmbeddingBatcher._send_batch",
        test_a_cancelled_abatch_stops_its_samples.__qualname__,
    }


async def test_a_caller_cancelled_while_waiting_leaves_the_shared_request_alone() -> None:
    release = asyncio.Event()
    sent: list[list[str]] = []

    async def send(texts: list[str]) -> list[list[float]]:
        sent.append(texts)
        await release.wait()
        return [[1.0, float(len(text))] for text in texts]

    batcher = EmbeddingBatcher(send, batch_size=2)
    first = asyncio.ensure_future(batcher.embed(["a", "bb"]))
    second = asyncio.ensure_future(batcher.embed(["bb"]))
    await asyncio.sleep(0.01)
    first.cancel()
    await asyncio.sleep(0)
    release.set()

    assert [list(vector) for vector in await second] == [[1.0, 2.0]]
    assert first.cancelled() and sent == [["a", "bb"]]
    assert [list(vector) for vector in await batcher.embed(["a"])] == [[1.0, 1.0]]  # kept


async def test_a_failed_text_fails_the_call_at_once() -> None:
    async def send(texts: list[str]) -> list[list[float]]:
        if texts == ["slow"]:
            await asyncio.sleep(10)
        raise ValueError(f"no vectors for {texts}")

    batcher = EmbeddingBatcher(send, batch_size=1)
    try:
        await asyncio.wait_for(batcher.embed(["slow", "bad"]), timeout=1)
    except ValueError as error:
        assert "bad" in str(error)
    else:
        raise AssertionError("expected the failure of 'bad'")
    finally:
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()  # the slow request


async def test_recorded_runs_batch_as_before(monkeypatch: Any) -> None:
    # With a handler, each sample queues its own texts, as before the reservation, so a
    # shared request's runs hang off the sample that filled its batch.
    started = counting_starts(monkeypatch)
    embeddings = Recorded(started, latency=0.01)
    metric = SemanticSimilarity(embeddings=[Embedder(model=embeddings, batch_size=8)])
    samples = [sample(i) for i in range(40)]
    handler = AsyncCallbackHandler()

    traced = await metric.abatch(samples, {"max_concurrency": 2, "callbacks": [handler]})

    assert embeddings.started_when_sent[0] == len(samples)  # every sample first
    texts = [text for each in samples for text in (each["response"], each["reference"])]
    assert embeddings.requests == [texts[start : start + 8] for start in range(0, 80, 8)]
    plain = await metric.abatch(samples[:3])
    assert [result.score for result in traced[:3]] == [result.score for result in plain]
