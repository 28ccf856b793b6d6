"""The dataset runner: ordered, streamed, one request budget, an outcome for every sample.

Behaviour only (no timings): results come back in input order whatever the latency of
each sample; a generator is read a window at a time; one ``max_concurrency`` caps the
requests in flight across every metric and model, chat and embedding alike; a failing
sample becomes an explicit :class:`MetricError` without touching the others.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import math
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import fact_judge, fact_responder
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler

from langchain_answer_metrics import (
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    MetricResult,
    SemanticSimilarity,
)
from langchain_answer_metrics.judging.judges import Embedder
from langchain_answer_metrics.judging.scope import RunScope, run_scope
from langchain_answer_metrics.run.runner import (
    MetricError,
    Progress,
    aevaluate,
    astream_evaluate,
    evaluate,
    stream_evaluate,
)
from langchain_answer_metrics.testing.scripted import (
    Reply,
    ScriptedChatModel,
    ScriptedEmbeddings,
    prompt_section,
)


def sample(index: int) -> dict[str, Any]:
    return {
        "user_input": f"What happened in year {1800 + index}?",
        "response": f"Event {index} happened in {1800 + index}. It was in city {index}.",
        "reference": f"Event {index} took place in {1800 + index}.",
        "retrieved_contexts": [f"Event {index} is recorded in {1800 + index}."],
    }


def five_metrics(llm: Any, embeddings: Any) -> list[Any]:
    return [
        FactualCorrectness(llm=llm),
        AnswerCorrectness(llm=llm, embeddings=embeddings),
        Faithfulness(llm=llm),
        SemanticSimilarity(embeddings=embeddings),
        AspectCritic(llm=llm, name="has_year", criterion="It gives a year."),
    ]


class InFlight:
    """A request counter shared by several models: the peak is across all of them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.total = 0

    def __enter__(self) -> None:
        with self._lock:
            self.now += 1
            self.total += 1
            self.peak = max(self.peak, self.now)

    def __exit__(self, *_: object) -> None:
        with self._lock:
            self.now -= 1


