"""Endpoints that misbehave (issue 20): every request has a deadline, a reply a size cap,
the circuit breaker trips on a silent endpoint in one round of requests, and retries are
requests in ``--max-requests`` and the spend.

Real paths only: ChatOpenAI and OpenAIEmbeddings, as a config builds them or as a user
passes them, against :class:`HostileServer` on loopback; the CLI as a subprocess. Every
case must end (generous subprocess timeouts guard the suite; nothing asserts a duration),
with a clear message, the documented exit code, and never the key.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from test_cli import clean_env, cli, out_lines, write_jsonl

from langchain_answer_metrics import Faithfulness, SemanticSimilarity
from langchain_answer_metrics.config import panel_from_mapping
from langchain_answer_metrics.config.http_limits import MAX_CHAT_REPLY_BYTES
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.panel import AllModelsFailedError
from langchain_answer_metrics.run.runner import evaluate
from langchain_answer_metrics.testing.faults import Fault
from langchain_answer_metrics.testing.hostile_server import HostileServer
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.requests import RequestInfo

KEY = "sk-hostile-SECRET-4242"
SAMPLE = {
    "user_input": "Where is Paris?",
    "response": "Paris is in France.",
    "reference": "Paris is the capital of France.",
    "retrieved_contexts": ["Paris is the capital of France."],
}
# What each behaviour's error must say (lower-cased).
SAYS = {
    "silent": "timed out",
    "trickle": "deadline",
    "flood": "cap on a reply",
    "close": "connection error",
    "echo_401": "401",
}


# The request deadline where a test waits for it to pass (a silent or trickling endpoint):
# short, but four trickle intervals, so a trickle is always cut by the deadline and never by
# a gap between its bytes, even on a loaded machine.
DEADLINE = 0.4


def hostile(behaviour: str) -> HostileServer:
    # Bounded: a connection is never held longer than this, whatever goes wrong.
    return HostileServer(behaviour, max_seconds=15, trickle_interval=0.1)  # type: ignore[arg-type]


def config(base_url: str, timeout: float = 1, **retry: Any) -> dict[str, Any]:
    provider = {"base_url": base_url, "api_key_env": "HOSTILE_KEY", "timeout": timeout}
    data: dict[str, Any] = {
        "providers": {"p": provider},
        "chat_models": {"list": [{"id": "judge-m"}]},
        "embedding_models": {"list": [{"id": "embed-m"}]},
    }
    if retry:
        data["retry"] = retry
    return data


def failure_text(error: AllModelsFailedError) -> str:
    return " ".join(failure.error for failure in error.failures)


@pytest.mark.parametrize("behaviour", list(SAYS))
def test_models_a_config_builds_fail_clearly_on_every_behaviour(behaviour: str) -> None:
    with hostile(behaviour) as server:
        # Retries off: what is seen is the HTTP client's own limits, not the outer deadline.
        # The endpoints that never answer wait for the deadline: a short one.
        timeout = DEADLINE if behaviour in ("silent", "trickle") else 1
        panel = panel_from_mapping(
            config(server.base_url, timeout, on_http_codes=[]), env={"HOSTILE_KEY": KEY}
        )
        metrics = [Faithfulness(llm=panel.judges), SemanticSimilarity(embeddings=panel.embedders)]
        for metric in metrics:
            with pytest.raises(AllModelsFailedError) as caught:
                metric.score(SAMPLE)
            text = failure_text(caught.value)
            assert SAYS[behaviour] in text.lower(), text
            assert KEY not in text and KEY not in repr(caught.value)
            if behaviour != "echo_401":
                assert f"127.0.0.1:{server.port}" in text  # an endpoint failure names it
        if behaviour == "flood":
            # The reply was dropped at the cap: the server could send only about that much
            # (plus what socket buffers hold) before the client hung up, per request.
            assert server.flooded_bytes < server.requests * (MAX_CHAT_REPLY_BYTES * 2 + 2**24)


@pytest.mark.parametrize("behaviour", ["trickle", "flood"])
def test_the_async_surface_has_the_same_limits(behaviour: str) -> None:
    import asyncio

    with hostile(behaviour) as server:
        timeout = DEADLINE if behaviour == "trickle" else 1
        panel = panel_from_mapping(
            config(server.base_url, timeout, on_http_codes=[]), env={"HOSTILE_KEY": KEY}
        )
        with pytest.raises(AllModelsFailedError) as caught:
            asyncio.run(Faithfulness(llm=panel.judges).ascore(SAMPLE))
    assert SAYS[behaviour] in failure_text(caught.value).lower()


@pytest.mark.parametrize("surface", ["sync", "async"])
def test_a_users_own_model_without_timeout_is_bounded_by_the_deadline(surface: str) -> None:
    import asyncio

    with hostile("trickle") as server:
        # No timeout of its own: httpx's read timeout would restart at every byte anyway.
        model = ChatOpenAI(
            base_url=server.base_url,
            api_key=KEY,
            model="m",
            use_responses_api=False,
            max_retries=0,
        )
        metric = Faithfulness(llm=Judge(model=model, timeout=DEADLINE))
        with pytest.raises(AllModelsFailedError) as caught:
            if surface == "sync":
                metric.score(SAMPLE)
            else:
                asyncio.run(metric.ascore(SAMPLE))
    text = failure_text(caught.value)
    assert "TimeoutError" in text and f"request deadline of {DEADLINE:g} s" in text, text


def test_a_silent_endpoint_trips_the_breaker_within_one_round_of_requests() -> None:
    samples = [dict(SAMPLE, user_input=f"Where is Paris? ({index})") for index in range(40)]
    with hostile("silent") as server:
        # The README's shape: our retries, 4 attempts. Counting requests after retries
        # would need 20 x 4 attempts; three timeouts in a row are enough.
        panel = panel_from_mapping(
            config(server.base_url, max_attempts=4, initial_interval="10ms", max_interval="20ms"),
            env={"HOSTILE_KEY": KEY},
        )
        rows = evaluate(samples, [Faithfulness(llm=panel.judges)], max_concurrency=8)
        sent = server.requests
    assert rows.stopped is not None and rows.stopped.reason == "circuit_breaker"
    assert "timed out" in rows.stopped.message and KEY not in rows.stopped.message
    assert sent <= 2 * 8, sent  # the first round of attempts, not 80
    assert sum(row.not_run for row in rows) > 0


def run_cli(args: list[str | Path], **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "langchain_answer_metrics.cli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=clean_env(**env),
    )


@pytest.mark.slow  # the command in processes
def test_the_cli_ends_every_behaviour_with_its_exit_code(tmp_path: Path) -> None:
    rows = [
        dict(SAMPLE, id=str(index), user_input=f"Where is Paris? ({index})") for index in range(6)
    ]
    data = write_jsonl(tmp_path / "qa.jsonl", rows)
    # silent and trickle: timeouts, three in a row stop the run (exit 5); the others fail
    # each sample (exit 3).
    expected = {"silent": 5, "trickle": 5, "flood": 3, "close": 3, "echo_401": 3}
    servers = {behaviour: hostile(behaviour).start() for behaviour in expected}
    # A flood is read up to the cap well within 5 s, even on a busy machine.
    timeouts = {behaviour: "5" if behaviour == "flood" else "1" for behaviour in expected}
    try:
        runs = {
            behaviour: run_cli(
                # A chat model and an embedding model on the hostile endpoint.
                [
                    "evaluate",
                    data,
                    "--metric",
                    "faithfulness,semantic_similarity",
                    "--base-url",
                    server.base_url,
                    "--model",
                    "m",
                    "--embedding-model",
                    "e",
                    "--out",
                    tmp_path / f"{behaviour}.jsonl",
                ],
                ANSWER_METRICS_TIMEOUT=timeouts[behaviour],
                OPENAI_API_KEY=KEY,
            )
            for behaviour, server in servers.items()
        }
        outputs = {behaviour: run.communicate(timeout=300) for behaviour, run in runs.items()}
    finally:
        for server in servers.values():
            server.stop()
    for behaviour, (stdout, stderr) in outputs.items():
        code = runs[behaviour].returncode
        assert code == expected[behaviour], (behaviour, stderr)
        assert "Traceback" not in stderr
        written = (tmp_path / f"{behaviour}.jsonl").read_text("utf-8")
        assert KEY not in stdout + stderr + written, behaviour
        assert SAYS[behaviour] in stderr.lower(), (behaviour, stderr)
        if code == 5:
            assert "circuit breaker" in stderr and "timed out" in stderr
        else:
            # Each sample's error, for the chat and the embedding model, says what it was.
            for line in out_lines(tmp_path / f"{behaviour}.jsonl"):
                for metric in ("faithfulness", "semantic_similarity"):
                    message = line["metrics"][metric]["error"]["message"]
                    assert SAYS[behaviour] in message.lower(), (behaviour, metric, message)


def faults_25_429_15_500(info: RequestInfo) -> Fault | None:
    digest = hashlib.blake2b(f"{info.body_hash}|{info.attempt}".encode(), digest_size=8)
    draw = int.from_bytes(digest.digest(), "big") / 2.0**64
    if draw < 0.25:
        return Fault(kind="429", retry_after=0.01)  # the client waits 10 ms, not its backoff
    if draw < 0.40:
        return Fault(kind="500")
    return None


@pytest.mark.parametrize("retries", ["ours", "the client's"])
def test_retries_are_requests_in_max_requests_and_the_spend(tmp_path: Path, retries: str) -> None:
    rows = [
        dict(
            SAMPLE,
            id=str(index),
            user_input=f"Where is Paris? ({index})",
            response=f"Paris is in France ({index}).",
        )
        for index in range(200)
    ]
    data = write_jsonl(tmp_path / "qa.jsonl", rows)
    with LocalOpenAIServer(faults=faults_25_429_15_500) as server:
        if retries == "ours":
            models = tmp_path / "models.yaml"
            models.write_text(
                json.dumps(
                    {
                        "providers": {"local": {"base_url": server.base_url, "timeout": 10}},
                        "chat_models": {"list": [{"id": "judge-a"}]},
                        "retry": {
                            "on_http_codes": [429, 500],
                            "max_attempts": 5,
                            "initial_interval": "1ms",
                            "max_interval": "2ms",
                        },
                    }
                ),
                "utf-8",
            )
            judge = ["--config", models]
        else:
            # No retry section: the openai client retries twice inside each request.
            judge = ["--base-url", server.base_url, "--model", "judge-a"]
        run = cli(
            "evaluate",
            data,
            "--metric",
            "faithfulness",
            *judge,
            "--max-requests",
            "300",
            "--out",
            tmp_path / "out.jsonl",
            "--no-preflight",
        )  # the check's request is not the run's
        stderr = run.stderr
        sent = server.chat_requests
    assert run.returncode == 5, stderr
    stop = re.search(r"max_requests 300 reached: (\d+) sent", stderr)
    spend = re.search(r"spend \(this run\): ([\d,]+) requests", stderr)
    assert stop and spend, stderr
    # Every request the server saw is counted, in the stop message and in the spend.
    assert int(stop.group(1)) == int(spend.group(1).replace(",", "")) == sent, stderr
    # Within one sample's requests of the cap: faithfulness sends 2 requests, each at
    # most 5 attempts (ours) or 3 (the client's).
    assert 300 - 10 <= sent <= 300 + 10, sent
    finished = [line for line in out_lines(tmp_path / "out.jsonl") if "metrics" in line]
    assert 0 < len(finished) < len(rows)


def test_a_users_own_timeout_sets_the_deadline_unless_the_judge_gives_one() -> None:
    from langchain_answer_metrics.judging.judges import request_deadline

    slow = ChatOpenAI(
        base_url="http://127.0.0.1:9/v1",
        api_key=KEY,
        model="m",
        use_responses_api=False,
        timeout=600,
        max_retries=0,
    )
    assert request_deadline(Judge(model=slow)) == 600.0  # a slow model's own choice
    assert request_deadline(Judge(model=slow, timeout=5)) == 5.0
    retried = slow.model_copy(update={"max_retries": None})  # the client's 2 retries
    assert request_deadline(Judge(model=retried)) == 600.0 * 3 + 2 * 10
    plain = ChatOpenAI(
        base_url="http://127.0.0.1:9/v1", api_key=KEY, model="m", use_responses_api=False
    )
    assert request_deadline(Judge(model=plain)) == 120.0


def test_the_deadline_is_retried_by_a_policy_that_retries_timeouts() -> None:
    import openai

    from langchain_answer_metrics.judging.retry import RetryPolicy

    with hostile("trickle") as server:
        model = ChatOpenAI(
            base_url=server.base_url, api_key=KEY, model="m", use_responses_api=False, max_retries=0
        )
        policy = RetryPolicy(retry_on=(openai.APITimeoutError,), max_attempts=2, initial_delay=0)
        metric = Faithfulness(llm=Judge(model=model, timeout=DEADLINE, retry=policy))
        with pytest.raises(AllModelsFailedError) as caught:
            metric.score(SAMPLE)
        sent = server.requests
    assert f"request deadline of {DEADLINE:g} s" in failure_text(caught.value)
    assert sent == 2  # the first attempt and its retry
