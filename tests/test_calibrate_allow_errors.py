"""``calibrate --allow-errors`` means what it means for ``evaluate``: labelled samples with
metric errors (left out of the statistics) exit 3 unless it is given; a metric with no
labelled sample scored at all exits 3 whatever it says (there are no statistics)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support import answer_metrics, evaluate_args
from test_cli import write_jsonl

from langchain_answer_metrics.testing.faults import Fault
from langchain_answer_metrics.testing.openai_server import LocalOpenAIServer
from langchain_answer_metrics.testing.requests import RequestInfo

CONTEXT = "The Eiffel Tower was built in 1889 in Paris."
ROWS = [
    {"id": "a", "response": CONTEXT, "retrieved_contexts": [CONTEXT], "label": True},
    {"id": "b", "response": "It is in Lyon.", "retrieved_contexts": [CONTEXT], "label": False},
    {"id": "c", "response": "It dates from 1889.", "retrieved_contexts": [CONTEXT], "label": True},
    {
        "id": "d",
        "response": "Built in Rome (BROKEN).",
        "retrieved_contexts": [CONTEXT],
        "label": False,
    },
]


def refused_for_broken(info: RequestInfo) -> Fault | None:
    """A 400 (not retried) for every request about row d, whose response says BROKEN."""
    text = json.dumps(info.messages)
    return Fault(kind="500", status=400) if "BROKEN" in text else None


def calibrate(server: LocalOpenAIServer, folder: Path, *extra: str) -> Any:
    data = write_jsonl(folder / "labelled.jsonl", ROWS)
    extra = ("--json", str(folder / "calibration.json"), *extra)
    args = evaluate_args(data, folder / "scores.jsonl", server, extra=extra, command="calibrate")
    return answer_metrics(*args)


def test_labelled_samples_with_errors_exit_3_unless_allowed(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    server.faults = refused_for_broken

    failed = calibrate(server, tmp_path)

    assert failed.returncode == 3, failed.stderr
    reason = next(line for line in failed.stderr.splitlines() if "metric errors" in line)
    assert reason.startswith(
        "answer-metrics: faithfulness: 1 of 4 labelled samples have metric errors and are "
        "left out of its statistics (first: AllModelsFailedError: "
    ), reason
    assert reason.endswith("; --allow-errors to exit 0 anyway"), reason
    # The statistics are written all the same, from the three samples scored.
    statistics = json.loads((tmp_path / "calibration.json").read_text("utf-8"))
    assert statistics["faithfulness"]["aggregate"]["n"]["value"] == 3
    sent = server.chat_requests

    allowed = calibrate(server, tmp_path, "--allow-errors")

    assert allowed.returncode == 0, allowed.stderr
    assert "metric errors" not in allowed.stderr
    assert "1 labelled samples failed and are left out" in allowed.stdout
    # Resumed: only the failed sample was asked again (and failed again).
    assert "resuming: 3 samples already scored" in allowed.stderr
    assert server.chat_requests > sent
    again = json.loads((tmp_path / "calibration.json").read_text("utf-8"))
    assert again["faithfulness"]["aggregate"]["n"]["value"] == 3


def test_allow_errors_does_not_hide_a_metric_with_no_statistics(
    server: LocalOpenAIServer, tmp_path: Path
) -> None:
    server.faults = Fault(kind="500", status=400)  # every request refused

    result = calibrate(server, tmp_path, "--allow-errors")

    assert result.returncode == 3, result.stderr
    assert (
        "answer-metrics: no labelled sample could be scored for faithfulness: 4 rows, "
        "4 labelled, 0 scored, 4 errors (first: AllModelsFailedError: "
    ) in result.stderr
