"""The built-in metrics' settings given in the config file's ``metrics:`` section: the
tool-call metrics' modes on an agent dataset through the CLI, a flag given explicitly
winning over the file, every mistake named at its key path and YAML line (with a "did you
mean") before any request, and the judged agent and conversation metrics built with their
settings from the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_forms import FORMS, expected
from support import answer_metrics

from langchain_answer_metrics.cli.command import build_parser
from langchain_answer_metrics.cli.command_options import EvaluateOptions, options_of
from langchain_answer_metrics.cli.plans import build_metrics
from langchain_answer_metrics.cli.records import read_records
from langchain_answer_metrics.config import ConfigError, declared_metrics, load_config
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

SEARCH = ("search", {"q": "paris"})
WEATHER = ("get_weather", {"city": "Paris"})
SEARCH_LYON = ("search", {"q": "lyon"})


def write_agents(folder: Path) -> Path:
    """Three agents in OpenAI form, each expected to search for Paris then get its weather:
    right; the right tools with a wrong argument; the search left out."""
    rows = [
        ("right", [[SEARCH], [WEATHER]]),
        ("wrong_arg", [[SEARCH_LYON], [WEATHER]]),
        ("short", [[WEATHER]]),
    ]
    path = folder / "agents.jsonl"
    lines = [
        json.dumps(
            {
                "id": name,
                "messages": FORMS["openai"](steps),
                "reference_tool_calls": expected(SEARCH, WEATHER),
            }
        )
        for name, steps in rows
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


MODES = """\
metrics:
  trajectory_match:
    mode: subset          # every call made was expected
    tool_args: ignore     # names only
  tool_call_f1: {tool_args: ignore}
"""


def scores(out: Path, key: str) -> dict[str, float | None]:
    records, _ = read_records(out)
    return {name: record.metrics[key].score for name, record in records.items()}


def test_the_modes_come_from_the_config_file(tmp_path: Path) -> None:
    data, out = write_agents(tmp_path), tmp_path / "out.jsonl"
    config = write(tmp_path, "c.yaml", MODES)
    run = ["evaluate", data, "--metric", "trajectory_match,tool_call_f1", "--out", out, "--quiet"]

    default = answer_metrics(*run[:-3], "--out", tmp_path / "default.jsonl", "--quiet")
    assert default.returncode == 0, default.stderr
    assert scores(tmp_path / "default.jsonl", "trajectory_match") == {
        "right": 1.0,
        "wrong_arg": 0.0,
        "short": 0.0,
    }

    result = answer_metrics(*run, "--config", config)
    assert result.returncode == 0, result.stderr
    # subset, names only: a call with a wrong argument and a call left out both pass.
    assert scores(out, "trajectory_match") == {"right": 1.0, "wrong_arg": 1.0, "short": 1.0}
    f1 = scores(out, "tool_call_f1")
    assert f1["wrong_arg"] == 1.0 and f1["short"] == pytest.approx(2 / 3)

    # The mode is in the metric's signature: a changed file scores again, never reuses.
    write(tmp_path, "c.yaml", MODES.replace("mode: subset", "mode: superset"))
    again = answer_metrics(*run, "--config", config)
    assert again.returncode == 0 and "resuming" not in again.stderr
    assert scores(out, "trajectory_match") == {"right": 1.0, "wrong_arg": 1.0, "short": 0.0}


def test_a_flag_given_explicitly_wins_over_the_config_file(tmp_path: Path) -> None:
    data, out = write_agents(tmp_path), tmp_path / "out.jsonl"
    config = write(tmp_path, "c.yaml", MODES)
    result = answer_metrics(
        "evaluate",
        data,
        "--metric",
        "trajectory_match,tool_call_f1",
        "--config",
        config,
        "--trajectory-mode",
        "strict",
        "--tool-args",
        "exact",
        "--out",
        out,
        "--quiet",
    )
    assert result.returncode == 0, result.stderr
    # strict and exact from the flags, for both metrics (--tool-args is theirs too).
    assert scores(out, "trajectory_match") == {"right": 1.0, "wrong_arg": 0.0, "short": 0.0}
    assert scores(out, "tool_call_f1")["wrong_arg"] == 0.5


BROKEN = """\
metrics:
  trajectory_mach: {mode: unordered}
  tool_call_f1:
    tool_arg: ignore
  trajectory_judge:
    output: stars
  knowledge_retention:
    mode: strict
    window: 0
  faithfulness: {strictness: 3}
  conciseness:
    criterion: The answer is brief.
  neither: {output: pass_fail}