class CountedChatModel(ScriptedChatModel):
    """A scripted judge that reports its requests to a shared :class:`InFlight`.

    ``jitter`` adds a per-prompt delay (stable for a prompt, different across prompts).
    """

    counter: Any = None
    jitter: float = 0.0

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self.counter or InFlight():
            if self.jitter:
                digest = hashlib.sha256(str(messages[-1].content).encode()).digest()
                await asyncio.sleep(self.jitter * digest[0] / 255)
            return await super()._agenerate(messages, stop, run_manager, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # The sync surface calls models through their sync interface, in worker threads.
        with self.counter or InFlight():
            if self.jitter:
                digest = hashlib.sha256(str(messages[-1].content).encode()).digest()
                time.sleep(self.jitter * digest[0] / 255)
            return super()._generate(messages, stop, run_manager, **kwargs)


class CountedEmbeddings(ScriptedEmbeddings):
    """Scripted embeddings reporting their requests to a shared :class:`InFlight`."""

    def __init__(self, counter: InFlight, **options: Any) -> None:
        super().__init__(**options)
        self.counter = counter

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        with self.counter:
            return await super().aembed_documents(texts)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        with self.counter:
            return super().embed_documents(texts)


def counted_models(
    latency: float = 0.01,
) -> tuple[InFlight, CountedChatModel, CountedChatModel, CountedEmbeddings]:
    counter = InFlight()
    first = CountedChatModel(
        responder=fact_responder(votes=("PASS", "FAIL", "PASS")),
        model="judge-a",
        latency=latency,
        counter=counter,
    )
    second = CountedChatModel(
        responder=fact_responder(votes=("PASS", "PASS", "FAIL")),
        model="judge-b",
        latency=latency,
        counter=counter,
    )
    embeddings = CountedEmbeddings(counter, latency=latency)
    return counter, first, second, embeddings


# ---------------------------------------------------------------------- order and outcomes


def test_rows_come_back_in_input_order_despite_random_latency() -> None:
    judge = CountedChatModel(responder=fact_responder(), model="judge-a", jitter=0.03)
    samples = [sample(index) for index in range(40)]

    rows = evaluate(samples, [Faithfulness(llm=judge)], max_concurrency=8)

    assert [row.index for row in rows] == list(range(40))
    for index, row in enumerate(rows):
        result = row.results["faithfulness"]
        assert isinstance(result, MetricResult)
        claims = result.details["models"]["judge-a"]["response_claims"]
        assert claims[0]["claim"] == f"Event {index} happened in {1800 + index}."


def test_every_sample_and_metric_has_a_result_or_an_explicit_error() -> None:
    def responder(schema: str, messages: list[BaseMessage]) -> Reply:
        if schema == "ClaimList" and "poison" in prompt_section(messages, "text"):
            return RuntimeError("the judge is down for this one")
        return fact_responder()(schema, messages)

    judge = ScriptedChatModel(responder=responder, model="judge-a")
    embeddings = ScriptedEmbeddings()
    samples = [sample(index) for index in range(6)]
    samples[2] = {**samples[2], "response": "This poison sample breaks the judge."}
    samples[4] = {key: value for key, value in samples[4].items() if key != "reference"}
    metrics = five_metrics(judge, embeddings)

    rows = evaluate(samples, metrics)

    keys = {metric.key for metric in metrics}
    assert all(set(row.results) == keys for row in rows)
    for row in rows:
        for outcome in row.results.values():
            assert isinstance(outcome, (MetricResult, MetricError))
            if isinstance(outcome, MetricResult):
                assert math.isfinite(outcome.score)
    # The judge failed on sample 2's response: every metric that decomposes it fails.
    assert set(rows[2].errors) == {"factual_correctness", "answer_correctness", "faithfulness"}
    assert rows[2].errors["faithfulness"].error_type == "AllModelsFailedError"
    assert "down for this one" in rows[2].errors["faithfulness"].message
    assert isinstance(rows[2].results["semantic_similarity"], MetricResult)
    # Sample 4 has no reference: the metrics that need one say so; the others score.
    assert set(rows[4].errors) == {
        "factual_correctness",
        "answer_correctness",
        "semantic_similarity",
    }
    assert rows[4].errors["factual_correctness"].error_type == "InvalidSampleError"
    assert isinstance(rows[4].results["faithfulness"], MetricResult)
    # The other samples are untouched.
    assert all(not rows[index].errors for index in (0, 1, 3, 5))


def test_metrics_with_the_same_key_are_refused() -> None:
    judge = fact_judge()
    with pytest.raises(ValueError, match="faithfulness"):
        evaluate([sample(0)], [Faithfulness(llm=judge), Faithfulness(llm=judge)])


def test_progress_reports_increasing_done() -> None:
    seen: list[Progress] = []
    samples = [sample(index) for index in range(12)]
    samples[3] = {"response": "no reference"}

    evaluate(samples, [FactualCorrectness(llm=fact_judge())], on_progress=seen.append)

    assert [progress.done for progress in seen] == list(range(1, 13))
    assert all(progress.total == 12 for progress in seen)
    assert seen[-1].errors == 1
    assert all(later.elapsed >= earlier.elapsed for earlier, later in itertools.pairwise(seen))


def test_progress_total_is_unknown_for_a_generator() -> None:
    seen: list[Progress] = []

    rows = evaluate(
        (sample(index) for index in range(5)),
        [Faithfulness(llm=fact_judge())],
        on_progress=seen.append,
    )

    assert len(rows) == 5
    assert [progress.done for progress in seen] == [1, 2, 3, 4, 5]
    assert {progress.total for progress in seen} == {None}


async def test_aevaluate_matches_evaluate() -> None:
    samples = [sample(index) for index in range(5)]

    rows = await aevaluate(samples, [FactualCorrectness(llm=fact_judge())])

    expected = evaluate(samples, [FactualCorrectness(llm=fact_judge())])
    assert [row.model_dump() for row in rows] == [row.model_dump() for row in expected]


# ---------------------------------------------------------------------- streaming


class CountingSource:
    """A generator of samples that records how many have been pulled."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.pulled = 0

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for index in range(self.count):
            self.pulled += 1
            yield sample(index)


async def test_a_generator_is_read_one_window_ahead() -> None:
    source = CountingSource(200)
    judge = fact_judge(latency=0.005)
    pulled_at_row: list[int] = []

    async for row in astream_evaluate(
        iter(source), [Faithfulness(llm=judge)], max_concurrency=4, window=10
    ):
        pulled_at_row.append(source.pulled)
        assert row.index == len(pulled_at_row) - 1

    assert len(pulled_at_row) == 200
    assert pulled_at_row[0] <= 10
    assert all(pulled <= index + 11 for index, pulled in enumerate(pulled_at_row))


def test_the_default_window_is_bounded_not_the_whole_input() -> None:
    source = CountingSource(2000)
    stream = stream_evaluate(iter(source), [Faithfulness(llm=fact_judge())], max_concurrency=4)

    first = next(stream)
    pulled = source.pulled
    stream.close()

    assert first.index == 0
    assert pulled <= 256 < 2000


def test_stream_evaluate_yields_rows_before_the_input_ends() -> None:
    source = CountingSource(50)

    rows = []
    for row in stream_evaluate(
        iter(source), [Faithfulness(llm=fact_judge())], max_concurrency=2, window=5
    ):
        rows.append((row.index, source.pulled))

    assert [index for index, _ in rows] == list(range(50))
    assert rows[0][1] <= 5


# ---------------------------------------------------------------------- one request budget


@pytest.mark.parametrize("cap", [1, 3, 7])
def test_the_cap_holds_across_metrics_and_models(cap: int) -> None:
    counter, first, second, embeddings = counted_models()
    metrics = [
        FactualCorrectness(llm=[first, second]),
        AnswerCorrectness(llm=[first, second], embeddings=embeddings),
        Faithfulness(llm=[first, second]),
        SemanticSimilarity(embeddings=embeddings),
        AspectCritic(llm=[first, second], name="has_year", criterion="c", strictness=3),
    ]

    rows = evaluate([sample(index) for index in range(12)], metrics, max_concurrency=cap)

    assert not any(row.errors for row in rows)
    assert counter.total > 10 * cap
    assert counter.peak <= cap
    assert counter.peak == cap  # the budget is kept full, not merely respected


def test_embedding_requests_count_against_the_same_cap() -> None:
    counter = InFlight()
    # Small batches, two models: 20 embedding requests that could all be out at once.
    metric = SemanticSimilarity(
        embeddings=[
            Embedder(model=CountedEmbeddings(counter, latency=0.01), batch_size=8),
            Embedder(model=CountedEmbeddings(counter, latency=0.01), batch_size=8),
        ]
    )

    rows = evaluate([sample(index) for index in range(40)], [metric], max_concurrency=2)

    assert not any(row.errors for row in rows)
    assert counter.total == 20
    assert counter.peak == 2


def test_a_config_max_concurrency_does_not_multiply_the_cap() -> None:
    counter, first, second, embeddings = counted_models()
    metrics = [
        AnswerCorrectness(llm=[first, second], embeddings=embeddings),
        Faithfulness(llm=[first, second]),
    ]

    evaluate(
        [sample(index) for index in range(10)],
        metrics,
        max_concurrency=2,
        config={"max_concurrency": 2},
    )

    assert counter.peak == 2


async def test_nested_batches_share_the_outer_budget() -> None:
    counter, first, second, embeddings = counted_models()
    factual = FactualCorrectness(llm=[first, second])
    similarity = SemanticSimilarity(embeddings=embeddings)
    samples = [sample(index) for index in range(8)]

    with run_scope(RunScope(max_concurrency=3)):
        # Each batch's own max_concurrency caps its samples, not the requests: inside the
        # run's scope the requests of both batches share the one budget of 3.
        await asyncio.gather(
            factual.abatch(samples, {"max_concurrency": 4}),
            similarity.abatch(samples, {"max_concurrency": 4}),
        )

    assert counter.peak == 3


# ---------------------------------------------------------------------- traces


def test_each_step_is_a_named_child_run_with_its_model_call_inside() -> None:
    collector = RunCollectorCallbackHandler()
    judge = fact_judge(votes=("PASS", "FAIL", "PASS"))
    metrics = [
        AnswerCorrectness(llm=judge, embeddings=ScriptedEmbeddings()),
        AspectCritic(llm=judge, name="has_year", criterion="c", strictness=3),
    ]

    evaluate([sample(0)], metrics, config={"callbacks": [collector]})

    def tree(run: Any) -> Any:
        return (run.name, sorted(tree(child) for child in run.child_runs))

    chat: tuple[str, list[Any]] = ("ScriptedChatModel", [])
    factual: tuple[str, list[Any]] = (
        "factual_correctness",
        [
            (
                "judge-a",
                [
                    ("decompose_claims", [chat]),
                    ("decompose_claims", [chat]),
                    ("verify_claims", [chat]),
                    ("verify_claims", [chat]),
                ],
            )
        ],
    )
    semantic: tuple[str, list[Any]] = (
        "semantic_similarity",
        [("scripted-embeddings", [("embed", [])])],
    )
    assert sorted(tree(run) for run in collector.traced_runs) == [
        ("answer_correctness", sorted([factual, semantic])),
        ("has_year", [("judge-a", [("judge_aspect", [chat, chat, chat])])]),
    ]
