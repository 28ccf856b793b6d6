"""AgentGoalAccuracy and TrajectoryJudge where the other voting judges go: align (examples
made from labelled agent rows, saved and loaded), the registry's settings; the judge is
the local server's toy judge over HTTP.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from langchain_answer_metrics import AgentGoalAccuracy, TrajectoryJudge
from langchain_answer_metrics.analysis.aligned_metric import load_aligned
from langchain_answer_metrics.analysis.alignment import align
from langchain_answer_metrics.checkpoints import metric_signature
from langchain_answer_metrics.judging.prompt_set import EXAMPLE_INPUT
from langchain_answer_metrics.metrics.registry import METRICS, MetricModels
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.prompt_reading import parse_sections


def local_judge(server: LocalOpenAIServer, model: str = "judge-a") -> ChatOpenAI:
    return ChatOpenAI(
        model=model, base_url=server.base_url, api_key="sk-test", use_responses_api=False
    )


def run(city: str, answer: str, result: str = "confirmed") -> list[dict[str, Any]]:
    call = {"name": "book_table", "args": {"city": city}, "id": "c1"}
    return [
        {"role": "user", "content": f"Book a table in {city} tonight."},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": result},
        {"role": "assistant", "content": answer},
    ]


def labelled() -> list[dict[str, Any]]:
    """Eight runs; in four the tool failed yet the agent says it booked: the humans FAIL
    them (the toy judge, which reads only the final answer, passes them)."""
    rows = []
    for index, city in enumerate(("Paris", "Lyon", "Nice", "Lille")):
        rows.append(
            {"id": f"ok-{city}", "messages": run(city, f"Booked in {city}."), "human": True}
        )
        rows.append(
            {
                "id": f"lie-{city}",
                "messages": run(city, f"Booked in {city}.", "error: full"),
                "human": False,
                "why": f"Step 3 says the restaurant in {city} is full.",
            }
        )
        del index
    return rows


@pytest.mark.parametrize("output", ["pass_fail", "scale"])
def test_align_makes_examples_from_labelled_agent_rows(
    server: LocalOpenAIServer, tmp_path: Path, output: str
) -> None:
    metric: Any = (
        AgentGoalAccuracy(llm=local_judge(server))
        if output == "pass_fail"
        else TrajectoryJudge(llm=local_judge(server), output="scale")
    )
    result = align(metric, labelled(), folds=4, explanation_field="why", examples_per_step=2)
    step = metric.prompt_steps[0]
    chosen = result.fit.examples[step]
    assert chosen, result.fit.examples
    for example in chosen:
        shown = example["input"]
        assert shown["trajectory"].startswith("[1] user: Book a table in ")
        assert "[3] tool book_table (for step 2) returned: error: full" in shown["trajectory"]
        if output == "pass_fail":
            assert example["output"] == {
                "reason": f"Step 3 says the restaurant in {shown['goal'].split()[4]} is full.",
                "verdict": "FAIL",
            }
        else:
            assert example["output"]["verdict"] == 1 and "levels" in shown
    # Saved and loaded, the aligned metric shows the examples before the data.
    path = result.save(tmp_path / "aligned.yaml")
    loaded = load_aligned(path, llm=local_judge(server))
    assert type(loaded) is type(metric)
    assert metric_signature(loaded) == metric_signature(result.metric)
    server.reset()
    loaded.invoke({"messages": run("Paris", "Booked in Paris.")})
    sent = server.requests[0].body["messages"]
    examples = [m for m in sent if m["role"] == "user" and m["content"].startswith(EXAMPLE_INPUT)]
    # The default examples, then those made from the labels.
    assert len(examples) == len(loaded.examples[step]) >= len(chosen)
    assert "error: full" in parse_sections(examples[-1]["content"])["trajectory"]


def test_the_registry_builds_them_with_their_settings(server: LocalOpenAIServer) -> None:
    models = MetricModels(judges=[local_judge(server)])
    goal = METRICS["agent_goal_accuracy"].build(
        models, {"strictness": 3, "tool_result_chars": 200, "max_trajectory_chars": 5000}
    )
    assert isinstance(goal, AgentGoalAccuracy)
    assert (goal.strictness, goal.tool_result_chars, goal.max_trajectory_chars) == (3, 200, 5000)
    path = METRICS["trajectory_judge"].build(models, {"trajectory_output": "scale"})
    assert isinstance(path, TrajectoryJudge) and path.output.kind == "scale"
    assert path.prompt_steps == ("judge_trajectory_scale",)
    settings = {item.name: item for item in METRICS["trajectory_judge"].settings}
    with pytest.raises(ValueError, match="is not pass_fail or scale"):
        settings["trajectory_output"].parse("categories")
    with pytest.raises(ValueError, match="must be at least 50"):
        settings["tool_result_chars"].parse("10")
