"""What a sync run leaves behind when it ends early (judging/sync.py): nothing is sent
for it after it returns beyond the requests already in flight.

A breaker stop, a ``max_requests`` stop and a Ctrl-C of ``evaluate`` (in the caller's
thread and in a thread of its own), and the CLI's breaker stop, against the local server
over HTTP: its request log, with each request's arrival time, is read once the threads
the run left have ended. The judges use the package's HTTP clients
(``limited_http_clients``, as the CLI's do) and the openai client's own retries, each
with a pause of milliseconds: before, every call still out at the return went on
retrying into the server (``max_retries`` requests each, after the return). The bound
is the model threads still alive at the return: each may have one request out.

``ModelThreads.shutdown`` is checked against ``concurrent.futures.ThreadPoolExecutor``.
"""

from __future__ import annotations

import _thread
import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from test_circuit_breaker import SAMPLES, cli_rows
from test_cli import clean_env, cli

from langchain_answer_metrics import Faithfulness, Judge
from langchain_answer_metrics.config.http_limits import MAX_CHAT_REPLY_BYTES, limited_http_clients
from langchain_answer_metrics.judging.interruption import clear_interrupt, request_interrupt
from langchain_answer_metrics.judging.sync import BlockingSession, ModelThreads, call_model
from langchain_answer_metrics.run.runner import evaluate
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.requests import RequestInfo

RETRIES = 4  # the openai client's own, per call
LATENCY = 0.2  # each request stays out this long: calls are in flight when a run stops
THREAD_END_WAIT = 60.0  # a bound on waiting for the threads a run left (never reached)


@pytest.fixture(autouse=True)
def short_retry_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The openai client's retries with pauses of milliseconds (its backoff otherwise)."""
    import openai._base_client

    monkeypatch.setattr(openai._base_client, "INITIAL_RETRY_DELAY", 0.005)


@pytest.fixture
def slow_server(server: LocalOpenAIServer) -> LocalOpenAIServer:
    server.latency = LATENCY
    return server


def judge(server: LocalOpenAIServer, *, model: str = "judge-a") -> ChatOpenAI:
    return ChatOpenAI(
        model=model,
        base_url=server.base_url,
        api_key="sk-test",  # type: ignore[arg-type]
        use_responses_api=False,
        max_retries=RETRIES,
        timeout=30,
        **limited_http_clients(deadline=30, max_bytes=MAX_CHAT_REPLY_BYTES),
    )


def left_threads() -> list[threading.Thread]:
    """The model threads of sync runs that have ended, still alive (busy with a call)."""
    threads = []
    for thread in threading.enumerate():
        pool = getattr(getattr(thread, "_target", None), "__self__", None)
        if isinstance(pool, ModelThreads) and pool._closed and thread.is_alive():
            threads.append(thread)
    return threads


class Ending:
    """A server's faults while a sync call runs, and what it receives after the return.

    From request ``fail_from`` on, every request is answered 500. Request ``hold`` (if
    any) is held at the server, ``action`` called, until the call has returned, then
    answered 500 too: a call certainly in flight at the return, with its retries left."""

    def __init__(
        self,
        server: LocalOpenAIServer,
        *,
        fail_from: int,
        hold: int | None = None,
        action: Callable[[], None] = lambda: None,
    ) -> None:
        self.server = server
        self.hold, self.fail_from, self.action = hold, fail_from, action
        self.released = threading.Event()
        self.returned_at = 0.0
        self.in_flight: list[threading.Thread] = []
        self.received_at_return = 0
        server.faults = self.policy

    def policy(self, info: RequestInfo) -> str | None:
        if info.number == self.hold:
            self.action()
            self.released.wait(THREAD_END_WAIT)
            return "500"
        return "500" if info.number >= self.fail_from else None

    def returned(self) -> None:
        self.returned_at = time.time()
        self.received_at_return = len(self.server.requests)
        self.in_flight = left_threads()
        self.released.set()

    def received_after(self) -> list[Any]:
        """The requests the server logged after the return, once the threads have ended."""
        for thread in self.in_flight:
            thread.join(THREAD_END_WAIT)
        assert not any(thread.is_alive() for thread in self.in_flight), "a call never ended"
        return [entry for entry in self.server.requests if entry.time > self.returned_at]

    def check(self) -> None:
        late = self.received_after()
        assert self.received_at_return > 0
        if self.hold is not None:
            assert self.in_flight  # the held call at least
        # Each thread alive at the return may have had one request out (the held one is
        # logged once answered); a call that had not started, or a retry, would be more.
        assert len(late) <= len(self.in_flight), (len(late), len(self.in_flight))


