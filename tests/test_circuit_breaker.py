"""The circuit breaker (issue 10): a run stops when one endpoint keeps failing, and
per-sample errors name the endpoint.

Real paths only: ChatOpenAI and OpenAIEmbeddings against the local OpenAI-compatible
server (its faults), or against a port nothing listens on; the CLI as a subprocess. What
is checked: the run stops after N failures in a row to one endpoint (connection errors,
timeouts, 5xx), not after sending every request; the message names scheme://host:port and
never the key; finished rows are kept, the rest are not run; a reply in between resets the
count; 4xx replies do not count; the count is per endpoint.
"""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from langchain_openai import ChatOpenAI, OpenAIEmbeddings
from test_cli import clean_env, cli, out_lines, write_jsonl

from langchain_answer_metrics import Faithfulness, SemanticSimilarity
from langchain_answer_metrics.config import ConfigError, load_config
from langchain_answer_metrics.core.result import MetricResult
from langchain_answer_metrics.judging.endpoints import (
    OPENAI_ENDPOINT,
    endpoint_of,
    is_endpoint_failure,
    normalise_endpoint,
)
from langchain_answer_metrics.judging.judges import Embedder, Judge
from langchain_answer_metrics.judging.panel import AllModelsFailedError
from langchain_answer_metrics.metrics.explain import counted
from langchain_answer_metrics.run.runner import aevaluate, evaluate, stream_evaluate
from langchain_answer_metrics.testing.faults import Fault
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

KEY = "sk-test-SECRET123"


def sample(index: int) -> dict[str, Any]:
    # All distinct: nothing is shared across samples, so each sample sends its own requests.
    return {
        "user_input": f"What happened in year {1800 + index}?",
        "response": f"Event {index} happened in {1800 + index}. It was in city {index}.",
        "reference": f"Event {index} took place in {1800 + index}.",
        "retrieved_contexts": [f"Event {index} is recorded in {1800 + index}."],
    }


SAMPLES = [sample(index) for index in range(40)]


