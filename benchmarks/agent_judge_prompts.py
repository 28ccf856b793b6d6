"""How large the judged agent metrics' requests get as a trajectory grows.

    python benchmarks/agent_judge_prompts.py [--result-chars N] [--json PATH]

Builds trajectories of 2 to 2,000 tool calls (each call's result ``--result-chars``
characters long, 800 by default), scores each with AgentGoalAccuracy and TrajectoryJudge
on the local OpenAI-compatible server (the toy judge, in process, through ChatOpenAI),
and reads the one request each sends: the characters of the whole trajectory, of the
request's messages (the rules, the few-shot examples and the rendered trajectory), and
their ratio, with what the details say was cut. It also times the rendering alone (CPU,
per trajectory), as a ratio to rendering the 2-call one, so that no absolute time is
compared across machines.

The point: with the default budget (``tool_result_chars`` 1,000, ``max_trajectory_chars``
24,000) a request stays under about 33,000 characters whatever the trajectory's length.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from langchain_openai import ChatOpenAI

from langchain_answer_metrics import AgentGoalAccuracy, AgentSample, TrajectoryJudge
from langchain_answer_metrics.judging.trajectory_text import render_trajectory
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

CALLS = (2, 20, 200, 2000)


def trajectory(calls: int, result_chars: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Find the cheapest flight."}]
    for number in range(calls):
        call = {"name": "search_flights", "args": {"page": number}, "id": f"c{number}"}
        messages.append({"role": "assistant", "tool_calls": [call]})
        messages.append(
            {"role": "tool", "tool_call_id": f"c{number}", "content": "y" * result_chars}
        )
    messages.append({"role": "assistant", "content": "The cheapest flight is AF 12 at 90 EUR."})
    return messages


def whole_chars(messages: list[dict[str, Any]]) -> int:
    return sum(len(json.dumps(message, ensure_ascii=False)) for message in messages)


def render_cpu(sample: AgentSample, rounds: int = 5) -> float:
    started = time.process_time()
    for _ in range(rounds):
        render_trajectory(sample.messages)
    return (time.process_time() - started) / rounds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--result-chars", type=int, default=800)
    parser.add_argument("--json", help="also write the figures to this file")
    options = parser.parse_args()
    rows = []
    with LocalOpenAIServer(log_bodies=True) as server:
        judge = ChatOpenAI(
            model="judge-a", base_url=server.base_url, api_key="sk-test", use_responses_api=False
        )
        metrics = [AgentGoalAccuracy(llm=judge), TrajectoryJudge(llm=judge)]
        base_cpu = None
        for calls in CALLS:
            messages = trajectory(calls, options.result_chars)
            sample = AgentSample(messages=messages)
            cpu = render_cpu(sample)
            base_cpu = base_cpu or cpu
            for metric in metrics:
                server.reset()
                result = metric.invoke(sample)
                (request,) = server.requests
                sent = sum(len(m["content"] or "") for m in request.body["messages"])
                view = result.details.trajectory
                rows.append(
                    {
                        "metric": metric.key,
                        "calls": calls,
                        "trajectory_chars": whole_chars(messages),
                        "request_chars": sent,
                        "shown_chars": view.chars,
                        "cut": len(view.cut),
                        "left_out": list(view.left_out) if view.left_out else None,
                        "render_cpu_ratio": round(cpu / base_cpu, 1),
                    }
                )
    header = (
        f"{'metric':20} {'calls':>5} {'whole':>10} {'request':>8} {'ratio':>7} {'cut':>5} left out"
    )
    print(header)
    for row in rows:
        ratio = row["request_chars"] / row["trajectory_chars"]
        print(
            f"{row['metric']:20} {row['calls']:>5} {row['trajectory_chars']:>10,} "
            f"{row['request_chars']:>8,} {ratio:>7.3f} {row['cut']:>5} {row['left_out']}"
        )
    print("render CPU vs 2 calls:", {row["calls"]: row["render_cpu_ratio"] for row in rows})
    if options.json:
        with open(options.json, "w", encoding="utf-8") as file:
            json.dump(rows, file, indent=2)


if __name__ == "__main__":
    main()
