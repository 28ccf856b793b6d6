"""A broken judge stops the run early, whatever the way it is broken (issue 30 §2).

Measured on the main branch before this change, through ChatOpenAI against the local
server: a judge answering every request with prose sent 126 requests for 30 samples; a
wrong model name (404 ``model_not_found``) one failing request per sample; a panel with
one dead judge (500 on every call) sharing an endpoint with a healthy one stopped the
whole run at the endpoint's breaker, and the spend counted fewer requests than the
server saw. Here each is a broken judge found within a bounded number of requests:
excluded and named, the healthy judges finish the run, the run stops only when no judge
is left, and the requests counted are the ones the server saw.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from langchain_answer_metrics import AspectCritic, FactualCorrectness, Faithfulness
from langchain_answer_metrics.judging.judge_health import EXCLUDE_AFTER
from langchain_answer_metrics.judging.judges import Judge
from langchain_answer_metrics.judging.retry import RetryPolicy
from langchain_answer_metrics.run.runner import aevaluate, evaluate
from langchain_answer_metrics.testing.faults import Fault
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer, heuristic_responder
from langchain_answer_metrics.testing.requests import RequestInfo

CONCURRENCY = 4


def sample(index: int) -> dict[str, Any]:
    # All distinct: nothing is shared across samples, so each sample sends its own requests.
    return {
        "user_input": f"What happened in year {1800 + index}?",
        "response": f"Event {index} happened in {1800 + index}. It was in city {index}.",
        "reference": f"Event {index} took place in {1800 + index}.",
        "retrieved_contexts": [f"Event {index} is recorded in {1800 + index}."],
    }


SAMPLES = [sample(index) for index in range(30)]


@pytest.fixture(scope="module")
def shared_server() -> Iterator[LocalOpenAIServer]:
    with LocalOpenAIServer() as server:
        yield server


@pytest.fixture
def judged(server: LocalOpenAIServer) -> Iterator[LocalOpenAIServer]:
    yield server
    server.responder = heuristic_responder
    server.faults = None


def judge(server: LocalOpenAIServer, model: str, **options: Any) -> Judge:
    llm = ChatOpenAI(
        model=model,
        base_url=server.base_url,
        api_key="sk-test",  # type: ignore[arg-type]
        use_responses_api=False,
        max_retries=0,
        timeout=30,
    )
    return Judge(model=llm, **options)


def prose_for(model: str) -> Any:
    """The toy judge, but ``model`` answers every request with prose, never the JSON."""

    def respond(info: RequestInfo) -> Any:
        if info.model == model:
            return "I think the answer is mostly right, with a small mistake."
        return heuristic_responder(info)

    return respond


def requests_of(server: LocalOpenAIServer, model: str) -> int:
    return sum(1 for entry in server.requests if entry.model == model)


def counted(rows: Any) -> int:
    """The requests the run's spend counts (what the summary prints)."""
    return rows.spend().total.requests


def test_a_judge_answering_prose_stops_the_run_within_a_few_samples(
    judged: LocalOpenAIServer,
) -> None:
    judged.responder = prose_for("judge-prose")
    rows = evaluate(
        SAMPLES,
        [FactualCorrectness(llm=judge(judged, "judge-prose"))],
        max_concurrency=CONCURRENCY,
    )
    # Today: 126 requests for 30 samples. Now: a re-asked sample is 3 requests; the judge
    # is excluded after EXCLUDE_AFTER of them, plus the samples already in flight.
    sent = requests_of(judged, "judge-prose")
    assert sent <= 3 * (EXCLUDE_AFTER + CONCURRENCY), sent
    assert rows.stopped is not None and rows.stopped.reason == "circuit_breaker"
    assert "judge-prose" in rows.stopped.message
    assert "no usable ClaimList" in rows.stopped.message
    assert any(row.not_run for row in rows)
    assert counted(rows) == judged.chat_requests


@pytest.mark.parametrize("status", [404, 401, 400, 403])
def test_a_wrong_model_name_is_found_at_once_not_once_per_sample(
    judged: LocalOpenAIServer, status: int
) -> None:
    judged.faults = lambda info: Fault("500", status=status) if info.model == "gpt-typo" else None
    rows = evaluate(
        SAMPLES, [Faithfulness(llm=judge(judged, "gpt-typo"))], max_concurrency=CONCURRENCY
    )
    sent = requests_of(judged, "gpt-typo")
    assert sent <= EXCLUDE_AFTER + CONCURRENCY, sent  # today: one per sample, 30
    assert rows.stopped is not None and rows.stopped.reason == "circuit_breaker"
    assert "gpt-typo is broken" in rows.stopped.message
    assert str(status) in rows.stopped.message or "NotFound" in rows.stopped.message
    assert counted(rows) == judged.chat_requests