def dead_url() -> tuple[str, str]:
    """A base URL on a loopback port nothing listens on, and its endpoint."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1", f"http://127.0.0.1:{port}"


def endpoint(server: LocalOpenAIServer) -> str:
    return f"http://127.0.0.1:{server.port}"


class Attempts:
    """HTTP clients counting the requests they send (to a dead port too)."""

    def __init__(self) -> None:
        self.count = 0

    def sync(self, request: httpx.Request) -> None:
        self.count += 1

    async def asynchronous(self, request: httpx.Request) -> None:
        self.count += 1

    def options(self) -> dict[str, Any]:
        return {
            "http_client": httpx.Client(event_hooks={"request": [self.sync]}),
            "http_async_client": httpx.AsyncClient(event_hooks={"request": [self.asynchronous]}),
        }


def judge(base_url: str, *, model: str = "judge-a", **options: Any) -> ChatOpenAI:
    options.setdefault("timeout", 30)
    return ChatOpenAI(
        model=model,
        base_url=base_url,
        api_key=KEY,  # type: ignore[arg-type]
        use_responses_api=False,
        max_retries=0,
        **options,
    )


def after(count: int, fault: Fault | str = "500") -> Any:
    """A fault policy: the first ``count`` requests are answered, every later one faulted."""
    return lambda info: fault if info.number >= count else None


def text_of(rows: Any) -> str:
    return json.dumps([row.model_dump(mode="json") for row in rows])


@pytest.fixture
def short_retry_pauses(monkeypatch: pytest.MonkeyPatch) -> None:
    """The openai client's own retries as the command makes them (2 per request, its
    default), with pauses of milliseconds instead of its backoff (0.5 s, then 1 s): for the
    tests of the command that are not about the pauses. One test keeps them whole
    (:func:`test_cli_a_dead_base_url_exits_5_promptly_naming_the_endpoint`)."""
    import openai._base_client

    monkeypatch.setattr(openai._base_client, "INITIAL_RETRY_DELAY", 0.005)


# --------------------------------------------------------------------------- the runner


def test_a_dead_endpoint_stops_the_run_after_n_failures(tmp_path: Path) -> None:
    url, dead = dead_url()
    attempts = Attempts()
    metric = Faithfulness(llm=judge(url, **attempts.options()))
    checkpoint = tmp_path / "run.jsonl"
    started = time.monotonic()
    rows = evaluate(
        SAMPLES, [metric], max_concurrency=4, max_consecutive_failures=5, checkpoint=checkpoint
    )
    assert time.monotonic() - started < 60  # never the full run's retries and timeouts
    # 2 requests per sample would be 80; the run stops at 5, with at most a few in flight.
    assert 5 <= attempts.count <= 5 + 2 * 4, attempts.count
    assert len(rows) == 40
    assert rows.stopped is not None and rows.stopped.reason == "circuit_breaker"
    message = rows.stopped.message
    assert message.startswith(f"circuit breaker: 5 requests in a row to {dead} failed; ")
    assert message.endswith("last error: APIConnectionError: Connection error.")
    not_run = [row for row in rows if row.not_run]
    finished = [row for row in rows if not row.not_run]
    assert len(not_run) >= 30 and rows.stopped.not_run == len(not_run)
    for row in not_run:
        error = row.results["faithfulness"]
        assert error.error_type == "NotRun" and error.stop_reason == "circuit_breaker"
    # The rows that finished (with their errors) are saved; those not run are not.
    saved = checkpoint.read_text("utf-8") if checkpoint.exists() else ""
    assert len(saved.splitlines()) == len(finished)
    for row in finished:
        error = row.results["faithfulness"]
        assert error.error_type == "AllModelsFailedError"
        assert f"APIConnectionError at {dead}: Connection error." in error.message
    assert KEY not in text_of(rows) and KEY not in saved


async def test_a_server_answering_500_stops_the_run_and_keeps_the_finished_rows(
    server: LocalOpenAIServer,
) -> None:
    # At max_concurrency 1 the earliest sample's requests go first: the first samples are
    # scored (2 requests each), then every request gets a 500.
    server.faults = after(10)
    rows = await aevaluate(
        SAMPLES[:30],
        [Faithfulness(llm=judge(server.base_url))],
        max_concurrency=1,
        max_consecutive_failures=3,
    )
    scored = [row for row in rows if isinstance(row.results["faithfulness"], MetricResult)]
    assert [row.index for row in scored] == list(range(len(scored))) and len(scored) >= 3
    assert rows.stopped is not None and rows.stopped.reason == "circuit_breaker"
    assert f"3 requests in a row to {endpoint(server)} failed" in rows.stopped.message
    assert "last error: InternalServerError: " in rows.stopped.message
    assert server.chat_requests <= 10 + 3 + 1
    assert all(row.not_run for row in rows[8:])
    assert sum(not row.not_run for row in rows) <= 9


def test_a_reply_in_between_resets_the_count(server: LocalOpenAIServer) -> None:
    # One request in two fails: never 2 in a row, so a breaker at 2 never trips.
    server.faults = lambda info: "500" if info.number % 2 else None
    metric = Faithfulness(llm=judge(server.base_url))
    rows = evaluate(SAMPLES[:8], [metric], max_concurrency=1, max_consecutive_failures=2)
    assert rows.stopped is None
    assert not any(row.not_run for row in rows)
    assert any(row.errors for row in rows) and not all(row.errors for row in rows)

    # The same endpoint failing every time: it trips at 2.
    server.reset()
    server.faults = "500"
    rows = evaluate(SAMPLES[:8], [metric], max_concurrency=1, max_consecutive_failures=2)
    # The 2nd failure trips it; one more request may have had the free place by then.
    assert rows.stopped is not None and 2 <= server.chat_requests <= 3


@pytest.mark.parametrize("status", [400, 401, 404])
def test_4xx_replies_do_not_count(server: LocalOpenAIServer, status: int) -> None:
    """Not as endpoint failures; but they never fix themselves, so a judge answered
    only with them is excluded (issue 30 §2, tests/test_broken_judges.py): here the only
    judge, so the run stops, its own failures named, not the endpoint's."""
    server.faults = Fault("500", status=status, echo_key=True)
    rows = evaluate(
        SAMPLES[:10],
        [Faithfulness(llm=judge(server.base_url))],
        max_concurrency=2,
        max_consecutive_failures=2,
    )
    assert rows.stopped is not None
    assert rows.stopped.message.startswith("judge-a is broken: 3 failures in a row")
    assert server.chat_requests <= 3 + 2  # not every sample's request
    # Not an endpoint failure: the message is the provider's, without an endpoint.
    assert endpoint(server) not in text_of(rows)
    assert KEY not in text_of(rows)