def in_a_thread(call: Callable[[], Any]) -> Any:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(call).result()


# --------------------------------------------------------------------------- the runner


@pytest.mark.parametrize("where", ["caller", "thread"])
def test_a_breaker_stop_sends_nothing_after_the_return(
    slow_server: LocalOpenAIServer, tmp_path: Path, where: str
) -> None:
    # One thread's call is held at the server while the other's fails: the breaker stops.
    ending = Ending(slow_server, hold=6, fail_from=7)
    checkpoint = tmp_path / "run.jsonl"

    def run() -> Any:
        try:
            return evaluate(
                SAMPLES,
                [Faithfulness(llm=judge(slow_server))],
                max_concurrency=2,
                max_consecutive_failures=1,
                checkpoint=checkpoint,
            )
        finally:
            ending.returned()

    rows = run() if where == "caller" else in_a_thread(run)
    assert rows.stopped is not None and rows.stopped.reason == "circuit_breaker"
    assert sum(row.not_run for row in rows) >= 30
    saved, kept = checkpoint.read_bytes(), [row.model_dump(mode="json") for row in rows]
    ending.check()
    # The calls that ended after the return changed nothing of the run's.
    assert checkpoint.read_bytes() == saved
    assert [row.model_dump(mode="json") for row in rows] == kept


def test_a_max_requests_stop_sends_nothing_after_the_return(
    slow_server: LocalOpenAIServer,
) -> None:
    ending = Ending(slow_server, fail_from=10_000)
    try:
        rows = evaluate(
            SAMPLES, [Faithfulness(llm=judge(slow_server))], max_concurrency=2, max_requests=7
        )
    finally:
        ending.returned()
    assert rows.stopped is not None and rows.stopped.reason == "max_requests"
    ending.check()


def test_ctrl_c_sends_nothing_after_the_interrupt(slow_server: LocalOpenAIServer) -> None:
    # The 6th request arrives: the caller gets a KeyboardInterrupt while it is out.
    ending = Ending(slow_server, hold=5, fail_from=5, action=_thread.interrupt_main)
    with pytest.raises(KeyboardInterrupt):
        try:
            evaluate(SAMPLES, [Faithfulness(llm=judge(slow_server))], max_concurrency=2)
        finally:
            ending.returned()
    ending.check()


@pytest.fixture
def interrupt_cleared() -> Iterator[None]:
    yield
    clear_interrupt()


@pytest.mark.usefixtures("interrupt_cleared")
def test_an_interrupt_of_a_run_in_a_thread_sends_nothing_after_it(
    slow_server: LocalOpenAIServer,
) -> None:
    # The CLI's Ctrl-C (judging/interruption.py) ends a sync wait in any thread.
    ending = Ending(slow_server, hold=5, fail_from=5, action=request_interrupt)

    def run() -> Any:
        try:
            return evaluate(SAMPLES, [Faithfulness(llm=judge(slow_server))], max_concurrency=2)
        finally:
            ending.returned()

    with pytest.raises(KeyboardInterrupt):
        in_a_thread(run)
    ending.check()


# LangChain's abatch makes every sample's coroutine up front; those not started when the
# batch is cancelled are never awaited (Python warns when it collects them).
@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
def test_ctrl_c_of_a_panel_batch_sends_nothing_after_the_interrupt(
    slow_server: LocalOpenAIServer,
) -> None:
    # metric.batch: two samples at a time, three judges each: calls queue for two threads.
    ending = Ending(slow_server, hold=3, fail_from=3, action=_thread.interrupt_main)
    panel = [judge(slow_server, model=f"judge-{letter}") for letter in "abc"]
    with pytest.raises(KeyboardInterrupt):
        try:
            Faithfulness(llm=panel).batch(SAMPLES[:20], {"max_concurrency": 2})
        finally:
            ending.returned()
    ending.check()


