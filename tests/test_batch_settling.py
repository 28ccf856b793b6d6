"""When a batch round goes (judging/batch/settling.py): as soon as every sample in flight
waits on a line, with the bounded ``quiet_s`` wait only while one waits on something
else; and, through the local server's Batch API and the real openai client, the same
batch files as the bounded wait alone gave, round by round."""

from __future__ import annotations

import asyncio
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from support import RAG_SAMPLES as SAMPLES
from support import fact_judge
from test_cli import out_lines

from langchain_answer_metrics import (
    AnswerCorrectness,
    ContextRecall,
    ContextRelevance,
    FactualCorrectness,
    Faithfulness,
    ResponseRelevance,
    evaluate_dataset,
)
from langchain_answer_metrics.judging.batch.lines import BatchLines, Group
from langchain_answer_metrics.judging.batch.settling import Samples, Settle, parked
from langchain_answer_metrics.judging.scope import run_scope, shared_call
from langchain_answer_metrics.metrics.base import AnswerMetric
from langchain_answer_metrics.run import batch_watch
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

GROUP = Group(label="judge-a", model="judge-a", base_url="http://127.0.0.1:9/v1")
# Long enough that a round it let go would be a hang, not a pass: the parked path must
# not wait for it.
NEVER_S = 3600.0


def _lines_and_submit() -> tuple[BatchLines, Any]:
    lines = BatchLines()

    async def ask(text: str) -> dict[str, Any]:
        return await lines.submit(GROUP, {"messages": text}, sample=None, max_attempts=1)

    return lines, ask


def _waiters(lines: BatchLines) -> list[asyncio.Future[Any]]:
    every = [*lines.waiting.values(), *lines.out.values()]
    return [waiter for line in every for waiter in line.waiters]


@pytest.fixture
async def gate() -> Any:
    """What a live step waits on in its thread; opened at the end whatever happened, in
    the test's loop, so that no thread is left waiting (the loop's executor waits for it
    when the loop closes)."""
    event = threading.Event()
    yield event
    event.set()


async def _turns(count: int = 5) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def test_tasks_waiting_on_lines_directly_or_gathered_are_parked() -> None:
    lines, ask = _lines_and_submit()

    async def two_steps() -> Any:
        return await asyncio.gather(ask("a"), ask("b"))

    tasks = [asyncio.ensure_future(ask("c")), asyncio.ensure_future(two_steps())]
    assert parked(Samples(tasks=tasks), _waiters(lines)) is Settle.RUNNING  # not started
    await _turns()
    assert parked(Samples(tasks=tasks), _waiters(lines)) is Settle.PARKED
    assert parked(Samples(tasks=tasks), []) is Settle.ELSEWHERE  # not a line's: not seen
    lines.answered(next(iter(lines.waiting.values())), {})
    # A reply came: its task can run, so it is not parked until it has.
    assert parked(Samples(tasks=tasks), _waiters(lines)) is Settle.RUNNING
    lines.abandon(RuntimeError("done"))
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_task_in_a_thread_or_a_timer_is_elsewhere(gate: threading.Event) -> None:
    lines, ask = _lines_and_submit()

    async def live_then_line() -> Any:
        await asyncio.to_thread(gate.wait)
        return await ask("after the live step")

    async def sleeper() -> None:
        await asyncio.sleep(NEVER_S)

    parked_task = asyncio.ensure_future(ask("first"))
    for other in (live_then_line, sleeper):
        task = asyncio.ensure_future(other())
        await _turns()
        assert parked(Samples(tasks=[parked_task, task]), _waiters(lines)) is Settle.ELSEWHERE
        task.cancel()
    gate.set()
    parked_task.cancel()
    await asyncio.gather(parked_task, task, return_exceptions=True)


async def test_a_shared_call_computed_by_a_parked_task_is_parked() -> None:
    lines, ask = _lines_and_submit()
    with run_scope() as scope:

        async def decompose() -> Any:
            value, _ = await shared_call("decompose", lambda: ask("claims"))
            return value

        first, second = asyncio.ensure_future(decompose()), asyncio.ensure_future(decompose())
        await _turns()
        shared = scope.calls.in_flight()
        assert len(shared) == 1 and len(lines.waiting) == 1
        within = dict.fromkeys(shared, ())
        assert parked(Samples(tasks=[first, second], within=within), _waiters(lines)) is (
            Settle.PARKED
        )
        # Without knowing the shared call is computed within: a wait not seen through.
        assert parked(Samples(tasks=[first, second]), _waiters(lines)) is Settle.ELSEWHERE
        lines.answered(next(iter(lines.waiting.values())), {"claims": 1})
        await asyncio.sleep(0)  # the computing task sets the shared future...
        # ... and the one sharing it has not heard yet (the shield's callback is queued).
        assert parked(Samples(tasks=[first, second], within=within), []) is Settle.RUNNING
        assert await asyncio.gather(first, second) == [{"claims": 1}, {"claims": 1}]


