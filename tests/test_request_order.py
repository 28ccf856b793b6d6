"""Samples finish in input order: the request budget serves the earliest sample first.

Behaviour only (no timings): the order in which requests reach the model, and the order
in which waiters get a place of :class:`RequestBudget`.
"""

from __future__ import annotations

import asyncio
import io
import math
import re
from typing import Any

from support import fact_judge
from test_runner import CountedEmbeddings, InFlight

from langchain_answer_metrics import FactualCorrectness, SemanticSimilarity
from langchain_answer_metrics.cli.output.printing import ProgressBar
from langchain_answer_metrics.judging.judges import Embedder
from langchain_answer_metrics.judging.scope import RequestBudget
from langchain_answer_metrics.run import progress as run_progress
from langchain_answer_metrics.run.runner import Progress, aevaluate, evaluate

_YEAR = re.compile(r"\b18(\d\d)\b")


def sample(index: int) -> dict[str, str]:
    return {
        "response": f"Event {index} happened in {1800 + index}. It was in city {index}.",
        "reference": f"Event {index} took place in {1800 + index}.",
    }


def sample_of_each_request(judge: object) -> list[int]:
    order = []
    for _, messages in judge.calls:  # type: ignore[attr-defined]
        found = _YEAR.search(str(messages[-1].content))
        assert found is not None
        order.append(int(found.group(1)))
    return order


def assert_in_sample_order(order: list[int], samples: int) -> None:
    """Each sample's requests are all sent before the first of the sample three later."""
    first = {index: order.index(index) for index in range(samples)}
    last = {index: len(order) - 1 - order[::-1].index(index) for index in range(samples)}
    for index in range(samples - 3):
        assert last[index] < first[index + 3], (index, order)


def test_requests_go_to_the_earliest_sample_first_sync() -> None:
    judge = fact_judge(latency=0.005)
    rows = evaluate(
        [sample(i) for i in range(30)], [FactualCorrectness(llm=judge)], max_concurrency=2
    )
    assert not any(row.errors for row in rows)
    assert_in_sample_order(sample_of_each_request(judge), 30)


async def test_requests_go_to_the_earliest_sample_first_async() -> None:
    judge = fact_judge(latency=0.005)
    rows = await aevaluate(
        [sample(i) for i in range(30)], [FactualCorrectness(llm=judge)], max_concurrency=3
    )
    assert not any(row.errors for row in rows)
    assert_in_sample_order(sample_of_each_request(judge), 30)


async def test_the_budget_serves_the_lowest_position_then_first_come() -> None:
    budget = RequestBudget(1)
    await budget.acquire(0)
    served: list[str] = []

    async def wait(name: str, position: float) -> None:
        await budget.acquire(position)
        served.append(name)
        budget.release()

    waiters = [
        asyncio.create_task(wait(name, position))
        for name, position in [("e", 5), ("b", 2), ("f", 9), ("g", math.inf), ("c", 2)]
    ]
    await asyncio.sleep(0)
    budget.release()
    await asyncio.gather(*waiters)
    assert served == ["b", "c", "e", "f", "g"]
    assert budget.free == 1


async def test_a_cancelled_waiter_gives_its_place_on() -> None:
    budget = RequestBudget(1)
    await budget.acquire(0)
    cancelled = asyncio.create_task(budget.acquire(1))
    later = asyncio.create_task(budget.acquire(2))
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.sleep(0)
    budget.release()
    await later
    assert budget.free == 0
    budget.release()
    assert budget.free == 1

    # Granted, then cancelled before it could run: the place is handed on, not lost.
    await budget.acquire(0)
    granted = asyncio.create_task(budget.acquire(1))
    await asyncio.sleep(0)
    budget.release()
    granted.cancel()
    await asyncio.gather(granted, return_exceptions=True)
    assert budget.free == 1


# ------------------------------------------------- SemanticSimilarity.abatch batches


def similarity_in_flight(batch_size: int = 8) -> tuple[InFlight, SemanticSimilarity]:
    counter = InFlight()
    embeddings = CountedEmbeddings(counter, latency=0.02)
    metric = SemanticSimilarity(embeddings=[Embedder(model=embeddings, batch_size=batch_size)])
    return counter, metric


async def test_semantic_similarity_abatch_batches_across_samples_concurrently() -> None:
    counter, metric = similarity_in_flight()
    results = await metric.abatch([sample(i) for i in range(40)], {"max_concurrency": 2})

    assert len(results) == 40 and all(0.0 <= result.score <= 1.0 for result in results)
    assert counter.total == 10  # 80 distinct texts in full batches of 8
    assert counter.peak == 2  # two batches at once: the request budget, not one by one


def test_semantic_similarity_batch_does_the_same_on_the_sync_surface() -> None:
    counter, metric = similarity_in_flight()
    results = metric.batch([sample(i) for i in range(40)], {"max_concurrency": 3})

    assert len(results) == 40
    assert counter.total == 10 and counter.peak == 3


# ------------------------------------------------------------------------- progress


def test_progress_reports_requests_while_no_sample_finishes(monkeypatch: Any) -> None:
    monkeypatch.setattr(run_progress, "PROGRESS_EVERY", 0.01)
    judge = fact_judge(latency=0.1)
    seen: list[Progress] = []
    evaluate(
        [sample(i) for i in range(3)],
        [FactualCorrectness(llm=judge)],
        max_concurrency=2,
        on_progress=seen.append,
    )

    early = [progress for progress in seen if progress.done == 0]
    assert early and any(progress.requests_in_flight > 0 for progress in early)
    assert early[0].eta is None
    last = seen[-1]
    assert (last.done, last.requests_in_flight) == (3, 0)
    assert last.requests_done == len(judge.calls) and last.eta == 0


def test_the_bar_without_a_terminal_prints_at_least_every_10_seconds() -> None:
    now = [0.0]
    stream = io.StringIO()
    bar = ProgressBar(100, stream, clock=lambda: now[0])
    stuck = Progress(
        done=0, errors=0, total=100, elapsed=1.0, requests_done=5, requests_in_flight=4
    )
    bar(stuck)  # the first line
    now[0] = 5.0
    bar(stuck)  # nothing new, and quiet for less than 10 s: no line
    now[0] = 10.5
    bar(stuck)  # quiet for 10 s: a line anyway
    moved = stuck.model_copy(update={"done": 50, "elapsed": 20.0})
    bar(moved)  # a new tenth: a line

    lines = stream.getvalue().splitlines()
    assert len(lines) == 4 - 1
    assert "requests 5 done, 4 in flight" in lines[0] and "ETA -" in lines[0]
    assert "50/100 samples" in lines[-1] and "ETA 20s" in lines[-1]
