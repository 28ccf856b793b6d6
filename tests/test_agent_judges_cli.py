"""The judged agent metrics through the faces: ``answer-metrics evaluate`` on a JSONL of
OpenAI-form ``messages`` with ``reference_tool_calls`` (scores, reasons naming the step,
the report, ``--estimate``'s exact request counts, resume by signature, the settings'
flags), the runner on plain rows, and a LangSmith ``evaluate`` on an agent target,
offline. The judge is the local server's toy judge over HTTP.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from langchain_openai import ChatOpenAI
from support import answer_metrics

from langchain_answer_metrics import (
    AgentGoalAccuracy,
    TrajectoryJudge,
    calibrate,
    evaluate_dataset,
    evaluators,
)
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer


def clean_env() -> dict[str, str]:
    """The test's environment without keys or tracing, so nothing can reach the network."""
    prefixes = ("OPENAI_", "LANGSMITH_", "LANGCHAIN_", "ANSWER_METRICS_")
    return {key: value for key, value in os.environ.items() if not key.startswith(prefixes)}


METRICS = "trajectory_match,tool_call_f1,agent_goal_accuracy,trajectory_judge"


def openai_run(city: str, answer: str, *, repeat: bool = False) -> list[dict[str, Any]]:
    """An agent's messages in OpenAI form: one weather call (two with ``repeat``)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": f"Weather in {city}?"}]
    for number in range(2 if repeat else 1):
        call_id = f"call_{number}"
        arguments = json.dumps({"city": city})
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": arguments},
                    }
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call_id, "content": "sunny, 24 C"})
    messages.append({"role": "assistant", "content": answer})
    return messages


ROWS = [
    {
        "id": "good",
        "messages": openai_run("Paris", "It is sunny in Paris."),
        "reference_tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}],
        "human": True,
    },
    {
        "id": "repeats",
        "messages": openai_run("Lyon", "It is sunny in Lyon.", repeat=True),
        "reference_tool_calls": [{"name": "get_weather", "args": {"city": "Lyon"}}],
        "human": False,
    },
    {
        "id": "gives-up",
        "messages": openai_run("Nice", "Sorry, I cannot tell."),
        "reference_tool_calls": [{"name": "get_weather", "args": {"city": "Nice"}}],
        "human": False,
    },
]
EXPECTED = {
    "good": {
        "trajectory_match": 1.0,
        "tool_call_f1": 1.0,
        "agent_goal_accuracy": 1.0,
        "trajectory_judge": 1.0,
    },
    "repeats": {
        "trajectory_match": 0.0,
        "tool_call_f1": pytest.approx(2 / 3),
        "agent_goal_accuracy": 1.0,
        "trajectory_judge": 0.0,
    },
    "gives-up": {
        "trajectory_match": 1.0,
        "tool_call_f1": 1.0,
        "agent_goal_accuracy": 0.0,
        "trajectory_judge": 1.0,
    },
}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "agents.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path


def scores_in(out: Path) -> dict[str, dict[str, Any]]:
    latest: dict[str, dict[str, Any]] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        latest[record["id"]] = {
            key: value.get("score") for key, value in record.get("metrics", {}).items()
        }
    return latest


def test_the_command_line_scores_agent_rows(
    data: Path, tmp_path: Path, server: LocalOpenAIServer
) -> None:
    out, report = tmp_path / "out.jsonl", tmp_path / "report.html"
    base = ["--base-url", server.base_url, "--model", "judge-a", "--out", out, "--quiet"]
    done = answer_metrics(
        "evaluate", data, "--metric", METRICS, *base, "--report", report, env=clean_env()
    )
    assert done.returncode == 0, done.stderr
    assert scores_in(out) == EXPECTED
    assert server.chat_requests == 6  # the two judged metrics, one request per row each
    html = report.read_text(encoding="utf-8")
    assert "Step 4 repeats the call of step 2" in html

    # Resume: nothing changed, nothing is asked again; a setting that changes the judged
    # metrics' prompts re-scores them only.
    server.reset()
    again = answer_metrics("evaluate", data, "--metric", METRICS, *base, env=clean_env())
    assert again.returncode == 0, again.stderr and server.chat_requests == 0
    server.reset()
    cut = answer_metrics(
        "evaluate", data, "--metric", METRICS, *base, "--tool-result-chars", "100", env=clean_env()
    )
    assert cut.returncode == 0, cut.stderr
    assert server.chat_requests == 6


def test_the_estimate_counts_requests_exactly(
    data: Path, tmp_path: Path, server: LocalOpenAIServer
) -> None:
    plan = tmp_path / "estimate.json"
    base = ["--base-url", server.base_url, "--model", "judge-a", "--estimate", "--json", plan]
    done = answer_metrics("evaluate", data, "--metric", METRICS, *base, env=clean_env())
    assert done.returncode == 0, done.stderr
    assert json.loads(plan.read_text())["total"]["requests"] == 6
    voted = answer_metrics(
        "evaluate",
        data,
        "--metric",
        "agent_goal_accuracy",
        *base,
        "--strictness",
        "3",
        env=clean_env(),
    )
    assert voted.returncode == 0, voted.stderr
    assert json.loads(plan.read_text())["total"]["requests"] == 3  # n=3: one request per row
    assert server.requests == []


def test_the_runner_and_calibrate_read_plain_rows(server: LocalOpenAIServer) -> None:
    judge = ChatOpenAI(
        model="judge-a", base_url=server.base_url, api_key="sk-test", use_responses_api=False
    )
    metrics = [AgentGoalAccuracy(llm=judge), TrajectoryJudge(llm=judge)]
    rows = [{key: row[key] for key in ("messages", "reference_tool_calls")} for row in ROWS]
    scored = evaluate_dataset(rows, metrics)
    assert [{key: outcome.score for key, outcome in row.results.items()} for row in scored] == [
        {key: EXPECTED[row["id"]][key] for key in ("agent_goal_accuracy", "trajectory_judge")}
        for row in ROWS
    ]
    report = calibrate(metrics, ROWS, label_field="human")
    goal = report.metrics["agent_goal_accuracy"].aggregate
    assert goal.n == 3 and goal.confusion.tp == 1 and goal.confusion.fp == 1


@pytest.mark.usefixtures("langsmith_offline")
def test_a_langsmith_experiment_on_an_agent_target(server: LocalOpenAIServer) -> None:
    from langsmith import Client, evaluate
    from langsmith.schemas import Example

    client = Client(
        api_key="offline",
        api_url="http://127.0.0.1:9",
        auto_batch_tracing=False,
        tracing_sampling_rate=0.0,
    )
    judge = ChatOpenAI(
        model="judge-a", base_url=server.base_url, api_key="sk-test", use_responses_api=False
    )
    by_question = {row["messages"][0]["content"]: row for row in ROWS}

    def agent(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"messages": by_question[inputs["question"]]["messages"]}

    data = [
        Example(
            id=uuid4(),
            inputs={"question": question},
            outputs={"reference_tool_calls": row["reference_tool_calls"]},
        )
        for question, row in by_question.items()
    ]
    evs = evaluators([AgentGoalAccuracy(llm=judge), TrajectoryJudge(llm=judge)])
    results = evaluate(
        agent,
        data=data,
        evaluators=evs,
        client=client,
        upload_results=False,
        summary_evaluators=evs.summary_evaluators,
    )
    got = {}
    for row in results:
        question = row["example"].inputs["question"]
        for feedback in row["evaluation_results"]["results"]:
            got.setdefault(by_question[question]["id"], {})[feedback.key] = feedback.score
    assert got == {
        name: {key: EXPECTED[name][key] for key in ("agent_goal_accuracy", "trajectory_judge")}
        for name in EXPECTED
    }
