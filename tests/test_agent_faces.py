"""The tool-call metrics everywhere the answer metrics go: the runner, DataFrames, the CLI
(JSONL, JSON, Parquet; --out, resume, --estimate, the report) and LangSmith's evaluate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_forms import FORMS, expected

from langchain_answer_metrics import (
    AgentSample,
    MetricError,
    ToolCallF1,
    TrajectoryMatch,
    evaluate_dataset,
    evaluators,
)
from langchain_answer_metrics.cli.command import main
from langchain_answer_metrics.cli.records import read_records

SEARCH = ("search", {"q": "paris"})
WEATHER = ("get_weather", {"city": "Paris"})
HOSTILE = ("search", {"q": "<script>alert(1)</script>"})


def rows() -> list[dict[str, Any]]:
    """Three agents in OpenAI form: right, a wrong argument (hostile text), one call left
    out; and a row whose messages cannot be read."""
    return [
        {
            "id": "right",
            "messages": FORMS["openai"]([[SEARCH], [WEATHER]]),
            "reference_tool_calls": expected(SEARCH, WEATHER),
        },
        {
            "id": "wrong",
            "messages": FORMS["openai"]([[HOSTILE], [WEATHER]]),
            "reference_tool_calls": expected(SEARCH, WEATHER),
        },
        {
            "id": "short",
            "messages": FORMS["openai"]([[WEATHER]]),
            "reference_tool_calls": expected(SEARCH, WEATHER),
        },
        {
            "id": "broken",
            "messages": [{"role": "assistant", "tool_calls": [{"id": "x"}]}],
            "reference_tool_calls": [],
        },
    ]


def test_the_runner_scores_each_sample_and_keeps_errors_per_sample() -> None:
    samples = [{key: value for key, value in row.items() if key != "id"} for row in rows()]
    samples[0] = AgentSample(**samples[0])
    results = evaluate_dataset(samples, metrics=[TrajectoryMatch(), ToolCallF1()])
    scores = [
        {key: getattr(outcome, "score", None) for key, outcome in row.results.items()}
        for row in results
    ]
    assert scores[:3] == [
        {"trajectory_match": 1.0, "tool_call_f1": 1.0},
        {"trajectory_match": 0.0, "tool_call_f1": 0.5},
        {"trajectory_match": 0.0, "tool_call_f1": pytest.approx(2 / 3)},
    ]
    error = results[3].results["trajectory_match"]
    assert isinstance(error, MetricError) and "messages[0].tool_calls[0]" in error.message


def test_dataframes_in_and_out() -> None:
    pandas = pytest.importorskip("pandas")
    frame = pandas.DataFrame(rows()[:3])
    results = evaluate_dataset(frame, metrics=[TrajectoryMatch(mode="superset"), ToolCallF1()])
    table = results.to_pandas()
    assert list(table["trajectory_match_score"]) == [1.0, 0.0, 0.0]
    assert list(table["tool_call_f1_score"].round(3)) == [1.0, 0.5, 0.667]


def write_dataset(folder: Path, kind: str) -> Path:
    data = rows()
    path = folder / f"agents.{kind}"
    if kind == "jsonl":
        path.write_text("\n".join(json.dumps(row) for row in data) + "\n", encoding="utf-8")
    elif kind == "json":
        path.write_text(json.dumps(data), encoding="utf-8")
    else:
        pandas = pytest.importorskip("pandas")
        pytest.importorskip("pyarrow")
        # Parquet wants one type per column: the messages as OpenAI dicts with every key.
        for row in data:
            for message in row["messages"]:
                message.setdefault("content", None)
                message.setdefault("tool_calls", None)
                message.setdefault("tool_call_id", None)
            row["reference_tool_calls"] = [
                {"name": call["name"], "args": json.dumps(call["args"])}
                for call in row["reference_tool_calls"]
            ]
        pandas.DataFrame(data[:3]).to_parquet(path)
    return path


@pytest.mark.parametrize("kind", ["jsonl", "json", "parquet"])
def test_the_cli_scores_an_agent_dataset(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_dataset(tmp_path, kind)
    out, report = tmp_path / "out.jsonl", tmp_path / "report.html"
    metrics = ["--metric", "trajectory_match,tool_call_f1"]
    code = main(
        [
            "evaluate",
            str(data),
            *metrics,
            "--out",
            str(out),
            "--report",
            str(report),
            "--allow-errors",
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    records, _ = read_records(out)
    assert records["right"].metrics["trajectory_match"].score == 1.0
    assert records["right"].user_input == "Plan a day in Paris."
    wrong = records["wrong"].metrics["trajectory_match"]
    assert wrong.score == 0.0 and wrong.trajectory is not None
    assert [cell.status for cell in wrong.trajectory.made] == ["unmatched", "matched"]
    assert records["short"].metrics["tool_call_f1"].score == pytest.approx(2 / 3)
    if kind != "parquet":
        assert (
            "messages[0].tool_calls[0]"
            in records["broken"].metrics["trajectory_match"].error.message
        )
    page = report.read_text(encoding="utf-8")
    assert "<script>alert" not in page
    assert "search(q=&#x27;&lt;script&gt;alert(1)&lt;/script&gt;&#x27;)" in page
    assert 'class="call call-unmatched"' in page and "<th>the agent's calls</th>" in page


def test_estimate_counts_no_request_and_resume_rescoring_on_a_mode_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = write_dataset(tmp_path, "jsonl"), tmp_path / "out.jsonl"
    metrics = ["--metric", "trajectory_match,tool_call_f1"]
    assert (
        main(["evaluate", str(data), *metrics, "--estimate", "--json", str(tmp_path / "e.json")])
        == 0
    )
    estimate = json.loads((tmp_path / "e.json").read_text())
    assert estimate["total"]["requests"] == 0
    run = ["evaluate", str(data), *metrics, "--out", str(out), "--allow-errors", "--quiet"]
    assert main(run) == 0
    capsys.readouterr()
    assert main(run) == 0
    assert "resuming: 3 samples already scored" in capsys.readouterr().err
    assert main([*run, "--trajectory-mode", "superset"]) == 0
    assert "resuming" not in capsys.readouterr().err  # the mode is in the signature
    records, _ = read_records(out)
    assert records["short"].metrics["trajectory_match"].score == 0.0
    assert main([*run, "--trajectory-mode", "subset"]) == 0
    records, _ = read_records(out)
    assert records["short"].metrics["trajectory_match"].score == 1.0


def test_langsmith_evaluate_on_a_langgraph_agent(network_attempts: list[Any]) -> None:
    pytest.importorskip("langgraph")
    from langgraph.checkpoint.memory import InMemorySaver
    from langsmith import Client
    from langsmith import evaluate as langsmith_evaluate
    from langsmith.schemas import Example
    from test_from_langgraph import SCRIPT, agent_graph

    graph = agent_graph(SCRIPT, checkpointer=InMemorySaver())

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        return graph.invoke(
            {"messages": [("user", inputs["question"])]},
            {"configurable": {"thread_id": inputs["question"]}},
        )

    paris = {"name": "get_weather", "args": {"city": "Paris"}}
    lyon = {"name": "get_weather", "args": {"city": "Lyon"}}
    book = {"name": "book_hotel", "args": {"city": "Paris", "nights": 2}}
    reference_messages = FORMS["openai"](
        [
            [("get_weather", {"city": "Lyon"}), ("get_weather", {"city": "Paris"})],
            [("book_hotel", {"city": "Paris", "nights": 2})],
        ]
    )
    outputs = [
        {"reference_tool_calls": [[lyon, paris], book]},
        {"reference_tool_calls": [paris, book]},
        {"reference_messages": reference_messages},
    ]
    examples = [
        Example(
            id=f"00000000-0000-0000-0000-00000000000{index}",
            inputs={"question": f"Trip {index}"},
            outputs=output,
            dataset_id="00000000-0000-0000-0000-000000000000",
        )
        for index, output in enumerate(outputs)
    ]
    evs = evaluators([TrajectoryMatch(), ToolCallF1()])
    client = Client(
        api_key="offline",
        api_url="http://127.0.0.1:9",
        auto_batch_tracing=False,
        tracing_sampling_rate=0.0,
    )
    results = langsmith_evaluate(
        target,
        data=examples,
        evaluators=evs,
        summary_evaluators=evs.summary_evaluators,
        client=client,
        upload_results=False,
    )
    scores = {}
    for row in results:
        by_key = {item.key: item.score for item in row["evaluation_results"]["results"]}
        scores[row["example"].inputs["question"]] = by_key
    assert scores == {
        "Trip 0": {"trajectory_match": 1.0, "tool_call_f1": 1.0},
        "Trip 1": {"trajectory_match": 0.0, "tool_call_f1": pytest.approx(0.8)},
        "Trip 2": {"trajectory_match": 1.0, "tool_call_f1": 1.0},
    }
    summary = {item.key: item.score for item in results._summary_results["results"]}
    assert summary["trajectory_match_mean"] == pytest.approx(2 / 3)
    assert network_attempts == []
