"""A run's errors are printed once per distinct error (issue 30 §2): a judge whose replies
are unusable fails every sample of every metric with the same error, and the terminal
shows it once, not in the summary and again in the closing count; a judge left out of a
panel is named once, with why."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import answer_metrics, local_models, write_models_yaml
from test_cli import clean_env

from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

PROSE = "I think the answer looks fine to me overall."


def write_rows(path: Path, count: int) -> Path:
    rows = [
        {
            "id": f"q{n}",
            "user_input": "What is the capital of France?",
            "response": f"Paris is the capital of France, said answer {n}.",
            "reference": "Paris is the capital of France.",
            "retrieved_contexts": ["Paris is the capital of France."],
        }
        for n in range(count)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _evaluate_args(data: Path, server: LocalOpenAIServer) -> list[object]:
    return [
        "evaluate",
        data,
        "--metric",
        "factual_correctness,faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
    ]


def test_an_unusable_reply_is_printed_once_on_each_stream(tmp_path: Path) -> None:
    # stdout and stderr apart (stdout to a file or a pipe): each stream says it once, so
    # neither refers to what only the other shows.
    data = write_rows(tmp_path / "qa.jsonl", 5)
    with LocalOpenAIServer(responder=lambda info: PROSE) as server:
        done = answer_metrics(*_evaluate_args(data, server), env=clean_env())
    assert done.returncode == 3, done.stderr  # metric errors
    assert done.stdout.count(PROSE) == 1, done.stdout  # the reply, quoted once
    assert done.stderr.count(PROSE) == 1, done.stderr
    assert "faithfulness: 5 errors, first on q0: the same error as factual_correctness" in (
        done.stdout
    )
    assert "shown above" not in done.stderr
    # Both metrics fail every sample alike: the commonest is either's (a tie).
    assert re.search(
        r"commonest \(\d\): AllModelsFailedError: (factual_correctness|faithfulness):", done.stderr
    ), done.stderr


@pytest.mark.slow  # a process, to share one stream between stdout and stderr
def test_an_unusable_reply_is_printed_once_on_one_terminal(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "qa.jsonl", 5)
    with LocalOpenAIServer(responder=lambda info: PROSE) as server:
        done = subprocess.run(
            [sys.executable, "-m", "langchain_answer_metrics.cli"]
            + [str(arg) for arg in _evaluate_args(data, server)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,  # 2>&1: what a terminal shows
            text=True,
            env=clean_env(),
            timeout=300,
        )
    assert done.returncode == 3, done.stdout
    assert done.stdout.count(PROSE) == 1, done.stdout
    said = r"commonest \(\d\): the error shown above for (factual_correctness|faithfulness)"
    assert re.search(said, done.stdout), done.stdout


def test_a_judge_left_out_of_a_panel_is_named_once(tmp_path: Path) -> None:
    data = write_rows(tmp_path / "qa.jsonl", 6)

    def broken(info: object) -> str | None:
        return "malformed_json" if getattr(info, "model", "") == "judge-b" else None

    with LocalOpenAIServer(faults=broken) as server:
        models = local_models(server, "ANSWER_METRICS_TEST_ONCE_KEY", judges=("judge-a", "judge-b"))
        config = write_models_yaml(tmp_path, models)
        done = answer_metrics(
            "evaluate",
            data,
            "--metric",
            "factual_correctness,faithfulness",
            "--config",
            config,
            env=clean_env(ANSWER_METRICS_TEST_ONCE_KEY="sk-test"),
        )
    assert done.returncode == 0, done.stderr  # judge-a scored every sample
    assert "degraded samples: 6 of 6" in done.stderr
    named = [line for line in done.stderr.splitlines() if "judge-b left out of" in line]
    assert len(named) == 1, done.stderr
    assert named[0].startswith("  judge-b left out of 6 samples, first at ")
    assert "judge-b gave no usable" in named[0]
