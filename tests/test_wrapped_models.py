"""Any chat-model runnable as a judge, any ``Embeddings`` as an embedder, through real HTTP.

``llm=`` takes a chat model wrapped by LangChain: ``with_fallbacks``, ``with_retry``,
``bind``, ``with_config`` and ``init_chat_model(..., configurable_fields=...)``. The label
comes from the wrapped model ("judge-a"), or from ``Judge(model=..., label=...)``; the
structured-output schema is bound through the wrapper, so a fallback model gets the same
schema (tools and a forced tool_choice in its requests); usage is counted per label. Each
wrapper is checked with ``invoke`` and with ``ainvoke`` against the plain model's score on
the same server, and the server's request log shows what reached it.

Also: a judge call is never streamed, even under ``astream_events`` (whose callback makes
LangChain stream chat models that support it).

Each model object gets a base URL of its own (a path prefix on the one server, which routes
by suffix), so langchain-openai's process-wide async client for it is used from one event
loop only (see test_event_loops.py). A hang fails the test (``run_within``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Literal

import pytest
from langchain.chat_models import init_chat_model
from langchain_core.embeddings import Embeddings
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.tracers.schemas import Run
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from support import run_within

from langchain_answer_metrics import (
    AnswerMetric,
    AspectCritic,
    FactualCorrectness,
    Judge,
    MetricResult,
    SemanticSimilarity,
)
from langchain_answer_metrics.testing.openai_server import (
    LocalOpenAIServer,
    LoggedRequest,
    on_attempts,
)

pytestmark = pytest.mark.usefixtures("network_attempts")  # see conftest.py

KEY = "sk-test-wrapped-models"
DOWN = "http://127.0.0.1:9/v1"  # a closed loopback port: connection refused
DEADLINE = 120.0
CHAT = "/chat/completions"

SAMPLES: list[dict[str, Any]] = [
    {
        "user_input": "When was the Eiffel Tower finished?",
        "response": "The Eiffel Tower was finished in 1889. It stands in Berlin.",
        "reference": "The Eiffel Tower was finished in 1889. It stands in Paris, France.",
    },
    {
        "user_input": "Когда была основана Москва?",
        "response": "Москва была основана в 1147 году. Её основал Юрий Долгорукий.",
        "reference": "Москва основана в 1147 году князем Юрием Долгоруким. Это столица России.",
    },
    {
        "user_input": "长城有多长？",
        "response": "长城全长约21196公里。长城建于秦朝。",
        "reference": "长城全长21196公里。长城始建于春秋战国时期。",
    },
]

Mode = Literal["invoke", "ainvoke"]
MODES: tuple[Mode, ...] = ("invoke", "ainvoke")


@pytest.fixture(autouse=True)
def no_tracing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    monkeypatch.setenv("LANGCHAIN_TRACING_V2", "false")


# --------------------------------------------------------------------------- models


def own_url(server: LocalOpenAIServer) -> str:
    """A base URL of this model object's own on ``server`` (see the module docstring)."""
    return f"{server.url}/{uuid.uuid4().hex[:12]}/v1"


def chat(server: LocalOpenAIServer | None, model: str = "judge-a", **options: Any) -> ChatOpenAI:
    """A ChatOpenAI on ``server``, or on a closed port when ``server`` is None."""
    return ChatOpenAI(
        model=model,
        base_url=own_url(server) if server is not None else DOWN,
        api_key=KEY,
        use_responses_api=False,
        timeout=30,
        **options,
    )


def embedder(server: LocalOpenAIServer) -> OpenAIEmbeddings:
    return OpenAIEmbeddings(
        model="embed-a",
        base_url=own_url(server),
        api_key=KEY,
        check_embedding_ctx_length=False,
        timeout=30,
    )


Wrap = Callable[[LocalOpenAIServer], Runnable[Any, Any]]

WRAPPERS: dict[str, Wrap] = {
    "with_fallbacks": lambda server: chat(server).with_fallbacks([chat(server, "judge-b")]),
    "with_retry": lambda server: chat(server).with_retry(),
    "bind": lambda server: chat(server).bind(temperature=0.3),
    "with_config": lambda server: chat(server).with_config(tags=["x"]),
    "init_chat_model": lambda server: init_chat_model(
        "openai:judge-a",
        configurable_fields=("temperature",),
        base_url=own_url(server),
        api_key=KEY,
        use_responses_api=False,
    ),
}


def metrics_on(llm: Any) -> list[AnswerMetric]:
    """Claim extraction + verification, and three aspect votes, judged by ``llm``."""
    return [
        FactualCorrectness(llm=llm),
        AspectCritic(
            llm=llm, name="gives_year", criterion="The response must state a year.", strictness=3
        ),
    ]


# --------------------------------------------------------------------------- running


