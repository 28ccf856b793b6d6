"""Small things a new user meets first (issue 30, section 6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langchain_answer_metrics.cli.command import main
from langchain_answer_metrics.metrics.aspect_critic import majority
from langchain_answer_metrics.metrics.judge_outputs import Categories, PassFail
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer


@pytest.mark.parametrize("kind", [PassFail(), Categories(scores={"good": 1.0, "bad": 0.0})])
def test_the_majority_of_no_votes_is_a_clear_error(kind: PassFail | Categories) -> None:
    with pytest.raises(ValueError, match="no votes to take the majority of"):
        kind.decide([])


def test_aspect_critics_majority_of_no_votes_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no votes"):
        majority([])
    assert majority(["PASS", "PASS", "FAIL"]) == "PASS"


def test_quiet_prints_no_spend_block(
    server: LocalOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "qa.jsonl"
    data.write_text(
        json.dumps({"user_input": "Where?", "response": "Paris.", "reference": "Paris."}) + "\n"
    )
    command = ["evaluate", str(data), "--metric", "factual_correctness"]
    command += ["--base-url", server.base_url, "--model", "judge"]
    assert main(command) == 0
    assert "spend (this run)" in capsys.readouterr().err
    assert main([*command, "--quiet"]) == 0
    quiet = capsys.readouterr()
    assert "spend (this run)" not in quiet.err and "factual_correctness" in quiet.out
