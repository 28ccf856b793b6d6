"""The Runnable surface: invoke/ainvoke/batch/abatch, score(), concurrency, tracing."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableSerializable
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.tracers.schemas import Run
from pydantic import PrivateAttr
from support import (
    EINSTEIN_CLAIMS,
    EINSTEIN_REFERENCE,
    EINSTEIN_RESPONSE,
    fact_judge,
)

import langchain_answer_metrics
from langchain_answer_metrics import (
    AllModelsFailedError,
    AnswerCorrectness,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    InvalidSampleError,
    MetricResult,
    Sample,
    SemanticSimilarity,
)
from langchain_answer_metrics.core.result import band_for
from langchain_answer_metrics.testing.scripted import (
    Reply,
    ScriptedChatModel,
    ScriptedEmbeddings,
    prompt_section,
)

EINSTEIN = {"response": EINSTEIN_RESPONSE, "reference": EINSTEIN_REFERENCE}


def test_package_exports() -> None:
    for name in (
        "SemanticSimilarity",
        "FactualCorrectness",
        "AnswerCorrectness",
        "AspectCritic",
        "Faithfulness",
        "Sample",
        "MetricResult",
    ):
        assert name in langchain_answer_metrics.__all__
        assert getattr(langchain_answer_metrics, name) is not None
    for metric in (
        SemanticSimilarity,
        FactualCorrectness,
        AnswerCorrectness,
        AspectCritic,
        Faithfulness,
    ):
        assert issubclass(metric, RunnableSerializable)


@pytest.mark.parametrize(
    ("score", "band"),
    [
        (1.0, "excellent"),
        (0.9, "excellent"),
        (0.8999, "good"),
        (0.7, "good"),
        (0.6999, "moderate"),
        (0.5, "moderate"),
        (0.4999, "poor"),
        (0.0, "poor"),
    ],
)
def test_band_thresholds(score: float, band: str) -> None:
    assert band_for(score) == band


@pytest.mark.parametrize(
    ("cosine", "band"), [(0.95, "excellent"), (0.75, "good"), (0.55, "moderate"), (0.3, "poor")]
)
async def test_result_band_follows_the_score(cosine: float, band: str) -> None:
    embeddings = ScriptedEmbeddings({"a": [1.0, 0.0], "b": [cosine, (1 - cosine**2) ** 0.5]})
    result = await SemanticSimilarity(embeddings=embeddings).ainvoke(
        {"response": "a", "reference": "b"}
    )
    assert result.score == pytest.approx(cosine)
    assert result.band == band


# --- invoke, batch, score -----------------------------------------------------------------


def factual() -> tuple[FactualCorrectness, ScriptedChatModel]:
    judge = fact_judge(claims=EINSTEIN_CLAIMS)
    return FactualCorrectness(llm=judge), judge


async def test_invoke_ainvoke_batch_abatch_agree() -> None:
    metric, _ = factual()

    results = [
        metric.invoke(EINSTEIN),
        await metric.ainvoke(EINSTEIN),
        *metric.batch([EINSTEIN, Sample(**EINSTEIN)]),
        *await metric.abatch([Sample(**EINSTEIN), EINSTEIN]),
    ]

    assert all(isinstance(result, MetricResult) for result in results)
    assert [result.score for result in results] == [0.5] * 6
    assert all(result.details == results[0].details for result in results)
    assert results[0].usage["judge-a"].requests == 4


async def test_score_and_ascore_accept_sample_dict_and_keywords() -> None:
    metric, judge = factual()

    assert metric.score(Sample(**EINSTEIN)) == 0.5
    assert metric.score(EINSTEIN) == 0.5
    assert metric.score(response=EINSTEIN_RESPONSE, reference=EINSTEIN_REFERENCE) == 0.5
    assert await metric.ascore(Sample(**EINSTEIN)) == 0.5
    assert await metric.ascore(EINSTEIN) == 0.5
    assert await metric.ascore(response=EINSTEIN_RESPONSE, reference=EINSTEIN_REFERENCE) == 0.5
    assert len(judge.calls) == 6 * 4


def test_score_with_keywords_validates_like_invoke() -> None:
    metric, judge = factual()
    with pytest.raises(InvalidSampleError, match="reference"):
        metric.score(response=EINSTEIN_RESPONSE)
    with pytest.raises(InvalidSampleError, match="answer"):
        metric.score(response=EINSTEIN_RESPONSE, reference="x", answer="y")
    assert judge.calls == []


class ReverseOrderChat(ScriptedChatModel):
    """Finishes requests in reverse order of their sample number, whatever the timing.

    The prompt's response is ``"answer <i>"``; request i waits until every request for a
    higher-numbered sample has finished, so sample 0 completes last.
    """

    samples: int = 1
    _finished: list[int] = PrivateAttr(default_factory=list)

    @property
    def finished(self) -> list[int]:
        return list(self._finished)

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        number = int(prompt_section(messages, "response").split()[-1])
        while len(self._finished) < self.samples - 1 - number:
            await asyncio.sleep(0.001)
        result = await super()._agenerate(messages, *args, **kwargs)
        self._finished.append(number)
        return result

    # The sync surface calls models through their sync interface, in worker threads.
    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        number = int(prompt_section(messages, "response").split()[-1])
        while len(self._finished) < self.samples - 1 - number:
            time.sleep(0.001)
        result = super()._generate(messages, *args, **kwargs)
        self._finished.append(number)
        return result


def _judged_by_answer(schema: str, messages: list[BaseMessage]) -> Reply:
    response = prompt_section(messages, "response")
    number = int(response.split()[-1])
    return {"verdict": "PASS" if number % 3 == 0 else "FAIL", "reason": f"judged {response}"}


@pytest.mark.parametrize("path", ["abatch", "batch"])
async def test_batch_preserves_input_order_when_completion_order_differs(path: str) -> None:
    count = 6
    chat = ReverseOrderChat(responder=_judged_by_answer, model="judge-a", samples=count)
    critic = AspectCritic(llm=chat, name="divisible", criterion="The number is divisible by 3.")
    samples = [{"response": f"answer {number}"} for number in range(count)]

    if path == "abatch":
        results = await critic.abatch(samples)
    else:
        results = await asyncio.to_thread(critic.batch, samples)

    assert chat.finished == list(reversed(range(count)))
    assert [result.score for result in results] == [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    for number, result in enumerate(results):
        assert result.details["models"]["judge-a"]["reasons"] == [f"judged answer {number}"]


def _distinct_samples(count: int) -> list[dict[str, str]]:
    return [
        {"response": f"Fact {number} holds.", "reference": f"Fact {number} holds."}
        for number in range(count)
    ]


@pytest.mark.parametrize("cap", [1, 2, 3])
async def test_abatch_respects_max_concurrency(cap: int) -> None:
    # One judge in precision mode: each sample has at most one request in flight, so the
    # number of requests in flight is at most the number of samples in flight.
    judge = fact_judge(latency=0.005)
    metric = FactualCorrectness(llm=judge, mode="precision")

    results = await metric.abatch(_distinct_samples(6), config={"max_concurrency": cap})

    assert [result.score for result in results] == [1.0] * 6
    assert judge.max_in_flight == cap
    assert len(judge.calls) == 12


def test_sync_batch_respects_max_concurrency() -> None:
    judge = fact_judge(latency=0.005)
    metric = FactualCorrectness(llm=judge, mode="precision")

    metric.batch(_distinct_samples(5), config={"max_concurrency": 2})

    assert judge.max_in_flight == 2


async def test_abatch_without_a_cap_runs_samples_concurrently() -> None:
    judge = fact_judge(latency=0.005)
    await FactualCorrectness(llm=judge, mode="precision").abatch(_distinct_samples(6))
    assert judge.max_in_flight == 6


@pytest.mark.parametrize("path", ["abatch", "batch"])
async def test_return_exceptions_puts_each_error_in_place(path: str) -> None:
    good = fact_judge("judge-a", claims=EINSTEIN_CLAIMS)
    metric = FactualCorrectness(llm=good, mode="precision")
    samples: list[Any] = [EINSTEIN, {"response": "", "reference": "x"}, EINSTEIN, "not a sample"]

    if path == "abatch":
        results = await metric.abatch(samples, return_exceptions=True)
    else:
        results = await asyncio.to_thread(metric.batch, samples, return_exceptions=True)

    assert isinstance(results[0], MetricResult) and results[0].score == 0.5
    assert isinstance(results[1], InvalidSampleError) and results[1].field == "response"
    assert isinstance(results[2], MetricResult) and results[2].score == 0.5
    assert isinstance(results[3], InvalidSampleError) and results[3].field == "sample"


async def test_return_exceptions_with_a_failing_panel() -> None:
    def reply(schema: str, messages: list[BaseMessage]) -> Reply:
        if "Spain" in prompt_section(messages, "text"):
            return RuntimeError("rate limited")
        return (
            {"claims": ["Einstein was born in 1879."]}
            if schema == "ClaimList"
            else {"verdicts": [{"index": 1, "verdict": "supported", "reason": "r"}]}
        )

    metric = FactualCorrectness(llm=ScriptedChatModel(responder=reply), mode="precision")
    other = {"response": "Einstein was born in 1879.", "reference": EINSTEIN_REFERENCE}

    results = await metric.abatch([EINSTEIN, other], return_exceptions=True)

    assert isinstance(results[0], AllModelsFailedError)
    assert isinstance(results[1], MetricResult) and results[1].score == 1.0
    with pytest.raises(AllModelsFailedError):
        await metric.abatch([EINSTEIN, other])


# --- sync calls from async code -----------------------------------------------------------


async def test_sync_invoke_inside_a_running_event_loop() -> None:
    metric, _ = factual()
    asyncio.get_running_loop()  # this test body runs on the event loop's thread

    assert metric.invoke(EINSTEIN).score == 0.5
    assert metric.score(EINSTEIN) == 0.5
    assert metric.batch([EINSTEIN, EINSTEIN])[1].score == 0.5


async def test_sync_invoke_from_a_thread_while_the_loop_runs() -> None:
    metric, _ = factual()
    result = await asyncio.to_thread(metric.invoke, EINSTEIN)
    assert result.score == 0.5


def test_sync_invoke_from_a_thread_running_its_own_loop() -> None:
    metric, _ = factual()
    scores: list[float] = []

    async def inside_loop() -> None:
        scores.append(metric.invoke(EINSTEIN).score)
        scores.append((await metric.ainvoke(EINSTEIN)).score)

    thread = threading.Thread(target=asyncio.run, args=(inside_loop(),))
    thread.start()
    thread.join()
    assert scores == [0.5, 0.5]


def test_repeated_sync_invokes_from_a_plain_function() -> None:
    metric, judge = factual()
    scores = [metric.invoke(EINSTEIN).score for _ in range(5)]
    assert scores == [0.5] * 5
    assert len(judge.calls) == 5 * 4


# --- tracing ------------------------------------------------------------------------------


def descendants(run: Run) -> Iterator[tuple[Run, list[str]]]:
    """Every run below ``run``, with the names of its ancestors from ``run`` down."""
    stack: list[tuple[Run, list[str]]] = [(child, [run.name]) for child in run.child_runs]
    while stack:
        current, path = stack.pop()
        yield current, path
        stack.extend((child, [*path, current.name]) for child in current.child_runs)


def _judge() -> ScriptedChatModel:
    return fact_judge("judge-a", claims=EINSTEIN_CLAIMS, votes=["PASS", "PASS", "FAIL"])


def _embeddings() -> ScriptedEmbeddings:
    return ScriptedEmbeddings(model="emb-a")


SAMPLE = {**EINSTEIN, "retrieved_contexts": [EINSTEIN_REFERENCE]}


@pytest.mark.parametrize(
    ("metric", "root_name", "steps"),
    [
        (
            lambda: FactualCorrectness(llm=_judge()),
            "factual_correctness",
            {"decompose_claims": 2, "verify_claims": 2},
        ),
        (
            lambda: FactualCorrectness(llm=_judge(), mode="recall"),
            "factual_correctness",
            {"decompose_claims": 1, "verify_claims": 1},
        ),
        (
            lambda: Faithfulness(llm=_judge()),
            "faithfulness",
            {"decompose_claims": 1, "verify_claims": 1},
        ),
        (
            lambda: AspectCritic(llm=_judge(), name="has_date", criterion="Has a year."),
            "has_date",
            {"judge_aspect": 1},
        ),
        (lambda: SemanticSimilarity(embeddings=_embeddings()), "semantic_similarity", {"embed": 1}),
        (
            lambda: AnswerCorrectness(llm=_judge(), embeddings=_embeddings()),
            "answer_correctness",
            {"decompose_claims": 2, "verify_claims": 2, "embed": 1},
        ),
    ],
)
@pytest.mark.parametrize("path", ["invoke", "ainvoke"])
async def test_steps_are_named_child_runs_of_the_metric_run(
    metric: Any, root_name: str, steps: dict[str, int], path: str
) -> None:
    scorer: Runnable[Any, MetricResult] = metric()
    collector = RunCollectorCallbackHandler()
    config = {"callbacks": [collector]}

    if path == "invoke":
        result = await asyncio.to_thread(scorer.invoke, SAMPLE, config)
    else:
        result = await scorer.ainvoke(SAMPLE, config)

    (root,) = collector.traced_runs
    assert root.name == root_name
    assert root.error is None
    below = list(descendants(root))
    counts = {step: sum(run.name == step for run, _ in below) for step in steps}
    assert counts == steps
    for run, path_names in below:
        if run.name in steps:
            # Each step runs under the run of the model that took it.
            assert path_names[-1] in {"judge-a", "emb-a"}
    assert isinstance(result, MetricResult)


async def test_answer_correctness_traces_its_two_components() -> None:
    collector = RunCollectorCallbackHandler()
    await AnswerCorrectness(llm=_judge(), embeddings=_embeddings()).ainvoke(
        SAMPLE, {"callbacks": [collector]}
    )
    (root,) = collector.traced_runs
    # Runs are named by the metric key, as results and feedback are.
    assert sorted(child.name for child in root.child_runs) == [
        "factual_correctness",
        "semantic_similarity",
    ]


async def test_failed_step_is_recorded_as_an_errored_child_run() -> None:
    def reply(schema: str, messages: list[BaseMessage]) -> Reply:
        return RuntimeError("boom")

    collector = RunCollectorCallbackHandler()
    metric = AspectCritic(
        llm=[ScriptedChatModel(responder=reply, model="bad"), _judge()],
        name="polite",
        criterion="Polite.",
    )
    result = await metric.ainvoke({"response": "Hi."}, {"callbacks": [collector]})

    assert result.per_model == {"judge-a": 1.0}
    (root,) = collector.traced_runs
    errored = [
        (run.name, path[-1])
        for run, path in descendants(root)
        if run.name == "judge_aspect" and run.error
    ]
    assert errored == [("judge_aspect", "bad")]