def run_all(
    mode: Mode,
    metrics: Sequence[AnswerMetric],
    samples: Sequence[dict[str, Any]] = SAMPLES,
    config: RunnableConfig | None = None,
) -> list[list[MetricResult]]:
    """Every metric on every sample, by ``invoke`` or by ``ainvoke`` (in one event loop)."""
    if mode == "invoke":
        return run_within(
            DEADLINE, lambda: [[m.invoke(s, config) for s in samples] for m in metrics]
        )

    async def main() -> list[list[MetricResult]]:
        return [[await m.ainvoke(s, config) for s in samples] for m in metrics]

    return run_within(DEADLINE, asyncio.run, main())


def plain_scores(server: LocalOpenAIServer, mode: Mode) -> list[list[float]]:
    """The plain judge-a's scores (the server's judge does not depend on the model name)."""
    return [[r.score for r in row] for row in run_all(mode, metrics_on(chat(server)))]


def check_results(
    results: list[list[MetricResult]], expected: list[list[float]], label: str
) -> None:
    for metric_results, metric_expected in zip(results, expected, strict=True):
        for result, score in zip(metric_results, metric_expected, strict=True):
            assert result.excluded == [], result.excluded
            assert result.score == pytest.approx(score, abs=1e-9), result.key
            assert set(result.per_model) == {label}, result.per_model
            assert set(result.usage) == {label}, result.usage
            usage = result.usage[label]
            assert usage.requests > 0 and usage.total_tokens > 0, usage
            assert usage.input_tokens > 0 and usage.output_tokens > 0, usage


def chat_log(server: LocalOpenAIServer, model: str | None = None) -> list[LoggedRequest]:
    return [
        entry
        for entry in server.requests
        if entry.path.endswith(CHAT) and (model is None or entry.model == model)
    ]


def requested_schema(body: dict[str, Any]) -> str | None:
    """The schema a chat request asks for: a forced tool call's, or a strict json_schema's."""
    tools = body.get("tools")
    if tools:
        assert body.get("tool_choice"), body  # a tool call is forced, not optional
        names = {tool["function"]["name"] for tool in tools}
        assert len(names) == 1, names
        return names.pop()
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        return str(response_format["json_schema"]["name"])
    return None


def check_structured(entries: Sequence[LoggedRequest], *, tools: bool = False) -> None:
    """Every request asked for one of the judge schemas (by a forced tool call when
    ``tools``), and none streamed."""
    assert entries
    for entry in entries:
        schema = requested_schema(entry.body)
        assert schema in {"ClaimList", "ClaimVerdicts", "AspectVerdict"}, entry.body
        if tools:
            assert entry.body.get("tools") and entry.body.get("tool_choice"), entry.body
        assert entry.body.get("stream") is not True, entry.body


# --------------------------------------------------------------------------- every wrapper


def wrapper_cases() -> list[Any]:
    """Every wrapper in both modes; the fast tier runs each wrapper in one of them, the
    modes taking turns (each mode has its own tests below as well)."""
    return [
        pytest.param(
            wrapper,
            mode,
            id=f"{wrapper}-{mode}",
            marks=[] if mode == MODES[(index + 1) % 2] else [pytest.mark.slow],
        )
        for index, wrapper in enumerate(WRAPPERS)
        for mode in MODES
    ]


@pytest.mark.parametrize(("wrapper", "mode"), wrapper_cases())
def test_a_wrapped_judge_scores_like_the_plain_model(
    server: LocalOpenAIServer, wrapper: str, mode: Mode
) -> None:
    expected = plain_scores(server, mode)
    server.reset()

    results = run_all(mode, metrics_on(WRAPPERS[wrapper](server)))

    check_results(results, expected, label="judge-a")
    assert {entry.model for entry in chat_log(server)} == {"judge-a"}  # no fallback needed
    check_structured(chat_log(server))
    assert all(entry.status == 200 for entry in chat_log(server))


@pytest.mark.parametrize("mode", MODES)
def test_an_explicit_label_names_a_wrapped_judge(server: LocalOpenAIServer, mode: Mode) -> None:
    expected = plain_scores(server, mode)
    judge = Judge(model=chat(server).with_retry(), label="primary")

    results = run_all(mode, metrics_on(judge))

    check_results(results, expected, label="primary")


@pytest.mark.parametrize("mode", MODES)
def test_a_fallback_takes_over_when_the_first_endpoint_is_down(
    server: LocalOpenAIServer, mode: Mode
) -> None:
    expected = plain_scores(server, mode)  # the plain backup's scores
    server.reset()
    wrapped = chat(None, max_retries=0).with_fallbacks([chat(server, "judge-b")])

    results = run_all(mode, metrics_on(Judge(model=wrapped, label="primary")))

    check_results(results, expected, label="primary")
    # Only the backup reached the server, and with the same schema as the primary would.
    assert {entry.model for entry in chat_log(server)} == {"judge-b"}
    check_structured(chat_log(server, "judge-b"), tools=True)


