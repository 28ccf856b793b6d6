"""Sync and async, in any event loop: the same metric and model objects work from both.

Real ``ChatOpenAI`` / ``OpenAIEmbeddings`` objects talk HTTP to the local OpenAI-compatible
server. The sync surface (invoke, batch, score, runner.evaluate / stream_evaluate, sync
LangSmith evaluators) must call models through their sync interface only, in a bounded
thread pool; the async surface only through ainvoke, in the caller's loop. The package must
never touch a model's async client from a loop of its own: langchain-openai shares one
async httpx client per base URL across the process, and a loop that uses it binds the
client's pooled connections to itself, which breaks the user's own async calls.

Every score is checked against a reference computed by a fresh Python process that builds
the same objects and does a plain sync ``invoke`` (see ``reference``).

Two things the tests arrange on purpose, because langchain-openai (not this package)
cannot do otherwise:

- each test gets its own base URL (a path prefix on the same server, which routes by
  suffix), so it gets its own shared async client: connections pooled by one test's event
  loop would otherwise fail the next test's async calls with "Event loop is closed";
- within a test, every async call on a ChatOpenAI runs in ONE event loop. A shared httpx
  AsyncClient cannot be used from two loops in turn (two ``asyncio.run`` calls): a
  keep-alive connection opened by the first, closed loop fails the second with
  "Event loop is closed" (httpx issue 2473), with or without this package.

A hang fails the test (``run_within``, and a timeout on every subprocess).
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
import os
import subprocess
import sys
import threading
import uuid
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from langsmith import Client
from langsmith import aevaluate as langsmith_aevaluate
from langsmith import evaluate as langsmith_evaluate
from langsmith.schemas import Example
from support import run_within

from langchain_answer_metrics import (
    AnswerCorrectness,
    AnswerMetric,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    MetricResult,
    SemanticSimilarity,
)
from langchain_answer_metrics.run.runner import (
    SampleResults,
    aevaluate,
    astream_evaluate,
    evaluate,
    stream_evaluate,
)
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

pytestmark = [
    pytest.mark.usefixtures("network_attempts"),  # see conftest.py
    pytest.mark.slow,  # real loops and threads; the reference runs in a fresh interpreter
]

KEY = "sk-test-event-loops"
TESTS_DIR = Path(__file__).resolve().parent
DEADLINE = 120.0  # seconds for one test body; a regression that hangs fails here
SCRIPT_DEADLINE = 60.0

SAMPLES: list[dict[str, Any]] = [
    {
        "user_input": "When was the Eiffel Tower finished?",
        "response": "The Eiffel Tower was finished in 1889. It stands in Berlin.",
        "reference": "The Eiffel Tower was finished in 1889. It stands in Paris, France.",
        "retrieved_contexts": ["The Eiffel Tower was finished in 1889 and stands in Paris."],
    },
    {
        "user_input": "Who painted the Mona Lisa?",
        "response": "Leonardo da Vinci painted the Mona Lisa. It hangs in the Louvre.",
        "reference": "The Mona Lisa was painted by Leonardo da Vinci around 1503.",
        "retrieved_contexts": [
            "Leonardo da Vinci painted the Mona Lisa. The painting hangs in the Louvre."
        ],
    },
    {
        "user_input": "Когда была основана Москва?",
        "response": "Москва была основана в 1147 году. Её основал Юрий Долгорукий.",
        "reference": "Москва основана в 1147 году князем Юрием Долгоруким. Это столица России.",
        "retrieved_contexts": ["Первое упоминание Москвы относится к 1147 году."],
    },
    {
        "user_input": "Какая самая длинная река в России?",
        "response": "Самая длинная река России — Лена. Её длина 4400 километров.",
        "reference": "Самая длинная река России — Обь с Иртышом, около 5410 километров.",
        "retrieved_contexts": ["Обь вместе с Иртышом — самая длинная река России."],
    },
    {
        "user_input": "长城有多长？",
        "response": "长城全长约21196公里。长城建于秦朝。",
        "reference": "长城全长21196公里。长城始建于春秋战国时期。",
        "retrieved_contexts": ["长城全长21196公里，是世界上最长的建筑。"],
    },
    {
        "user_input": "北京奥运会是哪一年举办的？",
        "response": "北京奥运会于2008年举办。开幕式在鸟巢举行。",
        "reference": "第二十九届夏季奥运会于2008年在北京举办。",
        "retrieved_contexts": ["2008年北京奥运会的开幕式在国家体育场鸟巢举行。"],
    },
]

Reference = dict[str, list[float]]
"""Scores by metric key, one per sample of SAMPLES, in order."""


# --------------------------------------------------------------------------- the objects


def build(base_url: str) -> tuple[ChatOpenAI, OpenAIEmbeddings, list[AnswerMetric]]:
    """The judge, the embedder and the five metrics on them (also run by the reference)."""
    judge = ChatOpenAI(
        model="judge-a", base_url=base_url, api_key=KEY, use_responses_api=False, timeout=30
    )
    embeddings = OpenAIEmbeddings(
        model="embed-a",
        base_url=base_url,
        api_key=KEY,
        check_embedding_ctx_length=False,
        timeout=30,
    )
    metrics: list[AnswerMetric] = [
        FactualCorrectness(llm=judge),
        Faithfulness(llm=judge),
        AspectCritic(
            llm=judge,
            name="gives_year",
            criterion="The response must state a year.",
            strictness=3,
        ),
        SemanticSimilarity(embeddings=embeddings),
        AnswerCorrectness(llm=judge, embeddings=embeddings),
    ]
    return judge, embeddings, metrics


REFERENCE_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from test_event_loops import SAMPLES, build

judge, embeddings, metrics = build(sys.argv[2])
scores, excluded = {}, []
for metric in metrics:
    results = [metric.invoke(sample) for sample in SAMPLES]
    scores[metric.key] = [result.score for result in results]
    excluded += [failure.model_dump() for result in results for failure in result.excluded]
print(json.dumps({"scores": scores, "excluded": excluded}))
"""


