"""The README's "Cost and budgets" section runs as written: its Python block with a
scripted judge labelled ``gpt-4o-mini`` (priced by the built-in table), its command lines
against the local server with a models file that prices the judge."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import convert_to_openai_messages
from support import local_models, write_models_yaml
from test_cli import SAMPLES, clean_env, cli, write_jsonl

from langchain_answer_metrics.testing.heuristic_judge import respond
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.scripted import ScriptedChatModel

README = Path(__file__).resolve().parent.parent / "README.md"
KEY_ENV = "ANSWER_METRICS_TEST_README_COSTS_KEY"


def section() -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index("## Cost and budgets\n")
    return text[start : text.index("\n## ", start + 1)]


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", section(), re.S)


def test_the_python_block_runs_as_written() -> None:
    def heuristic(schema: str, messages: Any) -> Any:
        return respond(schema, convert_to_openai_messages(messages))

    judge = ScriptedChatModel(responder=heuristic, model="gpt-4o-mini")
    namespace: dict[str, Any] = {"__name__": "readme", "judge": judge}
    (code,) = blocks("python")
    exec(compile(code, str(README), "exec"), namespace)

    plan, rows, spend = namespace["plan"], namespace["rows"], namespace["spend"]
    assert plan.models["gpt-4o-mini"].requests == len(judge.calls) > 0  # exact
    assert rows.stopped is None and not any(row.not_run or row.errors for row in rows)
    assert spend.total.requests == len(judge.calls) and spend.total.cached == 0
    assert spend.total.cost is not None and spend.total.cost > 0  # built-in price
    assert plan.total.cost_low is not None


def test_the_command_lines_run_as_written(
    tmp_path: Path, server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the commands name qa.jsonl, models.yaml ... here
    write_jsonl(tmp_path / "qa.jsonl", SAMPLES)
    config = local_models(server, KEY_ENV)
    config["chat_models"]["list"][0]["price"] = {
        "input_per_million": 0.15, "output_per_million": 0.6,
    }  # fmt: skip
    write_models_yaml(tmp_path, config)
    (bash,) = blocks("bash")
    commands = [shlex.split(line) for line in bash.replace("\\\n", " ").splitlines() if line]
    assert [command[:2] for command in commands] == [["answer-metrics", "evaluate"]] * 2
    env = clean_env(**{KEY_ENV: "sk-test-readme-costs"})

    estimated = cli(*commands[0][1:], env=env)
    assert estimated.returncode == 0, estimated.stderr
    assert server.requests == []
    plan = json.loads((tmp_path / "estimate.json").read_text("utf-8"))

    ran = cli(*commands[1][1:], "--quiet", env=env)
    assert ran.returncode == 0, ran.stderr
    assert server.chat_requests == plan["judge-a"]["requests"] > 0
    summary = json.loads((tmp_path / "summary.json").read_text("utf-8"))
    assert summary["cost"] > 0 and summary["spend"]["total"]["requests"] == server.chat_requests
    assert "spend (this run):" in ran.stderr
    assert '<h2 id="spend">Spend</h2>' in (tmp_path / "report.html").read_text("utf-8")
