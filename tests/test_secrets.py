"""The API key never shows up: not in logs, reprs, errors, tracebacks, results or traces.

A panel is built by ``load_config`` from a YAML file whose provider reads a recognisable
fake key from an environment variable. It then runs through successful and failing
requests (401, 500, every model failing) against the local server, with every logger at
DEBUG and a LangChain tracer attached, and everything a user could see is scanned.
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.load import dumps
from langchain_core.runnables import RunnableConfig
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.tracers.schemas import Run
from langchain_openai import ChatOpenAI
from pydantic import SecretStr
from support import local_models, write_models_yaml

from langchain_answer_metrics import (
    AllModelsFailedError,
    AnswerCorrectness,
    AnswerMetric,
    AspectCritic,
    FactualCorrectness,
    Faithfulness,
    MetricResult,
    SemanticSimilarity,
)
from langchain_answer_metrics.config import Panel, load_config
from langchain_answer_metrics.run.runner import SampleResults, evaluate
from langchain_answer_metrics.testing.openai_server import Fault, LocalOpenAIServer

KEY_ENV = "ANSWER_METRICS_SECRETS_TEST_KEY"
SECRET = "sk-test-SECRET-abc123"
# The whole key, and the parts a partial mask ("sk-...abc123") would still give away.
NEEDLES = (SECRET, "SECRET-abc123", "test-SECRET")
LOGGERS = (
    "openai",
    "httpx",
    "httpx2",
    "httpcore",
    "httpcore2",
    "langchain",
    "langchain_core",
    "langchain_openai",
    "langsmith",
    "langchain_answer_metrics",
    "asyncio",
)

SAMPLE = {
    "user_input": "When was the Eiffel Tower finished?",
    "response": "The Eiffel Tower was finished in 1889. It stands in Paris.",
    "reference": "The Eiffel Tower was finished in 1889 in Paris, France.",
    "retrieved_contexts": ["The Eiffel Tower was finished in 1889 and stands in Paris."],
}


@pytest.fixture
def panel(server: LocalOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Panel:
    monkeypatch.setenv(KEY_ENV, SECRET)
    config = local_models(server, KEY_ENV, judges=("judge-a", "judge-b"), max_attempts=2)
    return load_config(write_models_yaml(tmp_path, config))


def five_metrics(panel: Panel) -> list[AnswerMetric]:
    return [
        SemanticSimilarity(embeddings=panel.embedders),
        FactualCorrectness(llm=panel.judges),
        AnswerCorrectness(llm=panel.judges, embeddings=panel.embedders),
        AspectCritic(llm=panel.judges, name="has_year", criterion="It must mention a year."),
        Faithfulness(llm=panel.judges),
    ]


def all_runs(runs: list[Run]) -> Iterator[Run]:
    for run in runs:
        yield run
        yield from all_runs(run.child_runs)


def run_record(run: Run) -> str:
    """One traced run as JSON; children are dumped on their own (model_dump skips them)."""
    return json.dumps(run.model_dump(exclude={"child_runs"}), default=str)


def described(error: BaseException) -> str:
    """What a user sees of an error: message, repr and the full chained traceback."""
    return "\n".join([str(error), repr(error), *traceback.format_exception(error)])


def assert_no_secret(where: str, text: str) -> None:
    for needle in NEEDLES:
        assert needle not in text, f"the API key leaked into {where}"


def test_the_scan_would_find_the_key() -> None:
    with pytest.raises(AssertionError, match="leaked into the probe"):
        assert_no_secret("the probe", f"Authorization: Bearer sk-...{SECRET[-13:]}")


def test_the_api_key_appears_nowhere(
    server: LocalOpenAIServer, panel: Panel, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    # The key really is the one in use: a leak would have something to leak.
    chat = panel.judges[0].model
    assert isinstance(chat, ChatOpenAI) and isinstance(chat.openai_api_key, SecretStr)
    assert chat.openai_api_key.get_secret_value() == SECRET

    tracer = RunCollectorCallbackHandler()
    config: RunnableConfig = {"callbacks": [tracer]}
    metrics = five_metrics(panel)
    results: list[MetricResult] = []
    rows: list[SampleResults] = []
    errors: list[BaseException] = []

    def attempt(metric: AnswerMetric) -> None:
        try:
            results.append(metric.invoke(SAMPLE, config))
        except Exception as error:
            errors.append(error)

    # Success, then one judge refused (401), then every model refused or failing.
    for faults in (
        None,
        lambda info: Fault("500", status=401) if info.model == "judge-b" else None,
        Fault("500", status=401),
        "500",
    ):
        server.faults = faults
        for metric in metrics:
            attempt(metric)
        rows += evaluate([SAMPLE, {"response": " "}], metrics, config=config)
    server.faults = Fault("500", status=401)
    try:
        chat.invoke("Hello")  # the bare model's own error, as LangChain raises it
    except Exception as refused:
        errors.append(refused)

    # The runs did what they were meant to: successes, exclusions and failures all occurred.
    assert any(result.excluded for result in results)
    assert any(isinstance(error, AllModelsFailedError) for error in errors)
    assert any(type(error).__name__ == "OpenAIAuthenticationError" for error in errors)
    assert {record.name.split(".")[0] for record in caplog.records} >= {"openai", "httpx2"}
    assert len(server.requests) > 20

    for record in caplog.records:
        assert_no_secret(f"log record {record.name}", record.getMessage())
        assert_no_secret(f"log record {record.name} args", repr(record.args))
    assert_no_secret("the captured log", caplog.text)
    for error in errors:
        assert_no_secret(f"{type(error).__name__}", described(error))
    for result in results:
        assert_no_secret("a result", result.model_dump_json() + repr(result) + str(result))
    for row in rows:
        assert_no_secret("a runner row", row.model_dump_json() + repr(row))
    for metric in metrics:
        assert_no_secret(f"{metric.key}", repr(metric) + str(metric))
        assert_no_secret(f"{metric.key} serialized", json.dumps(metric.to_json(), default=str))
    for judge in panel.judges:
        assert_no_secret("a judge", repr(judge) + str(judge) + dumps(judge.model))
    for embedder in panel.embedders:
        assert_no_secret("an embedder", repr(embedder) + str(embedder) + repr(embedder.model))
    assert_no_secret("the panel", repr(panel) + str(panel) + panel.model_dump_json())
    traced = list(all_runs(tracer.traced_runs))
    assert {run.run_type for run in traced} >= {"chain", "llm"}
    assert any(run.error for run in traced)
    for run in traced:
        assert_no_secret(f"traced run {run.name}", run_record(run))

    # The server's request log holds the header, but never its value.
    for entry in server.requests:
        assert entry.headers.get("authorization") == "<redacted>"
    assert_no_secret("the server's request log", repr(server.requests))


# --------------------------------------------------------------------------- redaction


def test_a_key_quoted_by_the_provider_is_redacted(panel: Panel) -> None:
    from langchain_answer_metrics.core.redaction import redact

    # load_config registered the key it read: any message quoting it can be cleaned.
    message = f"Error code: 401 - Incorrect API key provided: {SECRET}. Check it."
    assert redact(message) == "Error code: 401 - Incorrect API key provided: <redacted>. Check it."
    assert redact("nothing to hide") == "nothing to hide"


def test_keys_of_models_handed_to_a_panel_are_registered() -> None:
    from langchain_answer_metrics import Judge
    from langchain_answer_metrics.core.redaction import redact

    direct = "sk-test-DIRECT-9f8e7d"
    chat = ChatOpenAI(
        model="judge-a",
        api_key=direct,
        base_url="http://127.0.0.1:9/v1",
        use_responses_api=False,
    )
    Panel(judges=[Judge(model=chat)])
    assert direct not in redact(f"401: bad key {direct}")


def test_url_credentials_are_never_shown_or_stored(server: LocalOpenAIServer) -> None:
    from langchain_answer_metrics.config import panel_from_base_url
    from langchain_answer_metrics.core.redaction import redact
    from langchain_answer_metrics.judging.embedding_cache import cache_identity

    url = server.base_url.replace("http://", f"http://gateway-user:{SECRET}@")
    panel = panel_from_base_url(url, model="judge-a", embedding_model="embed-a", env={})
    shown = {
        "repr(panel)": repr(panel),
        "str(panel)": str(panel),
        "panel.model_dump_json()": panel.model_dump_json(),
        "the embedding cache key": cache_identity(panel.embedders[0].model),
    }
    for where, text in shown.items():
        assert_no_secret(where, text)
        assert "gateway-user" not in text, where
        assert server.base_url in text, where  # the endpoint itself is still named
    # An error quoting the URL (a connection error, say) is cleaned too.
    assert_no_secret("a redacted message", redact(f"cannot connect to {url}"))
    # Judges and embedders name their model without its repr (which shows the URL).
    for member in (*panel.judges, *panel.embedders):
        assert_no_secret(f"repr({member.label})", repr(member))
        assert "gateway-user" not in repr(member)
        assert member.label in repr(member)


def test_a_key_echoed_in_an_error_is_redacted_in_results_and_rows(
    server: LocalOpenAIServer, panel: Panel
) -> None:
    echo = Fault("500", status=401, echo_key=True)
    server.faults = lambda info: echo if info.model == "judge-b" else None
    left_out = FactualCorrectness(llm=panel.judges).invoke(SAMPLE)
    assert left_out.excluded and "<redacted>" in left_out.excluded[0].error
    server.faults = echo
    [row] = evaluate([SAMPLE], [Faithfulness(llm=panel.judges)])
    assert "<redacted>" in row.errors["faithfulness"].message
    assert_no_secret("an excluded model's error", left_out.model_dump_json())
    assert_no_secret("a runner row", row.model_dump_json())