def test_timeouts_count_and_name_the_endpoint(server: LocalOpenAIServer) -> None:
    server.latency = 2.0
    metric = Faithfulness(llm=judge(server.base_url, timeout=0.2))
    rows = list(
        stream_evaluate(SAMPLES[:20], [metric], max_concurrency=2, max_consecutive_failures=3)
    )
    stopped = [row for row in rows if row.not_run]
    assert stopped, "the breaker did not trip"
    assert "last error: APITimeoutError: Request timed out." in (
        stopped[0].results["faithfulness"].message
    )
    finished = [row for row in rows if not row.not_run]
    for row in finished:
        assert f"APITimeoutError at {endpoint(server)}: Request timed out." in (
            row.results["faithfulness"].message
        )


def test_slow_requests_sent_beside_answered_ones_do_not_trip(server: LocalOpenAIServer) -> None:
    # The first four requests stall past the deadline and time out together, one after
    # another with no reply in between; but the endpoint answered everything else sent
    # meanwhile, so it is slow for some requests, not silent. (The CI run that found this:
    # 3 of ~50 slow faults timing out at once stopped a 200-sample run at sample 76.)
    slow = Fault("slow", delay=3.0)
    server.faults = lambda info: slow if info.number < 4 else None
    metric = Faithfulness(llm=judge(server.base_url, timeout=1.0))
    rows = evaluate(SAMPLES[:12], [metric], max_concurrency=12, max_consecutive_failures=20)
    assert rows.stopped is None and not any(row.not_run for row in rows)
    failed = [row for row in rows if row.errors]
    assert len(failed) == 4
    for row in failed:
        assert f"APITimeoutError at {endpoint(server)}" in row.results["faithfulness"].message
    assert sum(isinstance(row.results["faithfulness"], MetricResult) for row in rows) == 8


def test_the_count_is_per_judge(server: LocalOpenAIServer) -> None:
    """A dead judge is excluded for the rest of the run; the other judge finishes it
    (issue 30 §2: the count is per judge, so a healthy judge is never stopped by it)."""
    url, dead = dead_url()
    metric = Faithfulness(llm=[judge(url, model="judge-dead"), judge(server.base_url)])
    rows = evaluate(SAMPLES[:30], [metric], max_concurrency=2, max_consecutive_failures=4)
    assert rows.stopped is None
    results = [row.results["faithfulness"] for row in rows]
    assert all(result.per_model.keys() == {"judge-a"} for result in results)  # type: ignore[union-attr]
    errors = {failure.error for result in results for failure in result.excluded}  # type: ignore[union-attr]
    assert f"APIConnectionError at {dead}: Connection error." in errors
    assert (
        f"judge-dead was excluded for the rest of the run: circuit breaker: 4 requests in a "
        f"row to {dead} failed; last error: APIConnectionError: Connection error."
    ) in errors
    assert all(endpoint(server) not in error for error in errors)
    assert KEY not in text_of(rows)


def test_a_working_panel_never_trips(server: LocalOpenAIServer) -> None:
    rows = evaluate(
        SAMPLES[:10], [Faithfulness(llm=judge(server.base_url))], max_consecutive_failures=1
    )
    assert rows.stopped is None and not any(row.errors for row in rows)


