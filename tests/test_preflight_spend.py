"""The judges' check before a large run (issue 30 §2) is a request the run sent: it is
counted in the run's spend on the terminal, in ``--summary-json`` and in the report, so
the request counts are those the endpoint saw."""

from __future__ import annotations

import json
from pathlib import Path

from support import answer_metrics
from test_cli import clean_env

from langchain_answer_metrics.judging.preflight import PREFLIGHT_ABOVE
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer

SAMPLES = PREFLIGHT_ABOVE + 2


def write_rows(path: Path) -> Path:
    rows = [
        {
            "id": f"q{n}",
            "response": f"Paris is the capital of France, answer {n}.",
            "retrieved_contexts": ["Paris is the capital of France."],
        }
        for n in range(SAMPLES)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def run(tmp_path: Path, server: LocalOpenAIServer, *extra: str) -> tuple[str, dict, str]:
    data = write_rows(tmp_path / "qa.jsonl")
    summary, report = tmp_path / "summary.json", tmp_path / "report.html"
    done = answer_metrics(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--summary-json",
        summary,
        "--report",
        report,
        *extra,
        env=clean_env(),
    )
    assert done.returncode == 0, done.stderr
    return done.stderr, json.loads(summary.read_text()), report.read_text(encoding="utf-8")


def test_the_judges_check_is_counted_in_the_runs_spend(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    stderr, summary, report = run(tmp_path, server)
    sent = server.chat_requests
    assert sent == 2 * SAMPLES + 1  # decompose and verify per sample, and the check
    spend = summary["spend"]
    assert spend["total"]["requests"] == sent
    assert spend["models"]["judge-a"]["requests"] == sent
    assert spend["metrics"]["preflight"]["judge-a"]["requests"] == 1
    assert spend["metrics"]["preflight"]["judge-a"]["input_tokens"] > 0
    assert f"spend (this run): {sent} requests" in stderr
    assert "\n  preflight: 1 request, " in stderr
    assert "preflight · judge-a" in report  # a row of the spend table


def test_without_the_check_nothing_is_counted_for_it(
    tmp_path: Path, server: LocalOpenAIServer
) -> None:
    stderr, summary, report = run(tmp_path, server, "--no-preflight")
    assert server.chat_requests == 2 * SAMPLES
    assert summary["spend"]["total"]["requests"] == 2 * SAMPLES
    assert "preflight" not in summary["spend"]["metrics"] and "preflight" not in stderr
    assert "preflight · " not in report


def test_the_check_counts_within_max_requests(tmp_path: Path, server: LocalOpenAIServer) -> None:
    data = write_rows(tmp_path / "qa.jsonl")
    done = answer_metrics(
        "evaluate",
        data,
        "--metric",
        "faithfulness",
        "--base-url",
        server.base_url,
        "--model",
        "judge-a",
        "--max-requests",
        "10",
        env=clean_env(),
    )
    assert done.returncode == 5, done.stderr  # stopped early by the cap
    assert server.chat_requests <= 10  # the check, then 4 samples of 2 requests
    assert "spend (this run): 9 requests" in done.stderr
