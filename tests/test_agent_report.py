"""The HTML report's view of the judged agent metrics (AgentGoalAccuracy, TrajectoryJudge):
the trajectory's steps with the step each judge faults marked and its reason, through
``answer-metrics evaluate --report`` against the local server's toy judge (clean and in
its realistic judge mode); and a long trajectory's outline, its gaps, a faulted step
outside it, cited steps and escaping, on the report function itself."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support import answer_metrics
from test_agent_judges_cli import ROWS, clean_env, openai_run

from langchain_answer_metrics.cli.output.trajectory_html import judged_steps_html
from langchain_answer_metrics.judging.trajectory_text import OUTLINE_STEPS, render_trajectory
from langchain_answer_metrics.metrics.judged_agents import AgentJudgeModelDetails
from langchain_answer_metrics.metrics.judged_steps import judged_steps_of, steps_named
from langchain_answer_metrics.metrics.trajectory_judge import TrajectoryJudgeDetails
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.quirks import REALISTIC

HOSTILE = "<img src=x onerror=alert(1)> sunny"


def metric_html(page: str, sample: str, metric: str) -> str:
    """The part of the report about one metric of one sample."""
    start = page.index(f"· {sample}</h3>")
    start = page.index(f'data-metric="{metric}"', start)
    end = page.find('<div class="metric"', start)
    return page[start : end if end != -1 else None]


def steps_marked(part: str, status: str) -> list[int]:
    return [int(n) for n in re.findall(rf'<li class="step step-{status}" value="(\d+)">', part)]


@pytest.mark.parametrize("model", ["judge-a", "judge-real"])
def test_the_report_marks_the_step_each_judge_faults(tmp_path: Path, model: str) -> None:
    rows = [dict(row) for row in ROWS]
    rows[1]["messages"] = [
        dict(message, content=HOSTILE) if message["role"] == "tool" else message
        for message in rows[1]["messages"]
    ]
    data = tmp_path / "agents.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    report = tmp_path / "report.html"
    with LocalOpenAIServer(quirks={"judge-real": REALISTIC}) as server:
        done = answer_metrics(
            "evaluate",
            data,
            "--metric",
            "agent_goal_accuracy,trajectory_judge",
            "--base-url",
            server.base_url,
            "--model",
            model,
            "--report",
            report,
            "--quiet",
            env=clean_env(),
        )
    assert done.returncode == 0, done.stderr
    page = report.read_text(encoding="utf-8")

    # The repeated call: the trajectory judge faults step 4 (the repeat), not step 2.
    repeats = metric_html(page, "repeats", "trajectory_judge")
    assert steps_marked(repeats, "faulted") == [4]
    assert "(6 steps; 1 step faulted)" in repeats and '<details class="steps" open>' in repeats
    faulted = repeats[repeats.index('value="4"') :]
    assert "assistant calls get_weather({&quot;city&quot;: &quot;Lyon&quot;})" in faulted
    assert f"{model} faults it: " in faulted
    assert "Step 4 repeats the call of step 2" in faulted
    # The tool results are the dataset's text: shown escaped, never as markup.
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=alert(1)&gt; sunny" in repeats

    # The agent that gave up: the goal judge FAILs, and its reason names the last step.
    gave_up = metric_html(page, "gives-up", "agent_goal_accuracy")
    assert steps_marked(gave_up, "faulted") == [4]
    assert "assistant: Sorry, I cannot tell." in gave_up
    # A passing judge's reason cites a step: marked as cited, not faulted, and folded.
    good = metric_html(page, "good", "agent_goal_accuracy")
    assert steps_marked(good, "faulted") == [] and steps_marked(good, "cited") == [4]
    assert "(4 steps; no step faulted)" in good and '<details class="steps">' in good


def test_a_long_trajectory_shows_its_outline_gaps_and_a_fault_outside_it() -> None:
    messages = openai_run("Paris", "<b>done</b>")
    for number in range(2, 30):  # 29 calls: 1 + 29 * 2 + 1 = 60 steps
        messages[-1:-1] = [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{number}",
                        "type": "function",
                        "function": {"name": "search", "arguments": json.dumps({"n": number})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{number}", "content": "x" * 500},
        ]
    from langchain_answer_metrics import AgentSample

    shown = render_trajectory(AgentSample(messages=messages).messages).view
    assert shown.steps == 60 and len(shown.outline) == OUTLINE_STEPS
    assert all(len(line.text) <= 160 for line in shown.outline)
    details = TrajectoryJudgeDetails(
        trajectory=shown,
        models={
            "judge-a": AgentJudgeModelDetails(
                verdict="FAIL",
                votes=["FAIL", "PASS", "FAIL"],
                reasons=[
                    "Step 30 searches again for nothing.",
                    "Steps 2 and 60 answer the task.",
                    "Step 30 is needless; see also step 31.",
                ],
                faulted_step=30,
                faulted_steps=[30, None, 30],
            ),
            "judge-b": AgentJudgeModelDetails(
                verdict="FAIL", votes=["FAIL"], reasons=["Step 99 is wrong."], faulted_step=99
            ),
        },
    )
    steps = judged_steps_of(details)
    assert steps is not None
    numbers = [step.number for step in steps.outline]
    assert numbers == [*range(1, 21), 30, *range(41, 61)]  # step 99 names no step
    step_30 = steps.outline[20]
    assert step_30.text == "" and [f.vote for f in step_30.faults] == [1, 3]
    page = judged_steps_html(steps)
    assert "… 9 steps (21 to 29) not shown" in page and "… 10 steps (31 to 40) not shown" in page
    assert "(not in the outline)" in page and "(60 steps; 1 step faulted)" in page
    assert steps_marked(page, "faulted") == [30] and steps_marked(page, "cited") == [2, 60]
    assert "judge-a (vote 3) faults it: " in page
    assert "&lt;b&gt;done&lt;/b&gt;" in page and "<b>done" not in page


def test_steps_named_in_a_reason() -> None:
    assert steps_named("Step 4 repeats the call of step 2.") == [4, 2]
    assert steps_named("steps 3, 5 and 7 are needless; [9] too") == [3, 5, 7]
    assert steps_named("The final answer is wrong.") == []
    assert judged_steps_of(object()) is None  # other details: no view
