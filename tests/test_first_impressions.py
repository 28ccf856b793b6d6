"""Small things a new user meets first (issue 30, section 6)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from langchain_answer_metrics.cli.command import main
from langchain_answer_metrics.metrics.aspect_critic import majority
from langchain_answer_metrics.metrics.judge_outputs import Categories, PassFail
from langchain_answer_metrics.metrics.registry import METRICS
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

DOCS = Path(__file__).resolve().parent.parent / "docs"


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


def test_the_cli_pages_metric_table_is_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    sys.path.insert(0, str(DOCS / "hooks"))
    try:
        from cli_reference import METRICS_MARKER, metric_table, on_page_markdown
    finally:
        sys.path.remove(str(DOCS / "hooks"))
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    assert METRICS_MARKER in page and "| `--metric` |" not in page  # no hand-kept table
    table = metric_table()
    for key, entry in METRICS.items():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{key}` |"))
        for field in entry.required_fields:
            assert f"`{field}`" in row
    assert "`--criterion`" in table and "judge + embeddings" in table
    # A metric of one's own appears as soon as it is registered.
    monkeypatch.setitem(METRICS, "politeness", replace(METRICS["faithfulness"]))
    assert "| `politeness` |" in on_page_markdown(page, None)