def test_a_request_past_its_deadline_sends_nothing_after_it(
    slow_server: LocalOpenAIServer,
) -> None:
    # metric.invoke; the judge's deadline (0.2 s, and the package's second of grace)
    # passes while its second request (the verification) is held.
    ending = Ending(slow_server, hold=1, fail_from=1)
    metric = Faithfulness(llm=Judge(model=judge(slow_server), timeout=0.2, retry=None))
    try:
        with pytest.raises(Exception, match="deadline"):
            metric.invoke(SAMPLES[0])
    finally:
        ending.returned()
    ending.check()


def test_cli_breaker_stop_sends_nothing_after_the_command(
    slow_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    ending = Ending(slow_server, hold=6, fail_from=7)
    try:
        result = cli(
            "evaluate",
            cli_rows(tmp_path, 30),
            "--metric",
            "faithfulness",
            "--base-url",
            slow_server.base_url,
            "--model",
            "judge-a",
            "--max-concurrency",
            "2",
            "--max-consecutive-failures",
            "1",
            "--quiet",
            env=clean_env(OPENAI_API_KEY="sk-test"),
        )
    finally:
        ending.returned()
    assert result.returncode == 5, result.stderr
    ending.check()


# --------------------------------------------------------------------------- the pool


def held_then_queued(
    executor: concurrent.futures.Executor,
) -> tuple[threading.Event, concurrent.futures.Future[str], list[concurrent.futures.Future[str]]]:
    """One call holding the executor's only thread, five queued behind it."""
    release, started = threading.Event(), threading.Event()

    def hold() -> str:
        started.set()
        release.wait(THREAD_END_WAIT)
        return "held"

    held = executor.submit(hold)
    assert started.wait(THREAD_END_WAIT)
    queued = [executor.submit(str, number) for number in range(5)]
    return release, held, queued


EXECUTORS = {
    "ModelThreads": lambda: ModelThreads(1),
    "ThreadPoolExecutor": lambda: concurrent.futures.ThreadPoolExecutor(1),
}


@pytest.mark.parametrize("kind", EXECUTORS)
def test_shutdown_cancel_futures_cancels_what_has_not_started(kind: str) -> None:
    executor = EXECUTORS[kind]()
    release, held, queued = held_then_queued(executor)
    executor.shutdown(wait=False, cancel_futures=True)
    assert all(future.cancelled() for future in queued)
    with pytest.raises(RuntimeError):
        executor.submit(str, 6)
    release.set()
    assert held.result(THREAD_END_WAIT) == "held"  # the call in flight ends as it would
    executor.shutdown(wait=True)
    assert all(future.cancelled() for future in queued)


@pytest.mark.parametrize("kind", EXECUTORS)
def test_shutdown_without_cancel_futures_runs_what_was_queued(kind: str) -> None:
    executor = EXECUTORS[kind]()
    release, held, queued = held_then_queued(executor)
    executor.shutdown(wait=False)
    release.set()
    executor.shutdown(wait=True)  # joins: the queued calls have run
    assert held.result() == "held"
    assert [future.result(0) for future in queued] == ["0", "1", "2", "3", "4"]


def test_a_session_closes_without_waiting_and_runs_nothing_queued() -> None:
    """The end of a sync call: the call in flight is left to finish (close does not wait
    for it), the calls queued behind it never run, their awaiting tasks are cancelled."""
    release, started = threading.Event(), threading.Event()
    ran: list[int] = []

    def hold() -> None:
        started.set()
        release.wait(THREAD_END_WAIT)

    async def leave_calls_behind() -> list[asyncio.Task[None]]:
        tasks = [asyncio.ensure_future(call_model(hold, _never))]
        await asyncio.get_running_loop().run_in_executor(None, started.wait, THREAD_END_WAIT)
        for number in range(5):
            tasks.append(asyncio.ensure_future(call_model(partial(ran.append, number), _never)))
        await asyncio.sleep(0)  # the five are queued in the pool
        return tasks

    session = BlockingSession(max_concurrency=1)
    tasks = session.run(leave_calls_behind())
    session.close()
    assert not release.is_set() and left_threads()  # the held call is still out
    release.set()
    for thread in left_threads():
        thread.join(THREAD_END_WAIT)
    assert ran == []
    assert all(task.cancelled() for task in tasks)


async def _never() -> None:
    raise AssertionError("the sync surface calls the blocking interface")