def test_embedding_requests_count_and_name_the_endpoint() -> None:
    url, dead = dead_url()
    embeddings = OpenAIEmbeddings(
        model="embed-a",
        base_url=url,
        api_key=KEY,  # type: ignore[arg-type]
        check_embedding_ctx_length=False,
        max_retries=0,
    )
    metric = SemanticSimilarity(embeddings=embeddings)
    # Embedding batches go out together: a window of 1 sample makes one request each.
    rows = list(
        stream_evaluate(
            SAMPLES[:20], [metric], max_concurrency=1, window=1, max_consecutive_failures=2
        )
    )
    stopped = [row.results["semantic_similarity"] for row in rows if row.not_run]
    assert stopped, "the breaker did not trip"
    assert f"2 requests in a row to {dead} failed" in stopped[0].message
    errors = [row.results["semantic_similarity"] for row in rows if not row.not_run]
    assert errors
    for error in errors:
        assert f"APIConnectionError at {dead}: Connection error." in error.message
    assert KEY not in text_of(rows)


def test_metric_calls_outside_the_runner_name_the_endpoint_and_are_never_stopped() -> None:
    url, dead = dead_url()
    metric = Faithfulness(llm=judge(url))
    with pytest.raises(AllModelsFailedError) as raised:
        metric.invoke(SAMPLES[0])
    assert f"APIConnectionError at {dead}: Connection error." in str(raised.value)
    # A batch counts the failures but nothing stops it: every sample reports its error.
    outcomes = metric.batch(SAMPLES[:25], return_exceptions=True)
    assert len(outcomes) == 25
    assert all(isinstance(outcome, AllModelsFailedError) for outcome in outcomes)


def test_the_option_is_checked() -> None:
    metric = Faithfulness(llm=judge("http://127.0.0.1:9/v1"))
    with pytest.raises(ValueError, match="max_consecutive_failures must be at least 1"):
        evaluate(SAMPLES[:1], [metric], max_consecutive_failures=0)


# --------------------------------------------------------------------------- endpoints


def test_endpoints_are_scheme_host_and_port_without_credentials() -> None:
    assert normalise_endpoint(f"http://user:{KEY}@127.0.0.1:8011/v1?api_key={KEY}") == (
        "http://127.0.0.1:8011"
    )
    assert normalise_endpoint(f"https://{KEY}@gateway.example/api/v1") == (
        "https://gateway.example:443"
    )
    assert normalise_endpoint("http://[::1]/v1") == "http://[::1]:80"
    assert normalise_endpoint("HTTPS://Example.COM") == "https://example.com:443"
    assert normalise_endpoint("not a url") is None

    # ChatOpenAI and OpenAIEmbeddings without a base URL go to OpenAI; wrappers are seen
    # through.
    plain = ChatOpenAI(model="gpt-4o-mini", api_key=KEY)  # type: ignore[arg-type]
    assert endpoint_of(plain) == OPENAI_ENDPOINT
    assert Judge(model=plain.with_retry().bind(temperature=0)).endpoint == OPENAI_ENDPOINT
    embeddings = OpenAIEmbeddings(api_key=KEY, check_embedding_ctx_length=False)  # type: ignore[arg-type]
    assert Embedder(model=embeddings).endpoint == OPENAI_ENDPOINT
    local = judge(f"http://user:{KEY}@localhost:9/v1")
    assert Judge(model=local).endpoint == "http://localhost:9"
    # A model init_chat_model builds per call: read from its configuration, not built.
    from langchain.chat_models import init_chat_model

    configurable = init_chat_model(
        "judge-a",
        model_provider="openai",
        base_url=f"http://user:{KEY}@127.0.0.1:9/v1",
        api_key=KEY,
        configurable_fields=("temperature",),
    )
    assert Judge(model=configurable).endpoint == "http://127.0.0.1:9"


