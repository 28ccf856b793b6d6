"""The runner's read-ahead window (run/window.py): a group of samples queues its shared
embedding texts before it starts, and the default window fills the request budget.

Behaviour only (no timings): full batches for the first samples leave before those
samples start, usage still adds up to the requests sent, nothing is reserved for a
sample not yet admitted under the limits, and reservations are released.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackHandler
from test_embedding_reserve import Recorded, counting_starts, sample

from langchain_answer_metrics import Faithfulness, SemanticSimilarity
from langchain_answer_metrics.judging.batching import EmbeddingBatcher
from langchain_answer_metrics.judging.judges import Embedder
from langchain_answer_metrics.judging.scope import RunScope
from langchain_answer_metrics.run.limits import Admission
from langchain_answer_metrics.run.runner import aevaluate, astream_evaluate
from langchain_answer_metrics.run.window import MAX_WINDOW, MIN_WINDOW, window_size
from langchain_answer_metrics.testing.scripted import ScriptedChatModel, ScriptedEmbeddings


def texts_of(samples: list[dict[str, str]]) -> list[str]:
    return [text for each in samples for text in (each["response"], each["reference"])]


async def test_the_first_requests_carry_full_batches_before_the_samples_start(
    monkeypatch: Any,
) -> None:
    started = counting_starts(monkeypatch)
    embeddings = Recorded(started, latency=0.01)
    metric = SemanticSimilarity(embeddings=[Embedder(model=embeddings, batch_size=8)])
    samples = [sample(i) for i in range(40)]

    rows = await aevaluate(samples, [metric], max_concurrency=2)

    texts = texts_of(samples)
    assert embeddings.requests == [texts[start : start + 8] for start in range(0, 80, 8)]
    # The budget's first two requests left before any sample had started.
    assert embeddings.started_when_sent[:2] == [0, 0]
    alone = [metric.invoke(each) for each in samples[:3]]
    assert [row.results[metric.key].score for row in rows[:3]] == [result.score for result in alone]


async def test_recorded_runs_queue_their_own_texts(monkeypatch: Any) -> None:
    # With a handler, the runner reserves nothing (as abatch): each sample queues its
    # own texts, so a shared request's runs hang off the sample that filled its batch.
    started = counting_starts(monkeypatch)
    embeddings = Recorded(started, latency=0.01)
    metric = SemanticSimilarity(embeddings=[Embedder(model=embeddings, batch_size=8)])
    samples = [sample(i) for i in range(24)]

    await aevaluate(samples, [metric], config={"callbacks": [AsyncCallbackHandler()]})

    assert embeddings.started_when_sent[0] == len(samples)
    texts = texts_of(samples)
    assert embeddings.requests == [texts[start : start + 8] for start in range(0, 48, 8)]


async def test_usage_adds_up_across_groups_sharing_texts() -> None:
    # A small window: many groups, references shared across them, a failing sample.
    model = ScriptedEmbeddings(model="embed-a")
    metric = SemanticSimilarity(embeddings=Embedder(model=model, batch_size=8))
    samples: list[Any] = [
        {"response": f"Answer number {i}.", "reference": f"Reference {i % 7}."} for i in range(60)
    ]
    samples[13] = {"response": "no reference"}

    rows = [row async for row in astream_evaluate(samples, [metric], window=8)]

    outcomes = [row.results[metric.key] for row in rows]
    assert outcomes[13].error_type == "InvalidSampleError"  # type: ignore[union-attr]
    requests = sum(
        outcome.usage["embed-a"].requests for outcome in outcomes if "embed-a" in outcome.usage
    )
    assert len(model.requests) > 1
    assert requests == len(model.requests)
    sent = [text for request in model.requests for text in request]
    assert len(sent) == len(set(sent))  # each text sent once


async def test_reservations_are_released_when_the_groups_are_done(monkeypatch: Any) -> None:
    scopes: list[RunScope] = []
    original = RunScope.__init__

    def init(self: RunScope, **options: Any) -> None:
        original(self, **options)
        scopes.append(self)

    monkeypatch.setattr(RunScope, "__init__", init)
    model = ScriptedEmbeddings()
    metric = SemanticSimilarity(embeddings=Embedder(model=model, batch_size=8))
    samples = [sample(i) for i in range(50)] + [{"response": "no reference"}]

    [row async for row in astream_evaluate(samples, [metric], window=16)]

    (batcher,) = scopes[0].batchers.values()
    assert isinstance(batcher, EmbeddingBatcher)
    assert not batcher._reserved


async def test_nothing_is_reserved_for_samples_not_admitted_under_limits(
    monkeypatch: Any,
) -> None:
    admitted: set[int] = set()
    reserved_early: list[float] = []
    started = Admission.started

    def record_start(self: Admission, index: int, size: Any) -> None:
        admitted.add(index)
        started(self, index, size)

    reserve = SemanticSimilarity.reserve_requests

    def record_reserve(self: SemanticSimilarity, samples: Any, config: Any = None) -> Any:
        reserved_early.extend(position for position, _ in samples if position not in admitted)
        assert samples  # a group reserves only where it has samples to score
        return reserve(self, samples, config)

    monkeypatch.setattr(Admission, "started", record_start)
    monkeypatch.setattr(SemanticSimilarity, "reserve_requests", record_reserve)
    model = ScriptedEmbeddings(model="embed-a")
    metric = SemanticSimilarity(embeddings=Embedder(model=model, batch_size=8))
    samples = [sample(i) for i in range(30)]

    rows = await aevaluate(samples, [metric], max_requests=6)

    assert reserved_early == []
    assert 0 < len(admitted) < len(samples)  # the limit stopped the run part-way
    assert len(model.requests) <= 6
    scored = [row for row in rows if not row.not_run]
    assert sum(
        row.results[metric.key].usage["embed-a"].requests  # type: ignore[union-attr]
        for row in scored
    ) == len(model.requests)


def test_the_default_window_fills_the_budget_with_full_batches() -> None:
    semantic = SemanticSimilarity(embeddings=Embedder(model=ScriptedEmbeddings(), batch_size=128))
    judged = Faithfulness(llm=ScriptedChatModel(responder=lambda *_: {}))
    # Two texts a sample, 128 a batch: 64 samples a request; 8 in flight, 8 queued.
    assert window_size([semantic], 8) == 2 * 8 * 64
    assert window_size([semantic], 64) == MAX_WINDOW
    # A judged metric's samples make their own requests: they fill the budget.
    assert window_size([judged, semantic], 8) == MIN_WINDOW
    assert window_size([judged], 8) == MIN_WINDOW
    assert window_size([judged], 64) == 8 * 64
    assert window_size([semantic], 8, window=100) == 100


async def test_the_budget_is_filled_by_full_batches() -> None:
    model = ScriptedEmbeddings(latency=0.05)
    metric = SemanticSimilarity(embeddings=Embedder(model=model, batch_size=128))
    samples = [sample(i) for i in range(1100)]

    await aevaluate(samples, [metric], max_concurrency=8)

    assert len(model.requests) == 18  # 2200 texts, 128 a request
    assert all(len(request) == 128 for request in model.requests[:-1])
    # With the former window of 256 samples, 4 requests at a time.
    assert model.max_in_flight == 8