@pytest.mark.slow  # 120 samples against a panel
async def test_a_dead_judge_is_excluded_and_the_healthy_one_finishes_the_run(
    judged: LocalOpenAIServer,
) -> None:
    """The issue's panel: judge-b answers 500 to every call, on judge-a's endpoint."""
    judged.faults = lambda info: "500" if info.model == "judge-b" else None
    retry = RetryPolicy(retry_on=(Exception,), max_attempts=6, initial_delay=0.001)
    panel = [judge(judged, "judge-a", retry=retry), judge(judged, "judge-b", retry=retry)]
    samples = [sample(index) for index in range(120)]
    rows = await aevaluate(
        samples,
        [Faithfulness(llm=panel)],
        max_concurrency=CONCURRENCY,
        max_consecutive_failures=20,
    )
    assert rows.stopped is None
    assert all(row.results["faithfulness"].per_model.keys() == {"judge-a"} for row in rows)
    # judge-b is named in every sample it was left out of, and sent at most about one
    # breaker's worth of requests (20 in a row), not 6 per call for every sample.
    reasons = {row.results["faithfulness"].excluded[0].error for row in rows[-10:]}
    assert all("judge-b was excluded for the rest of the run" in reason for reason in reasons)
    assert requests_of(judged, "judge-b") <= 20 + 6 * CONCURRENCY
    assert counted(rows) == judged.chat_requests


def test_the_same_error_on_a_judges_first_samples_excludes_it(
    judged: LocalOpenAIServer,
) -> None:
    """A failure that is not an HTTP error (here a reply of the wrong kind, every time)."""
    judged.responder = prose_for("judge-odd")
    panel = [judge(judged, "judge-ok"), judge(judged, "judge-odd", max_reasks=0)]
    rows = evaluate(
        SAMPLES, [AspectCritic(llm=panel, criterion="Is it concise?")], max_concurrency=1
    )
    assert rows.stopped is None
    assert requests_of(judged, "judge-odd") == EXCLUDE_AFTER  # one at a time: exact
    assert all(row.results["aspect_critic"].per_model.keys() == {"judge-ok"} for row in rows)
    assert counted(rows) == judged.chat_requests


def test_a_transient_fault_is_still_retried(judged: LocalOpenAIServer) -> None:
    """A judge whose every first attempt gets a 429 or a 500 is not broken."""
    judged.faults = lambda info: (
        ("429" if info.number % 2 else "500") if info.attempt == 0 else None
    )
    retry = RetryPolicy(retry_on=(Exception,), max_attempts=3, initial_delay=0.001)
    rows = evaluate(
        SAMPLES[:10],
        [Faithfulness(llm=judge(judged, "judge-a", retry=retry))],
        max_concurrency=2,
    )
    assert rows.stopped is None
    assert all(row.results["faithfulness"].score is not None for row in rows)


# --------------------------------------------------------------------------- the CLI


def cli_run(server: LocalOpenAIServer, tmp_path: Any, model: str, count: int, *extra: str) -> Any:
    import json
    import os
    import subprocess
    import sys

    data = tmp_path / "qa.jsonl"
    rows = [
        {
            "id": f"q{i}",
            "question": row["user_input"],
            "answer": row["response"],
            "ground_truth": row["reference"],
            "contexts": row["retrieved_contexts"],
        }
        for i, row in enumerate(sample(index) for index in range(count))
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    command = [
        sys.executable,
        "-m",
        "langchain_answer_metrics.cli",
        "evaluate",
        str(data),
        "--metric",
        "faithfulness,factual_correctness,aspect_critic",
        "--criterion",
        "Is it concise?",
        "--base-url",
        server.base_url,
        "--model",
        model,
        "--max-concurrency",
        "4",
        *extra,
    ]
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.slow  # the command in a process
def test_the_cli_refuses_a_judge_that_cannot_answer_before_a_large_run(
    judged: LocalOpenAIServer, tmp_path: Any
) -> None:
    judged.responder = prose_for("judge-prose")
    done = cli_run(judged, tmp_path, "judge-prose", 30)
    assert done.returncode == 2, done.stderr
    assert judged.chat_requests == 1  # one check request, no sample
    assert "judge-prose: cannot produce the structured output" in done.stderr
    assert "it replied 'I think the answer is mostly right" in done.stderr
    assert "use a model with tool calling" in done.stderr
    assert "--no-preflight" in done.stderr


@pytest.mark.slow  # the command in a process
def test_without_preflight_the_broken_judge_stops_the_run_with_one_line_errors(
    judged: LocalOpenAIServer, tmp_path: Any
) -> None:
    judged.responder = prose_for("judge-prose")
    done = cli_run(judged, tmp_path, "judge-prose", 30, "--no-preflight")
    assert done.returncode == 5, done.stderr  # stopped early
    assert "stopped early: judge-prose is broken" in done.stderr
    sent = judged.chat_requests  # main: 270 requests for these 30 samples, 3 metrics
    assert sent <= 3 * 3 * (EXCLUDE_AFTER + 4), sent
    assert f"spend (this run): {sent} requests" in done.stderr
    output = done.stdout + done.stderr
    assert "troubleshooting" not in output.lower() and "Call the ClaimList tool" not in output


@pytest.mark.slow  # the command in a process
def test_a_small_run_or_a_healthy_judge_passes_without_a_check_failing(
    judged: LocalOpenAIServer, tmp_path: Any
) -> None:
    done = cli_run(judged, tmp_path, "judge-a", 21)
    assert done.returncode == 0, done.stderr
    judged.reset()
    judged.responder = prose_for("judge-prose")
    small = cli_run(judged, tmp_path, "judge-prose", 20)  # 20 samples: no check
    assert small.returncode == 5 and "cannot judge" not in small.stderr