def test_what_counts_as_an_endpoint_failure() -> None:
    import openai

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")

    def status(code: int) -> openai.APIStatusError:
        response = httpx.Response(code, request=request)
        return openai.APIStatusError("failed", response=response, body=None)

    assert is_endpoint_failure(openai.APIConnectionError(request=request))
    assert is_endpoint_failure(openai.APITimeoutError(request=request))
    assert is_endpoint_failure(httpx.ConnectTimeout("slow"))
    assert is_endpoint_failure(TimeoutError())
    assert is_endpoint_failure(ConnectionRefusedError())
    assert is_endpoint_failure(status(500)) and is_endpoint_failure(status(503))
    for code in (400, 401, 404, 408, 429):
        assert not is_endpoint_failure(status(code))
    assert not is_endpoint_failure(ValueError("bad reply"))


# --------------------------------------------------------------------------- config


def write_config(path: Path, base_url: str, retry: str) -> Path:
    path.write_text(
        f"providers:\n  local:\n    base_url: {base_url}\n    api_key_env: JUDGE_KEY\n"
        f"retry:\n{retry}\n"
        "chat_models:\n  list:\n    - id: judge-a\n",
        "utf-8",
    )
    return path


def test_the_config_file_sets_it(tmp_path: Path) -> None:
    path = write_config(
        tmp_path / "models.yaml",
        "http://127.0.0.1:9/v1",
        "  max_attempts: 1\n  max_consecutive_failures: 3",
    )
    panel = load_config(path, env={"JUDGE_KEY": KEY})
    assert panel.max_consecutive_failures == 3
    assert KEY not in repr(panel)
    default = write_config(tmp_path / "default.yaml", "http://127.0.0.1:9/v1", "  max_attempts: 1")
    assert load_config(default, env={"JUDGE_KEY": KEY}).max_consecutive_failures is None


@pytest.mark.parametrize("value", ["0", "-1", str(10**9), "abc", "2.5"])
def test_a_bad_config_value_is_refused(tmp_path: Path, value: str) -> None:
    path = write_config(
        tmp_path / "models.yaml", "http://127.0.0.1:9/v1", f"  max_consecutive_failures: {value}"
    )
    with pytest.raises(ConfigError, match=r"retry\.max_consecutive_failures"):
        load_config(path, env={"JUDGE_KEY": KEY})


# --------------------------------------------------------------------------- the CLI


def cli_rows(tmp_path: Path, count: int) -> Path:
    return write_jsonl(
        tmp_path / "qa.jsonl",
        [
            {
                "id": f"s{i}",
                "question": s["user_input"],
                "answer": s["response"],
                "contexts": s["retrieved_contexts"],
            }
            for i, s in enumerate(SAMPLES[:count])
        ],
    )


def test_cli_a_dead_base_url_exits_5_promptly_naming_the_endpoint(tmp_path: Path) -> None:
    # What a user gets: the openai client's default retries, with its real pauses.
    url, dead = dead_url()
    data = cli_rows(tmp_path, 30)
    summary = tmp_path / "summary.json"
    started = time.monotonic()
    result = cli(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        url,
        "--model",
        "judge-a",
        "--max-consecutive-failures",
        "3",
        "--summary-json",
        summary,
        "--quiet",
        env=clean_env(OPENAI_API_KEY=KEY),
        timeout=120,
    )
    assert time.monotonic() - started < 60
    assert result.returncode == 5, result.stderr
    assert (
        f"answer-metrics: stopped early: circuit breaker: 3 requests in a row to {dead} "
        "failed; last error: APIConnectionError: Connection error." in result.stderr
    )
    assert re.search(r"\d+ samples? not run", result.stderr)
    assert KEY not in result.stdout + result.stderr
    report = json.loads(summary.read_text("utf-8"))
    assert report["stopped"]["reason"] == "circuit_breaker"
    assert report["not_run"] >= 20 and report["exit_code"] == 5
    assert KEY not in summary.read_text("utf-8")