@pytest.mark.parametrize("mode", MODES)
def test_a_retry_wrapper_retries_a_failed_request(server: LocalOpenAIServer, mode: Mode) -> None:
    expected = plain_scores(server, mode)
    server.reset()
    server.faults = on_attempts("500")  # every request fails once, then succeeds
    wrapped = chat(server, max_retries=0).with_retry(
        wait_exponential_jitter=False, stop_after_attempt=3
    )

    results = run_all(mode, metrics_on(wrapped))

    check_results(results, expected, label="judge-a")
    statuses = Counter((entry.attempt, entry.status) for entry in chat_log(server))
    assert set(statuses) == {(0, 500), (1, 200)}, statuses
    assert statuses[(0, 500)] == statuses[(1, 200)]


@pytest.mark.parametrize("mode", MODES)
def test_bound_arguments_reach_the_server(server: LocalOpenAIServer, mode: Mode) -> None:
    server.reset()

    run_all(mode, metrics_on(chat(server).bind(temperature=0.3)))

    entries = chat_log(server)
    assert entries
    assert {entry.body.get("temperature") for entry in entries} == {0.3}
    check_structured(entries)


@pytest.mark.parametrize("mode", MODES)
def test_configurable_fields_of_init_chat_model_reach_the_server(
    server: LocalOpenAIServer, mode: Mode
) -> None:
    judge = WRAPPERS["init_chat_model"](server)
    server.reset()

    results = run_all(mode, metrics_on(judge), config={"configurable": {"temperature": 0.2}})

    assert all(result.excluded == [] for row in results for result in row)
    entries = chat_log(server)
    assert entries
    assert {entry.body.get("temperature") for entry in entries} == {0.2}
    check_structured(entries)


def descendants(runs: Sequence[Run]) -> list[Run]:
    found: list[Run] = []
    for run in runs:
        found.append(run)
        found.extend(descendants(run.child_runs))
    return found


@pytest.mark.parametrize("mode", MODES)
def test_a_with_config_wrappers_tags_reach_the_model_runs(
    server: LocalOpenAIServer, mode: Mode
) -> None:
    tracer = RunCollectorCallbackHandler()

    results = run_all(
        mode,
        metrics_on(chat(server).with_config(tags=["x"])),
        SAMPLES[:1],
        config={"callbacks": [tracer]},
    )

    assert all(result.excluded == [] for row in results for result in row)
    model_runs = [run for run in descendants(tracer.traced_runs) if run.run_type == "llm"]
    assert model_runs
    assert all("x" in (run.tags or []) for run in model_runs), [run.tags for run in model_runs]


# --------------------------------------------------------------------------- embeddings


class DelegatingEmbeddings(Embeddings):
    """A user's own Embeddings class, delegating to another; counts which methods ran."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls["embed_documents"] += 1
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.calls["embed_query"] += 1
        return self.inner.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls["aembed_documents"] += 1
        return await self.inner.aembed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        self.calls["aembed_query"] += 1
        return await self.inner.aembed_query(text)


@pytest.mark.parametrize("mode", MODES)
def test_any_embeddings_subclass_is_an_embedder(server: LocalOpenAIServer, mode: Mode) -> None:
    (plain,) = run_all(mode, [SemanticSimilarity(embeddings=embedder(server))])
    server.reset()
    wrapper = DelegatingEmbeddings(embedder(server))

    (results,) = run_all(mode, [SemanticSimilarity(embeddings=wrapper)])

    for result, expected in zip(results, plain, strict=True):
        assert result.excluded == []
        assert result.score == pytest.approx(expected.score, abs=1e-9)
        assert len(result.per_model) == 1
    assert server.embedding_requests > 0
    used = set(wrapper.calls)
    if mode == "invoke":
        assert used and used <= {"embed_documents", "embed_query"}, wrapper.calls
    else:
        assert used and used <= {"aembed_documents", "aembed_query"}, wrapper.calls


# --------------------------------------------------------------------------- no streaming


def test_structured_judge_calls_never_stream(server: LocalOpenAIServer) -> None:
    judge = chat(server)
    metrics = metrics_on(judge)

    async def main() -> tuple[list[MetricResult], list[list[dict[str, Any]]]]:
        plain = [await metric.ainvoke(SAMPLES[0]) for metric in metrics]
        server.reset()
        events = []
        for metric in metrics:
            events.append(
                [event async for event in metric.astream_events(SAMPLES[0], version="v2")]
            )
        return plain, events

    plain, events = run_within(DEADLINE, asyncio.run, main())

    for metric, expected, metric_events in zip(metrics, plain, events, strict=True):
        final = metric_events[-1]
        assert final["event"] == "on_chain_end", final
        result = final["data"]["output"]
        assert isinstance(result, MetricResult), result
        assert result.excluded == []
        assert result.score == pytest.approx(expected.score, abs=1e-9), metric.key
    entries = chat_log(server)
    assert entries
    assert [entry.body.get("stream") for entry in entries if entry.body.get("stream")] == []
    assert all(entry.status == 200 for entry in entries)
    check_structured(entries)
