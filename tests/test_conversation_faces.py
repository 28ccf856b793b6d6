"""The conversation metrics everywhere the answer metrics go (issue 29): the command line
on a JSONL of threads (scores, --out, resume, the exact estimate, the report), the runner
on dicts and DataFrames, and a LangSmith experiment on a chat target."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest
from support import judge_for
from test_cli import clean_env, cli, out_lines, write_jsonl

from langchain_answer_metrics import (
    ConversationCompleteness,
    KnowledgeRetention,
    evaluate_dataset,
)
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

LAPSE = [
    {"role": "system", "content": "You are a cooking assistant."},
    {"role": "user", "content": "Hi, I'm Ann. I'm allergic to nuts."},
    {"role": "assistant", "content": "Hello Ann, noted."},
    {"role": "user", "content": "A dessert idea?"},
    {"role": "assistant", "content": "A chocolate cake. Do you have any allergies?"},
]
KEPT = [
    {"role": "user", "content": "Give me a pasta recipe."},
    {"role": "assistant", "content": "Boil pasta, add tomato sauce and basil."},
    {"role": "user", "content": "And a dessert?"},
    {"role": "assistant", "content": "A lemon sorbet."},
]
ROWS = [
    {"id": "lapse", "messages": LAPSE, "goal": "A nut-free dessert"},
    {"id": "kept", "messages": KEPT, "turn_contexts": [["Pasta: boil, add sauce."], None]},
]


def test_the_cli_scores_a_file_of_threads_resumes_and_estimates_exactly(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "threads.jsonl", ROWS)
    out, report = tmp_path / "scores.jsonl", tmp_path / "report.html"
    args = [
        "evaluate",
        data,
        "--metric",
        "knowledge_retention,conversation_completeness",
        "--base-url",
        server.base_url,
        "--model",
        "gpt-4o-mini",
    ]
    estimate = cli(*args, "--estimate", "--json", tmp_path / "estimate.json")
    assert estimate.returncode == 0, estimate.stderr
    planned = json.loads((tmp_path / "estimate.json").read_text())["total"]["requests"]
    server.reset()
    result = cli(*args, "--out", out, "--report", report, "--quiet")
    assert result.returncode == 0, result.stderr
    assert planned == server.chat_requests == 4  # one per thread and metric
    records = {record["id"]: record for record in out_lines(out)}
    retention = records["lapse"]["metrics"]["knowledge_retention"]
    assert retention["score"] == pytest.approx(0.0)
    assert "turn 2" in retention["reason"]
    assert records["kept"]["metrics"]["knowledge_retention"]["score"] == pytest.approx(1.0)
    html = report.read_text(encoding="utf-8")
    assert "knowledge_retention" in html and "allergies" in html
    # A rerun resumes: nothing is asked again.
    server.reset()
    again = cli(*args, "--out", out, "--quiet")
    assert again.returncode == 0, again.stderr
    assert server.chat_requests == 0


def test_the_cli_applies_a_metric_per_turn(server: LocalOpenAIServer, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "threads.jsonl", ROWS[1:])
    out = tmp_path / "scores.jsonl"
    result = cli(
        "evaluate",
        data,
        "--metric",
        "per_turn",
        "--turn-metric",
        "response_relevancy",
        "--base-url",
        server.base_url,
        "--model",
        "gpt-4o-mini",
        "--out",
        out,
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    record = out_lines(out)[0]["metrics"]["response_relevancy_per_turn"]
    assert record["score"] is not None
    assert server.chat_requests == 2  # both turns, one request each
    missing = cli(
        "evaluate",
        data,
        "--metric",
        "per_turn",
        "--base-url",
        server.base_url,
        "--model",
        "gpt-4o-mini",
        env=clean_env(),
    )
    assert missing.returncode == 2 and "--turn-metric" in missing.stderr


def test_the_runner_reads_threads_from_dicts_and_dataframes(server: LocalOpenAIServer) -> None:
    pandas = pytest.importorskip("pandas")
    metric = KnowledgeRetention(llm=judge_for(server))
    from_dicts = [
        row.results["knowledge_retention"].score
        for row in evaluate_dataset(
            [{key: row[key] for key in row if key != "id"} for row in ROWS], [metric]
        )
    ]
    # A table read from CSV holds the messages as JSON text: read the same.
    frame = pandas.DataFrame(
        [{"messages": json.dumps(row["messages"]), "goal": row.get("goal")} for row in ROWS]
    )
    from_frame = evaluate_dataset(frame, [metric]).to_pandas()["knowledge_retention_score"]
    assert from_dicts == pytest.approx([0.0, 1.0])
    assert list(from_frame) == pytest.approx(from_dicts)


def test_a_langsmith_experiment_scores_a_chat_target(
    server: LocalOpenAIServer, network_attempts: list[Any]
) -> None:
    from langsmith import Client, evaluate
    from langsmith.schemas import Example

    client = Client(
        api_key="offline",
        api_url="http://127.0.0.1:9",
        auto_batch_tracing=False,
        tracing_sampling_rate=0.0,
    )

    def chat_app(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"messages": LAPSE if inputs["case"] == "lapse" else KEPT}

    data = [
        Example(id=uuid4(), inputs={"case": "lapse", "goal": "A nut-free dessert"}, outputs={}),
        Example(id=uuid4(), inputs={"case": "kept", "goal": "Dinner and dessert"}, outputs={}),
    ]
    judge = judge_for(server)
    evaluators = [
        KnowledgeRetention(llm=judge).as_evaluator(),
        ConversationCompleteness(llm=judge).as_evaluator(),
    ]
    results = evaluate(
        chat_app, data=data, evaluators=evaluators, client=client, upload_results=False
    )
    scores: dict[str, dict[str, float | None]] = {}
    for row in results:
        case = row["example"].inputs["case"]
        for feedback in row["evaluation_results"]["results"]:
            scores.setdefault(case, {})[feedback.key] = feedback.score
    assert scores["lapse"]["knowledge_retention"] == pytest.approx(0.0)
    assert scores["kept"]["knowledge_retention"] == pytest.approx(1.0)
    assert scores["lapse"]["conversation_completeness"] is not None
    assert network_attempts == []


def test_calibrate_sets_a_thread_metric_against_labels(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    labelled = [
        {**row, "id": f"{row['id']}-{copy}", "label": label}
        for copy in range(3)
        for row, label in zip(ROWS, (0.0, 1.0))
    ]
    data = write_jsonl(tmp_path / "labelled.jsonl", labelled)
    result = cli(
        "calibrate",
        data,
        "--metric",
        "knowledge_retention",
        "--label-col",
        "label",
        "--base-url",
        server.base_url,
        "--model",
        "gpt-4o-mini",
    )
    assert result.returncode == 0, result.stderr
    table = result.stdout
    assert "knowledge_retention" in table and "6 labelled samples" in result.stderr
    # The toy judge finds the lapse and the kept thread as labelled: no disagreement.
    assert "worst disagreements" not in table
