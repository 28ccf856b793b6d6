"""Writing a tool-call metric's results builds none of its alignment's models: the CLI's
``--out`` records and report, the library's ``checkpoint=`` and DataFrame, LangSmith's
feedback. Each is written from the compact alignment (tests/test_call_alignment.py pins
that writing to the models' own); the models are built only when the alignment is read.

Counted where the models are built (``_build`` of the two sequences), through the public
paths; the same count found a build per written result when a dump built them.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from agent_forms import FORMS, expected
from support import answer_metrics

from langchain_answer_metrics import ToolCallF1, TrajectoryMatch, evaluate_dataset
from langchain_answer_metrics.checkpoints import read_lines
from langchain_answer_metrics.cli.records import read_records
from langchain_answer_metrics.metrics.call_alignment import CallAlignments, ExtraCalls

SEARCH = ("search", {"q": "paris"})
WEATHER = ("get_weather", {"city": "Paris"})
LYON = ("get_weather", {"city": "Lyon"})


def rows() -> list[dict[str, Any]]:
    """Agents right, out of order with an extra call, and one call short."""
    return [
        {"messages": FORMS["openai"]([[SEARCH], [WEATHER]]), "expected": [SEARCH, WEATHER]},
        {"messages": FORMS["openai"]([[WEATHER], [LYON, SEARCH]]), "expected": [SEARCH, WEATHER]},
        {"messages": FORMS["openai"]([[WEATHER]]), "expected": [SEARCH, WEATHER, LYON]},
    ]


def samples() -> list[dict[str, Any]]:
    return [
        {"messages": row["messages"], "reference_tool_calls": expected(*row["expected"])}
        for row in rows()
    ]


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times the alignment's models (or the extra calls') are built."""
    counted: Counter[str] = Counter()
    for sequence in (CallAlignments, ExtraCalls):
        build = sequence._build

        def counting(self: Any, build: Any = build, name: str = sequence.__name__) -> Any:
            counted[name] += 1
            return build(self)

        monkeypatch.setattr(sequence, "_build", counting)
    return counted


def test_the_count_sees_a_build(builds: Counter[str]) -> None:
    """The count is not blind: reading the alignment builds its models, once."""
    details = TrajectoryMatch(mode="strict").invoke(samples()[1]).details
    assert not builds
    assert details.alignment[0].expected.name == "search" and details.alignment[1].matched
    assert [call.render() for call in details.extra] == ["get_weather(city='Lyon')"]
    assert builds == {"CallAlignments": 1, "ExtraCalls": 1}


def test_the_cli_writes_records_and_the_report_without_the_models(
    tmp_path: Path, builds: Counter[str]
) -> None:
    data = tmp_path / "agents.jsonl"
    lines = [json.dumps({"id": f"row{index}", **sample}) for index, sample in enumerate(samples())]
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, report = tmp_path / "out.jsonl", tmp_path / "report.html"
    metrics = ["--metric", "trajectory_match,tool_call_f1"]
    done = answer_metrics("evaluate", data, *metrics, "--out", out, "--report", report, "--quiet")
    assert done.returncode == 0, done.stderr
    assert not builds, builds
    records, _ = read_records(out)
    view = records["row1"].metrics["trajectory_match"].trajectory
    assert view is not None
    assert [(cell.call, cell.status, cell.partner) for cell in view.made] == [
        ("get_weather(city='Paris')", "matched", 2),
        ("get_weather(city='Lyon')", "unmatched", None),
        ("search(q='paris')", "out_of_order", 1),  # strict: after the divergence
    ]
    assert records["row2"].metrics["tool_call_f1"].score == pytest.approx(0.5)
    assert "get_weather(city=&#x27;Lyon&#x27;)" in report.read_text(encoding="utf-8")


def test_a_checkpoint_a_dataframe_and_feedback_without_the_models(
    tmp_path: Path, builds: Counter[str]
) -> None:
    pytest.importorskip("pandas")
    from langsmith.schemas import Example, Run

    metrics = [TrajectoryMatch(mode="strict"), ToolCallF1(tool_args="superset")]
    checkpoint = tmp_path / "run.jsonl"
    results = evaluate_dataset(samples(), metrics=metrics, checkpoint=checkpoint)
    table = results.to_pandas()
    assert not builds, builds
    assert list(table["trajectory_match_score"]) == [1.0, 0.0, 0.0]
    kept = json.loads(table["trajectory_match_result"][1])["details"]
    assert [pair["in_order"] for pair in kept["alignment"]] == [False, True]
    values, unreadable = read_lines(checkpoint)
    lines = [line for line in values if "metrics" in line]
    assert unreadable == 0 and len(lines) == 3
    saved = lines[1]["metrics"]["trajectory_match"]
    assert saved["result"]["details"] == kept and saved["trajectory"]["made"][1]["status"] == (
        "unmatched"
    )

    sample = samples()[2]
    run = Run(
        id=uuid.uuid4(),
        name="agent",
        run_type="chain",
        start_time=datetime(2026, 11, 28, tzinfo=timezone.utc),
        inputs={},
        outputs={"messages": sample["messages"]},
        trace_id=uuid.uuid4(),
    )
    example = Example(
        id=uuid.uuid4(), inputs={}, outputs={"reference_tool_calls": sample["reference_tool_calls"]}
    )
    feedback = ToolCallF1().as_evaluator().evaluate_run(run, example)
    assert not builds, builds
    assert feedback.score == pytest.approx(0.5)
    alignment = feedback.extra["details"]["alignment"]
    assert [(pair["expected"]["name"], pair["matched"] is None) for pair in alignment] == [
        ("search", True),
        ("get_weather", False),
        ("get_weather", True),
    ]