def script_env() -> dict[str, str]:
    return {
        **os.environ,
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS_DIR), os.environ.get("PYTHONPATH")])),
    }


def run_script(source: str, *args: str, timeout: float = SCRIPT_DEADLINE) -> str:
    """Run ``source`` in a fresh Python; its stdout (fails on a non-zero exit)."""
    done = subprocess.run(
        [sys.executable, "-c", source, str(TESTS_DIR), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=script_env(),
        check=False,
    )
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


# --------------------------------------------------------------------------- fixtures


class InFlightServer(LocalOpenAIServer):
    """The local server, also counting the requests it is handling at once."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self._gauge = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0

    def handle(self, path: str, raw_body: bytes, headers: Mapping[str, str]) -> Any:
        with self._gauge:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return super().handle(path, raw_body, headers)
        finally:
            with self._gauge:
                self.in_flight -= 1

    def reset(self) -> None:
        super().reset()
        with self._gauge:
            self.max_in_flight = self.in_flight


@pytest.fixture(scope="module")
def shared_server() -> Iterator[InFlightServer]:
    with InFlightServer() as server:
        yield server


@pytest.fixture(scope="module")
def reference(shared_server: InFlightServer) -> Reference:
    """Every metric's score on every sample, from a plain sync invoke in a fresh process."""
    url = f"{shared_server.url}/reference/v1"
    printed = json.loads(run_script(REFERENCE_SCRIPT, url, timeout=180).strip().splitlines()[-1])
    assert printed["excluded"] == []
    scores: Reference = printed["scores"]
    assert set(scores) == {
        "factual_correctness",
        "faithfulness",
        "gives_year",
        "semantic_similarity",
        "answer_correctness",
    }
    # Scores that differ by sample and metric, so a mix-up between them would show.
    assert len({score for values in scores.values() for score in values}) >= 8, scores
    return scores


@pytest.fixture
def base_url(server: InFlightServer) -> str:
    """A base URL of this test's own (see the module docstring), on the module's server."""
    return f"{server.url}/{uuid.uuid4().hex[:12]}/v1"


@pytest.fixture(autouse=True)
def no_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.setenv("LANGCHAIN_TRACING_V2", "false")


# --------------------------------------------------------------------------- checks


def check_scores(
    results: Mapping[str, Sequence[MetricResult]], reference: Reference, how: str
) -> None:
    """``results[key][i]`` is ``reference[key][i]`` (SAMPLES[i]'s score), with no model
    excluded."""
    assert set(results) == set(reference), how
    for key, scored in results.items():
        assert len(scored) == len(reference[key]), (how, key)
        for index, result in enumerate(scored):
            assert isinstance(result, MetricResult), (how, key, index, result)
            assert result.excluded == [], (how, key, index)
            assert result.score == pytest.approx(reference[key][index], abs=1e-9), (how, key, index)


def check_rows(rows: Sequence[SampleResults], reference: Reference, how: str) -> None:
    """Rows in order, each metric's result the reference (the first ``len(rows)`` samples)."""
    assert [row.index for row in rows] == list(range(len(rows))), how
    reference = {key: scores[: len(rows)] for key, scores in reference.items()}
    by_key = {key: [row.results[key] for row in rows] for key in reference}
    check_scores(by_key, reference, how)  # a MetricError in a row fails the isinstance check


def sync_scores(metrics: Sequence[AnswerMetric]) -> dict[str, list[MetricResult]]:
    return {metric.key: [metric.invoke(sample) for sample in SAMPLES] for metric in metrics}


async def async_scores(metrics: Sequence[AnswerMetric]) -> dict[str, list[MetricResult]]:
    return {
        metric.key: list(await asyncio.gather(*(metric.ainvoke(s) for s in SAMPLES)))
        for metric in metrics
    }


def check_users_sync_calls(judge: ChatOpenAI, embeddings: OpenAIEmbeddings) -> None:
    """The user's own sync calls on the same model objects work."""
    assert judge.invoke("Say OK.").content == "OK"
    assert len(embeddings.embed_query("Hello")) > 0


async def check_users_async_calls(judge: ChatOpenAI, embeddings: OpenAIEmbeddings) -> None:
    """The user's own async calls on the same model objects work, in the running loop."""
    assert (await judge.ainvoke("Say OK.")).content == "OK"
    assert len(await embeddings.aembed_query("Hello")) > 0


# --------------------------------------------------------------------------- 1-3: loops


def test_sync_then_async_then_the_users_own_calls(base_url: str, reference: Reference) -> None:
    judge, embeddings, metrics = build(base_url)

    def scenario() -> None:
        check_scores(sync_scores(metrics), reference, "invoke first")

        async def main() -> None:
            check_scores(await async_scores(metrics), reference, "ainvoke after invoke")
            await check_users_async_calls(judge, embeddings)

        asyncio.run(main())
        check_users_sync_calls(judge, embeddings)
        check_scores(sync_scores(metrics), reference, "invoke after ainvoke")

    run_within(DEADLINE, scenario)


def test_async_then_sync_then_the_users_own_calls(base_url: str, reference: Reference) -> None:
    judge, embeddings, metrics = build(base_url)

    def scenario() -> None:
        # The user's one event loop, as in an application that also makes sync calls;
        # between its turns, sync code runs on this thread.
        loop = asyncio.new_event_loop()
        try:
            check_scores(loop.run_until_complete(async_scores(metrics)), reference, "ainvoke first")
            check_scores(sync_scores(metrics), reference, "invoke after ainvoke")
            check_users_sync_calls(judge, embeddings)
            loop.run_until_complete(check_users_async_calls(judge, embeddings))
            check_scores(
                loop.run_until_complete(async_scores(metrics)),
                reference,
                "ainvoke after invoke",
            )
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    run_within(DEADLINE, scenario)


def test_sync_calls_inside_a_running_event_loop(base_url: str, reference: Reference) -> None:
    """As in Jupyter: plain ``metric.invoke`` in a cell, while the kernel's loop runs."""
    judge, embeddings, metrics = build(base_url)

    async def main() -> None:
        assert asyncio.get_running_loop() is not None
        check_scores(sync_scores(metrics), reference, "invoke in a running loop")
        check_scores(await async_scores(metrics), reference, "then ainvoke in that loop")
        await check_users_async_calls(judge, embeddings)
        check_users_sync_calls(judge, embeddings)
        check_scores(sync_scores(metrics), reference, "invoke again in the loop")

    run_within(DEADLINE, asyncio.run, main())


def test_eight_threads_invoking_at_once(base_url: str, reference: Reference) -> None:
    judge, embeddings, metrics = build(base_url)
    barrier = threading.Barrier(8)

    def worker(number: int) -> dict[str, tuple[int, MetricResult]]:
        index = number % len(SAMPLES)
        barrier.wait(timeout=30)
        return {metric.key: (index, metric.invoke(SAMPLES[index])) for metric in metrics}

    def scenario() -> list[dict[str, tuple[int, MetricResult]]]:
        with ThreadPoolExecutor(max_workers=8) as pool:
            return list(pool.map(worker, range(8)))

    for outcome in run_within(DEADLINE, scenario):
        for key, (index, result) in outcome.items():
            assert result.excluded == [], (key, index)
            assert result.score == pytest.approx(reference[key][index], abs=1e-9), (key, index)
    check_users_sync_calls(judge, embeddings)


# --------------------------------------------------------------------------- 5: batch, runner


def test_batch_and_runner_sync_then_async(base_url: str, reference: Reference) -> None:
    judge, embeddings, metrics = build(base_url)

    def scenario() -> None:
        check_scores(
            {metric.key: metric.batch(list(SAMPLES)) for metric in metrics}, reference, "batch"
        )
        assert [metric.score(SAMPLES[0]) for metric in metrics] == pytest.approx(
            [reference[metric.key][0] for metric in metrics], abs=1e-9
        )
        check_rows(evaluate(SAMPLES, metrics, max_concurrency=4), reference, "evaluate")
        check_rows(list(stream_evaluate(SAMPLES, metrics)), reference, "stream_evaluate")

        async def main() -> None:
            check_rows(await aevaluate(SAMPLES, metrics, max_concurrency=4), reference, "aeval")
            rows = [row async for row in astream_evaluate(SAMPLES, metrics)]
            check_rows(rows, reference, "astream_evaluate")
            check_scores(
                {metric.key: await metric.abatch(list(SAMPLES)) for metric in metrics},
                reference,
                "abatch",
            )
            await check_users_async_calls(judge, embeddings)

        asyncio.run(main())
        check_rows(evaluate(SAMPLES, metrics), reference, "evaluate after aevaluate")

    run_within(DEADLINE, scenario)


def test_an_abandoned_stream_evaluate_does_not_block_later_calls(
    server: InFlightServer, base_url: str, reference: Reference
) -> None:
    judge, embeddings, metrics = build(base_url)
    server.latency = 0.05  # rows still in flight when the stream is dropped

    def scenario() -> None:
        rows = stream_evaluate(SAMPLES, metrics, max_concurrency=2)
        first = next(rows)
        check_rows([first], reference, "the first row")
        del rows  # dropped half-way: closing it must not hang
        gc.collect()
        server.latency = 0.0
        check_rows(evaluate(SAMPLES, metrics), reference, "evaluate after the abandoned stream")
        check_scores(sync_scores(metrics), reference, "invoke after the abandoned stream")
        check_users_sync_calls(judge, embeddings)

    run_within(DEADLINE, scenario)


ABANDONING_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from test_event_loops import SAMPLES, build
from langchain_answer_metrics.run.runner import stream_evaluate

judge, embeddings, metrics = build(sys.argv[2])
rows = stream_evaluate(SAMPLES * 3, metrics, max_concurrency=2)
first = next(rows)
print(json.dumps({key: result.score for key, result in first.results.items()}), flush=True)
# The script ends here, the generator half-consumed and still referenced.
"""


@pytest.mark.slow  # a script in a fresh interpreter
def test_a_script_ending_with_a_half_consumed_stream_evaluate_exits_promptly(
    server: InFlightServer, base_url: str, reference: Reference
) -> None:
    server.latency = 0.05
    try:
        done = subprocess.run(
            [sys.executable, "-c", ABANDONING_SCRIPT, str(TESTS_DIR), base_url],
            capture_output=True,
            text=True,
            timeout=20,
            env=script_env(),
            check=False,
        )
    except subprocess.TimeoutExpired as expired:
        pytest.fail(f"the script did not exit within 20 s; its output: {expired.stdout!r}")
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stdout.strip().splitlines()[0])
    assert first == pytest.approx({key: scores[0] for key, scores in reference.items()})
    assert "Traceback" not in done.stderr, done.stderr


# --------------------------------------------------------------------------- 6: LangSmith


def offline_client() -> Client:
    return Client(
        api_key="offline",
        api_url="http://127.0.0.1:9",
        auto_batch_tracing=False,
        tracing_sampling_rate=0.0,
    )


QUESTION_INDEX = {sample["user_input"]: index for index, sample in enumerate(SAMPLES)}


def app(inputs: dict[str, Any]) -> dict[str, Any]:
    sample = SAMPLES[QUESTION_INDEX[inputs["question"]]]
    return {"answer": sample["response"], "contexts": sample["retrieved_contexts"]}


async def async_app(inputs: dict[str, Any]) -> dict[str, Any]:
    return app(inputs)


def examples() -> list[Example]:
    return [
        Example(
            id=uuid.uuid4(),
            inputs={"question": sample["user_input"]},
            outputs={"answer": sample["reference"]},
        )
        for sample in SAMPLES
    ]


def offline_experiment(evaluators: list[Any], *, max_concurrency: int) -> list[Any]:
    """LangSmith's ``evaluate`` of the app over the examples, offline; its rows."""
    results = langsmith_evaluate(
        app,
        data=examples(),
        evaluators=evaluators,
        client=offline_client(),
        upload_results=False,
        max_concurrency=max_concurrency,
    )
    return list(results)


async def offline_aexperiment(evaluators: list[Any], *, max_concurrency: int) -> list[Any]:
    """LangSmith's ``aevaluate`` of the async app over the examples, offline; its rows."""
    results = await langsmith_aevaluate(
        async_app,
        data=examples(),
        evaluators=evaluators,
        client=offline_client(),
        upload_results=False,
        max_concurrency=max_concurrency,
    )
    return [row async for row in results]


def check_langsmith_rows(rows: list[Any], reference: Reference, how: str) -> None:
    assert len(rows) == len(SAMPLES), how
    for row in rows:
        index = QUESTION_INDEX[row["example"].inputs["question"]]
        feedback = {result.key: result for result in row["evaluation_results"]["results"]}
        assert set(feedback) == set(reference), (how, index)
        for key, result in feedback.items():
            assert isinstance(result.score, (int, float)), (how, key, index, result.comment)
            assert result.score == pytest.approx(reference[key][index], abs=1e-9), (
                how,
                key,
                index,
            )


def test_langsmith_evaluate_then_aevaluate_with_the_same_evaluators(
    base_url: str, reference: Reference
) -> None:
    judge, embeddings, metrics = build(base_url)
    evaluators = [metric.as_evaluator() for metric in metrics]

    def scenario() -> None:
        check_langsmith_rows(
            offline_experiment(evaluators, max_concurrency=3), reference, "evaluate"
        )

        async def main() -> None:
            check_langsmith_rows(
                await offline_aexperiment(evaluators, max_concurrency=3),
                reference,
                "aevaluate",
            )
            await check_users_async_calls(judge, embeddings)

        asyncio.run(main())
        check_users_sync_calls(judge, embeddings)

    run_within(DEADLINE, scenario)


# --------------------------------------------------------------------------- 7: the budget


def test_sync_requests_in_flight_stay_within_max_concurrency(
    server: InFlightServer, base_url: str, reference: Reference
) -> None:
    *_, metrics = build(base_url)
    chosen = [metrics[0], metrics[3]]  # FactualCorrectness and SemanticSimilarity
    chosen_reference = {metric.key: reference[metric.key] for metric in chosen}
    server.latency = 0.2

    rows = run_within(DEADLINE, evaluate, SAMPLES, chosen, max_concurrency=2)

    check_rows(rows, chosen_reference, "evaluate, max_concurrency=2")
    assert server.chat_requests > 0 and server.embedding_requests > 0
    assert server.max_in_flight <= 2, f"{server.max_in_flight} requests in flight at once"

    # The gauge would have seen more: a wider budget does put more requests in flight.
    server.reset()
    rows = run_within(DEADLINE, evaluate, SAMPLES, chosen, max_concurrency=8)
    check_rows(rows, chosen_reference, "evaluate, max_concurrency=8")
    assert 2 < server.max_in_flight <= 8


# --------------------------------------------------------------------------- 8: which interface


SpyCounts = Counter[str]

CHAT_METHODS = ("_generate", "_agenerate", "_stream", "_astream")
EMBEDDING_METHODS = ("embed_documents", "embed_query", "aembed_documents", "aembed_query")


@pytest.fixture
def model_calls(monkeypatch: pytest.MonkeyPatch) -> SpyCounts:
    """Counts of calls to ChatOpenAI's and OpenAIEmbeddings' sync and async methods."""
    calls: SpyCounts = Counter()

    def spy(owner: type, name: str) -> None:
        original = getattr(owner, name)
        if inspect.iscoroutinefunction(original):

            async def counted_async(self: Any, *args: Any, **kwargs: Any) -> Any:
                calls[name] += 1
                return await original(self, *args, **kwargs)

            monkeypatch.setattr(owner, name, counted_async)
        else:

            def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
                calls[name] += 1
                return original(self, *args, **kwargs)  # a generator for _stream / _astream

            monkeypatch.setattr(owner, name, counted)

    for name in CHAT_METHODS:
        spy(ChatOpenAI, name)
    for name in EMBEDDING_METHODS:
        spy(OpenAIEmbeddings, name)
    return calls


def test_the_sync_surface_calls_models_through_their_sync_interface(
    base_url: str, reference: Reference, model_calls: SpyCounts
) -> None:
    *_, metrics = build(base_url)
    evaluators = [metric.as_evaluator() for metric in metrics]

    def scenario() -> None:
        check_scores(sync_scores(metrics), reference, "invoke")
        check_scores({m.key: m.batch(list(SAMPLES)) for m in metrics}, reference, "batch")
        assert metrics[0].score(SAMPLES[0]) == pytest.approx(reference[metrics[0].key][0])
        check_rows(evaluate(SAMPLES, metrics), reference, "evaluate")
        check_rows(list(stream_evaluate(SAMPLES, metrics)), reference, "stream_evaluate")
        check_langsmith_rows(
            offline_experiment(evaluators, max_concurrency=2), reference, "LangSmith evaluate"
        )

    run_within(DEADLINE, scenario)
    async_or_streaming = {
        name: model_calls[name]
        for name in ("_agenerate", "_stream", "_astream", "aembed_documents", "aembed_query")
    }
    assert async_or_streaming == dict.fromkeys(async_or_streaming, 0), model_calls
    assert model_calls["_generate"] > 0, model_calls
    assert model_calls["embed_documents"] + model_calls["embed_query"] > 0, model_calls


def test_the_async_surface_calls_models_through_their_async_interface(
    base_url: str, reference: Reference, model_calls: SpyCounts
) -> None:
    *_, metrics = build(base_url)
    evaluators = [metric.as_evaluator() for metric in metrics]

    async def main() -> None:
        check_scores(await async_scores(metrics), reference, "ainvoke")
        check_scores({m.key: await m.abatch(list(SAMPLES)) for m in metrics}, reference, "abatch")
        assert await metrics[0].ascore(SAMPLES[0]) == pytest.approx(reference[metrics[0].key][0])
        check_rows(await aevaluate(SAMPLES, metrics), reference, "aevaluate")
        check_langsmith_rows(
            await offline_aexperiment(evaluators, max_concurrency=2),
            reference,
            "LangSmith aevaluate",
        )

    run_within(DEADLINE, asyncio.run, main())
    sync_or_streaming = {
        name: model_calls[name]
        for name in ("_generate", "_stream", "_astream", "embed_documents", "embed_query")
    }
    assert sync_or_streaming == dict.fromkeys(sync_or_streaming, 0), model_calls
    assert model_calls["_agenerate"] > 0, model_calls
    assert model_calls["aembed_documents"] + model_calls["aembed_query"] > 0, model_calls