"""


def test_every_mistake_is_named_at_its_line_before_any_request(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    data = write_agents(tmp_path)
    models = (
        f"providers:\n  local:\n    base_url: {server.base_url}\n"
        "chat_models:\n  list:\n    - id: gpt-4o-mini\n"
    )
    config = write(tmp_path, "c.yaml", models + BROKEN)
    result = answer_metrics(
        "evaluate", data, "--metric", "trajectory_match,agent_goal_accuracy", "--config", config
    )
    assert result.returncode == 2
    error = result.stderr
    assert f"{config}: 7 problems" in error
    lines = {line.split(":")[0].strip(): line for line in error.splitlines() if "(line" in line}
    assert "did you mean trajectory_match?" in lines["metrics.trajectory_mach (line 8)"]
    assert "did you mean tool_args?" in lines["metrics.tool_call_f1.tool_arg (line 10)"]
    assert "'stars' is not pass_fail or scale" in lines["metrics.trajectory_judge.output (line 12)"]
    assert (
        "knowledge_retention has no setting 'mode'; its settings: window"
        in lines["metrics.knowledge_retention.mode (line 14)"]
    )
    assert "0 must be at least 1" in lines["metrics.knowledge_retention.window (line 15)"]
    assert "faithfulness takes no settings" in lines["metrics.faithfulness.strictness (line 16)"]
    assert (
        "a judge of your own needs a criterion: or a prompt:"
        in (lines["metrics.neither (line 19)"])
    )
    assert server.chat_requests == 0 and not server.requests


def test_no_setting_is_taken_for_a_declaration() -> None:
    """An entry of settings is told from a judge's declaration by its keys: no setting's
    name is one a declaration alone has, nor close to one (aspect_critic's criterion
    aside: a criterion of your own is a judge of your own, under a name of your own)."""
    from langchain_answer_metrics.config.judges import declares_judge
    from langchain_answer_metrics.metrics.registry import METRICS

    for entry in METRICS.values():
        for setting in entry.settings:
            for name in filter(None, (setting.name, setting.short)):
                if (entry.key, name) != ("aspect_critic", "criterion"):
                    assert not declares_judge({name: "x"}), (entry.key, name)


def test_a_judge_of_your_own_under_a_built_in_name_is_refused(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        "c.yaml",
        "metrics:\n  trajectory_match:\n    criterion: The agent is quick.\n",
    )
    result = answer_metrics(
        "evaluate", write_agents(tmp_path), "--metric", "trajectory_match", "--config", config
    )
    assert result.returncode == 2
    assert "'trajectory_match' is a built-in metric: give your judge another name" in (
        result.stderr
    )


def test_the_judged_agent_and_conversation_metrics_take_their_settings_from_the_file(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    config = write(
        tmp_path,
        "c.yaml",
        f"""\
providers:
  local:
    base_url: {server.base_url}
chat_models:
  default_options: {{temperature: 0.7}}
  list:
    - id: gpt-4o-mini
metrics:
  trajectory_judge: {{output: scale, strictness: 3, tool_result_chars: 400}}
  agent_goal_accuracy: {{max_trajectory_chars: 3000}}
  knowledge_retention: {{window: 2}}
  topic_adherence: {{topics: [cooking, recipes], conversation_window: 3}}
  per_turn: {{metric: faithfulness, window: 1}}
  trajectory_match: {{mode: unordered, tool_args_overrides: {{search: [q]}}}}
""",
    )
    names = [
        "trajectory_judge",
        "agent_goal_accuracy",
        "knowledge_retention",
        "topic_adherence",
        "per_turn",
        "trajectory_match",
    ]

    def built(*flags: str) -> dict[str, Any]:
        argv = ["evaluate", "x.jsonl", "--config", str(config), *flags]
        options = options_of(build_parser().parse_args(argv))
        assert isinstance(options, EvaluateOptions)
        plans = build_metrics(names, metrics=options.metrics, judges=options.judges)
        return {plan.metric.key: plan.metric for plan in plans}

    metrics = built()
    judge = metrics["trajectory_judge"]
    assert (judge.output.kind, judge.strictness, judge.tool_result_chars) == ("scale", 3, 400)
    assert metrics["agent_goal_accuracy"].max_trajectory_chars == 3000
    assert metrics["agent_goal_accuracy"].strictness == 1  # the default, given nowhere
    assert metrics["knowledge_retention"].window == 2
    assert metrics["topic_adherence"].topics == ["cooking", "recipes"]
    assert metrics["topic_adherence"].window == 3
    per_turn = metrics["faithfulness_per_turn"]
    assert per_turn.window == 1 and per_turn.metric.metric_key == "faithfulness"
    match = metrics["trajectory_match"]
    assert match.mode == "unordered" and match.tool_args_overrides == {"search": ["q"]}

    flagged = built("--strictness", "2", "--conversation-window", "5")
    assert flagged["trajectory_judge"].strictness == 2  # the flag wins
    assert flagged["agent_goal_accuracy"].strictness == 2
    assert flagged["knowledge_retention"].window == 5
    assert flagged["trajectory_judge"].output.kind == "scale"  # the file's, where no flag is given
    assert server.chat_requests == 0


def test_python_reads_the_same_file(tmp_path: Path, server: LocalOpenAIServer) -> None:
    config = write(
        tmp_path,
        "c.yaml",
        f"providers:\n  local:\n    base_url: {server.base_url}\n"
        "chat_models:\n  list:\n    - id: gpt-4o-mini\n" + MODES + "  brief:\n"
        "    criterion: The answer is brief.\n",
    )
    assert list(load_config(config).metrics) == ["brief"]  # the declarations alone
    assert list(declared_metrics(config)) == ["brief"]
    # A declaration with a misspelt criterion is still a declaration, reported as such.
    write(tmp_path, "c.yaml", "metrics:\n  brief:\n    critrion: Brief.\n")
    with pytest.raises(ConfigError, match=r"critrion \(line 3\): unknown key \(did you mean"):
        declared_metrics(config)