@pytest.mark.usefixtures("short_retry_pauses")
def test_cli_out_keeps_the_finished_rows(tmp_path: Path, server: LocalOpenAIServer) -> None:
    server.faults = after(8)  # the first samples scored (2 requests each), then 500s
    data = cli_rows(tmp_path, 20)
    out = tmp_path / "out.jsonl"
    args = [
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--max-concurrency",
        "1",
        "--out",
        out,
        "--quiet",
    ]
    result = cli(*args, "--max-consecutive-failures", "2", env=clean_env(OPENAI_API_KEY=KEY))
    assert result.returncode == 5, result.stderr
    assert f"2 requests in a row to {endpoint(server)} failed" in result.stderr
    saved = out_lines(out)
    scored = [line["id"] for line in saved if line["metrics"]["faithfulness"]["error"] is None]
    assert scored == [f"s{i}" for i in range(len(scored))] and len(scored) >= 2
    assert len(saved) < 20
    assert KEY not in out.read_text("utf-8") + result.stdout + result.stderr
    # Each failure counted is a request the client retried twice (its default), in vain.
    retried = [entry for entry in server.requests if entry.status == 500]
    assert max(entry.attempt for entry in retried) == 2

    server.faults = None
    resumed = cli(*args, env=clean_env(OPENAI_API_KEY=KEY))
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {counted(len(scored), 'sample')} already scored" in resumed.stderr
    assert {line["id"] for line in out_lines(out)} == {f"s{i}" for i in range(20)}


def test_cli_reads_the_config_file_and_the_flag_wins(tmp_path: Path) -> None:
    url, dead = dead_url()
    data = cli_rows(tmp_path, 30)
    config = write_config(
        tmp_path / "models.yaml", url, "  max_attempts: 1\n  max_consecutive_failures: 3"
    )
    env = clean_env(JUDGE_KEY=KEY)
    base = ["evaluate", data, "--metric", "faithfulness", "--config", config, "--quiet"]
    from_file = cli(*base, env=env, timeout=120)
    assert from_file.returncode == 5, from_file.stderr
    assert f"circuit breaker: 3 requests in a row to {dead} failed" in from_file.stderr
    flag = cli(*base, "--max-consecutive-failures", "2", env=env, timeout=120)
    assert flag.returncode == 5, flag.stderr
    assert f"circuit breaker: 2 requests in a row to {dead} failed" in flag.stderr
    assert KEY not in from_file.stderr + flag.stderr


@pytest.mark.parametrize("value", ["0", "-1", str(10**9), "abc"])
def test_cli_a_bad_value_is_a_usage_error(tmp_path: Path, value: str) -> None:
    data = cli_rows(tmp_path, 1)
    flag = cli(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "judge-a",
        "--max-consecutive-failures",
        value,
    )
    assert flag.returncode == 2, flag.stderr
    assert "--max-consecutive-failures" in flag.stderr

    config = write_config(
        tmp_path / "models.yaml", "http://127.0.0.1:9/v1", f"  max_consecutive_failures: {value}"
    )
    from_file = cli(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--config",
        config,
        env=clean_env(JUDGE_KEY=KEY),
    )
    assert from_file.returncode == 2, from_file.stderr
    assert "retry.max_consecutive_failures" in from_file.stderr


@pytest.mark.usefixtures("short_retry_pauses")
def test_cli_calibrate_stops_too(tmp_path: Path) -> None:
    url, dead = dead_url()
    labelled = Path(__file__).resolve().parent.parent / "langchain_answer_metrics" / "data"
    result = cli(
        "calibrate",
        labelled / "demo_labelled.jsonl",
        "--metric",
        "factual_correctness",
        "--base-url",
        url,
        "--model",
        "judge-a",
        "--max-consecutive-failures",
        "2",
        "--quiet",
        env=clean_env(OPENAI_API_KEY=KEY),
        timeout=120,
    )
    assert result.returncode == 5, result.stderr
    assert f"circuit breaker: 2 requests in a row to {dead} failed" in result.stderr
    assert KEY not in result.stdout + result.stderr