async def test_the_round_waits_for_a_straggler_in_a_thread_however_long(
    gate: threading.Event,
) -> None:
    """A sample whose live step runs in a thread joins the round when it comes, with no
    bounded wait in the way (``quiet`` is an hour): the round goes once both wait."""
    lines, ask = _lines_and_submit()

    async def live_then_line() -> Any:
        await asyncio.to_thread(gate.wait)
        return await ask("the straggler")

    tasks = [asyncio.ensure_future(ask("at once")), asyncio.ensure_future(live_then_line())]
    settling = asyncio.ensure_future(lines.settled(NEVER_S, lambda: Samples(tasks=tasks)))
    await _turns(50)
    assert not settling.done() and len(lines.waiting) == 1
    gate.set()
    assert await asyncio.wait_for(settling, timeout=60) is True  # parked, not timed out
    assert sorted(line.body["messages"] for line in lines.take()) == ["at once", "the straggler"]
    lines.abandon(RuntimeError("done"))
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_a_wait_it_cannot_see_through_is_bounded_by_quiet(gate: threading.Event) -> None:
    """The straggler still in its thread after ``quiet`` seconds of nothing new: the round
    goes without it (the bounded wait), and its line waits for the next one."""
    lines, ask = _lines_and_submit()

    async def live_then_line() -> Any:
        await asyncio.to_thread(gate.wait)
        return await ask("the straggler")

    tasks = [asyncio.ensure_future(ask("at once")), asyncio.ensure_future(live_then_line())]
    assert await lines.settled(0.01, lambda: Samples(tasks=tasks)) is False
    assert [line.body["messages"] for line in lines.take()] == ["at once"]
    gate.set()
    assert await asyncio.wait_for(lines.settled(NEVER_S, lambda: Samples(tasks=tasks)), 60)
    assert [line.body["messages"] for line in lines.take()] == ["the straggler"]
    lines.abandon(RuntimeError("done"))
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_while_more_samples_may_start_the_bounded_wait_decides() -> None:
    lines, ask = _lines_and_submit()
    task = asyncio.ensure_future(ask("first"))
    assert await lines.settled(0.01, lambda: None) is False
    assert len(lines.take()) == 1
    lines.abandon(RuntimeError("done"))
    await asyncio.gather(task, return_exceptions=True)


# --------------------------------------------------------------------------- over HTTP


@pytest.fixture
def batch_server(server: LocalOpenAIServer) -> Iterator[LocalOpenAIServer]:
    yield server
    server.batch.release()


def judge(server: LocalOpenAIServer) -> ChatOpenAI:
    return ChatOpenAI(
        model="judge-a",
        base_url=server.base_url,
        api_key="sk-test",
        use_responses_api=False,
        max_retries=0,
    )


def claims(server: LocalOpenAIServer) -> list[AnswerMetric]:
    llm = judge(server)
    return [FactualCorrectness(llm=llm), Faithfulness(llm=llm), ResponseRelevance(llm=llm)]


def shared_decompositions(server: LocalOpenAIServer) -> list[AnswerMetric]:
    """The reference's claims asked once for both (a shared call within each sample)."""
    llm = judge(server)
    return [FactualCorrectness(llm=llm), ContextRecall(llm=llm), ContextRelevance(llm=llm)]


def mixed_panel(server: LocalOpenAIServer) -> list[AnswerMetric]:
    """An OpenAI judge in batches beside a live one that takes its time to reply (in a
    thread: a wait the rounds do not see through, so round 1 may take the bounded wait;
    its batch files must be the same all the same)."""
    return [Faithfulness(llm=[judge(server), fact_judge("scripted", latency=0.05)])]


def with_embeddings(server: LocalOpenAIServer) -> list[AnswerMetric]:
    embeddings = OpenAIEmbeddings(
        model="embed-a",
        base_url=server.base_url,
        api_key="sk-test",
        check_embedding_ctx_length=False,
    )
    return [AnswerCorrectness(llm=judge(server), embeddings=embeddings)]


def _batch_run(
    server: LocalOpenAIServer, build: Any, checkpoint: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], list[tuple[int, list[str]]], Any]:
    """How each round settled, each batch file's round and requests, and the rows."""
    settled: list[str] = []
    settle = BatchLines.settled

    async def recorded(self: BatchLines, quiet: float, in_flight: Any = None) -> bool:
        went_parked = await settle(self, quiet, in_flight)
        settled.append("parked" if went_parked else "quiet")
        return went_parked

    monkeypatch.setattr(BatchLines, "settled", recorded)
    server.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a mixed panel's and the prices' notes
        rows = evaluate_dataset(
            SAMPLES,
            build(server),
            batch=True,
            checkpoint=checkpoint,
            batch_poll_s=0.02,
            batch_min_requests=0,
        )
    batches = [
        (line["round"], sorted(line["custom_ids"]))
        for line in out_lines(checkpoint)
        if line.get("kind") == "batch"
    ]
    assert server.batch.lines == sum(len(ids) for _, ids in batches)
    return settled, sorted(batches), rows


@pytest.mark.parametrize(
    ("build", "rounds"),
    [(claims, 2), (shared_decompositions, 2), (mixed_panel, 2), (with_embeddings, 2)],
    ids=["claim metrics", "shared decompositions", "mixed panel", "embeddings"],
)
def test_the_rounds_send_what_the_bounded_wait_alone_sent(
    batch_server: LocalOpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    build: Any,
    rounds: int,
) -> None:
    # The bounded wait alone, as before: the run never says which samples are in flight.
    with monkeypatch.context() as before:
        before.setattr(batch_watch.WatchedRun, "in_flight", lambda self: None)
        bounded, expected, _ = _batch_run(batch_server, build, tmp_path / "a.jsonl", before)
    assert bounded == ["quiet"] * rounds

    settled, batches, rows = _batch_run(batch_server, build, tmp_path / "b.jsonl", monkeypatch)

    assert batches == expected  # the same requests in the same batch files, round by round
    assert len(settled) == rounds
    assert not any(row.errors or row.not_run for row in rows)
    assert batch_server.chat_requests == 0
    if build in (claims, shared_decompositions, with_embeddings):
        assert settled == ["parked"] * rounds
