"""Small things a new user meets first (issue 30, section 6)."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from langchain_answer_metrics.cli.command import main
from langchain_answer_metrics.cli.output.printing import ProgressBar
from langchain_answer_metrics.metrics.aspect_critic import majority
from langchain_answer_metrics.metrics.judge_outputs import Categories, PassFail
from langchain_answer_metrics.metrics.registry import METRICS
from langchain_answer_metrics.run.results import Progress
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


def test_quiet_prints_no_spend_block_and_lowest_lists_no_perfect_score(
    server: LocalOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "qa.jsonl"
    right = {"user_input": "Where?", "response": "Paris.", "reference": "Paris."}
    rows = [{"id": f"right-{n}", **right} for n in range(4)]
    rows.append({"id": "wrong", "user_input": "Where?", "response": "Lyon.", "reference": "Paris."})
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    command = ["evaluate", str(data), "--metric", "factual_correctness"]
    command += ["--base-url", server.base_url, "--model", "judge"]
    main(command)
    loud = capsys.readouterr()
    assert "spend (this run)" in loud.err
    lowest = (loud.out + loud.err).split("lowest factual_correctness:")[1].split("\n\n")[0]
    assert "wrong" in lowest and "right" not in lowest  # 1.000 is never among the lowest
    main([*command, "--quiet"])
    quiet = capsys.readouterr()
    assert "spend (this run)" not in quiet.err and "factual_correctness" in quiet.out


def test_the_progress_bar_has_an_eta_though_the_run_streams_its_rows() -> None:
    times = iter([100.0, 110.0])
    bar = ProgressBar(10, io.StringIO(), clock=lambda: next(times))
    line = bar.render(Progress(done=5, errors=0, total=None, elapsed=10.0))
    assert "ETA 10s" in line


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


def test_the_estimate_says_why_dry_run_outcomes_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"id": "ok", "response": "Paris.", "retrieved_contexts": ["Paris is the capital."]},
        {"id": "bad", "response": "Paris.", "retrieved_contexts": [3]},
    ]
    data = tmp_path / "qa.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    command = ["evaluate", str(data), "--metric", "faithfulness", "--estimate"]
    command += ["--base-url", "http://127.0.0.1:9/v1", "--model", "gpt-4o-mini"]
    assert main(command) == 0
    said = capsys.readouterr()
    line = next(x for x in (said.out + said.err).splitlines() if "failed in the dry run" in x)
    assert "1 metric outcome failed in the dry run: faithfulness: " in line
    assert "retrieved_contexts" in line and "(1 outcome)" in line


def test_a_run_against_the_toy_judge_shows_no_dollar_spend(
    server: LocalOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The toy judge on 127.0.0.1, called gpt-4o-mini, is not priced as gpt-4o-mini: a
    model served on this machine takes no built-in list price (a price given still
    applies)."""
    data = tmp_path / "qa.jsonl"
    row = {"id": "q", "response": "Paris is the capital.", "reference": "Paris is the capital."}
    data.write_text(json.dumps(row) + "\n")
    summary = tmp_path / "summary.json"
    command = ["evaluate", str(data), "--metric", "factual_correctness", "--model", "gpt-4o-mini"]
    command += ["--base-url", server.base_url, "--summary-json", str(summary)]
    assert main(command) == 0
    said = capsys.readouterr().err
    spend = next(line for line in said.splitlines() if line.startswith("spend (this run)"))
    assert spend.endswith("no price for gpt-4o-mini") and "$" not in spend, spend
    report = json.loads(summary.read_text())
    assert report["cost"] is None and report["spend"]["unpriced"] == ["gpt-4o-mini"]
    assert report["spend"]["total"]["requests"] == server.chat_requests > 0
